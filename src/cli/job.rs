//! A job of reports for a command (`stats`, `analyze` given several reports or a folder): the
//! paths expanded, the reports loaded in parallel ([`crate::loader::load_ranks`]), and how
//! they were put on one clock said on stderr, once, with each rank's offset: a reader of the
//! output must know which clock its times are on.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use super::EXIT_BAD_INPUT;
use crate::analysis::findings::human_ns;
use crate::loader::ranks::{load_ranks, reports_in};
use crate::model::{Alignment, Ranks};

/// Whether `paths` name a job rather than one report: several files, or one folder.
pub(super) fn is_job(paths: &[PathBuf]) -> bool {
    paths.len() > 1 || paths.first().is_some_and(|p| p.is_dir())
}

/// The reports `paths` name: a folder stands for every `.sqlite` report in it.
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, crate::loader::LoadError> {
    let mut reports = Vec::with_capacity(paths.len());
    for path in paths {
        if path.is_dir() {
            reports.extend(reports_in(path)?);
        } else {
            reports.push(path.clone());
        }
    }
    Ok(reports)
}

/// Loads the job `paths` name, each report on a core of its own; on failure, one line naming
/// the report (the loader's message) and the bad-input exit code. Unless `quiet`, each
/// report's loader warnings, and (always) the alignment and the offsets.
pub(super) fn load_job(paths: &[PathBuf], quiet: bool) -> Result<Ranks, ExitCode> {
    let bad = |e: crate::loader::LoadError| {
        eprintln!("sightline: {e}");
        ExitCode::from(EXIT_BAD_INPUT)
    };
    let reports = expand(paths).map_err(bad)?;
    let parallel = std::thread::available_parallelism().map_or(1, |n| n.get());
    let job = load_ranks(&reports, parallel, &|_| {}, &AtomicBool::new(false)).map_err(bad)?;
    if !quiet {
        for rank in &job.ranks {
            let mut said = std::collections::HashSet::new();
            for warning in &rank.trace.warnings {
                if said.insert(warning.as_str()) {
                    eprintln!("sightline: {}: warning: {warning}", rank.path.display());
                }
            }
        }
    }
    describe(&job);
    Ok(job)
}

/// The job's clock on stderr: how it was aligned, and what each rank's times gain on it.
fn describe(job: &Ranks) {
    let count = job.len();
    let plural = if count == 1 { "" } else { "s" };
    eprintln!(
        "sightline: {count} rank{plural}, {}",
        job.alignment.describe()
    );
    if job.alignment == Alignment::None {
        for rank in job.ranks.iter() {
            if rank.trace.info.session_start_utc_ns.is_none() {
                eprintln!(
                    "sightline: {}: no session start time (TARGET_INFO_SESSION_START_TIME)",
                    rank.path.display()
                );
            }
        }
        return;
    }
    for rank in &job.ranks {
        eprintln!(
            "sightline: rank {} ({}): +{} ({} ns) on the job clock",
            rank.number,
            file_name(&rank.path),
            human_ns(rank.offset_ns),
            rank.offset_ns
        );
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
