//! Columnar event tables.
//!
//! Each table holds one kind of event for the whole trace, grouped by track (a
//! thread or a stream) and sorted by start time inside each track, so a track is
//! a `Range<u32>` into the table and a visible window is two binary searches.
//! Columns are plain vectors: nothing per event that is not needed.

use std::collections::HashMap;
use std::ops::Range;

use super::strings::StrId;

/// Nanoseconds on the session clock.
pub type Ns = i64;

/// A slice of a table: the events of one track.
pub type Span = Range<u32>;

/// Start, end and name: the columns every duration event has.
#[derive(Debug, Default, Clone)]
pub struct SpanColumns {
    pub start: Vec<Ns>,
    pub end: Vec<Ns>,
    pub name: Vec<StrId>,
}

impl SpanColumns {
    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    pub fn duration(&self, i: usize) -> Ns {
        // Saturating: a damaged report may hold any pair of timestamps.
        self.end[i].saturating_sub(self.start[i])
    }

    /// The events of `track` that may overlap `[from, to)`: those starting
    /// before `to` and, thanks to `max_duration`, possibly ending after `from`.
    /// `max_duration` is the longest event of the track (see [`Track`]).
    pub fn window(&self, track: &Span, from: Ns, to: Ns, max_duration: Ns) -> Span {
        let starts = &self.start[track.start as usize..track.end as usize];
        let lo = starts.partition_point(|&s| s < from.saturating_sub(max_duration));
        let hi = starts.partition_point(|&s| s < to);
        track.start + lo as u32..track.start + hi as u32
    }

    /// The events of `track` whose start lies in `[from, to)`.
    pub fn starting_in(&self, track: &Span, from: Ns, to: Ns) -> Span {
        let starts = &self.start[track.start as usize..track.end as usize];
        let lo = starts.partition_point(|&s| s < from);
        let hi = starts.partition_point(|&s| s < to);
        track.start + lo as u32..track.start + hi as u32
    }

    pub fn heap_bytes(&self) -> usize {
        self.start.capacity() * 8 + self.end.capacity() * 8 + self.name.capacity() * 4
    }
}

/// CUDA runtime and driver API calls (`CUPTI_ACTIVITY_KIND_RUNTIME`), by thread.
#[derive(Debug, Default)]
pub struct ApiCalls {
    pub spans: SpanColumns,
    pub correlation: Vec<u32>,
    pub return_value: Vec<i32>,
}

/// OS runtime library calls (`OSRT_API`), by thread.
#[derive(Debug, Default)]
pub struct OsCalls {
    pub spans: SpanColumns,
    pub return_value: Vec<i64>,
    /// nsys's event class: 27 is an ordinary OS runtime call (what `osrt_sum` counts).
    pub event_class: Vec<u8>,
}

/// How an NVTX event was made.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum NvtxKind {
    PushPop = 0,
    StartEnd = 1,
    Mark = 2,
}

/// An NVTX payload value (the union in `NVTX_EVENTS`).
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    Int(i64),
    Uint(u64),
    Float(f64),
    Json(String),
}

/// NVTX ranges and marks, by thread and domain.
#[derive(Debug, Default)]
pub struct NvtxRanges {
    pub spans: SpanColumns,
    pub kind: Vec<NvtxKind>,
    /// Nesting level inside its track, rebuilt from containment (0 = outermost).
    pub depth: Vec<u8>,
    /// ARGB; 0 when the range has no color of its own.
    pub color: Vec<u32>,
    pub category: Vec<u32>,
    /// Ranges nsys recorded without an end: their end is the last NVTX timestamp
    /// of the report, as `nsys stats` counts them.
    pub unended: Vec<bool>,
    /// The `NVTX_EVENTS` rowid: nsys's range id (`RangeId` in its NVTX
    /// projection reports), and the order nsys breaks ties in.
    pub row_id: Vec<i64>,
    /// Sparse columns: most ranges have neither.
    pub payload: HashMap<u32, Payload>,
    /// Start/end ranges that ended on another thread: index of that thread.
    pub end_thread: HashMap<u32, u32>,
    /// Names given to categories (`nvtxNameCategory`): (domain name, category) → name.
    pub category_names: HashMap<(String, u32), String>,
}

/// Launch attributes that kernels of one launch site share, stored once.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers_per_thread: u32,
    pub static_shared_memory: u32,
    pub dynamic_shared_memory: u32,
    pub local_memory_per_thread: u32,
    pub local_memory_total: u64,
    pub shared_memory_executed: u32,
    pub launch_type: u8,
    pub cache_config: u8,
    pub shared_memory_limit_config: u8,
}

/// Kernels (`CUPTI_ACTIVITY_KIND_KERNEL`), by stream. `spans.name` is the
/// demangled name, the one `nsys stats` reports.
#[derive(Debug, Default)]
pub struct Kernels {
    pub spans: SpanColumns,
    pub short_name: Vec<StrId>,
    pub mangled_name: Vec<StrId>,
    pub correlation: Vec<u32>,
    pub config: Vec<u32>,
    pub grid_id: Vec<u64>,
    /// 0 when the kernel was not launched from a CUDA graph.
    pub graph_node_id: Vec<u64>,
    pub configs: Vec<LaunchConfig>,
}

/// Memory copies (`CUPTI_ACTIVITY_KIND_MEMCPY`), by stream. `spans.name` is
/// nsys's operation label, e.g. `[CUDA memcpy Host-to-Device]`.
#[derive(Debug, Default)]
pub struct Memcpys {
    pub spans: SpanColumns,
    pub correlation: Vec<u32>,
    pub bytes: Vec<u64>,
    /// `ENUM_CUDA_MEMCPY_OPER` (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, ...).
    pub copy_kind: Vec<u8>,
    /// `ENUM_CUDA_MEM_KIND` (0 Pageable, 1 Pinned, 2 Device, 4 Managed, ...).
    pub src_kind: Vec<u8>,
    pub dst_kind: Vec<u8>,
    /// Whether the report's `ENUM_CUDA_MEMCPY_OPER` names the copy kind
    /// (`nsys stats` leaves the other copies out of its summaries).
    pub kind_known: Vec<bool>,
    /// `srcDeviceId` / `dstDeviceId`, -1 where the report leaves them NULL
    /// (`nsys analyze cuda_memcpy_sync` skips copies within one device).
    pub src_device: Vec<i32>,
    pub dst_device: Vec<i32>,
    /// `greenContextId`, 0 when none (the rules print 0 and NULL as an empty cell).
    pub green_context: Vec<u32>,
}

/// Memory sets (`CUPTI_ACTIVITY_KIND_MEMSET`), by stream.
#[derive(Debug, Default)]
pub struct Memsets {
    pub spans: SpanColumns,
    pub correlation: Vec<u32>,
    pub bytes: Vec<u64>,
    pub value: Vec<u32>,
    pub mem_kind: Vec<u8>,
    /// `greenContextId`, 0 when none.
    pub green_context: Vec<u32>,
}

/// Synchronization records (`CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`), by stream.
/// `spans.name` is the sync type's label.
#[derive(Debug, Default)]
pub struct Syncs {
    pub spans: SpanColumns,
    pub correlation: Vec<u32>,
    /// `ENUM_CUPTI_SYNC_TYPE`: 1 event sync, 2 stream wait event, 3 stream sync, 4 context sync.
    pub sync_type: Vec<u8>,
    pub event_id: Vec<u32>,
}

/// Whole-graph executions on a stream (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE`).
#[derive(Debug, Default)]
pub struct GraphExecs {
    pub spans: SpanColumns,
    pub correlation: Vec<u32>,
    pub graph_id: Vec<u32>,
    pub graph_exec_id: Vec<u32>,
}

/// CPU-side CUDA graph records (`CUDA_GRAPH_NODE_EVENTS`, `CUDA_GRAPH_EVENTS`):
/// few, kept row by row.
#[derive(Clone, Debug)]
pub struct GraphRecord {
    pub start: Ns,
    pub end: Ns,
    pub thread: u32,
    pub name: StrId,
    /// The node id (node records) or graph id (graph records).
    pub id: u64,
    pub original_id: Option<u64>,
    pub is_node: bool,
}

/// A CUDA event record (`CUPTI_ACTIVITY_KIND_CUDA_EVENT`): no timestamps, only
/// which API call recorded which event on which stream.
#[derive(Clone, Debug)]
pub struct CudaEventRecord {
    pub stream: u32,
    pub correlation: u32,
    pub event_id: u32,
}

/// One sampled GPU metric (`GPU_METRICS`), e.g. `SMs Active [Throughput %]`.
#[derive(Debug, Default)]
pub struct MetricSeries {
    /// Index into `Trace::gpus`; `u32::MAX` when the report lists no GPU with
    /// the sampled device's id.
    pub gpu: u32,
    /// The sampled device (the low byte of the metric's `typeId`).
    pub device_id: u32,
    /// Position of the metric in `TARGET_INFO_GPU_METRICS` (nsys's order).
    pub order: usize,
    pub name: StrId,
    pub timestamp: Vec<Ns>,
    pub value: Vec<f32>,
}

impl MetricSeries {
    pub fn max_value(&self) -> f32 {
        self.value.iter().copied().fold(0.0, f32::max)
    }
}
