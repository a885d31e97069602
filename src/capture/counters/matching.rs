//! Counter ranges of the counter pass joined to the kernels of the timeline.
//!
//! Both runs launch the same kernels in the same order (the benchmarks are
//! deterministic), so the k-th counter range of a kernel name is the k-th
//! instance of that name in launch order (correlation id, then start, for the
//! kernels of one graph launch). When the range names are not kernel names
//! (CUPTI may name auto ranges by number), the join falls back to launch
//! order over all kernels, and only when both runs have as many kernels.

use std::collections::HashMap;

/// One kernel instance of the timeline: its index in `Trace::kernels`, the
/// names it may go by (demangled, short, mangled), and its launch order key.
#[derive(Debug, Clone)]
pub struct TimelineKernel {
    pub index: u32,
    pub names: Vec<String>,
    pub correlation: u32,
    pub start: i64,
}

/// What the join found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Join {
    /// (counter range index, kernel index in `Trace::kernels`).
    pub pairs: Vec<(usize, u32)>,
    /// Counter ranges with no kernel of their name left.
    pub unmatched_ranges: Vec<usize>,
    /// Timeline kernels no range was joined to (`Trace::kernels` indices).
    pub unmatched_kernels: Vec<u32>,
    /// The names did not say which kernel a range was: joined by order alone.
    pub by_order_only: bool,
}

/// Joins `ranges` (counter range names, in the order CUPTI recorded them) to
/// `kernels` by name and launch order.
pub fn join(ranges: &[String], kernels: &[TimelineKernel]) -> Join {
    let mut ordered: Vec<&TimelineKernel> = kernels.iter().collect();
    ordered.sort_by_key(|k| (k.correlation, k.start, k.index));
    let named = ranges
        .iter()
        .any(|r| ordered.iter().any(|k| k.names.iter().any(|n| n == r)));
    if !named {
        return join_by_order(ranges.len(), &ordered);
    }
    // Each name's instances, in launch order; a kernel is queued under every
    // name it goes by, and taken once.
    let mut queues: HashMap<&str, std::collections::VecDeque<usize>> = HashMap::new();
    for (position, k) in ordered.iter().enumerate() {
        let mut seen: Vec<&str> = Vec::new();
        for n in &k.names {
            if !seen.contains(&n.as_str()) {
                seen.push(n);
                queues.entry(n).or_default().push_back(position);
            }
        }
    }
    let mut taken = vec![false; ordered.len()];
    let mut out = Join::default();
    for (r, name) in ranges.iter().enumerate() {
        let next = queues.get_mut(name.as_str()).and_then(|q| {
            while let Some(p) = q.pop_front() {
                if !taken[p] {
                    return Some(p);
                }
            }
            None
        });
        match next {
            Some(p) => {
                taken[p] = true;
                out.pairs.push((r, ordered[p].index));
            }
            None => out.unmatched_ranges.push(r),
        }
    }
    out.unmatched_kernels = ordered
        .iter()
        .zip(&taken)
        .filter(|(_, t)| !**t)
        .map(|(k, _)| k.index)
        .collect();
    out
}

fn join_by_order(ranges: usize, ordered: &[&TimelineKernel]) -> Join {
    if ranges != ordered.len() {
        return Join {
            unmatched_ranges: (0..ranges).collect(),
            unmatched_kernels: ordered.iter().map(|k| k.index).collect(),
            by_order_only: true,
            ..Join::default()
        };
    }
    Join {
        pairs: ordered
            .iter()
            .enumerate()
            .map(|(r, k)| (r, k.index))
            .collect(),
        by_order_only: true,
        ..Join::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(index: u32, name: &str, correlation: u32) -> TimelineKernel {
        TimelineKernel {
            index,
            names: vec![name.to_string()],
            correlation,
            start: i64::from(correlation) * 10,
        }
    }

    #[test]
    fn joins_each_name_in_launch_order_even_when_streams_interleave() {
        // Kernel indices follow the streams, not the launches.
        let kernels = [k(0, "a", 5), k(1, "a", 1), k(2, "b", 3), k(3, "b", 2)];
        let ranges: Vec<String> = ["a", "b", "b", "a"].iter().map(|s| s.to_string()).collect();
        let j = join(&ranges, &kernels);
        assert_eq!(j.pairs, [(0, 1), (1, 3), (2, 2), (3, 0)]);
        assert!(j.unmatched_ranges.is_empty() && j.unmatched_kernels.is_empty());
    }

    #[test]
    fn extra_ranges_and_kernels_are_listed_not_dropped() {
        let kernels = [k(0, "a", 1), k(1, "c", 2)];
        let ranges: Vec<String> = ["a", "a", "b"].iter().map(|s| s.to_string()).collect();
        let j = join(&ranges, &kernels);
        assert_eq!(j.pairs, [(0, 0)]);
        assert_eq!(j.unmatched_ranges, [1, 2]);
        assert_eq!(j.unmatched_kernels, [1]);
    }

    #[test]
    fn numbered_ranges_join_by_order_only_when_counts_agree() {
        let kernels = [k(0, "a", 2), k(1, "b", 1)];
        let ranges: Vec<String> = ["0", "1"].iter().map(|s| s.to_string()).collect();
        let j = join(&ranges, &kernels);
        assert!(j.by_order_only);
        assert_eq!(j.pairs, [(0, 1), (1, 0)]);
        let j = join(&ranges[..1], &kernels);
        assert!(j.pairs.is_empty());
        assert_eq!(j.unmatched_kernels.len(), 2);
    }
}
