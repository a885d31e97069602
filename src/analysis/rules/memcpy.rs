//! What `cuda_memcpy_async` and `cuda_memcpy_sync` share: which API calls and
//! copies each of them reports (`Which`), joining copies to their API calls,
//! and their table. The two rule files only pick their `Which`; the
//! matching lives here, where the findings use it too, so neither this file
//! nor a rule file calls the other.

use std::collections::HashMap;

use super::labels::{columns, mem_kind_label};
use super::window::Window;
use crate::analysis::like::like;
use crate::analysis::table::{Cell, Table};
use crate::model::{Memcpys, Trace};

/// `ENUM_CUDA_MEM_KIND` Pageable.
const PAGEABLE: u8 = 0;
/// `copyKind` Host-to-Device.
const HOST_TO_DEVICE: u8 = 1;
/// Host-to-device copies up to this size return at once: not reported.
const SMALL_H2D_BYTES: u64 = 64_000;

/// Which of the two rules.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    /// `cuda_memcpy_async`: async copy APIs (`cudaMemcpy*Async*`) with
    /// pageable memory on either side.
    AsyncPageable,
    /// `cuda_memcpy_sync`: synchronous copy APIs (`cudaMemcpy*`, not `Async`),
    /// except copies within one device and small host-to-device copies.
    Sync,
}

impl Which {
    /// Whether the rule looks at API calls named `name`.
    fn api(self, name: &str) -> bool {
        match self {
            Which::AsyncPageable => like(name, "cudaMemcpy%Async%"),
            Which::Sync => like(name, "cudaMemcpy%") && !like(name, "%Async%"),
        }
    }

    /// Whether the rule reports the copy in row `row` of `Trace::memcpys`.
    fn copy(self, trace: &Trace, row: usize) -> bool {
        let m = &trace.memcpys;
        match self {
            Which::AsyncPageable => m.src_kind[row] == PAGEABLE || m.dst_kind[row] == PAGEABLE,
            Which::Sync => !is_small_h2d(m, row) && !within_one_device(m, row),
        }
    }
}

/// A host-to-device copy small enough that the call returns at once.
fn is_small_h2d(m: &Memcpys, row: usize) -> bool {
    m.bytes[row] <= SMALL_H2D_BYTES && m.copy_kind[row] == HOST_TO_DEVICE
}

/// A copy between two places of one device.
fn within_one_device(m: &Memcpys, row: usize) -> bool {
    let src_device = m.src_device.get(row).copied().unwrap_or(-1);
    let dst_device = m.dst_device.get(row).copied().unwrap_or(-1);
    src_device >= 0 && src_device == dst_device
}

/// API calls by correlation id whose name passes `keep`. nsys joins the copy to
/// its API call on the correlation id alone, not the process, so this does too.
pub(super) fn api_by_correlation(
    trace: &Trace,
    keep: impl Fn(&str) -> bool,
) -> HashMap<u32, Vec<usize>> {
    let spans = &trace.cuda_api.spans;
    let mut wanted: Vec<Option<bool>> = vec![None; trace.strings.len()];
    let mut map: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in 0..spans.len() {
        let id = spans.name[i];
        let keep_it = match wanted.get_mut(id.0 as usize) {
            Some(Some(known)) => *known,
            Some(slot) => *slot.insert(keep(trace.name(id))),
            None => keep(trace.name(id)),
        };
        if keep_it && let Some(&c) = trace.cuda_api.correlation.get(i) {
            map.entry(c).or_default().push(i);
        }
    }
    map
}

/// One reported copy (or set): its row in the GPU table, the API call that
/// made it, and its stream (indexes into the trace's tables).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Match {
    pub op: usize,
    pub api: usize,
    pub stream: usize,
}

/// The copies `which` reports, longest first (then earliest).
pub(crate) fn matches(trace: &Trace, window: Window, which: Which) -> Vec<Match> {
    matches_by(trace, window, which, |name| which.api(name))
}

/// [`matches`] with API calls chosen by `api` instead of the rule's name
/// pattern (the findings take the driver API's forms too).
pub(crate) fn matches_by(
    trace: &Trace,
    window: Window,
    which: Which,
    api: impl Fn(&str) -> bool,
) -> Vec<Match> {
    let apis = api_by_correlation(trace, api);
    let m = &trace.memcpys;
    let mut found: Vec<Match> = Vec::new();
    for (s, stream) in trace.streams.iter().enumerate() {
        for i in stream.memcpys.rows() {
            let i = i as usize;
            if !window.overlaps(m.spans.start[i], m.spans.end(i)) {
                continue;
            }
            let keep = which.copy(trace, i);
            if !keep {
                continue;
            }
            if let Some(calls) = apis.get(&m.correlation[i]) {
                found.extend(calls.iter().map(|&api| Match {
                    op: i,
                    api,
                    stream: s,
                }));
            }
        }
    }
    let key = |x: &Match| (m.spans.duration(x.op), m.spans.start[x.op]);
    // Duration DESC; equal durations by start (no fixture has a tie).
    found.sort_by(|a, b| key(b).0.cmp(&key(a).0).then(key(a).1.cmp(&key(b).1)));
    found
}

pub(super) fn table(trace: &Trace, window: Window, which: Which) -> Table {
    let m = &trace.memcpys;
    let label = |k: u8| mem_kind_label(k).map_or(Cell::Empty, |l| Cell::Text(l.into()));
    let rows = matches(trace, window, which)
        .into_iter()
        .map(|Match { op: i, api, stream }| {
            let stream = &trace.streams[stream];
            let green = m.green_context.get(i).copied().unwrap_or(0);
            vec![
                Cell::Int(m.spans.duration(i)),
                Cell::Int(m.spans.start[i]),
                label(m.src_kind[i]),
                label(m.dst_kind[i]),
                Cell::Megabytes(m.bytes[i] as f64),
                Cell::Int(stream.pid.into()),
                Cell::Int(stream.device_id.into()),
                Cell::Int(stream.context_id.into()),
                if green == 0 {
                    Cell::Empty
                } else {
                    Cell::Int(green.into())
                },
                Cell::Int(stream.stream_id.into()),
                Cell::Text(trace.name(trace.cuda_api.spans.name[api]).to_string()),
            ]
        })
        .collect();
    Table {
        columns: columns(&[
            "Duration (ns)",
            "Start (ns)",
            "Src Kind",
            "Dst Kind",
            "Bytes (MB)",
            "PID",
            "Device ID",
            "Context ID",
            "Green Context ID",
            "Stream ID",
            "API Name",
        ]),
        rows,
    }
}
