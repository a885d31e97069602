//! Tracks: which rows of a table belong to one thread's or one stream's lane.
//!
//! A track is a list of [`Run`]s, each a stretch of consecutive rows sorted by
//! start, the runs in time order. A report loaded whole has one run a track
//! (its table is grouped by track). A report that grows (a live capture) adds
//! each snapshot's new rows at the end of their tables, grouped by track, and
//! gives every track that gained rows one more run: rows already shown keep
//! their index, and a snapshot costs what it adds.
//!
//! Why runs and not one range a track: one range a track means every new row
//! of any track but the last moves every row after it, so a snapshot is a
//! rebuild of every table.

use std::ops::Range;
use std::sync::Arc;

use super::column::Column;
use super::events::{Ns, Span, SpanColumns};

/// Every `SAMPLED_STARTS_STRIDE`-th start of a run is kept in a small index
/// ([`Run::sampled_starts`]) that stays in cache: a search of it leaves one
/// block of this many starts to look at.
pub const SAMPLED_STARTS_STRIDE: usize = 256;

/// Consecutive rows of a table, sorted by start (ties: longer first): all of
/// a track, or one part of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    pub events: Span,
    /// The longest event of the run, so that a window query finds events that
    /// start before the window but still reach into it.
    pub max_duration: Ns,
    /// Every [`SAMPLED_STARTS_STRIDE`]-th start of the run's events, from its
    /// first: built by the loader as it groups a table (on its thread; 10 ms
    /// for 34M kernels, which the window paid when drawing its rows); empty
    /// until [`Run::index_starts`].
    pub sampled_starts: Arc<[Ns]>,
}

impl Run {
    /// The run of rows `events` of `spans`, with its longest duration and
    /// its sampled starts.
    pub fn of(events: Span, spans: &SpanColumns) -> Run {
        let max_duration = (events.start as usize..events.end as usize)
            .map(|j| spans.duration(j))
            .max()
            .unwrap_or(0);
        let mut run = Run {
            events,
            max_duration,
            sampled_starts: Default::default(),
        };
        run.index_starts(&spans.start);
        run
    }

    /// Samples the run's starts (`starts`: its table's whole column) into
    /// [`Run::sampled_starts`], unless done already.
    pub fn index_starts(&mut self, starts: &[Ns]) {
        if !self.sampled_starts.is_empty() || self.is_empty() {
            return;
        }
        let own = starts
            .get(self.events.start as usize..self.events.end as usize)
            .unwrap_or_default();
        self.sampled_starts = own.iter().step_by(SAMPLED_STARTS_STRIDE).copied().collect();
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The rows as `usize` indexes.
    pub fn rows(&self) -> Range<usize> {
        self.events.start as usize..self.events.end as usize
    }

    /// The rows that may overlap `[from, to)`: those starting before `to`
    /// and, thanks to `max_duration`, possibly ending after `from`.
    pub fn window(&self, spans: &SpanColumns, from: Ns, to: Ns) -> Span {
        spans.window(&self.events, from, to, self.max_duration)
    }

    /// The rows whose start lies in `[from, to)`.
    pub fn starting_in(&self, spans: &SpanColumns, from: Ns, to: Ns) -> Span {
        spans.starting_in(&self.events, from, to)
    }
}

/// The events of one thread's or stream's track kind, and how deep they
/// stack: runs of rows, read run after run in start order (see
/// [`Track::push`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Track {
    /// Never an empty run; each run's rows come after the run before's (a
    /// growing table appends), so a row's run is a binary search away.
    /// Shared by the track's copies, and appended to without a copy while
    /// they are (the window holds the last snapshot's while the loader adds
    /// a run: a copy of every run at each snapshot took 2.6 ms at 100,000
    /// runs, and a capture makes one a snapshot, tens of thousands an hour).
    runs: Column<Run>,
    /// How many of the track's rows come before each run.
    before: Column<usize>,
    /// The longest event of all runs, so that the runs a window may touch are
    /// two binary searches away (a capture that ran an hour has a run per
    /// snapshot: tens of thousands).
    longest: Ns,
    /// Runs whose starts are not sampled yet (see [`Track::index_starts`]):
    /// counted as runs come, so that the window, which asks at every
    /// snapshot, does not look at every run to know that none is.
    unsampled: usize,
    /// Number of stacked levels (1 for flat tracks).
    pub depth: u8,
}

impl Track {
    /// A track of one run (none when the run is empty).
    pub fn whole(run: Run, depth: u8) -> Track {
        let mut track = Track {
            runs: Default::default(),
            before: Default::default(),
            longest: 0,
            unsampled: 0,
            depth,
        };
        track.push(run);
        track
    }

    /// The track of rows `events` of `spans`, one run, flat.
    pub fn of(events: Span, spans: &SpanColumns) -> Track {
        Track::whole(Run::of(events, spans), 1)
    }

    /// Adds `run` after the others (an empty one is dropped). Its rows must
    /// come after the run before's in the table, and start no earlier than
    /// its last row, so that the track read run after run is in start order.
    pub fn push(&mut self, run: Run) {
        if run.is_empty() {
            return;
        }
        debug_assert!(
            self.runs
                .last()
                .is_none_or(|r| r.events.end <= run.events.start)
        );
        let len = self.len();
        self.before.push(len);
        self.longest = self.longest.max(run.max_duration);
        self.unsampled += usize::from(run.sampled_starts.is_empty());
        self.runs.push(run);
    }

    /// The index of the run holding row `i`, if one does.
    fn run_holding(&self, i: u32) -> Option<usize> {
        let k = self
            .runs
            .partition_point(|r| r.events.start <= i)
            .checked_sub(1)?;
        self.runs[k].events.contains(&i).then_some(k)
    }

    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// Whether `other` is a copy sharing this track's runs (not a copy of
    /// them).
    pub fn shares_runs_with(&self, other: &Track) -> bool {
        // (Empty columns all point nowhere alike.)
        !self.runs.is_empty()
            && self.runs.as_ptr() == other.runs.as_ptr()
            && self.runs.len() == other.runs.len()
    }

    /// Every row of the track, in start order.
    pub fn rows(&self) -> impl DoubleEndedIterator<Item = u32> + Clone + '_ {
        self.runs.iter().flat_map(|r| r.events.clone())
    }

    /// Whether row `i` of the table is one of the track's.
    pub fn contains(&self, i: u32) -> bool {
        self.run_holding(i).is_some()
    }

    /// The position of row `i` among the track's rows (0 for its first).
    pub fn position(&self, i: u32) -> Option<usize> {
        let k = self.run_holding(i)?;
        Some(self.before[k] + (i - self.runs[k].events.start) as usize)
    }

    /// The row at `position` among the track's rows (see [`Track::position`]):
    /// the track read as one sorted run, whatever runs it is made of.
    pub fn row_at(&self, position: usize) -> Option<u32> {
        let k = self
            .before
            .partition_point(|&b| b <= position)
            .checked_sub(1)?;
        let run = &self.runs[k].events;
        let row = run.start as usize + (position - self.before[k]);
        (row < run.end as usize).then_some(row as u32)
    }

    pub fn len(&self) -> usize {
        match (self.before.last(), self.runs.last()) {
            (Some(before), Some(last)) => before + last.len(),
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The longest event of the track.
    pub fn max_duration(&self) -> Ns {
        self.longest
    }

    /// The runs that may hold events overlapping `[from, to)`: those whose
    /// first event starts before `to` and whose last starts no earlier than
    /// `from` less the track's longest event. The runs are in start order, so
    /// these are consecutive: a frame of a view looks at them, not at every
    /// run a long capture made.
    pub fn runs_overlapping(&self, spans: &SpanColumns, from: Ns, to: Ns) -> &[Run] {
        let start_of = |i: u32| spans.start.get(i as usize).copied().unwrap_or(Ns::MAX);
        let reach_from = from.saturating_sub(self.longest);
        let lo = (self.runs).partition_point(|r| start_of(r.events.end - 1) < reach_from);
        let hi = (self.runs).partition_point(|r| start_of(r.events.start) < to);
        self.runs.get(lo..hi.max(lo)).unwrap_or_default()
    }

    /// The first row (the earliest start).
    pub fn first(&self) -> Option<u32> {
        self.runs.first().map(|r| r.events.start)
    }

    /// The last row (the latest start).
    pub fn last(&self) -> Option<u32> {
        self.runs.last().map(|r| r.events.end - 1)
    }

    /// Each run's rows that may overlap `[from, to)` (see [`Run::window`]),
    /// empty ones left out.
    pub fn windows<'a>(
        &'a self,
        spans: &'a SpanColumns,
        from: Ns,
        to: Ns,
    ) -> impl Iterator<Item = Span> + 'a {
        self.runs_overlapping(spans, from, to)
            .iter()
            .map(move |r| r.window(spans, from, to))
            .filter(|w| !w.is_empty())
    }

    /// The rows whose start lies in `[from, to)`, in start order.
    pub fn starting_in<'a>(
        &'a self,
        spans: &'a SpanColumns,
        from: Ns,
        to: Ns,
    ) -> impl Iterator<Item = u32> + Clone + 'a {
        self.runs_overlapping(spans, from, to)
            .iter()
            .flat_map(move |r| r.starting_in(spans, from, to))
    }

    /// Samples every run's starts (see [`Run::index_starts`]); the runs
    /// stay shared where all are sampled already.
    pub fn index_starts(&mut self, starts: &[Ns]) {
        if self.unsampled == 0 {
            return;
        }
        let mut runs = self.runs.to_vec();
        for r in &mut runs {
            r.index_starts(starts);
        }
        self.unsampled = runs.iter().filter(|r| r.sampled_starts.is_empty()).count();
        self.runs = Column::from(runs);
    }
}

/// Which track holds a row of a table: each run's rows with its track's
/// owner (a stream, a thread), sorted by first row, looked up by binary
/// search.
#[derive(Debug, Clone, Default)]
pub struct RowOwners<T> {
    runs: Vec<(Span, T)>,
}

impl<T: Copy> RowOwners<T> {
    pub fn of<'a>(tracks: impl IntoIterator<Item = (T, &'a Track)>) -> Self {
        let mut runs: Vec<(Span, T)> = tracks
            .into_iter()
            .flat_map(|(owner, t)| t.runs().iter().map(move |r| (r.events.clone(), owner)))
            .collect();
        runs.sort_unstable_by_key(|(rows, _)| rows.start);
        RowOwners { runs }
    }

    /// The owner of the track holding `row`, if one does.
    pub fn owner_of(&self, row: u32) -> Option<T> {
        let at = self.runs.partition_point(|(rows, _)| rows.start <= row);
        let (rows, owner) = self.runs.get(at.checked_sub(1)?)?;
        rows.contains(&row).then_some(*owner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(events: &[(Ns, Ns)]) -> SpanColumns {
        let mut s = SpanColumns::default();
        for &(a, b) in events {
            s.push(a, b, Default::default());
        }
        s
    }

    /// Runs pushed without sampled starts are sampled once; a track whose
    /// runs all are is left as it is, its runs shared (the window asks at
    /// every snapshot).
    #[test]
    fn starts_are_sampled_once_and_sampled_runs_stay_shared() {
        let s = spans(&[(0, 10), (20, 25), (30, 100)]);
        let bare = Run {
            events: 1..3,
            max_duration: 70,
            sampled_starts: Default::default(),
        };
        let mut t = Track::of(0..1, &s);
        t.push(bare);
        let before = t.clone();
        t.index_starts(&s.start);
        assert_eq!(t.runs()[1].sampled_starts.as_ref(), &[20]);
        assert!(!t.shares_runs_with(&before), "sampled into runs of its own");
        let shown = t.clone();
        t.index_starts(&s.start);
        assert!(t.shares_runs_with(&shown), "nothing left to sample: shared");
        assert!(!Track::default().shares_runs_with(&Track::default()));
    }

    /// Rows 0..3 and 5..7 of a table, as a track of two runs: read run
    /// after run, by position, by window and by start.
    #[test]
    fn a_track_of_two_runs_reads_as_its_rows_in_order() {
        let s = spans(&[
            (0, 10),
            (20, 25),
            (30, 100),
            (5, 6), // another track's
            (6, 7), // another track's
            (200, 210),
            (300, 301),
        ]);
        let mut t = Track::of(0..3, &s);
        t.push(Run::of(5..7, &s));
        t.push(Run::of(7..7, &s));
        assert_eq!(t.runs().len(), 2, "an empty run is not kept");
        assert_eq!(t.rows().collect::<Vec<_>>(), vec![0, 1, 2, 5, 6]);
        assert_eq!(t.len(), 5);
        assert!(t.contains(5) && !t.contains(3) && !t.contains(7));
        assert_eq!(t.position(5), Some(3));
        assert_eq!(t.position(4), None);
        assert_eq!(t.position(6), Some(4));
        assert_eq!(t.position(7), None);
        let rows: Vec<Option<u32>> = (0..6).map(|p| t.row_at(p)).collect();
        assert_eq!(rows, [Some(0), Some(1), Some(2), Some(5), Some(6), None]);
        assert_eq!(Track::default().row_at(0), None);
        assert_eq!((t.first(), t.last()), (Some(0), Some(6)));
        assert_eq!(t.max_duration(), 70);
        // Each run is widened by its own longest event: rows 1 and 2 may
        // reach into [90, 250) (row 2 does), row 0 may not; row 6 starts after.
        let w: Vec<Span> = t.windows(&s, 90, 250).collect();
        assert_eq!(w, vec![1..3, 5..6]);
        assert_eq!(t.windows(&s, 400, 500).count(), 0);
        // The runs a view may touch: found by the runs' first and last starts
        // and the track's longest event, without a look at the others.
        let firsts = |from, to| -> Vec<u32> {
            (t.runs_overlapping(&s, from, to).iter())
                .map(|r| r.events.start)
                .collect()
        };
        assert_eq!(firsts(90, 250), vec![0, 5]);
        assert_eq!(firsts(0, 15), vec![0]);
        assert_eq!(
            firsts(100, 250),
            vec![0, 5],
            "row 2 may reach 100 for all the track knows"
        );
        assert_eq!(firsts(101, 250), vec![5]);
        assert_eq!(firsts(400, 500), Vec::<u32>::new());
        assert_eq!(firsts(-50, 0), Vec::<u32>::new());
        let starting: Vec<u32> = t.starting_in(&s, 20, 250).collect();
        assert_eq!(starting, vec![1, 2, 5]);
        let other = Track::of(3..5, &s);
        let owners = RowOwners::of([('a', &t), ('b', &other)]);
        let got: Vec<Option<char>> = (0..8).map(|row| owners.owner_of(row)).collect();
        let want = [
            Some('a'),
            Some('a'),
            Some('a'),
            Some('b'),
            Some('b'),
            Some('a'),
            Some('a'),
            None,
        ];
        assert_eq!(got, want);
    }
}
