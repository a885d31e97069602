//! A job's reports loaded together: one report per core at a time, each reading its big tables
//! on its share of the cores (more would only contend), with one progress for the whole job and
//! one cancel. The reports are then numbered and put on one clock
//! ([`crate::model::Ranks`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{LoadError, LoadOptions, Problem, Progress, load, load_with};
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

/// [`load_ranks`], each report read as `options` ask (a command that needs no CPU samples
/// leaves them: `LoadOptions`).
pub fn load_ranks_with(
    paths: &[PathBuf],
    parallel: usize,
    options: LoadOptions,
    on_progress: &(dyn Fn(Progress) + Sync),
    cancel: &AtomicBool,
) -> Result<Ranks, LoadError> {
    load_all(paths, parallel, options, on_progress, &|_, _| {}, cancel)
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
    load_all(
        paths,
        parallel,
        LoadOptions::WHOLE,
        on_progress,
        on_loaded,
        cancel,
    )
}

/// Every report of `paths` read as `options` ask, as [`load_ranks_each`] says.
fn load_all(
    paths: &[PathBuf],
    parallel: usize,
    options: LoadOptions,
    on_progress: &(dyn Fn(Progress) + Sync),
    on_loaded: &(dyn Fn(usize, Arc<Trace>) + Sync),
    cancel: &AtomicBool,
) -> Result<Ranks, LoadError> {
    let load_one =
        |path: &std::path::Path, progress: &mut dyn FnMut(Progress), cancel: &AtomicBool| {
            load_with(path, options, progress, cancel)
        };
    let job = load_each_with(&load_one, paths, parallel, on_progress, on_loaded, cancel);
    // What the reports' loads freed, given back once for all of them
    // (`share::gives_back_memory`).
    crate::memory::give_back_freed_memory();
    job
}

/// One rank's report read whole while `reading` reports of the job are (this one counted): a
/// rank's events read when the user asks for them, its big tables on its share of the cores
/// as [`load_ranks_each`] gives each rank (one expanded alone reads on every core, an "expand
/// all" does not run a reader per core for each), the freed memory given back after it.
pub fn load_rank(
    path: &std::path::Path,
    reading: usize,
    cancel: &AtomicBool,
) -> Result<Trace, LoadError> {
    let share = (super::share::table_cores() / reading.max(1)).max(1);
    let read = super::share::in_job(share, || load(path, &mut |_| {}, cancel));
    crate::memory::give_back_freed_memory();
    read
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
type LoadOne<'a> = dyn Fn(&std::path::Path, &mut dyn FnMut(Progress), &AtomicBool) -> Result<Trace, LoadError>
    + Sync
    + 'a;

/// [`load_ranks_each`] with each report read by `load_one`.
fn load_each_with(
    load_one: &LoadOne<'_>,
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
    let at_once = parallel.clamp(1, count);
    // Each report read at once reads its big tables on its share of the cores, not on every
    // core: eight reports on 16 cores ran 64 reader threads (8 pieces a table), each piece a
    // connection opened and a part appended, on cores the other reports kept busy; on 2 cores
    // the job took 5–8% more CPU time than with a core each (BENCHMARKS.md, issue 42).
    let share = (super::share::table_cores() / at_once).max(1);
    std::thread::scope(|scope| {
        for _ in 0..at_once {
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
                    let result = super::share::in_job(share, || {
                        load_one(&paths[i], &mut report_progress, &own_cancel)
                    })
                    .map(Arc::new);
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

/// Whether `dir` is a job the engine reads from nsys's own Parquet exports: one of them, or a
/// folder holding them (a folder per rank).
pub fn is_nsys_parquet_job(dir: &std::path::Path) -> bool {
    nsys_parquet_ranks(std::slice::from_ref(&dir.to_path_buf())).is_some()
}

/// The rank folders `given` names: each an nsys Parquet export, or a folder of them.
pub fn nsys_parquet_ranks(given: &[PathBuf]) -> Option<Vec<PathBuf>> {
    let mut ranks = Vec::new();
    for path in given {
        if is_nsys_parquet(path) {
            ranks.push(path.clone());
            continue;
        }
        let mut inside: Vec<PathBuf> = std::fs::read_dir(path)
            .ok()?
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| is_nsys_parquet(p))
            .collect();
        if inside.is_empty() {
            return None;
        }
        inside.sort();
        ranks.extend(inside);
    }
    (!ranks.is_empty()).then_some(ranks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    /// What each load of a job on `cores` saw as its cores, the loads held until `at_once`
    /// are in; each load also checks that it leaves the freed memory to the job.
    fn cores_seen(cores: usize, reports: usize, parallel: usize, at_once: usize) -> Vec<usize> {
        let paths: Vec<PathBuf> = (0..reports)
            .map(|i| PathBuf::from(format!("rank{i}.sqlite")))
            .collect();
        let (all_in, seen) = (Barrier::new(at_once), Mutex::new(Vec::new()));
        let load_one = |_: &std::path::Path, _: &mut dyn FnMut(Progress), _: &AtomicBool| {
            let share = (
                super::super::share::table_cores(),
                super::super::share::gives_back_memory(),
            );
            seen.lock().expect("seen").push(share);
            all_in.wait();
            Ok(Trace::default())
        };
        let job = super::super::share::in_job(cores, || {
            let never = AtomicBool::new(false);
            load_each_with(&load_one, &paths, parallel, &|_| {}, &|_, _| {}, &never)
        });
        assert_eq!(job.expect("the job").ranks.len(), reports);
        let seen = seen.into_inner().expect("seen");
        // Each load's trim walked every arena while the others filled them.
        assert!(
            seen.iter().all(|&(_, gives_back)| !gives_back),
            "a report of a job gave its freed memory back itself"
        );
        seen.into_iter().map(|(cores, _)| cores).collect()
    }

    /// Reports read at once share the cores: twelve cores, four reports at a time, each reads
    /// its tables on three (on every core, the job ran 4 × 8 reader threads on 12 cores).
    #[test]
    fn reports_read_at_once_share_the_cores() {
        assert_eq!(cores_seen(12, 8, 4, 4), vec![3; 8]);
        // More at once than cores: one each, not none.
        assert_eq!(cores_seen(2, 4, 4, 4), vec![1; 4]);
    }

    /// A report read alone has every core; three reports two at a time, half each. A load
    /// outside a job gives its freed memory back itself.
    #[test]
    fn a_report_read_alone_has_every_core() {
        assert!(super::super::share::gives_back_memory());
        assert_eq!(cores_seen(8, 1, 4, 1), vec![8]);
        assert_eq!(cores_seen(8, 3, 2, 1), vec![4, 4, 4]);
    }
}
