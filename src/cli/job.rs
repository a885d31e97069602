//! A job of reports for a command (`stats`, `analyze` given several reports or a folder): the
//! paths expanded, the reports loaded in parallel ([`crate::loader::load_ranks`]), and how
//! they were put on one clock said on stderr, once, with each rank's offset: a reader of the
//! output must know which clock its times are on.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use super::EXIT_BAD_INPUT;
use crate::analysis::findings::human_ns;
use crate::analysis::ranks::{align_on_kernel_end, align_on_range_end};
use crate::loader::LoadOptions;
use crate::loader::ranks::{load_ranks_with, reports_in};
use crate::model::{Alignment, Ranks};

/// The options every command taking a job has.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct JobArgs {
    /// A job: align the ranks on a shared event instead of their session starts: the end of
    /// instance N (1-based, default 1) of an NVTX range (`range:NAME[:N]`) or of the kernels
    /// whose name contains NAME (`kernel:NAME[:N]`, e.g. `kernel:ncclDevKernel_AllReduce:5`).
    #[arg(long = "align-on", value_name = "range|kernel:NAME[:N]", value_parser = parse_align_on)]
    pub align_on: Option<AlignOn>,
}

/// A shared event to align a job's ranks on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlignOn {
    /// A kernel (its name contains `name`) rather than an NVTX range (named `name`).
    pub kernel: bool,
    pub name: String,
    /// 1-based.
    pub nth: usize,
}

/// `range:NAME[:N]` or `kernel:NAME[:N]`; NAME may hold colons (`at::native::…`): N is what
/// follows the last one when it is a number.
pub(super) fn parse_align_on(text: &str) -> Result<AlignOn, String> {
    let (kind, rest) = text
        .split_once(':')
        .ok_or_else(|| format!("'{text}': give range:NAME[:N] or kernel:NAME[:N]"))?;
    let kernel = match kind {
        "range" => false,
        "kernel" => true,
        other => return Err(format!("'{other}': align on a range or a kernel")),
    };
    let (name, nth) = match rest.rsplit_once(':') {
        Some((name, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            let nth: usize = n
                .parse()
                .map_err(|_| format!("'{n}': not an instance number"))?;
            (name, nth)
        }
        _ => (rest, 1),
    };
    if name.is_empty() {
        return Err(format!("'{text}': no name to align on"));
    }
    if nth == 0 {
        return Err("instances count from 1".into());
    }
    Ok(AlignOn {
        kernel,
        name: name.to_string(),
        nth,
    })
}

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

/// Loads the job `paths` name, each report on a core of its own, reading what `options` ask;
/// on failure, one line naming the report (the loader's message) and the bad-input exit code.
/// Unless `quiet`, each report's loader warnings, and (always) the alignment and the offsets.
pub(super) fn load_job(
    paths: &[PathBuf],
    options: LoadOptions,
    quiet: bool,
    align_on: Option<&AlignOn>,
) -> Result<Ranks, ExitCode> {
    let bad = |e: crate::loader::LoadError| {
        eprintln!("sightline: {e}");
        ExitCode::from(EXIT_BAD_INPUT)
    };
    let reports = expand(paths).map_err(bad)?;
    let parallel = std::thread::available_parallelism().map_or(1, |n| n.get());
    let never = AtomicBool::new(false);
    let mut job = load_ranks_with(&reports, parallel, options, &|_| {}, &never).map_err(bad)?;
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
    if let Some(on) = align_on {
        let aligned = if on.kernel {
            align_on_kernel_end(&mut job, &on.name, on.nth - 1)
        } else {
            align_on_range_end(&mut job, &on.name, on.nth - 1)
        };
        if let Err(why) = aligned {
            eprintln!("sightline: cannot align on {}: {why}", on.describe());
            return Err(ExitCode::from(EXIT_BAD_INPUT));
        }
        eprintln!("sightline: aligned on {}", on.describe());
    }
    describe(&job);
    Ok(job)
}

impl AlignOn {
    fn describe(&self) -> String {
        let what = if self.kernel { "kernel" } else { "NVTX range" };
        format!("the end of instance {} of {what} '{}'", self.nth, self.name)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_on_reads_kind_name_and_instance() {
        let on = parse_align_on("kernel:ncclDevKernel_AllReduce:5").expect("parses");
        assert_eq!(
            on,
            AlignOn {
                kernel: true,
                name: "ncclDevKernel_AllReduce".into(),
                nth: 5
            }
        );
        let on = parse_align_on("range:step 3").expect("parses");
        assert_eq!((on.kernel, on.name.as_str(), on.nth), (false, "step 3", 1));
        // A C++ name keeps its colons; only a trailing number is the instance.
        let on = parse_align_on("kernel:at::native::reduce_kernel:2").expect("parses");
        assert_eq!((on.name.as_str(), on.nth), ("at::native::reduce_kernel", 2));
        for bad in ["", "step", "thread:x", "range:", "range::3", "kernel:x:0"] {
            assert!(parse_align_on(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
