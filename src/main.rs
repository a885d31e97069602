//! `sightline [FILE...]` opens the viewer; `sightline COMMAND ...` runs a command-line tool
//! (`sightline --help` lists them). Parsing and each command live in `cli`.

use std::process::ExitCode;

use clap::Parser;
use sightline::capture::environment::prepare_nvtx_injection;
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
    // thread starts (NVTX reads its injection path once). Other commands leave it alone (`run`
    // for nsys, the rest have no GPU to record).
    if let Some(command) = cli.command {
        if matches!(command, cli::Command::Capture(_)) {
            prepare_nvtx_injection();
        }
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
    // After the checks, so a window that cannot open loads no CUDA library.
    prepare_nvtx_injection();
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
