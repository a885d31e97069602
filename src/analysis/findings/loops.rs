//! Patterns across iterations: syncs with little work between them, an
//! allocation per iteration, and ranges whose kernels are too short to keep
//! the GPU busy.

use std::sync::atomic::AtomicBool;

use super::context::{ApiClass, Context, IdleFacts};
use super::finding::{Finding, FindingKind, Severity, Thresholds};
use crate::analysis::cancel::{Cancelled, check};
use crate::analysis::format::human_ns;
use crate::analysis::idle::{Cause, IdleSummary};
use crate::model::{EventId, EventKind, GpuOp, GpuOpKind, Ns};

/// Events listed per finding at most: enough to highlight, not a copy of the trace.
const MAX_EVENTS: usize = 1000;

const SYNC_LOOP_FIX: &str = "Each synchronization stalls the CPU until the GPU drains, then the \
GPU idles while the CPU launches again. Batch more work between syncs, sync only where the \
host needs the result, or use events/stream dependencies (cudaStreamWaitEvent) instead of \
host-side waits.";

const ALLOC_LOOP_FIX: &str = "cudaMalloc/cudaFree (and pinned host allocation) are slow and \
may synchronize the device. Allocate once outside the loop and reuse the buffer, or use the \
stream-ordered allocator (cudaMallocAsync/cudaFreeAsync) or a caching allocator.";

const LAUNCH_BOUND_FIX: &str = "The kernels are shorter than the time it takes to launch them, \
so the GPU waits for the CPU. Fuse small kernels, give each more work, or capture the \
sequence in a CUDA graph and launch it once.";

const CPU_BOUND_FIX: &str = "The GPU waits while the launching thread does host work outside \
CUDA (Python, data loading, preprocessing). Overlap that work with the GPU: prepare the next \
batch on another thread or in a DataLoader with workers, move the work to the GPU, or give \
each launch more work.";

/// `; GPU idle 89 % of 7.0 ms; the thread spent ...`, or nothing without idle time.
fn idle_clause(summary: Option<&IdleSummary>) -> String {
    match summary {
        Some(s) if s.idle > 0 => format!("; {}", s.sentence()),
        _ => String::new(),
    }
}

pub(super) fn sync_in_loop(
    ctx: &Context,
    idle: &IdleFacts,
    t: &Thresholds,
    out: &mut Vec<Finding>,
    cancel: &AtomicBool,
) -> Result<(), Cancelled> {
    for (th, thread) in ctx.trace.threads.iter().enumerate() {
        check(cancel)?;
        let th = th as u32;
        let syncs: Vec<usize> = thread
            .cuda_api
            .rows()
            .map(|i| i as usize)
            .filter(|&a| ctx.class(a).is_sync())
            .collect();
        // GPU time launched by the thread after each sync's predecessor, up to
        // and including the sync (a blocking copy's own copy counts).
        let work_before = |i: usize| -> Ns {
            let from = if i == 0 {
                Ns::MIN
            } else {
                ctx.api_span(syncs[i - 1]).1
            };
            let to = ctx.api_span(syncs[i]).1;
            let mut busy = 0;
            for api in ctx.api_calls(th, from, to) {
                for op in ctx.work_of(th, api) {
                    let (s, e) = ctx.op_span(op);
                    busy = Ns::saturating_add(busy, e.saturating_sub(s).max(0));
                }
            }
            busy
        };
        // A blocking copy's own GPU time.
        let own_work = |i: usize| -> Ns {
            ctx.work_of(th, syncs[i])
                .map(|op| {
                    let (s, e) = ctx.op_span(op);
                    e.saturating_sub(s).max(0)
                })
                .sum()
        };
        // The loop each sync belongs to: a run never crosses from one to another.
        let scope: Vec<Option<usize>> = syncs
            .iter()
            .map(|&a| {
                let (s, e) = ctx.api_span(a);
                ctx.loop_scope(th, s, e)
            })
            .collect();
        let mut runs: Vec<&[usize]> = Vec::new();
        let mut begin = 0;
        for i in 1..=syncs.len() {
            // A long gap or substantial work between two syncs ends the loop:
            // syncs around substantial work are not the mistake.
            let split = i == syncs.len()
                || scope[i] != scope[i - 1]
                || ctx
                    .api_span(syncs[i])
                    .0
                    .saturating_sub(ctx.api_span(syncs[i - 1]).1)
                    > t.sync_loop_max_interval_ns
                || work_before(i) > t.sync_loop_max_work_ns
                || own_work(i - 1) > t.sync_loop_max_work_ns;
            if split {
                runs.push(&syncs[begin..i]);
                begin = i;
            }
        }
        for run in runs {
            if run.len() < t.sync_loop_min_syncs.max(2) {
                continue;
            }
            let (from, to) = (ctx.api_span(run[0]).0, ctx.api_span(run[run.len() - 1]).1);
            let span = to.saturating_sub(from);
            if span <= 0 {
                continue;
            }
            let mut busy = 0;
            for api in ctx.api_calls(th, from, to) {
                for op in ctx.work_of(th, api) {
                    let (s, e) = ctx.op_span(op);
                    busy = Ns::saturating_add(busy, e.min(to).saturating_sub(s.max(from)).max(0));
                }
            }
            let share = busy as f64 / span as f64;
            if share >= t.sync_loop_max_busy_share {
                continue;
            }
            let waiting: Ns = run
                .iter()
                .map(|&a| ctx.api_span(a).1.saturating_sub(ctx.api_span(a).0))
                .sum();
            if (waiting as f64) < t.sync_loop_min_wait_share * span as f64 {
                continue;
            }
            out.push(Finding {
                kind: FindingKind::SyncInLoop,
                severity: Severity::Warning,
                start: from,
                end: to,
                range: ctx.enclosing_path(th, from, to),
                events: run
                    .iter()
                    .take(MAX_EVENTS)
                    .map(|&a| EventId::new(EventKind::Api, a as u32))
                    .collect(),
                message: format!(
                    "{} synchronizations in {} on thread {} ({} waiting in them), with the GPU \
                     busy only {:.0}% of that time{}",
                    run.len(),
                    human_ns(span),
                    thread.tid,
                    human_ns(waiting),
                    share * 100.0,
                    idle_clause(idle.summary(None, from, to).as_ref())
                ),
                fix: SYNC_LOOP_FIX,
            });
        }
    }
    Ok(())
}

pub(super) fn alloc_in_loop(
    ctx: &Context,
    idle: &IdleFacts,
    t: &Thresholds,
    out: &mut Vec<Finding>,
    cancel: &AtomicBool,
) -> Result<(), Cancelled> {
    for (th, thread) in ctx.trace.threads.iter().enumerate() {
        check(cancel)?;
        let th = th as u32;
        // Runs of allocations with GPU work launched between each two: the
        // shape of a loop body, not of a burst of setup allocations.
        let mut run: Vec<usize> = Vec::new();
        let mut frees: Vec<usize> = Vec::new();
        let mut launched = false;
        // Allocations freed before the next one: a temporary buffer per
        // iteration. (A caching allocator's growth allocates without freeing.)
        let mut cycles = 0usize;
        let mut freed_since_alloc = false;
        let flush = |run: &mut Vec<usize>,
                     frees: &mut Vec<usize>,
                     cycles: &mut usize,
                     out: &mut Vec<Finding>| {
            if *cycles >= t.alloc_loop_min_count.max(2) {
                let first = ctx.api_span(run[0]).0;
                let last = ctx.api_span(run[run.len() - 1]).1;
                let spent: Ns = run
                    .iter()
                    .chain(frees.iter())
                    .map(|&a| ctx.api_span(a).1.saturating_sub(ctx.api_span(a).0))
                    .sum();
                let mut names: Vec<&str> = run.iter().map(|&a| ctx.api_name(a)).collect();
                names.sort_unstable();
                names.dedup();
                let mut events: Vec<EventId> = run
                    .iter()
                    .chain(frees.iter())
                    .map(|&a| EventId::new(EventKind::Api, a as u32))
                    .collect();
                events.sort();
                events.truncate(MAX_EVENTS);
                out.push(Finding {
                    kind: FindingKind::AllocInLoop,
                    severity: Severity::Warning,
                    start: first,
                    end: last,
                    range: ctx.enclosing_path(th, first, last),
                    events,
                    message: format!(
                        "{} allocations ({}), {} of them freed before the next, and {} frees on \
                         thread {} with GPU work between each two, {} in them: an allocation \
                         per iteration{}",
                        run.len(),
                        names.join(", "),
                        *cycles,
                        frees.len(),
                        thread.tid,
                        human_ns(spent),
                        idle_clause(idle.summary(None, first, last).as_ref())
                    ),
                    fix: ALLOC_LOOP_FIX,
                });
            }
            run.clear();
            frees.clear();
            *cycles = 0;
        };
        // The loop of the run's allocations: an allocation of another loop
        // (or of setup outside it) starts a new run.
        let mut run_scope: Option<usize> = None;
        for api in thread.cuda_api.rows().map(|i| i as usize) {
            match ctx.class(api) {
                ApiClass::Alloc => {
                    let (s, e) = ctx.api_span(api);
                    let scope = ctx.loop_scope(th, s, e);
                    let close = run.last().is_some_and(|&prev| {
                        !launched
                            || scope != run_scope
                            || ctx.api_span(api).0.saturating_sub(ctx.api_span(prev).1)
                                > t.alloc_loop_max_interval_ns
                    });
                    run_scope = scope;
                    if close {
                        flush(&mut run, &mut frees, &mut cycles, out);
                    }
                    run.push(api);
                    launched = false;
                    freed_since_alloc = false;
                }
                ApiClass::Free if !run.is_empty() => {
                    if !freed_since_alloc {
                        cycles += 1;
                        freed_since_alloc = true;
                    }
                    frees.push(api);
                }
                _ => {
                    if !launched && ctx.work_of(th, api).next().is_some() {
                        launched = true;
                    }
                }
            }
        }
        flush(&mut run, &mut frees, &mut cycles, out);
    }
    Ok(())
}

/// A range judged `launch-bound` or `cpu-bound` ([`gpu_waits_in_range`]),
/// not yet worded: the words walk every API call in the range's idle gaps,
/// and a range around a reported one is left out (see
/// `timing::range_work_pass`), so only the ranges kept are worded
/// ([`RangeWaits::word`]). A capture's outermost range holds every
/// kernel: worded and then dropped, it was a second of each run.
pub(super) struct RangeWaits {
    range: usize,
    kind: FindingKind,
    fix: &'static str,
    /// The lane whose idle time judged it, and the window judged.
    lane: u32,
    first: Ns,
    last: Ns,
    kernels: usize,
    median: Ns,
    events: Vec<EventId>,
}

impl RangeWaits {
    /// The finding, worded.
    pub(super) fn word(&self, ctx: &Context, idle: &IdleFacts) -> Finding {
        let range = &ctx.ranges[self.range];
        // The judgement came from this lane's share of this window, so its
        // summary exists (`IdleFacts::share` and `summary` fail alike).
        let why = (idle.summary(Some(self.lane), self.first, self.last))
            .map_or_else(String::new, |s| s.sentence());
        let path = ctx.path(self.range);
        Finding {
            kind: self.kind,
            severity: Severity::Warning,
            start: range.start,
            end: range.end,
            message: format!(
                "'{path}' launches {} kernels of {} median; {why}",
                self.kernels,
                human_ns(self.median),
            ),
            range: Some(path),
            events: self.events.clone(),
            fix: self.fix,
        }
    }
}

/// `launch-bound` or `cpu-bound` for range `r` and the work launched in it:
/// a range whose kernels leave the GPU mostly idle, judged by what the
/// launching thread did in the gaps. Launches explaining most of the idle
/// time make it launch-bound (if its kernels are short), host work outside
/// CUDA makes it CPU-bound; syncs, allocations and pageable copies are the
/// loop detectors' to report. The pass over the ranges (deepest first)
/// leaves out the ancestors of a reported range: the finding is already
/// where it is sharpest.
pub(super) fn gpu_waits_in_range(
    ctx: &Context,
    idle: &IdleFacts,
    t: &Thresholds,
    r: usize,
    work: &[(usize, GpuOp)],
) -> Option<RangeWaits> {
    let mut kernels: Vec<(Ns, Ns, u32)> = work
        .iter()
        .filter(|(_, op)| op.kind == GpuOpKind::Kernel)
        .map(|&(_, op)| {
            let (s, e) = ctx.op_span(op);
            (s, e, op.index)
        })
        .collect();
    let fewest = t
        .launch_bound_min_kernels
        .min(t.cpu_bound_min_kernels)
        .max(2);
    if kernels.len() < fewest {
        return None;
    }
    let mut durations: Vec<Ns> = kernels.iter().map(|k| k.1.saturating_sub(k.0)).collect();
    // The middle value only: a selection, not a sort of millions.
    let middle = durations.len() / 2;
    let median = *durations.select_nth_unstable(middle).1;
    // Launched in order, a stream's kernels mostly start in order: a
    // run-adaptive sort merges the streams' runs (each tuple differs, so
    // any sort gives this order).
    kernels.sort();
    let (first, last) = (kernels[0].0, kernels.iter().map(|k| k.1).max().unwrap_or(0));
    let span = last.saturating_sub(first);
    // Busy time: the union of kernel intervals (concurrent kernels count once).
    let (mut busy, mut reach) = (0i64, Ns::MIN);
    for &(s, e, _) in &kernels {
        let s = s.max(reach);
        if e > s {
            busy = Ns::saturating_add(busy, e.saturating_sub(s));
        }
        reach = reach.max(e);
    }
    if span <= 0 || busy as f64 >= t.launch_bound_max_busy_share * span as f64 {
        return None;
    }
    let device = idle.device_of(GpuOp {
        kind: GpuOpKind::Kernel,
        index: kernels[0].2,
    });
    // Judged from the gaps alone; the calls are walked only to word a finding.
    let share = idle.share(device, first, last)?;
    // Copies and sets keep a GPU busy too: the GPU must really have idled.
    if (share.idle as f64) < (1.0 - t.launch_bound_max_busy_share) * share.span as f64 {
        return None;
    }
    let why = crate::analysis::idle::dominant(&share.verdicts)?;
    let (kind, fix) = match why {
        Cause::Launch
            if kernels.len() >= t.launch_bound_min_kernels.max(2)
                && median < t.launch_bound_max_kernel_ns =>
        {
            (FindingKind::LaunchBound, LAUNCH_BOUND_FIX)
        }
        Cause::Outside if kernels.len() >= t.cpu_bound_min_kernels.max(2) => {
            (FindingKind::CpuBound, CPU_BOUND_FIX)
        }
        _ => return None,
    };
    let mut events = vec![ctx.range_event(r)];
    events.extend(
        kernels
            .iter()
            .take(MAX_EVENTS)
            .map(|k| EventId::new(EventKind::Kernel, k.2)),
    );
    Some(RangeWaits {
        range: r,
        kind,
        fix,
        lane: share.lane,
        first,
        last,
        kernels: kernels.len(),
        median,
        events,
    })
}
