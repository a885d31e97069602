//! What every detector needs, computed once per run: the NVTX ranges with
//! their parents and paths, what each API name does (launch, sync, alloc), and
//! the GPU work each API call caused.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use super::iterations::MaskedNames;
pub use crate::analysis::api_class::ApiClass;
use crate::analysis::api_class::ApiClasses;
use crate::analysis::cancel::{Cancelled, check};
use crate::analysis::idle::{self, Attribution, Classifier, IdleShare, IdleSummary, Lanes};
use crate::model::nsys::strip_version_suffix;
use crate::model::{EventId, EventKind, GpuOp, GpuOpKind, Ns, NvtxKind, StrId, Trace};

/// Per range: the number of its path (`outer/inner`) on its track, its
/// names' digits masked (`step 12/forward` is `step #/forward`: iterations
/// of one loop share it). Parents come before their children in `ranges`,
/// so each path is numbered from its parent's number and its own name, in
/// one pass (no path is spelled out: a range nested a hundred thousand deep
/// has a path as long).
fn path_ids(ranges: &[Range], masked: &[u32]) -> Vec<u32> {
    use std::collections::HashMap;
    let mut ids: HashMap<(u32, u32, u32), u32> = HashMap::new();
    let mut path_of: Vec<u32> = Vec::with_capacity(ranges.len());
    for (r, range) in ranges.iter().enumerate() {
        let parent = range.parent.map_or(u32::MAX, |p| path_of[p]);
        let next = ids.len() as u32;
        path_of.push(*ids.entry((range.track, parent, masked[r])).or_insert(next));
    }
    path_of
}

/// Per range: whether another range of its track has the same path.
fn repeated_paths(path_of: &[u32]) -> Vec<bool> {
    let mut count: Vec<u32> = vec![0; path_of.iter().map(|&id| id as usize + 1).max().unwrap_or(0)];
    for &id in path_of {
        count[id as usize] += 1;
    }
    path_of.iter().map(|&id| count[id as usize] > 1).collect()
}

/// Per range, the outermost of it and its ancestors that repeats (see
/// `Context::iteration`), in one pass: parents come before their children.
fn outermost_repeating(ranges: &[Range], repeats: &[bool]) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(ranges.len());
    for (r, range) in ranges.iter().enumerate() {
        let above = range.parent.map_or(u32::MAX, |p| out[p]);
        out.push(match above {
            u32::MAX if repeats[r] => r as u32,
            above => above,
        });
    }
    out
}

/// Per range: whether two of its direct children share a name (digits
/// masked), i.e. it holds a loop whose iterations are ranges (a
/// `timed-iteration` or a `step N` per pass).
fn holds_iterations(ranges: &[Range], masked: &[u32]) -> Vec<bool> {
    use std::collections::HashSet;
    let mut seen: HashSet<(usize, u32)> = HashSet::new();
    let mut holds = vec![false; ranges.len()];
    for (r, range) in ranges.iter().enumerate() {
        if let Some(p) = range.parent
            && !seen.insert((p, masked[r]))
        {
            holds[p] = true;
        }
    }
    holds
}

/// One NVTX push/pop or start/end range.
#[derive(Clone, Debug)]
pub struct Range {
    /// Row in `Trace::nvtx`.
    pub index: u32,
    pub thread: u32,
    /// Which of the thread's NVTX tracks (one per domain).
    pub track: u32,
    pub start: Ns,
    pub end: Ns,
    pub name: StrId,
    /// The enclosing range on the same track, index into [`Context::ranges`].
    pub parent: Option<usize>,
    pub depth: u32,
    /// nsys recorded no end: the loader ends it at the last NVTX timestamp, a
    /// made-up end that timing detectors must not judge.
    pub unended: bool,
}

pub struct Context<'a> {
    pub trace: &'a Trace,
    pub ranges: Vec<Range>,
    /// Per thread: indexes into `ranges`, by start.
    pub thread_ranges: Vec<Vec<usize>>,
    /// Per thread: the depth of its deepest range. A search for the
    /// innermost range holding a call stops at a range this deep: none
    /// other can be deeper.
    thread_depth: Vec<u32>,
    /// `ApiClass` by `StrId`.
    classes: ApiClasses,
    /// Per range: the number of its path on its track (see `path_ids`):
    /// ranges of one track and path, instances of one range (iterations
    /// `step 1`, `step 2` too), share it.
    pub path_id: Vec<u32>,
    /// Per range: the outermost of it and its ancestors whose path repeats
    /// (the loop iteration it is in: `step 12` for `step 12/forward`),
    /// `u32::MAX` if none.
    pub iteration: Vec<u32>,
    /// Per range: the innermost of it and its ancestors that does not repeat
    /// or holds iterations (see `loop_scope`), `u32::MAX` if none.
    loop_scope: Vec<u32>,
    /// Per range: an ancestor further up (itself for a top-level range), by
    /// the skew-binary jump pointers of Myers' "An applicative random-access
    /// stack": climbing to an ancestor takes O(log depth) steps.
    jump: Vec<usize>,
}

/// Per range, its jump pointer (see `Context::jump`). Parents come before
/// their children in `ranges`.
fn jump_pointers(ranges: &[Range]) -> Vec<usize> {
    let mut jump: Vec<usize> = Vec::with_capacity(ranges.len());
    for (r, range) in ranges.iter().enumerate() {
        let to = match range.parent {
            None => r,
            Some(p) => {
                let (j, depth) = (jump[p], |x: usize| ranges[x].depth);
                if depth(p) - depth(j) == depth(j) - depth(jump[j]) {
                    jump[j]
                } else {
                    p
                }
            }
        };
        jump.push(to);
    }
    jump
}

/// The innermost of `r` and its ancestors for which `holds` is true, where
/// `holds` is true of every ancestor of a range it is true of (as containing
/// a span that starts after `r` starts is: each range holds its children).
/// The jump pointers (`jump_pointers`) make this a climb of O(log depth)
/// steps, not one per ancestor: a call after a range nested a hundred
/// thousand deep would climb them all.
fn innermost_holding(
    ranges: &[Range],
    jump: &[usize],
    r: usize,
    holds: impl Fn(usize) -> bool,
) -> Option<usize> {
    let mut at = r;
    loop {
        if holds(at) {
            return Some(at);
        }
        let parent = ranges[at].parent?;
        // What `holds` is false of, all below it are false of too.
        at = if jump[at] != at && !holds(jump[at]) {
            jump[at]
        } else {
            parent
        };
    }
}

/// Per range, its loop scope (see `Context::loop_scope`), in one pass:
/// parents come before their children in `ranges`.
fn loop_scopes(ranges: &[Range], repeats: &[bool], holds_iterations: &[bool]) -> Vec<u32> {
    let mut scope: Vec<u32> = Vec::with_capacity(ranges.len());
    for (r, range) in ranges.iter().enumerate() {
        let own = !repeats[r] || holds_iterations[r];
        scope.push(match range.parent {
            _ if own => r as u32,
            Some(p) => scope[p],
            None => u32::MAX,
        });
    }
    scope
}

impl<'a> Context<'a> {
    pub fn new(trace: &'a Trace, cancel: &AtomicBool) -> Result<Context<'a>, Cancelled> {
        let classes = ApiClasses::of(trace);
        let spans = &trace.nvtx.spans;
        let mut ranges: Vec<Range> = Vec::new();
        let mut thread_ranges = vec![Vec::new(); trace.threads.len()];
        let mut track_no = 0u32;
        for (t, thread) in trace.threads.iter().enumerate() {
            check(cancel)?;
            for nvtx in &thread.nvtx {
                track_no += 1;
                // Rows of a track are sorted by start: a stack of open ranges
                // gives each its parent.
                let mut open: Vec<usize> = Vec::new();
                for i in nvtx.track.rows() {
                    let row = i as usize;
                    if trace.nvtx.kind.get(row) == Some(&NvtxKind::Mark) {
                        continue;
                    }
                    let (start, end) = (spans.start[row], spans.end(row));
                    while let Some(&top) = open.last() {
                        let r: &Range = &ranges[top];
                        if r.start <= start && end <= r.end && start < r.end {
                            break;
                        }
                        open.pop();
                    }
                    let parent = open.last().copied();
                    let depth = parent.map_or(0, |p| ranges[p].depth + 1);
                    ranges.push(Range {
                        index: i,
                        thread: t as u32,
                        track: track_no,
                        start,
                        end,
                        name: spans.name[row],
                        parent,
                        depth,
                        unended: trace.nvtx.is_unended(row),
                    });
                    open.push(ranges.len() - 1);
                    thread_ranges[t].push(ranges.len() - 1);
                }
            }
            thread_ranges[t].sort_by_key(|&r| (ranges[r].start, ranges[r].depth));
        }
        let thread_depth = (thread_ranges.iter())
            .map(|list| list.iter().map(|&r| ranges[r].depth).max().unwrap_or(0))
            .collect();
        let mut names = MaskedNames::default();
        let masked: Vec<u32> = (ranges.iter()).map(|r| names.id(trace, r.name)).collect();
        let path_id = path_ids(&ranges, &masked);
        let repeats = repeated_paths(&path_id);
        let holds_iterations = holds_iterations(&ranges, &masked);
        let iteration = outermost_repeating(&ranges, &repeats);
        let loop_scope = loop_scopes(&ranges, &repeats, &holds_iterations);
        let jump = jump_pointers(&ranges);
        Ok(Context {
            trace,
            ranges,
            thread_ranges,
            thread_depth,
            classes,
            path_id,
            iteration,
            loop_scope,
            jump,
        })
    }

    pub fn class(&self, api: usize) -> ApiClass {
        self.classes.of_call(self.trace, api)
    }

    /// The API calls of `thread` that start in `[from, to)`.
    pub fn api_calls(
        &self,
        thread: u32,
        from: Ns,
        to: Ns,
    ) -> impl Iterator<Item = usize> + Clone + '_ {
        let track = &self.trace.threads[thread as usize].cuda_api;
        track
            .starting_in(&self.trace.cuda_api.spans, from, to)
            .map(|i| i as usize)
    }

    /// The GPU operations (kernels, copies, sets; not sync records) an API call
    /// of `thread` caused.
    pub fn work_of(&self, thread: u32, api: usize) -> impl Iterator<Item = GpuOp> + '_ {
        let pid = self.trace.threads[thread as usize].pid;
        let correlation = self.trace.cuda_api.correlation.get(api).copied();
        correlation
            .into_iter()
            .flat_map(move |c| self.trace.correlation.gpu_ops(pid, c))
            .filter(|op| op.kind != GpuOpKind::Sync)
    }

    /// The GPU work other threads of the process launched for range `r`
    /// while its thread waited in it (`analysis::range_work`'s rule: the
    /// autograd thread's during `loss.backward()`), with each op's API call.
    pub fn handed_off_work(&self, r: usize) -> Vec<(usize, GpuOp)> {
        let range = &self.ranges[r];
        let calls = crate::analysis::range_work::handed_off_calls(
            self.trace,
            range.thread,
            range.start,
            range.end,
        );
        (calls.into_iter())
            .flat_map(|(api, thread, _)| {
                self.work_of(thread, api as usize)
                    .map(move |op| (api as usize, op))
            })
            .collect()
    }

    /// The sync records (`CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`) of an API call.
    pub fn syncs_of(&self, thread: u32, api: usize) -> impl Iterator<Item = GpuOp> + '_ {
        let pid = self.trace.threads[thread as usize].pid;
        let correlation = self.trace.cuda_api.correlation.get(api).copied();
        correlation
            .into_iter()
            .flat_map(move |c| self.trace.correlation.gpu_ops(pid, c))
            .filter(|op| op.kind == GpuOpKind::Sync)
    }

    pub fn op_span(&self, op: GpuOp) -> (Ns, Ns) {
        let spans = self.trace.gpu_spans(op.kind);
        let i = op.index as usize;
        (spans.start[i], spans.end(i))
    }

    pub fn api_span(&self, api: usize) -> (Ns, Ns) {
        let spans = &self.trace.cuda_api.spans;
        (spans.start[api], spans.end(api))
    }

    pub fn api_name(&self, api: usize) -> &str {
        strip_version_suffix(self.trace.name(self.trace.cuda_api.spans.name[api]))
    }

    /// `outer/inner/range`.
    pub fn path(&self, range: usize) -> String {
        let mut names = Vec::new();
        let mut at = Some(range);
        while let Some(r) = at {
            names.push(self.trace.name(self.ranges[r].name));
            at = self.ranges[r].parent;
        }
        names.reverse();
        names.join("/")
    }

    pub fn range_event(&self, range: usize) -> EventId {
        EventId::new(EventKind::Nvtx, self.ranges[range].index)
    }

    /// The innermost range of `thread` that contains all of `[from, to]`.
    pub fn enclosing(&self, thread: u32, from: Ns, to: Ns) -> Option<usize> {
        let list = self.thread_ranges.get(thread as usize)?;
        let after = list.partition_point(|&r| self.ranges[r].start <= from);
        let contains = |r: usize| self.ranges[r].start <= from && to <= self.ranges[r].end;
        // The latest-starting candidates first; a few back covers other domains.
        let deepest = self.thread_depth.get(thread as usize).copied().unwrap_or(0);
        let mut best: Option<usize> = None;
        for &r in list[..after].iter().rev().take(64) {
            // Ties keep the first found: one as deep as the thread's deepest
            // is the answer (each candidate cost a climb through its parents).
            if best.is_some_and(|b| self.ranges[b].depth >= deepest) {
                break;
            }
            if let Some(c) = innermost_holding(&self.ranges, &self.jump, r, contains)
                && best.is_none_or(|b| self.ranges[c].depth > self.ranges[b].depth)
            {
                best = Some(c);
            }
        }
        best
    }

    /// The loop a call at `[from, to]` belongs to: the innermost range holding
    /// it whose path does not repeat on its track (iteration and phase
    /// ranges repeat; the range around the loop does not), or that holds
    /// iterations of its own: a program that runs its whole experiment
    /// several times repeats the range around each loop too, and each of
    /// those instances is still one loop. Two calls of one loop share it; a
    /// call of another phase or outside does not.
    pub fn loop_scope(&self, thread: u32, from: Ns, to: Ns) -> Option<usize> {
        let r = self.enclosing(thread, from, to)?;
        let scope = self.loop_scope[r];
        (scope != u32::MAX).then_some(scope as usize)
    }

    /// The path of the innermost range containing `[from, to]`, if any.
    pub fn enclosing_path(&self, thread: u32, from: Ns, to: Ns) -> Option<String> {
        self.enclosing(thread, from, to).map(|r| self.path(r))
    }

    /// The thread of every API call (threads list their calls as spans).
    pub fn api_threads(&self) -> Vec<u32> {
        let mut of = vec![0u32; self.trace.cuda_api.spans.len()];
        for (t, thread) in self.trace.threads.iter().enumerate() {
            for i in thread.cuda_api.rows() {
                if let Some(slot) = of.get_mut(i as usize) {
                    *slot = t as u32;
                }
            }
        }
        of
    }
}

/// The idle-gap attribution of the whole report (per GPU), for the detectors
/// that judge why the GPU waited.
pub struct IdleFacts<'a> {
    pub classifier: Classifier<'a>,
    /// Shared: the timeline's idle row may show it while the detectors
    /// still read it.
    pub attribution: Arc<Attribution>,
    /// The summaries an earlier run on an earlier state of a growing report
    /// worded, of windows that end before anything changed since
    /// ([`Attribution::settled_until`]): the same again.
    earlier: Summaries,
    /// The summaries this run asked for, for the next run.
    asked: Mutex<Summaries>,
}

/// Idle summaries by (device, or None for the GPU that idled most; window).
pub type Summaries = HashMap<(Option<u32>, Ns, Ns), Option<IdleSummary>>;

impl<'a> IdleFacts<'a> {
    /// The attribution of `trace`, extended from `earlier` (one of an
    /// earlier state of the same report, with the summaries worded from it)
    /// where there is one.
    pub fn new(
        trace: &'a Trace,
        earlier: Option<(Attribution, Summaries)>,
        cancel: &AtomicBool,
    ) -> Result<IdleFacts<'a>, Cancelled> {
        let (attribution, mut summaries) = match earlier {
            Some((earlier, summaries)) => (earlier.extended(trace, cancel)?, summaries),
            None => (
                idle::attribute(trace, Lanes::Device, cancel)?,
                Summaries::new(),
            ),
        };
        let settled = attribution.settled_until();
        summaries.retain(|&(_, _, to), _| to <= settled);
        Ok(IdleFacts {
            classifier: Classifier::new(trace),
            attribution: Arc::new(attribution),
            earlier: summaries,
            asked: Mutex::new(Summaries::new()),
        })
    }

    /// The attribution, and the summaries this run worded, for the next run.
    pub fn into_carried(self) -> (Arc<Attribution>, Summaries) {
        let asked = self.asked.into_inner().unwrap_or_else(|e| e.into_inner());
        (self.attribution, asked)
    }

    /// The idle time of `[from, to)` on the GPU of `device` (None: the GPU
    /// that idled most there).
    pub fn summary(&self, device: Option<u32>, from: Ns, to: Ns) -> Option<IdleSummary> {
        let key = (device, from, to);
        let summary = match self.earlier.get(&key) {
            Some(known) => known.clone(),
            None => self.summarize(device, from, to),
        };
        if let Ok(mut asked) = self.asked.lock() {
            asked.insert(key, summary.clone());
        }
        summary
    }

    fn summarize(&self, device: Option<u32>, from: Ns, to: Ns) -> Option<IdleSummary> {
        if to <= from {
            return None;
        }
        // Only the one GPU is summarised (walking its calls is the cost).
        let lane = match device {
            Some(d) => d,
            None => self.share(None, from, to)?.lane,
        };
        let window = [(from, to)];
        idle::summarize_lane(&self.classifier, &self.attribution, lane, Some(&window[..]))
    }

    /// How much of `[from, to)` the GPU of `device` (None: the GPU that idled
    /// most there) idled, and why, without naming the calls: cheap enough to
    /// judge every range; [`IdleFacts::summary`] then words a finding.
    pub fn share(&self, device: Option<u32>, from: Ns, to: Ns) -> Option<IdleShare> {
        if to <= from {
            return None;
        }
        match device {
            Some(d) => self.attribution.idle_share(d, from, to),
            None => self
                .attribution
                .spans()
                .filter_map(|s| self.attribution.idle_share(s.lane, from, to))
                .max_by_key(|s| s.idle),
        }
    }

    /// The device a GPU operation ran on.
    pub fn device_of(&self, op: GpuOp) -> Option<u32> {
        let trace = self.classifier.trace();
        let s = trace.stream_of(op)?;
        trace.streams.get(s as usize).map(|s| s.device_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A range of `parent` at `depth`; the rest does not matter here.
    fn range(parent: Option<usize>, depth: u32) -> Range {
        Range {
            index: 0,
            thread: 0,
            track: 0,
            start: 0,
            end: 0,
            name: StrId::default(),
            parent,
            depth,
            unended: false,
        }
    }

    /// The climb by jump pointers finds what a climb through every parent
    /// finds, on chains and trees of every shape (from a fixed sequence),
    /// for every cut: `holds` true from some depth up on each path.
    #[test]
    fn jump_pointer_climb_is_the_parent_by_parent_climb() {
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        for case in 0..60 {
            let n = 1 + next(300) as usize;
            let mut ranges: Vec<Range> = Vec::new();
            for r in 0..n {
                // Case 0 is one chain; the others mix chains and branches.
                let parent = match r {
                    0 => None,
                    _ if case == 0 || next(4) > 0 => Some(r - 1),
                    _ => (next(3) > 0).then(|| next(r as u64) as usize),
                };
                let depth = parent.map_or(0, |p| ranges[p].depth + 1);
                ranges.push(range(parent, depth));
            }
            let jump = jump_pointers(&ranges);
            for cut in 0..6u32 {
                let cut = cut * (1 + n as u32 / 5);
                let holds = |x: usize| ranges[x].depth <= cut;
                for r in 0..n {
                    let mut naive = Some(r);
                    while let Some(c) = naive.filter(|&c| !holds(c)) {
                        naive = ranges[c].parent;
                    }
                    let found = innermost_holding(&ranges, &jump, r, holds);
                    assert_eq!(found, naive, "case {case}, range {r}, cut {cut}");
                }
            }
        }
    }
}
