//! API call ⇄ GPU work, both directions in O(1).
//!
//! CUPTI gives each API call a correlation id, unique within a process, and
//! stamps it on the kernels, copies, sets and syncs the call caused. Ids are
//! dense counters, so a vector indexed by `id - base` beats a hash map by far in
//! memory (4 bytes a slot). A process whose ids are too sparse for that falls
//! back to hash maps.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use super::column::Column;

use crate::threads::joined;

pub(super) const NONE: u32 = u32::MAX;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GpuOpKind {
    Kernel,
    Memcpy,
    Memset,
    Sync,
}

/// A GPU operation: its kind and its row in that kind's table.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct GpuOp {
    pub kind: GpuOpKind,
    pub index: u32,
}

impl GpuOp {
    pub(super) fn pack(self) -> u32 {
        let kind = match self.kind {
            GpuOpKind::Kernel => 0,
            GpuOpKind::Memcpy => 1,
            GpuOpKind::Memset => 2,
            GpuOpKind::Sync => 3,
        };
        (kind << 30) | (self.index & 0x3FFF_FFFF)
    }

    fn unpack(packed: u32) -> Self {
        let kind = match packed >> 30 {
            0 => GpuOpKind::Kernel,
            1 => GpuOpKind::Memcpy,
            2 => GpuOpKind::Memset,
            _ => GpuOpKind::Sync,
        };
        GpuOp {
            kind,
            index: packed & 0x3FFF_FFFF,
        }
    }
}

#[derive(Debug)]
enum Slots {
    /// `api[id - base]`, and the GPU ops of id in `ops[offsets[id - base]..offsets[id - base + 1]]`.
    Dense {
        base: u32,
        api: Vec<u32>,
        offsets: Vec<u32>,
        ops: Vec<u32>,
    },
    Sparse {
        api: HashMap<u32, u32>,
        ops: HashMap<u32, Vec<u32>>,
    },
}

/// The correlations of one process ([`CorrelationIndex::of_process`]).
#[derive(Copy, Clone, Debug)]
pub struct ProcessCorrelation<'a> {
    slots: Option<&'a Slots>,
    /// A growing trace's slots of the API calls and GPU operations, shared
    /// by its snapshots ([`GrownView`]), and how many API calls this snapshot has.
    grown: Option<(&'a GrownView, u32)>,
}

impl<'a> ProcessCorrelation<'a> {
    /// The API call with this correlation id.
    pub fn api_call(self, id: u32) -> Option<u32> {
        if let Some((grown, api_rows)) = self.grown {
            // A later snapshot's call may fill this id's slot: not this one's.
            return grown.api_call(id).filter(|&row| row < api_rows);
        }
        let found = match self.slots? {
            Slots::Dense { base, api, .. } => *api.get(id.checked_sub(*base)? as usize)?,
            Slots::Sparse { api, .. } => *api.get(&id)?,
        };
        (found != NONE).then_some(found)
    }

    /// The GPU operations caused by the API call with this correlation id.
    pub fn gpu_ops(self, id: u32) -> GpuOps<'a> {
        let packed: &'a [u32] = match self.slots {
            Some(Slots::Dense {
                base, offsets, ops, ..
            }) => match id.checked_sub(*base).map(|s| s as usize) {
                Some(slot) if slot + 1 < offsets.len() => {
                    &ops[offsets[slot] as usize..offsets[slot + 1] as usize]
                }
                _ => &[],
            },
            Some(Slots::Sparse { ops, .. }) => ops.get(&id).map_or(&[], |v| v.as_slice()),
            None => &[],
        };
        let chain = self.grown.map(|(grown, _)| (grown, grown.first_node(id)));
        GpuOps {
            chain,
            packed: packed.iter(),
        }
    }
}

/// The GPU operations of one API call ([`ProcessCorrelation::gpu_ops`]):
/// a growing trace's in the order they came, a whole trace's from its
/// table of slots.
pub struct GpuOps<'a> {
    chain: Option<(&'a GrownView, u32)>,
    packed: std::slice::Iter<'a, u32>,
}

impl Iterator for GpuOps<'_> {
    type Item = GpuOp;

    fn next(&mut self) -> Option<GpuOp> {
        if let Some((grown, node)) = &mut self.chain {
            match grown.op(*node) {
                Some(op) => {
                    *node = grown.next_node(*node);
                    return Some(op);
                }
                None => self.chain = None,
            }
        }
        self.packed.next().map(|&p| GpuOp::unpack(p))
    }
}

/// One process's API-call and GPU-operation correlations in a growing trace, as a
/// snapshot sees them: slots shared with every other snapshot and filled as
/// rows come ([`super::grown_correlation`]). A later snapshot's writes can
/// reach this one's slots only with rows past its own (rows are appended):
/// an API call past its count is left out, a chain stops at the first node
/// past its nodes (a chain's nodes only grow).
#[derive(Clone, Debug)]
pub struct GrownView {
    pub(super) base: u32,
    /// `id - base` → API call row.
    pub(super) api: Arc<[AtomicU32]>,
    /// `id - base` → the first node of its kernels' chain.
    pub(super) head: Arc<[AtomicU32]>,
    /// Node → the next node of its chain.
    pub(super) next: Arc<[AtomicU32]>,
    /// Node → packed kernel ([`GpuOp::pack`]); this snapshot's nodes.
    pub(super) ops: Column<u32>,
}

impl GrownView {
    fn slot(&self, id: u32) -> Option<usize> {
        id.checked_sub(self.base).map(|s| s as usize)
    }

    fn api_call(&self, id: u32) -> Option<u32> {
        let row = self.api.get(self.slot(id)?)?.load(Ordering::Relaxed);
        (row != NONE).then_some(row)
    }

    fn first_node(&self, id: u32) -> u32 {
        self.slot(id)
            .and_then(|s| self.head.get(s))
            .map_or(NONE, |h| h.load(Ordering::Relaxed))
    }

    fn next_node(&self, node: u32) -> u32 {
        self.next
            .get(node as usize)
            .map_or(NONE, |n| n.load(Ordering::Relaxed))
    }

    /// The op of `node`, None past this snapshot's nodes (a chain's nodes
    /// only grow: the rest of it is later still).
    fn op(&self, node: u32) -> Option<GpuOp> {
        self.ops.get(node as usize).map(|&p| GpuOp::unpack(p))
    }

    fn heap_bytes(&self) -> usize {
        (self.api.len() + self.head.len() + self.next.len() + self.ops.capacity()) * 4
    }
}

#[derive(Debug, Default)]
pub struct CorrelationIndex {
    by_pid: ByPid<Slots>,
    /// A growing trace's links, by process, read within the API calls this
    /// snapshot holds (`by_pid` is then empty).
    grown: ByPid<GrownView>,
    api_rows: u32,
}

/// Values by process id, sorted: a report has a few processes, and looking
/// one up per API call with a hash map was a tenth of the findings engine's
/// time.
#[derive(Debug)]
struct ByPid<T>(Vec<(u32, T)>);

impl<T> Default for ByPid<T> {
    fn default() -> Self {
        ByPid(Vec::new())
    }
}

impl<T> ByPid<T> {
    fn get(&self, pid: u32) -> Option<&T> {
        let at = self.0.binary_search_by_key(&pid, |(p, _)| *p).ok()?;
        Some(&self.0[at].1)
    }

    fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter().map(|(_, v)| v)
    }
}

impl<T> From<HashMap<u32, T>> for ByPid<T> {
    fn from(map: HashMap<u32, T>) -> Self {
        let mut values: Vec<(u32, T)> = map.into_iter().collect();
        values.sort_unstable_by_key(|(pid, _)| *pid);
        ByPid(values)
    }
}

/// CUPTI numbers correlation ids from 1; 0 is what a NULL (or absent) id
/// reads as, and pairs with nothing — else every such call would pair with
/// every such kernel, as no SQL join would.
pub const NO_CORRELATION: u32 = 0;

/// One track's events as the index reads them: their process, where they
/// lie in their table, and that table's whole correlation column.
#[derive(Clone, Debug)]
pub struct TrackIds<'a> {
    pub pid: u32,
    pub events: Range<u32>,
    pub ids: &'a [u32],
}

impl TrackIds<'_> {
    /// Each event's index and correlation id, those without one left out
    /// (and those past the column's end, which a damaged table could give).
    pub(super) fn entries(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let end = (self.events.end as usize).min(self.ids.len());
        let start = (self.events.start as usize).min(end);
        // The ids first: the indexes then stop with them, not one past.
        self.ids[start..end]
            .iter()
            .copied()
            .zip(start as u32..)
            .filter(|&(id, _)| id != NO_CORRELATION)
            .map(|(id, index)| (index, id))
    }
}

/// Per process: the lowest and highest id, and how many entries.
type Bounds = HashMap<u32, (u32, u32, usize)>;

fn bounds<'a>(tracks: impl Iterator<Item = &'a TrackIds<'a>>) -> Bounds {
    let mut pids = Bounds::new();
    for t in tracks {
        let (lo, hi, n) = t.entries().fold((u32::MAX, 0, 0), |(lo, hi, n), (_, id)| {
            (lo.min(id), hi.max(id), n + 1)
        });
        if n == 0 {
            continue;
        }
        let e = pids.entry(t.pid).or_insert((lo, hi, 0));
        e.0 = e.0.min(lo);
        e.1 = e.1.max(hi);
        e.2 += n;
    }
    pids
}

/// The API half of a process's slots, filled on its own thread.
enum ApiSlots<'a> {
    Dense { base: u32, api: &'a mut [u32] },
    Sparse(&'a mut HashMap<u32, u32>),
}

/// The GPU half of a process's slots.
enum OpSlots<'a> {
    Dense {
        base: u32,
        offsets: &'a mut Vec<u32>,
        ops: &'a mut Vec<u32>,
    },
    Sparse(&'a mut HashMap<u32, Vec<u32>>),
}

fn fill_api(tracks: &[TrackIds], slots: &mut HashMap<u32, ApiSlots>) {
    for t in tracks {
        match slots.get_mut(&t.pid) {
            Some(ApiSlots::Dense { base, api }) => {
                for (index, id) in t.entries() {
                    api[(id - *base) as usize] = index;
                }
            }
            Some(ApiSlots::Sparse(api)) => api.extend(t.entries().map(|(index, id)| (id, index))),
            None => {}
        }
    }
}

/// GPU ops: counted per slot, prefix sums, then filled (a CSR layout), in
/// the order of `tracks`.
fn fill_ops(tracks: &[(GpuOpKind, TrackIds)], slots: &mut HashMap<u32, OpSlots>) {
    for (_, t) in tracks {
        if let Some(OpSlots::Dense { base, offsets, .. }) = slots.get_mut(&t.pid) {
            for (_, id) in t.entries() {
                offsets[(id - *base) as usize + 1] += 1;
            }
        }
    }
    let mut cursors: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, slot) in slots.iter_mut() {
        if let OpSlots::Dense { offsets, ops, .. } = slot {
            for i in 1..offsets.len() {
                offsets[i] += offsets[i - 1];
            }
            ops.resize(offsets.last().copied().unwrap_or(0) as usize, 0);
            cursors.insert(*pid, offsets[..offsets.len() - 1].to_vec());
        }
    }
    for &(kind, ref t) in tracks {
        match slots.get_mut(&t.pid) {
            Some(OpSlots::Dense { base, ops, .. }) => {
                let Some(cursor) = cursors.get_mut(&t.pid) else {
                    continue;
                };
                for (index, id) in t.entries() {
                    let slot = (id - *base) as usize;
                    ops[cursor[slot] as usize] = GpuOp { kind, index }.pack();
                    cursor[slot] += 1;
                }
            }
            Some(OpSlots::Sparse(ops)) => {
                for (index, id) in t.entries() {
                    ops.entry(id)
                        .or_default()
                        .push(GpuOp { kind, index }.pack());
                }
            }
            None => {}
        }
    }
}

impl CorrelationIndex {
    /// Builds the index from the CUDA API calls' tracks and the GPU
    /// operations' (each with its kind), read straight from their tables'
    /// correlation columns. The API half and the GPU half are filled on two
    /// threads (each is a pass over millions of events). Where two calls of
    /// one process share an id, the later in `api` wins; a call's GPU
    /// operations are listed in the order of `gpu`.
    pub fn build(api: &[TrackIds], gpu: &[(GpuOpKind, TrackIds)]) -> Self {
        let (api_bounds, gpu_bounds) = std::thread::scope(|scope| {
            let of_api = scope.spawn(|| bounds(api.iter()));
            let of_gpu = bounds(gpu.iter().map(|(_, t)| t));
            (joined(of_api), of_gpu)
        });
        let mut pids = api_bounds;
        for (pid, (lo, hi, n)) in gpu_bounds {
            let e = pids.entry(pid).or_insert((lo, hi, 0));
            e.0 = e.0.min(lo);
            e.1 = e.1.max(hi);
            e.2 += n;
        }
        let mut by_pid: HashMap<u32, Slots> = pids
            .into_iter()
            .map(|(pid, (lo, hi, count))| {
                let span = (hi - lo) as usize + 1;
                let slots = if span <= 4 * count + 4096 {
                    Slots::Dense {
                        base: lo,
                        api: vec![NONE; span],
                        offsets: vec![0; span + 1],
                        ops: Vec::new(),
                    }
                } else {
                    Slots::Sparse {
                        api: HashMap::new(),
                        ops: HashMap::new(),
                    }
                };
                (pid, slots)
            })
            .collect();
        let mut api_slots = HashMap::new();
        let mut op_slots = HashMap::new();
        for (&pid, slots) in by_pid.iter_mut() {
            let (a, o) = match slots {
                Slots::Dense {
                    base,
                    api,
                    offsets,
                    ops,
                } => (
                    ApiSlots::Dense { base: *base, api },
                    OpSlots::Dense {
                        base: *base,
                        offsets,
                        ops,
                    },
                ),
                Slots::Sparse { api, ops } => (ApiSlots::Sparse(api), OpSlots::Sparse(ops)),
            };
            api_slots.insert(pid, a);
            op_slots.insert(pid, o);
        }
        std::thread::scope(|scope| {
            let api_half = scope.spawn(|| fill_api(api, &mut api_slots));
            fill_ops(gpu, &mut op_slots);
            joined(api_half);
        });
        CorrelationIndex {
            by_pid: by_pid.into(),
            ..CorrelationIndex::default()
        }
    }

    /// A growing trace's index: its API calls' and GPU operations' shared
    /// slots (`grown`, of a snapshot holding `api_rows` API calls).
    pub fn with_grown(grown: HashMap<u32, GrownView>, api_rows: u32) -> Self {
        CorrelationIndex {
            by_pid: ByPid::default(),
            grown: grown.into(),
            api_rows,
        }
    }

    /// The API call (index into `Trace::cuda_api`) with this correlation id.
    pub fn api_call(&self, pid: u32, id: u32) -> Option<u32> {
        self.of_process(pid).api_call(id)
    }

    /// The GPU operations caused by the API call with this correlation id.
    pub fn gpu_ops(&self, pid: u32, id: u32) -> GpuOps<'_> {
        self.of_process(pid).gpu_ops(id)
    }

    /// One process's correlations: looked up once for a loop over its calls
    /// (a hash lookup per call is a third of a range's work walk).
    pub fn of_process(&self, pid: u32) -> ProcessCorrelation<'_> {
        ProcessCorrelation {
            slots: self.by_pid.get(pid),
            grown: self.grown.get(pid).map(|g| (g, self.api_rows)),
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.grown
            .values()
            .map(GrownView::heap_bytes)
            .sum::<usize>()
            + self
                .by_pid
                .values()
                .map(|s| match s {
                    Slots::Dense {
                        api, offsets, ops, ..
                    } => (api.capacity() + offsets.capacity() + ops.capacity()) * 4,
                    Slots::Sparse { api, ops } => api.capacity() * 12 + ops.capacity() * 40,
                })
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(index: u32) -> GpuOp {
        GpuOp {
            kind: GpuOpKind::Kernel,
            index,
        }
    }

    fn track(pid: u32, events: Range<u32>, ids: &[u32]) -> TrackIds<'_> {
        TrackIds { pid, events, ids }
    }

    #[test]
    fn finds_both_directions_dense_and_sparse() {
        // API calls 0..5: two of process 7's, one of 8's, two of 9's (one
        // id far from the rest: sparse), and one without an id.
        let api_ids = [10, 11, 10, 5, 4_000_000_000, NO_CORRELATION];
        let kernel_ids = [11, 10, 4_000_000_000, NO_CORRELATION];
        let sync_ids = [0, 0, 0, 11];
        let api = [
            track(7, 0..2, &api_ids),
            track(8, 2..3, &api_ids),
            track(9, 3..6, &api_ids),
        ];
        let gpu = [
            (GpuOpKind::Kernel, track(7, 0..1, &kernel_ids)),
            (GpuOpKind::Sync, track(7, 3..4, &sync_ids)),
            (GpuOpKind::Kernel, track(8, 1..2, &kernel_ids)),
            (GpuOpKind::Kernel, track(9, 2..4, &kernel_ids)),
        ];
        let index = CorrelationIndex::build(&api, &gpu);
        assert_eq!(index.api_call(7, 11), Some(1));
        assert_eq!(index.api_call(8, 10), Some(2));
        assert_eq!(index.api_call(7, 12), None);
        assert_eq!(index.api_call(7, 3), None);
        assert_eq!(index.api_call(1, 3), None);
        assert_eq!(index.api_call(9, NO_CORRELATION), None);
        let ops: Vec<_> = index.gpu_ops(7, 11).collect();
        assert_eq!(
            ops,
            vec![
                kernel(0),
                GpuOp {
                    kind: GpuOpKind::Sync,
                    index: 3
                }
            ]
        );
        assert_eq!(index.gpu_ops(7, 10).count(), 0);
        assert_eq!(index.api_call(9, 4_000_000_000), Some(4));
        assert_eq!(
            index.gpu_ops(9, 4_000_000_000).collect::<Vec<_>>(),
            vec![kernel(2)]
        );
        assert_eq!(index.gpu_ops(9, NO_CORRELATION).count(), 0);
    }

    /// A track reaching past its column (a damaged table) keeps the events
    /// the column has.
    #[test]
    fn a_track_past_its_column_keeps_what_the_column_has() {
        let ids = [5, 6, 7];
        let index = CorrelationIndex::build(&[track(1, 1..5, &ids)], &[]);
        assert_eq!(index.api_call(1, 6), Some(1));
        assert_eq!(index.api_call(1, 7), Some(2));
        assert_eq!(index.api_call(1, 5), None);
    }

    /// The index answers as a plain map of every entry does, on ids dense
    /// and sparse, shared by processes, repeated, and absent.
    #[test]
    fn answers_as_a_map_of_every_entry() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as u32
        };
        for spread in [50u32, 5_000_000] {
            let api_ids: Vec<u32> = (0..3_000).map(|_| next(spread)).collect();
            let op_ids: Vec<u32> = (0..4_000).map(|_| next(spread)).collect();
            let (api, gpu) = (
                [
                    track(1, 0..1_000, &api_ids),
                    track(2, 1_000..3_000, &api_ids),
                ],
                [
                    (GpuOpKind::Kernel, track(2, 0..2_500, &op_ids)),
                    (GpuOpKind::Memcpy, track(1, 2_500..4_000, &op_ids)),
                ],
            );
            let index = CorrelationIndex::build(&api, &gpu);
            let mut calls: HashMap<(u32, u32), u32> = HashMap::new();
            for t in &api {
                for i in t.events.clone() {
                    if api_ids[i as usize] != NO_CORRELATION {
                        calls.insert((t.pid, api_ids[i as usize]), i);
                    }
                }
            }
            let mut ops: HashMap<(u32, u32), Vec<GpuOp>> = HashMap::new();
            for (kind, t) in &gpu {
                for index in t.events.clone() {
                    let id = op_ids[index as usize];
                    if id != NO_CORRELATION {
                        let op = GpuOp { kind: *kind, index };
                        ops.entry((t.pid, id)).or_default().push(op);
                    }
                }
            }
            for pid in [1, 2, 3] {
                for id in (0..spread.min(20_000)).chain(op_ids.iter().copied()) {
                    assert_eq!(index.api_call(pid, id), calls.get(&(pid, id)).copied());
                    let found: Vec<GpuOp> = index.gpu_ops(pid, id).collect();
                    assert_eq!(found, ops.get(&(pid, id)).cloned().unwrap_or_default());
                }
            }
        }
    }
}
