//! `cuda_memset_sync`: synchronous memset APIs on pinned or managed memory,
//! which make the CPU wait for the GPU.

use super::labels::columns;
use super::labels::mem_kind_label;
use super::memcpy::{Match, api_by_correlation};
use super::window::Window;
use crate::analysis::like::like;
use crate::analysis::table::{Cell, Table};
use crate::model::Trace;

/// `ENUM_CUDA_MEM_KIND` Pinned and Managed: the kinds nsys's rule reports.
const REPORTED_KINDS: [u8; 2] = [1, 4];

/// The sets the rule reports, longest first (then earliest).
pub(crate) fn matches(trace: &Trace, window: Window) -> Vec<Match> {
    matches_by(trace, window, |name| {
        like(name, "cudaMemset%") && !like(name, "%async%")
    })
}

/// [`matches`] with API calls chosen by `api` instead of the rule's name
/// pattern (the findings take the driver API's forms too).
pub(crate) fn matches_by(trace: &Trace, window: Window, api: impl Fn(&str) -> bool) -> Vec<Match> {
    let apis = api_by_correlation(trace, api);
    let m = &trace.memsets;
    let mut found: Vec<Match> = Vec::new();
    for (s, stream) in trace.streams.iter().enumerate() {
        for i in stream.memsets.rows() {
            let i = i as usize;
            if !window.overlaps(m.spans.start[i], m.spans.end(i))
                || !REPORTED_KINDS.contains(&m.mem_kind[i])
            {
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
    found.sort_by(|a, b| key(b).0.cmp(&key(a).0).then(key(a).1.cmp(&key(b).1)));
    found
}

pub(super) fn run(trace: &Trace, window: Window) -> Table {
    let m = &trace.memsets;
    let rows = matches(trace, window)
        .into_iter()
        .map(|Match { op: i, api, stream }| {
            let stream = &trace.streams[stream];
            let green = m.green_context.get(i).copied().unwrap_or(0);
            vec![
                Cell::Int(m.spans.duration(i)),
                Cell::Int(m.spans.start[i]),
                mem_kind_label(m.mem_kind[i]).map_or(Cell::Empty, |l| Cell::Text(l.into())),
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
            "Memory Kind",
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
