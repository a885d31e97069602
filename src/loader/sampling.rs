//! What the readers of CPU samples share ([`super::samples`],
//! [`super::python_samples`], [`super::sched`]): the [`Sampling`] being
//! built (frames and stacks interned, samples per thread and source) and
//! the cancel check. A leaf, so that the readers need not import each other.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::Ordering;

use super::builder::Builder;
use super::error::cancelled;
use crate::model::{
    CpuSampling, Frame, FrameId, Ns, SampleSource, SampleStack, StackId, StackTree, ThreadIdx,
    ThreadSamples, ThreadSched,
};

/// A multiply-rotate hash, a word at a time, for the maps that intern what
/// the samples repeat (frames, stacks, payloads: hundreds of thousands of
/// lookups of small keys and of payloads of half a kilobyte). The standard
/// hasher's defence against chosen keys costs several times more here; a
/// report crafted to collide slows its own load, nothing else.
#[derive(Default, Clone, Copy)]
pub(super) struct WordHasher(u64);

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            self.add(u64::from_le_bytes(w));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.add(v as u64);
    }

    fn write_u32(&mut self, v: u32) {
        self.add(v as u64);
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }

    fn write_i64(&mut self, v: i64) {
        self.add(v as u64);
    }

    fn finish(&self) -> u64 {
        // The product's high bits are its best: moved down, where the
        // table picks its bucket.
        self.0.rotate_left(26)
    }
}

/// A map hashed with [`WordHasher`].
pub(super) type WordMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

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
    frame_ids: WordMap<Frame, FrameId>,
    stacks: StackTree,
    stack_ids: WordMap<(StackId, FrameId), StackId>,
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
    ThreadSamples {
        thread,
        source,
        times,
        stacks: stacks.into(),
    }
}
