//! `sightline [FILE...]` opens the viewer; `sightline COMMAND ...` runs a command-line tool
//! (`sightline --help` lists them). Parsing and each command live in `cli`.

// The code a user runs unwraps nothing they or a driver supply, and no function of it is longer
// than a reader can hold (150 lines, clippy.toml); the unit tests may unwrap.
#![deny(clippy::unwrap_used, clippy::too_many_lines)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

use std::process::ExitCode;

use sightline::capture::environment::prepare_nvtx_injection;
use sightline::cli::{self, Cli};

fn main() -> ExitCode {
    sightline::loader::configure_sqlite();
    if let Some(code) = cli::engine::hand_off(std::env::args_os().collect()) {
        return code;
    }
    let cli: Cli = match cli::parse_command_line() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    // The window and `capture` record with CUPTI: NVTX must be pointed at it before any
    // thread starts (NVTX reads its injection path once). Other commands leave it alone (`run`
    // for nsys, the rest have no GPU to record).
    if let Some(command) = cli.command {
        one_line_for_missing_cuda_symbols();
        if matches!(command, cli::Command::Capture(_)) {
            prepare_nvtx_injection();
        }
        return command.run();
    }
    if let Some(word) = cli.files.iter().find_map(|f| mistyped_command(f)) {
        let message = match cli::suggest_command(word) {
            Some(meant) => {
                format!("'{word}' is neither a report file nor a command; did you mean '{meant}'?")
            }
            None => format!(
                "'{word}' is neither a report file nor a command (`sightline --help` lists the commands)"
            ),
        };
        return cli::usage_error("", &message);
    }
    if let Some(message) = sightline::app::missing_display() {
        eprintln!("sightline: {message}");
        return ExitCode::from(cli::EXIT_BAD_INPUT);
    }
    // After the checks, so a window that cannot open loads no CUDA library.
    prepare_nvtx_injection();
    let opened = if cli.job {
        sightline::app::run_job(cli.files)
    } else {
        sightline::app::run(cli.files)
    };
    match opened {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sightline: {e}");
            ExitCode::FAILURE
        }
    }
}

/// cudarc panics ("Missing symbol cuInit: ...") when a CUDA library lacks a function it calls
/// (a stub, an old driver) where no check came first: the command ends with the one line a
/// missing driver gets, not a backtrace. Other panics keep the default report.
fn one_line_for_missing_cuda_symbols() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied());
        match message.and_then(sightline::capture::environment::missing_symbol_in_panic) {
            Some(symbol) => {
                eprintln!(
                    "sightline: {}",
                    sightline::capture::environment::missing_symbol_message(symbol)
                );
                std::process::exit(1);
            }
            None => default(info),
        }
    }));
}

/// A bare word that names no file (`sightline stast f.sqlite`): a command mistyped, not a
/// report to open in a tab that can only say it is missing.
fn mistyped_command(path: &std::path::Path) -> Option<&str> {
    let word = path.to_str()?;
    let bare = !word.contains(['.', '/', '\\']);
    (bare && !path.exists()).then_some(word)
}
