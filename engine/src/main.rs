//! `sightline-engine COMMAND`: the engine's commands (`export`, `stats` of a job, `cluster`),
//! also reached as `sightline COMMAND` (which hands them here).

#![deny(clippy::unwrap_used, clippy::too_many_lines)]

use std::process::ExitCode;

use clap::Parser;
use sightline_engine::cli::{EXIT_BAD_INPUT, EngineCli};

fn main() -> ExitCode {
    let cli = match EngineCli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let text = e.render().to_string();
            eprint!(
                "sightline: {}",
                text.strip_prefix("error: ").unwrap_or(&text)
            );
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    cli.command.run()
}
