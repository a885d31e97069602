//! The per-event trace reports: `cuda_api_trace`, `cuda_gpu_trace`,
//! `cuda_kern_exec_trace` (and, streamed the same way, `nvtx_pushpop_trace`
//! of `projection.rs`, whose rows grow with nesting depth). An event belongs to a range when it starts in it
//! (a kernel/API pair of `cuda_kern_exec_trace`: when its API call does).
//!
//! A trace report has a row per event: a hundred million rows of cells would
//! take many times the memory of the model itself. So each report is built in
//! two steps: the order of its rows, a small reference per row sorted as nsys
//! orders them, then each row's cells, made when it is written
//! ([`for_each_row`]: the CLI streams them; a [`Table`] collects them).

use super::gpu_reports::xyz_padded;
use super::reports::{events_in, text};
use crate::analysis::report::Report;
use crate::analysis::table::Cell;
use crate::analysis::table::Table;
use crate::model::TimeRange;
use crate::model::nsys::{mem_kind_label, strip_version_suffix};
use crate::model::{GpuOpKind, Ns, StrId, StreamIdx, Trace};

fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// The column names of a trace report; `None` for the other reports.
pub fn trace_columns(report: Report) -> Option<Vec<String>> {
    match report {
        Report::CudaApiTrace => Some(columns(API_COLUMNS)),
        Report::CudaGpuTrace => Some(columns(GPU_COLUMNS)),
        Report::CudaKernExecTrace => Some(columns(KERN_EXEC_COLUMNS)),
        Report::NvtxPushpopTrace => Some(columns(super::projection::PUSHPOP_COLUMNS)),
        _ => None,
    }
}

/// Calls `row` with each row of trace report `report` over `range`, in the
/// report's order, as the row is made: the memory used does not grow with the
/// rows written (only a small reference per row is kept, to sort them).
/// `None` when `report` is not a trace report; stops at the first error.
pub fn for_each_row<E>(
    trace: &Trace,
    report: Report,
    range: Option<TimeRange>,
    row: &mut dyn FnMut(Vec<Cell>) -> Result<(), E>,
) -> Option<Result<(), E>> {
    Some(match report {
        Report::CudaApiTrace => api_order(trace, range)
            .iter()
            .try_for_each(|r| row(api_row(trace, r))),
        Report::CudaGpuTrace => gpu_order(trace, range, None)
            .iter()
            .try_for_each(|r| row(gpu_row(trace, r))),
        Report::CudaKernExecTrace => {
            let stream_of = stream_of_rows(trace, GpuOpKind::Kernel);
            kern_exec_order(trace, range)
                .iter()
                .try_for_each(|r| row(kern_exec_row(trace, &stream_of, r)))
        }
        Report::NvtxPushpopTrace => {
            let rows = super::projection::pushpop_rows(trace, range);
            (rows.order.iter()).try_for_each(|&i| row(rows.row(trace, i)))
        }
        _ => return None,
    })
}

/// A report's rows collected into a table.
fn collect<R>(names: &[&str], order: &[R], row: impl FnMut(&R) -> Vec<Cell>) -> Table {
    Table {
        columns: columns(names),
        rows: order.iter().map(row).collect(),
    }
}

const API_COLUMNS: &[&str] = &[
    "Start (ns)",
    "Duration (ns)",
    "Name",
    "Result",
    "CorrID",
    "Pid",
    "Tid",
    "T-Pri",
    "Thread Name",
];

/// One row of `cuda_api_trace`: a call of a thread.
struct ApiRef {
    start: Ns,
    correlation: u32,
    thread: u32,
    call: u32,
}

/// `cuda_api_trace`: every CUDA API call, by start time (ties: correlation id).
pub(crate) fn cuda_api_trace(trace: &Trace, range: Option<TimeRange>) -> Table {
    collect(API_COLUMNS, &api_order(trace, range), |r| api_row(trace, r))
}

fn api_order(trace: &Trace, range: Option<TimeRange>) -> Vec<ApiRef> {
    let api = &trace.cuda_api;
    let mut order = Vec::new();
    for (t, thread) in trace.threads.iter().enumerate() {
        for i in events_in(&api.spans, &thread.cuda_api, range) {
            order.push(ApiRef {
                start: api.spans.start[i],
                correlation: api.correlation.get(i).copied().unwrap_or(0),
                thread: t as u32,
                call: i as u32,
            });
        }
    }
    order.sort_by_key(|r| (r.start, r.correlation));
    order
}

fn api_row(trace: &Trace, r: &ApiRef) -> Vec<Cell> {
    let api = &trace.cuda_api;
    let thread = &trace.threads[r.thread as usize];
    let i = r.call as usize;
    vec![
        Cell::Int(api.spans.start[i]),
        Cell::Int(api.spans.duration(i)),
        text(strip_version_suffix(trace.name(api.spans.name[i]))),
        Cell::Int(api.return_value.get(i).unwrap_or(0) as i64),
        Cell::Int(r.correlation as i64),
        Cell::Int(thread.pid as i64),
        Cell::Int(thread.tid as i64),
        thread.priority.map_or(Cell::Empty, |p| Cell::Int(p as i64)),
        text(&thread.name),
    ]
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
        for i in track.rows() {
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
    collect(GPU_COLUMNS, &gpu_order(trace, range, None), |r| {
        gpu_row(trace, r)
    })
}

/// `cuda_gpu_trace`'s rows of one kernel (by demangled name) alone: the
/// instances of the kernel panel, with the report's columns and numbers.
pub(crate) fn cuda_gpu_trace_of_kernel(
    trace: &Trace,
    range: Option<TimeRange>,
    kernel: StrId,
) -> Table {
    collect(GPU_COLUMNS, &gpu_order(trace, range, Some(kernel)), |r| {
        gpu_row(trace, r)
    })
}

const GPU_COLUMNS: &[&str] = &[
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
];

/// One row of `cuda_gpu_trace`: a kernel, copy or set of a stream.
struct GpuRef {
    start: Ns,
    correlation: u32,
    kind: GpuOpKind,
    stream: u32,
    index: u32,
}

/// `cuda_gpu_trace`'s rows in order, or with `only_kernel` its rows of that
/// kernel alone (no copies, no sets).
fn gpu_order(trace: &Trace, range: Option<TimeRange>, only_kernel: Option<StrId>) -> Vec<GpuRef> {
    let mut order = Vec::new();
    let k = &trace.kernels;
    let c = &trace.memcpys;
    let m = &trace.memsets;
    for (s, stream) in trace.streams.iter().enumerate() {
        let mut push = |kind, start: Ns, correlation: Option<&u32>, index: usize| {
            order.push(GpuRef {
                start,
                correlation: correlation.copied().unwrap_or(0),
                kind,
                stream: s as u32,
                index: index as u32,
            })
        };
        for i in events_in(&k.spans, &stream.kernels, range) {
            if only_kernel.is_some_and(|name| k.spans.name[i] != name) {
                continue;
            }
            push(GpuOpKind::Kernel, k.spans.start[i], k.correlation.get(i), i);
        }
        if only_kernel.is_some() {
            continue;
        }
        for i in events_in(&c.spans, &stream.memcpys, range) {
            if !c.kind_known.get(i).copied().unwrap_or(false) {
                continue;
            }
            push(GpuOpKind::Memcpy, c.spans.start[i], c.correlation.get(i), i);
        }
        for i in events_in(&m.spans, &stream.memsets, range) {
            push(GpuOpKind::Memset, m.spans.start[i], m.correlation.get(i), i);
        }
    }
    // nsys's query takes kernels, then copies, then sets: a kernel and a copy that start
    // together (two streams) keep that order (the recorded DDP jobs have such ties); within a
    // kind, by correlation id. Stable: the rest keep the order above.
    let union_order = |kind: GpuOpKind| match kind {
        GpuOpKind::Kernel => 0u8,
        GpuOpKind::Memcpy => 1,
        GpuOpKind::Memset | GpuOpKind::Sync => 2,
    };
    order.sort_by_key(|r| (r.start, union_order(r.kind), r.correlation));
    order
}

fn gpu_row(trace: &Trace, r: &GpuRef) -> Vec<Cell> {
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
    let stream = &trace.streams[r.stream as usize];
    let tail = |name: StrId| {
        vec![
            text(&device_text(trace, stream.device_id)),
            Cell::Int(stream.context_id as i64),
            Cell::Empty,
            Cell::Int(stream.stream_id as i64),
            text(trace.name(name)),
        ]
    };
    let i = r.index as usize;
    let spans = trace.gpu_spans(r.kind);
    let mut row = vec![
        Cell::Int(spans.start[i]),
        Cell::Int(spans.duration(i)),
        Cell::Int(r.correlation as i64),
    ];
    let mut unified = false;
    match r.kind {
        GpuOpKind::Kernel => {
            let k = &trace.kernels;
            let config = k
                .config
                .get(i)
                .and_then(|&x| k.configs.get(x as usize))
                .copied()
                .unwrap_or_default();
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
        }
        GpuOpKind::Memcpy => {
            let c = &trace.memcpys;
            let bytes = c.bytes.get(i).copied().unwrap_or(0);
            // Unified-memory migrations belong to no API call, context or
            // stream: nsys leaves those columns empty.
            unified = matches!(c.copy_kind.get(i), Some(&(UVM_HTOD..=UVM_DTOD)));
            row.extend(std::iter::repeat_n(Cell::Empty, 9));
            row.extend([
                mb(bytes),
                throughput(bytes, c.spans.duration(i)),
                text(mem_kind_label(c.src_kind.get(i).copied().unwrap_or(7))),
                text(mem_kind_label(c.dst_kind.get(i).copied().unwrap_or(7))),
            ]);
        }
        // Synchronizations are not rows of this report.
        GpuOpKind::Sync => row.extend(std::iter::repeat_n(Cell::Empty, 13)),
        GpuOpKind::Memset => {
            let m = &trace.memsets;
            let bytes = m.bytes.get(i).copied().unwrap_or(0);
            row.extend(std::iter::repeat_n(Cell::Empty, 9));
            row.extend([
                mb(bytes),
                throughput(bytes, m.spans.duration(i)),
                text(mem_kind_label(m.mem_kind.get(i).copied().unwrap_or(7))),
                Cell::Empty,
            ]);
        }
    }
    let mut end = tail(spans.name[i]);
    if unified {
        row[2] = Cell::Empty;
        // Ctx and Strm.
        end[1] = Cell::Empty;
        end[3] = Cell::Empty;
    }
    row.extend(end);
    row
}

const KERN_EXEC_COLUMNS: &[&str] = &[
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
];

/// One row of `cuda_kern_exec_trace`: a kernel and the call that launched it.
struct KernExecRef {
    call_start: Ns,
    kernel_start: Ns,
    kernel: u32,
    thread: u32,
    call: u32,
}

/// `cuda_kern_exec_trace`: every kernel with the API call that launched it
/// (the pairing of `cuda_kern_exec_sum`), by API start then kernel start.
/// Queue start/duration are empty when the kernel started before the call
/// returned.
pub(crate) fn cuda_kern_exec_trace(trace: &Trace, range: Option<TimeRange>) -> Table {
    let stream_of = stream_of_rows(trace, GpuOpKind::Kernel);
    collect(KERN_EXEC_COLUMNS, &kern_exec_order(trace, range), |r| {
        kern_exec_row(trace, &stream_of, r)
    })
}

fn kern_exec_order(trace: &Trace, range: Option<TimeRange>) -> Vec<KernExecRef> {
    let api = &trace.cuda_api.spans;
    let k = &trace.kernels;
    let mut order = Vec::new();
    for (t, thread) in trace.threads.iter().enumerate() {
        for call in events_in(api, &thread.cuda_api, range) {
            let Some(&correlation) = trace.cuda_api.correlation.get(call) else {
                continue;
            };
            for op in trace.correlation.gpu_ops(thread.pid, correlation) {
                let i = op.index as usize;
                if op.kind != GpuOpKind::Kernel || i >= k.spans.len() {
                    continue;
                }
                order.push(KernExecRef {
                    call_start: api.start[call],
                    kernel_start: k.spans.start[i],
                    kernel: op.index,
                    thread: t as u32,
                    call: call as u32,
                });
            }
        }
    }
    order.sort_by_key(|r| (r.call_start, r.kernel_start, r.kernel));
    order
}

fn kern_exec_row(trace: &Trace, stream_of: &[StreamIdx], r: &KernExecRef) -> Vec<Cell> {
    let api = &trace.cuda_api.spans;
    let k = &trace.kernels;
    let thread = &trace.threads[r.thread as usize];
    let (call, i) = (r.call as usize, r.kernel as usize);
    let (call_start, call_end) = (api.start[call], api.end(call));
    let (kernel_start, kernel_end) = (k.spans.start[i], k.spans.end(i));
    let queue = kernel_start.saturating_sub(call_end);
    let config = k
        .config
        .get(i)
        .and_then(|&x| k.configs.get(x as usize))
        .copied()
        .unwrap_or_default();
    let device = stream_of
        .get(i)
        .and_then(|&s| trace.streams.get(s as usize))
        .map_or(0, |s| s.device_id);
    let (queue_start, queue_duration) = if queue >= 0 {
        (Cell::Int(call_end), Cell::Int(queue))
    } else {
        (Cell::Empty, Cell::Empty)
    };
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
    ]
}
