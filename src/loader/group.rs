//! Rows arrive in table order; the model wants them grouped by track and sorted
//! by start inside each track. A counting sort by track (O(n)) then a sort of
//! only those tracks that are not already in order (nsys writes most in order);
//! rows already in track order (one stream's kernels, one thread's calls) are
//! known to be so from a look at their starts, and left where they are.

use std::borrow::Cow;

use crate::model::{Ns, Span, SpanColumns, Track};

/// A permutation of the rows, and where each track's rows ended up.
pub struct Grouping {
    /// The row at each place; empty when `in_order` (each row at its own).
    order: Vec<u32>,
    pub tracks: Vec<Span>,
    /// The rows were in track order already (`order[i] == i`: one thread's
    /// calls, one stream's kernels): a column is its own reordering.
    in_order: bool,
    rows: usize,
    /// Where rows come in long stretches of consecutive rows (a thread's
    /// calls between another's few), `order` as those stretches: (first
    /// row, rows), copied whole instead of row by row.
    stretches: Option<Vec<(u32, u32)>>,
}

/// `order` as stretches of consecutive rows, when there are few enough of
/// them (on average 16 rows or more) for copying stretches to pay.
fn stretches(order: &[u32]) -> Option<Vec<(u32, u32)>> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    let most = (order.len() / 16).max(1);
    for &r in order {
        match out.last_mut() {
            Some((first, n)) if *first + *n == r => *n += 1,
            _ => {
                if out.len() >= most {
                    return None;
                }
                out.push((r, 1));
            }
        }
    }
    Some(out)
}

impl Grouping {
    /// Groups rows by `keys[row]` (a track number below `track_count`) and sorts
    /// each group by `starts[row]`, ties broken by longer-first when `ends` is
    /// given (so an enclosing range precedes what it encloses).
    pub fn new(keys: &[u32], starts: &[Ns], ends: Option<&[Ns]>, track_count: usize) -> Self {
        let mut runs = Runs::default();
        for &k in keys {
            runs.push(k);
        }
        Grouping::grouped(&runs.tracks(|k| k), starts, ends, track_count)
    }

    /// [`Grouping::new`] for rows whose tracks come in runs: `runs` is each
    /// run's track and length, in row order (a stream's kernels, a thread's
    /// calls), as the readers keep them.
    pub fn from_runs(runs: &[(u32, u32)], starts: &[Ns], track_count: usize) -> Self {
        Grouping::grouped(runs, starts, None, track_count)
    }

    /// Rows are placed a run at a time (a counting sort by track), then the
    /// tracks not in time order already are sorted. Rows whose runs come in
    /// track order and need no sort are known to be in order without a look
    /// at the permutation.
    fn grouped(
        runs: &[(u32, u32)],
        starts: &[Ns],
        ends: Option<&[Ns]>,
        track_count: usize,
    ) -> Self {
        let mut offsets = vec![0u32; track_count + 1];
        for &(k, n) in runs {
            offsets[k as usize + 1] += n;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        debug_assert_eq!(
            offsets.last().map(|&n| n as usize),
            Some(starts.len()),
            "the runs cover every row"
        );
        let tracks: Vec<Span> = offsets.windows(2).map(|w| w[0]..w[1]).collect();
        let key = |r: usize| (starts[r], std::cmp::Reverse(ends.map_or(0, |e| e[r])));
        // Runs in track order put each track's rows where they are: if each
        // track's rows are in time order too, there is nothing to move, and
        // no permutation to write (4 bytes a row, every load and snapshot).
        if runs.is_sorted_by_key(|&(k, _)| k)
            && tracks.iter().all(|span| match ends {
                None => starts[span.start as usize..span.end as usize].is_sorted(),
                Some(_) => (span.start as usize..span.end as usize)
                    .map(key)
                    .is_sorted(),
            })
        {
            return Grouping {
                order: Vec::new(),
                tracks,
                in_order: true,
                rows: starts.len(),
                stretches: None,
            };
        }
        let mut cursor = offsets;
        let mut order = vec![0u32; starts.len()];
        let mut row = 0u32;
        for &(k, n) in runs {
            let at = cursor[k as usize] as usize;
            for (slot, r) in order[at..at + n as usize].iter_mut().zip(row..) {
                *slot = r;
            }
            cursor[k as usize] += n;
            row += n;
        }
        let mut sorted = true;
        for span in &tracks {
            let rows = &mut order[span.start as usize..span.end as usize];
            if !rows.is_sorted_by_key(|&r| key(r as usize)) {
                rows.sort_by_key(|&r| key(r as usize));
                sorted = false;
            }
        }
        let in_order = sorted && runs.is_sorted_by_key(|&(k, _)| k);
        Grouping {
            stretches: (!in_order).then(|| stretches(&order)).flatten(),
            order,
            tracks,
            in_order,
            rows: starts.len(),
        }
    }

    /// [`Grouping::new`] (with `ends`) of rows of which the first
    /// `order.len()` were grouped before into `order` and `tracks` (a
    /// growing report's last load): the rows since are grouped and merged
    /// into each track's, in O(rows) where a sort is O(rows log rows). The
    /// same order: in each track by start, then longer first, then row.
    pub fn extended(
        order: &[u32],
        tracks: &[Span],
        keys: &[u32],
        starts: &[Ns],
        ends: &[Ns],
        track_count: usize,
    ) -> Self {
        let old = order.len();
        let new = Grouping::new(
            &keys[old..],
            &starts[old..],
            Some(&ends[old..]),
            track_count,
        );
        let new_order = new.order();
        let key = |r: u32| (starts[r as usize], std::cmp::Reverse(ends[r as usize]));
        let mut merged = Vec::with_capacity(starts.len());
        let mut spans = Vec::with_capacity(track_count);
        for t in 0..track_count {
            let from = merged.len() as u32;
            let before = tracks
                .get(t)
                .map_or(&[][..], |s| &order[s.start as usize..s.end as usize]);
            let since = &new_order[new.tracks[t].start as usize..new.tracks[t].end as usize];
            let (mut i, mut j) = (0, 0);
            while i < before.len() && j < since.len() {
                let later = since[j] + old as u32;
                // Ties: the row read before comes first.
                if key(before[i]) <= key(later) {
                    merged.push(before[i]);
                    i += 1;
                } else {
                    merged.push(later);
                    j += 1;
                }
            }
            merged.extend_from_slice(&before[i..]);
            merged.extend(since[j..].iter().map(|&r| r + old as u32));
            spans.push(from..merged.len() as u32);
        }
        let in_order = merged.iter().enumerate().all(|(i, &r)| r as usize == i);
        Grouping {
            stretches: (!in_order).then(|| stretches(&merged)).flatten(),
            order: merged,
            tracks: spans,
            in_order,
            rows: starts.len(),
        }
    }

    /// The row at each place in track order.
    pub fn order(&self) -> Cow<'_, [u32]> {
        if self.in_order && self.order.len() != self.rows {
            Cow::Owned((0..self.rows as u32).collect())
        } else {
            Cow::Borrowed(&self.order)
        }
    }

    /// `column` reordered into track order. Given the column itself (not a
    /// borrow), it frees the row-order copy at once: at ten million rows,
    /// holding both orders of every column at the same time is what sets the
    /// peak memory of a load. Rows already in order keep the column as it
    /// is (a borrowed one is copied).
    pub fn take<'a, T: Copy + 'a>(&self, column: impl Into<Cow<'a, [T]>>) -> Vec<T> {
        let column = column.into();
        if self.in_order {
            // A column read in pieces grew by doubling as they were joined:
            // up to twice its length reserved (whole gigabytes at 100M
            // events). Shrinking a buffer that big moves no bytes (glibc
            // remaps it).
            let mut kept = column.into_owned();
            kept.shrink_to_fit();
            return kept;
        }
        match &self.stretches {
            Some(stretches) => {
                let mut out = Vec::with_capacity(self.order.len());
                for &(first, n) in stretches {
                    out.extend_from_slice(&column[first as usize..(first + n) as usize]);
                }
                out
            }
            None => self.order.iter().map(|&r| column[r as usize]).collect(),
        }
    }

    /// `column` in track order, for reading only: the column itself when
    /// its rows are in order already (no copy), else reordered.
    pub fn view<'a, T: Copy>(&self, column: &'a [T]) -> Cow<'a, [T]> {
        if self.in_order {
            Cow::Borrowed(column)
        } else {
            Cow::Owned(self.take(column))
        }
    }

    /// The track record of group `i`, with the longest duration in it and
    /// its sampled starts.
    pub fn track(&self, i: usize, spans: &SpanColumns) -> Track {
        Track::of(self.tracks[i].clone(), spans)
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

    /// The runs with each value turned into a track number by `track`
    /// (called once per run).
    pub fn tracks(&self, mut track: impl FnMut(T) -> u32) -> Vec<(u32, u32)> {
        self.runs.iter().map(|&(v, n)| (track(v), n)).collect()
    }
}

/// Nesting levels for events sorted by start (enclosing first): each event
/// takes the first level that is free at its start. Properly nested push/pop
/// ranges get exactly their nesting depth; overlapping start/end ranges get
/// lanes that never overlap. Returns the levels and how many were used.
#[cfg(test)]
pub fn stack_levels(starts: &[Ns], ends: &[Ns]) -> (Vec<u8>, u8) {
    let mut lanes = LaneStack::default();
    let levels = (starts.iter().zip(ends))
        .enumerate()
        .map(|(i, (&s, &e))| lanes.place(i as u32, s, e))
        .collect();
    (levels, lanes.used())
}

/// The lanes of [`stack_levels`] as events are placed one after another (by
/// start): each lane's end, and the event that holds it. A growing report's
/// NVTX track places its new ranges after those placed at the last load.
#[derive(Clone, Debug, Default)]
pub struct LaneStack {
    /// Each lane's end: where its last event ends.
    ends: Vec<Ns>,
    /// Each lane's last event, as the caller numbers events.
    holders: Vec<u32>,
}

impl LaneStack {
    /// Places `event`, `[start, end)`, in the first lane free at `start`;
    /// answers its level.
    pub fn place(&mut self, event: u32, start: Ns, end: Ns) -> u8 {
        // Levels are stored in a byte: past 255 lanes, the last one is shared
        // (which also keeps this linear on pathological reports).
        let lane = match self.ends.iter().position(|&e| e <= start) {
            Some(l) => l,
            None if self.ends.len() < u8::MAX as usize => {
                self.ends.push(Ns::MIN);
                self.holders.push(event);
                self.ends.len() - 1
            }
            None => self.ends.len() - 1,
        };
        // Zero-length events (marks) must not free their lane for a sibling
        // that starts at the same instant and encloses them.
        self.ends[lane] = end.max(start.saturating_add(1));
        self.holders[lane] = event;
        lane.min(u8::MAX as usize) as u8
    }

    /// How many lanes were used (at least one).
    pub fn used(&self) -> u8 {
        self.ends.len().clamp(1, u8::MAX as usize) as u8
    }

    /// How many lanes hold an event.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The event that holds each lane (by lane), for a lane whose holder's
    /// end moved to be told so ([`LaneStack::set_end`]).
    pub fn holders(&self) -> &[u32] {
        &self.holders
    }

    /// Lane `lane`'s holder now ends at `end`.
    pub fn set_end(&mut self, lane: usize, start: Ns, end: Ns) {
        self.ends[lane] = end.max(start.saturating_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed sequence of numbers below the bound asked (a linear
    /// congruential generator from `seed`), for cases of every kind.
    fn sequence(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        }
    }

    /// Grouping by runs and by each row's key both give the rows in order
    /// of (track, start), ties in row order; rows already so are moved.
    #[test]
    fn runs_and_row_keys_group_by_track_then_start() {
        // (track, rows) runs, and each row's start.
        type Case<'a> = (&'a [(u32, u32)], &'a [i64]);
        let cases: [Case; 6] = [
            // Two tracks, each one run, in order: moved.
            (&[(0, 3), (1, 2)], &[1, 2, 3, 1, 2]),
            // Tracks interleaved in runs.
            (&[(1, 2), (0, 2), (1, 1), (2, 3)], &[5, 6, 1, 2, 7, 0, 1, 2]),
            // One track out of time order inside a run, with a tie.
            (&[(0, 4)], &[3, 1, 3, 5]),
            // Runs in track order, but a later run of track 0 starts earlier.
            (&[(0, 2), (0, 2), (1, 1)], &[5, 6, 1, 2, 0]),
            // A track with no rows between two.
            (&[(2, 2), (0, 1)], &[4, 4, 9]),
            // No rows.
            (&[], &[]),
        ];
        for (runs, starts) in cases {
            let keys: Vec<u32> = runs
                .iter()
                .flat_map(|&(k, n)| std::iter::repeat_n(k, n as usize))
                .collect();
            let mut expected: Vec<u32> = (0..keys.len() as u32).collect();
            expected.sort_by_key(|&r| (keys[r as usize], starts[r as usize]));
            let in_order = expected.iter().enumerate().all(|(i, &r)| r as usize == i);
            for g in [
                Grouping::from_runs(runs, starts, 3),
                Grouping::new(&keys, starts, None, 3),
            ] {
                assert_eq!(*g.order(), expected, "{runs:?}");
                let counts: Vec<u32> = g.tracks.iter().map(|t| t.end - t.start).collect();
                let by_track = (0..3u32).map(|k| keys.iter().filter(|&&x| x == k).count() as u32);
                assert_eq!(counts, by_track.collect::<Vec<_>>(), "{runs:?}");
                let column: Vec<i64> = starts.iter().map(|s| s * 10).collect();
                let gathered: Vec<i64> = expected.iter().map(|&r| column[r as usize]).collect();
                assert_eq!(g.take(&column[..]), gathered, "{runs:?}");
                let at = column.as_ptr();
                let taken = g.take(column);
                if !taken.is_empty() {
                    assert_eq!(taken.as_ptr() == at, in_order, "{runs:?}");
                }
            }
        }
    }

    /// With ends, ties in start put the longer event first (an enclosing
    /// range before what it encloses); rows already so are in order and
    /// moved, any others are placed as the rule says. Small cases of every
    /// kind from a fixed sequence, against a plain stable sort.
    #[test]
    fn rows_in_order_are_known_so_and_others_are_sorted_by_the_rule() {
        let mut next = sequence(0x2545_f491);
        for case in 0..2_000 {
            let rows = next(12) as usize;
            let mut keys: Vec<u32> = (0..rows).map(|_| next(3) as u32).collect();
            if case % 2 == 0 {
                keys.sort();
            }
            let mut starts: Vec<i64> = (0..rows).map(|_| next(4) as i64).collect();
            if case % 4 < 2 {
                starts.sort();
            }
            let ends: Vec<i64> = starts.iter().map(|&s| s + next(3) as i64).collect();
            let with_ends = case % 3 == 0;
            let mut expected: Vec<u32> = (0..rows as u32).collect();
            expected.sort_by_key(|&r| {
                let r = r as usize;
                let end = if with_ends { ends[r] } else { 0 };
                (keys[r], starts[r], std::cmp::Reverse(end))
            });
            let g = Grouping::new(&keys, &starts, with_ends.then_some(&ends[..]), 3);
            assert_eq!(*g.order(), expected, "{keys:?} {starts:?} {ends:?}");
            let column: Vec<u64> = (0..rows as u64).map(|r| r * 7 + 1).collect();
            let gathered: Vec<u64> = expected.iter().map(|&r| column[r as usize]).collect();
            assert_eq!(g.take(&column[..]), gathered);
            assert_eq!(*g.view(&column), gathered[..]);
            let identity = expected.iter().enumerate().all(|(i, &r)| r as usize == i);
            assert_eq!(matches!(g.view(&column), Cow::Borrowed(_)), identity);
        }
    }

    /// A grouping extended by the rows read since (each load of a growing
    /// report, its tracks growing in number too) gives what grouping every
    /// row at once gives: order, tracks and gathered columns. Cases from a
    /// fixed sequence, cut at every row.
    #[test]
    fn an_extended_grouping_is_the_grouping_of_all_rows() {
        let mut next = sequence(0x9e37_79b9);
        for _ in 0..500 {
            let rows = next(14) as usize;
            let keys: Vec<u32> = (0..rows).map(|_| next(3) as u32).collect();
            let starts: Vec<i64> = (0..rows).map(|_| next(5) as i64).collect();
            let ends: Vec<i64> = starts.iter().map(|&s| s + next(3) as i64).collect();
            let tracks = keys.iter().max().map_or(0, |&k| k as usize + 1);
            let whole = Grouping::new(&keys, &starts, Some(&ends), tracks);
            for cut in 0..=rows {
                // Tracks as numbered when only the first `cut` rows were read.
                let before = keys[..cut].iter().max().map_or(0, |&k| k as usize + 1);
                let first = Grouping::new(&keys[..cut], &starts[..cut], Some(&ends[..cut]), before);
                let g = Grouping::extended(
                    &first.order(),
                    &first.tracks,
                    &keys,
                    &starts,
                    &ends,
                    tracks,
                );
                let at = format!("{keys:?} {starts:?} {ends:?} cut at {cut}");
                assert_eq!(*g.order(), *whole.order(), "{at}");
                assert_eq!(g.tracks, whole.tracks, "{at}");
                assert_eq!(g.take(&starts[..]), whole.take(&starts[..]), "{at}");
                assert_eq!(*g.view(&ends), *whole.view(&ends), "{at}");
            }
        }
    }

    #[test]
    fn groups_by_track_and_sorts_each() {
        let keys = [1, 0, 1, 0, 1];
        let starts = [30, 5, 10, 1, 20];
        let g = Grouping::new(&keys, &starts, None, 3);
        assert_eq!(g.tracks, vec![0..2, 2..5, 5..5]);
        assert_eq!(g.take(&starts[..]), vec![1, 5, 10, 20, 30]);
    }

    #[test]
    fn rows_already_in_track_order_keep_their_columns() {
        let (keys, starts) = ([0, 0, 1, 1, 1], [5, 9, 1, 2, 2]);
        let g = Grouping::new(&keys, &starts, None, 2);
        assert_eq!(g.tracks, vec![0..2, 2..5]);
        let column = vec![10u8, 11, 12, 13, 14];
        let at = column.as_ptr();
        let kept = g.take(column);
        assert_eq!(kept, vec![10, 11, 12, 13, 14]);
        assert_eq!(kept.as_ptr(), at, "moved, not copied");
        // Kept without the room a column read in pieces grew.
        let mut grown = Vec::with_capacity(1 << 20);
        grown.extend_from_slice(&[1u64, 2, 3, 4, 5]);
        assert_eq!(g.take(grown).capacity(), 5);
        assert_eq!(g.take(&starts[..]), starts);
        // One row out of place: reordered as before.
        let g = Grouping::new(&[1, 0], &[1, 2], None, 2);
        assert_eq!(g.take(vec![7, 8]), vec![8, 7]);
    }

    #[test]
    fn long_stretches_of_one_track_are_copied_as_a_gather_would() {
        // Thread 0's 1,000 calls with two of thread 1's among them, and a
        // thousand rows alternating between two tracks (no stretches).
        for keys in [
            (0..1_002u32)
                .map(|i| u32::from(i == 300 || i == 700))
                .collect::<Vec<_>>(),
            (0..1_000u32).map(|i| i % 2).collect(),
        ] {
            let starts: Vec<i64> = (0..keys.len() as i64).collect();
            let g = Grouping::new(&keys, &starts, None, 2);
            let column: Vec<u64> = (0..keys.len() as u64).map(|i| i * 3).collect();
            let gathered: Vec<u64> = g.order().iter().map(|&r| column[r as usize]).collect();
            assert_eq!(g.take(&column[..]), gathered);
            assert_eq!(g.take(column), gathered);
        }
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
            r.tracks(|v| v as u32)
                .into_iter()
                .flat_map(|(v, n)| std::iter::repeat_n(v as i32, n as usize))
                .collect::<Vec<_>>()
        };
        assert_eq!(expand(&whole), rows);
        assert_eq!(expand(&first), rows);
        // A run cut between two reads is one run again.
        assert_eq!(first.tracks(|v| v as u32).len(), 4);
    }

    #[test]
    fn nested_ranges_get_their_depth() {
        // [0,100) contains [10,50) which contains [20,30); [60,90) is a sibling of [10,50).
        let (levels, used) = stack_levels(&[0, 10, 20, 60], &[100, 50, 30, 90]);
        assert_eq!(levels, vec![0, 1, 2, 1]);
        assert_eq!(used, 3);
    }
}
