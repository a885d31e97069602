//! The `nsys stats` summary reports, computed from the trace model.
//!
//! nsys's reports (and one of ours), whose CSV output equals nsys 2025.3's byte for byte (the rules
//! are in `docs/nsys-stats-semantics.md`), over the whole trace or any time range.
//!
//! # Time ranges
//! A range is half-open, `[start, end)`, in session nanoseconds. Which events
//! of it a summary counts, and for how long, is a [`RangeRule`]:
//!
//! * [`RangeRule::StartsInside`] (the default, and the rule of
//!   `sightline stats --range` without `--overlapping`): an event belongs to the range when its
//!   **start** lies inside it, with its whole duration; how long it lasts does
//!   not matter. So N disjoint ranges that cover the trace partition every
//!   report's counts and totals. For the two reports that combine events:
//!   - `cuda_api_gpu_sum` is a union of API calls, kernels and memory
//!     operations; each of them counts by its own start.
//!   - `cuda_kern_exec_sum` pairs each kernel with the API call that launched
//!     it; a pair counts when the **API call** starts in the range (the kernel
//!     may run after the range ends).
//! * [`RangeRule::Overlapping`]: every event that overlaps the range counts,
//!   with only the part of its duration inside the range. A 280 ms `poll`
//!   that a 10 ms range falls inside counts once, for 10 ms. The clipped
//!   totals of N disjoint ranges that cover the trace add up to the whole
//!   report's totals exactly; the counts do not (an event cut by a boundary
//!   counts in both parts). Not clipped: the bytes of
//!   `cuda_gpu_mem_size_sum` (a copy cut by the range counts all its bytes)
//!   and the launch times of `cuda_kern_exec_sum` (a launch counts when its
//!   API call overlaps the range, with its whole latencies). The traces and
//!   the NVTX projections take only `StartsInside` ([`Report::takes_rule`]).
//!
//! What nsys does, as far as this repository can tell (no nsys runs here):
//! nsys 2025.3's own list of reports and their options
//! (`shared/fixtures/nsys-2025.3/nsys-help/help-reports.txt`) has options
//! that name kernels (`:base`, `:mangled`, `:nvtx-name`) or limit rows
//! (`um_sum:rows=`), none that restrict a report to a time span; every
//! fixture CSV is over a whole report. Its `nsys analyze` rules do take a
//! window (`start=`, `end=`, `nvtx=`), and their SQL keeps the rows that
//! **overlap** it, unclipped (`docs/nsys-stats-semantics.md` §9). So
//! `StartsInside` is Sightline's own rule, chosen so that the parts of a
//! split trace add up; `Overlapping` is the rules' overlap test with the
//! durations clipped, so that a summary of a span says how the span's time
//! was spent.

use super::gpu_reports::KernelNaming;
use super::{format, gpu_reports, kernels, projection, reports, traces};
use crate::model::{Ns, NvtxKind, Trace};

/// Which events of a range belong to it is a [`RangeRule`]; by default,
/// those that start inside it.
pub use crate::model::TimeRange;

/// Which events of a [`TimeRange`] a summary counts, and with what duration
/// (see the module documentation).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum RangeRule {
    /// Events whose start lies in the range, each with its whole duration.
    #[default]
    StartsInside,
    /// Events that overlap the range, each with the part of its duration
    /// inside the range.
    Overlapping,
}

impl RangeRule {
    /// The duration an event `[start, end)` counts with in `range` under this
    /// rule; `None` when the rule leaves the event out.
    ///
    /// Under `Overlapping` an event overlaps when it starts before the range
    /// ends and either ends after the range starts or starts inside it (so an
    /// instant, `start == end`, at the range's start is not lost). Its
    /// duration is clipped to the range: `min(end, range.end) - max(start,
    /// range.start)`. Over disjoint ranges covering an event, the clipped
    /// parts add up to its duration exactly (integer nanoseconds, no
    /// rounding), which is what makes the totals of a split trace add up.
    #[inline]
    pub fn counted(self, range: TimeRange, start: Ns, end: Ns) -> Option<Ns> {
        match self {
            RangeRule::StartsInside => (range.start..range.end)
                .contains(&start)
                .then(|| end.saturating_sub(start)),
            RangeRule::Overlapping => {
                let overlaps = start < range.end && (end > range.start || start >= range.start);
                // A damaged event (end before start) starting inside keeps its
                // own negative duration, as `StartsInside` counts it.
                overlaps.then(|| end.min(range.end).saturating_sub(start.max(range.start)))
            }
        }
    }

    /// Whether an event `[start, end)` belongs to `range` under this rule.
    pub fn admits(self, range: TimeRange, start: Ns, end: Ns) -> bool {
        self.counted(range, start, end).is_some()
    }

    /// A short name for a toggle.
    pub fn label(self) -> &'static str {
        match self {
            RangeRule::StartsInside => "starting in range",
            RangeRule::Overlapping => "overlapping (clipped)",
        }
    }

    /// The rule in one line, for the person reading the numbers.
    pub fn explanation(self) -> &'static str {
        match self {
            RangeRule::StartsInside => {
                "events that start in the range, each with its whole duration \
                 (split ranges add up; as `sightline stats --range`)"
            }
            RangeRule::Overlapping => {
                "every event that overlaps the range, its duration clipped to the range \
                 (bytes and launch latencies are not clipped)"
            }
        }
    }
}

/// What a report walks: a range (or the whole trace) and the rule for it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scope {
    pub range: Option<TimeRange>,
    pub rule: RangeRule,
}

/// A range alone means the default rule, so callers that only know ranges
/// (the CLI, diffs) keep `StartsInside` without naming it.
impl From<Option<TimeRange>> for Scope {
    fn from(range: Option<TimeRange>) -> Scope {
        Scope {
            range,
            rule: RangeRule::StartsInside,
        }
    }
}

/// A report asked for with a rule it does not take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedRule {
    pub report: Report,
    pub rule: RangeRule,
}

impl std::fmt::Display for UnsupportedRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} counts only events that start in the range (it lists events or \
             projects NVTX ranges, where a clipped event would be a different event)",
            self.report.name()
        )
    }
}

impl std::error::Error for UnsupportedRule {}

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
    /// Ours: nsys's sampled GPU metrics averaged per kernel instance, per
    /// kernel name × metric.
    GpuMetricsKernSum,
    /// Ours: each GPU's idle time by what the launching thread was doing (`analysis::idle`).
    GpuIdleSum,
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
    pub const EVERY: [Report; 26] = [
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
        Report::GpuMetricsKernSum,
        Report::GpuIdleSum,
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
            Report::GpuMetricsKernSum => "gpu_metrics_kern_sum",
            Report::GpuIdleSum => "gpu_idle_sum",
        }
    }

    /// A per-event trace report (a row per event, not a summary).
    pub fn is_trace(self) -> bool {
        matches!(
            self,
            Report::CudaGpuTrace | Report::CudaApiTrace | Report::CudaKernExecTrace
        )
    }

    /// The name in output file names: nsys writes `PREFIX_cuda_gpu_kern_sum_base.csv`
    /// for `cuda_gpu_kern_sum:base` (each `:` becomes `_`).
    pub fn file_stem(self) -> String {
        self.name().replace(':', "_")
    }

    /// Whether the report can count by [`RangeRule::Overlapping`]: the
    /// summaries of durations can; the traces (one row per event, with its
    /// start) and the NVTX projections (a range and the GPU work it owns) keep
    /// to `StartsInside`, where clipping would describe events that never were.
    pub fn takes_rule(self, rule: RangeRule) -> bool {
        match rule {
            RangeRule::StartsInside => true,
            RangeRule::Overlapping => !matches!(
                self,
                Report::NvtxGpuProjSum
                    | Report::NvtxGpuProjTrace
                    | Report::NvtxKernSum
                    | Report::NvtxPushpopTrace
                    | Report::CudaGpuTrace
                    | Report::CudaApiTrace
                    | Report::CudaKernExecTrace
            ),
        }
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
            Report::GpuMetricsKernSum => "GPU Metrics per Kernel (nsys sampling)",
            Report::GpuIdleSum => "GPU Idle Time by Cause",
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
    /// A value Nsight Compute prints with two decimals (`6.25`, `66.67`), and
    /// without any when it is whole (`100`), as ncu prints occupancy.
    TwoDecimals(f64),
    /// A measured value (a hardware metric), printed raw: the shortest text
    /// that reads back as the same double.
    Float(f64),
}

impl Cell {
    /// The cell as `nsys stats` prints it in its aligned tables (and the
    /// viewer in its grids): numbers with thousands separators, text as is.
    pub fn grouped(&self) -> String {
        format::grouped_text(self)
    }

    /// The numeric value, for sorting (text and empty cells have none).
    /// `Round1` gives the unrounded value: it sorts the same, and costs nothing.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Int(v) => Some(*v as f64),
            Cell::Round1(v) => Some(*v),
            Cell::Megabytes(bytes) => Some(bytes / 1e6),
            Cell::Float(v) | Cell::TwoDecimals(v) => Some(*v),
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
            Cell::TwoDecimals(v) => f.write_str(&format::two_decimals_text(*v)),
            Cell::Float(v) if v.is_finite() => write!(f, "{}", v + 0.0),
            Cell::Float(_) => Ok(()),
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

    /// The same lines as [`Table::to_csv`], tab-separated: what a
    /// spreadsheet pastes into cells (fields with a tab, a quote or a line
    /// break are quoted as in CSV).
    pub fn to_tsv(&self) -> String {
        format::to_delimited(self, '\t')
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

/// Computes `report` over the events that start in `range` (all events for `None`):
/// [`RangeRule::StartsInside`], the rule of `sightline stats --range`.
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
    compute_scoped(trace, report, Scope::from(range))
}

/// Computes `report` over `range` (all events for `None`) by `rule`; an error
/// when the report does not take the rule ([`Report::takes_rule`]). With
/// `RangeRule::StartsInside` this is [`compute`].
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use sightline::analysis::stats::{RangeRule, Report, TimeRange, compute_in};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sync_timing.sqlite");
/// let trace = sightline::loader::load(path.as_ref(), &mut |_| {}, &AtomicBool::new(false))?;
/// // A range that starts one nanosecond after the first kernel starts.
/// let k = &trace.kernels.spans;
/// let range = TimeRange { start: k.start[0] + 1, end: k.end(0) };
/// let starts = compute_in(&trace, Report::CudaGpuKernSum, Some(range), RangeRule::StartsInside);
/// let overlaps = compute_in(&trace, Report::CudaGpuKernSum, Some(range), RangeRule::Overlapping);
/// assert!(starts.unwrap().rows.is_empty());
/// // The kernel counts, for the nanoseconds it spent inside the range.
/// let overlaps = overlaps.unwrap();
/// assert_eq!(overlaps.rows[0][1].to_string(), (k.end(0) - k.start[0] - 1).to_string());
/// assert!(compute_in(&trace, Report::CudaGpuTrace, Some(range), RangeRule::Overlapping).is_err());
/// # Ok::<(), sightline::loader::LoadError>(())
/// ```
pub fn compute_in(
    trace: &Trace,
    report: Report,
    range: Option<TimeRange>,
    rule: RangeRule,
) -> Result<Table, UnsupportedRule> {
    if !report.takes_rule(rule) {
        return Err(UnsupportedRule { report, rule });
    }
    Ok(compute_scoped(trace, report, Scope { range, rule }))
}

/// `report`'s rows of one kernel (`kernel`, a demangled name as
/// `cuda_gpu_kern_sum` names kernels) over the kernels that start in `range`,
/// for the reports that have rows per kernel instance or configuration:
/// `cuda_gpu_trace` (its instances) and `kernel_launch_sum` (its launch
/// configurations). The rows are the full report's rows of that kernel, as
/// `sightline stats --report R` prints them; `None` for other reports.
pub fn compute_for_kernel(
    trace: &Trace,
    report: Report,
    kernel: crate::model::StrId,
    range: Option<TimeRange>,
) -> Option<Table> {
    match report {
        Report::CudaGpuTrace => Some(traces::cuda_gpu_trace_of_kernel(trace, range, kernel)),
        Report::KernelLaunchSum => Some(kernels::kernel_launch_sum_of_kernel(
            trace,
            Scope::from(range),
            kernel,
        )),
        _ => None,
    }
}

/// The reports that take a rule get the whole scope; the others (see
/// [`Report::takes_rule`]) only its range, and are only reached with `StartsInside`.
fn compute_scoped(trace: &Trace, report: Report, scope: Scope) -> Table {
    let range = scope.range;
    match report {
        Report::CudaApiSum => reports::cuda_api_sum(trace, scope),
        Report::CudaGpuKernSum => reports::cuda_gpu_kern_sum(trace, scope),
        Report::CudaGpuMemTimeSum => reports::cuda_gpu_mem_time_sum(trace, scope),
        Report::CudaGpuMemSizeSum => reports::cuda_gpu_mem_size_sum(trace, scope),
        Report::NvtxSum => reports::nvtx_sum(trace, scope),
        Report::OsrtSum => reports::osrt_sum(trace, scope),
        Report::CudaApiGpuSum => reports::cuda_api_gpu_sum(trace, scope),
        Report::CudaKernExecSum => reports::cuda_kern_exec_sum(trace, scope),
        Report::NvtxPushpopSum => reports::nvtx_style_sum(trace, scope, NvtxKind::PushPop),
        Report::NvtxStartendSum => reports::nvtx_style_sum(trace, scope, NvtxKind::StartEnd),
        Report::NvtxGpuProjSum => projection::nvtx_gpu_proj_sum(trace, range),
        Report::NvtxGpuProjTrace => projection::nvtx_gpu_proj_trace(trace, range),
        Report::NvtxKernSum => projection::nvtx_kern_sum(trace, range),
        Report::NvtxPushpopTrace => projection::nvtx_pushpop_trace(trace, range),
        Report::CudaGpuSum => reports::cuda_gpu_sum(trace, scope),
        Report::CudaGpuKernGbSum => gpu_reports::cuda_gpu_kern_gb_sum(trace, scope),
        Report::CudaGpuTrace => traces::cuda_gpu_trace(trace, range),
        Report::CudaApiTrace => traces::cuda_api_trace(trace, range),
        Report::CudaKernExecTrace => traces::cuda_kern_exec_trace(trace, range),
        // Sightline does not load unified-memory events; nsys writes an empty
        // file for a report without them, and so do we.
        Report::UmSum => Table::default(),
        Report::CudaGpuKernSumBase => {
            gpu_reports::cuda_gpu_kern_sum_named(trace, scope, KernelNaming::Base)
        }
        Report::CudaGpuKernSumMangled => {
            gpu_reports::cuda_gpu_kern_sum_named(trace, scope, KernelNaming::Mangled)
        }
        Report::CudaGpuKernSumNvtxName => {
            gpu_reports::cuda_gpu_kern_sum_named(trace, scope, KernelNaming::NvtxName)
        }
        Report::KernelLaunchSum => kernels::kernel_launch_sum(trace, scope),
        Report::GpuMetricsKernSum => super::metrics::sampled::gpu_metrics_kern_sum(trace, scope),
        // Gaps are clipped to the range under either rule: a gap is time, not an event.
        Report::GpuIdleSum => {
            let window = range.map(|r| [(r.start, r.end)]);
            super::idle::gpu_idle_sum(trace, window.as_ref().map(|w| &w[..]))
        }
    }
}
