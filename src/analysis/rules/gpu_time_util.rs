//! `gpu_time_util`: stretches where a GPU was busy less than `threshold` percent
//! (default 50) of the time.
//!
//! Each (process, device)'s span, from its first operation's start to its last
//! operation's end, is cut into `chunks` (default 30) chunks of
//! `ceil(span / chunks)` ns (the last one shorter, empty ones skipped). A
//! chunk's use is the time operations overlap it over its length — overlapping
//! operations add up, so it can pass 100%. Consecutive chunks under the
//! threshold merge into one row whose use is the length-weighted mean.

use super::labels::columns;
use super::sorted_ops::SortedOps;
use super::window::Window;
use crate::analysis::format::round1_value;
use crate::analysis::table::{Cell, Table};
use crate::model::{Ns, Trace};

/// One under-used stretch: in-use percent (unrounded), duration, start, pid,
/// device, context.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LowUse {
    pub in_use: f64,
    pub duration: Ns,
    pub start: Ns,
    pub pid: u32,
    pub device: u32,
    pub context: u32,
}

/// Every stretch under `threshold` percent, in nsys's order (use, then duration).
pub(crate) fn low_use(trace: &Trace, window: Window, chunks: u32, threshold: f64) -> Vec<LowUse> {
    low_use_of(&SortedOps::of(trace, window), chunks, threshold)
}

/// [`low_use`] of the operations `ops` holds: a chunk's busy time from the
/// sorted lists, not a pass over the operations.
pub(crate) fn low_use_of(ops: &SortedOps, chunks: u32, threshold: f64) -> Vec<LowUse> {
    let mut found = Vec::new();
    for (&(pid, device), group) in &ops.groups {
        let first = group.starts.first().copied().unwrap_or(0);
        let last = group.ends.last().map_or(0, |e| e.0);
        // nsys's row for the device: the context of one of its operations.
        let context = group.context.unwrap_or(0);
        // i128: a damaged report may hold timestamps anywhere in i64.
        let (first, last) = (i128::from(first), i128::from(last));
        let span = last - first;
        if span <= 0 {
            continue;
        }
        let n = i128::from(chunks.max(1));
        let chunk = (span + n - 1) / n;
        let bounds = |c: i128| {
            let lo = first + c * chunk;
            (lo, (lo + chunk).min(last))
        };
        // The operations lie in [first, last]: a chunk's busy time is their
        // time before its end less their time before its start.
        let busy = |c: i128| {
            let (lo, hi) = bounds(c);
            group.time_before(hi) - group.time_before(lo)
        };
        // Runs of consecutive low chunks: (Σ len·pct, Σ len, start, end).
        let mut run: Option<(f64, i128, i128, i128)> = None;
        let mut flush = |run: &mut Option<(f64, i128, i128, i128)>| {
            if let Some((weighted, length, start, end)) = run.take() {
                found.push(LowUse {
                    in_use: weighted / length as f64,
                    duration: Ns::try_from(end - start).unwrap_or(Ns::MAX),
                    start: Ns::try_from(start).unwrap_or(Ns::MAX),
                    pid,
                    device,
                    context,
                });
            }
        };
        for c in 0..n {
            let (lo, hi) = bounds(c);
            if hi <= lo {
                continue;
            }
            let length = hi - lo;
            let percent = busy(c) as f64 * 100.0 / length as f64;
            if percent < threshold {
                let r = run.get_or_insert((0.0, 0, lo, hi));
                r.0 += length as f64 * percent;
                r.1 += length;
                r.3 = hi;
            } else {
                flush(&mut run);
            }
        }
        flush(&mut run);
    }
    found.sort_by(|a, b| {
        round1_value(a.in_use)
            .total_cmp(&round1_value(b.in_use))
            .then(a.duration.cmp(&b.duration))
            .then(a.start.cmp(&b.start))
    });
    found
}

pub(super) fn run(trace: &Trace, window: Window, chunks: u32, threshold: f64) -> Table {
    Table {
        columns: columns(&[
            "Row#",
            "In-Use (%)",
            "Duration (ns)",
            "Start (ns)",
            "PID",
            "Device ID",
            "Context ID",
        ]),
        rows: low_use(trace, window, chunks, threshold)
            .into_iter()
            .enumerate()
            .map(|(row, u)| {
                vec![
                    Cell::Int(row as i64 + 1),
                    Cell::Round1(u.in_use),
                    Cell::Int(u.duration),
                    Cell::Int(u.start),
                    Cell::Int(u.pid.into()),
                    Cell::Int(u.device.into()),
                    Cell::Int(u.context.into()),
                ]
            })
            .collect(),
    }
}
