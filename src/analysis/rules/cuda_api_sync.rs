//! `cuda_api_sync`: every `cudaDeviceSynchronize*` / `cudaStreamSynchronize*`
//! call, longest first. Such calls block the CPU until the GPU catches up.

use super::labels::columns;
use super::window::Window;
use crate::analysis::like::like;
use crate::analysis::table::{Cell, Table};
use crate::model::Trace;

/// The API names the rule matches (SQL `LIKE`).
pub(crate) const SYNC_APIS: [&str; 2] = ["cudaDeviceSynchronize%", "cudaStreamSynchronize%"];

pub(super) fn run(trace: &Trace, window: Window) -> Table {
    let spans = &trace.cuda_api.spans;
    // Names are interned: decide once per name, not once per call.
    let mut is_sync: Vec<Option<bool>> = vec![None; trace.strings.len()];
    let mut found: Vec<(i64, i64, u32, u32, &str)> = Vec::new();
    for thread in &trace.threads {
        for i in thread.cuda_api.rows() {
            let i = i as usize;
            let (start, end) = (spans.start[i], spans.end(i));
            if !window.overlaps(start, end) {
                continue;
            }
            let name_id = spans.name[i];
            let name = trace.name(name_id);
            let slot = is_sync.get_mut(name_id.0 as usize);
            let matches = match slot {
                Some(Some(known)) => *known,
                Some(slot) => *slot.insert(SYNC_APIS.iter().any(|p| like(name, p))),
                None => SYNC_APIS.iter().any(|p| like(name, p)),
            };
            if matches {
                found.push((
                    end.saturating_sub(start),
                    start,
                    thread.pid,
                    thread.tid,
                    name,
                ));
            }
        }
    }
    // Duration DESC; equal durations by start (no fixture has a tie).
    found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    Table {
        columns: columns(&["Duration (ns)", "Start (ns)", "PID", "TID", "API Name"]),
        rows: found
            .into_iter()
            .map(|(duration, start, pid, tid, name)| {
                vec![
                    Cell::Int(duration),
                    Cell::Int(start),
                    Cell::Int(pid.into()),
                    Cell::Int(tid.into()),
                    Cell::Text(name.to_string()),
                ]
            })
            .collect(),
    }
}
