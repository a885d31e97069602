//! API call ⇄ GPU work, both directions in O(1).
//!
//! CUPTI gives each API call a correlation id, unique within a process, and
//! stamps it on the kernels, copies, sets and syncs the call caused. Ids are
//! dense counters, so a vector indexed by `id - base` beats a hash map by far in
//! memory (4 bytes a slot). A process whose ids are too sparse for that falls
//! back to hash maps.

use std::collections::HashMap;

const NONE: u32 = u32::MAX;

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
    fn pack(self) -> u32 {
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
pub struct ProcessCorrelation<'a>(Option<&'a Slots>);

impl<'a> ProcessCorrelation<'a> {
    /// The API call with this correlation id.
    pub fn api_call(self, id: u32) -> Option<u32> {
        let found = match self.0? {
            Slots::Dense { base, api, .. } => *api.get(id.checked_sub(*base)? as usize)?,
            Slots::Sparse { api, .. } => *api.get(&id)?,
        };
        (found != NONE).then_some(found)
    }

    /// The GPU operations caused by the API call with this correlation id.
    pub fn gpu_ops(self, id: u32) -> impl Iterator<Item = GpuOp> + 'a {
        let packed: &'a [u32] = match self.0 {
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
        packed.iter().map(|&p| GpuOp::unpack(p))
    }
}

#[derive(Debug, Default)]
pub struct CorrelationIndex {
    by_pid: HashMap<u32, Slots>,
}

impl CorrelationIndex {
    /// Builds the index from `(pid, correlation id, api call index)` and
    /// `(pid, correlation id, gpu op)` entries.
    pub fn build(api_calls: &[(u32, u32, u32)], gpu_ops: &[(u32, u32, GpuOp)]) -> Self {
        let mut pids: HashMap<u32, (u32, u32, usize)> = HashMap::new();
        // Per process: the lowest and highest id, and how many entries.
        let mut note = |pid: u32, ids: &mut dyn Iterator<Item = u32>| {
            let (lo, hi, count) = ids.fold((u32::MAX, 0, 0), |(lo, hi, n), id| {
                (lo.min(id), hi.max(id), n + 1)
            });
            let e = pids.entry(pid).or_insert((lo, hi, 0));
            e.0 = e.0.min(lo);
            e.1 = e.1.max(hi);
            e.2 += count;
        };
        for run in api_calls.chunk_by(|a, b| a.0 == b.0) {
            note(run[0].0, &mut run.iter().map(|e| e.1));
        }
        for run in gpu_ops.chunk_by(|a, b| a.0 == b.0) {
            note(run[0].0, &mut run.iter().map(|e| e.1));
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
        // Entries come in long runs of one process (they are listed thread by
        // thread, stream by stream): look the process up once per run.
        for run in api_calls.chunk_by(|a, b| a.0 == b.0) {
            match by_pid.get_mut(&run[0].0) {
                Some(Slots::Dense { base, api, .. }) => {
                    for &(_, id, index) in run {
                        api[(id - *base) as usize] = index;
                    }
                }
                Some(Slots::Sparse { api, .. }) => {
                    api.extend(run.iter().map(|&(_, id, index)| (id, index)));
                }
                None => {}
            }
        }
        // GPU ops: count per slot, prefix sums, then fill (a CSR layout).
        for run in gpu_ops.chunk_by(|a, b| a.0 == b.0) {
            if let Some(Slots::Dense { base, offsets, .. }) = by_pid.get_mut(&run[0].0) {
                for &(_, id, _) in run {
                    offsets[(id - *base) as usize + 1] += 1;
                }
            }
        }
        let mut cursors: HashMap<u32, Vec<u32>> = HashMap::new();
        for (pid, slots) in by_pid.iter_mut() {
            if let Slots::Dense { offsets, ops, .. } = slots {
                for i in 1..offsets.len() {
                    offsets[i] += offsets[i - 1];
                }
                ops.resize(*offsets.last().unwrap_or(&0) as usize, 0);
                cursors.insert(*pid, offsets[..offsets.len() - 1].to_vec());
            }
        }
        for run in gpu_ops.chunk_by(|a, b| a.0 == b.0) {
            let pid = run[0].0;
            match by_pid.get_mut(&pid) {
                Some(Slots::Dense { base, ops, .. }) => {
                    let Some(cursor) = cursors.get_mut(&pid) else {
                        continue;
                    };
                    for &(_, id, op) in run {
                        let slot = (id - *base) as usize;
                        ops[cursor[slot] as usize] = op.pack();
                        cursor[slot] += 1;
                    }
                }
                Some(Slots::Sparse { ops, .. }) => {
                    for &(_, id, op) in run {
                        ops.entry(id).or_default().push(op.pack());
                    }
                }
                None => {}
            }
        }
        CorrelationIndex { by_pid }
    }

    /// The API call (index into `Trace::cuda_api`) with this correlation id.
    pub fn api_call(&self, pid: u32, id: u32) -> Option<u32> {
        self.of_process(pid).api_call(id)
    }

    /// The GPU operations caused by the API call with this correlation id.
    pub fn gpu_ops(&self, pid: u32, id: u32) -> impl Iterator<Item = GpuOp> + '_ {
        self.of_process(pid).gpu_ops(id)
    }

    /// One process's correlations: looked up once for a loop over its calls
    /// (a hash lookup per call is a third of a range's work walk).
    pub fn of_process(&self, pid: u32) -> ProcessCorrelation<'_> {
        ProcessCorrelation(self.by_pid.get(&pid))
    }

    pub fn heap_bytes(&self) -> usize {
        self.by_pid
            .values()
            .map(|s| match s {
                Slots::Dense {
                    api, offsets, ops, ..
                } => (api.capacity() + offsets.capacity() + ops.capacity()) * 4,
                Slots::Sparse { api, ops } => api.capacity() * 12 + ops.capacity() * 40,
            })
            .sum()
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

    #[test]
    fn finds_both_directions_dense_and_sparse() {
        let api = [
            (7, 10, 0),
            (7, 11, 1),
            (8, 10, 2),
            (9, 5, 3),
            (9, 4_000_000_000, 4),
        ];
        let gpu = [
            (7, 11, kernel(0)),
            (
                7,
                11,
                GpuOp {
                    kind: GpuOpKind::Sync,
                    index: 3,
                },
            ),
            (8, 10, kernel(1)),
            (9, 4_000_000_000, kernel(2)),
        ];
        let index = CorrelationIndex::build(&api, &gpu);
        assert_eq!(index.api_call(7, 11), Some(1));
        assert_eq!(index.api_call(8, 10), Some(2));
        assert_eq!(index.api_call(7, 12), None);
        assert_eq!(index.api_call(7, 3), None);
        assert_eq!(index.api_call(1, 3), None);
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
    }
}
