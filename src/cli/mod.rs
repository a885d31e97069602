//! Command-line front ends: `stats`, `analyze`, `diff`, `synth`, `bench`, `run`, `capture`. Each parses its own
//! arguments and returns the process exit code: 0 ok, 1 failure, 2 bad input
//! or usage (as `nsys stats` and ripgrep do).

pub mod analyze;
pub mod bench;
pub mod capture;
pub mod diff;
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
