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
pub(crate) struct Collector {
    filling: bool,
    counts: Vec<u32>,
    group_of: Vec<u32>,
    cursor: Vec<u32>,
    values: Vec<i64>,
}

impl Collector {
    #[inline]
    pub(crate) fn push(&mut self, key: u32, value: i64) {
        let key = key as usize;
        if self.filling {
            // Keys beyond the declared key space were not counted, so they are dropped
            // in both passes rather than panicking.
            let Some(&group) = self.group_of.get(key) else {
                return;
            };
            if let Some(slot) = self.cursor.get_mut(group as usize) {
                self.values[*slot as usize] = value;
                *slot += 1;
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
    walk: impl Fn(&mut Collector),
    merge: impl FnOnce(&[u32]) -> (Vec<u32>, usize),
) -> Grouped {
    let mut collector = Collector {
        filling: false,
        counts: vec![0; raw_keys],
        group_of: Vec::new(),
        cursor: Vec::new(),
        values: Vec::new(),
    };
    walk(&mut collector);
    let (group_of, groups) = merge(&collector.counts);
    let mut offsets = vec![0u32; groups + 1];
    for (key, &count) in collector.counts.iter().enumerate() {
        if let Some(&group) = group_of.get(key).filter(|&&g| (g as usize) < groups) {
            offsets[group as usize + 1] += count;
        }
    }
    for g in 0..groups {
        offsets[g + 1] += offsets[g];
    }
    collector.values = vec![0; offsets[groups] as usize];
    collector.cursor = offsets[..groups].to_vec();
    collector.group_of = group_of;
    collector.filling = true;
    walk(&mut collector);
    Grouped {
        values: collector.values,
        offsets,
    }
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
pub(crate) struct Summary {
    pub total: i128,
    pub count: u64,
    pub avg: f64,
    pub median: f64,
    pub min: i64,
    pub max: i64,
    pub stddev: f64,
}

impl Summary {
    /// Summarizes `values` (reordered in place by the median selection); `None`
    /// when empty, where nsys prints empty cells.
    pub(crate) fn of(values: &mut [i64]) -> Option<Summary> {
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
        let stddev = if n <= 1 {
            0.0
        } else {
            let squares: f64 = values
                .iter()
                .map(|&v| {
                    let d = v as f64 - avg;
                    d * d
                })
                .sum();
            (squares / (n - 1) as f64).sqrt()
        };
        let median = median(values);
        Some(Summary {
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

/// Middle value, or the mean of the two middle values, in O(n).
fn median(values: &mut [i64]) -> f64 {
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
        let s = Summary::of(&mut v).unwrap();
        assert_eq!(s.total, 25356);
        assert_eq!(s.median, 4.0);
        assert_eq!(s.stddev.round(), 12670.0);
        let mut even = vec![1, 2];
        assert_eq!(Summary::of(&mut even).unwrap().median, 1.5);
        let mut one = vec![7];
        assert_eq!(Summary::of(&mut one).unwrap().stddev, 0.0);
        assert_eq!(Summary::of(&mut []), None);
    }

    #[test]
    fn huge_values_do_not_overflow() {
        let mut v = vec![i64::MAX, i64::MAX, i64::MIN];
        let s = Summary::of(&mut v).unwrap();
        assert_eq!(s.total, i64::MAX as i128 - 1);
        let mut two = vec![i64::MAX, i64::MAX];
        assert_eq!(Summary::of(&mut two).unwrap().median, i64::MAX as f64);
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
