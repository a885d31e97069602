//! The GPU operations of `gpu_gaps` and `gpu_time_util` as nsys reads them:
//! per (process, device), every start sorted, and every (end, context)
//! sorted apart (see [`super::gpu_gaps`]), with sums over blocks of each.
//!
//! Both rules follow from these lists: a gap is a start less the end before
//! it in the other list, and the time operations overlap `[lo, hi)` is
//! `F(hi) - F(lo)` with `F(t) = Σ (t - start) over starts before t - Σ (t -
//! end) over ends before t` (each operation's time before `t`), read from a
//! block's sum and at most a block of values. So a chunk costs a search,
//! not a pass over the operations.
//!
//! A report that grows (a capture's snapshots) merges its new operations
//! into the lists ([`SortedOps::extended`]): new work mostly starts after
//! the old, so a merge moves only the few values after the first new one.

use std::collections::BTreeMap;

use super::gpu_ops;
use super::window::Window;
use crate::model::{EventKind, GpuOpKind, Lineage, Ns, Trace, Track};

/// One operation as the rules read it: start, end, context.
type RawOp = (Ns, Ns, u32);

/// Values a block sum covers.
const SUM_BLOCK: usize = 1024;

/// The GPU work kinds the rules read, as [`Basis::rows`]'s index.
const WORK_KINDS: [GpuOpKind; 3] = [GpuOpKind::Kernel, GpuOpKind::Memcpy, GpuOpKind::Memset];

/// One (process, device)'s operations.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sorted {
    pub starts: Vec<Ns>,
    pub ends: Vec<(Ns, u32)>,
    /// `start_sums[b]`: the sum of the first `b * SUM_BLOCK` starts; the same
    /// for the ends.
    start_sums: Vec<i128>,
    end_sums: Vec<i128>,
    /// Operations that end before they start (a damaged report): in the
    /// lists for the gaps, taken out again of the busy time, which skips them.
    backwards: Vec<(Ns, Ns)>,
    /// The context nsys names the device's row by: its first operation's.
    pub context: Option<u32>,
}

/// Every (process, device)'s operations, in key order.
#[derive(Clone, Debug, Default)]
pub(crate) struct SortedOps {
    pub groups: BTreeMap<(u32, u32), Sorted>,
    /// The trace state the lists were made from, where they can be extended
    /// (the whole report's window only).
    basis: Option<Basis>,
}

/// Which rows of a growing report the lists hold.
#[derive(Clone, Debug)]
struct Basis {
    lineage: Lineage,
    rows: [usize; 3],
}

impl Basis {
    fn of(trace: &Trace) -> Basis {
        Basis {
            lineage: trace.lineage.clone(),
            rows: WORK_KINDS.map(|k| trace.gpu_spans(k).len()),
        }
    }

    fn grew_into(&self, trace: &Trace) -> bool {
        [EventKind::Kernel, EventKind::Memcpy, EventKind::Memset]
            .into_iter()
            .all(|k| trace.lineage.keeps_indexes_of(&self.lineage, k))
            && (WORK_KINDS.iter().zip(self.rows)).all(|(&k, n)| trace.gpu_spans(k).len() >= n)
    }
}

/// The rows of `track` at or past row `known` (a growing trace's new rows
/// are its last runs).
fn new_rows(track: &Track, known: usize) -> impl Iterator<Item = usize> + '_ {
    let runs = track.runs();
    let first_new = runs.partition_point(|r| r.rows().end <= known);
    runs[first_new..]
        .iter()
        .flat_map(move |r| r.rows().start.max(known)..r.rows().end)
}

impl SortedOps {
    /// The operations overlapping `window`, sorted.
    pub fn of(trace: &Trace, window: Window) -> SortedOps {
        let mut groups = BTreeMap::new();
        for (key, group) in gpu_ops::by_device(trace, window) {
            let ops = group.ops().map(|o| (o.start, o.end, o.context));
            groups.insert(key, Sorted::of(ops, group.most()));
        }
        let basis = (window == Window::ALL).then(|| Basis::of(trace));
        SortedOps { groups, basis }
    }

    /// The lists of `trace`, a later state of the report these were made
    /// from, with its new operations merged in; made anew when `trace` is
    /// not such a state. Equal to [`SortedOps::of`] of the whole report.
    pub fn extended(mut self, trace: &Trace) -> SortedOps {
        let Some(basis) = self.basis.take().filter(|b| b.grew_into(trace)) else {
            return SortedOps::of(trace, Window::ALL);
        };
        let mut new: BTreeMap<(u32, u32), Vec<RawOp>> = BTreeMap::new();
        for stream in &trace.streams {
            for (k, (kind, track)) in stream.work_tracks().into_iter().enumerate() {
                let spans = trace.gpu_spans(kind);
                let ops = new.entry((stream.pid, stream.device_id)).or_default();
                for row in new_rows(track, basis.rows[k]) {
                    let (start, end) = (spans.start[row], spans.end(row));
                    // As `gpu_ops::Group::ops` reads them.
                    if start > 0 {
                        ops.push((start, end, stream.context_id));
                    }
                }
            }
        }
        for (key, ops) in new {
            if !ops.is_empty() {
                self.groups.entry(key).or_default().add(&ops);
            }
        }
        // The context of each device's first operation, as a whole read finds it.
        for (key, group) in gpu_ops::by_device(trace, Window::ALL) {
            if let Some(sorted) = self.groups.get_mut(&key) {
                sorted.context = group.ops().next().map(|o| o.context);
            }
        }
        self.groups.retain(|_, g| !g.starts.is_empty());
        self.basis = Some(Basis::of(trace));
        self
    }
}

/// Merges sorted `new` into sorted `list`; returns the first index whose
/// value changed. Only the values after `new`'s first move.
fn merge_sorted<T: Copy + Ord>(list: &mut Vec<T>, new: &[T]) -> usize {
    let Some(&first) = new.first() else {
        return list.len();
    };
    let at = list.partition_point(|&v| v <= first);
    let tail = list.split_off(at);
    list.reserve(tail.len() + new.len());
    let (mut a, mut b) = (tail.iter().peekable(), new.iter().peekable());
    while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
        if x <= y {
            list.push(x);
            a.next();
        } else {
            list.push(y);
            b.next();
        }
    }
    list.extend(a);
    list.extend(b);
    at
}

impl Sorted {
    /// The operations `ops` (start, end, context; about `most` of them), sorted.
    fn of(ops: impl Iterator<Item = RawOp>, most: usize) -> Sorted {
        let mut starts: Vec<Ns> = Vec::with_capacity(most);
        let mut ends: Vec<(Ns, u32)> = Vec::with_capacity(most);
        let mut backwards = Vec::new();
        let mut context = None;
        for (start, end, c) in ops {
            context.get_or_insert(c);
            starts.push(start);
            ends.push((end, c));
            if end < start {
                backwards.push((start, end));
            }
        }
        // The ops come track by track, each sorted by start (and, rarely
        // overlapping, nearly by end): a run-adaptive sort merges those
        // runs in O(n log tracks).
        starts.sort();
        ends.sort();
        let mut sorted = Sorted {
            starts,
            ends,
            backwards,
            context,
            ..Sorted::default()
        };
        sorted.sum_from(0);
        sorted
    }

    /// Merges operations `ops` (start, end, context) in.
    fn add(&mut self, ops: &[RawOp]) {
        let mut starts: Vec<Ns> = ops.iter().map(|o| o.0).collect();
        let mut ends: Vec<(Ns, u32)> = ops.iter().map(|o| (o.1, o.2)).collect();
        self.backwards
            .extend(ops.iter().filter(|o| o.1 < o.0).map(|o| (o.0, o.1)));
        starts.sort();
        ends.sort();
        let from_start = merge_sorted(&mut self.starts, &starts);
        let from_end = merge_sorted(&mut self.ends, &ends);
        self.sum_from(from_start.min(from_end));
    }

    /// Recomputes the block sums from value `from` on.
    fn sum_from(&mut self, from: usize) {
        let block = from / SUM_BLOCK;
        let Sorted {
            starts,
            ends,
            start_sums,
            end_sums,
            ..
        } = self;
        fill_sums(start_sums, block, starts, |&s| s);
        fill_sums(end_sums, block, ends, |&(e, _)| e);
    }

    /// The sum of the first `k` of `values`, from the block sums `sums`.
    fn prefix(values: impl Fn(usize) -> i128, sums: &[i128], k: usize) -> i128 {
        let block = k / SUM_BLOCK;
        sums[block] + (block * SUM_BLOCK..k).map(values).sum::<i128>()
    }

    /// The operations' time before `t` (operations that end before they
    /// start left out).
    pub fn time_before(&self, t: i128) -> i128 {
        let k_start = self.starts.partition_point(|&s| (s as i128) < t);
        let k_end = self.ends.partition_point(|&(e, _)| (e as i128) < t);
        let started = Self::prefix(|i| self.starts[i] as i128, &self.start_sums, k_start);
        let ended = Self::prefix(|i| self.ends[i].0 as i128, &self.end_sums, k_end);
        let mut time = t * k_start as i128 - started - (t * k_end as i128 - ended);
        for &(s, e) in &self.backwards {
            let (s, e) = (s as i128, e as i128);
            if s < t {
                time -= t - s;
            }
            if e < t {
                time += t - e;
            }
        }
        time
    }
}

/// Keeps `sums` up to block `block` and sums the full blocks of `values`
/// (their times, `time`) after it.
fn fill_sums<T>(sums: &mut Vec<i128>, block: usize, values: &[T], time: impl Fn(&T) -> Ns) {
    sums.truncate(block + 1);
    if sums.is_empty() {
        sums.push(0);
    }
    let mut total = sums[sums.len() - 1];
    let from = (sums.len() - 1) * SUM_BLOCK;
    for full in values
        .get(from..)
        .unwrap_or_default()
        .chunks_exact(SUM_BLOCK)
    {
        // A block's sum fits an i64 only if its times are small: summed wide.
        total += full.iter().map(|v| i128::from(time(v))).sum::<i128>();
        sums.push(total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random operations (some ending before they start, some empty, ties),
    /// sorted at once and merged in pieces: the same lists, and each one's
    /// time before any moment is the sum of the operations' overlaps, the
    /// backward ones left out, as `gpu_time_util` sums them.
    #[test]
    fn merged_pieces_sort_as_a_whole_and_time_before_sums_overlaps() {
        let mut seed = 11u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % m
        };
        let ops: Vec<RawOp> = (0..5_000)
            .map(|i| {
                let start = i as Ns * 40 + next(400) as Ns;
                let end = match next(20) {
                    0 => start - next(50) as Ns,
                    1 => start,
                    _ => start + next(3_000) as Ns,
                };
                (start, end, next(3) as u32)
            })
            .collect();
        let whole = Sorted::of(ops.iter().copied(), ops.len());
        let mut grown = Sorted::of(ops[..700].iter().copied(), 700);
        for piece in ops[700..].chunks(613) {
            grown.add(piece);
        }
        assert_eq!(grown.starts, whole.starts);
        assert_eq!(grown.ends, whole.ends);
        assert_eq!(grown.start_sums, whole.start_sums);
        assert_eq!(grown.end_sums, whole.end_sums);
        assert_eq!(grown.context, whole.context);
        for t in (-100..220_000).step_by(997) {
            let naive: i128 = (ops.iter())
                .filter(|o| o.1 >= o.0)
                .map(|&(s, e, _)| i128::from((e.min(t) - s).max(0)))
                .sum();
            assert_eq!(whole.time_before(t.into()), naive, "t {t}");
            assert_eq!(grown.time_before(t.into()), naive, "t {t}");
        }
    }

    #[test]
    fn a_merge_moves_only_what_follows_the_first_new_value() {
        let mut list = vec![1, 3, 5, 7, 9];
        assert_eq!(merge_sorted(&mut list, &[6, 8, 10]), 3);
        assert_eq!(list, vec![1, 3, 5, 6, 7, 8, 9, 10]);
        assert_eq!(merge_sorted(&mut list, &[11]), 8);
        assert_eq!(merge_sorted(&mut list, &[]), 9);
        assert_eq!(merge_sorted(&mut list, &[0, 0]), 0);
        assert_eq!(list, vec![0, 0, 1, 3, 5, 6, 7, 8, 9, 10, 11]);
    }
}
