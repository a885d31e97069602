//! A job's reports loaded together: one report per core at a time (each load splits its big
//! tables over every core too, so more would only contend), with one progress for the whole
//! job and one cancel. The reports are then numbered and put on one clock
//! ([`crate::model::Ranks`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{LoadError, Problem, Progress, load};
use crate::model::{Ranks, Trace};

/// The reports in a folder that make a job: its `.sqlite` files, by name.
pub fn reports_in(dir: &std::path::Path) -> Result<Vec<PathBuf>, LoadError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| LoadError::new(dir, Problem::Unreadable(e.to_string())))?;
    let mut reports: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sqlite") && p.is_file())
        .collect();
    reports.sort();
    if reports.is_empty() {
        return Err(LoadError::new(
            dir,
            Problem::Unreadable("is a directory with no .sqlite report in it".into()),
        ));
    }
    Ok(reports)
}

/// Where a loading thread leaves report `i`'s result for the joining thread.
type LoadSlot = Mutex<Option<Result<Arc<Trace>, LoadError>>>;

/// Loads every report of `paths`, `parallel` at a time (at least one), and makes them a job.
/// `on_progress` hears the whole job's progress (each report an equal share) from whichever
/// thread made it. The first report that fails to load fails the job (the others stop).
pub fn load_ranks(
    paths: &[PathBuf],
    parallel: usize,
    on_progress: &(dyn Fn(Progress) + Sync),
    cancel: &AtomicBool,
) -> Result<Ranks, LoadError> {
    load_ranks_each(paths, parallel, on_progress, &|_, _| {}, cancel)
}

/// [`load_ranks`], also handing each report to `on_loaded` (its index in `paths`) as soon as
/// it is in: a window draws the ranks as they come rather than after the last.
pub fn load_ranks_each(
    paths: &[PathBuf],
    parallel: usize,
    on_progress: &(dyn Fn(Progress) + Sync),
    on_loaded: &(dyn Fn(usize, Arc<Trace>) + Sync),
    cancel: &AtomicBool,
) -> Result<Ranks, LoadError> {
    load_each_with(&load, paths, parallel, on_progress, on_loaded, cancel)
}

/// Every report's layout and NVTX ranges only ([`super::load_nvtx_ranges`]), `parallel` at a
/// time, as a job on the job clock the whole load will give (the offsets come from the session
/// starts, read here too): the ranks' iterations matched before their events are read.
/// `on_progress` hears the share of the reports read.
pub fn load_nvtx_of_ranks(
    paths: &[PathBuf],
    parallel: usize,
    on_progress: &(dyn Fn(Progress) + Sync),
    cancel: &AtomicBool,
) -> Result<Ranks, LoadError> {
    let nvtx_only =
        |path: &std::path::Path, progress: &mut dyn FnMut(Progress), cancel: &AtomicBool| {
            let read = super::load_nvtx_ranges(path, cancel);
            progress(Progress {
                phase: "NVTX ranges",
                fraction: 1.0,
            });
            read
        };
    load_each_with(&nvtx_only, paths, parallel, on_progress, &|_, _| {}, cancel)
}

/// How one report is read: the whole of it, or a part.
type LoadOne = dyn Fn(&std::path::Path, &mut dyn FnMut(Progress), &AtomicBool) -> Result<Trace, LoadError>
    + Sync;

/// [`load_ranks_each`] with each report read by `load_one`.
fn load_each_with(
    load_one: &LoadOne,
    paths: &[PathBuf],
    parallel: usize,
    on_progress: &(dyn Fn(Progress) + Sync),
    on_loaded: &(dyn Fn(usize, Arc<Trace>) + Sync),
    cancel: &AtomicBool,
) -> Result<Ranks, LoadError> {
    let count = paths.len().max(1);
    let fractions: Vec<Mutex<f32>> = paths.iter().map(|_| Mutex::new(0.0)).collect();
    let next = AtomicUsize::new(0);
    let results: Vec<LoadSlot> = paths.iter().map(|_| Mutex::new(None)).collect();
    let failed = AtomicBool::new(false);
    let stop = || cancel.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed);
    std::thread::scope(|scope| {
        for _ in 0..parallel.clamp(1, count) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= paths.len() || stop() {
                        return;
                    }
                    // This report's cancel follows the job's, and a sibling's failure.
                    let own_cancel = AtomicBool::new(false);
                    let mut report_progress = |p: Progress| {
                        if stop() {
                            own_cancel.store(true, Ordering::Relaxed);
                        }
                        if let Ok(mut f) = fractions[i].lock() {
                            *f = p.fraction;
                        }
                        let done: f32 = (fractions.iter())
                            .map(|f| f.lock().map_or(0.0, |f| *f))
                            .sum();
                        on_progress(Progress {
                            phase: p.phase,
                            fraction: done / count as f32,
                        });
                    };
                    let result =
                        load_one(&paths[i], &mut report_progress, &own_cancel).map(Arc::new);
                    match &result {
                        Ok(trace) => on_loaded(i, trace.clone()),
                        Err(_) => failed.store(true, Ordering::Relaxed),
                    }
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(result);
                    }
                }
            });
        }
    });
    let mut reports = Vec::with_capacity(paths.len());
    // The report that failed, not a sibling cancelled because it did (which may come first in
    // the list): a cancel is the error only when the job itself was cancelled.
    let mut failure = None;
    let mut cancelled = None;
    for (path, slot) in paths.iter().zip(results) {
        match slot.into_inner().ok().flatten() {
            Some(Ok(trace)) => reports.push((path.clone(), trace)),
            Some(Err(e)) if matches!(e.problem, Problem::Cancelled) => {
                cancelled.get_or_insert(e);
            }
            Some(Err(e)) => {
                failure.get_or_insert(e);
            }
            None => {
                cancelled.get_or_insert_with(|| LoadError::new(path, Problem::Cancelled));
            }
        }
    }
    match failure.or(cancelled) {
        Some(e) => Err(e),
        None => Ok(Ranks::new(reports)),
    }
}

/// Whether `dir` is a Parquet job folder (`sightline export --format parquet`'s layout,
/// docs/parquet.md), which the engine reads.
pub fn is_parquet_job(dir: &std::path::Path) -> bool {
    dir.join("kernels").is_dir() && dir.join("ranks").is_dir()
}

/// Whether `dir` is one report's nsys Parquet export (`nsys export --type parquetdir`), which
/// the engine reads.
pub fn is_nsys_parquet(dir: &std::path::Path) -> bool {
    dir.join("StringIds.parquet").is_file()
        && dir.join("TARGET_INFO_SESSION_START_TIME.parquet").is_file()
}
