//! The tables `stats` makes for one report, shared by one report's output (`stats.rs`) and a
//! job's (`stats_job.rs`): a trace report streamed as CSV row by row (with a rank's column and
//! clock when it is one rank of a job), and `gpu_idle_sum` / `cpu_sample_sum` over NVTX ranges.

use std::io::Write;

use super::output::{Named, heading};
use crate::analysis::ranks::{RankRows, with_rank_column};
use crate::analysis::{
    Report, Table, TextLayout, TimeRange, csv_line, for_each_trace_row, trace_columns,
};
use crate::model::Trace;

/// Where a streamed trace report's CSV stands: whether its header is out yet, and whether a
/// blank line must come before it (it follows another table).
pub(super) struct CsvStream {
    pub started: bool,
    pub separate: bool,
}

/// Writes trace report `report` as CSV to `out`, row by row as each is made (the header with
/// the first row: no rows, no output, as nsys; `stream` says whether it is out already).
/// `rank`: the rows are one rank's of a job, with its rank in front and its times on the job
/// clock.
pub(super) fn stream_trace_csv(
    trace: &Trace,
    report: Report,
    range: Option<TimeRange>,
    rank: Option<&RankRows>,
    stream: &mut CsvStream,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut columns = trace_columns(report).unwrap_or_default();
    if rank.is_some() {
        columns = with_rank_column(&columns);
    }
    let mut texts: Vec<String> = Vec::new();
    for_each_trace_row::<std::io::Error>(trace, report, range, &mut |row| {
        if !stream.started {
            stream.started = true;
            if stream.separate {
                out.write_all(b"\n")?;
            }
            out.write_all(csv_line(columns.iter().map(String::as_str)).as_bytes())?;
        }
        let row = match rank {
            Some(rank) => rank.row(row),
            None => row,
        };
        texts.clear();
        texts.extend(row.iter().map(|c| c.to_string()));
        out.write_all(csv_line(texts.iter().map(String::as_str)).as_bytes())
    })
    .unwrap_or(Ok(()))
}

/// Writes trace report `report` in the aligned table layout to `out`, as
/// [`crate::analysis::Table::to_text`] would lay it out, without holding its
/// rows: a first pass over them measures the columns, a second writes them.
/// `titled`: on stdout, under its heading, and `(no data)` for no rows.
pub(super) fn stream_trace_text(
    trace: &Trace,
    report: Report,
    range: Option<TimeRange>,
    titled: Option<&Named>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut layout = TextLayout::new(&trace_columns(report).unwrap_or_default());
    let mut rows = 0u64;
    for_each_trace_row::<std::convert::Infallible>(trace, report, range, &mut |row| {
        layout.measure(&row);
        rows += 1;
        Ok(())
    });
    if let Some(named) = titled {
        out.write_all(heading(named).as_bytes())?;
        if rows == 0 {
            return writeln!(out, "{}", named.if_empty);
        }
    }
    out.write_all(layout.header().as_bytes())?;
    for_each_trace_row::<std::io::Error>(trace, report, range, &mut |row| {
        out.write_all(layout.row_line(&row).as_bytes())
    })
    .unwrap_or(Ok(()))
}

/// `report` (one that [`Report::takes_nvtx`]: `gpu_idle_sum`, `cpu_sample_sum`) over
/// the NVTX ranges named `name`, within `range` if given.
pub(super) fn in_nvtx_ranges(
    trace: &Trace,
    report: Report,
    name: &str,
    range: Option<TimeRange>,
) -> Table {
    use crate::analysis::idle;
    let mut windows = idle::nvtx_windows(trace, name);
    if let Some(r) = range {
        windows = windows
            .into_iter()
            .map(|(s, e)| (s.max(r.start), e.min(r.end)))
            .filter(|(s, e)| e > s)
            .collect();
    }
    match report {
        Report::CpuSampleSum => {
            crate::analysis::cpu_sample_sum::cpu_sample_sum(trace, Some(windows))
        }
        _ => idle::gpu_idle_sum(trace, Some(windows.as_slice())),
    }
}
