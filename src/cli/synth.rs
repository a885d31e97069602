//! `sightline synth`. SCAFFOLD: replaced by its implementation.

use std::process::ExitCode;

pub fn main(_args: &[String]) -> ExitCode {
    eprintln!("sightline synth: not built yet");
    ExitCode::FAILURE
}
