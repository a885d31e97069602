//! `sightline run BENCH [--param value ...]`: runs one of the capture benchmarks without
//! capturing, so that nsys (or nothing) can watch it; `sightline run --list` lists them.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use super::EXIT_BAD_INPUT;
use super::benchmark_args::BenchmarkChoice;
use crate::capture::benchmarks::{self, BenchmarkSpec};

/// Arguments of `sightline run`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Run a GPU benchmark without capturing (to profile it with nsys)",
    long_about = "Runs a benchmark on GPU 0 and prints its results (no capture: run it under \
                  nsys to profile it). `sightline run BENCH --help` lists its parameters.",
    subcommand_value_name = "BENCH",
    disable_help_subcommand = true,
    subcommand_help_heading = "Benchmarks"
)]
pub struct RunArgs {
    /// List every benchmark with its parameters.
    #[arg(long, short = 'l')]
    list: bool,

    #[command(subcommand)]
    pub(crate) benchmark: Option<BenchmarkChoice>,
}

pub fn main(args: RunArgs) -> ExitCode {
    let Some(choice) = args.benchmark else {
        return list_or_ask("run", args.list);
    };
    let params = match choice.params {
        Ok(params) => params,
        Err(e) => return super::usage_error(&format!("run {}", choice.spec.name), &e.to_string()),
    };
    // Nothing raises the flag here: Ctrl-C ends the process, which releases the GPU.
    let cancel = AtomicBool::new(false);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match benchmarks::run(choice.spec, &params, &mut out, &cancel) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e.to_string()),
    }
}

/// `run` or `capture` without a benchmark: the list with `--list`, else a usage error.
pub(crate) fn list_or_ask(command: &str, list: bool) -> ExitCode {
    if list {
        print_or_fail(&list_text())
    } else {
        super::usage_error(
            command,
            &format!("a benchmark name is needed: {}", benchmark_names()),
        )
    }
}

fn benchmark_names() -> String {
    super::name_list(benchmarks::all().iter().map(|b| b.name))
}

/// One `sightline: ...` message on stderr and the bad-input exit code. A multi-line cause
/// (an NVRTC log) follows on its own lines.
pub(crate) fn fail(message: &str) -> ExitCode {
    eprintln!("sightline: {message}");
    ExitCode::from(EXIT_BAD_INPUT)
}

pub(crate) fn print_or_fail(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{text}") {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is the reader's choice, not worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::FAILURE,
        Err(e) => fail(&format!("cannot write to stdout: {e}")),
    }
}

/// Every benchmark with its parameters, as `run --list` prints them.
pub fn list_text() -> String {
    let mut text = String::from("benchmarks (sightline run BENCH [--PARAM VALUE ...]):");
    for spec in benchmarks::all() {
        text.push_str("\n\n");
        text.push_str(&describe(spec));
    }
    text
}

/// A benchmark's name, what it measures, and each parameter with its default and help.
pub fn describe(spec: &BenchmarkSpec) -> String {
    let mut text = format!("{}\n    {}", spec.name, spec.about);
    let width = spec.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for param in spec.params {
        text.push_str(&format!(
            "\n    --{:<width$}  {} (default {})",
            param.name, param.help, param.default
        ));
    }
    text
}
