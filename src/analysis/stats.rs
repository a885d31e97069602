//! The `nsys stats` summary reports, computed from the trace model.
//!
//! Eight reports, whose CSV output equals nsys 2025.3's byte for byte (the rules
//! are in `notes/stats-spec.md`), over the whole trace or any time range.
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

use super::{format, reports};
use crate::model::{Ns, Trace};

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
}

impl Report {
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

    /// The nsys report name, e.g. `cuda_gpu_kern_sum`.
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
        }
    }

    pub fn from_name(name: &str) -> Option<Report> {
        Report::ALL.into_iter().find(|r| r.name() == name)
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
    }
}
