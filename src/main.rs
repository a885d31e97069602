//! `sightline [FILE...]` opens the viewer; `sightline COMMAND ...` runs a command-line tool
//! (`sightline --help` lists them). Parsing and each command live in `cli`.

use std::process::ExitCode;

use clap::Parser;
use sightline::cli::{self, Cli};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version: printed on stdout, exit 0.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // Every message of Sightline's starts with its name: clap's usage errors too.
            let text = e.render().to_string();
            eprint!(
                "sightline: {}",
                text.strip_prefix("error: ").unwrap_or(&text)
            );
            return ExitCode::from(cli::EXIT_BAD_INPUT);
        }
    };
    // The window and `capture` record with CUPTI: NVTX must be pointed at it before any
    // thread starts (NVTX reads its injection path once). `run` is left alone, for nsys.
    let records = matches!(cli.command, None | Some(cli::Command::Capture(_)));
    if records {
        sightline::capture::environment::prepare_nvtx_injection();
    }
    if let Some(command) = cli.command {
        return command.run();
    }
    if let Some(word) = cli.files.iter().find_map(|f| mistyped_command(f)) {
        return cli::usage_error(
            "",
            &format!(
                "'{word}' is neither a report file nor a command (`sightline --help` lists the commands)"
            ),
        );
    }
    if let Some(message) = sightline::app::missing_display() {
        eprintln!("sightline: {message}");
        return ExitCode::from(cli::EXIT_BAD_INPUT);
    }
    match sightline::app::run(cli.files) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sightline: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A bare word that names no file (`sightline stast f.sqlite`): a command mistyped, not a
/// report to open in a tab that can only say it is missing.
fn mistyped_command(path: &std::path::Path) -> Option<&str> {
    let word = path.to_str()?;
    let bare = !word.contains(['.', '/', '\\']);
    (bare && !path.exists()).then_some(word)
}
