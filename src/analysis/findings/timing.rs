//! Timing mistakes around NVTX ranges: a range that ends before the GPU work
//! it launched, and a sync in a range that also waits for earlier work.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

use super::context::{ApiClass, Context, IdleFacts};
use super::finding::{Finding, FindingKind, RangeWork, Severity, Thresholds};
use super::loops::RangeWaits;
use crate::analysis::cancel::{Cancelled, check};
use crate::analysis::format::human_ns;
use crate::model::{EventId, EventKind, GpuOp, GpuOpKind, Ns};

const ENDS_BEFORE_FIX: &str = "A kernel launch returns before the kernel runs, so a host timer (or \
an NVTX range) around it measures only the launch. Synchronize before stopping the timer \
(cudaStreamSynchronize / cudaDeviceSynchronize after the work), or time the GPU work itself \
with CUDA events: cudaEventRecord before and after, cudaEventSynchronize on the stop event, \
then cudaEventElapsedTime.";

const WAITS_ON_EARLIER_FIX: &str = "The sync at the end of the range also waited for GPU work \
queued before the range began, so the measured time includes it. Synchronize at the start of \
the range, before its first launch (or exclude the first iteration), so that only the range's \
own work is timed.";

/// Visits ranges deepest first, so a finding on a nested range can keep its
/// parents from repeating it.
/// Unended ranges are left out: their end is made up.
pub(super) fn deepest_first(ctx: &Context) -> Vec<usize> {
    let mut order: Vec<usize> = (0..ctx.ranges.len())
        .filter(|&r| !ctx.ranges[r].unended)
        .collect();
    order.sort_by_key(|&r| (std::cmp::Reverse(ctx.ranges[r].depth), ctx.ranges[r].start));
    order
}

/// The GPU work launched from inside range `r` (by its thread, or for it by
/// another while it waited: `Context::handed_off_work`), with each op's API call.
pub(super) fn range_work(ctx: &Context, r: usize) -> Vec<(usize, GpuOp)> {
    let range = &ctx.ranges[r];
    let trace = ctx.trace;
    let Some(thread) = trace.threads.get(range.thread as usize) else {
        return Vec::new();
    };
    let correlation = trace.correlation.of_process(thread.pid);
    let mut work = Vec::new();
    for api in ctx.api_calls(range.thread, range.start, range.end) {
        let Some(&c) = trace.cuda_api.correlation.get(api) else {
            continue;
        };
        work.extend(
            correlation
                .gpu_ops(c)
                .filter(|op| op.kind != GpuOpKind::Sync)
                .map(|op| (api, op)),
        );
    }
    // And what another thread launched for it while its thread waited.
    work.extend(ctx.handed_off_work(r));
    work
}

/// One pass over the ranges, deepest first, for the two detectors that judge
/// each range's GPU work: collected once, judged twice. Judging reads the
/// trace only, so the ranges are judged on every core; then, in order, a
/// parent whose overhang is an op already reported, or that holds a
/// launch-bound range, is left out.
///
/// Returns what [`range_gpu_spans`] returns, from the same pass: each
/// range's work collected once serves the verdicts and the view's bars.
pub(super) fn range_work_pass(
    ctx: &Context,
    idle: &IdleFacts,
    t: &Thresholds,
    out: &mut Vec<Finding>,
    cancel: &AtomicBool,
) -> Result<Vec<RangeWork>, Cancelled> {
    let order = deepest_first(ctx);
    let verdicts = crate::analysis::parallel::map(&order, cancel, |&r| {
        let work = range_work(ctx, r);
        if work.is_empty() {
            return (None, None, None);
        }
        (
            ends_before_gpu_work(ctx, idle, t, r, &work),
            super::loops::gpu_waits_in_range(ctx, idle, t, r, &work),
            work_span(ctx, &work),
        )
    })?;
    let mut spans: Vec<(usize, Ns, Ns)> = Vec::new();
    // The op that ends last, for each range already reported: a parent whose
    // overhang is the same op says nothing new.
    let mut reported: HashSet<GpuOp> = HashSet::new();
    // Ranges with a launch-bound descendant.
    let mut covered: HashSet<usize> = HashSet::new();
    // The findings in the order they are reported; the launch- and
    // CPU-bound ones kept are worded after, side by side.
    enum Kept {
        Worded(Finding),
        Unworded(RangeWaits),
    }
    let mut kept: Vec<Kept> = Vec::new();
    for (&r, (overhang, waits, span)) in order.iter().zip(verdicts) {
        if let Some((s, e)) = span {
            spans.push((r, s, e));
        }
        if let Some((last, finding)) = overhang
            && reported.insert(last)
        {
            kept.push(Kept::Worded(finding));
        }
        if let Some(waits) = waits
            && !covered.contains(&r)
        {
            kept.push(Kept::Unworded(waits));
            let mut at = ctx.ranges[r].parent;
            // A covered range's ancestors are covered already: each climb
            // stops there (climbing on would be quadratic in depth).
            while let Some(p) = at
                && covered.insert(p)
            {
                at = ctx.ranges[p].parent;
            }
        }
    }
    let worded = crate::analysis::parallel::map(&kept, cancel, |k| match k {
        Kept::Worded(_) => None,
        Kept::Unworded(waits) => Some(waits.word(ctx, idle)),
    })?;
    for (k, words) in kept.into_iter().zip(worded) {
        match (k, words) {
            (Kept::Worded(finding), _) | (Kept::Unworded(_), Some(finding)) => out.push(finding),
            (Kept::Unworded(_), None) => {}
        }
    }
    // In range order, as `range_gpu_spans` gives them.
    spans.sort_unstable_by_key(|&(r, _, _)| r);
    Ok(spans
        .into_iter()
        .map(|(r, s, e)| (ctx.ranges[r].index, s, e))
        .collect())
}

/// Words in a range's name (or text payload) that say it times something.
const TIMER_WORDS: [&str; 9] = [
    "time", "timer", "timing", "bench", "measure", "elapsed", "latency", "tic", "toc",
];

fn says_it_times(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        // Short words whole ("tic", not "ticket"); longer ones as prefixes ("timed").
        .any(|word| {
            TIMER_WORDS
                .iter()
                .any(|w| word == *w || (w.len() > 3 && word.starts_with(w)))
        })
}

/// Whether range `r` is a phase of a pipelined loop rather than a timer
/// (docs/findings.md, "Phase ranges are not timers"): its name and payload do
/// not say it times anything; it has a sibling phase of another name under
/// the same parent; a sync after it, inside its loop, waits for the loop's
/// work; and the GPU stays busy: idle less than `launch_bound_max_busy_share`
/// of the time from its work's start to its end.
fn is_pipelined_phase(
    ctx: &Context,
    idle: &IdleFacts,
    t: &Thresholds,
    r: usize,
    gpu: (Ns, Ns, Option<u32>),
) -> bool {
    let trace = ctx.trace;
    let range = &ctx.ranges[r];
    if says_it_times(trace.name(range.name)) {
        return false;
    }
    if let Some(crate::model::Payload::Json(text)) = trace.nvtx.payload.get(&range.index)
        && says_it_times(text)
    {
        return false;
    }
    let Some(parent) = range.parent else {
        return false;
    };
    let p = &ctx.ranges[parent];
    let siblings = &ctx.thread_ranges[range.thread as usize];
    let from = siblings.partition_point(|&x| ctx.ranges[x].start < p.start);
    let other_phase = siblings[from..]
        .iter()
        .take_while(|&&x| ctx.ranges[x].start < p.end)
        .any(|&x| ctx.ranges[x].parent == Some(parent) && ctx.ranges[x].name != range.name);
    if !other_phase {
        return false;
    }
    let outer = ctx
        .loop_scope(range.thread, range.start, range.end)
        .unwrap_or(parent);
    let synced = ctx
        .api_calls(range.thread, range.end, ctx.ranges[outer].end)
        .any(|a| ctx.class(a).is_sync());
    if !synced {
        return false;
    }
    let (start, end, device) = gpu;
    match idle.share(device, start, end) {
        Some(s) => (s.idle as f64) < t.launch_bound_max_busy_share * s.span.max(1) as f64,
        None => true,
    }
}

const PHASE_NOTE: &str = "This range marks a phase of a pipelined loop: it ends once its work \
is queued, and the GPU runs that work while the next phase launches. That overlap is what \
keeps the GPU busy, not a timing mistake; to see how long each phase runs on the GPU, use the \
NVTX ranges projected onto the GPU (the timeline's GPU bar under the range, or `sightline \
stats --report nvtx_gpu_proj_sum`), not the range's CPU time.";

const LAUNCH_NOTE: &str = "The range ends once its work is queued and the GPU runs that work \
after it: normal in an asynchronous program, and nothing in the report says the range is read \
as a timer. If its time is read as the work's time, it measured only the launch: synchronize \
before it ends, or time the work with CUDA events; to see how long its work ran, use the NVTX \
ranges projected onto the GPU (`sightline stats --report nvtx_gpu_proj_sum`).";

/// CUDA event records: a range that records one before its work and one after it is timing
/// with them.
const EVENT_RECORDS: [&str; 2] = ["cudaEventRecord%", "cuEventRecord%"];

/// Why range `r` is used as a timer, if the report says it is: its name or
/// payload says it times; it records CUDA events around its work (one before its first
/// launch, one after its last: a start and a stop event); or a sync inside it waits
/// for part of its own work (then launches more that runs past its end). Events recorded
/// between its launches are not a timer's: frameworks record them to order streams and reuse
/// memory (PyTorch's DDP records two in every `forward`).
fn timer_evidence(ctx: &Context, r: usize, work: &[(usize, GpuOp)]) -> Option<&'static str> {
    let trace = ctx.trace;
    let range = &ctx.ranges[r];
    if says_it_times(trace.name(range.name)) {
        return Some("its name says it times");
    }
    if let Some(crate::model::Payload::Json(text)) = trace.nvtx.payload.get(&range.index)
        && says_it_times(text)
    {
        return Some("its payload says it times");
    }
    let calls = ctx.api_calls(range.thread, range.start, range.end);
    let records = |a: usize| {
        let name = ctx.api_name(a);
        EVENT_RECORDS
            .iter()
            .any(|p| crate::analysis::like::like(name, p))
    };
    let first_launch = work.iter().map(|&(a, _)| ctx.api_span(a).0).min();
    let last_launch = work.iter().map(|&(a, _)| ctx.api_span(a).1).max();
    if let (Some(first), Some(last)) = (first_launch, last_launch) {
        let recorded = |when: &dyn Fn((Ns, Ns)) -> bool| {
            calls.clone().any(|a| records(a) && when(ctx.api_span(a)))
        };
        if recorded(&|(_, end)| end <= first) && recorded(&|(start, _)| start >= last) {
            return Some("it records CUDA events around its work");
        }
    }
    let waits_for_own = calls.filter(|&a| ctx.class(a).is_sync()).any(|a| {
        let (s, _) = ctx.api_span(a);
        work.iter()
            .any(|&(launch, op)| ctx.api_span(launch).1 <= s && ctx.op_span(op).1 > s)
    });
    waits_for_own.then_some("a sync in it waits for part of its work")
}

/// Whether range `r` is a phase of a loop iteration that as a whole waits
/// for its work: the outermost enclosing range that repeats (the iteration:
/// `step`, `step 12`; phases inside it repeat too) has a sync after `r` ends
/// that returns once the work (ending at `gpu_end`) is done, as
/// `loss.item()` ends a training step.
fn iteration_waits(ctx: &Context, r: usize, gpu_end: Ns) -> bool {
    let range = &ctx.ranges[r];
    let Some(parent) = range.parent else {
        return false;
    };
    let Some(iteration) = ctx.ranges.get(ctx.iteration[parent] as usize) else {
        return false;
    };
    ctx.api_calls(range.thread, range.end, iteration.end)
        .any(|a| ctx.class(a).is_sync() && ctx.api_span(a).1 >= gpu_end)
}

/// `range-ends-before-gpu-work` for range `r` and the work launched in it,
/// with the op that ends last: a warning where the range is used as a timer
/// ([`timer_evidence`]); nothing for a phase of an iteration that waits for
/// its work ([`iteration_waits`]); an info note otherwise.
fn ends_before_gpu_work(
    ctx: &Context,
    idle: &IdleFacts,
    t: &Thresholds,
    r: usize,
    work: &[(usize, GpuOp)],
) -> Option<(GpuOp, Finding)> {
    let range = &ctx.ranges[r];
    let &(_, last) = work.iter().max_by_key(|(_, op)| ctx.op_span(*op).1)?;
    let gpu_end = ctx.op_span(last).1;
    let overhang = gpu_end.saturating_sub(range.end);
    if overhang < t.overhang_min_ns {
        return None;
    }
    let (mut total, mut after) = (0i64, 0i64);
    for &(_, op) in work {
        let (s, e) = ctx.op_span(op);
        total = total.saturating_add(e.saturating_sub(s).max(0));
        after = after.saturating_add(e.saturating_sub(s.max(range.end)).max(0));
    }
    if total <= 0 || (after as f64) < t.overhang_min_share * total as f64 {
        return None;
    }
    let timer = timer_evidence(ctx, r, work);
    if timer.is_none() && iteration_waits(ctx, r, gpu_end) {
        return None;
    }
    let mut events = vec![ctx.range_event(r)];
    let mut apis: Vec<usize> = work.iter().map(|&(api, _)| api).collect();
    apis.dedup();
    events.extend(apis.iter().map(|&a| EventId::new(EventKind::Api, a as u32)));
    events.extend(work.iter().map(|&(_, op)| EventId::from(op)));
    let path = ctx.path(r);
    let gpu_start = work
        .iter()
        .map(|&(_, op)| ctx.op_span(op).0)
        .min()
        .unwrap_or(range.start);
    let note = |message: String, fix: &'static str| Finding {
        kind: FindingKind::RangeEndsBeforeGpuWork,
        severity: Severity::Info,
        start: range.start,
        end: range.end,
        message,
        range: Some(path.clone()),
        events: events.clone(),
        fix,
    };
    let Some(why) = timer else {
        let device = idle.device_of(last);
        let gpu = human_ns(gpu_end.saturating_sub(gpu_start));
        let name = ctx.trace.name(range.name);
        let finding = if is_pipelined_phase(ctx, idle, t, r, (gpu_start, gpu_end, device)) {
            note(
                format!(
                    "phase '{name}': GPU work {gpu}, ends {} after the range — see NVTX on GPU",
                    human_ns(overhang),
                ),
                PHASE_NOTE,
            )
        } else {
            note(
                format!(
                    "'{name}' ends {} before its GPU work ({gpu}) finishes: it covers the \
                     launch, not the work",
                    human_ns(overhang),
                ),
                LAUNCH_NOTE,
            )
        };
        return Some((last, finding));
    };
    Some((
        last,
        Finding {
            kind: FindingKind::RangeEndsBeforeGpuWork,
            severity: Severity::Warning,
            start: range.start,
            end: range.end,
            message: format!(
                "'{path}' ({}) ends {} before the GPU work it launched finishes ({} op{}, {} of GPU \
             time, {:.0}% of it after the range) and nothing in it waits for the rest: used as a \
             timer ({why}), it measured the launch, not the work",
                human_ns(range.end.saturating_sub(range.start)),
                human_ns(overhang),
                work.len(),
                if work.len() == 1 { "" } else { "s" },
                human_ns(total),
                after as f64 * 100.0 / total as f64,
            ),
            range: Some(path),
            events,
            fix: ENDS_BEFORE_FIX,
        },
    ))
}

/// The latest-ending GPU op of `stream` launched before `time`.
///
/// A stream runs its work in the order it was launched, so on each of its
/// tracks (kernels, copies, sets: each sorted by start) the ops launched
/// before `time` are a prefix, found by binary search on their API calls'
/// starts, and the last ones of that prefix end last. No index to build.
fn pending_on_stream(ctx: &Context, stream: usize, time: Ns) -> Option<(Ns, GpuOp)> {
    let trace = ctx.trace;
    let s = trace.streams.get(stream)?;
    let process = trace.correlation.of_process(s.pid);
    let mut best: Option<(Ns, GpuOp)> = None;
    for (kind, track) in s.work_tracks() {
        let (spans, correlation) = match kind {
            GpuOpKind::Kernel => (&trace.kernels.spans, &trace.kernels.correlation),
            GpuOpKind::Memcpy => (&trace.memcpys.spans, &trace.memcpys.correlation),
            _ => (&trace.memsets.spans, &trace.memsets.correlation),
        };
        let launch = |row: u32| -> Ns {
            let row = row as usize;
            correlation
                .get(row)
                .and_then(|&c| process.api_call(c))
                .map_or(spans.start[row], |api| {
                    trace.cuda_api.spans.start[api as usize]
                })
        };
        // partition_point over the track's positions, the track read as one
        // run: a capture's track is a run per snapshot, and a search of each
        // made the engine's time grow with events × snapshots.
        let launch_at = |position: usize| track.row_at(position).map_or(Ns::MAX, launch);
        let (mut a, mut b) = (0, track.len());
        while a < b {
            let mid = a + (b - a) / 2;
            if launch_at(mid) < time {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        // A few before the boundary, in case two launches raced.
        for row in (a.saturating_sub(4)..a).filter_map(|p| track.row_at(p)) {
            let end = spans.end(row as usize);
            if best.is_none_or(|(e, _)| end > e) {
                best = Some((end, GpuOp { kind, index: row }));
            }
        }
    }
    best
}

pub(super) fn waits_on_earlier_work(
    ctx: &Context,
    t: &Thresholds,
    out: &mut Vec<Finding>,
    cancel: &AtomicBool,
) -> Result<(), Cancelled> {
    let trace = ctx.trace;
    let streams_of_pid = |pid: u32| -> Vec<usize> {
        (0..trace.streams.len())
            .filter(|&s| trace.streams[s].pid == pid)
            .collect()
    };
    let mut reported: HashSet<usize> = HashSet::new();
    for (n, r) in deepest_first(ctx).into_iter().enumerate() {
        if n % 4096 == 0 {
            check(cancel)?;
        }
        let range = &ctx.ranges[r];
        let pid = trace.threads[range.thread as usize].pid;
        let calls = ctx.api_calls(range.thread, range.start, range.end);
        let Some(first_launch) = calls
            .clone()
            .find(|&api| ctx.work_of(range.thread, api).next().is_some())
        else {
            continue;
        };
        let launched_at = ctx.api_span(first_launch).0;
        // The sync (after the range's first launch) that waited longest for earlier work.
        let mut worst: Option<(Ns, usize, GpuOp)> = None;
        for api in calls.filter(|&a| a > first_launch) {
            let class = ctx.class(api);
            let streams: Vec<usize> = match class {
                ApiClass::DeviceSync => streams_of_pid(pid),
                ApiClass::StreamSync => ctx
                    .syncs_of(range.thread, api)
                    .next()
                    .and_then(|op| trace.stream_of(op))
                    .map(|s| vec![s as usize])
                    .unwrap_or_default(),
                ApiClass::BlockingCopy => ctx
                    .work_of(range.thread, api)
                    .next()
                    .and_then(|op| trace.stream_of(op))
                    .map(|s| vec![s as usize])
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            let Some((earlier_end, earlier_op)) = streams
                .iter()
                .filter_map(|&s| pending_on_stream(ctx, s, range.start))
                .max_by_key(|p| p.0)
            else {
                continue;
            };
            let (s_start, s_end) = ctx.api_span(api);
            let waited = earlier_end
                .min(s_end)
                .saturating_sub(s_start.max(launched_at));
            if waited >= t.earlier_wait_min_ns && worst.is_none_or(|w| waited > w.0) {
                worst = Some((waited, api, earlier_op));
            }
        }
        let Some((waited, api, earlier_op)) = worst else {
            continue;
        };
        if !reported.insert(api) {
            continue;
        }
        let path = ctx.path(r);
        let (s_start, s_end) = ctx.api_span(api);
        out.push(Finding {
            kind: FindingKind::RangeWaitsOnEarlierWork,
            severity: Severity::Warning,
            start: range.start,
            end: range.end,
            message: format!(
                "in '{path}', {} waited {} of which {} for GPU work launched before the range \
                 began: the range's time includes earlier queued work",
                ctx.api_name(api),
                human_ns(s_end.saturating_sub(s_start)),
                human_ns(waited),
            ),
            range: Some(path),
            events: vec![
                ctx.range_event(r),
                EventId::new(EventKind::Api, api as u32),
                EventId::from(earlier_op),
            ],
            fix: WAITS_ON_EARLIER_FIX,
        });
    }
    Ok(())
}

/// The timing facts of one NVTX range, for explaining a verdict (including
/// "no finding": e.g. that the earlier work had drained before the range's
/// sync began, so a sync after the launch happened to measure correctly).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeTiming {
    pub start: Ns,
    pub end: Ns,
    /// First start and last end of the GPU work launched from inside the range.
    pub gpu_work: Option<(Ns, Ns)>,
    /// The first sync (device, stream or event sync, blocking copy) that
    /// starts after the range's first launch: its start and end.
    pub sync_after_launch: Option<(Ns, Ns)>,
    /// When the latest-ending GPU work of the process launched before the
    /// range began ended: before `sync_after_launch`'s start means it had
    /// drained, after it means the sync waited for it too.
    pub earlier_work_end: Option<Ns>,
}

/// [`RangeTiming`] for the NVTX range in row `nvtx_row` of `Trace::nvtx`;
/// `None` for a mark, an unended range or a row that does not exist.
pub(super) fn range_timing(ctx: &Context, nvtx_row: u32) -> Option<RangeTiming> {
    let r = ctx.ranges.iter().position(|r| r.index == nvtx_row)?;
    let range = &ctx.ranges[r];
    if range.unended {
        return None;
    }
    let work = range_work(ctx, r);
    let gpu_work = work.iter().fold(None, |acc: Option<(Ns, Ns)>, &(_, op)| {
        let (s, e) = ctx.op_span(op);
        Some(acc.map_or((s, e), |(a, b)| (a.min(s), b.max(e))))
    });
    let sync_after_launch = work.first().and_then(|&(first_launch, _)| {
        ctx.api_calls(range.thread, range.start, range.end)
            .filter(|&a| a > first_launch && ctx.class(a).is_sync())
            .map(|a| ctx.api_span(a))
            .next()
    });
    let pid = ctx.trace.threads[range.thread as usize].pid;
    let earlier_work_end = (0..ctx.trace.streams.len())
        .filter(|&s| ctx.trace.streams[s].pid == pid)
        .filter_map(|s| pending_on_stream(ctx, s, range.start))
        .map(|(end, _)| end)
        .max();
    Some(RangeTiming {
        start: range.start,
        end: range.end,
        gpu_work,
        sync_after_launch,
        earlier_work_end,
    })
}

/// For every ended NVTX range that launched GPU work: its row in `Trace::nvtx`
/// and the first start and last end of that work.
pub(super) fn range_gpu_spans(
    ctx: &Context,
    cancel: &AtomicBool,
) -> Result<Vec<RangeWork>, Cancelled> {
    let mut out = Vec::new();
    for (r, range) in ctx.ranges.iter().enumerate() {
        if r % 4096 == 0 {
            check(cancel)?;
        }
        if range.unended {
            continue;
        }
        if let Some((s, e)) = work_span(ctx, &range_work(ctx, r)) {
            out.push((range.index, s, e));
        }
    }
    Ok(out)
}

/// The first start and last end of `work`, if any.
fn work_span(ctx: &Context, work: &[(usize, GpuOp)]) -> Option<(Ns, Ns)> {
    work.iter()
        .map(|&(_, op)| ctx.op_span(op))
        .reduce(|(a, b), (s, e)| (a.min(s), b.max(e)))
}
