//! `sightline bench`. SCAFFOLD: replaced by its implementation.

use std::process::ExitCode;

pub fn main(_args: &[String]) -> ExitCode {
    eprintln!("sightline bench: not built yet");
    ExitCode::FAILURE
}
