//! `sightline [FILE...]` opens the viewer; `sightline stats|analyze|synth|bench ...` run
//! the command-line tools.

use std::path::PathBuf;
use std::process::ExitCode;

use sightline::cli;

const USAGE: &str = "\
usage:
  sightline [FILE.sqlite ...]        open reports in the viewer (none: the bundled example)
  sightline stats FILE [--report R1,R2,...] [--format table|csv] [--output PREFIX] [--range START_NS:END_NS]
  sightline analyze FILE [--rule RULE[:opt=value...][,RULE...]] [--format table|csv|json] [--output PREFIX] [--range START_NS:END_NS]
  sightline synth --from FILE --scale N --output OUT.sqlite
  sightline bench FILE [--json]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("stats") => cli::stats::main(&args[1..]),
        Some("analyze") => cli::analyze::main(&args[1..]),
        Some("synth") => cli::synth::main(&args[1..]),
        Some("bench") => cli::bench::main(&args[1..]),
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
