//! `sightline stats`. SCAFFOLD: replaced by its implementation.

use std::process::ExitCode;

pub fn main(_args: &[String]) -> ExitCode {
    eprintln!("sightline stats: not built yet");
    ExitCode::FAILURE
}
