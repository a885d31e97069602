//! A collapsed lane's busy spans at every zoom, kept per lane: its events merged into disjoint
//! busy intervals, at coarser and coarser levels (each merges the gaps shorter than its own
//! length), so that the pixel columns a view shows busy come from walking the few intervals of
//! the level that fits its zoom: no work per event, whatever the lane holds, on a frame that
//! pans or zooms (issue 42: each collapsed lane's columns cost 20–35 ms a moving frame at 8
//! ranks of 1.25M events when found by one binary search per column).
//!
//! Why merging a gap shorter than a column's length changes no column: a column is busy when an
//! interval overlaps it, and a gap shorter than the column cannot hold a whole column.

use crate::app::timeline::view::Mapping;
use crate::model::{Ns, SpanColumns, Track};

/// A lane's busy intervals merged at each level, finest first.
#[derive(Debug, Default)]
pub struct BusySummary {
    levels: Vec<Level>,
}

/// The intervals left once every gap shorter than `merged_below` is closed: disjoint, in time
/// order (so their ends are in order too).
#[derive(Debug)]
struct Level {
    merged_below: Ns,
    starts: Vec<Ns>,
    ends: Vec<Ns>,
}

/// A lane of fewer events has no summary (it would cost more bytes an event than its events
/// do): its columns come from its events in view.
const SUMMARISED_FROM: usize = 4096;

/// A view finer than the finest level walks its events when there are at most this many a
/// pixel column; more, and a search per column is the cheaper.
const EVENTS_WALKED_PER_COLUMN: usize = 8;

/// The finest level holds at most one interval for this many of the lane's events: half a byte
/// an event, the levels above it as much again at most (each halves the one below).
const EVENTS_PER_INTERVAL: usize = 32;

impl BusySummary {
    /// The summary of `track`'s events in `spans`.
    pub fn of(spans: &SpanColumns, track: &Track) -> BusySummary {
        if track.len() < SUMMARISED_FROM {
            return BusySummary::default();
        }
        let events = || {
            (track.runs().iter())
                .flat_map(|run| run.rows())
                .filter(|&i| i < spans.start.len())
                .map(|i| (spans.start[i], spans.end(i)))
        };
        // The gaps of the events' union: the finest level closes all but the longest.
        let mut gaps: Vec<Ns> = Vec::new();
        let mut reach: Option<Ns> = None;
        for (s, e) in events() {
            if let Some(r) = reach
                && s > r
            {
                gaps.push(s - r);
            }
            reach = Some(reach.map_or(e, |r| r.max(e)));
        }
        let budget = track.len() / EVENTS_PER_INTERVAL;
        let finest = if gaps.len() < budget {
            0
        } else {
            let k = gaps.len() - budget;
            *gaps.select_nth_unstable(k).1 + 1
        };
        drop(gaps);
        let mut levels = vec![Level::of(merged(events(), finest), finest)];
        // Each level four times the gap of the one below, kept when it halves its intervals.
        let mut below = finest.max(1);
        while let Some(last) = levels.last()
            && last.starts.len() > 1
            && below < Ns::MAX / 8
        {
            below *= 4;
            let coarser = merged(
                last.starts.iter().copied().zip(last.ends.iter().copied()),
                below,
            );
            if coarser.len() * 2 <= last.starts.len() {
                levels.push(Level::of(coarser, below));
            }
        }
        BusySummary { levels }
    }

    /// The x spans of the pixel columns from `left` to `right` that one of `track`'s events
    /// overlaps (the lane this summarises), as `paint::activity_spans` gives them: from the
    /// coarsest level the zoom allows, else from the events in view when they are few (a lane
    /// too small to summarise, a view zoomed in); `None` when neither (many events in a view
    /// finer than the finest level): then a search per column is the cheaper.
    pub fn columns(
        &self,
        spans: &SpanColumns,
        track: &Track,
        (left, right): (f32, f32),
        map: &Mapping,
    ) -> Option<Vec<(f32, f32)>> {
        let grid = Grid::new((left, right), map);
        let ns_per_px = 1.0 / map.px_per_ns;
        let level = (self.levels.iter())
            .rev()
            .find(|l| l.merged_below as f64 <= ns_per_px);
        if let Some(level) = level {
            let first = level.ends.partition_point(|&e| (e as f64) <= grid.from);
            let intervals = level.starts[first..].iter().zip(&level.ends[first..]);
            return Some(grid.busy(intervals.map(|(&s, &e)| (s, e))));
        }
        let (from, to) = (grid.from.floor() as Ns, map.t(right).ceil() as Ns + 1);
        let windows: Vec<std::ops::Range<u32>> = (track.runs_overlapping(spans, from, to).iter())
            .map(|run| run.window(spans, from, to))
            .collect();
        let events: usize = windows.iter().map(|w| w.len()).sum();
        if events > EVENTS_WALKED_PER_COLUMN * grid.count.max(1) as usize {
            return None;
        }
        let in_view = (windows.into_iter().flatten())
            .map(|i| i as usize)
            .filter(|&i| i < spans.start.len())
            .map(|i| (spans.start[i], spans.end(i)));
        Some(grid.busy(in_view))
    }

    /// The intervals the summary holds in all (its memory: 16 bytes each).
    pub fn intervals(&self) -> usize {
        self.levels.iter().map(|l| l.starts.len()).sum()
    }
}

/// The pixel columns of a strip: column `i` covers `[x0 + i, x0 + i + 1)`, the last cut at the
/// strip's right edge.
struct Grid<'a> {
    map: &'a Mapping,
    x0: f32,
    right: f32,
    count: i64,
    /// The time at `x0`.
    from: f64,
}

impl<'a> Grid<'a> {
    fn new((left, right): (f32, f32), map: &'a Mapping) -> Grid<'a> {
        let x0 = left.max(map.left).floor();
        Grid {
            map,
            x0,
            right,
            count: (right - x0).ceil().max(0.0) as i64,
            from: map.t(x0),
        }
    }

    /// The x spans of the columns that `intervals` (by start, overlapping or not) overlap.
    fn busy(&self, intervals: impl Iterator<Item = (Ns, Ns)>) -> Vec<(f32, f32)> {
        let column = |t: Ns| (t as f64 - self.from) * self.map.px_per_ns;
        let mut out: Vec<(f32, f32)> = Vec::new();
        for (s, e) in intervals {
            // Busy columns: those starting before `e` and ending after `s`.
            let lo = column(s).floor().max(0.0) as i64;
            if lo >= self.count {
                break;
            }
            let hi = (column(e).ceil() as i64 - 1).min(self.count - 1);
            if hi < lo {
                continue;
            }
            let x_lo = self.x0 + lo as f32;
            let x_hi = (self.x0 + hi as f32 + 1.0).min(self.right);
            match out.last_mut() {
                Some(last) if last.1 >= x_lo => last.1 = last.1.max(x_hi),
                _ => out.push((x_lo, x_hi)),
            }
        }
        out
    }
}

impl Level {
    fn of(intervals: Vec<(Ns, Ns)>, merged_below: Ns) -> Level {
        let (starts, ends) = intervals.into_iter().unzip();
        Level {
            merged_below,
            starts,
            ends,
        }
    }
}

/// `events` (by start) merged where they overlap or the gap between them is shorter than
/// `below`.
fn merged(events: impl Iterator<Item = (Ns, Ns)>, below: Ns) -> Vec<(Ns, Ns)> {
    let mut out: Vec<(Ns, Ns)> = Vec::new();
    for (s, e) in events {
        match out.last_mut() {
            Some(last) if s.saturating_sub(last.1) < below || s <= last.1 => {
                last.1 = last.1.max(e);
            }
            _ => out.push((s, e.max(s))),
        }
    }
    out
}

/// The union of x spans (in any order, overlapping or not), in order, none touching another.
pub fn union_of(mut spans: Vec<(f32, f32)>) -> Vec<(f32, f32)> {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f32, f32)> = Vec::with_capacity(spans.len());
    for (x0, x1) in spans {
        match out.last_mut() {
            Some(last) if last.1 >= x0 => last.1 = last.1.max(x1),
            _ => out.push((x0, x1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StrId;

    /// Busy columns found event by event: any event overlapping the column.
    fn brute(events: &[(Ns, Ns)], (left, right): (f32, f32), map: &Mapping) -> Vec<bool> {
        let x0 = left.max(map.left).floor();
        let mut busy = Vec::new();
        let mut x = x0;
        while x < right {
            let (a, b) = (map.t(x), map.t(x + 1.0));
            busy.push(
                events
                    .iter()
                    .any(|&(s, e)| (s as f64) < b && (e as f64) > a),
            );
            x += 1.0;
        }
        busy
    }

    fn as_columns(spans: &[(f32, f32)], (left, right): (f32, f32), map: &Mapping) -> Vec<bool> {
        let x0 = left.max(map.left).floor();
        let mut busy = Vec::new();
        let mut x = x0;
        while x < right {
            busy.push(spans.iter().any(|&(a, b)| a <= x && x < b));
            x += 1.0;
        }
        busy
    }

    /// A flat lane of `n` events with irregular lengths and gaps (some touching, some long).
    fn lane(n: usize) -> (SpanColumns, Track, Vec<(Ns, Ns)>) {
        let mut spans = SpanColumns::default();
        let mut events = Vec::new();
        let (mut t, mut x): (Ns, u64) = (1_000, 12345);
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = ((x >> 33) % 5_000) as Ns;
            let gap = match (x >> 20) % 7 {
                0 => 0,
                1 => 200_000,
                _ => ((x >> 40) % 3_000) as Ns,
            };
            spans.push(t, t + len, StrId(0));
            events.push((t, t + len));
            t += len + gap;
        }
        let track = Track::of(0..n as u32, &spans);
        (spans, track, events)
    }

    #[test]
    fn every_zoom_shows_the_columns_an_event_overlaps() {
        let (spans, track, events) = lane(200_000);
        let summary = BusySummary::of(&spans, &track);
        assert!(
            summary.intervals() <= 200_000 / 16,
            "{} intervals kept for 200,000 events",
            summary.intervals()
        );
        let end = events.last().map_or(0, |e| e.1) as f64;
        let mut checked = 0;
        // From the whole lane down to the finest level's zoom (gaps of 200 µs a pixel: the
        // lane's 28,000 longest), at odd offsets.
        // And finer: the events in view walked.
        let zooms = [
            end,
            end / 3.0,
            end / 7.0,
            end / 13.0,
            3.1e8,
            2.5e8,
            3.1e7,
            4.4e6,
            2.0e5,
        ];
        for (i, span_ns) in zooms.into_iter().enumerate() {
            let map = Mapping {
                left: 100.5,
                width: 1200.0,
                start: 1_000.0 + end * 0.13 * i as f64,
                px_per_ns: 1200.0 / span_ns,
            };
            let strip = (100.5, 1300.5);
            let Some(spans) = summary.columns(&spans, &track, strip, &map) else {
                continue;
            };
            assert_eq!(
                as_columns(&spans, strip, &map),
                brute(&events, strip, &map),
                "{span_ns} ns wide"
            );
            checked += 1;
        }
        assert_eq!(checked, zooms.len(), "zooms answered");
    }

    #[test]
    fn the_union_of_spans_covers_each_once_in_order() {
        let spans = vec![(5.0, 7.0), (0.0, 2.0), (1.0, 3.0), (7.0, 8.0), (10.0, 11.0)];
        assert_eq!(union_of(spans), vec![(0.0, 3.0), (5.0, 8.0), (10.0, 11.0)]);
        assert_eq!(union_of(Vec::new()), Vec::new());
    }

    #[test]
    fn a_small_lane_keeps_nothing_and_nested_events_count_while_they_run() {
        let (spans, track, events) = lane(3_000);
        let summary = BusySummary::of(&spans, &track);
        assert_eq!(summary.intervals(), 0, "a lane of 3,000 events summarised");
        let end = events.last().map_or(0, |e| e.1) as f64;
        for span_ns in [end, end / 10.0, 1.0e6] {
            let map = Mapping {
                left: 0.0,
                width: 1000.0,
                start: end * 0.4,
                px_per_ns: 1000.0 / span_ns,
            };
            let columns = summary.columns(&spans, &track, (0.0, 1000.0), &map);
            let columns = columns.expect("a small lane's events are walked");
            let (got, want) = (
                as_columns(&columns, (0.0, 1000.0), &map),
                brute(&events, (0.0, 1000.0), &map),
            );
            assert_eq!(got, want, "{span_ns} ns wide");
        }
        // An outer range with children ending inside it: busy all along the outer one.
        let mut nested = SpanColumns::default();
        for (s, e) in [(0, 1_000_000), (10, 20), (500, 600), (2_000_000, 2_000_100)] {
            nested.push(s, e, StrId(0));
        }
        let track = Track::of(0..4, &nested);
        let map = Mapping {
            left: 0.0,
            width: 100.0,
            start: 0.0,
            px_per_ns: 100.0 / 2_500_000.0,
        };
        let columns = BusySummary::of(&nested, &track).columns(&nested, &track, (0.0, 100.0), &map);
        assert_eq!(columns, Some(vec![(0.0, 40.0), (80.0, 81.0)]));
    }
}
