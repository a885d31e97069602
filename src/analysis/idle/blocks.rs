//! A lane's gaps in blocks that clones share.
//!
//! A live capture's attribution holds millions of gaps and is extended at
//! every snapshot, while a view still paints the last one: a clone must
//! not copy them all. Full blocks are sealed behind a reference count and
//! shared by every clone; only the open tail is a clone's own. Taking an
//! extension back to a checkpoint reopens at most one block.

use std::sync::Arc;

use super::gap::Gap;

/// Gaps a block: a clone copies at most this many, and a block is a few
/// megabytes.
const BLOCK: usize = 1 << 16;

/// Gaps in time order: full blocks shared, then the open tail.
#[derive(Clone, Debug, Default)]
pub(super) struct Blocks {
    sealed: Vec<Arc<[Gap]>>,
    tail: Vec<Gap>,
}

impl Blocks {
    pub fn len(&self) -> usize {
        self.sealed.len() * BLOCK + self.tail.len()
    }

    pub fn get(&self, i: usize) -> Option<&Gap> {
        match self.sealed.get(i / BLOCK) {
            Some(block) => block.get(i % BLOCK),
            None => self.tail.get(i - self.sealed.len() * BLOCK),
        }
    }

    pub fn push(&mut self, gap: Gap) {
        self.tail.push(gap);
        if self.tail.len() == BLOCK {
            let full = std::mem::take(&mut self.tail);
            self.sealed.push(full.into());
        }
    }

    /// Keeps the first `len` gaps.
    pub fn truncate(&mut self, len: usize) {
        let sealed = self.sealed.len() * BLOCK;
        if len >= sealed {
            self.tail.truncate(len - sealed);
            return;
        }
        let (block, keep) = (len / BLOCK, len % BLOCK);
        self.tail = self.sealed[block][..keep].to_vec();
        self.sealed.truncate(block);
    }

    /// The first index in `lo..hi` whose gap `pred` is false for (`pred`
    /// true for a prefix of the gaps, as `slice::partition_point`).
    pub fn partition_point(
        &self,
        mut lo: usize,
        mut hi: usize,
        pred: impl Fn(&Gap) -> bool,
    ) -> usize {
        hi = hi.min(self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.get(mid) {
                Some(g) if pred(g) => lo = mid + 1,
                _ => hi = mid,
            }
        }
        lo
    }

    /// The gaps of `lo..hi`, in order.
    pub fn iter_range(&self, lo: usize, hi: usize) -> impl Iterator<Item = &Gap> + Clone + '_ {
        let hi = hi.min(self.len());
        // The blocks that hold `lo..hi` only: a window is a few gaps of millions.
        let first = (lo / BLOCK).min(self.sealed.len());
        let end = hi.div_ceil(BLOCK).clamp(first, self.sealed.len());
        let tail: &[Gap] = if hi > self.sealed.len() * BLOCK {
            &self.tail
        } else {
            &[]
        };
        let pieces = (self.sealed[first..end].iter().map(|b| &b[..])).chain(std::iter::once(tail));
        let mut at = first * BLOCK;
        pieces.flat_map(move |piece| {
            let (from, to) = (at, at + piece.len());
            at = to;
            let (a, b) = (lo.clamp(from, to) - from, hi.clamp(from, to) - from);
            piece[a..b.max(a)].iter()
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = &Gap> + Clone + '_ {
        self.iter_range(0, usize::MAX)
    }
}

impl PartialEq for Blocks {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// The gaps of one lane within a window ([`super::Attribution::gaps_in`]).
#[derive(Copy, Clone, Debug)]
pub struct GapsIn<'a> {
    blocks: Option<&'a Blocks>,
    lo: usize,
    hi: usize,
}

impl<'a> GapsIn<'a> {
    pub(super) fn new(blocks: &'a Blocks, lo: usize, hi: usize) -> Self {
        GapsIn {
            blocks: Some(blocks),
            lo,
            hi: hi.max(lo),
        }
    }

    pub(super) fn none() -> Self {
        GapsIn {
            blocks: None,
            lo: 0,
            hi: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.hi - self.lo
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th gap of the window.
    pub fn get(&self, i: usize) -> Option<&'a Gap> {
        let blocks = self.blocks?;
        (i < self.len()).then(|| blocks.get(self.lo + i)).flatten()
    }

    /// How many of the window's gaps from the `i`-th on `pred` is true for
    /// (true for a prefix of them).
    pub fn count_from(&self, i: usize, pred: impl Fn(&Gap) -> bool) -> usize {
        let Some(blocks) = self.blocks else {
            return 0;
        };
        let from = (self.lo + i).min(self.hi);
        blocks.partition_point(from, self.hi, pred) - from
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a Gap> + Clone + 'a {
        let (lo, hi) = (self.lo, self.hi);
        self.blocks
            .into_iter()
            .flat_map(move |b| b.iter_range(lo, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::idle::Cause;
    use crate::model::{GpuOp, GpuOpKind};

    fn gap(i: usize) -> Gap {
        Gap {
            start: 10 * i as i64,
            end: 10 * i as i64 + 5,
            lane: 0,
            next: GpuOp {
                kind: GpuOpKind::Kernel,
                index: i as u32,
            },
            thread: None,
            handed_by: None,
            dominant: Cause::Launch,
            verdict: Cause::Launch,
        }
    }

    /// Blocks behave as a vector through pushes, truncations into a sealed
    /// block and into the tail, and clones that go on apart; a clone's
    /// sealed blocks are the original's, not copies.
    #[test]
    fn blocks_hold_what_a_vector_holds_and_clones_share_full_blocks() {
        let mut blocks = Blocks::default();
        let mut model: Vec<Gap> = Vec::new();
        let n = 3 * BLOCK + 17;
        for i in 0..n {
            blocks.push(gap(i));
            model.push(gap(i));
        }
        let same = |b: &Blocks, m: &[Gap]| {
            assert_eq!(b.len(), m.len());
            assert!(b.iter().eq(m.iter()));
            for i in [0, 1, BLOCK - 1, BLOCK, m.len().saturating_sub(1)] {
                assert_eq!(b.get(i), m.get(i), "gap {i}");
            }
            assert_eq!(b.get(m.len()), None);
        };
        same(&blocks, &model);
        let clone = blocks.clone();
        assert!(Arc::ptr_eq(&clone.sealed[1], &blocks.sealed[1]), "shared");
        // Back into a sealed block, then on again: the clone keeps its own.
        blocks.truncate(BLOCK + 5);
        model.truncate(BLOCK + 5);
        same(&blocks, &model);
        for i in 0..BLOCK {
            blocks.push(gap(n + i));
            model.push(gap(n + i));
        }
        same(&blocks, &model);
        same(&clone, &(0..n).map(gap).collect::<Vec<_>>());
        blocks.truncate(model.len() - 3);
        model.truncate(model.len() - 3);
        same(&blocks, &model);
        // Windows and searches.
        let starts = |g: &Gap| g.start < 10 * (BLOCK as i64 + 2);
        assert_eq!(
            blocks.partition_point(0, usize::MAX, starts),
            model.partition_point(starts)
        );
        for (lo, hi) in [
            (0, 3),
            (BLOCK - 1, BLOCK + 1),
            (2 * BLOCK, 2 * BLOCK + 5),
            (model.len() - 4, model.len() + 10),
            (5, 5),
            (3 * BLOCK, model.len()),
        ] {
            let hi_in = hi.min(model.len());
            assert!(
                blocks
                    .iter_range(lo, hi)
                    .eq(model[lo.min(hi_in)..hi_in].iter()),
                "{lo}..{hi}"
            );
        }
        let window = GapsIn::new(&blocks, BLOCK - 2, BLOCK + 3);
        assert_eq!(window.len(), 5);
        assert!(window.iter().eq(model[BLOCK - 2..BLOCK + 3].iter()));
        assert_eq!(window.get(4), model.get(BLOCK + 2));
        assert_eq!(window.get(5), None);
        assert_eq!(window.count_from(1, |g| g.start < 10 * BLOCK as i64), 1);
        assert_eq!(GapsIn::none().iter().count(), 0);
        blocks.truncate(0);
        assert!(blocks.len() == 0 && blocks.iter().next().is_none());
    }
}
