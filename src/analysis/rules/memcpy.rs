//! `cuda_memcpy_async` (async copy APIs on pageable memory: the copy is
//! staged and the call returns only when done) and `cuda_memcpy_sync`
//! (synchronous copy APIs, which block the CPU).

use std::collections::HashMap;

use super::{Window, columns, like, mem_kind_label};
use crate::analysis::stats::{Cell, Table};
use crate::model::Trace;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    AsyncPageable,
    Sync,
}

/// `copyKind` Host-to-Device.
const HOST_TO_DEVICE: u8 = 1;
/// Small host-to-device copies are staged and return at once: not reported.
const SMALL_H2D_BYTES: u64 = 64_000;
/// `ENUM_CUDA_MEM_KIND` Pageable.
const PAGEABLE: u8 = 0;

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
    let apis = api_by_correlation(trace, |name| match which {
        Which::AsyncPageable => like(name, "cudaMemcpy%Async%"),
        Which::Sync => like(name, "cudaMemcpy%") && !like(name, "%Async%"),
    });
    let m = &trace.memcpys;
    let mut found: Vec<Match> = Vec::new();
    for (s, stream) in trace.streams.iter().enumerate() {
        for i in stream.memcpys.events.clone() {
            let i = i as usize;
            if !window.overlaps(m.spans.start[i], m.spans.end[i]) {
                continue;
            }
            let (src, dst) = (m.src_kind[i], m.dst_kind[i]);
            let keep = match which {
                Which::AsyncPageable => src == PAGEABLE || dst == PAGEABLE,
                Which::Sync => {
                    let small_h2d =
                        m.bytes[i] <= SMALL_H2D_BYTES && m.copy_kind[i] == HOST_TO_DEVICE;
                    let src_device = m.src_device.get(i).copied().unwrap_or(-1);
                    let dst_device = m.dst_device.get(i).copied().unwrap_or(-1);
                    let same_device = src_device >= 0 && src_device == dst_device;
                    !small_h2d && !same_device
                }
            };
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

pub(super) fn run(trace: &Trace, window: Window, which: Which) -> Table {
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
