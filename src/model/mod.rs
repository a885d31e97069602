//! The trace model: what a report holds, in memory, ready for analysis and views.
//!
//! Built once by the loader, then read-only. Events live in columnar tables
//! ([`events`]); processes, threads, GPUs and streams name slices of them.

pub mod column;
pub mod columns;
mod correlation;
pub mod events;
pub mod grown_correlation;
mod ids;
pub mod metrics;
pub mod nsys;
pub mod peaks;
pub mod ranks;
pub mod sample_stacks;
pub mod samples;
mod strings;
pub mod track;

pub use column::Column;
pub use columns::{IdColumn, SparseColumn};
pub use correlation::{
    CorrelationIndex, GpuOp, GpuOpKind, GpuOps, GrownView, NO_CORRELATION, ProcessCorrelation,
    TrackIds,
};
pub use events::*;
pub use ids::{EventId, EventKind, EventKinds, Lineage};
pub use metrics::{KernelMetrics, MetricDef, MetricSource};
pub use ranks::{Alignment, Rank, Ranks};
pub use sample_stacks::SampleStacks;
pub use samples::{
    CpuSampling, Frame, FrameId, FrameKind, SampleSource, SampleStack, SampleState, SchedState,
    StackId, StackTree, ThreadSamples, ThreadSched,
};
pub use strings::{StrId, Strings};
pub use track::{RowOwners, Run, SAMPLED_STARTS_STRIDE, Track};

use std::sync::Arc;

/// Index into [`Trace::threads`].
pub type ThreadIdx = u32;
/// Index into [`Trace::streams`].
pub type StreamIdx = u32;

#[derive(Debug, Clone)]
pub struct Process {
    pub pid: u32,
    pub name: String,
    pub threads: Vec<ThreadIdx>,
}

/// The NVTX ranges of one thread in one domain.
#[derive(Debug, Clone)]
pub struct NvtxTrack {
    /// The domain's name, empty for the default domain.
    pub domain: String,
    pub track: Track,
}

/// The name of the NVTX domain nsys's Python sampler writes its samples in (one mark each):
/// the thread's CPU samples ([`samples`]), which the loader leaves out of the NVTX ranges.
pub const PYTHON_SAMPLING_DOMAIN: &str = "Python Periodic Sampling";

#[derive(Debug, Clone)]
pub struct Thread {
    pub global_tid: i64,
    pub pid: u32,
    pub tid: u32,
    pub name: String,
    /// The scheduling priority `ThreadNames` records (`T-Pri` in nsys's traces).
    pub priority: Option<i32>,
    pub process: u32,
    pub cuda_api: Track,
    pub osrt: Track,
    pub nvtx: Vec<NvtxTrack>,
}

impl Thread {
    pub fn is_empty(&self) -> bool {
        self.cuda_api.is_empty()
            && self.osrt.is_empty()
            && self.nvtx.iter().all(|n| n.track.is_empty())
    }

    /// Whether nsys started this thread inside the profiled process: its sampler and its link
    /// to the daemon (`[NSys]`, `[NSys Comms]`, `NSys PySampling`). Their samples and switches
    /// are the profiler's own cost, not the program's.
    pub fn is_profilers_own(&self) -> bool {
        self.name.starts_with("[NSys") || self.name.starts_with("NSys ")
    }
}

#[derive(Debug, Clone, Default)]
pub struct Gpu {
    pub device_id: u32,
    pub name: String,
    pub sm_count: u32,
    pub compute_capability: (u32, u32),
    pub memory_bytes: u64,
    pub memory_bandwidth: u64,
    pub clock_rate_khz: u64,
    pub l2_cache_bytes: u64,
    pub bus_location: String,
    /// Per-SM and per-block limits from `TARGET_INFO_GPU`, for theoretical
    /// occupancy; 0 where the report does not say (older nsys).
    pub limits: GpuLimits,
    pub streams: Vec<StreamIdx>,
    pub metrics: Vec<u32>,
}

/// A device's occupancy-relevant limits as `TARGET_INFO_GPU` records them
/// (0 = not recorded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuLimits {
    pub warp_size: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
    pub registers_per_sm: u32,
    pub registers_per_block: u32,
    pub shared_memory_per_sm: u32,
    /// The most shared memory one block may opt in to.
    pub shared_memory_per_block_optin: u32,
}

/// One CUDA stream of one context of one device, and the GPU work run on it.
#[derive(Debug, Clone, Default)]
pub struct Stream {
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub pid: u32,
    pub priority: i32,
    pub kernels: Track,
    pub memcpys: Track,
    pub memsets: Track,
    pub syncs: Track,
    pub graphs: Track,
}

impl Stream {
    /// The tracks of the work the stream ran, with their kind: kernels,
    /// copies and sets (not its sync records or graph launches), in that
    /// order.
    pub fn work_tracks(&self) -> [(GpuOpKind, &Track); 3] {
        [
            (GpuOpKind::Kernel, &self.kernels),
            (GpuOpKind::Memcpy, &self.memcpys),
            (GpuOpKind::Memset, &self.memsets),
        ]
    }

    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
            && self.memcpys.is_empty()
            && self.memsets.is_empty()
            && self.syncs.is_empty()
            && self.graphs.is_empty()
    }
}

/// Facts about the report itself.
#[derive(Debug, Clone, Default)]
pub struct ReportInfo {
    pub path: String,
    pub nsys_version: Option<String>,
    pub schema_version: Option<String>,
    /// The earliest and latest timestamps of any event.
    pub time_range: (Ns, Ns),
    /// When the session began, in nanoseconds since the Unix epoch (UTC): the report's time 0
    /// on the wall clock. Reports of one host share it exactly; across hosts, NTP's error.
    pub session_start_utc_ns: Option<i64>,
    /// The name of the machine it was recorded on.
    pub host: Option<String>,
    /// The tables still to be read when this is a snapshot of a report
    /// being opened (see [`Trace::share`]); empty once the whole report is in.
    pub still_loading: Vec<&'static str>,
    /// What nsys itself logged while recording (`DIAGNOSTIC_EVENT`), each
    /// message once: errors and warnings first, then in the order logged.
    pub diagnostics: Vec<Diagnostic>,
    /// Whether [`Trace::cpu`] holds the CPU samples and scheduling nsys
    /// recorded, or nsys recorded none, or the load left them to be read later.
    pub cpu_sampling: CpuSamplingRead,
    /// What the file looked like when the load read it (its size, times and change counter,
    /// as the loader words them): a later read of the same report (its CPU samples) checks the
    /// file is still that one. None for a trace not loaded from a file.
    pub read_as: Option<String>,
}

/// Whether a trace's CPU samples and scheduling ([`Trace::cpu`]) are what its
/// report holds: a view or report tells "not read yet" from "nsys did not sample".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CpuSamplingRead {
    /// Read: [`Trace::cpu`] holds all the report's (a trace made otherwise
    /// than by a load holds what it was given).
    #[default]
    Read,
    /// The report has none: nsys did not sample (no `COMPOSITE_EVENTS`,
    /// no `SCHED_EVENTS`).
    NotRecorded,
    /// nsys sampled, but the load was asked not to read them
    /// (`loader::LoadOptions`): [`Trace::cpu`] is empty until
    /// `loader::read_cpu_sampling` gives the trace with them.
    NotRead,
}

/// One message nsys logged while recording ("No CUDA events collected. Does
/// the process use CUDA?"), however many times it was logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// nsys's severity level: 0 unknown, 1 info, 2 warning, 3 error, 4 verbose.
    pub severity: i64,
    /// Its name as the report labels it (`ENUM_DIAGNOSTIC_SEVERITY_LEVEL`): "Warning".
    pub severity_label: String,
    /// The message, its whitespace runs made single spaces (nsys writes tabs).
    pub text: String,
    /// How many times it was logged.
    pub count: usize,
}

impl Diagnostic {
    /// A warning or an error (not information).
    pub fn is_warning(&self) -> bool {
        matches!(self.severity, 2 | 3)
    }
}

/// A loaded report.
///
/// The event tables sit behind `Arc`: a report being opened is shown as it is
/// read ([`Trace::share`]), each table from the moment it is whole, without
/// copying the tables read so far. An event's index never changes once its
/// table is shown.
#[derive(Debug, Default)]
pub struct Trace {
    pub info: ReportInfo,
    pub strings: Strings,
    pub processes: Vec<Process>,
    pub threads: Vec<Thread>,
    pub gpus: Vec<Gpu>,
    pub streams: Vec<Stream>,
    pub cuda_api: Arc<ApiCalls>,
    pub osrt: Arc<OsCalls>,
    pub nvtx: Arc<NvtxRanges>,
    pub kernels: Arc<Kernels>,
    pub memcpys: Arc<Memcpys>,
    pub memsets: Arc<Memsets>,
    pub syncs: Arc<Syncs>,
    pub graph_execs: Arc<GraphExecs>,
    pub graph_records: Arc<Vec<GraphRecord>>,
    pub cuda_events: Arc<Vec<CudaEventRecord>>,
    pub metrics: Arc<Vec<MetricSeries>>,
    /// Hardware metrics per kernel instance stored in the report (a Sightline
    /// capture's counters); other sources are joined in analysis.
    pub kernel_metrics: Arc<Vec<KernelMetrics>>,
    pub correlation: Arc<CorrelationIndex>,
    /// CPU samples (native and Python) and thread scheduling, when nsys
    /// sampled ([`samples`]); empty otherwise.
    pub cpu: Arc<CpuSampling>,
    /// What the loader skipped or repaired, for the user to see.
    pub warnings: Vec<String>,
    /// Which state of a growing report this is (default for any other).
    pub lineage: Lineage,
    /// [`Trace::activity_span`], worked out on first use: a scan of every
    /// GPU operation and NVTX range (10 ms at 10M events), which the loader
    /// does on its thread before it hands a trace over, not the window.
    pub activity: std::sync::OnceLock<Option<(Ns, Ns)>>,
}

impl Trace {
    /// This trace as it stands, sharing its event tables: what a loader
    /// publishes while it goes on reading (cheap: the small parts are copied,
    /// the tables are not). `still_loading` names what is not read yet.
    pub fn share(&self, still_loading: Vec<&'static str>) -> Trace {
        Trace {
            info: ReportInfo {
                still_loading,
                ..self.info.clone()
            },
            strings: self.strings.clone(),
            processes: self.processes.clone(),
            threads: self.threads.clone(),
            gpus: self.gpus.clone(),
            streams: self.streams.clone(),
            cuda_api: self.cuda_api.clone(),
            osrt: self.osrt.clone(),
            nvtx: self.nvtx.clone(),
            kernels: self.kernels.clone(),
            memcpys: self.memcpys.clone(),
            memsets: self.memsets.clone(),
            syncs: self.syncs.clone(),
            graph_execs: self.graph_execs.clone(),
            graph_records: self.graph_records.clone(),
            cuda_events: self.cuda_events.clone(),
            metrics: self.metrics.clone(),
            kernel_metrics: self.kernel_metrics.clone(),
            correlation: self.correlation.clone(),
            cpu: self.cpu.clone(),
            warnings: self.warnings.clone(),
            lineage: self.lineage.clone(),
            activity: Default::default(),
        }
    }

    /// Whether the report's CPU samples and scheduling are still to be read
    /// (see [`CpuSamplingRead::NotRead`]).
    pub fn cpu_sampling_not_read(&self) -> bool {
        self.info.cpu_sampling == CpuSamplingRead::NotRead
    }

    /// Whether the whole report is in (not a snapshot of one being opened).
    pub fn is_complete(&self) -> bool {
        self.info.still_loading.is_empty()
    }

    pub fn name(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    /// From the first start to the last end of the GPU work (kernels, copies,
    /// sets) and the NVTX ranges: where a report's interest lies. A session
    /// is often mostly start-up and tear-down around a few milliseconds of
    /// work. None when the report has neither.
    pub fn activity_span(&self) -> Option<(Ns, Ns)> {
        *self.activity.get_or_init(|| self.scan_activity())
    }

    fn scan_activity(&self) -> Option<(Ns, Ns)> {
        let tables = [
            &self.kernels.spans,
            &self.memcpys.spans,
            &self.memsets.spans,
            &self.nvtx.spans,
        ];
        let mut span: Option<(Ns, Ns)> = None;
        for t in tables {
            let Some((lo, hi)) = t.bounds() else {
                continue;
            };
            span = Some(span.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
        span.filter(|(a, b)| b > a)
    }

    /// Events of every kind, the count the load benchmarks divide by.
    pub fn event_count(&self) -> usize {
        self.cuda_api.spans.len()
            + self.osrt.spans.len()
            + self.nvtx.spans.len()
            + self.kernels.spans.len()
            + self.memcpys.spans.len()
            + self.memsets.spans.len()
            + self.syncs.spans.len()
            + self.graph_execs.spans.len()
            + self.graph_records.len()
            + self.cuda_events.len()
            + self
                .metrics
                .iter()
                .map(|m| m.timestamp.len())
                .sum::<usize>()
    }

    /// The thread a CUDA API call was made on.
    pub fn thread_of_api_call(&self, index: u32) -> Option<ThreadIdx> {
        self.threads
            .iter()
            .position(|t| t.cuda_api.contains(index))
            .map(|i| i as ThreadIdx)
    }

    /// The stream a GPU operation ran on.
    pub fn stream_of(&self, op: GpuOp) -> Option<StreamIdx> {
        self.streams
            .iter()
            .position(|s| {
                let track = match op.kind {
                    GpuOpKind::Kernel => &s.kernels,
                    GpuOpKind::Memcpy => &s.memcpys,
                    GpuOpKind::Memset => &s.memsets,
                    GpuOpKind::Sync => &s.syncs,
                };
                track.contains(op.index)
            })
            .map(|i| i as StreamIdx)
    }

    /// Span columns of a GPU operation kind.
    pub fn gpu_spans(&self, kind: GpuOpKind) -> &SpanColumns {
        match kind {
            GpuOpKind::Kernel => &self.kernels.spans,
            GpuOpKind::Memcpy => &self.memcpys.spans,
            GpuOpKind::Memset => &self.memsets.spans,
            GpuOpKind::Sync => &self.syncs.spans,
        }
    }

    /// Approximate resident bytes of the model (the columns and indexes).
    pub fn heap_bytes(&self) -> usize {
        let k = &self.kernels;
        let m = &self.memcpys;
        let s = &self.memsets;
        self.strings.heap_bytes()
            + self.cuda_api.spans.heap_bytes()
            + self.cuda_api.correlation.capacity() * 4
            + self.cuda_api.return_value.heap_bytes()
            + self.osrt.spans.heap_bytes()
            + self.osrt.return_value.capacity() * 9
            + self.nvtx.spans.heap_bytes()
            + self.nvtx.spans.len() * 11
            + k.spans.heap_bytes()
            + k.names.heap_bytes()
            + k.correlation.capacity() * 4
            + k.config.capacity() * 4
            + k.grid_id.heap_bytes()
            + k.graph_node_id.heap_bytes()
            + k.configs.capacity() * std::mem::size_of::<LaunchConfig>()
            + m.spans.heap_bytes()
            + m.spans.len() * (4 + 8 + 3)
            + s.spans.heap_bytes()
            + s.spans.len() * (4 + 8 + 4 + 1)
            + self.syncs.spans.heap_bytes()
            + self.syncs.spans.len() * 9
            + self.graph_execs.spans.heap_bytes()
            + self.graph_execs.spans.len() * 12
            + self
                .metrics
                .iter()
                .map(|m| m.timestamp.capacity() * 12)
                .sum::<usize>()
            + self.correlation.heap_bytes()
            + self.cpu.heap_bytes()
            + self
                .tracks()
                .flat_map(|t| t.runs())
                .map(|r| r.sampled_starts.len() * 8)
                .sum::<usize>()
    }

    /// Every track of every stream and thread.
    fn tracks(&self) -> impl Iterator<Item = &Track> {
        let gpu = self
            .streams
            .iter()
            .flat_map(|s| [&s.kernels, &s.memcpys, &s.memsets, &s.syncs, &s.graphs]);
        let cpu = self.threads.iter().flat_map(|t| {
            [&t.cuda_api, &t.osrt]
                .into_iter()
                .chain(t.nvtx.iter().map(|n| &n.track))
        });
        gpu.chain(cpu)
    }
}
