//! `sightline [FILE...]` opens the viewer; `sightline stats|analyze|diff|synth|bench|run|capture|replay ...`
//! run the command-line tools.

use std::path::PathBuf;
use std::process::ExitCode;

use sightline::cli;

const USAGE: &str = "\
usage:
  sightline [FILE.sqlite ...]        open reports in the viewer (none: the bundled example)
  sightline stats FILE [--report R1,R2,...] [--format table|csv] [--output PREFIX] [--range START_NS:END_NS]
  sightline analyze FILE [--rule RULE[:opt=value...][,RULE...]] [--format table|csv|json] [--output PREFIX] [--range START_NS:END_NS]
  sightline diff A.sqlite B.sqlite [--report kernels,api,nvtx,memcpy] [--format table|csv] [--output PREFIX] [--fail-above PCT]
  sightline synth --from FILE --scale N --output OUT.sqlite
  sightline bench FILE [--json]
  sightline run BENCH [--PARAM VALUE ...]   run a GPU benchmark (no capture); run --list lists them
  sightline capture BENCH [--PARAM VALUE ...] --output FILE.sqlite   record it with CUPTI, save an nsys report
  sightline capture --list
  sightline replay FILE.sqlite [--speed X]   watch a report unfold as if captured live (X times its pace)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("stats") => cli::stats::main(&args[1..]),
        Some("analyze") => cli::analyze::main(&args[1..]),
        Some("diff") => cli::diff::main(&args[1..]),
        Some("synth") => cli::synth::main(&args[1..]),
        Some("bench") => cli::bench::main(&args[1..]),
        Some("run") => cli::run::main(&args[1..]),
        Some("capture") => {
            // Before any thread starts: NVTX reads its injection path once.
            sightline::capture::environment::prepare_nvtx_injection();
            cli::capture::main(&args[1..])
        }
        Some("replay") => replay(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("-V" | "--version") => {
            println!("sightline {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some(other) if other.starts_with('-') => {
            cli::usage_error(&format!("unknown option {other}"), USAGE)
        }
        _ => {
            if let Some(message) = sightline::app::missing_display() {
                eprintln!("sightline: {message}");
                return ExitCode::from(cli::EXIT_BAD_INPUT);
            }
            // The window can capture: NVTX must be pointed at CUPTI before
            // any thread starts.
            sightline::capture::environment::prepare_nvtx_injection();
            let files: Vec<PathBuf> = args.iter().map(PathBuf::from).collect();
            match sightline::app::run(files) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("sightline: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// `sightline replay FILE [--speed X]`: the window, replaying FILE.
fn replay(args: &[String]) -> ExitCode {
    let mut file = None;
    let mut speed = 1.0;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--speed" || arg.starts_with("--speed=") {
            let value = arg
                .strip_prefix("--speed=")
                .map(str::to_string)
                .or_else(|| rest.next().cloned());
            match value.as_deref().map(str::parse::<f64>) {
                Some(Ok(x)) if x > 0.0 && x.is_finite() => speed = x,
                _ => return cli::usage_error("--speed needs a positive number", USAGE),
            }
        } else if file.is_none() && !arg.starts_with('-') {
            file = Some(PathBuf::from(arg));
        } else {
            return cli::usage_error(&format!("replay: unexpected argument {arg}"), USAGE);
        }
    }
    let Some(file) = file else {
        return cli::usage_error("replay needs a report file", USAGE);
    };
    if let Err(e) = sightline::loader::open_read_only(&file) {
        eprintln!("sightline: {e}");
        return ExitCode::from(cli::EXIT_BAD_INPUT);
    }
    if let Some(message) = sightline::app::missing_display() {
        eprintln!("sightline: {message}");
        return ExitCode::from(cli::EXIT_BAD_INPUT);
    }
    match sightline::app::run_replay(file, speed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sightline: {e}");
            ExitCode::FAILURE
        }
    }
}
