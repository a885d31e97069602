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
use super::{gpu_reports, idle, kernels, metrics, projection, reports, traces};
use crate::model::{NvtxKind, Trace};

// The vocabulary of the reports lives in leaf modules (so that the reports
// can use it while this module dispatches to them); these are its old paths.
pub use super::report::Report;
pub use super::scope::RangeRule;
use super::scope::Scope;
pub use super::table::{Cell, Table};
/// Which events of a range belong to it is a [`RangeRule`]; by default,
/// those that start inside it.
pub use crate::model::TimeRange;

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

/// Computes `report` over the events that start in `range` (all events for `None`):
/// [`RangeRule::StartsInside`], the rule of `sightline stats --range`.
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use sightline::analysis::stats::{Report, compute};
/// use sightline::model::TimeRange;
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
/// use sightline::analysis::stats::{RangeRule, Report, compute_in};
/// use sightline::model::TimeRange;
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
        Report::GpuMetricsKernSum => metrics::sampled::gpu_metrics_kern_sum(trace, scope),
        // Gaps are clipped to the range under either rule: a gap is time, not an event.
        Report::GpuIdleSum => {
            let window = range.map(|r| [(r.start, r.end)]);
            idle::gpu_idle_sum(trace, window.as_ref().map(|w| &w[..]))
        }
        // A sample is an instant: in the range under either rule when taken in it.
        Report::CpuSampleSum => {
            super::cpu_sample_sum::cpu_sample_sum(trace, range.map(|r| vec![(r.start, r.end)]))
        }
    }
}
