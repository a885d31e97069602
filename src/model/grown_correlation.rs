//! API call ⇄ GPU operation links of a growing trace, extended as rows come.
//!
//! A whole load builds the correlation index in one pass over every call
//! and GPU operation ([`super::CorrelationIndex::build`]); a growing trace would pay
//! that pass at every snapshot (a third of a snapshot at 12M events). Here
//! each process keeps slots by correlation id, shared by every snapshot: a
//! new API call fills its id's slot, a new kernel (copy, memset, sync) is appended to its id's
//! chain of nodes. Slots are atomics: a later snapshot's writes may land in
//! slots an earlier one reads, but only ever with rows and nodes past that
//! snapshot's (rows are appended), which its reads leave out. An id's
//! operations read in the order they came (a whole load lists them by
//! stream, then by kind).
//! A correlation id used twice by one process (the later call wins, as in a
//! whole load) reads as no call in snapshots taken before the reuse.
//! Ids too sparse for slots are not grown ([`GrowingCorrelation::add`]
//! says so): such a trace's index is built whole.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use super::column::Column;
use super::correlation::{GpuOp, GpuOpKind, GrownView, NONE, TrackIds};

/// One process's slots, and where each id's chain ends (for the writer).
#[derive(Debug)]
struct Slots {
    view: GrownView,
    /// `id - base` → the last node of its chain.
    tail: Vec<u32>,
    /// Entries so far, to tell whether the ids stay dense.
    entries: usize,
}

/// The writer of a growing trace's API-call and GPU-operation links.
#[derive(Debug, Default)]
pub struct GrowingCorrelation {
    by_pid: HashMap<u32, Slots>,
}

fn fresh(n: usize) -> Arc<[AtomicU32]> {
    (0..n).map(|_| AtomicU32::new(NONE)).collect()
}

/// `old` in a new array of `n` slots from offset `shift` on.
fn moved(old: &[AtomicU32], n: usize, shift: usize) -> Arc<[AtomicU32]> {
    let new = fresh(n);
    for (i, v) in old.iter().enumerate() {
        new[shift + i].store(v.load(Ordering::Relaxed), Ordering::Relaxed);
    }
    new
}

impl Slots {
    fn new() -> Slots {
        Slots {
            view: GrownView {
                base: 0,
                api: fresh(0),
                head: fresh(0),
                next: fresh(0),
                ops: Column::new(),
            },
            tail: Vec::new(),
            entries: 0,
        }
    }

    /// Room for ids `lo..=hi`, as [`super::CorrelationIndex::build`] decides
    /// for dense slots; false when they are too sparse for it.
    fn cover(&mut self, lo: u32, hi: u32, more: usize) -> bool {
        let v = &self.view;
        let len = v.api.len();
        let (old_lo, old_hi) = if len == 0 {
            (lo, hi)
        } else {
            (v.base, v.base + (len as u32 - 1))
        };
        let (new_lo, new_hi) = (lo.min(old_lo), hi.max(old_hi));
        let span = (new_hi - new_lo) as usize + 1;
        self.entries += more;
        if span > 4 * self.entries + 4096 {
            return false;
        }
        if len > 0 && new_lo == v.base && span <= len {
            return true;
        }
        // Twice the room above (ids count up), exactly what is needed below.
        let room = if len == 0 { span } else { span.max(2 * len) };
        let shift = (old_lo - new_lo) as usize;
        let view = &mut self.view;
        view.api = moved(&view.api, room, if len == 0 { 0 } else { shift });
        view.head = moved(&view.head, room, if len == 0 { 0 } else { shift });
        view.base = new_lo;
        let mut tail = vec![NONE; room];
        if len > 0 {
            tail[shift..shift + self.tail.len()].copy_from_slice(&self.tail);
        }
        self.tail = tail;
        true
    }

    fn fill_api(&mut self, entries: impl Iterator<Item = (u32, u32)>) {
        for (row, id) in entries {
            let slot = (id - self.view.base) as usize;
            self.view.api[slot].store(row, Ordering::Relaxed);
        }
    }

    fn add_ops(&mut self, kind: GpuOpKind, entries: impl Iterator<Item = (u32, u32)>) {
        for (row, id) in entries {
            let slot = (id - self.view.base) as usize;
            let node = self.view.ops.len() as u32;
            self.view.ops.push(GpuOp { kind, index: row }.pack());
            if self.view.next.len() <= node as usize {
                let n = self.view.next.len();
                self.view.next = moved(&self.view.next, (2 * n).max(node as usize + 1), 0);
            }
            match self.tail[slot] {
                NONE => self.view.head[slot].store(node, Ordering::Relaxed),
                last => self.view.next[last as usize].store(node, Ordering::Relaxed),
            }
            self.tail[slot] = node;
        }
    }
}

impl GrowingCorrelation {
    /// Links the API calls `api` and GPU operations `ops` (rows not added
    /// before), each track with its process; an id's operations are listed
    /// in the order they come. False when a process's ids are too sparse
    /// for slots: the caller then builds its index whole (and should not
    /// add to this one again).
    pub fn add(&mut self, api: &[TrackIds], ops: &[(GpuOpKind, TrackIds)]) -> bool {
        let mut bounds: HashMap<u32, (u32, u32, usize)> = HashMap::new();
        for t in api.iter().chain(ops.iter().map(|(_, t)| t)) {
            for (_, id) in t.entries() {
                let e = bounds.entry(t.pid).or_insert((id, id, 0));
                *e = (e.0.min(id), e.1.max(id), e.2 + 1);
            }
        }
        for (pid, (lo, hi, n)) in bounds {
            let slots = self.by_pid.entry(pid).or_insert_with(Slots::new);
            if !slots.cover(lo, hi, n) {
                return false;
            }
        }
        for t in api {
            if let Some(slots) = self.by_pid.get_mut(&t.pid) {
                slots.fill_api(t.entries());
            }
        }
        for (kind, t) in ops {
            if let Some(slots) = self.by_pid.get_mut(&t.pid) {
                slots.add_ops(*kind, t.entries());
            }
        }
        true
    }

    /// Every process's slots as they stand: what a snapshot holds, read
    /// within its `Limits`.
    pub fn views(&self) -> HashMap<u32, GrownView> {
        (self.by_pid.iter())
            .map(|(&pid, s)| (pid, s.view.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::CorrelationIndex;
    use super::*;

    fn track(pid: u32, events: std::ops::Range<u32>, ids: &[u32]) -> TrackIds<'_> {
        TrackIds { pid, events, ids }
    }

    /// Grown in slices, the index answers as one built whole over the same
    /// rows; and an earlier snapshot keeps answering as it did while later
    /// rows fill slots and extend chains it shares.
    #[test]
    fn grown_in_slices_it_answers_as_built_whole() {
        // (pid, id) of the API calls and kernels, by row. The first slice
        // makes room for ids 10..=30 and 40..=49, filled later (15, 12, 45,
        // 20): the same slots the first snapshot reads. Id 10 gets three
        // kernels, one a slice; id 7 comes below every id before it.
        let api = [
            (1, 10),
            (1, 30),
            (2, 40),
            (2, 49),
            (1, 15),
            (2, 45),
            (1, 12),
            (1, 7),
            (1, 20),
        ];
        let kernels = [
            (1, 10),
            (1, 11),
            (1, 30),
            (2, 40),
            (1, 10),
            (1, 15),
            (2, 45),
            (1, 10),
            (1, 7),
            (1, 20),
        ];
        let api_ids: Vec<u32> = api.iter().map(|r| r.1).collect();
        let kernel_ids: Vec<u32> = kernels.iter().map(|r| r.1).collect();
        let tracks = |rows: &[(u32, u32)], ids: &'static [u32], span: std::ops::Range<u32>| {
            span.map(|r| track(rows[r as usize].0, r..r + 1, ids))
                .collect::<Vec<_>>()
        };
        let api_ids: &'static [u32] = Box::leak(api_ids.into_boxed_slice());
        let kernel_ids: &'static [u32] = Box::leak(kernel_ids.into_boxed_slice());
        let mut grown = GrowingCorrelation::default();
        let mut snapshots = Vec::new();
        for (a, k) in [(0..4, 0..4), (4..7, 4..7), (7..9, 7..10)] {
            let new_kernels = tracks(&kernels, kernel_ids, k.clone());
            assert!(
                grown.add(
                    &tracks(&api, api_ids, a.clone()),
                    &(new_kernels.into_iter())
                        .map(|t| (GpuOpKind::Kernel, t))
                        .collect::<Vec<_>>()
                )
            );
            let index = CorrelationIndex::with_grown(grown.views(), a.end);
            let whole = CorrelationIndex::build(
                &tracks(&api, api_ids, 0..a.end),
                &(tracks(&kernels, kernel_ids, 0..k.end).into_iter())
                    .map(|t| (GpuOpKind::Kernel, t))
                    .collect::<Vec<_>>(),
            );
            snapshots.push((index, whole));
            // Every snapshot so far, the earlier ones after later writes.
            for (n, (index, whole)) in snapshots.iter().enumerate() {
                for pid in [1, 2, 3] {
                    for id in 0..60 {
                        let at = format!("snapshot {n}, process {pid}, id {id}");
                        assert_eq!(index.api_call(pid, id), whole.api_call(pid, id), "{at}");
                        assert_eq!(
                            index.gpu_ops(pid, id).collect::<Vec<_>>(),
                            whole.gpu_ops(pid, id).collect::<Vec<_>>(),
                            "{at}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn ids_too_sparse_for_slots_are_not_grown() {
        let ids = [1, 4_000_000_000];
        let mut grown = GrowingCorrelation::default();
        assert!(!grown.add(&[track(1, 0..2, &ids)], &[]));
    }
}
