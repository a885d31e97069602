//! Rows arrive in table order; the model wants them grouped by track and sorted
//! by start inside each track. A counting sort by track (O(n)) then a sort of
//! only those tracks that are not already in order (nsys writes most in order).

use crate::model::{Ns, Span, SpanColumns, Track};

/// A permutation of the rows, and where each track's rows ended up.
pub struct Grouping {
    pub order: Vec<u32>,
    pub tracks: Vec<Span>,
}

impl Grouping {
    /// Groups rows by `keys[row]` (a track number below `track_count`) and sorts
    /// each group by `starts[row]`, ties broken by longer-first when `ends` is
    /// given (so an enclosing range precedes what it encloses).
    pub fn new(keys: &[u32], starts: &[Ns], ends: Option<&[Ns]>, track_count: usize) -> Self {
        let mut offsets = vec![0u32; track_count + 1];
        for &k in keys {
            offsets[k as usize + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let tracks: Vec<Span> = offsets.windows(2).map(|w| w[0]..w[1]).collect();
        let mut cursor = offsets;
        let mut order = vec![0u32; keys.len()];
        for (row, &k) in keys.iter().enumerate() {
            let slot = &mut cursor[k as usize];
            order[*slot as usize] = row as u32;
            *slot += 1;
        }
        for span in &tracks {
            let rows = &mut order[span.start as usize..span.end as usize];
            let key = |r: &u32| {
                let r = *r as usize;
                (starts[r], std::cmp::Reverse(ends.map_or(0, |e| e[r])))
            };
            if !rows.is_sorted_by_key(key) {
                rows.sort_by_key(key);
            }
        }
        Grouping { order, tracks }
    }

    /// `column` reordered into track order. Given the column itself (not a
    /// borrow), it frees the row-order copy at once: at ten million rows,
    /// holding both orders of every column at the same time is what sets the
    /// peak memory of a load.
    pub fn take<T: Copy>(&self, column: impl AsRef<[T]>) -> Vec<T> {
        let column = column.as_ref();
        self.order.iter().map(|&r| column[r as usize]).collect()
    }

    /// The track record of group `i`, with the longest duration in it and
    /// its sampled starts.
    pub fn track(&self, i: usize, spans: &SpanColumns) -> Track {
        let events = self.tracks[i].clone();
        let max_duration = (events.start as usize..events.end as usize)
            .map(|j| spans.duration(j))
            .max()
            .unwrap_or(0);
        let mut track = Track {
            events,
            max_duration,
            depth: 1,
            ..Track::default()
        };
        track.index_starts(&spans.start);
        track
    }
}

/// A column of rows whose values come in long runs (the stream a kernel ran
/// on): each run is kept once, with its length, where a column would keep
/// the value for every row (16 bytes a kernel, kept between a growing
/// report's loads).
#[derive(Debug, Default)]
pub struct Runs<T> {
    runs: Vec<(T, u32)>,
}

impl<T: Copy + PartialEq> Runs<T> {
    pub fn push(&mut self, value: T) {
        match self.runs.last_mut() {
            Some((last, n)) if *last == value && *n < u32::MAX => *n += 1,
            _ => self.runs.push((value, 1)),
        }
    }

    /// Rows `later` after these.
    pub fn append(&mut self, later: Runs<T>) {
        for (value, n) in later.runs {
            match self.runs.last_mut() {
                Some((last, m)) if *last == value && m.checked_add(n).is_some() => *m += n,
                _ => self.runs.push((value, n)),
            }
        }
    }

    /// Each run's value and length, in row order.
    pub fn runs(&self) -> impl Iterator<Item = (T, u32)> + '_ {
        self.runs.iter().copied()
    }
}

/// Nesting levels for events sorted by start (enclosing first): each event
/// takes the first level that is free at its start. Properly nested push/pop
/// ranges get exactly their nesting depth; overlapping start/end ranges get
/// lanes that never overlap. Returns the levels and how many were used.
pub fn stack_levels(starts: &[Ns], ends: &[Ns]) -> (Vec<u8>, u8) {
    let mut lane_ends: Vec<Ns> = Vec::new();
    let mut levels = Vec::with_capacity(starts.len());
    for (&s, &e) in starts.iter().zip(ends) {
        // Levels are stored in a byte: past 255 lanes, the last one is shared
        // (which also keeps this loop linear on pathological reports).
        let lane = match lane_ends.iter().position(|&end| end <= s) {
            Some(l) => l,
            None if lane_ends.len() < u8::MAX as usize => {
                lane_ends.push(Ns::MIN);
                lane_ends.len() - 1
            }
            None => lane_ends.len() - 1,
        };
        // Zero-length events (marks) must not free their lane for a sibling
        // that starts at the same instant and encloses them.
        lane_ends[lane] = e.max(s.saturating_add(1));
        levels.push(lane.min(u8::MAX as usize) as u8);
    }
    let used = lane_ends.len().clamp(1, u8::MAX as usize) as u8;
    (levels, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_track_and_sorts_each() {
        let keys = [1, 0, 1, 0, 1];
        let starts = [30, 5, 10, 1, 20];
        let g = Grouping::new(&keys, &starts, None, 3);
        assert_eq!(g.tracks, vec![0..2, 2..5, 5..5]);
        assert_eq!(g.take(starts), vec![1, 5, 10, 20, 30]);
    }

    #[test]
    fn runs_give_back_every_row_in_order() {
        let rows = [3, 3, 3, 7, 7, 3, 1, 1, 1, 1];
        let (mut whole, mut first, mut second) =
            (Runs::default(), Runs::default(), Runs::default());
        for (i, &r) in rows.iter().enumerate() {
            whole.push(r);
            if i < 4 { first.push(r) } else { second.push(r) }
        }
        first.append(second);
        let expand = |r: &Runs<i32>| {
            r.runs()
                .flat_map(|(v, n)| std::iter::repeat_n(v, n as usize))
                .collect::<Vec<_>>()
        };
        assert_eq!(expand(&whole), rows);
        assert_eq!(expand(&first), rows);
        // A run cut between two reads is one run again.
        assert_eq!(first.runs().count(), 4);
    }

    #[test]
    fn nested_ranges_get_their_depth() {
        // [0,100) contains [10,50) which contains [20,30); [60,90) is a sibling of [10,50).
        let (levels, used) = stack_levels(&[0, 10, 20, 60], &[100, 50, 30, 90]);
        assert_eq!(levels, vec![0, 1, 2, 1]);
        assert_eq!(used, 3);
    }
}
