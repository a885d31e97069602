//! The `nsys stats` summary reports, computed from the trace model.
//!
//! nsys's reports (and one of ours), whose CSV output equals nsys 2025.3's byte for byte (the rules
//! are in `docs/nsys-stats-semantics.md`), over the whole trace or any time range.
//!
//! # Time ranges
//! A range is half-open, `[start, end)`, in session nanoseconds, and an event
//! belongs to it when the event's **start** lies inside it; how long the event
//! lasts does not matter. So N disjoint ranges that cover the trace partition
//! every report's counts and totals. For the two reports that combine events:
//! * `cuda_api_gpu_sum` is a union of API calls, kernels and memory operations;
//!   each of them counts by its own start.
//! * `cuda_kern_exec_sum` pairs each kernel with the API call that launched it;
//!   a pair counts when the **API call** starts in the range (the kernel may run
//!   after the range ends).

use super::gpu_reports::KernelNaming;
use super::{format, gpu_reports, kernels, projection, reports, traces};
use crate::model::{Ns, NvtxKind, Trace};

/// A half-open time span `[start, end)` in session nanoseconds. An event belongs
/// to a range when its start lies inside it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeRange {
    pub start: Ns,
    pub end: Ns,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Report {
    CudaApiSum,
    CudaGpuKernSum,
    CudaGpuMemTimeSum,
    CudaGpuMemSizeSum,
    NvtxSum,
    OsrtSum,
    CudaApiGpuSum,
    CudaKernExecSum,
    NvtxPushpopSum,
    NvtxStartendSum,
    NvtxGpuProjSum,
    NvtxGpuProjTrace,
    NvtxKernSum,
    NvtxPushpopTrace,
    CudaGpuSum,
    CudaGpuKernGbSum,
    CudaGpuTrace,
    CudaApiTrace,
    CudaKernExecTrace,
    UmSum,
    /// `cuda_gpu_kern_sum:base`: kernels by short name.
    CudaGpuKernSumBase,
    /// `cuda_gpu_kern_sum:mangled`: kernels by mangled name.
    CudaGpuKernSumMangled,
    /// `cuda_gpu_kern_sum:nvtx-name`: kernels by `innermost NVTX range/name`.
    CudaGpuKernSumNvtxName,
    /// Ours: kernels per launch configuration, with theoretical occupancy.
    KernelLaunchSum,
}

impl Report {
    /// The reports `nsys stats` computes by default, and the range panel shows.
    pub const ALL: [Report; 8] = [
        Report::CudaApiSum,
        Report::CudaGpuKernSum,
        Report::CudaGpuMemTimeSum,
        Report::CudaGpuMemSizeSum,
        Report::NvtxSum,
        Report::OsrtSum,
        Report::CudaApiGpuSum,
        Report::CudaKernExecSum,
    ];

    /// Every report `sightline stats --report` knows.
    pub const EVERY: [Report; 24] = [
        Report::CudaApiSum,
        Report::CudaGpuKernSum,
        Report::CudaGpuMemTimeSum,
        Report::CudaGpuMemSizeSum,
        Report::NvtxSum,
        Report::OsrtSum,
        Report::CudaApiGpuSum,
        Report::CudaKernExecSum,
        Report::NvtxPushpopSum,
        Report::NvtxStartendSum,
        Report::NvtxGpuProjSum,
        Report::NvtxGpuProjTrace,
        Report::NvtxKernSum,
        Report::NvtxPushpopTrace,
        Report::CudaGpuSum,
        Report::CudaGpuKernGbSum,
        Report::CudaGpuTrace,
        Report::CudaApiTrace,
        Report::CudaKernExecTrace,
        Report::UmSum,
        Report::CudaGpuKernSumBase,
        Report::CudaGpuKernSumMangled,
        Report::CudaGpuKernSumNvtxName,
        Report::KernelLaunchSum,
    ];

    /// The column of this report's tables that holds kernel names as
    /// `cuda_gpu_kern_sum` names them (the demangled name), for views that
    /// link a row to its kernel. A role known from the report, not read from
    /// the header text: the headers differ ("Name", "Kernel Name").
    pub fn kernel_name_column(self, table: &Table) -> Option<usize> {
        match self {
            // Both reports end with the kernel's name.
            Report::CudaGpuKernSum | Report::CudaKernExecSum => table.columns.len().checked_sub(1),
            _ => None,
        }
    }

    /// The report name as `--report` takes it, nsys's spelling: e.g.
    /// `cuda_gpu_kern_sum`, or `cuda_gpu_kern_sum:base` for a variant.
    pub fn name(self) -> &'static str {
        match self {
            Report::CudaApiSum => "cuda_api_sum",
            Report::CudaGpuKernSum => "cuda_gpu_kern_sum",
            Report::CudaGpuMemTimeSum => "cuda_gpu_mem_time_sum",
            Report::CudaGpuMemSizeSum => "cuda_gpu_mem_size_sum",
            Report::NvtxSum => "nvtx_sum",
            Report::OsrtSum => "osrt_sum",
            Report::CudaApiGpuSum => "cuda_api_gpu_sum",
            Report::CudaKernExecSum => "cuda_kern_exec_sum",
            Report::NvtxPushpopSum => "nvtx_pushpop_sum",
            Report::NvtxStartendSum => "nvtx_startend_sum",
            Report::NvtxGpuProjSum => "nvtx_gpu_proj_sum",
            Report::NvtxGpuProjTrace => "nvtx_gpu_proj_trace",
            Report::NvtxKernSum => "nvtx_kern_sum",
            Report::NvtxPushpopTrace => "nvtx_pushpop_trace",
            Report::CudaGpuSum => "cuda_gpu_sum",
            Report::CudaGpuKernGbSum => "cuda_gpu_kern_gb_sum",
            Report::CudaGpuTrace => "cuda_gpu_trace",
            Report::CudaApiTrace => "cuda_api_trace",
            Report::CudaKernExecTrace => "cuda_kern_exec_trace",
            Report::UmSum => "um_sum",
            Report::CudaGpuKernSumBase => "cuda_gpu_kern_sum:base",
            Report::CudaGpuKernSumMangled => "cuda_gpu_kern_sum:mangled",
            Report::CudaGpuKernSumNvtxName => "cuda_gpu_kern_sum:nvtx-name",
            Report::KernelLaunchSum => "kernel_launch_sum",
        }
    }

    /// The name in output file names: nsys writes `PREFIX_cuda_gpu_kern_sum_base.csv`
    /// for `cuda_gpu_kern_sum:base` (each `:` becomes `_`).
    pub fn file_stem(self) -> String {
        self.name().replace(':', "_")
    }

    pub fn from_name(name: &str) -> Option<Report> {
        Report::EVERY.into_iter().find(|r| r.name() == name)
    }

    /// A title for people, e.g. "CUDA GPU Kernel Summary".
    pub fn title(self) -> &'static str {
        match self {
            Report::CudaApiSum => "CUDA API Summary",
            Report::CudaGpuKernSum => "CUDA GPU Kernel Summary",
            Report::CudaGpuMemTimeSum => "CUDA GPU MemOps Summary (by Time)",
            Report::CudaGpuMemSizeSum => "CUDA GPU MemOps Summary (by Size)",
            Report::NvtxSum => "NVTX Range Summary",
            Report::OsrtSum => "OS Runtime Summary",
            Report::CudaApiGpuSum => "CUDA Summary (API/Kernels/MemOps)",
            Report::CudaKernExecSum => "CUDA Kernel Launch & Exec Time Summary",
            Report::NvtxPushpopSum => "NVTX Push/Pop Range Summary",
            Report::NvtxStartendSum => "NVTX Start/End Range Summary",
            Report::NvtxGpuProjSum => "NVTX GPU Projection Summary",
            Report::NvtxGpuProjTrace => "NVTX GPU Projection Trace",
            Report::NvtxKernSum => "NVTX Range Kernel Summary",
            Report::NvtxPushpopTrace => "NVTX Push/Pop Range Trace",
            Report::CudaGpuSum => "CUDA GPU Summary (Kernels/MemOps)",
            Report::CudaGpuKernGbSum => "CUDA GPU Kernel/Grid/Block Summary",
            Report::CudaGpuTrace => "CUDA GPU Trace",
            Report::CudaApiTrace => "CUDA API Trace",
            Report::CudaKernExecTrace => "CUDA Kernel Launch & Exec Time Trace",
            Report::UmSum => "Unified Memory Analysis Summary",
            Report::CudaGpuKernSumBase => "CUDA GPU Kernel Summary (base names)",
            Report::CudaGpuKernSumMangled => "CUDA GPU Kernel Summary (mangled names)",
            Report::CudaGpuKernSumNvtxName => "CUDA GPU Kernel Summary (NVTX range/name)",
            Report::KernelLaunchSum => "Kernel Launch Configuration Summary",
        }
    }
}

/// One cell of a report, printed exactly as nsys prints it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// SQL NULL: prints nothing.
    Empty,
    Int(i64),
    Text(String),
    /// A value nsys rounds with SQLite `round(x, 1)`: prints one decimal, exact
    /// binary ties away from zero (`21708.25` → `21708.3`).
    Round1(f64),
    /// A byte quantity in a `(MB)` column: prints bytes / 1e6 with 3 decimals.
    Megabytes(f64),
}

impl Cell {
    /// The numeric value, for sorting (text and empty cells have none).
    /// `Round1` gives the unrounded value: it sorts the same, and costs nothing.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Int(v) => Some(*v as f64),
            Cell::Round1(v) => Some(*v),
            Cell::Megabytes(bytes) => Some(bytes / 1e6),
            Cell::Empty | Cell::Text(_) => None,
        }
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Empty => Ok(()),
            Cell::Int(v) => write!(f, "{v}"),
            Cell::Text(t) => f.write_str(t),
            Cell::Round1(v) => f.write_str(&format::round1_text(*v)),
            Cell::Megabytes(bytes) => f.write_str(&format::megabytes_text(*bytes)),
        }
    }
}

/// A computed report: column names exactly as nsys's CSV header, rows in nsys's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// The table as nsys writes it with `--format csv`: a header line, then one
    /// line per row, fields quoted only when needed, LF line ends. A table with no
    /// rows is the empty string, as nsys writes an empty file then.
    pub fn to_csv(&self) -> String {
        format::to_csv(self)
    }

    /// An aligned table for people, like `nsys stats`'s default output.
    pub fn to_text(&self) -> String {
        format::to_text(self)
    }

    /// Whether column `c` holds numbers (and maybe empty cells), to be
    /// right-aligned so digits line up.
    pub fn is_numeric_column(&self, c: usize) -> bool {
        let cells = || self.rows.iter().filter_map(|row| row.get(c));
        cells().all(|v| !matches!(v, Cell::Text(_))) && cells().any(|v| v.as_f64().is_some())
    }
}

/// Computes `report` over the events that start in `range` (all events for `None`).
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use sightline::analysis::stats::{Report, TimeRange, compute};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sync_timing.sqlite");
/// let trace = sightline::loader::load(path.as_ref(), &mut |_| {}, &AtomicBool::new(false))?;
/// let kernels = compute(&trace, Report::CudaGpuKernSum, None);
/// assert_eq!(kernels.columns[2], "Instances");
/// assert!(kernels.to_csv().contains("add2_kernel"));
///
/// // Two halves of the trace add up to the whole.
/// let (start, end) = trace.info.time_range;
/// let middle = start + (end - start) / 2;
/// let count = |range| -> usize {
///     compute(&trace, Report::CudaApiSum, Some(range))
///         .rows
///         .iter()
///         .map(|row| row[2].to_string().parse::<usize>().unwrap_or(0))
///         .sum()
/// };
/// let first = count(TimeRange { start, end: middle });
/// let second = count(TimeRange { start: middle, end: end + 1 });
/// assert_eq!(first + second, trace.cuda_api.spans.len());
/// # Ok::<(), sightline::loader::LoadError>(())
/// ```
pub fn compute(trace: &Trace, report: Report, range: Option<TimeRange>) -> Table {
    match report {
        Report::CudaApiSum => reports::cuda_api_sum(trace, range),
        Report::CudaGpuKernSum => reports::cuda_gpu_kern_sum(trace, range),
        Report::CudaGpuMemTimeSum => reports::cuda_gpu_mem_time_sum(trace, range),
        Report::CudaGpuMemSizeSum => reports::cuda_gpu_mem_size_sum(trace, range),
        Report::NvtxSum => reports::nvtx_sum(trace, range),
        Report::OsrtSum => reports::osrt_sum(trace, range),
        Report::CudaApiGpuSum => reports::cuda_api_gpu_sum(trace, range),
        Report::CudaKernExecSum => reports::cuda_kern_exec_sum(trace, range),
        Report::NvtxPushpopSum => reports::nvtx_style_sum(trace, range, NvtxKind::PushPop),
        Report::NvtxStartendSum => reports::nvtx_style_sum(trace, range, NvtxKind::StartEnd),
        Report::NvtxGpuProjSum => projection::nvtx_gpu_proj_sum(trace, range),
        Report::NvtxGpuProjTrace => projection::nvtx_gpu_proj_trace(trace, range),
        Report::NvtxKernSum => projection::nvtx_kern_sum(trace, range),
        Report::NvtxPushpopTrace => projection::nvtx_pushpop_trace(trace, range),
        Report::CudaGpuSum => reports::cuda_gpu_sum(trace, range),
        Report::CudaGpuKernGbSum => gpu_reports::cuda_gpu_kern_gb_sum(trace, range),
        Report::CudaGpuTrace => traces::cuda_gpu_trace(trace, range),
        Report::CudaApiTrace => traces::cuda_api_trace(trace, range),
        Report::CudaKernExecTrace => traces::cuda_kern_exec_trace(trace, range),
        // Sightline does not load unified-memory events; nsys writes an empty
        // file for a report without them, and so do we.
        Report::UmSum => Table::default(),
        Report::CudaGpuKernSumBase => {
            gpu_reports::cuda_gpu_kern_sum_named(trace, range, KernelNaming::Base)
        }
        Report::CudaGpuKernSumMangled => {
            gpu_reports::cuda_gpu_kern_sum_named(trace, range, KernelNaming::Mangled)
        }
        Report::CudaGpuKernSumNvtxName => {
            gpu_reports::cuda_gpu_kern_sum_named(trace, range, KernelNaming::NvtxName)
        }
        Report::KernelLaunchSum => kernels::kernel_launch_sum(trace, range),
    }
}
