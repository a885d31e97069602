//! `sightline-engine COMMAND`: the engine's commands (`export`, `stats` of a job, `cluster`),
//! also reached as `sightline COMMAND` (which hands them here).

#![deny(clippy::unwrap_used, clippy::too_many_lines)]

use std::process::ExitCode;

use sightline_engine::cli::EngineCli;

fn main() -> ExitCode {
    sightline::loader::configure_sqlite();
    let cli: EngineCli = match sightline::cli::parse_command_line() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    cli.command.run()
}
