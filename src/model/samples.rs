//! The CPU side nsys's sampling recorded: native CPU samples with their call
//! stacks (`COMPOSITE_EVENTS` + `SAMPLING_CALLCHAINS`), Python samples with
//! their Python frames (NVTX marks of the `Python Periodic Sampling` domain)
//! and thread scheduling (`SCHED_EVENTS`), kept compact.
//!
//! Layout (what the views and the analysis read):
//! - [`CpuSampling::frames`]: every distinct frame once ([`Frame`]: function,
//!   module or file, line, native or Python), named by [`FrameId`];
//! - [`CpuSampling::stacks`]: every distinct call stack once, as a tree of
//!   [`StackId`] nodes (a node = its caller's node + one frame; node 0 is the
//!   empty stack): a stack is the node of its innermost frame, so a sample
//!   is 4 bytes of stack and two samples with one stack share it;
//! - [`CpuSampling::threads`]: per thread and [`SampleSource`], the sample
//!   times (sorted) beside their stacks ([`SampleStacks`]: the thread's
//!   distinct [`SampleStack`]s, stack + [`SampleState`] in 4 bytes, once,
//!   and an index per sample into them, 1, 2 or 4 bytes);
//! - [`CpuSampling::sched`]: per thread, the times its scheduling state
//!   changes ([`SchedState`]), sorted.
//!
//! A report without these tables has an empty [`CpuSampling`]: no samples
//! is never an error. The analysis over it (flat profile, flame graph,
//! thread states) is `analysis::cpu_profile`.

use std::ops::Range;

pub use super::sample_stacks::{SampleStack, SampleStacks, SampleState, StackId};
use super::{Ns, StrId, ThreadIdx};

pub use super::PYTHON_SAMPLING_DOMAIN;

/// Index into [`CpuSampling::frames`].
pub type FrameId = u32;

/// Which sampler took a sample: the native CPU sampler (interpreter frames
/// for a Python program) or nsys's Python sampler (Python frames).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SampleSource {
    Native,
    Python,
}

/// Whether a frame is native code or a Python function.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameKind {
    Native,
    Python,
}

/// One frame of a call stack.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    pub kind: FrameKind,
    /// The function's name. A native frame nsys could not resolve is named
    /// after its module (`[libc.so.6]`): one entry per module, not one per
    /// address.
    pub function: StrId,
    /// Native: the module (shared object path). Python: the source file.
    pub location: StrId,
    /// Python: the line being run; native: 0.
    pub line: u32,
}

/// Every distinct call stack, as a tree: node `n` is its caller's node
/// `parent(n)` plus the frame `frame(n)`. Node 0 is the empty stack.
#[derive(Clone, Debug)]
pub struct StackTree {
    parent: Vec<StackId>,
    frame: Vec<FrameId>,
}

impl Default for StackTree {
    fn default() -> Self {
        StackTree {
            parent: vec![StackTree::ROOT],
            frame: vec![FrameId::MAX],
        }
    }
}

impl StackTree {
    /// The empty stack (a sample whose call chain is missing).
    pub const ROOT: StackId = 0;

    /// Adds node `frame` under `parent` (the loader interns: it never adds
    /// one node twice). None past [`SampleStack::MAX_STACKS`] nodes.
    pub fn push(&mut self, parent: StackId, frame: FrameId) -> Option<StackId> {
        let id = self.parent.len() as u32;
        if id >= SampleStack::MAX_STACKS || parent >= id {
            return None;
        }
        self.parent.push(parent);
        self.frame.push(frame);
        Some(id)
    }

    /// How many nodes, the empty stack included.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.len() <= 1
    }

    /// The caller's node (the root's is the root).
    pub fn parent(&self, node: StackId) -> StackId {
        self.parent
            .get(node as usize)
            .copied()
            .unwrap_or(Self::ROOT)
    }

    /// The innermost frame of `node`'s stack; None for the root.
    pub fn frame(&self, node: StackId) -> Option<FrameId> {
        (node != Self::ROOT)
            .then(|| self.frame.get(node as usize).copied())
            .flatten()
    }

    /// The frames of `node`'s stack, innermost (the sampled function) first.
    pub fn frames(&self, node: StackId) -> impl Iterator<Item = FrameId> + '_ {
        let mut at = node;
        std::iter::from_fn(move || {
            let frame = self.frame(at)?;
            at = self.parent(at);
            Some(frame)
        })
    }

    pub fn heap_bytes(&self) -> usize {
        (self.parent.capacity() + self.frame.capacity()) * 4
    }

    /// Gives back the room the building left over.
    pub fn shrink_to_fit(&mut self) {
        self.parent.shrink_to_fit();
        self.frame.shrink_to_fit();
    }
}

/// The samples of one thread from one sampler, in time order.
#[derive(Clone, Debug)]
pub struct ThreadSamples {
    pub thread: ThreadIdx,
    pub source: SampleSource,
    /// Sample times, sorted.
    pub times: Vec<Ns>,
    /// Each sample's stack and state, beside `times`.
    pub stacks: SampleStacks,
}

impl ThreadSamples {
    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The samples taken in `[from, to)`, as indexes into `times`.
    pub fn in_range(&self, from: Ns, to: Ns) -> Range<usize> {
        let lo = self.times.partition_point(|&t| t < from);
        let hi = self.times.partition_point(|&t| t < to).max(lo);
        lo..hi
    }
}

/// A thread's scheduling state from one change to the next.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SchedState {
    /// On a CPU.
    Running = 0,
    /// Switched out while runnable: another thread took its CPU.
    Preempted = 1,
    /// Switched out to sleep (a wait, a lock, I/O).
    Sleeping = 2,
    /// Switched out in an uninterruptible wait (disk I/O, page faults).
    Uninterruptible = 3,
    /// Switched out, why not recorded (most nsys versions on most kernels).
    OffCpu = 4,
}

impl SchedState {
    pub fn is_running(self) -> bool {
        self == SchedState::Running
    }

    pub fn label(self) -> &'static str {
        match self {
            SchedState::Running => "running",
            SchedState::Preempted => "preempted",
            SchedState::Sleeping => "sleeping",
            SchedState::Uninterruptible => "uninterruptible",
            SchedState::OffCpu => "off CPU",
        }
    }
}

/// One thread's scheduling: the state that begins at each change, sorted.
/// Before the first change and after the last the state is not known.
#[derive(Clone, Debug)]
pub struct ThreadSched {
    pub thread: ThreadIdx,
    pub at: Vec<Ns>,
    pub state: Vec<SchedState>,
}

impl ThreadSched {
    /// The stretches of `[from, to)` the record covers, each with its state:
    /// `(start, end, state)`, in order, merged where the state repeats.
    pub fn stretches(&self, from: Ns, to: Ns) -> Vec<(Ns, Ns, SchedState)> {
        let mut out: Vec<(Ns, Ns, SchedState)> = Vec::new();
        if to <= from || self.at.is_empty() {
            return out;
        }
        // The change in force at `from` is the last one at or before it.
        let first = self.at.partition_point(|&t| t <= from).saturating_sub(1);
        for i in first..self.at.len() {
            let start = self.at[i].max(from);
            if start >= to {
                break;
            }
            // The last change starts a state whose end nobody recorded.
            let Some(&next) = self.at.get(i + 1) else {
                break;
            };
            let end = next.min(to);
            if end <= start {
                continue;
            }
            let state = self.state[i];
            match out.last_mut() {
                Some(last) if last.2 == state && last.1 == start => last.1 = end,
                _ => out.push((start, end, state)),
            }
        }
        out
    }
}

/// Everything nsys's sampling recorded of a report (empty when it did not).
#[derive(Clone, Debug, Default)]
pub struct CpuSampling {
    pub frames: Vec<Frame>,
    pub stacks: StackTree,
    /// Per thread and source, sorted by (thread, source).
    pub threads: Vec<ThreadSamples>,
    /// Per thread, sorted by thread.
    pub sched: Vec<ThreadSched>,
}

impl CpuSampling {
    /// Whether the report has samples or scheduling of any thread.
    pub fn is_empty(&self) -> bool {
        self.threads.iter().all(ThreadSamples::is_empty)
            && self.sched.iter().all(|s| s.at.is_empty())
    }

    pub fn frame(&self, id: FrameId) -> Option<&Frame> {
        self.frames.get(id as usize)
    }

    /// `thread`'s samples from `source`, if it has any.
    pub fn samples_of(&self, thread: ThreadIdx, source: SampleSource) -> Option<&ThreadSamples> {
        let at = self
            .threads
            .binary_search_by(|s| (s.thread, s.source).cmp(&(thread, source)))
            .ok()?;
        self.threads.get(at)
    }

    /// The source a profile of `thread` should read: Python samples where
    /// the thread has any with frames, else native ones.
    pub fn preferred_source(&self, thread: ThreadIdx) -> Option<SampleSource> {
        let python = self
            .samples_of(thread, SampleSource::Python)
            .filter(|s| (s.stacks.palette().iter()).any(|st| st.stack() != StackTree::ROOT));
        if python.is_some() {
            return Some(SampleSource::Python);
        }
        self.samples_of(thread, SampleSource::Native)
            .filter(|s| !s.is_empty())
            .map(|_| SampleSource::Native)
    }

    /// `thread`'s scheduling, if recorded.
    pub fn sched_of(&self, thread: ThreadIdx) -> Option<&ThreadSched> {
        let at = self
            .sched
            .binary_search_by_key(&thread, |s| s.thread)
            .ok()?;
        self.sched.get(at)
    }

    /// Samples of every thread and source.
    pub fn sample_count(&self) -> usize {
        self.threads.iter().map(ThreadSamples::len).sum()
    }

    /// The earliest and latest sample or scheduling change.
    pub fn bounds(&self) -> Option<(Ns, Ns)> {
        let ends = self
            .threads
            .iter()
            .filter_map(|s| Some((*s.times.first()?, *s.times.last()?)))
            .chain(
                self.sched
                    .iter()
                    .filter_map(|s| Some((*s.at.first()?, *s.at.last()?))),
            );
        ends.reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }

    /// Bytes held, for the memory benchmark.
    pub fn heap_bytes(&self) -> usize {
        self.frames.capacity() * std::mem::size_of::<Frame>()
            + self.stacks.heap_bytes()
            + self
                .threads
                .iter()
                .map(|s| s.times.capacity() * 8 + s.stacks.heap_bytes())
                .sum::<usize>()
            + self
                .sched
                .iter()
                .map(|s| s.at.capacity() * 8 + s.state.capacity())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_reads_innermost_first() {
        let mut tree = StackTree::default();
        let main = tree.push(StackTree::ROOT, 7).expect("node");
        let leaf = tree.push(main, 9).expect("node");
        assert_eq!(tree.frames(leaf).collect::<Vec<_>>(), vec![9, 7]);
        assert_eq!(tree.frames(StackTree::ROOT).count(), 0);
        assert_eq!(tree.push(99, 1), None, "a parent not yet made is refused");
    }

    #[test]
    fn stretches_clip_to_the_range_and_stop_at_the_last_change() {
        let sched = ThreadSched {
            thread: 0,
            at: vec![10, 20, 30, 40],
            state: vec![
                SchedState::Running,
                SchedState::OffCpu,
                SchedState::OffCpu,
                SchedState::Running,
            ],
        };
        assert_eq!(
            sched.stretches(15, 100),
            vec![(15, 20, SchedState::Running), (20, 40, SchedState::OffCpu)]
        );
        assert!(sched.stretches(0, 10).is_empty());
    }
}
