//! The command line: `sightline [FILE...]` opens the viewer; `sightline COMMAND ...` runs one of
//! the tools. Parsing is clap's (subcommand help, `--version`, suggestions for typos, shell
//! completions); each subcommand's arguments and what it does live in its own file. Exit codes:
//! 0 ok, 1 failure, 2 bad input or usage (as `nsys stats` and ripgrep do; clap's own usage
//! errors exit 2 too).

pub mod analyze;
pub mod bench;
pub mod benchmark_args;
pub mod capture;
pub mod completions;
mod counters;
pub mod diff;
mod event_delays;
mod output;
pub mod replay;
pub mod run;
pub mod stats;
pub mod synth;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::{Parser, Subcommand};

use crate::analysis::stats::TimeRange;
use crate::model::Trace;

/// Exit code for unusable input (a bad report file, a bad argument).
pub const EXIT_BAD_INPUT: u8 = 2;

/// Sightline: a viewer for Nsight Systems reports, with the `nsys stats`/`nsys analyze` numbers,
/// findings, comparisons, and live capture of its own CUDA benchmarks.
#[derive(Debug, Parser)]
#[command(
    name = "sightline",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "With no command, opens the reports in the viewer (with none: the bundled \
                  example). `sightline COMMAND --help` tells more of each command."
)]
pub struct Cli {
    /// Nsight Systems reports (.sqlite, from `nsys export --type sqlite`) to open in the viewer.
    #[arg(value_name = "FILE.sqlite")]
    pub files: Vec<PathBuf>,

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
            Command::Completions(args) => completions::main(args),
        }
    }
}

/// Loads a report for a command, printing the loader's message on failure, and its warnings
/// (rows dropped, columns missing, a journal rolled back), each once on stderr, unless
/// `quiet`: stdout stays the command's output alone.
pub fn load_or_report(path: &Path, quiet: bool) -> Result<Trace, ExitCode> {
    let cancel = AtomicBool::new(false);
    let trace = crate::loader::load(path, &mut |_| {}, &cancel).map_err(|e| {
        eprintln!("sightline: {e}");
        ExitCode::from(EXIT_BAD_INPUT)
    })?;
    if !quiet {
        let mut said = std::collections::HashSet::new();
        for warning in &trace.warnings {
            if said.insert(warning.as_str()) {
                eprintln!("sightline: {}: warning: {warning}", path.display());
            }
        }
    }
    Ok(trace)
}

/// A usage error that clap cannot see (two options that do not go together, say): one line
/// naming the command, the pointer to its help, and the bad-input exit code.
/// An empty `command` is the top level.
pub fn usage_error(command: &str, message: &str) -> ExitCode {
    let program = if command.is_empty() {
        "sightline".to_string()
    } else {
        format!("sightline {command}")
    };
    eprintln!("{program}: {message}\n\nFor more information, try '{program} --help'.");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// `START_NS:END_NS` with START < END: the `--range` of `stats` and `analyze`.
pub(crate) fn parse_range(text: &str) -> Result<TimeRange, String> {
    let bad = || format!("'{text}' is not START_NS:END_NS with START < END");
    let (start, end) = text.split_once(':').ok_or_else(bad)?;
    // A number too big for the clock is named as such, not blamed on the order.
    let number =
        |part: &str| -> Result<i64, String> {
            let part = part.trim();
            part.parse().map_err(|e: std::num::ParseIntError| match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => format!(
                "'{part}' in '{text}' is out of range: times are nanoseconds from {} to {}",
                i64::MIN,
                i64::MAX
            ),
            _ => bad(),
        })
        };
    let start = number(start)?;
    let end = number(end)?;
    if start >= end {
        return Err(bad());
    }
    Ok(TimeRange { start, end })
}

/// The command `word` was probably meant to be (`stas` → `stats`, `analyse` → `analyze`):
/// the closest by edit distance, if it is close (at most a third of the word, and 2).
pub fn suggest_command(word: &str) -> Option<String> {
    use clap::CommandFactory;
    let word = word.to_ascii_lowercase();
    let limit = (word.chars().count() / 3).clamp(1, 2);
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .map(|name| (edit_distance(&word, &name), name))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, name)| name)
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// Table or CSV: the two formats of `stats` and `diff` (`analyze` adds JSON for findings).
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFormat {
    /// An aligned table (default on the console).
    #[value(alias = "column")]
    Table,
    /// CSV as nsys writes it (default in files).
    Csv,
}

impl TableFormat {
    /// The format given, else CSV in files and a table on the console, as nsys does.
    pub fn or_default(given: Option<TableFormat>, to_files: bool) -> TableFormat {
        given.unwrap_or(if to_files {
            TableFormat::Csv
        } else {
            TableFormat::Table
        })
    }
}

/// What a repeatable list option named, each once in the order first given; `all` when it
/// named nothing (the `--report` of `stats` and `diff`).
pub(crate) fn named_or_all<T: Copy + PartialEq>(named: Vec<T>, all: &[T]) -> Vec<T> {
    let mut once: Vec<T> = Vec::with_capacity(named.len());
    for item in named {
        if !once.contains(&item) {
            once.push(item);
        }
    }
    if once.is_empty() { all.to_vec() } else { once }
}

/// The names a comma-separated list option accepts, for its help text.
pub(crate) fn name_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names.into_iter().collect::<Vec<_>>().join(", ")
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
