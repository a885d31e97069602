//! The CPU side of a report, from nsys's samples and scheduling
//! ([`crate::model::CpuSampling`]): what the views and the reports ask.
//!
//! - [`flat_profile`]: functions by samples, self and total, in any time
//!   windows and thread set ([`SampleScope`]); Python frames stay Python
//!   ([`FunctionKey::kind`]);
//! - [`flame_tree`]: the samples' call stacks merged by function, a count
//!   per node (a flame graph's data);
//! - [`thread_states`]: a thread's scheduling over a range (running / off
//!   CPU), the off-CPU time split by the OS runtime call that covers it;
//! - [`samples_in`] and [`stack_labels`]: the sample ticks of a thread and
//!   the stack of one, for a hover;
//! - [`top_functions`]: the few functions that took a thread's samples in
//!   some windows, worded for a sentence (the idle attribution's).
//!
//! Which samples a thread's profile reads: its Python samples where it has
//! any with frames, else its native ones
//! ([`crate::model::CpuSampling::preferred_source`]), unless the scope names
//! a source. Each sample counts once; percentages are of the samples in
//! scope.

use std::collections::HashMap;
use std::ops::Range;

use crate::model::{
    CpuSampling, FrameId, FrameKind, Ns, SampleSource, SampleState, SchedState, StackId, StackTree,
    StrId, ThreadIdx, Trace,
};

/// Which samples a query reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleScope {
    /// The threads; None: every thread.
    pub threads: Option<Vec<ThreadIdx>>,
    /// Sorted, disjoint `[start, end)` windows; None: the whole report.
    pub windows: Option<Vec<(Ns, Ns)>>,
    /// One sampler for every thread; None: each thread's preferred one.
    pub source: Option<SampleSource>,
}

impl SampleScope {
    /// Every sample of every thread.
    pub fn whole() -> SampleScope {
        SampleScope::default()
    }

    /// The samples taken in `[from, to)`.
    pub fn range(from: Ns, to: Ns) -> SampleScope {
        SampleScope {
            windows: Some(vec![(from, to)]),
            ..SampleScope::default()
        }
    }

    /// Only these threads.
    pub fn threads(mut self, threads: Vec<ThreadIdx>) -> SampleScope {
        self.threads = Some(threads);
        self
    }

    /// Only this sampler's samples.
    pub fn source(mut self, source: SampleSource) -> SampleScope {
        self.source = Some(source);
        self
    }

    fn has_thread(&self, thread: ThreadIdx) -> bool {
        self.threads.as_ref().is_none_or(|t| t.contains(&thread))
    }
}

/// A function as profiles group it: its kind, name and module or file (a
/// Python function's lines are one function).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionKey {
    pub kind: FrameKind,
    pub function: StrId,
    /// Native: the module; Python: the file.
    pub location: StrId,
}

/// One function of a flat profile.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRow {
    pub key: FunctionKey,
    /// Python: the first line of it seen in a sample (near its `def`); 0
    /// for native code.
    pub line: u32,
    /// Samples whose innermost frame is this function.
    pub self_samples: u64,
    /// Samples with this function anywhere on their stack (once per sample,
    /// however deep it recurses).
    pub total_samples: u64,
}

/// Functions by samples over a scope.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlatProfile {
    /// Samples in scope (the 100 % of the rows' shares).
    pub samples: u64,
    /// Most self samples first (then most total, then name order).
    pub rows: Vec<FunctionRow>,
}

impl FlatProfile {
    /// `count` as a percentage of the samples in scope.
    pub fn percent(&self, count: u64) -> f64 {
        count as f64 * 100.0 / self.samples.max(1) as f64
    }
}

/// One node of a [`FlameTree`]: a function called along one call path.
#[derive(Clone, Debug, PartialEq)]
pub struct FlameNode {
    /// None for the root (every sample).
    pub function: Option<FunctionKey>,
    /// As [`FunctionRow::line`].
    pub line: u32,
    pub parent: u32,
    /// Samples through this node (its own and its callees').
    pub total: u64,
    /// Samples that stopped here (this function was the innermost frame).
    pub self_samples: u64,
    /// Callees, most samples first.
    pub children: Vec<u32>,
}

/// The samples of a scope as a call tree merged by function: node 0 is the
/// root (all samples); each node's children are its callees.
#[derive(Clone, Debug, PartialEq)]
pub struct FlameTree {
    pub nodes: Vec<FlameNode>,
}

impl FlameTree {
    pub const ROOT: u32 = 0;

    pub fn root(&self) -> &FlameNode {
        &self.nodes[Self::ROOT as usize]
    }

    pub fn node(&self, id: u32) -> Option<&FlameNode> {
        self.nodes.get(id as usize)
    }
}

/// One stretch of a thread's state (see [`thread_states`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StateStretch {
    pub start: Ns,
    pub end: Ns,
    pub state: SchedState,
    /// Off CPU inside this OS runtime call (a row of `Trace::osrt`).
    pub os_call: Option<u32>,
}

/// One sample, for the sample ticks of a thread's row.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SampleTick {
    pub time: Ns,
    pub source: SampleSource,
    pub stack: StackId,
    pub state: SampleState,
}

/// A function named for a sentence: "61 % in `build_batch` (train.py:14)".
#[derive(Clone, Debug, PartialEq)]
pub struct NamedShare {
    /// [`function_label`] of the function.
    pub label: String,
    /// Its self samples' share of the samples in scope, in percent.
    pub percent: f64,
    /// The function that most often called it there, labelled (None at the
    /// stack's bottom or when it called itself).
    pub caller: Option<String>,
}

/// The functions that took a thread's samples in some windows (see
/// [`top_functions`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopFunctions {
    pub samples: u64,
    pub source: Option<SampleSource>,
    pub functions: Vec<NamedShare>,
}

impl TopFunctions {
    /// "61 % in `busy_until` (train.py:40) from `build_batch` (train.py:46),
    /// 20 % in …"; empty when there were no samples.
    pub fn phrase(&self) -> String {
        let parts: Vec<String> = self
            .functions
            .iter()
            .map(|f| {
                let mut text = format!("{:.0} % in {}", f.percent, f.label);
                if let Some(caller) = &f.caller {
                    text.push_str(" from ");
                    text.push_str(caller);
                }
                text
            })
            .collect();
        parts.join(", ")
    }
}

/// The sample series a scope reads: `(thread, samples)`.
fn series<'a>(
    cpu: &'a CpuSampling,
    scope: &'a SampleScope,
) -> impl Iterator<Item = &'a crate::model::ThreadSamples> + 'a {
    cpu.threads.iter().filter(move |s| {
        scope.has_thread(s.thread)
            && match scope.source {
                Some(source) => s.source == source,
                None => cpu.preferred_source(s.thread) == Some(s.source),
            }
    })
}

/// The samples of `s` a scope's windows hold, as index ranges (all of them without windows).
fn in_scope<'a>(
    s: &'a crate::model::ThreadSamples,
    scope: &'a SampleScope,
) -> impl Iterator<Item = Range<usize>> + 'a {
    let all = scope.windows.is_none().then(|| 0..s.len());
    let windows = scope.windows.iter().flatten();
    all.into_iter()
        .chain(windows.map(|&(from, to)| s.in_range(from, to)))
}

/// The samples of each thread a scope reads (its preferred sampler's unless the scope names
/// one), most first: what the CPU samples panel offers to narrow a profile to one thread.
pub fn samples_by_thread(cpu: &CpuSampling, scope: &SampleScope) -> Vec<(ThreadIdx, u64)> {
    let mut by_thread: HashMap<ThreadIdx, u64> = HashMap::new();
    for s in series(cpu, scope) {
        let n: usize = in_scope(s, scope).map(|r| r.len()).sum();
        if n > 0 {
            *by_thread.entry(s.thread).or_default() += n as u64;
        }
    }
    let mut out: Vec<(ThreadIdx, u64)> = by_thread.into_iter().collect();
    out.sort_by_key(|&(thread, n)| (std::cmp::Reverse(n), thread));
    out
}

/// Samples per stack node over a scope, and their total.
fn stack_counts(cpu: &CpuSampling, scope: &SampleScope) -> (HashMap<StackId, u64>, u64) {
    let mut counts: HashMap<StackId, u64> = HashMap::new();
    let mut total = 0u64;
    for s in series(cpu, scope) {
        // Counted per palette entry (a thread's distinct stacks), then per stack.
        let palette = s.stacks.palette();
        let mut per_entry = vec![0u64; palette.len()];
        let mut add = |samples: Range<usize>| {
            for at in s.stacks.palette_indexes(samples) {
                if let Some(n) = per_entry.get_mut(at) {
                    *n += 1;
                    total += 1;
                }
            }
        };
        for samples in in_scope(s, scope) {
            add(samples);
        }
        for (entry, n) in palette.iter().zip(per_entry) {
            if n > 0 {
                *counts.entry(entry.stack()).or_default() += n;
            }
        }
    }
    (counts, total)
}

/// The function of a frame, and its line.
fn key_of(cpu: &CpuSampling, frame: FrameId) -> Option<(FunctionKey, u32)> {
    let f = cpu.frame(frame)?;
    Some((
        FunctionKey {
            kind: f.kind,
            function: f.function,
            location: f.location,
        },
        f.line,
    ))
}

/// Keeps the lowest non-zero line.
fn first_line(line: &mut u32, seen: u32) {
    if seen != 0 && (*line == 0 || seen < *line) {
        *line = seen;
    }
}

/// Functions by samples, self and total, over `scope`.
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use sightline::analysis::cpu_profile::{SampleScope, flat_profile};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cpu_only/cpu_only.sqlite");
/// let trace = sightline::loader::load(path.as_ref(), &mut |_| {}, &AtomicBool::new(false))?;
/// let profile = flat_profile(&trace, &SampleScope::whole());
/// assert!(profile.samples > 0);
/// let top = &profile.rows[0];
/// assert!(top.self_samples <= top.total_samples && top.total_samples <= profile.samples);
/// # Ok::<(), sightline::loader::LoadError>(())
/// ```
pub fn flat_profile(trace: &Trace, scope: &SampleScope) -> FlatProfile {
    let cpu = &trace.cpu;
    let (counts, samples) = stack_counts(cpu, scope);
    let mut rows: HashMap<FunctionKey, FunctionRow> = HashMap::new();
    let mut seen: Vec<FunctionKey> = Vec::new();
    for (&stack, &n) in &counts {
        seen.clear();
        for (depth, frame) in cpu.stacks.frames(stack).enumerate() {
            let Some((key, line)) = key_of(cpu, frame) else {
                continue;
            };
            let row = rows.entry(key).or_insert(FunctionRow {
                key,
                line: 0,
                self_samples: 0,
                total_samples: 0,
            });
            first_line(&mut row.line, line);
            if depth == 0 {
                row.self_samples += n;
            }
            if !seen.contains(&key) {
                seen.push(key);
                row.total_samples += n;
            }
        }
    }
    let mut rows: Vec<FunctionRow> = rows.into_values().collect();
    rows.sort_by(|a, b| {
        (b.self_samples, b.total_samples)
            .cmp(&(a.self_samples, a.total_samples))
            .then_with(|| trace.name(a.key.function).cmp(trace.name(b.key.function)))
            .then(a.key.cmp(&b.key))
    });
    FlatProfile { samples, rows }
}

/// The samples of `scope` as a call tree merged by function (outermost
/// frame under the root), children most samples first.
pub fn flame_tree(trace: &Trace, scope: &SampleScope) -> FlameTree {
    let cpu = &trace.cpu;
    let (counts, samples) = stack_counts(cpu, scope);
    let mut nodes = vec![FlameNode {
        function: None,
        line: 0,
        parent: FlameTree::ROOT,
        total: samples,
        self_samples: 0,
        children: Vec::new(),
    }];
    let mut child_of: HashMap<(u32, FunctionKey), u32> = HashMap::new();
    let mut path: Vec<FrameId> = Vec::new();
    // In stack order, so that the tree is the same whatever the map's order.
    let mut stacks: Vec<(StackId, u64)> = counts.into_iter().collect();
    stacks.sort_unstable();
    for (stack, n) in stacks {
        path.clear();
        path.extend(cpu.stacks.frames(stack));
        let mut at = FlameTree::ROOT;
        for &frame in path.iter().rev() {
            let Some((key, line)) = key_of(cpu, frame) else {
                continue;
            };
            let next = *child_of.entry((at, key)).or_insert_with(|| {
                let id = nodes.len() as u32;
                nodes.push(FlameNode {
                    function: Some(key),
                    line: 0,
                    parent: at,
                    total: 0,
                    self_samples: 0,
                    children: Vec::new(),
                });
                nodes[at as usize].children.push(id);
                id
            });
            let node = &mut nodes[next as usize];
            node.total += n;
            first_line(&mut node.line, line);
            at = next;
        }
        nodes[at as usize].self_samples += n;
    }
    let totals: Vec<u64> = nodes.iter().map(|n| n.total).collect();
    for node in &mut nodes {
        node.children.sort_by_key(|&c| {
            (
                std::cmp::Reverse(totals[c as usize]),
                c, // first seen first among equals
            )
        });
    }
    FlameTree { nodes }
}

/// `thread`'s scheduling over `[from, to)`: the stretches the report
/// recorded, in order, each off-CPU stretch split where an OS runtime call
/// of the thread covers it (`os_call`: the outermost such call). Empty
/// where the report has no scheduling for the thread.
pub fn thread_states(trace: &Trace, thread: ThreadIdx, from: Ns, to: Ns) -> Vec<StateStretch> {
    let Some(sched) = trace.cpu.sched_of(thread) else {
        return Vec::new();
    };
    let calls = trace
        .threads
        .get(thread as usize)
        .map(|t| os_calls_in(trace, &t.osrt, from, to))
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut next_call = 0;
    for (start, end, state) in sched.stretches(from, to) {
        if state.is_running() {
            out.push(StateStretch {
                start,
                end,
                state,
                os_call: None,
            });
            continue;
        }
        // Calls are sorted by start and do not overlap (outermost only).
        while calls.get(next_call).is_some_and(|c| c.1 <= start) {
            next_call += 1;
        }
        let mut at = start;
        let mut i = next_call;
        while at < end {
            let call = calls.get(i).filter(|c| c.0 < end);
            let (s, e, id) = match call {
                Some(&(cs, ce, id)) if cs <= at => (at, ce.min(end), Some(id)),
                Some(&(cs, _, _)) => (at, cs, None),
                None => (at, end, None),
            };
            if e > s {
                out.push(StateStretch {
                    start: s,
                    end: e,
                    state,
                    os_call: id,
                });
            }
            if id.is_some() {
                i += 1;
            }
            at = e.max(at + 1);
        }
    }
    out
}

/// The outermost OS runtime calls of a thread overlapping `[from, to)`:
/// `(start, end, row)`, by start, none inside another.
fn os_calls_in(trace: &Trace, track: &crate::model::Track, from: Ns, to: Ns) -> Vec<(Ns, Ns, u32)> {
    let spans = &trace.osrt.spans;
    let mut calls: Vec<(Ns, Ns, u32)> = track
        .windows(spans, from, to)
        .flat_map(|w| w.clone())
        .filter_map(|i| {
            let (s, e) = spans.get(i as usize)?;
            (e > from && s < to && e > s).then_some((s, e, i))
        })
        .collect();
    calls.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
    let mut outer: Vec<(Ns, Ns, u32)> = Vec::with_capacity(calls.len());
    for c in calls {
        match outer.last() {
            Some(last) if c.0 < last.1 => {}
            _ => outer.push(c),
        }
    }
    outer
}

/// `thread`'s samples in `[from, to)` from every sampler, in time order.
pub fn samples_in(trace: &Trace, thread: ThreadIdx, from: Ns, to: Ns) -> Vec<SampleTick> {
    let mut ticks: Vec<SampleTick> = Vec::new();
    for source in [SampleSource::Native, SampleSource::Python] {
        let Some(s) = trace.cpu.samples_of(thread, source) else {
            continue;
        };
        let range = s.in_range(from, to);
        let times = s.times.get(range.clone()).unwrap_or_default();
        for (&time, stack) in times.iter().zip(s.stacks.range(range)) {
            ticks.push(SampleTick {
                time,
                source,
                stack: stack.stack(),
                state: stack.state(),
            });
        }
    }
    ticks.sort_by_key(|t| (t.time, t.source));
    ticks
}

/// A function as people read it: Python `build_batch (train.py:14)` (the
/// file's name without its folders), native `memcpy [libc.so.6]`.
pub fn function_label(trace: &Trace, key: FunctionKey, line: u32) -> String {
    let function = trace.name(key.function);
    let location = trace.name(key.location);
    let base = location.rsplit('/').next().unwrap_or(location);
    match key.kind {
        FrameKind::Python if line > 0 => format!("`{function}` ({base}:{line})"),
        FrameKind::Python => format!("`{function}` ({base})"),
        FrameKind::Native if base.is_empty() || function.starts_with('[') => {
            format!("`{function}`")
        }
        FrameKind::Native => format!("`{function}` [{base}]"),
    }
}

/// The frames of `stack`, innermost first, labelled (see
/// [`function_label`]; a Python frame with the line it was on).
pub fn stack_labels(trace: &Trace, stack: StackId) -> Vec<String> {
    let cpu = &trace.cpu;
    cpu.stacks
        .frames(stack)
        .filter_map(|f| key_of(cpu, f))
        .map(|(key, line)| function_label(trace, key, line))
        .collect()
}

/// The `n` functions with the most self samples of `thread` in `windows`
/// (sorted, disjoint), each with its share and its most frequent caller.
/// Empty (no samples) where the thread has none there.
pub fn top_functions(
    trace: &Trace,
    thread: ThreadIdx,
    windows: &[(Ns, Ns)],
    n: usize,
) -> TopFunctions {
    let cpu = &trace.cpu;
    let Some(source) = cpu.preferred_source(thread) else {
        return TopFunctions::default();
    };
    let scope = SampleScope {
        threads: Some(vec![thread]),
        windows: Some(windows.to_vec()),
        source: Some(source),
    };
    let (counts, samples) = stack_counts(cpu, &scope);
    // Per leaf function: samples, first line, and samples per caller.
    type Callers = HashMap<Option<(FunctionKey, u32)>, u64>;
    let mut leaves: HashMap<FunctionKey, (u64, u32, Callers)> = HashMap::new();
    for (&stack, &count) in &counts {
        let mut frames = cpu.stacks.frames(stack).filter_map(|f| key_of(cpu, f));
        let Some((key, line)) = frames.next() else {
            continue;
        };
        let caller = frames.find(|(k, _)| *k != key);
        let entry = leaves.entry(key).or_insert((0, 0, HashMap::new()));
        entry.0 += count;
        first_line(&mut entry.1, line);
        *entry.2.entry(caller).or_default() += count;
    }
    let mut ranked: Vec<(FunctionKey, (u64, u32, Callers))> = leaves.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
    let functions = ranked
        .into_iter()
        .take(n)
        .map(|(key, (count, line, callers))| {
            let caller = callers
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
                .and_then(|(c, _)| c)
                .map(|(k, l)| function_label(trace, k, l));
            NamedShare {
                label: function_label(trace, key, line),
                percent: count as f64 * 100.0 / samples.max(1) as f64,
                caller,
            }
        })
        .collect();
    TopFunctions {
        samples,
        source: Some(source),
        functions,
    }
}

/// Whether the empty stack is the only one `stack` has (a sample whose call
/// chain nsys did not record).
pub fn is_empty_stack(stack: StackId) -> bool {
    stack == StackTree::ROOT
}
