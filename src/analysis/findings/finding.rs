//! What a finding is: its kind, severity, span, message and fix
//! ([`Finding`]), and the thresholds the detectors judge by. The vocabulary
//! every detector writes in, kept apart from `mod.rs`, which runs them.

use crate::model::{EventId, Ns};

/// What a finding is about. The names ([`FindingKind::name`]) are stable: tests,
/// JSON output and the viewer use them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    RangeEndsBeforeGpuWork,
    RangeWaitsOnEarlierWork,
    SyncInLoop,
    AllocInLoop,
    WarmUpIncluded,
    ApiError,
    LaunchBound,
    PageableMemcpy,
    SyncMemcpy,
    SyncMemset,
    GpuIdleGap,
    LowGpuUtilization,
    CpuBound,
}

impl FindingKind {
    pub const ALL: [FindingKind; 13] = [
        FindingKind::RangeEndsBeforeGpuWork,
        FindingKind::RangeWaitsOnEarlierWork,
        FindingKind::SyncInLoop,
        FindingKind::AllocInLoop,
        FindingKind::WarmUpIncluded,
        FindingKind::ApiError,
        FindingKind::LaunchBound,
        FindingKind::PageableMemcpy,
        FindingKind::SyncMemcpy,
        FindingKind::SyncMemset,
        FindingKind::GpuIdleGap,
        FindingKind::LowGpuUtilization,
        FindingKind::CpuBound,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FindingKind::RangeEndsBeforeGpuWork => "range-ends-before-gpu-work",
            FindingKind::RangeWaitsOnEarlierWork => "range-waits-on-earlier-work",
            FindingKind::SyncInLoop => "sync-in-loop",
            FindingKind::AllocInLoop => "alloc-in-loop",
            FindingKind::WarmUpIncluded => "warm-up-included",
            FindingKind::ApiError => "api-error",
            FindingKind::LaunchBound => "launch-bound",
            FindingKind::PageableMemcpy => "pageable-memcpy",
            FindingKind::SyncMemcpy => "sync-memcpy",
            FindingKind::SyncMemset => "sync-memset",
            FindingKind::GpuIdleGap => "gpu-idle-gap",
            FindingKind::LowGpuUtilization => "low-gpu-utilization",
            FindingKind::CpuBound => "cpu-bound",
        }
    }

    pub fn from_name(name: &str) -> Option<FindingKind> {
        FindingKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One diagnosed problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    pub severity: Severity,
    /// The span it concerns, in report nanoseconds (for a finding about an NVTX
    /// range: that range's own start and end).
    pub start: Ns,
    pub end: Ns,
    /// The NVTX range it is about or falls in, as a path (`outer/inner`).
    pub range: Option<String>,
    /// The events that prove it, to highlight.
    pub events: Vec<EventId>,
    /// One line, with the numbers.
    pub message: String,
    /// Why it matters and how to fix it.
    pub fix: &'static str,
}

/// Every threshold a detector uses, with nsys's defaults for nsys's rules.
/// Override any field: `Thresholds { gap_ms: 100.0, ..Thresholds::default() }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    /// `range-ends-before-gpu-work`: the GPU work must outlast the range by at
    /// least this many ns (timer noise is below a microsecond) ...
    pub overhang_min_ns: Ns,
    /// ... and at least this share of the range's GPU time must lie after the
    /// range's end, so that the range measured the launch, not the work (a
    /// warm-up range whose last kernel spills over a little is not a mistake).
    pub overhang_min_share: f64,
    /// `range-waits-on-earlier-work`: the sync must wait at least this long for
    /// work launched before the range began.
    pub earlier_wait_min_ns: Ns,
    /// `warm-up-included`: a range name repeated at least this often (same
    /// thread, same parent) ...
    pub warmup_min_instances: usize,
    /// ... whose first instance lasts more than this many times the median of
    /// the others ...
    pub warmup_ratio: f64,
    /// ... and at least this much longer (one-time costs below that are noise
    /// next to launch jitter) ...
    pub warmup_min_excess_ns: Ns,
    /// ... at least this share of the excess being one-time CUDA work
    /// (module loading, context creation, allocation, JIT) the later
    /// instances do not pay.
    pub warmup_min_one_time_share: f64,
    /// `sync-in-loop`: at least this many syncs in a row on one thread ...
    pub sync_loop_min_syncs: usize,
    /// ... each within this long of the previous one ...
    pub sync_loop_max_interval_ns: Ns,
    /// ... with at most this much GPU time launched between two of them (more
    /// is substantial work, which a sync may well wait for) ...
    pub sync_loop_max_work_ns: Ns,
    /// ... while the GPU is busy less than this share of the run ...
    pub sync_loop_max_busy_share: f64,
    /// ... and the syncs hold the thread at least this share of it: syncs that return at
    /// once (on events long done) are not what keeps the GPU idle.
    pub sync_loop_min_wait_share: f64,
    /// `alloc-in-loop`: at least this many allocations freed before the next
    /// one, on one thread, with GPU work launched between each two ...
    pub alloc_loop_min_count: usize,
    /// ... each within this long of the previous one.
    pub alloc_loop_max_interval_ns: Ns,
    /// `cpu-bound`: a range that launches at least this many kernels, with
    /// the GPU busy less than `launch_bound_max_busy_share` and host work
    /// outside CUDA the main cause of the idle time.
    pub cpu_bound_min_kernels: usize,
    /// `launch-bound`: a range that launches at least this many kernels ...
    pub launch_bound_min_kernels: usize,
    /// ... whose median kernel is shorter than this ...
    pub launch_bound_max_kernel_ns: Ns,
    /// ... and that keeps the GPU busy less than this share of the time from
    /// its first kernel's start to its last kernel's end.
    pub launch_bound_max_busy_share: f64,
    /// `gpu-idle-gap`: nsys `gpu_gaps`' `gap=` (ms).
    pub gap_ms: f64,
    /// `low-gpu-utilization`: nsys `gpu_time_util`'s `chunks=` and `threshold=` (%).
    pub util_chunks: u32,
    pub util_threshold: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            overhang_min_ns: 1_000,
            overhang_min_share: 0.5,
            earlier_wait_min_ns: 1_000,
            warmup_min_instances: 3,
            warmup_ratio: 2.0,
            warmup_min_excess_ns: 20_000,
            warmup_min_one_time_share: 0.5,
            sync_loop_min_syncs: 10,
            sync_loop_max_interval_ns: 1_000_000,
            sync_loop_max_work_ns: 100_000,
            sync_loop_max_busy_share: 0.5,
            sync_loop_min_wait_share: 0.25,
            alloc_loop_min_count: 3,
            alloc_loop_max_interval_ns: 1_000_000_000,
            cpu_bound_min_kernels: 10,
            launch_bound_min_kernels: 20,
            launch_bound_max_kernel_ns: 20_000,
            launch_bound_max_busy_share: 0.5,
            gap_ms: 500.0,
            util_chunks: 30,
            util_threshold: 50.0,
        }
    }
}

/// The span of the GPU work an NVTX range launched: its row in
/// `Trace::nvtx`, the work's first start and last end.
pub type RangeWork = (u32, Ns, Ns);
