//! One thread's sample stacks, kept small: a sampled thread runs the same
//! few hundred or thousand stacks over and over (a training loop's
//! iterations), so each distinct [`SampleStack`] (stack node + state) is
//! kept once in the thread's palette and each sample holds only its index
//! there, in as few bytes as the palette needs: 1 up to 256 distinct
//! stacks, 2 up to 65,536, else 4. A loop's samples cost ~2 bytes each
//! beside their time instead of 4. (A sample's [`SampleStack`] and
//! [`SampleState`] are here too; `samples` re-exports them.)

use std::ops::Range;

/// A node of the stack tree (`StackTree`); `StackTree::ROOT` is the empty stack.
pub type StackId = u32;

/// What the thread was doing when it was sampled (the Python sampler's
/// thread state; native samples are taken of running threads).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SampleState {
    Running = 0,
    /// Waiting (sleeping, a lock, I/O): Python's "Blocking Wait".
    Waiting = 1,
    Uninterruptible = 2,
    Unknown = 3,
}

impl SampleState {
    pub fn label(self) -> &'static str {
        match self {
            SampleState::Running => "running",
            SampleState::Waiting => "waiting",
            SampleState::Uninterruptible => "uninterruptible",
            SampleState::Unknown => "unknown",
        }
    }
}

/// A sample's stack and state in one `u32`: the stack node in the low 30
/// bits, the [`SampleState`] in the top 2.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SampleStack(u32);

impl SampleStack {
    /// The most stack nodes a report can have (2^30).
    pub const MAX_STACKS: u32 = 1 << 30;

    pub fn new(stack: StackId, state: SampleState) -> SampleStack {
        SampleStack((stack & (Self::MAX_STACKS - 1)) | ((state as u32) << 30))
    }

    pub fn stack(self) -> StackId {
        self.0 & (Self::MAX_STACKS - 1)
    }

    /// The stack and state as stored, for ordering and hashing.
    pub(crate) fn raw(self) -> u32 {
        self.0
    }

    pub fn state(self) -> SampleState {
        match self.0 >> 30 {
            0 => SampleState::Running,
            1 => SampleState::Waiting,
            2 => SampleState::Uninterruptible,
            _ => SampleState::Unknown,
        }
    }
}

/// Each sample's index into the palette, as narrow as the palette allows.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Indexes {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

/// The stacks of one thread's samples, in sample order (see the module).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleStacks {
    /// Each distinct stack once, sorted by its value.
    palette: Vec<SampleStack>,
    indexes: Indexes,
}

impl Default for SampleStacks {
    fn default() -> Self {
        SampleStacks {
            palette: Vec::new(),
            indexes: Indexes::U8(Vec::new()),
        }
    }
}

impl From<&[SampleStack]> for SampleStacks {
    fn from(stacks: &[SampleStack]) -> Self {
        let mut palette: Vec<SampleStack> = stacks.to_vec();
        palette.sort_unstable_by_key(|s| s.raw());
        palette.dedup();
        palette.shrink_to_fit();
        // The palette is sorted: a sample's index is found by halving.
        let index_of = |s: &SampleStack| palette.partition_point(|p| p.raw() < s.raw());
        let indexes = if palette.len() <= 1 << 8 {
            Indexes::U8(stacks.iter().map(|s| index_of(s) as u8).collect())
        } else if palette.len() <= 1 << 16 {
            Indexes::U16(stacks.iter().map(|s| index_of(s) as u16).collect())
        } else {
            Indexes::U32(stacks.iter().map(|s| index_of(s) as u32).collect())
        };
        SampleStacks { palette, indexes }
    }
}

impl From<Vec<SampleStack>> for SampleStacks {
    fn from(stacks: Vec<SampleStack>) -> Self {
        SampleStacks::from(&stacks[..])
    }
}

impl SampleStacks {
    pub fn len(&self) -> usize {
        match &self.indexes {
            Indexes::U8(v) => v.len(),
            Indexes::U16(v) => v.len(),
            Indexes::U32(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The distinct stacks of these samples, each once.
    pub fn palette(&self) -> &[SampleStack] {
        &self.palette
    }

    /// Bytes a sample's index takes: 1, 2 or 4.
    pub fn index_bytes(&self) -> usize {
        match &self.indexes {
            Indexes::U8(_) => 1,
            Indexes::U16(_) => 2,
            Indexes::U32(_) => 4,
        }
    }

    /// Sample `i`'s stack.
    pub fn get(&self, i: usize) -> Option<SampleStack> {
        let at = match &self.indexes {
            Indexes::U8(v) => *v.get(i)? as usize,
            Indexes::U16(v) => *v.get(i)? as usize,
            Indexes::U32(v) => *v.get(i)? as usize,
        };
        self.palette.get(at).copied()
    }

    /// Every sample's stack, in order.
    pub fn iter(&self) -> impl Iterator<Item = SampleStack> + '_ {
        self.range(0..self.len())
    }

    /// The stacks of samples `range` (clipped to the samples), in order.
    pub fn range(&self, range: Range<usize>) -> impl Iterator<Item = SampleStack> + '_ {
        self.palette_indexes(range)
            .filter_map(|at| self.palette.get(at).copied())
    }

    /// The palette index of each sample of `range` (clipped), in order: what
    /// a count per stack adds up, without looking the stacks up.
    pub fn palette_indexes(&self, range: Range<usize>) -> impl Iterator<Item = usize> + '_ {
        let end = range.end.min(self.len());
        let range = range.start.min(end)..end;
        let (narrow, middle, wide) = match &self.indexes {
            Indexes::U8(v) => (Some(&v[range]), None, None),
            Indexes::U16(v) => (None, Some(&v[range]), None),
            Indexes::U32(v) => (None, None, Some(&v[range])),
        };
        let narrow = narrow.into_iter().flatten().map(|&i| i as usize);
        let middle = middle.into_iter().flatten().map(|&i| i as usize);
        let wide = wide.into_iter().flatten().map(|&i| i as usize);
        narrow.chain(middle).chain(wide)
    }

    /// Bytes held (palette and indexes), for the memory benchmark.
    pub fn heap_bytes(&self) -> usize {
        let indexes = match &self.indexes {
            Indexes::U8(v) => v.capacity(),
            Indexes::U16(v) => v.capacity() * 2,
            Indexes::U32(v) => v.capacity() * 4,
        };
        self.palette.capacity() * std::mem::size_of::<SampleStack>() + indexes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_sample_stack_keeps_its_stack_and_state() {
        for state in [
            SampleState::Running,
            SampleState::Waiting,
            SampleState::Uninterruptible,
            SampleState::Unknown,
        ] {
            let s = SampleStack::new(SampleStack::MAX_STACKS - 1, state);
            assert_eq!(s.stack(), SampleStack::MAX_STACKS - 1);
            assert_eq!(s.state(), state);
        }
    }

    fn stack(i: u32) -> SampleStack {
        let states = [
            SampleState::Running,
            SampleState::Waiting,
            SampleState::Uninterruptible,
            SampleState::Unknown,
        ];
        SampleStack::new(i / 4, states[(i % 4) as usize])
    }

    /// Samples cycling over `distinct` stacks (a loop), some repeated.
    fn looped(distinct: u32, samples: usize) -> Vec<SampleStack> {
        (0..samples)
            .map(|i| stack(((i as u64 * 2_654_435_761) % distinct as u64) as u32))
            .collect()
    }

    #[test]
    fn each_width_gives_back_every_sample() {
        // 256 and 65,536 distinct are the last of a width; one more needs the next.
        for (distinct, width) in [(1, 1), (256, 1), (257, 2), (65_536, 2), (65_537, 4)] {
            let samples = looped(distinct, distinct as usize * 3);
            let kept = SampleStacks::from(&samples[..]);
            assert_eq!(kept.index_bytes(), width, "{distinct} distinct");
            assert_eq!(
                kept.palette().len(),
                distinct as usize,
                "{distinct} distinct"
            );
            assert_eq!(kept.len(), samples.len());
            assert!(
                kept.iter().eq(samples.iter().copied()),
                "{distinct} distinct"
            );
            let mid = samples.len() / 3..samples.len() / 2;
            assert!(kept.range(mid.clone()).eq(samples[mid].iter().copied()));
            assert_eq!(kept.get(samples.len() - 1), samples.last().copied());
            assert_eq!(kept.get(samples.len()), None);
        }
    }

    #[test]
    fn a_thread_of_more_stacks_than_sixteen_bits_keeps_each_one_apart() {
        // 70,000 distinct stacks, each taken twice, in an order that is not
        // the palette's: any index cut to 16 bits would name another stack.
        let distinct = 70_000u32;
        let samples: Vec<SampleStack> = (0..distinct)
            .rev()
            .chain(0..distinct)
            .map(|i| SampleStack::new(i, SampleState::Running))
            .collect();
        let kept = SampleStacks::from(samples.clone());
        assert_eq!(kept.index_bytes(), 4);
        assert!(kept.iter().eq(samples.iter().copied()));
        assert_eq!(kept.get(0).map(|s| s.stack()), Some(distinct - 1));
        assert_eq!(
            kept.get(distinct as usize).map(|s| s.stack()),
            Some(0),
            "the second pass starts at the first stack"
        );
    }

    #[test]
    fn ranges_are_clipped_to_the_samples() {
        let samples = looped(3, 10);
        let kept = SampleStacks::from(&samples[..]);
        assert_eq!(kept.range(8..50).count(), 2);
        assert_eq!(kept.range(20..50).count(), 0);
        assert!(SampleStacks::default().iter().next().is_none());
    }
}
