//! `sightline export --format parquet --output DIR FILE...`: a job's reports as a folder of
//! Parquet tables (docs/parquet.md), one folder per table, partitioned by rank
//! (`TABLE/rank=N/part-0.parquet`). Every core exports a rank at a time; a rank's model is
//! the most any worker holds (its tables go out a batch at a time). The folder is made beside
//! `DIR` under a hidden name and renamed into place when whole: an interrupted export leaves
//! no half folder where `DIR` is, and an existing `DIR` is never touched.

pub mod clock;
pub mod columns;
pub mod job;
pub mod parquet_file;
pub mod samples;
pub mod tables;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use job::JobPlan;
use parquet_file::write_table;
use tables::rank_tables;

/// What an export wrote.
#[derive(Debug, Default, Clone, Copy)]
pub struct Exported {
    pub ranks: usize,
    pub events: u64,
}

/// Exports the reports `paths` to the new folder `output`, `workers` ranks at a time.
pub fn export_parquet(
    paths: &[PathBuf],
    output: &Path,
    workers: usize,
) -> Result<Exported, String> {
    if output.exists() {
        return Err(format!(
            "{}: already exists; export writes a new folder (name another, or remove it)",
            output.display()
        ));
    }
    let plan = JobPlan::of(paths)?;
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = output
        .file_name()
        .ok_or_else(|| format!("{}: not a folder name", output.display()))?;
    let aside = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .tempdir_in(&parent)
        .map_err(|e| format!("{}: cannot write here: {e}", parent.display()))?;
    let events = write_ranks(&plan, aside.path(), workers)?;
    job::write_ranks_table(&plan, &aside.path().join("ranks"))?;
    let kept = aside.keep();
    std::fs::rename(&kept, output).map_err(|e| {
        let _ = std::fs::remove_dir_all(&kept);
        format!("{}: {e}", output.display())
    })?;
    Ok(Exported {
        ranks: plan.ranks.len(),
        events,
    })
}

/// Every rank's tables under `root`; the events written. The first failure stops the others.
fn write_ranks(plan: &JobPlan, root: &Path, workers: usize) -> Result<u64, String> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<String>> = Mutex::new(None);
    let events = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, plan.ranks.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= plan.ranks.len() || failed.load(Ordering::Relaxed) {
                        return;
                    }
                    match export_rank(plan, i, root) {
                        Ok(n) => {
                            events.fetch_add(n, Ordering::Relaxed);
                        }
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            if let Ok(mut slot) = first_error.lock() {
                                slot.get_or_insert(e);
                            }
                        }
                    }
                }
            });
        }
    });
    match first_error.into_inner().ok().flatten() {
        Some(e) => Err(e),
        None => Ok(events.into_inner() as u64),
    }
}

/// Loads rank `i` of `plan` and writes each of its tables; its event count.
fn export_rank(plan: &JobPlan, i: usize, root: &Path) -> Result<usize, String> {
    let rank = &plan.ranks[i];
    let trace = plan.load(i)?;
    let mut events = 0;
    for table in rank_tables(&trace, rank.clock) {
        let dir = root
            .join(table.name)
            .join(format!("rank={}", rank.clock.rank));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        write_table(&table, &dir.join("part-0.parquet"))?;
        events += table.rows;
    }
    Ok(events)
}
