//! The command line: `sightline [FILE...]` opens the viewer; `sightline COMMAND ...` runs one of
//! the tools. Parsing is clap's (subcommand help, `--version`, suggestions for typos, shell
//! completions); each subcommand's arguments and what it does live in its own file. Exit codes:
//! 0 ok, 1 failure, 2 bad input or usage (as `nsys stats` and ripgrep do; clap's own usage
//! errors exit 2 too).

pub mod analyze;
mod analyze_job;
pub mod bench;
mod bench_sampling;
pub mod benchmark_args;
pub mod capture;
mod common;
pub mod completions;
mod counters;
pub mod diff;
pub mod engine;
mod event_delays;
mod job;
mod output;
pub mod replay;
pub mod run;
pub mod stats;
mod stats_job;
mod stats_tables;
pub mod synth;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub use common::{EXIT_BAD_INPUT, TableFormat, load_or_report, parse_command_line, usage_error};
pub(crate) use common::{name_list, named_or_all, parse_range};

/// Sightline: a viewer for Nsight Systems reports, with the `nsys stats`/`nsys analyze` numbers,
/// findings, comparisons, and live capture of its own CUDA benchmarks.
#[derive(Debug, Parser)]
#[command(
    name = "sightline",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "With no command, opens the reports in the viewer (with none: the bundled \
                  example). `sightline COMMAND --help` tells more of each command.\n\n\
                  On the engine (sightline-engine, beside this binary): `export` (a job as \
                  Parquet), `stats --engine` (a job's reports on DataFusion, or on a \
                  cluster), `cluster scheduler|executor` (Ballista)."
)]
pub struct Cli {
    /// Nsight Systems reports (.sqlite, from `nsys export --type sqlite`) to open in the viewer.
    #[arg(value_name = "FILE.sqlite")]
    pub files: Vec<PathBuf>,

    /// Opens the files as the ranks of one job (one report per rank of a distributed run): one
    /// tab, one clock. A folder given alone is opened so anyway.
    #[arg(long)]
    pub job: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Stats(stats::StatsArgs),
    Analyze(analyze::AnalyzeArgs),
    Diff(diff::DiffArgs),
    Synth(synth::SynthArgs),
    Bench(bench::BenchArgs),
    Run(run::RunArgs),
    Capture(capture::CaptureArgs),
    Replay(replay::ReplayArgs),
    Completions(completions::CompletionsArgs),
}

impl Command {
    /// Runs the command; returns the process exit code.
    pub fn run(self) -> ExitCode {
        match self {
            Command::Stats(args) => stats::main(args),
            Command::Analyze(args) => analyze::main(args),
            Command::Diff(args) => diff::main(args),
            Command::Synth(args) => synth::main(args),
            Command::Bench(args) => bench::main(args),
            Command::Run(args) => run::main(args),
            Command::Capture(args) => capture::main(args),
            Command::Replay(args) => replay::main(args),
            Command::Completions(args) => completions::main(args, Cli::command()),
        }
    }
}

/// The command `word` was probably meant to be (`stas` → `stats`, `analyse` → `analyze`):
/// the closest by edit distance, if it is close (at most a third of the word, and 2).
pub fn suggest_command(word: &str) -> Option<String> {
    let word = word.to_ascii_lowercase();
    let limit = (word.chars().count() / 3).clamp(1, 2);
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .map(|name| (common::edit_distance(&word, &name), name))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, name)| name)
}

#[cfg(test)]
pub(crate) fn parse_for_test(args: &[&str]) -> Result<Command, clap::Error> {
    let cli = Cli::try_parse_from(std::iter::once("sightline").chain(args.iter().copied()))?;
    cli.command
        .ok_or_else(|| clap::Error::raw(clap::error::ErrorKind::MissingSubcommand, "no command"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TimeRange;

    #[test]
    fn files_without_a_command_open_the_viewer() {
        let cli = Cli::try_parse_from(["sightline", "a.sqlite", "b.sqlite"]).expect("parses");
        assert!(cli.command.is_none());
        assert_eq!(cli.files.len(), 2);
    }

    #[test]
    fn the_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn mistyped_commands_get_the_one_meant() {
        assert_eq!(suggest_command("stas").as_deref(), Some("stats"));
        assert_eq!(suggest_command("analyse").as_deref(), Some("analyze"));
        assert_eq!(suggest_command("dif").as_deref(), Some("diff"));
        assert_eq!(suggest_command("report"), None);
    }

    #[test]
    fn ranges_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_range("5:9"), Ok(TimeRange { start: 5, end: 9 }));
        for bad in ["9:5", "5:5", "abc", "1:x", ":"] {
            assert!(parse_range(bad).is_err(), "{bad}");
        }
        let huge = parse_range("0:99999999999999999999").expect_err("too big");
        assert!(huge.contains("out of range"), "{huge}");
        assert!(!huge.contains("START < END"), "{huge}");
    }
}
