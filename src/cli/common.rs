//! What the subcommands share: loading a report with its warnings, usage errors and exit codes,
//! `--range` parsing, output formats and name lists. Kept apart from the dispatcher (`mod.rs`),
//! which names every subcommand, so that a subcommand using these never imports its own caller.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use crate::loader::LoadOptions;
use crate::model::{TimeRange, Trace};

/// Exit code for unusable input (a bad report file, a bad argument).
pub const EXIT_BAD_INPUT: u8 = 2;

/// Loads a report for a command, reading what `options` ask (a command reads a report's CPU
/// samples only where its output needs them: they can cost as much again as the rest),
/// printing the loader's message on failure, and its warnings (rows dropped, columns missing,
/// a journal rolled back), each once on stderr, unless `quiet`: stdout stays the command's
/// output alone.
pub fn load_or_report(path: &Path, options: LoadOptions, quiet: bool) -> Result<Trace, ExitCode> {
    let cancel = AtomicBool::new(false);
    let trace = crate::loader::load_with(path, options, &mut |_| {}, &cancel).map_err(|e| {
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

/// The command line parsed as `C`; where clap refuses it, its message said as Sightline's (every
/// message starts with its name: clap's usage errors too) and the bad-input exit code. `--help`
/// and `--version` print on stdout and exit 0. Both binaries' `main` (the viewer's and the
/// engine's) parse this way.
pub fn parse_command_line<C: clap::Parser>() -> Result<C, ExitCode> {
    match C::try_parse() {
        Ok(parsed) => Ok(parsed),
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let text = e.render().to_string();
            eprint!(
                "sightline: {}",
                text.strip_prefix("error: ").unwrap_or(&text)
            );
            Err(ExitCode::from(EXIT_BAD_INPUT))
        }
    }
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

/// Levenshtein distance, by characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
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
