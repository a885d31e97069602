//! `sightline stats` over a job (several reports, or a folder of them): every report's table
//! with a first column `Rank`, each rank's rows exactly those of its report alone, ranks in
//! rank order; the timestamps of trace reports on the job clock (durations unchanged).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::output::{Named, emit_table, finish, write_failed};
use super::stats_tables::{CsvStream, in_nvtx_ranges, stream_trace_csv};
use super::usage_error;
use crate::analysis::ranks::{RankRows, timestamp_columns, with_rank_column};
use crate::analysis::{RangeRule, Report, Table, TimeRange, compute_in, trace_columns};
use crate::model::{Rank, Ranks};

/// What `stats` was asked for, for a job.
pub(super) struct JobStats<'a> {
    pub reports: &'a [Report],
    pub csv: bool,
    pub output: Option<&'a str>,
    /// On the job clock.
    pub range: Option<TimeRange>,
    pub rule: RangeRule,
    pub nvtx: Option<&'a str>,
}

/// Prints (or writes) every report asked for over the job; the exit code.
pub(super) fn print(job: &Ranks, request: &JobStats) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    for (i, &report) in request.reports.iter().enumerate() {
        let printed = if request.csv && request.rule == RangeRule::StartsInside && report.is_trace()
        {
            stream_job_trace(job, report, request, i > 0, &mut stdout)
        } else {
            let table = match job_table(job, report, request) {
                Ok(table) => table,
                Err(message) => return usage_error("stats", &message),
            };
            let file_stem = report.file_stem();
            let named = Named {
                file_stem: &file_stem,
                name: report.name(),
                title: report.title(),
                if_empty: "(no data)",
            };
            emit_table(
                &table,
                &named,
                request.csv,
                request.output,
                i == 0,
                &mut stdout,
            )
        };
        if printed.is_err() {
            return ExitCode::FAILURE;
        }
    }
    finish(&mut stdout)
}

/// The job's range on one rank's own clock.
fn rank_range(rank: &Rank, range: Option<TimeRange>) -> Option<TimeRange> {
    range.map(|r| TimeRange {
        start: r.start.saturating_sub(rank.offset_ns),
        end: r.end.saturating_sub(rank.offset_ns),
    })
}

/// Report `report` of every rank in one table, each rank's rows behind its rank.
fn job_table(job: &Ranks, report: Report, request: &JobStats) -> Result<Table, String> {
    let mut combined = Table::default();
    for rank in &job.ranks {
        let range = rank_range(rank, request.range);
        let table = match request.nvtx {
            Some(name) => in_nvtx_ranges(&rank.trace, report, name, range),
            None => {
                compute_in(&rank.trace, report, range, request.rule).map_err(|e| e.to_string())?
            }
        };
        if combined.columns.is_empty() {
            combined.columns = with_rank_column(&table.columns);
        }
        let rows = RankRows {
            rank: rank.number,
            offset_ns: rank.offset_ns,
            timestamps: timestamp_columns(&table.columns),
        };
        combined
            .rows
            .extend(table.rows.into_iter().map(|row| rows.row(row)));
    }
    Ok(combined)
}

/// A trace report of every rank as CSV, row by row as each is made (never all held), to
/// `PREFIX_REPORT.csv` or `out`.
fn stream_job_trace(
    job: &Ranks,
    report: Report,
    request: &JobStats,
    separate: bool,
    out: &mut impl Write,
) -> Result<(), ()> {
    let timestamps = timestamp_columns(&trace_columns(report).unwrap_or_default());
    let write_all = |out: &mut dyn Write, separate: bool| -> std::io::Result<()> {
        let mut stream = CsvStream {
            started: false,
            separate,
        };
        for rank in &job.ranks {
            let rows = RankRows {
                rank: rank.number,
                offset_ns: rank.offset_ns,
                timestamps: timestamps.clone(),
            };
            let range = rank_range(rank, request.range);
            stream_trace_csv(&rank.trace, report, range, Some(&rows), &mut stream, out)?;
        }
        Ok(())
    };
    match request.output {
        Some(prefix) => {
            let path = PathBuf::from(format!("{prefix}_{}.csv", report.file_stem()));
            super::output::write_output_with(&path, |out| write_all(out, false))
        }
        None => {
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, out);
            write_all(&mut buffered, separate)
                .and_then(|()| buffered.flush())
                .map_err(|e| {
                    write_failed(&e);
                })
        }
    }
}
