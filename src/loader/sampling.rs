//! What the readers of CPU samples share ([`super::samples`],
//! [`super::python_samples`], [`super::sched`]): the [`Sampling`] being
//! built (frames and stacks interned, samples per thread and source) and
//! the cancel check. A leaf, so that the readers need not import each other.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::builder::Builder;
use super::error::cancelled;
use crate::model::{
    CpuSampling, Frame, FrameId, Ns, SampleSource, SampleStack, StackId, StackTree, ThreadIdx,
    ThreadSamples, ThreadSched,
};

/// Rows between two looks at the cancel flag.
const CANCEL_EVERY: u64 = 1 << 13;

/// Every [`CANCEL_EVERY`] rows (`read` so far), turns a cancel request into
/// the error that unwinds the load.
pub(super) fn stop_if_cancelled(b: &Builder, read: u64) -> rusqlite::Result<()> {
    if read.is_multiple_of(CANCEL_EVERY) && b.cancel.load(Ordering::Relaxed) {
        return Err(cancelled());
    }
    Ok(())
}

/// One thread's samples from one source, as read: (key, times, stacks).
type Series = ((ThreadIdx, SampleSource), Vec<Ns>, Vec<SampleStack>);

/// [`CpuSampling`] being built: frames and stacks interned, samples per
/// (thread, source) in the order read.
#[derive(Default)]
pub(super) struct Sampling {
    frames: Vec<Frame>,
    frame_ids: HashMap<Frame, FrameId>,
    stacks: StackTree,
    stack_ids: HashMap<(StackId, FrameId), StackId>,
    /// Set once the stack tree is full: later stacks stop where it did.
    pub(super) stacks_full: bool,
    series: Vec<Series>,
    series_of: HashMap<(ThreadIdx, SampleSource), usize>,
    /// The series the last sample went to: samples come in runs of one thread's.
    last: Option<((ThreadIdx, SampleSource), usize)>,
}

impl Sampling {
    pub(super) fn frame(&mut self, frame: Frame) -> FrameId {
        if let Some(&id) = self.frame_ids.get(&frame) {
            return id;
        }
        let id = self.frames.len() as FrameId;
        self.frames.push(frame);
        self.frame_ids.insert(frame, id);
        id
    }

    /// The stack of `frames`, given outermost first.
    pub(super) fn stack(&mut self, frames: impl Iterator<Item = FrameId>) -> StackId {
        let mut at = StackTree::ROOT;
        for frame in frames {
            at = match self.stack_ids.get(&(at, frame)) {
                Some(&next) => next,
                None => match self.stacks.push(at, frame) {
                    Some(next) => {
                        self.stack_ids.insert((at, frame), next);
                        next
                    }
                    None => {
                        self.stacks_full = true;
                        return at;
                    }
                },
            };
        }
        at
    }

    pub(super) fn push(
        &mut self,
        thread: ThreadIdx,
        source: SampleSource,
        time: Ns,
        stack: SampleStack,
    ) {
        let key = (thread, source);
        let at = match self.last {
            Some((k, at)) if k == key => at,
            _ => {
                let at = *self.series_of.entry(key).or_insert_with(|| {
                    self.series.push((key, Vec::new(), Vec::new()));
                    self.series.len() - 1
                });
                self.last = Some((key, at));
                at
            }
        };
        let (_, times, stacks) = &mut self.series[at];
        times.push(time);
        stacks.push(stack);
    }

    pub(super) fn finish(self, sched: Vec<ThreadSched>) -> CpuSampling {
        let mut threads: Vec<ThreadSamples> = self
            .series
            .into_iter()
            .map(|((thread, source), times, stacks)| sorted(thread, source, times, stacks))
            .collect();
        threads.sort_by_key(|s| (s.thread, s.source));
        let mut frames = self.frames;
        frames.shrink_to_fit();
        let mut stacks = self.stacks;
        stacks.shrink_to_fit();
        CpuSampling {
            frames,
            stacks,
            threads,
            sched,
        }
    }
}

/// A series sorted by time (reports list samples by id, nearly always in
/// time order: only then is a sort needed).
fn sorted(
    thread: ThreadIdx,
    source: SampleSource,
    mut times: Vec<Ns>,
    mut stacks: Vec<SampleStack>,
) -> ThreadSamples {
    if !times.is_sorted() {
        let mut order: Vec<u32> = (0..times.len() as u32).collect();
        order.sort_by_key(|&i| times[i as usize]);
        times = order.iter().map(|&i| times[i as usize]).collect();
        stacks = order.iter().map(|&i| stacks[i as usize]).collect();
    }
    times.shrink_to_fit();
    stacks.shrink_to_fit();
    ThreadSamples {
        thread,
        source,
        times,
        stacks,
    }
}
