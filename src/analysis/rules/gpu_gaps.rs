//! `gpu_gaps`: spans where a GPU ran nothing of a process for longer than
//! `gap` milliseconds (default 500).
//!
//! nsys sorts the operations' starts and their ends separately and takes gap
//! i as `start[i] - end[i - 1]`: with overlapping work that is not the exact
//! idle time, but it is what nsys reports, so it is what we compute.

use super::labels::columns;
use super::sorted_ops::SortedOps;
use super::window::Window;
use crate::analysis::table::{Cell, Table};
use crate::model::{Ns, Trace};

/// One idle gap: (duration, start, pid, device, context).
pub(crate) type Gap = (Ns, Ns, u32, u32, u32);

/// Every gap longer than `min_gap` ns, longest first (then earliest).
pub(crate) fn gaps(trace: &Trace, window: Window, min_gap: Ns) -> Vec<Gap> {
    gaps_of(&SortedOps::of(trace, window), min_gap)
}

/// [`gaps`] of the operations `ops` holds.
pub(crate) fn gaps_of(ops: &SortedOps, min_gap: Ns) -> Vec<Gap> {
    let mut found = Vec::new();
    for (&(pid, device), group) in &ops.groups {
        for (&start, &(end, context)) in group.starts.iter().skip(1).zip(&group.ends) {
            let gap = start.saturating_sub(end);
            if gap > min_gap {
                found.push((gap, end, pid, device, context));
            }
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    found
}

pub(super) fn run(trace: &Trace, window: Window, gap_ms: f64) -> Table {
    let min_gap = (gap_ms * 1e6) as Ns;
    Table {
        columns: columns(&[
            "Row#",
            "Duration (ns)",
            "Start (ns)",
            "PID",
            "Device ID",
            "Context ID",
        ]),
        rows: gaps(trace, window, min_gap)
            .into_iter()
            .enumerate()
            .map(|(row, (duration, start, pid, device, context))| {
                vec![
                    Cell::Int(row as i64 + 1),
                    Cell::Int(duration),
                    Cell::Int(start),
                    Cell::Int(pid.into()),
                    Cell::Int(device.into()),
                    Cell::Int(context.into()),
                ]
            })
            .collect(),
    }
}
