//! Grouping event values by key, and the per-group statistics nsys prints.
//!
//! Grouping is a counting sort in two passes over the events: the first pass
//! counts events per raw key (a dense `u32`, usually a `StrId`), the caller then
//! decides which raw keys form one group (several raw keys may merge, e.g. two
//! API names that strip to the same text), and the second pass writes each value
//! into its group's slice of one flat buffer. No hashing and no allocation per
//! event; the medians are then `select_nth_unstable` on each group's slice.

/// Marks a raw key that no event used.
pub(crate) const UNUSED: u32 = u32::MAX;

/// Receives `(raw key, value)` pairs from a report's event walk. The walk runs
/// twice, once counting and once filling, and must push the same pairs both times.
pub(crate) struct Collector<'a> {
    filling: bool,
    counts: Vec<u32>,
    group_of: &'a [u32],
    /// Filling: this walk's part of each group, and how much of it is written.
    slots: Vec<&'a mut [i64]>,
    cursor: Vec<u32>,
}

impl Collector<'_> {
    #[inline]
    pub(crate) fn push(&mut self, key: u32, value: i64) {
        let key = key as usize;
        if self.filling {
            // Keys beyond the declared key space were not counted, so they are dropped
            // in both passes rather than panicking.
            let Some(&group) = self.group_of.get(key) else {
                return;
            };
            let group = group as usize;
            if let (Some(slot), Some(at)) = (self.slots.get_mut(group), self.cursor.get_mut(group))
                && let Some(cell) = slot.get_mut(*at as usize)
            {
                *cell = value;
                *at += 1;
            }
        } else if let Some(count) = self.counts.get_mut(key) {
            *count += 1;
        }
    }
}

/// Values grouped: group `g` owns `values[offsets[g]..offsets[g + 1]]`, in the
/// order the walk pushed them.
pub(crate) struct Grouped {
    pub values: Vec<i64>,
    pub offsets: Vec<u32>,
}

impl Grouped {
    pub(crate) fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub(crate) fn group_mut(&mut self, group: usize) -> &mut [i64] {
        let (from, to) = (
            self.offsets[group] as usize,
            self.offsets[group + 1] as usize,
        );
        &mut self.values[from..to]
    }
}

/// Groups the values `walk` pushes. `merge` sees the count of every raw key and
/// returns, per raw key, its group (or [`UNUSED`]) and the number of groups.
pub(crate) fn collect(
    raw_keys: usize,
    walk: impl Fn(&mut Collector) + Sync,
    merge: impl FnOnce(&[u32]) -> (Vec<u32>, usize),
) -> Grouped {
    collect_parts(raw_keys, 1, |c, _| walk(c), merge)
}

/// [`collect`] with the walk cut in `parts`, walked on as many threads:
/// `walk(collector, part)` pushes part `part`'s pairs. Each group holds part
/// 0's values, then part 1's, and so on: the parts of one walk, in its order,
/// give the values in the order the whole walk would.
pub(crate) fn collect_parts(
    raw_keys: usize,
    parts: usize,
    walk: impl Fn(&mut Collector, usize) + Sync,
    merge: impl FnOnce(&[u32]) -> (Vec<u32>, usize),
) -> Grouped {
    let parts = parts.max(1);
    let count = |part: usize| {
        let mut collector = Collector {
            filling: false,
            counts: vec![0; raw_keys],
            group_of: &[],
            slots: Vec::new(),
            cursor: Vec::new(),
        };
        walk(&mut collector, part);
        collector.counts
    };
    let part_counts: Vec<Vec<u32>> = on_threads(parts, count);
    let mut counts = vec![0u32; raw_keys];
    for pc in &part_counts {
        for (total, &c) in counts.iter_mut().zip(pc) {
            *total += c;
        }
    }
    let (group_of, groups) = merge(&counts);
    // Per group and part, how many values the part pushes to the group.
    let mut sizes = vec![vec![0u32; parts]; groups];
    for (part, pc) in part_counts.iter().enumerate() {
        for (key, &c) in pc.iter().enumerate() {
            if let Some(&group) = group_of.get(key).filter(|&&g| (g as usize) < groups) {
                sizes[group as usize][part] += c;
            }
        }
    }
    let mut offsets = Vec::with_capacity(groups + 1);
    offsets.push(0u32);
    for group_sizes in &sizes {
        let end = offsets.last().copied().unwrap_or(0) + group_sizes.iter().sum::<u32>();
        offsets.push(end);
    }
    // On 2 MB pages when big (the global allocator, `crate::memory`): the
    // values of a report over 34M kernels are 272 MB, and faulting them in
    // 4 KB at a time took as long as the walk that fills them.
    let mut values = vec![0i64; offsets[groups] as usize];
    // Each part's slice of each group: the buffer cut group by group, then
    // each group's slice part by part.
    let mut slots: Vec<Vec<&mut [i64]>> = (0..parts).map(|_| Vec::with_capacity(groups)).collect();
    let mut rest: &mut [i64] = &mut values;
    for group_sizes in &sizes {
        for (part_slots, &size) in slots.iter_mut().zip(group_sizes) {
            let (slot, after) = rest.split_at_mut(size as usize);
            part_slots.push(slot);
            rest = after;
        }
    }
    let group_of = &group_of;
    let walk = &walk;
    let mut fillers: Vec<Option<Collector>> = slots
        .into_iter()
        .map(|slots| {
            Some(Collector {
                filling: true,
                counts: Vec::new(),
                group_of,
                cursor: vec![0; slots.len()],
                slots,
            })
        })
        .collect();
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (part, filler) in fillers.iter_mut().enumerate().skip(1) {
            if let Some(mut c) = filler.take() {
                handles.push(scope.spawn(move || walk(&mut c, part)));
            }
        }
        if let Some(mut c) = fillers[0].take() {
            walk(&mut c, 0);
        }
        for h in handles {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    Grouped { values, offsets }
}

/// `work(part)` for each of `parts`, part 0 on this thread and the others on
/// their own; the results in part order.
fn on_threads<T: Send>(parts: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if parts == 1 {
        return vec![work(0)];
    }
    let work = &work;
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..parts).map(|p| scope.spawn(move || work(p))).collect();
        let mut out = vec![work(0)];
        for h in others {
            match h.join() {
                Ok(v) => out.push(v),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
}

/// The merge for reports that group by raw key alone: one group per used key,
/// numbered in ascending key order. Returns the merge result and each group's key.
pub(crate) fn one_group_per_key(counts: &[u32]) -> ((Vec<u32>, usize), Vec<u32>) {
    let mut group_of = vec![UNUSED; counts.len()];
    let mut keys = Vec::new();
    for (key, &count) in counts.iter().enumerate() {
        if count > 0 {
            group_of[key] = keys.len() as u32;
            keys.push(key as u32);
        }
    }
    let groups = keys.len();
    ((group_of, groups), keys)
}

/// The statistics of one group, as nsys's SQL computes them (see the spec:
/// SQLite `avg`, sample standard deviation, median = mean of the two middles).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ValueStats {
    pub total: i128,
    pub count: u64,
    pub avg: f64,
    pub median: f64,
    pub min: i64,
    pub max: i64,
    pub stddev: f64,
}

impl ValueStats {
    /// Summarizes `values` (reordered in place by the median selection); `None`
    /// when empty, where nsys prints empty cells.
    pub(crate) fn of(values: &mut [i64]) -> Option<ValueStats> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mut total: i128 = 0;
        let (mut min, mut max) = (i64::MAX, i64::MIN);
        for &v in values.iter() {
            total += v as i128;
            min = min.min(v);
            max = max.max(v);
        }
        // SQLite's avg(): the exact integer sum converted to double, divided by n.
        let avg = total as f64 / n as f64;
        let square = |v: i64| {
            let d = v as f64 - avg;
            d * d
        };
        // The squares are summed in the values' order (the same bits as a
        // plain sum); a big group's histogram is counted in the same pass.
        let (squares, median) = match HistogramMedian::new(n, min, max) {
            Some(mut h) => {
                let mut squares = 0.0;
                for &v in values.iter() {
                    squares += square(v);
                    h.count(v);
                }
                (squares, h.median(values, max))
            }
            None => {
                let squares: f64 = values.iter().map(|&v| square(v)).sum();
                (squares, median(values))
            }
        };
        let stddev = if n <= 1 {
            0.0
        } else {
            (squares / (n - 1) as f64).sqrt()
        };
        Some(ValueStats {
            total,
            count: n as u64,
            avg,
            median,
            min,
            max,
            stddev,
        })
    }
}

/// The median of a big group without reordering it: a histogram of the
/// values' distances from the minimum, in buckets one unit wide up to 2,048
/// and 1/2,048 of their magnitude above (log-linear, as HDR histograms), then
/// the middle read off the counts when its bucket is one unit wide — the
/// usual case: kernel durations are heaped on a few exact values — or a
/// selection among the few values of its bucket. One pass, shared with the
/// squares of the deviation, where a selection over the whole group makes
/// several passes of swaps (at 17M kernels of one name, most of
/// `cuda_gpu_kern_sum`).
struct HistogramMedian {
    min: i64,
    counts: Vec<u32>,
}

impl HistogramMedian {
    /// Below this many values a plain selection is as fast.
    const MIN_VALUES: usize = 1 << 16;
    /// Buckets per power of two (and the exact range below it).
    const MANTISSA_BITS: u32 = 11;

    fn new(n: usize, min: i64, max: i64) -> Option<Self> {
        if n < Self::MIN_VALUES || n > u32::MAX as usize || min == max {
            return None;
        }
        let buckets = Self::bucket_of((max as i128 - min as i128) as u64) + 1;
        Some(HistogramMedian {
            min,
            counts: vec![0; buckets],
        })
    }

    /// The bucket of a distance from the minimum.
    #[inline]
    fn bucket_of(x: u64) -> usize {
        let m = Self::MANTISSA_BITS;
        if x < 1 << m {
            return x as usize;
        }
        let e = 63 - x.leading_zeros(); // ≥ m
        let mantissa = (x >> (e - m)) & ((1 << m) - 1);
        (((e - m + 1) as usize) << m) | mantissa as usize
    }

    /// The smallest distance of bucket `b`, and the bucket's width.
    fn bounds(b: usize) -> (u64, u64) {
        let m = Self::MANTISSA_BITS;
        if b < 1 << m {
            return (b as u64, 1);
        }
        let e = (b >> m) as u32 + m - 1;
        let mantissa = (b & ((1 << m) - 1)) as u64;
        (((1 << m) | mantissa) << (e - m), 1 << (e - m))
    }

    #[inline]
    fn bucket(&self, v: i64) -> usize {
        Self::bucket_of((v as i128 - self.min as i128) as u64)
    }

    #[inline]
    fn count(&mut self, v: i64) {
        let b = self.bucket(v);
        if let Some(c) = self.counts.get_mut(b) {
            *c += 1;
        }
    }

    /// The value of rank `rank` (0-based) among `values`, all of which were
    /// counted; `None` when its bucket holds several values and would need
    /// a look at them.
    fn exact(&self, rank: usize) -> (usize, usize, Option<i64>) {
        let mut below = 0usize;
        for (b, &c) in self.counts.iter().enumerate() {
            if below + c as usize > rank {
                let (lo, width) = Self::bounds(b);
                let value = (width == 1).then(|| (self.min as i128 + lo as i128) as i64);
                return (b, below, value);
            }
            below += c as usize;
        }
        (self.counts.len() - 1, below, None)
    }

    /// The median of `values`, all of which were counted; `max` is theirs.
    fn median(&self, values: &mut [i64], max: i64) -> f64 {
        let n = values.len();
        let upper_rank = n / 2;
        let (hi_bucket, _, upper) = self.exact(upper_rank);
        let (lo_bucket, lo_below, lower) = if n % 2 == 1 {
            self.exact(upper_rank)
        } else {
            self.exact(upper_rank - 1)
        };
        let (lower, upper) = match (lower, upper) {
            (Some(l), Some(u)) => (l, u),
            _ => {
                let in_middle = self.counts[lo_bucket..=hi_bucket]
                    .iter()
                    .map(|&c| c as usize)
                    .sum::<usize>();
                // Heaped in one wide bucket (rare): select in place.
                if in_middle > n / 4 {
                    return median(values);
                }
                // The buckets' values, by value: two compares, no bucket sums.
                let (first, _) = Self::bounds(lo_bucket);
                let (last, width) = Self::bounds(hi_bucket);
                let from = (self.min as i128 + first as i128) as i64;
                let to =
                    (self.min as i128 + last as i128 + width as i128 - 1).min(max as i128) as i64;
                let mut middle: Vec<i64> = Vec::with_capacity(in_middle);
                middle.extend(values.iter().copied().filter(|&v| from <= v && v <= to));
                let upper_at = upper_rank - lo_below;
                let upper = *middle.select_nth_unstable(upper_at).1;
                // The lower middle is the largest value ranked below the upper one.
                let lower = if n % 2 == 1 {
                    upper
                } else {
                    middle[..upper_at].iter().copied().max().unwrap_or(upper)
                };
                (lower, upper)
            }
        };
        if n % 2 == 1 {
            return upper as f64;
        }
        (lower as i128 + upper as i128) as f64 / 2.0
    }
}

/// Middle value, or the mean of the two middle values, in O(n) (also the cross-rank
/// analysis's). Panics on no values: callers have some.
pub(crate) fn median(values: &mut [i64]) -> f64 {
    let n = values.len();
    let half = n / 2;
    let (below, upper, _) = values.select_nth_unstable(half);
    let upper = *upper;
    if n % 2 == 1 {
        return upper as f64;
    }
    let lower = below.iter().copied().max().unwrap_or(upper);
    // The sum is exact in i128; halving a double is exact, so this is the
    // correctly rounded mean, as SQL computes it.
    (lower as i128 + upper as i128) as f64 / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_matches_the_spec_example() {
        let mut v = vec![4, 25344, 4, 4];
        let s = ValueStats::of(&mut v).unwrap();
        assert_eq!(s.total, 25356);
        assert_eq!(s.median, 4.0);
        assert_eq!(s.stddev.round(), 12670.0);
        let mut even = vec![1, 2];
        assert_eq!(ValueStats::of(&mut even).unwrap().median, 1.5);
        let mut one = vec![7];
        assert_eq!(ValueStats::of(&mut one).unwrap().stddev, 0.0);
        assert_eq!(ValueStats::of(&mut []), None);
    }

    /// The histogram's median equals the selection's, for groups big enough
    /// to take it: spreads narrow and wide, odd and even counts, values heaped
    /// in one bucket, negative and extreme values.
    #[test]
    fn histogram_median_matches_selection() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let n = HistogramMedian::MIN_VALUES + 3;
        let cases: Vec<Vec<i64>> = vec![
            (0..n).map(|_| (random() % 1000) as i64).collect(),
            (0..n + 1).map(|_| (random() % 5_000_000) as i64).collect(),
            (0..n).map(|_| (random() >> 1) as i64).collect(),
            (0..n + 1).map(|_| random() as i64).collect(),
            (0..n)
                .map(|i| {
                    if i == 7 {
                        i64::MAX
                    } else {
                        1000 + (i % 3) as i64
                    }
                })
                .collect(),
            (0..n + 1)
                .map(|i| if i % 2 == 0 { i64::MIN } else { i64::MAX })
                .collect(),
            (0..n).map(|i| i as i64 - (n / 2) as i64).collect(),
        ];
        for values in cases {
            let mut by_selection = values.clone();
            let want = median(&mut by_selection);
            let (min, max) = (*values.iter().min().unwrap(), *values.iter().max().unwrap());
            let mut h = HistogramMedian::new(values.len(), min, max).expect("big enough");
            for &v in &values {
                h.count(v);
            }
            let mut copy = values.clone();
            assert_eq!(h.median(&mut copy, max), want);
            // And through ValueStats, with the deviation as the plain sum gives it.
            let mut copy = values.clone();
            let s = ValueStats::of(&mut copy).unwrap();
            assert_eq!(s.median, want);
            let avg = s.avg;
            let plain: f64 = values
                .iter()
                .map(|&v| (v as f64 - avg) * (v as f64 - avg))
                .sum();
            assert_eq!(s.stddev, (plain / (values.len() - 1) as f64).sqrt());
        }
    }

    #[test]
    fn huge_values_do_not_overflow() {
        let mut v = vec![i64::MAX, i64::MAX, i64::MIN];
        let s = ValueStats::of(&mut v).unwrap();
        assert_eq!(s.total, i64::MAX as i128 - 1);
        let mut two = vec![i64::MAX, i64::MAX];
        assert_eq!(ValueStats::of(&mut two).unwrap().median, i64::MAX as f64);
    }

    #[test]
    fn merged_keys_share_a_group() {
        let events = [(0u32, 5i64), (2, 7), (0, 1), (3, 2), (9, 9)];
        let grouped = collect(
            4,
            |c| {
                for &(k, v) in &events {
                    c.push(k, v);
                }
            },
            |counts| {
                assert_eq!(counts, &[2, 0, 1, 1]);
                (vec![0, UNUSED, 1, 0], 2)
            },
        );
        assert_eq!(grouped.len(), 2);
        assert_eq!(grouped.offsets, vec![0, 3, 4]);
        assert_eq!(&grouped.values[..3], &[5, 1, 2]);
        assert_eq!(grouped.values[3], 7);
    }
}
