//! A job before any of its events are read: its reports numbered and put on one clock (as
//! `sightline::model::Ranks` does, from each report's session start), so that each rank can
//! then be loaded, written and dropped on its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::ArrowWriter;
use sightline::model::Trace;
use sightline::model::ranks::rank_numbers;

use super::clock::RankClock;
use super::parquet_file::writer_properties;

/// One report of the job.
#[derive(Debug, Clone)]
pub struct PlannedRank {
    pub path: PathBuf,
    pub clock: RankClock,
    pub session_start_utc_ns: Option<i64>,
}

/// The reports of a job, by rank number.
#[derive(Debug, Clone)]
pub struct JobPlan {
    pub ranks: Vec<PlannedRank>,
}

/// The reports named: each `.sqlite` file, or every `.sqlite` file of a folder.
pub fn report_paths(given: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut paths = Vec::new();
    for path in given {
        if path.is_dir() {
            paths.extend(sightline::loader::ranks::reports_in(path).map_err(|e| e.to_string())?);
        } else {
            paths.push(path.clone());
        }
    }
    if paths.is_empty() {
        return Err("no report given".into());
    }
    Ok(paths)
}

impl JobPlan {
    /// Numbers `paths` and reads each one's session start (one small query each).
    pub fn of(given: &[PathBuf]) -> Result<JobPlan, String> {
        let paths = report_paths(given)?;
        let numbers = rank_numbers(paths.iter().map(PathBuf::as_path));
        let starts: Vec<Option<i64>> = (paths.iter())
            .map(|p| session_start(p))
            .collect::<Result<_, _>>()?;
        // Every report has its start: the job clock counts from the earliest; else none is
        // moved (as the window's job does).
        let earliest = (starts.iter().all(Option::is_some))
            .then(|| starts.iter().flatten().copied().min())
            .flatten();
        let mut ranks: Vec<PlannedRank> = (paths.into_iter().zip(numbers).zip(starts))
            .map(|((path, rank), start)| PlannedRank {
                path,
                clock: RankClock {
                    rank,
                    offset_ns: match (start, earliest) {
                        (Some(s), Some(e)) => s - e,
                        _ => 0,
                    },
                },
                session_start_utc_ns: start,
            })
            .collect();
        ranks.sort_by_key(|r| r.clock.rank);
        Ok(JobPlan { ranks })
    }

    /// Rank `i`'s whole model.
    pub fn load(&self, i: usize) -> Result<Trace, String> {
        let path = &self.ranks[i].path;
        sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
            .map_err(|e| e.to_string())
    }
}

/// A report's session start in UTC, None where the report does not record it.
fn session_start(path: &Path) -> Result<Option<i64>, String> {
    let conn = sightline::loader::open_read_only(path).map_err(|e| e.to_string())?;
    let start = conn
        .query_row(
            "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1",
            [],
            |row| row.get::<_, Option<i64>>(0),
        )
        .unwrap_or(None);
    Ok(start)
}

/// The `ranks` table: each rank's report, session start and offset on the job clock.
pub fn ranks_batch(plan: &JobPlan) -> Result<RecordBatch, String> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("rank", DataType::UInt32, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("session_start_utc_ns", DataType::Int64, true),
        Field::new("offset_ns", DataType::Int64, false),
    ]));
    let ranks = &plan.ranks;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(
            ranks.iter().map(|r| r.clock.rank),
        )),
        // Absolute: whoever reads the folder (a window opening it, elsewhere than where it
        // was exported) finds the rank's report from it.
        Arc::new(StringArray::from_iter_values(ranks.iter().map(|r| {
            let path = std::path::absolute(&r.path).unwrap_or_else(|_| r.path.clone());
            path.display().to_string()
        }))),
        Arc::new(Int64Array::from_iter(
            ranks.iter().map(|r| r.session_start_utc_ns),
        )),
        Arc::new(Int64Array::from_iter_values(
            ranks.iter().map(|r| r.clock.offset_ns),
        )),
    ];
    RecordBatch::try_new(schema, columns).map_err(|e| e.to_string())
}

/// [`ranks_batch`] as `dir/part-0.parquet`.
pub fn write_ranks_table(plan: &JobPlan, dir: &Path) -> Result<(), String> {
    let path = dir.join("part-0.parquet");
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    let batch = ranks_batch(plan)?;
    let file = std::fs::File::create(&path).map_err(|e| fail(&e))?;
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(writer_properties()))
        .map_err(|e| fail(&e))?;
    writer.write(&batch).map_err(|e| fail(&e))?;
    writer.close().map_err(|e| fail(&e))?;
    Ok(())
}
