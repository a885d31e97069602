//! Idle-gap attribution: for every interval in which a GPU (or a stream) has
//! no work, what the thread that launches the next work was doing meanwhile.
//!
//! A gap runs from the moment the GPU's last running operation (kernel, copy,
//! set) ends to the start of the next one. The next operation's API call
//! names the thread that launched it (its correlation id); that thread's CUDA
//! API calls during the gap say where the time went:
//!
//! - [`Cause::Sync`]: waiting in a device, stream or event sync, a blocking copy or memset;
//! - [`Cause::Alloc`]: allocating or freeing (`cudaMalloc*`, `cudaFree*`, `cuMemAlloc*`,
//!   `cuMemFree*`, pinned host allocation and registration);
//! - [`Cause::PageableCopy`]: an asynchronous copy whose copy record says pageable memory
//!   (the call stages the data on the CPU before it returns);
//! - [`Cause::Launch`]: a launch call, or any other call that put work on the GPU;
//! - [`Cause::OtherCuda`]: any other CUDA call (event records, queries, ...);
//! - [`Cause::Outside`]: no CUDA call at all: host code, Python, data loading;
//! - [`Cause::OsWait`]: no CUDA call, inside an OS call the report records (a wait:
//!   `pthread_cond_wait`, `poll`, `recv`; a rank waiting for its peers in a collective);
//! - [`Cause::Unknown`]: the next operation has no API call in the report.
//!
//! Work handed off: when the next operation was launched while another CUDA
//! thread of the process waited for a thread (`pthread_cond_wait`, `sem_wait`,
//! a join: PyTorch's main thread in `loss.backward()` while its autograd
//! thread launches), the gap is walked on that waiting thread until its wait
//! began, and on the launching thread after ([`Gap::handed_by`], `handoff.rs`).
//!
//! Every nanosecond of a gap has exactly one cause (nested calls count for the
//! outer call), so the causes add up to the idle time. No UI here: the
//! findings, the CLI's `gpu_idle_sum` and the viewer's "GPU idle — why" row
//! all read [`Attribution`].

mod blocks;
mod cause;
mod functions;
mod gap;
mod handoff;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::AtomicBool;

use super::api_class::{ApiClass, ApiClasses};
use super::cancel::{Cancelled, check};
use super::format::human_ns;
use crate::analysis::table::{Cell, Table};
use crate::model::{
    EventKind, GpuOp, GpuOpKind, Lineage, Ns, ProcessCorrelation, Run, SpanColumns, StrId, Trace,
};
use blocks::Blocks;
pub use blocks::GapsIn;
pub use cause::{CAUSES, Cause, CauseTimes, dominant, verdict};
pub use gap::Gap;
use handoff::Waiters;

/// The shortest OS call that is a wait ([`Cause::OsWait`]): shorter ones are the cost of
/// the thread's own work (a lock passed on, a read served at once). A Python thread under
/// nsys's Python sampler waits ~8 µs for the interpreter's lock at every sample: counted as
/// waits, they cut its CPU work into pieces that hold none of its samples.
pub const OS_WAIT_MIN_NS: Ns = 100_000;

/// What a gap is measured on: a whole GPU, or each stream on its own.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Lanes {
    /// Per device: a gap is when no stream of the device runs anything.
    Device,
    /// Per stream (index into `Trace::streams`).
    Stream,
}

/// A lane's active span: its first operation's start to its last one's end.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LaneSpan {
    pub lane: u32,
    pub start: Ns,
    pub end: Ns,
}

/// One lane's active span and its gaps, in time order.
#[derive(Clone, Debug, Default)]
pub struct LaneGaps {
    pub span: Option<LaneSpan>,
    gaps: Blocks,
    /// Where the merge of the lane's operations can be taken up again when
    /// its trace grows, in time order (see [`Attribution::extended`]).
    checkpoints: Vec<Checkpoint>,
}

/// The merge of a lane's operations between two of them: every operation
/// starting before `at` taken in, none at or after it.
#[derive(Copy, Clone, Debug)]
struct Checkpoint {
    at: Ns,
    /// How many gaps the lane had then.
    gaps: usize,
    /// The latest end of the operations taken in, and the first start.
    reach: Option<Ns>,
    first: Option<Ns>,
}

impl Checkpoint {
    const START: Checkpoint = Checkpoint {
        at: Ns::MIN,
        gaps: 0,
        reach: None,
        first: None,
    };
}

/// A checkpoint every this many operations merged: an extension merges
/// again at most this many of the operations it already had, beyond those
/// after the earliest time its new rows can touch. A checkpoint is 40
/// bytes: a sixth of a byte an operation.
const CHECKPOINT_EVERY: usize = 256;

/// Every gap of every lane: per lane (by lane number) its span and its
/// gaps in time order.
#[derive(Clone, Debug)]
pub struct Attribution {
    lanes: Vec<(u32, LaneGaps)>,
    /// What an extension must check to take this attribution up again
    /// (None: it cannot be, as for [`Lanes::Stream`], whose lane numbers a
    /// growing trace may give to other streams).
    grown_from: Option<Basis>,
    /// Operations merged to make this attribution (all of them, or those
    /// an extension merged again and anew).
    merged: usize,
    /// Operations merged between two checkpoints ([`CHECKPOINT_EVERY`]
    /// unless a test asks for more checkpoints).
    checkpoint_every: usize,
    /// What a lane is: a whole GPU, or a stream.
    lanes_of: Lanes,
    /// Before this time, the extension that made this attribution changed
    /// nothing: not a gap, not a call's cause, no call (`Ns::MIN` when made
    /// whole). A summary of a window that ends by then is the earlier one's.
    settled_until: Ns,
}

impl Default for Attribution {
    fn default() -> Self {
        Attribution {
            lanes: Vec::new(),
            grown_from: None,
            merged: 0,
            checkpoint_every: CHECKPOINT_EVERY,
            settled_until: Ns::MIN,
            lanes_of: Lanes::Device,
        }
    }
}

/// Two attributions are equal when their lanes' spans and gaps are: how
/// they were reached (whole or extended, checkpoints) is not compared.
impl PartialEq for Attribution {
    fn eq(&self, other: &Self) -> bool {
        self.lanes.len() == other.lanes.len()
            && (self.lanes.iter().zip(&other.lanes))
                .all(|((a, x), (b, y))| a == b && x.span == y.span && x.gaps == y.gaps)
    }
}

/// The state of the trace an attribution was made from: a later state of
/// the same report is taken up from it when its events kept their indexes.
#[derive(Clone, Debug)]
struct Basis {
    lineage: Lineage,
    /// The threads' global ids: gaps name threads by index.
    threads: Vec<i64>,
    /// Rows of the API calls and of each kind of GPU work.
    api_rows: usize,
    work_rows: [usize; 3],
    /// OS runtime calls and NVTX ranges: a wait, or a range around one,
    /// changes which gaps after it were handed off (`handoff.rs`).
    osrt_rows: usize,
    nvtx_rows: usize,
}

/// The GPU work kinds a lane's merge takes in, as [`Basis::work_rows`]'s index.
const WORK_KINDS: [GpuOpKind; 3] = [GpuOpKind::Kernel, GpuOpKind::Memcpy, GpuOpKind::Memset];

impl Basis {
    fn of(trace: &Trace) -> Basis {
        Basis {
            lineage: trace.lineage.clone(),
            threads: trace.threads.iter().map(|t| t.global_tid).collect(),
            api_rows: trace.cuda_api.spans.len(),
            work_rows: WORK_KINDS.map(|k| trace.gpu_spans(k).len()),
            osrt_rows: trace.osrt.spans.len(),
            nvtx_rows: trace.nvtx.spans.len(),
        }
    }

    /// Whether `trace` holds every event this state had at the same index,
    /// with the same threads at the same indexes.
    fn grew_into(&self, trace: &Trace) -> bool {
        let kept = |kind| trace.lineage.keeps_indexes_of(&self.lineage, kind);
        [
            EventKind::Api,
            EventKind::Kernel,
            EventKind::Memcpy,
            EventKind::Memset,
            EventKind::Osrt,
            EventKind::Nvtx,
        ]
        .into_iter()
        .all(kept)
            && trace.cuda_api.spans.len() >= self.api_rows
            && trace.osrt.spans.len() >= self.osrt_rows
            && trace.nvtx.spans.len() >= self.nvtx_rows
            && (WORK_KINDS.iter().zip(self.work_rows)).all(|(&k, n)| trace.gpu_spans(k).len() >= n)
            && trace.threads.len() >= self.threads.len()
            && (trace.threads.iter().zip(&self.threads)).all(|(t, &tid)| t.global_tid == tid)
    }

    /// The earliest time from which what `trace` adds to this state can
    /// change its gaps (`lanes`): the start of every new GPU operation and
    /// of an older operation a new call launched (its gap's thread); and
    /// the end of the first gap that overlaps a new call or an older call
    /// whose cause a new operation changes (an async copy is a pageable
    /// copy by its copy's record; another call counts as a launch once it
    /// has put work on the GPU): a call changes only the walks of the gaps
    /// it overlaps, and such a gap is found again from the checkpoint
    /// before the operation that ends it. `Ns::MAX` when nothing new.
    fn touched_from(
        &self,
        trace: &Trace,
        classifier: &Classifier,
        lanes: &[(u32, LaneGaps)],
    ) -> Ns {
        let mut from = Ns::MAX;
        // A new wait, or a new range around an older one, hands off the
        // work launched in it: the gaps that work ends start after it does.
        if classifier.waiters.any() {
            let (osrt, nvtx) = (&trace.osrt.spans, &trace.nvtx.spans);
            let new_starts = (osrt.start.get(self.osrt_rows..).unwrap_or_default().iter())
                .chain(nvtx.start.get(self.nvtx_rows..).unwrap_or_default());
            from = new_starts.fold(from, |f, &s| f.min(s));
        }
        let api = &trace.cuda_api;
        let call_reaches =
            |call: usize| first_gap_overlapping(lanes, api.spans.start[call], api.spans.end(call));
        for thread in &trace.threads {
            let process = trace.correlation.of_process(thread.pid);
            for row in new_rows(&thread.cuda_api, self.api_rows) {
                from = from.min(call_reaches(row));
                let Some(&id) = api.correlation.get(row) else {
                    continue;
                };
                for op in process.gpu_ops(id) {
                    if let Some(k) = WORK_KINDS.iter().position(|&k| k == op.kind)
                        && (op.index as usize) < self.work_rows[k]
                    {
                        from = from.min(trace.gpu_spans(op.kind).start[op.index as usize]);
                    }
                }
            }
        }
        for stream in &trace.streams {
            let process = trace.correlation.of_process(stream.pid);
            for (k, (kind, track)) in stream.work_tracks().into_iter().enumerate() {
                let correlation = gpu_correlation(trace, kind);
                for row in new_rows(track, self.work_rows[k]) {
                    from = from.min(trace.gpu_spans(kind).start[row]);
                    let launch = correlation.get(row).and_then(|&id| process.api_call(id));
                    if let Some(call) = launch.map(|c| c as usize)
                        && call < self.api_rows
                        && classifier.cause_follows_work(call)
                    {
                        from = from.min(call_reaches(call));
                    }
                }
            }
        }
        from
    }
}

/// The end of the earliest gap, of any lane, that overlaps `[start, end)`
/// (`Ns::MAX`: none does).
fn first_gap_overlapping(lanes: &[(u32, LaneGaps)], start: Ns, end: Ns) -> Ns {
    let mut first = Ns::MAX;
    for (_, lane) in lanes {
        let gaps = &lane.gaps;
        let at = gaps.partition_point(0, usize::MAX, |g| g.end <= start);
        if let Some(g) = gaps.get(at)
            && g.start < end
        {
            first = first.min(g.end);
        }
    }
    first
}

/// The rows of `track` at or past row `known` (a growing trace adds a run
/// per snapshot at the end of its tables, so they are its last runs).
fn new_rows(track: &crate::model::Track, known: usize) -> impl Iterator<Item = usize> + '_ {
    let runs = track.runs();
    let first_new = runs.partition_point(|r| r.rows().end <= known);
    runs[first_new..]
        .iter()
        .flat_map(move |r| r.rows().start.max(known)..r.rows().end)
}

/// The correlation ids of a GPU operation kind's rows.
fn gpu_correlation(trace: &Trace, kind: GpuOpKind) -> &crate::model::Column<u32> {
    match kind {
        GpuOpKind::Kernel => &trace.kernels.correlation,
        GpuOpKind::Memcpy => &trace.memcpys.correlation,
        GpuOpKind::Memset => &trace.memsets.correlation,
        GpuOpKind::Sync => &trace.syncs.correlation,
    }
}

impl Attribution {
    /// One gap alone, as a lane of its own (a tooltip's summary).
    pub fn of_gap(gap: Gap) -> Attribution {
        let mut lane = LaneGaps {
            span: Some(LaneSpan {
                lane: gap.lane,
                start: gap.start,
                end: gap.end,
            }),
            gaps: Blocks::default(),
            checkpoints: Vec::new(),
        };
        lane.gaps.push(gap);
        Attribution {
            lanes: vec![(gap.lane, lane)],
            ..Attribution::default()
        }
    }

    /// This attribution, whose extensions leave a checkpoint every `every`
    /// operations they merge (tests: many checkpoints on a small report).
    #[doc(hidden)]
    pub fn checkpoints_every(mut self, every: usize) -> Attribution {
        self.checkpoint_every = every.max(1);
        self
    }

    /// Every gap, lane after lane, each lane's in time order.
    pub fn gaps(&self) -> impl Iterator<Item = &Gap> {
        self.lanes.iter().flat_map(|(_, l)| l.gaps.iter())
    }

    pub fn gap_count(&self) -> usize {
        self.lanes.iter().map(|(_, l)| l.gaps.len()).sum()
    }

    /// Each lane's active span, by lane (lanes that never ran anything have none).
    pub fn spans(&self) -> impl Iterator<Item = LaneSpan> + '_ {
        self.lanes.iter().filter_map(|(_, l)| l.span)
    }

    /// How many GPU operations were merged to make this attribution: all of
    /// the trace's, or, extended, those after its checkpoint.
    pub fn merged(&self) -> usize {
        self.merged
    }

    /// Whether `trace` is this attribution's trace or a later state of the
    /// same report that holds its events at the same indexes: what it
    /// shows stays true of `trace` up to where `trace` adds to it.
    pub fn fits(&self, trace: &Trace) -> bool {
        self.grown_from.as_ref().is_some_and(|b| b.grew_into(trace))
    }

    /// The time before which the extension that made this attribution
    /// changed nothing ([`Attribution::extended`]): no gap, no call, no
    /// call's cause, no lane's span there. `Ns::MIN` when it was made whole.
    pub fn settled_until(&self) -> Ns {
        self.settled_until
    }

    fn lane(&self, lane: u32) -> Option<&LaneGaps> {
        let at = self.lanes.binary_search_by_key(&lane, |(l, _)| *l).ok()?;
        Some(&self.lanes[at].1)
    }

    /// The gaps of `lane` that overlap `[from, to)`.
    pub fn gaps_in(&self, lane: u32, from: Ns, to: Ns) -> GapsIn<'_> {
        let Some(gaps) = self.lane(lane).map(|l| &l.gaps) else {
            return GapsIn::none();
        };
        let lo = gaps.partition_point(0, usize::MAX, |g| g.end <= from);
        let hi = gaps.partition_point(0, usize::MAX, |g| g.start < to);
        GapsIn::new(gaps, lo, hi)
    }

    /// `lane`'s idle time in `[from, to)` and why, from the gaps alone (no
    /// walk over the calls, so a detector can judge thousands of windows):
    /// None when the lane never ran anything.
    pub fn idle_share(&self, lane: u32, from: Ns, to: Ns) -> Option<IdleShare> {
        let span = self.lane(lane)?.span?;
        let mut share = IdleShare {
            lane,
            span: to.min(span.end).saturating_sub(from.max(span.start)).max(0),
            idle: 0,
            verdicts: [0; CAUSES],
        };
        for gap in self.gaps_in(lane, from, to).iter() {
            let ns = gap.end.min(to).saturating_sub(gap.start.max(from)).max(0);
            share.idle = share.idle.saturating_add(ns);
            let slot = gap.verdict.slot();
            share.verdicts[slot] = share.verdicts[slot].saturating_add(ns);
        }
        Some(share)
    }

    /// The attribution of `trace`, a later state of the report this one
    /// was made from: each lane's merge taken up at its last checkpoint
    /// before anything `trace` adds can change a gap, so the cost is what
    /// came since, not the whole trace. Equal to [`attribute`] of `trace`;
    /// computed whole when `trace` is not such a state (another report, or
    /// events numbered anew).
    pub fn extended(self, trace: &Trace, cancel: &AtomicBool) -> Result<Attribution, Cancelled> {
        let classifier = Classifier::new(trace);
        let from = match &self.grown_from {
            Some(basis) if basis.grew_into(trace) => {
                basis.touched_from(trace, &classifier, &self.lanes)
            }
            _ => {
                let whole = attribute_with(&classifier, self.lanes_of, cancel)?;
                return Ok(whole.checkpoints_every(self.checkpoint_every));
            }
        };
        let every = self.checkpoint_every;
        let mut lanes = self.lanes;
        let mut merged = 0;
        let mut settled = from;
        let mut hints = WalkHints::default();
        for (lane, streams) in lane_streams(trace, Lanes::Device) {
            check(cancel)?;
            let at = lanes.partition_point(|(l, _)| *l < lane);
            if lanes.get(at).is_none_or(|(l, _)| *l != lane) {
                lanes.insert(at, (lane, LaneGaps::default()));
            }
            let gaps = &mut lanes[at].1;
            let plan = LaneMerge {
                lane,
                streams: &streams,
                from,
                every,
            };
            let (count, lane_settled) = merge_lane(&classifier, &plan, gaps, &mut hints, cancel)?;
            merged += count;
            settled = settled.min(lane_settled);
        }
        lanes.retain(|(_, l)| l.span.is_some());
        Ok(Attribution {
            lanes,
            grown_from: Some(Basis::of(trace)),
            merged,
            checkpoint_every: every,
            settled_until: settled,
            lanes_of: Lanes::Device,
        })
    }
}

/// A lane's idle time over a window, and why ([`Attribution::idle_share`]).
#[derive(Clone, Debug, PartialEq)]
pub struct IdleShare {
    pub lane: u32,
    /// The window's time inside the lane's active span.
    pub span: Ns,
    pub idle: Ns,
    /// Idle time per gap verdict, as in [`IdleSummary::verdicts`].
    pub verdicts: CauseTimes,
}

/// Per thread, the position in its API track where its last walk began,
/// and the run it began in.
#[derive(Clone, Debug, Default)]
pub struct WalkHints(Vec<usize>, Vec<usize>, usize);

impl WalkHints {
    /// The first of `runs` (a thread's API track's; `spans`: the table's)
    /// whose last call starts at or after `from`, less one: the last run
    /// that may hold a call covering `from`. Searched forward from the
    /// thread's last answer by doubling steps when every run below that one
    /// still ends before `from` (walks go gap after gap), else by a binary
    /// search: a capture's track is a run per snapshot, and a binary search
    /// of thousands of runs was much of each gap's walk.
    fn first_run(&mut self, thread: u32, runs: &[Run], spans: &SpanColumns, from: Ns) -> usize {
        let t = thread as usize;
        if self.1.len() <= t {
            self.1.resize(t + 1, 0);
        }
        let before = |r: &Run| spans.start.get(r.rows().end - 1).is_some_and(|&s| s < from);
        let was = self.1[t];
        let after = if was > 0 && was <= runs.len() && before(&runs[was - 1]) {
            // Every run below `lo` ends its starts before `from`.
            let (mut lo, mut step) = (was, 1);
            while lo + step <= runs.len() && before(&runs[lo + step - 1]) {
                lo += step;
                step *= 2;
            }
            let hi = (lo + step).min(runs.len());
            lo + runs[lo..hi].partition_point(before)
        } else {
            runs.partition_point(before)
        };
        self.1[t] = after;
        after.saturating_sub(1)
    }

    /// The first index of `starts` (sorted; the starts of rows `base..` of
    /// one run of `thread`'s calls) at or after `from`, searched forward
    /// from `thread`'s last answer by doubling steps, or over the whole slice
    /// when `from` lies before it. The answer is remembered as a row, so a
    /// hint from another run of the thread only costs a wider search.
    fn seek(&mut self, thread: u32, starts: &[Ns], base: usize, from: Ns) -> usize {
        let t = thread as usize;
        if self.0.len() <= t {
            self.0.resize(t + 1, 0);
        }
        let hint = self.0[t].saturating_sub(base).min(starts.len());
        let found = if hint > 0 && starts[hint - 1] >= from {
            starts.partition_point(|&s| s < from)
        } else {
            // Every index below `hint` starts before `from`: gallop from it.
            let (mut lo, mut step) = (hint, 1);
            while lo + step < starts.len() && starts[lo + step] < from {
                lo += step;
                step *= 2;
            }
            let hi = (lo + step).min(starts.len());
            lo + starts[lo..hi].partition_point(|&s| s < from)
        };
        self.0[t] = base + found;
        found
    }
}

/// Classifies API calls and walks a thread's calls over an interval.
pub struct Classifier<'a> {
    trace: &'a Trace,
    classes: ApiClasses,
    /// `(first api row, end, thread)` of every run of every thread's API
    /// track, by first row.
    tracks: Vec<(u32, u32, u32)>,
    /// Each track's process correlations, in `tracks` order: looked up once
    /// here instead of hashed for every call walked.
    correlations: Vec<ProcessCorrelation<'a>>,
    /// Every process's correlations, for the launcher of an op.
    processes: Vec<(u32, ProcessCorrelation<'a>)>,
    /// The CUDA threads' waits for a thread, for work handed off.
    waiters: Waiters,
}

impl<'a> Classifier<'a> {
    pub fn new(trace: &'a Trace) -> Classifier<'a> {
        let classes = ApiClasses::of(trace);
        let mut tracks: Vec<(u32, u32, u32)> = trace
            .threads
            .iter()
            .enumerate()
            .flat_map(|(i, t)| {
                t.cuda_api
                    .runs()
                    .iter()
                    .map(move |r| (r.events.start, r.events.end, i as u32))
            })
            .collect();
        tracks.sort_unstable();
        let pid = |thread: u32| trace.threads[thread as usize].pid;
        let correlations = tracks
            .iter()
            .map(|t| trace.correlation.of_process(pid(t.2)))
            .collect();
        let mut pids: Vec<u32> = trace.streams.iter().map(|s| s.pid).collect();
        pids.extend(tracks.iter().map(|t| pid(t.2)));
        pids.sort_unstable();
        pids.dedup();
        let processes = pids
            .into_iter()
            .map(|p| (p, trace.correlation.of_process(p)))
            .collect();
        Classifier {
            trace,
            classes,
            tracks,
            correlations,
            processes,
            waiters: Waiters::of(trace),
        }
    }

    pub fn trace(&self) -> &'a Trace {
        self.trace
    }

    pub fn class(&self, api: usize) -> ApiClass {
        self.classes.of_call(self.trace, api)
    }

    /// The thread an API call was made on.
    pub fn thread_of_api(&self, api: u32) -> Option<u32> {
        let at = self.tracks.partition_point(|t| t.0 <= api);
        let &(start, end, thread) = self.tracks.get(at.checked_sub(1)?)?;
        (start <= api && api < end).then_some(thread)
    }

    /// [`Classifier::thread_of_api`], looked up first in the run the last
    /// call was found in (`hint`): one gap's launch is mostly in the same
    /// run as the last one's, and a capture has thousands of runs.
    fn thread_of_api_near(&self, api: u32, hint: &mut usize) -> Option<u32> {
        if let Some(&(start, end, thread)) = self.tracks.get(*hint)
            && start <= api
            && api < end
        {
            return Some(thread);
        }
        let at = self.tracks.partition_point(|t| t.0 <= api).checked_sub(1)?;
        *hint = at;
        let &(start, end, thread) = self.tracks.get(at)?;
        (start <= api && api < end).then_some(thread)
    }

    /// The correlations of the process that made API call `api`.
    fn correlation_of_api(&self, api: usize) -> Option<ProcessCorrelation<'a>> {
        let at = self.tracks.partition_point(|t| t.0 as usize <= api);
        let i = at.checked_sub(1)?;
        let &(start, end, _) = self.tracks.get(i)?;
        ((start as usize) <= api && api < end as usize).then(|| self.correlations[i])
    }

    /// The GPU operations (not sync records) the call put on the GPU.
    fn work_of(&self, api: usize) -> impl Iterator<Item = GpuOp> + 'a {
        let correlation = self.trace.cuda_api.correlation.get(api).copied();
        self.correlation_of_api(api)
            .zip(correlation)
            .into_iter()
            .flat_map(|(process, c)| process.gpu_ops(c))
            .filter(|op| op.kind != GpuOpKind::Sync)
    }

    /// Whether an asynchronous copy's record says pageable host memory.
    fn copies_pageable(&self, api: usize) -> bool {
        let m = &self.trace.memcpys;
        self.work_of(api).any(|op| {
            op.kind == GpuOpKind::Memcpy
                && [&m.src_kind, &m.dst_kind]
                    .iter()
                    .any(|k| k.get(op.index as usize) == Some(&0))
        })
    }

    /// Whether the cause of API call `api` depends on the GPU work it put
    /// on the GPU (whose records may come after the call's).
    fn cause_follows_work(&self, api: usize) -> bool {
        matches!(self.class(api), ApiClass::AsyncCopy | ApiClass::Other)
    }

    /// What the time in API call `api` counts as.
    pub fn cause(&self, api: usize) -> Cause {
        match self.class(api) {
            ApiClass::DeviceSync
            | ApiClass::StreamSync
            | ApiClass::EventSync
            | ApiClass::BlockingCopy
            | ApiClass::BlockingSet => Cause::Sync,
            ApiClass::Alloc | ApiClass::Free => Cause::Alloc,
            ApiClass::AsyncCopy if self.copies_pageable(api) => Cause::PageableCopy,
            ApiClass::AsyncCopy | ApiClass::Launch => Cause::Launch,
            ApiClass::Other if self.work_of(api).next().is_some() => Cause::Launch,
            ApiClass::Other => Cause::OtherCuda,
        }
    }

    /// Walks `thread`'s time in `[from, to)`: `visit(call, cause, ns)` for
    /// each stretch, `call` None for time outside any CUDA call. Nested calls
    /// count for the outer one, so the stretches add up to `to - from`.
    /// `hints` remembers where each thread's last walk began: walks in time
    /// order (gap after gap) search forward from there instead of over the
    /// whole track.
    pub fn walk(
        &self,
        thread: u32,
        from: Ns,
        to: Ns,
        hints: &mut WalkHints,
        mut visit: impl FnMut(Option<usize>, Cause, Ns),
    ) {
        if to <= from {
            return;
        }
        let Some(t) = self.trace.threads.get(thread as usize) else {
            visit(None, Cause::Unknown, to.saturating_sub(from));
            return;
        };
        let spans = &self.trace.cuda_api.spans;
        let mut reach = from;
        // From the last run with a call starting before `from` (it may cover
        // `from`); the runs before it end their calls' starts earlier still.
        let runs = t.cuda_api.runs();
        let first_run = hints.first_run(thread, runs, spans, from);
        'runs: for run in &runs[first_run..] {
            let base = run.rows().start;
            let Some(starts) = spans.start.get(run.rows()) else {
                continue;
            };
            let first_after = hints.seek(thread, starts, base, from);
            // Calls on a thread rarely overlap but for nesting: the call
            // covering `from` is among the last few that start before it.
            let lo = first_after.saturating_sub(4);
            for i in lo..starts.len() {
                let api = base + i;
                let (s, e) = (spans.start[api], spans.end(api));
                if s >= to {
                    break 'runs;
                }
                let s = s.max(reach);
                let e = e.min(to);
                if e <= s {
                    continue;
                }
                if s > reach {
                    self.outside_cuda(t, reach, s, &mut visit);
                }
                visit(Some(api), self.cause(api), e.saturating_sub(s));
                reach = e;
            }
        }
        if reach < to {
            self.outside_cuda(t, reach, to, &mut visit);
        }
    }

    /// Visits thread `t`'s time `[from, to)` outside CUDA calls: inside its OS calls of
    /// [`OS_WAIT_MIN_NS`] or more (nested ones counting for the outer) as [`Cause::OsWait`],
    /// the rest as its own code ([`Cause::Outside`]).
    fn outside_cuda(
        &self,
        t: &crate::model::Thread,
        from: Ns,
        to: Ns,
        visit: &mut impl FnMut(Option<usize>, Cause, Ns),
    ) {
        let spans = &self.trace.osrt.spans;
        let mut reach = from;
        for run in t.osrt.runs_overlapping(spans, from, to) {
            let base = run.rows().start;
            let Some(starts) = spans.start.get(run.rows()) else {
                continue;
            };
            // A thread is in one OS call at a time but for nesting: the call covering
            // `from` is among the last few that start before it.
            let lo = starts.partition_point(|&s| s < from).saturating_sub(4);
            for (i, &start) in starts.iter().enumerate().skip(lo) {
                if start >= to {
                    break;
                }
                let end = spans.end(base + i);
                let (s, e) = (start.max(reach), end.min(to));
                if e <= s || end.saturating_sub(start) < OS_WAIT_MIN_NS {
                    continue;
                }
                if s > reach {
                    visit(None, Cause::Outside, s.saturating_sub(reach));
                }
                visit(None, Cause::OsWait, e.saturating_sub(s));
                reach = e;
            }
        }
        if reach < to {
            visit(None, Cause::Outside, to.saturating_sub(reach));
        }
    }

    /// The time per cause of `thread` (None: unknown) in `[from, to)`.
    pub fn breakdown(
        &self,
        thread: Option<u32>,
        from: Ns,
        to: Ns,
        hints: &mut WalkHints,
    ) -> CauseTimes {
        let mut times: CauseTimes = [0; CAUSES];
        match thread {
            Some(t) => self.walk(t, from, to, hints, |_, c, ns| {
                times[c.slot()] = times[c.slot()].saturating_add(ns)
            }),
            None if to > from => times[Cause::Unknown.slot()] = to.saturating_sub(from),
            None => {}
        }
        times
    }

    /// Walks a gap's `[from, to)` (see [`Classifier::walk`]): on the thread
    /// that handed its next work off ([`Gap::handed_by`]) until its wait
    /// began, then on the launching thread `thread`; all of it Unknown when
    /// the launching thread is not known. `visit(thread, call, cause, ns)`.
    pub fn walk_gap(
        &self,
        (thread, handed_by): (Option<u32>, Option<(u32, Ns)>),
        from: Ns,
        to: Ns,
        hints: &mut WalkHints,
        mut visit: impl FnMut(Option<u32>, Option<usize>, Cause, Ns),
    ) {
        let mut on = |t: u32, from: Ns, to: Ns, hints: &mut WalkHints| {
            self.walk(t, from, to, hints, |call, cause, ns| {
                visit(Some(t), call, cause, ns)
            });
        };
        match (thread, handed_by) {
            (None, _) if to > from => visit(None, None, Cause::Unknown, to.saturating_sub(from)),
            (None, _) => {}
            (Some(t), Some((by, waited_from))) if waited_from > from => {
                let handed = waited_from.min(to);
                on(by, from, handed, hints);
                on(t, handed, to, hints);
            }
            (Some(t), _) => on(t, from, to, hints),
        }
    }

    /// The launching thread of `op` and the thread that handed it off with
    /// when its wait began ([`Gap::handed_by`]), if any.
    fn launch_threads(
        &self,
        op: GpuOp,
        pid: u32,
        hints: &mut WalkHints,
    ) -> (Option<u32>, Option<(u32, Ns)>) {
        let Some((thread, api)) = self.launcher(op, pid, hints) else {
            return (None, None);
        };
        let handed_by = self.waiters.handed_by(self.trace, thread, api as usize);
        (Some(thread), handed_by)
    }

    /// The thread that launched `op` and its API call, from its correlation id.
    fn launcher(&self, op: GpuOp, pid: u32, hints: &mut WalkHints) -> Option<(u32, u32)> {
        let correlation = match op.kind {
            GpuOpKind::Kernel => &self.trace.kernels.correlation,
            GpuOpKind::Memcpy => &self.trace.memcpys.correlation,
            GpuOpKind::Memset => &self.trace.memsets.correlation,
            GpuOpKind::Sync => &self.trace.syncs.correlation,
        };
        let c = *correlation.get(op.index as usize)?;
        let at = self.processes.partition_point(|p| p.0 < pid);
        let &(found, process) = self.processes.get(at)?;
        let api = if found == pid {
            process.api_call(c)?
        } else {
            self.trace.correlation.api_call(pid, c)?
        };
        Some((self.thread_of_api_near(api, &mut hints.2)?, api))
    }
}

/// The operation tracks (kernels, copies, sets) of a set of streams, merged
/// by start: a heap of cursors, one a track, no copy of the rows. A track's
/// runs follow each other in time, so its cursor goes on from one run into
/// the next: a capture's track is a run per snapshot, and a cursor a run
/// made a heap of thousands.
struct Merge<'a> {
    trace: &'a Trace,
    cursors: Vec<Cursor<'a>>,
    heap: BinaryHeap<Reverse<(Ns, usize)>>,
}

/// Where a track's merge is: the row next, in which of its runs.
struct Cursor<'a> {
    kind: GpuOpKind,
    runs: &'a [crate::model::Run],
    run: usize,
    row: u32,
    pid: u32,
}

impl<'a> Merge<'a> {
    /// The merge of `streams`' operations that start at or after `from`;
    /// operations that start together come in the order of `streams`, then
    /// kernels, copies, sets.
    fn new(trace: &'a Trace, streams: &[usize], from: Ns) -> Merge<'a> {
        let mut cursors = Vec::new();
        for &s in streams {
            let st = &trace.streams[s];
            for (kind, track) in st.work_tracks() {
                let starts = &trace.gpu_spans(kind).start;
                let runs = track.runs();
                // A track's runs follow each other in time.
                let run = runs.partition_point(|r| {
                    r.is_empty() || starts.get(r.rows().end - 1).is_none_or(|&s| s < from)
                });
                let Some(found) = runs.get(run) else {
                    continue;
                };
                let skip =
                    (starts.get(found.rows()).unwrap_or_default()).partition_point(|&s| s < from);
                cursors.push(Cursor {
                    kind,
                    runs,
                    run,
                    row: found.events.start + skip as u32,
                    pid: st.pid,
                });
            }
        }
        let mut heap = BinaryHeap::new();
        for (i, c) in cursors.iter().enumerate() {
            heap.push(Reverse((trace.gpu_spans(c.kind).start[c.row as usize], i)));
        }
        Merge {
            trace,
            cursors,
            heap,
        }
    }
}

impl Iterator for Merge<'_> {
    /// `(start, end, op, pid)`.
    type Item = (Ns, Ns, GpuOp, u32);

    fn next(&mut self) -> Option<Self::Item> {
        let Reverse((start, i)) = self.heap.pop()?;
        let c = &mut self.cursors[i];
        let (kind, row, pid) = (c.kind, c.row, c.pid);
        let spans = self.trace.gpu_spans(kind);
        let end = spans.end(row as usize);
        let next = if row + 1 < c.runs[c.run].events.end {
            Some(row + 1)
        } else if let Some(run) = c.runs.get(c.run + 1) {
            c.run += 1;
            Some(run.events.start)
        } else {
            None
        };
        if let Some(next) = next {
            c.row = next;
            self.heap.push(Reverse((spans.start[next as usize], i)));
        }
        Some((start, end, GpuOp { kind, index: row }, pid))
    }
}

/// Finds every gap of every lane and names its dominant cause.
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use sightline::analysis::idle::{Lanes, attribute};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sync_timing.sqlite");
/// let trace = sightline::loader::load(path.as_ref(), &mut |_| {}, &AtomicBool::new(false))?;
/// let idle = attribute(&trace, Lanes::Device, &AtomicBool::new(false)).unwrap();
/// assert!(idle.gap_count() > 0);
/// assert!(idle.gaps().all(|g| g.start < g.end));
/// # Ok::<(), sightline::loader::LoadError>(())
/// ```
pub fn attribute(
    trace: &Trace,
    lanes: Lanes,
    cancel: &AtomicBool,
) -> Result<Attribution, Cancelled> {
    attribute_with(&Classifier::new(trace), lanes, cancel)
}

fn attribute_with(
    classifier: &Classifier,
    lanes: Lanes,
    cancel: &AtomicBool,
) -> Result<Attribution, Cancelled> {
    let trace = classifier.trace();
    let mut out = Attribution::default();
    let mut hints = WalkHints::default();
    for (lane, streams) in lane_streams(trace, lanes) {
        check(cancel)?;
        let mut gaps = LaneGaps::default();
        let plan = LaneMerge {
            lane,
            streams: &streams,
            from: Ns::MIN,
            every: CHECKPOINT_EVERY,
        };
        out.merged += merge_lane(classifier, &plan, &mut gaps, &mut hints, cancel)?.0;
        if gaps.span.is_some() {
            out.lanes.push((lane, gaps));
        }
    }
    out.lanes_of = lanes;
    if lanes == Lanes::Device {
        out.grown_from = Some(Basis::of(trace));
    }
    Ok(out)
}

/// Each lane's number and its streams, by lane. A device's streams are in
/// the order of their keys, not of their indexes: operations that start
/// together are merged in that order, which a growing trace keeps while its
/// streams' indexes may change.
fn lane_streams(trace: &Trace, lanes: Lanes) -> Vec<(u32, Vec<usize>)> {
    match lanes {
        Lanes::Device => {
            let mut devices: Vec<u32> = trace.streams.iter().map(|s| s.device_id).collect();
            devices.sort_unstable();
            devices.dedup();
            devices
                .into_iter()
                .map(|d| {
                    let mut streams: Vec<usize> = (0..trace.streams.len())
                        .filter(|&s| trace.streams[s].device_id == d)
                        .collect();
                    streams.sort_by_key(|&s| {
                        let s = &trace.streams[s];
                        (s.pid, s.context_id, s.stream_id)
                    });
                    (d, streams)
                })
                .collect()
        }
        Lanes::Stream => (0..trace.streams.len())
            .map(|s| (s as u32, vec![s]))
            .collect(),
    }
}

/// Which lane to merge, from when, with checkpoints how often.
struct LaneMerge<'s> {
    lane: u32,
    /// Its streams, in the order ties are merged in.
    streams: &'s [usize],
    /// Taken up at the last checkpoint at or before this (`Ns::MIN`: all).
    from: Ns,
    every: usize,
}

/// Merges a lane's operations from its last checkpoint at or before
/// `plan.from` on into `out`: what came before the checkpoint stays, the
/// gaps after it are found again, and checkpoints are left on the way.
/// Returns how many operations it merged, and the time before which its
/// gaps and span stayed as they were (the checkpoint's reach: every gap
/// found again starts there or later).
fn merge_lane(
    classifier: &Classifier,
    plan: &LaneMerge,
    out: &mut LaneGaps,
    hints: &mut WalkHints,
    cancel: &AtomicBool,
) -> Result<(usize, Ns), Cancelled> {
    let LaneMerge {
        lane,
        streams,
        from,
        every,
    } = *plan;
    let kept = out.checkpoints.partition_point(|c| c.at <= from);
    let resume = match kept.checked_sub(1) {
        Some(k) => out.checkpoints[k],
        None => Checkpoint::START,
    };
    out.checkpoints.truncate(kept.max(1));
    if out.checkpoints.is_empty() {
        out.checkpoints.push(Checkpoint::START);
    }
    out.gaps.truncate(resume.gaps);
    let Checkpoint {
        mut reach,
        mut first,
        ..
    } = resume;
    let mut last_start: Option<Ns> = None;
    let mut since_checkpoint = 0usize;
    let mut merged = 0usize;
    for (start, end, op, pid) in Merge::new(classifier.trace(), streams, resume.at) {
        if merged.is_multiple_of(1 << 16) {
            check(cancel)?;
        }
        merged += 1;
        // A checkpoint between two distinct starts: all before it are in.
        if since_checkpoint >= every && last_start.is_some_and(|s| s < start) {
            out.checkpoints.push(Checkpoint {
                at: start,
                gaps: out.gaps.len(),
                reach,
                first,
            });
            since_checkpoint = 0;
        }
        since_checkpoint += 1;
        last_start = Some(start);
        first.get_or_insert(start);
        if let Some(r) = reach
            && start > r
        {
            let (thread, handed_by) = classifier.launch_threads(op, pid, hints);
            let mut times: CauseTimes = [0; CAUSES];
            classifier.walk_gap((thread, handed_by), r, start, hints, |_, _, c, ns| {
                times[c.slot()] = times[c.slot()].saturating_add(ns);
            });
            out.gaps.push(Gap {
                start: r,
                end: start,
                lane,
                next: op,
                thread,
                handed_by,
                dominant: dominant(&times).unwrap_or(Cause::Unknown),
                verdict: verdict(&times).unwrap_or(Cause::Unknown),
            });
        }
        reach = Some(reach.map_or(end, |r| r.max(end)));
    }
    // The end is a checkpoint too: operations that come later and start
    // after the last one merged are taken up from here.
    // (None past the last time there is: such a lane is merged again.)
    if let Some(at) = last_start.and_then(|last| last.checked_add(1)) {
        out.checkpoints.push(Checkpoint {
            at,
            gaps: out.gaps.len(),
            reach,
            first,
        });
    }
    out.span = match (first, reach) {
        (Some(start), Some(end)) => Some(LaneSpan { lane, start, end }),
        _ => None,
    };
    // Taken up at its end with nothing new, the lane is as it was: it
    // bounds nothing (a GPU gone quiet would otherwise hold every later
    // summary back).
    let settled = match resume.reach {
        Some(_) if merged == 0 => Ns::MAX,
        Some(reach) => reach,
        None => Ns::MIN,
    };
    Ok((merged, settled))
}

/// One cause's share of a lane's idle time.
#[derive(Clone, Debug, PartialEq)]
pub struct CauseTotal {
    pub cause: Cause,
    /// Gaps in which the cause had any time.
    pub gaps: usize,
    pub time: Ns,
    /// The API names that prove it, with their time, longest first.
    pub calls: Vec<(String, Ns)>,
    /// The longest single call of the cause, for highlighting.
    pub longest_call: Option<usize>,
    /// The functions the thread's CPU samples show in this cause's time
    /// (outside CUDA, in syncs); None where the report has no samples there.
    pub functions: Option<crate::analysis::cpu_profile::TopFunctions>,
}

/// A lane's idle time over some windows, per cause.
#[derive(Clone, Debug, PartialEq)]
pub struct IdleSummary {
    pub lane: u32,
    /// The windows' time inside the lane's active span.
    pub span: Ns,
    pub idle: Ns,
    pub gaps: usize,
    /// Causes with time, most first.
    pub causes: Vec<CauseTotal>,
    /// Idle time per [`verdict`]: each gap's time inside the windows counted
    /// under why the whole gap happened ([`Gap::verdict`]).
    pub verdicts: CauseTimes,
    /// Idle time by the thread whose time it was (index into
    /// `Trace::threads`), most first: the thread that launched each gap's
    /// next work, or the one that handed it off ([`Gap::handed_by`]).
    pub threads: Vec<(u32, Ns)>,
}

impl IdleSummary {
    pub fn time(&self, cause: Cause) -> Ns {
        self.causes
            .iter()
            .find(|c| c.cause == cause)
            .map_or(0, |c| c.time)
    }

    /// `cause`'s part of this lane's idle time, in percent.
    pub fn idle_percent(&self, cause: &CauseTotal) -> f64 {
        cause.time as f64 * 100.0 / self.idle.max(1) as f64
    }

    /// "GPU idle 89 % of 7.0 ms; the thread spent 6.7 ms allocating/freeing
    /// (cudaMalloc, cudaFree), 0.5 ms launching".
    pub fn sentence(&self) -> String {
        let share = if self.span > 0 {
            self.idle as f64 * 100.0 / self.span as f64
        } else {
            0.0
        };
        let mut text = format!("GPU idle {share:.0} % of {}", human_ns(self.span));
        let parts: Vec<String> = self
            .causes
            .iter()
            // Causes under 5 % of the idle time do not matter.
            .filter(|c| c.time.saturating_mul(20) >= self.idle)
            .map(|c| {
                let names: Vec<&str> = c.calls.iter().take(2).map(|(n, _)| n.as_str()).collect();
                let mut part = if names.is_empty() {
                    format!("{} {}", human_ns(c.time), c.cause.label())
                } else {
                    format!(
                        "{} {} ({})",
                        human_ns(c.time),
                        c.cause.label(),
                        names.join(", ")
                    )
                };
                // "4.2 ms outside CUDA (CPU work): 61 % in `build_batch` (train.py:14)".
                if let Some(f) = &c.functions {
                    part.push_str(": ");
                    part.push_str(&f.phrase());
                }
                part
            })
            .collect();
        if !parts.is_empty() {
            text.push_str("; the thread spent ");
            // A part naming functions lists them with commas: parts then part with `;`.
            let named = self.causes.iter().any(|c| c.functions.is_some());
            text.push_str(&parts.join(if named { "; " } else { ", " }));
        }
        text
    }
}

/// Merges intervals into sorted, disjoint windows.
pub fn merge_windows(mut windows: Vec<(Ns, Ns)>) -> Vec<(Ns, Ns)> {
    windows.retain(|w| w.1 > w.0);
    windows.sort_unstable();
    let mut out: Vec<(Ns, Ns)> = Vec::with_capacity(windows.len());
    for (s, e) in windows {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The time of the NVTX ranges named `name` (every instance, on any thread), as windows.
pub fn nvtx_windows(trace: &Trace, name: &str) -> Vec<(Ns, Ns)> {
    let spans = &trace.nvtx.spans;
    let ids: Vec<StrId> = trace
        .strings
        .iter()
        .filter(|(_, s)| *s == name)
        .map(|(id, _)| id)
        .collect();
    merge_windows(
        (0..spans.len())
            .filter(|&i| {
                ids.contains(&spans.name[i])
                    && trace.nvtx.kind.get(i) != Some(&crate::model::NvtxKind::Mark)
            })
            .map(|i| (spans.start[i], spans.end(i)))
            .collect(),
    )
}

/// Each lane's idle time per cause, over `windows` (sorted, disjoint; the
/// whole report when None).
pub fn summarize(
    classifier: &Classifier,
    attribution: &Attribution,
    windows: Option<&[(Ns, Ns)]>,
) -> Vec<IdleSummary> {
    attribution
        .spans()
        .filter_map(|s| summarize_lane(classifier, attribution, s.lane, windows))
        .collect()
}

/// [`summarize`] for one lane (None when it never ran anything).
pub fn summarize_lane(
    classifier: &Classifier,
    attribution: &Attribution,
    lane: u32,
    windows: Option<&[(Ns, Ns)]>,
) -> Option<IdleSummary> {
    let trace = classifier.trace();
    let span = attribution.lane(lane)?.span?;
    {
        let whole = [(span.start, span.end)];
        let windows: &[(Ns, Ns)] = windows.unwrap_or(&whole);
        let mut covered = 0;
        for &(s, e) in windows {
            covered = Ns::saturating_add(
                covered,
                e.min(span.end).saturating_sub(s.max(span.start)).max(0),
            );
        }
        let mut times = [0 as Ns; CAUSES];
        let mut gap_counts = [0usize; CAUSES];
        // A handful of distinct call names per window: a short list searched
        // from its latest entry beats hashing every call (millions per report).
        let mut names: Vec<((Cause, StrId), Ns)> = Vec::new();
        let mut longest: [Option<(Ns, usize)>; CAUSES] = [None; CAUSES];
        let mut gaps = 0;
        let mut verdicts = [0 as Ns; CAUSES];
        let mut hints = WalkHints::default();
        // Idle time by the thread walked: a handful of threads.
        let mut by_thread: Vec<(u32, Ns)> = Vec::new();
        // Where the thread has CPU samples, the stretches of its time to name.
        let mut cpu_windows = functions::CpuWindows::default();
        let mut sampled_threads: Vec<(u32, bool)> = Vec::new();
        let mut sampled = |t: u32| match sampled_threads.iter().find(|(x, _)| *x == t) {
            Some(&(_, yes)) => yes,
            None => {
                let yes = functions::CpuWindows::wanted(trace, t);
                sampled_threads.push((t, yes));
                yes
            }
        };
        for &(ws, we) in windows {
            for gap in attribution.gaps_in(span.lane, ws, we).iter() {
                let (s, e) = (gap.start.max(ws), gap.end.min(we));
                if e <= s {
                    continue;
                }
                gaps += 1;
                let mut here = [0 as Ns; CAUSES];
                let who = (gap.thread, gap.handed_by);
                // Where in the gap the walk is: the stretches it names follow one another.
                let mut walked: Ns = 0;
                classifier.walk_gap(who, s, e, &mut hints, |thread, call, cause, ns| {
                    if let Some(t) = thread
                        && sampled(t)
                    {
                        cpu_windows.note(cause, t, s + walked, ns);
                    }
                    walked = walked.saturating_add(ns);
                    here[cause.slot()] = here[cause.slot()].saturating_add(ns);
                    if let Some(t) = thread {
                        match by_thread.iter_mut().find(|(k, _)| *k == t) {
                            Some((_, at)) => *at = at.saturating_add(ns),
                            None => by_thread.push((t, ns)),
                        }
                    }
                    if let Some(api) = call {
                        let name = trace.cuda_api.spans.name[api];
                        match names.iter_mut().rev().find(|(k, _)| *k == (cause, name)) {
                            Some((_, at)) => *at = at.saturating_add(ns),
                            None => names.push(((cause, name), ns)),
                        }
                        let d = trace.cuda_api.spans.duration(api);
                        if longest[cause.slot()].is_none_or(|(l, _)| d > l) {
                            longest[cause.slot()] = Some((d, api));
                        }
                    }
                });
                for ((time, count), ns) in times.iter_mut().zip(gap_counts.iter_mut()).zip(here) {
                    *time = time.saturating_add(ns);
                    *count += usize::from(ns > 0);
                }
                let v = gap.verdict.slot();
                verdicts[v] = verdicts[v].saturating_add(e.saturating_sub(s));
            }
        }
        let mut causes: Vec<CauseTotal> = Cause::ALL
            .into_iter()
            .filter(|c| times[c.slot()] > 0)
            .map(|c| {
                let mut calls: Vec<(String, Ns)> = names
                    .iter()
                    .filter(|((cause, _), _)| *cause == c)
                    .map(|&((_, id), ns)| {
                        let n = crate::model::nsys::strip_version_suffix(trace.name(id));
                        (n.to_string(), ns)
                    })
                    .collect();
                calls.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                CauseTotal {
                    cause: c,
                    gaps: gap_counts[c.slot()],
                    time: times[c.slot()],
                    calls,
                    longest_call: longest[c.slot()].map(|(_, api)| api),
                    functions: cpu_windows.name(trace, c),
                }
            })
            .collect();
        causes.sort_by(|a, b| b.time.cmp(&a.time).then(a.cause.cmp(&b.cause)));
        by_thread.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Some(IdleSummary {
            threads: by_thread,
            lane: span.lane,
            span: covered,
            idle: times.iter().fold(0, |a: Ns, &t| a.saturating_add(t)),
            gaps,
            causes,
            verdicts,
        })
    }
}

/// `sightline stats --report gpu_idle_sum` (ours): per GPU and cause, the
/// gaps, their time, its share of the idle time and of the span, and the
/// calls that prove it.
pub fn gpu_idle_sum_table(summaries: &[IdleSummary]) -> Table {
    let columns = [
        "GPU",
        "Cause",
        "Gaps",
        "Total Time (ns)",
        "Idle (%)",
        "Span (%)",
        "Calls",
    ];
    let mut rows = Vec::new();
    for s in summaries {
        for c in &s.causes {
            let pct = |of: Ns| {
                if of > 0 {
                    Cell::Round1(c.time as f64 * 100.0 / of as f64)
                } else {
                    Cell::Empty
                }
            };
            let calls: Vec<String> = c
                .calls
                .iter()
                .take(4)
                .map(|(n, t)| format!("{n} {}", human_ns(*t)))
                .collect();
            rows.push(vec![
                Cell::Int(i64::from(s.lane)),
                Cell::Text(c.cause.name().to_string()),
                Cell::Int(c.gaps as i64),
                Cell::Int(c.time),
                pct(s.idle),
                pct(s.span),
                Cell::Text(calls.join(", ")),
            ]);
        }
    }
    Table {
        columns: columns.iter().map(|c| c.to_string()).collect(),
        rows,
    }
}

/// `gpu_idle_sum` over the whole report or `windows`.
pub fn gpu_idle_sum(trace: &Trace, windows: Option<&[(Ns, Ns)]>) -> Table {
    let never = AtomicBool::new(false);
    let Ok(attribution) = attribute(trace, Lanes::Device, &never) else {
        return Table::default();
    };
    let classifier = Classifier::new(trace);
    gpu_idle_sum_table(&summarize(&classifier, &attribution, windows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hinted_seek_finds_what_a_binary_search_finds() {
        let starts: Vec<Ns> = vec![1, 3, 3, 7, 8, 8, 8, 20, 21, 40];
        let mut hints = WalkHints::default();
        // Forward, backward, repeated and past both ends, on two threads.
        for (thread, from) in [
            (0, 0),
            (0, 3),
            (0, 4),
            (1, 8),
            (0, 8),
            (0, 9),
            (0, 2),
            (0, 41),
            (1, 40),
            (0, 21),
            (0, 1),
            (1, 100),
            (1, 7),
        ] {
            let expected = starts.partition_point(|&s| s < from);
            assert_eq!(
                hints.seek(thread, &starts, 0, from),
                expected,
                "from {from}"
            );
            // A later run of the thread (rows 10..): a hint from the other
            // run only widens the search.
            let later: Vec<Ns> = starts.iter().map(|s| s + 40).collect();
            let expected = later.partition_point(|&s| s < from + 20);
            assert_eq!(
                hints.seek(thread, &later, 10, from + 20),
                expected,
                "from {from} + 20"
            );
        }
        assert_eq!(WalkHints::default().seek(3, &[], 0, 5), 0);
    }

    /// The run a walk begins in, found forward from the last one's, is the
    /// one a binary search of the runs finds, whatever order the walks come
    /// in (runs of 1 to 4 calls, as a capture's snapshots cut a track).
    #[test]
    fn a_hinted_first_run_is_the_binary_searchs() {
        let mut spans = SpanColumns::default();
        let starts: Vec<Ns> = vec![1, 3, 3, 7, 8, 8, 8, 20, 21, 40, 40, 41, 55];
        for &s in &starts {
            spans.push(s, s + 2, StrId::default());
        }
        let mut runs = Vec::new();
        let (mut from_row, mut length) = (0u32, 1u32);
        while (from_row as usize) < starts.len() {
            let to = (from_row + length).min(starts.len() as u32);
            runs.push(Run::of(from_row..to, &spans));
            from_row = to;
            length = length % 4 + 1;
        }
        let mut hints = WalkHints::default();
        let expected = |from: Ns| {
            runs.partition_point(|r| spans.start[r.rows().end - 1] < from)
                .saturating_sub(1)
        };
        for (thread, from) in [
            (0, 0),
            (0, 3),
            (0, 8),
            (1, 21),
            (0, 9),
            (0, 40),
            (0, 2),
            (0, 41),
            (1, 4),
            (0, 100),
            (0, 55),
            (1, 56),
            (0, -5),
        ] {
            assert_eq!(
                hints.first_run(thread, &runs, &spans, from),
                expected(from),
                "thread {thread} from {from}"
            );
        }
        // And a long sequence of any order: mostly forward, now and then back.
        let mut seed = 7u64;
        let mut from: Ns = 0;
        for _ in 0..2_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let r = (seed >> 33) as Ns;
            from = match r % 10 {
                0 => r % 60 - 5,
                _ => from + r % 7,
            };
            let thread = (r / 10 % 3) as u32;
            assert_eq!(
                hints.first_run(thread, &runs, &spans, from),
                expected(from),
                "thread {thread} from {from}"
            );
        }
        assert_eq!(WalkHints::default().first_run(0, &[], &spans, 5), 0);
    }

    #[test]
    fn windows_merge_and_dominant_cause() {
        assert_eq!(
            merge_windows(vec![(5, 9), (1, 3), (2, 4), (9, 10), (7, 7)]),
            vec![(1, 4), (5, 10)]
        );
        let mut t = [0; CAUSES];
        assert_eq!(dominant(&t), None);
        t[Cause::Launch as usize] = 3;
        t[Cause::Alloc as usize] = 3;
        assert_eq!(dominant(&t), Some(Cause::Alloc));
        for c in Cause::ALL {
            assert_eq!(Cause::from_name(c.name()), Some(c));
        }
    }
}
