//! The per-event trace reports: `cuda_api_trace`, `cuda_gpu_trace`,
//! `cuda_kern_exec_trace`. An event belongs to a range when it starts in it
//! (a kernel/API pair of `cuda_kern_exec_trace`: when its API call does).

use super::gpu_reports::xyz_padded;
use super::reports::{events_in, text};
use super::stats::{Cell, Table, TimeRange};
use crate::model::nsys::{mem_kind_label, strip_version_suffix};
use crate::model::{GpuOpKind, Ns, StrId, StreamIdx, Trace};

fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// `cuda_api_trace`: every CUDA API call, by start time (ties: correlation id).
pub(crate) fn cuda_api_trace(trace: &Trace, range: Option<TimeRange>) -> Table {
    let api = &trace.cuda_api;
    let mut rows: Vec<((Ns, u32), Vec<Cell>)> = Vec::new();
    for thread in &trace.threads {
        for i in events_in(&api.spans, &thread.cuda_api.events, range) {
            let correlation = api.correlation.get(i).copied().unwrap_or(0);
            rows.push((
                (api.spans.start[i], correlation),
                vec![
                    Cell::Int(api.spans.start[i]),
                    Cell::Int(api.spans.duration(i)),
                    text(strip_version_suffix(trace.name(api.spans.name[i]))),
                    Cell::Int(api.return_value.get(i).copied().unwrap_or(0) as i64),
                    Cell::Int(correlation as i64),
                    Cell::Int(thread.pid as i64),
                    Cell::Int(thread.tid as i64),
                    thread.priority.map_or(Cell::Empty, |p| Cell::Int(p as i64)),
                    text(&thread.name),
                ],
            ));
        }
    }
    rows.sort_by_key(|r| r.0);
    Table {
        columns: columns(&[
            "Start (ns)",
            "Duration (ns)",
            "Name",
            "Result",
            "CorrID",
            "Pid",
            "Tid",
            "T-Pri",
            "Thread Name",
        ]),
        rows: rows.into_iter().map(|r| r.1).collect(),
    }
}

/// The stream of every row of the `kind` table.
fn stream_of_rows(trace: &Trace, kind: GpuOpKind) -> Vec<StreamIdx> {
    let mut of = vec![0; trace.gpu_spans(kind).len()];
    for (s, stream) in trace.streams.iter().enumerate() {
        let track = match kind {
            GpuOpKind::Kernel => &stream.kernels,
            GpuOpKind::Memcpy => &stream.memcpys,
            GpuOpKind::Memset => &stream.memsets,
            GpuOpKind::Sync => &stream.syncs,
        };
        for i in track.events.clone() {
            if let Some(slot) = of.get_mut(i as usize) {
                *slot = s as StreamIdx;
            }
        }
    }
    of
}

/// nsys's `Device` column: `NAME (ID)`.
fn device_text(trace: &Trace, device: u32) -> String {
    let name = trace
        .gpus
        .iter()
        .find(|g| g.device_id == device)
        .map_or("", |g| g.name.as_str());
    format!("{name} ({device})")
}

/// `ENUM_CUDA_MEMCPY_OPER` Unified Host-to-Device .. Unified Device-to-Device.
const UVM_HTOD: u8 = 11;
const UVM_DTOD: u8 = 13;

/// `cuda_gpu_trace`: kernels, copies and sets by start time (ties: correlation id).
pub(crate) fn cuda_gpu_trace(trace: &Trace, range: Option<TimeRange>) -> Table {
    gpu_trace_rows(trace, range, None)
}

/// `cuda_gpu_trace`'s rows of one kernel (by demangled name) alone: the
/// instances of the kernel panel, with the report's columns and numbers.
pub(crate) fn cuda_gpu_trace_of_kernel(
    trace: &Trace,
    range: Option<TimeRange>,
    kernel: StrId,
) -> Table {
    gpu_trace_rows(trace, range, Some(kernel))
}

/// `cuda_gpu_trace`, or with `only_kernel` its rows of that kernel alone
/// (no copies, no sets).
fn gpu_trace_rows(trace: &Trace, range: Option<TimeRange>, only_kernel: Option<StrId>) -> Table {
    let mut rows: Vec<((Ns, u32), Vec<Cell>)> = Vec::new();
    let mb = |bytes: u64| Cell::Megabytes(bytes as f64);
    // Bytes per second, printed as MB/s like the other `(MB)` columns. nsys
    // multiplies the bytes by the *integer* quotient 1e9 / duration (so
    // 1024 B in 1024 ns is 1024 * 976562 B/s = 999.999 MB/s), and so do we.
    let throughput = |bytes: u64, duration: Ns| {
        if duration > 0 {
            let per_second = 1_000_000_000 / duration as u128;
            Cell::Megabytes((bytes as u128 * per_second) as f64)
        } else {
            Cell::Empty
        }
    };
    let tail = |stream: &crate::model::Stream, name: &str| {
        vec![
            text(&device_text(trace, stream.device_id)),
            Cell::Int(stream.context_id as i64),
            Cell::Empty,
            Cell::Int(stream.stream_id as i64),
            text(name),
        ]
    };
    let k = &trace.kernels;
    let c = &trace.memcpys;
    let m = &trace.memsets;
    for stream in &trace.streams {
        for i in events_in(&k.spans, &stream.kernels.events, range) {
            if only_kernel.is_some_and(|name| k.spans.name[i] != name) {
                continue;
            }
            let config = k
                .config
                .get(i)
                .and_then(|&x| k.configs.get(x as usize))
                .copied()
                .unwrap_or_default();
            let correlation = k.correlation.get(i).copied().unwrap_or(0);
            let mut row = vec![
                Cell::Int(k.spans.start[i]),
                Cell::Int(k.spans.duration(i)),
                Cell::Int(correlation as i64),
            ];
            row.extend(config.grid.iter().map(|&v| Cell::Int(v as i64)));
            row.extend(config.block.iter().map(|&v| Cell::Int(v as i64)));
            row.extend([
                Cell::Int(config.registers_per_thread as i64),
                mb(config.static_shared_memory as u64),
                mb(config.dynamic_shared_memory as u64),
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
            ]);
            row.extend(tail(stream, trace.name(k.spans.name[i])));
            rows.push(((k.spans.start[i], correlation), row));
        }
        let copies = if only_kernel.is_some() {
            0..0
        } else {
            events_in(&c.spans, &stream.memcpys.events, range)
        };
        for i in copies {
            if !c.kind_known.get(i).copied().unwrap_or(false) {
                continue;
            }
            let bytes = c.bytes.get(i).copied().unwrap_or(0);
            let correlation = c.correlation.get(i).copied().unwrap_or(0);
            // Unified-memory migrations belong to no API call, context or
            // stream: nsys leaves those columns empty.
            let unified = matches!(c.copy_kind.get(i), Some(&(UVM_HTOD..=UVM_DTOD)));
            let mut row = vec![
                Cell::Int(c.spans.start[i]),
                Cell::Int(c.spans.duration(i)),
                if unified {
                    Cell::Empty
                } else {
                    Cell::Int(correlation as i64)
                },
            ];
            row.extend(std::iter::repeat_n(Cell::Empty, 9));
            row.extend([
                mb(bytes),
                throughput(bytes, c.spans.duration(i)),
                text(mem_kind_label(c.src_kind.get(i).copied().unwrap_or(7))),
                text(mem_kind_label(c.dst_kind.get(i).copied().unwrap_or(7))),
            ]);
            let mut end = tail(stream, trace.name(c.spans.name[i]));
            if unified {
                // Ctx and Strm.
                end[1] = Cell::Empty;
                end[3] = Cell::Empty;
            }
            row.extend(end);
            rows.push(((c.spans.start[i], correlation), row));
        }
        let sets = if only_kernel.is_some() {
            0..0
        } else {
            events_in(&m.spans, &stream.memsets.events, range)
        };
        for i in sets {
            let bytes = m.bytes.get(i).copied().unwrap_or(0);
            let correlation = m.correlation.get(i).copied().unwrap_or(0);
            let mut row = vec![
                Cell::Int(m.spans.start[i]),
                Cell::Int(m.spans.duration(i)),
                Cell::Int(correlation as i64),
            ];
            row.extend(std::iter::repeat_n(Cell::Empty, 9));
            row.extend([
                mb(bytes),
                throughput(bytes, m.spans.duration(i)),
                text(mem_kind_label(m.mem_kind.get(i).copied().unwrap_or(7))),
                Cell::Empty,
            ]);
            row.extend(tail(stream, trace.name(m.spans.name[i])));
            rows.push(((m.spans.start[i], correlation), row));
        }
    }
    rows.sort_by_key(|r| r.0);
    Table {
        columns: columns(&[
            "Start (ns)",
            "Duration (ns)",
            "CorrId",
            "GrdX",
            "GrdY",
            "GrdZ",
            "BlkX",
            "BlkY",
            "BlkZ",
            "Reg/Trd",
            "StcSMem (MB)",
            "DymSMem (MB)",
            "Bytes (MB)",
            "Throughput (MB/s)",
            "SrcMemKd",
            "DstMemKd",
            "Device",
            "Ctx",
            "GreenCtx",
            "Strm",
            "Name",
        ]),
        rows: rows.into_iter().map(|r| r.1).collect(),
    }
}

/// `cuda_kern_exec_trace`: every kernel with the API call that launched it
/// (the pairing of `cuda_kern_exec_sum`), by API start then kernel start.
/// Queue start/duration are empty when the kernel started before the call
/// returned.
pub(crate) fn cuda_kern_exec_trace(trace: &Trace, range: Option<TimeRange>) -> Table {
    let api = &trace.cuda_api.spans;
    let k = &trace.kernels;
    let stream_of = stream_of_rows(trace, GpuOpKind::Kernel);
    let mut rows: Vec<((Ns, Ns, u32), Vec<Cell>)> = Vec::new();
    for thread in &trace.threads {
        for call in events_in(api, &thread.cuda_api.events, range) {
            let Some(&correlation) = trace.cuda_api.correlation.get(call) else {
                continue;
            };
            let (call_start, call_end) = (api.start[call], api.end[call]);
            for op in trace.correlation.gpu_ops(thread.pid, correlation) {
                let i = op.index as usize;
                if op.kind != GpuOpKind::Kernel || i >= k.spans.len() {
                    continue;
                }
                let (kernel_start, kernel_end) = (k.spans.start[i], k.spans.end[i]);
                let queue = kernel_start.saturating_sub(call_end);
                let config = k
                    .config
                    .get(i)
                    .and_then(|&x| k.configs.get(x as usize))
                    .copied()
                    .unwrap_or_default();
                let device = trace
                    .streams
                    .get(stream_of[i] as usize)
                    .map_or(0, |s| s.device_id);
                let (queue_start, queue_duration) = if queue >= 0 {
                    (Cell::Int(call_end), Cell::Int(queue))
                } else {
                    (Cell::Empty, Cell::Empty)
                };
                rows.push((
                    (call_start, kernel_start, op.index),
                    vec![
                        Cell::Int(call_start),
                        Cell::Int(call_end.saturating_sub(call_start)),
                        queue_start,
                        queue_duration,
                        Cell::Int(kernel_start),
                        Cell::Int(kernel_end.saturating_sub(kernel_start)),
                        Cell::Int(call_end.max(kernel_end).saturating_sub(call_start)),
                        Cell::Int(thread.pid as i64),
                        Cell::Int(thread.tid as i64),
                        Cell::Int(device as i64),
                        text(strip_version_suffix(trace.name(api.name[call]))),
                        text(&xyz_padded(config.grid)),
                        text(&xyz_padded(config.block)),
                        text(trace.name(k.spans.name[i])),
                    ],
                ));
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    Table {
        columns: columns(&[
            "API Start (ns)",
            "API Dur (ns)",
            "Queue Start (ns)",
            "Queue Dur (ns)",
            "Kernel Start (ns)",
            "Kernel Dur (ns)",
            "Total Dur (ns)",
            "PID",
            "TID",
            "DevId",
            "API Function",
            "GridXYZ",
            "BlockXYZ",
            "Kernel Name",
        ]),
        rows: rows.into_iter().map(|r| r.1).collect(),
    }
}
