//! `sightline run BENCH [--param value ...]`: runs one of the capture benchmarks without
//! capturing, so that nsys (or nothing) can watch it; `sightline run --list` lists them.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use super::{EXIT_BAD_INPUT, usage_error};
use crate::capture::benchmarks::{self, BenchmarkSpec};

const USAGE: &str = "usage: sightline run BENCH [--PARAM VALUE ...]
       sightline run --list
       sightline run BENCH --help

Runs a benchmark on GPU 0 and prints its results (no capture: run it under nsys to profile
it). `sightline run --list` shows every benchmark and its parameters.";

/// The part of `run` and `capture` that picks the benchmark: `--list`,
/// `--help`, a missing or unknown name end the command with their exit code;
/// otherwise the benchmark and the arguments after its name.
pub(crate) fn benchmark_of<'a>(
    command: &str,
    args: &'a [String],
    usage: &str,
) -> Result<(&'static BenchmarkSpec, &'a [String]), ExitCode> {
    match args.first().map(String::as_str) {
        None => Err(usage_error(
            &format!("{command} needs a benchmark name"),
            usage,
        )),
        Some("--list" | "-l") => Err(print_or_fail(&list_text())),
        Some("-h" | "--help") => Err(print_or_fail(&format!("{usage}\n\n{}", list_text()))),
        Some(name) => match benchmarks::find(name) {
            Ok(spec) => Ok((spec, &args[1..])),
            Err(e) => Err(fail(&e.to_string())),
        },
    }
}

pub fn main(args: &[String]) -> ExitCode {
    match benchmark_of("run", args, USAGE) {
        Err(code) => code,
        Ok((spec, rest)) => {
            if rest.iter().any(|a| a == "-h" || a == "--help") {
                return print_or_fail(&describe(spec));
            }
            let params = match benchmarks::parse_args(spec, rest) {
                Ok(params) => params,
                Err(e) => return fail(&e.to_string()),
            };
            // Nothing raises the flag here: Ctrl-C ends the process, which releases the GPU.
            let cancel = AtomicBool::new(false);
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            match benchmarks::run(spec, &params, &mut out, &cancel) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&e.to_string()),
            }
        }
    }
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
