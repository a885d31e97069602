//! Command-line front ends: `stats`, `analyze`, `diff`, `synth`, `bench`, `run`, `capture`. Each parses its own
//! arguments and returns the process exit code: 0 ok, 1 failure, 2 bad input
//! or usage (as `nsys stats` and ripgrep do).

pub mod analyze;
pub mod bench;
pub mod capture;
pub mod diff;
mod output;
pub mod run;
pub mod stats;
pub mod synth;

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use crate::model::Trace;

/// Exit code for unusable input (a bad report file, a bad argument).
pub const EXIT_BAD_INPUT: u8 = 2;

/// Loads a report for a command, printing the loader's message on failure.
pub fn load_or_report(path: &Path) -> Result<Trace, ExitCode> {
    let cancel = AtomicBool::new(false);
    crate::loader::load(path, &mut |_| {}, &cancel).map_err(|e| {
        eprintln!("sightline: {e}");
        ExitCode::from(EXIT_BAD_INPUT)
    })
}

/// Prints a usage error and returns the matching exit code.
pub fn usage_error(message: &str, usage: &str) -> ExitCode {
    eprintln!("sightline: {message}\n\n{usage}");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// `--name value` / `--name=value` options and positional arguments.
#[derive(Debug, Default)]
pub struct Args {
    pub positional: Vec<String>,
    pub options: Vec<(String, Option<String>)>,
}

impl Args {
    /// The one report file a command reads (its only positional argument).
    pub fn one_file(&self) -> Result<std::path::PathBuf, String> {
        match self.positional.as_slice() {
            [file] => Ok(std::path::PathBuf::from(file)),
            [] => Err("no report file given".to_string()),
            [_, extra, ..] => Err(format!("unexpected argument '{extra}'")),
        }
    }

    /// `--range START_NS:END_NS`, if given.
    pub fn range(&self) -> Result<Option<crate::analysis::stats::TimeRange>, String> {
        self.value("range").map(parse_range).transpose()
    }

    /// Parses `args`; `flags` are the options that take no value.
    pub fn parse(args: &[String], flags: &[&str]) -> Result<Args, String> {
        let mut out = Args::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if let Some(name) = arg.strip_prefix("--") {
                if let Some((name, value)) = name.split_once('=') {
                    out.options
                        .push((name.to_string(), Some(value.to_string())));
                } else if flags.contains(&name) {
                    out.options.push((name.to_string(), None));
                } else {
                    let value = it
                        .next()
                        .ok_or_else(|| format!("option --{name} needs a value"))?;
                    out.options.push((name.to_string(), Some(value.clone())));
                }
            } else {
                out.positional.push(arg.clone());
            }
        }
        Ok(out)
    }

    pub fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Fails on options not in `known`, so typos do not pass silently.
    pub fn check_known(&self, known: &[&str]) -> Result<(), String> {
        match self
            .options
            .iter()
            .find(|(n, _)| !known.contains(&n.as_str()))
        {
            Some((n, _)) => Err(format!("unknown option --{n}")),
            None => Ok(()),
        }
    }
}

/// `START_NS:END_NS` with START < END: the `--range` of `stats` and `analyze`.
fn parse_range(text: &str) -> Result<crate::analysis::stats::TimeRange, String> {
    let bad = || format!("bad --range '{text}': expected START_NS:END_NS with START < END");
    let (start, end) = text.split_once(':').ok_or_else(bad)?;
    let start: i64 = start.trim().parse().map_err(|_| bad())?;
    let end: i64 = end.trim().parse().map_err(|_| bad())?;
    if start >= end {
        return Err(bad());
    }
    Ok(crate::analysis::stats::TimeRange { start, end })
}
