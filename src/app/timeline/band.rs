//! The ruler's marks indexed for painting. A report with a hundred thousand
//! findings has a hundred thousand ruler marks; at a whole-trace zoom they
//! fall in a few hundred pixel columns, and deciding mark by mark which of
//! them a column already shows was two fifths of a frame. Sorted by start,
//! in a tree that keeps each subtree's latest end, longest mark and
//! last-drawn mark, a column's marks are decided a subtree at a time.

use crate::app::timeline::view::Mapping;
use crate::model::Ns;

/// How far past the band's edges a mark's ends are clamped (the painter
/// clips the rest); a mark starting further left than its left edge is
/// drawn whole, never shares a column.
pub const CLAMP: f32 = 8.0;

/// What one subtree of marks holds.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    /// The latest end.
    reach: Ns,
    /// The longest mark.
    longest: Ns,
    /// The last drawn (highest rank).
    last: u32,
}

/// Spans in draw order (their rank: a later one covers an earlier one),
/// sorted by start for painting.
#[derive(Clone, Debug, Default)]
pub struct Band {
    start: Vec<Ns>,
    end: Vec<Ns>,
    rank: Vec<u32>,
    /// A binary tree over the sorted marks: node 1 is the root, node `k`'s
    /// children are `2k` and `2k + 1`, mark `i` is leaf `leaves + i`.
    tree: Vec<Node>,
    leaves: usize,
}

/// Where a frame draws a band, and what of the trace it shows.
pub struct Columns<'a> {
    pub map: &'a Mapping,
    /// The band's left edge and width in points.
    pub left: f32,
    pub width: f32,
    /// The times the view shows.
    pub from: f64,
    pub to: f64,
}

impl Columns<'_> {
    /// A mark's ends on screen, clamped as painted.
    pub fn xs(&self, start: Ns, end: Ns) -> (f32, f32) {
        let x0 = self.map.x(start).max(self.left - CLAMP);
        let x1 = self.map.x(end).min(self.left + self.width + CLAMP);
        (x0, x1)
    }

    /// The pixel column (from the band's left edge; negative left of it)
    /// a mark starting at `start` shares with the marks narrower than a
    /// pixel starting there.
    fn column_of(&self, start: Ns) -> f32 {
        (self.map.x(start).max(self.left - CLAMP) - self.left).floor()
    }

    fn shown(&self, start: Ns, end: Ns) -> bool {
        (end as f64) >= self.from && (start as f64) <= self.to
    }
}

impl Band {
    /// The band of `spans` (start, end), ranked in the order given.
    pub fn new(spans: impl IntoIterator<Item = (Ns, Ns)>) -> Band {
        let mut marks: Vec<(Ns, Ns, u32)> = (spans.into_iter())
            .zip(0u32..)
            .map(|((s, e), rank)| (s, e.max(s), rank))
            .collect();
        // Stable: marks starting together stay in rank order. Marks come
        // in runs sorted by start (a lane's bars): merged, not sorted anew.
        marks.sort_by_key(|&(s, _, _)| s);
        let leaves = marks.len().next_power_of_two();
        let mut tree = vec![Node::default(); 2 * leaves];
        for (i, &(s, e, rank)) in marks.iter().enumerate() {
            tree[leaves + i] = Node {
                reach: e,
                longest: e.saturating_sub(s),
                last: rank,
            };
        }
        for k in (1..leaves).rev() {
            let (a, b) = (tree[2 * k], tree[2 * k + 1]);
            tree[k] = Node {
                reach: a.reach.max(b.reach),
                longest: a.longest.max(b.longest),
                last: a.last.max(b.last),
            };
        }
        Band {
            start: marks.iter().map(|m| m.0).collect(),
            end: marks.iter().map(|m| m.1).collect(),
            rank: marks.iter().map(|m| m.2).collect(),
            tree,
            leaves,
        }
    }

    /// The ranks of the marks a frame draws, in draw order: every mark
    /// shown at least a pixel wide or starting outside the band, and of
    /// those narrower than a pixel the last of each column (what drawing
    /// them all would leave on top).
    pub fn drawn(&self, at: &Columns) -> Vec<u32> {
        let mut out = Vec::new();
        // Marks starting after the view ends are not shown.
        let hi = self.start.partition_point(|&s| (s as f64) <= at.to);
        let px = |i: usize| at.column_of(self.start[i]);
        // Starting left of the band: drawn whole when they reach into it.
        let a = first(0, hi, |i| px(i) >= 0.0);
        let columns = at.width.max(0.0) as usize + 1;
        let b = first(a, hi, |i| px(i) as usize >= columns);
        self.reaching(1, 0, self.leaves, 0..a, at.from, &mut out);
        self.reaching(1, 0, self.leaves, b..hi, at.from, &mut out);
        // Narrower than this, a mark is narrower than a pixel wherever it is.
        let thin = (0.99 / at.map.px_per_ns).floor() as Ns;
        let mut last = None;
        self.columns(1, 0, self.leaves, a..b, thin, at, &mut last, &mut out);
        out.extend(last.map(|(_, rank)| rank));
        out.sort_unstable();
        out
    }

    /// The ranks of the marks from `t0` to `t1`, any width, last drawn first.
    pub fn overlapping(&self, t0: f64, t1: f64) -> Vec<u32> {
        let hi = self.start.partition_point(|&s| (s as f64) <= t1);
        let mut out = Vec::new();
        self.reaching(1, 0, self.leaves, 0..hi, t0, &mut out);
        out.sort_unstable_by(|a, b| b.cmp(a));
        out
    }

    /// The ranks of the marks among `want` (sorted positions) that end at
    /// or after `from`, node `k` covering positions `lo..hi`.
    fn reaching(
        &self,
        k: usize,
        lo: usize,
        hi: usize,
        want: std::ops::Range<usize>,
        from: f64,
        out: &mut Vec<u32>,
    ) {
        if hi <= want.start || want.end <= lo || (self.tree[k].reach as f64) < from {
            return;
        }
        if hi - lo == 1 {
            out.push(self.rank[lo]);
            return;
        }
        let mid = (lo + hi) / 2;
        self.reaching(2 * k, lo, mid, want.clone(), from, out);
        self.reaching(2 * k + 1, mid, hi, want, from, out);
    }

    /// The marks at positions `want` (all starting in the band's columns),
    /// node `k` covering positions `lo..hi`: the wide ones go to `out`, and
    /// of the narrow ones the last drawn of each column. Visited in start
    /// order, so columns come in order: `last` holds the column being
    /// gathered and its last mark so far. A subtree of narrow marks all in
    /// one column is decided whole.
    #[allow(clippy::too_many_arguments)]
    fn columns(
        &self,
        k: usize,
        lo: usize,
        hi: usize,
        want: std::ops::Range<usize>,
        thin: Ns,
        at: &Columns,
        last: &mut Option<(f32, u32)>,
        out: &mut Vec<u32>,
    ) {
        if hi <= want.start || want.end <= lo {
            return;
        }
        let node = self.tree[k];
        if (node.reach as f64) < at.from {
            return;
        }
        let column = |i: usize| at.column_of(self.start[i]);
        let mut gather = |c: f32, rank: u32| match last {
            Some((lc, lr)) if *lc == c => *lr = (*lr).max(rank),
            _ => out.extend(last.replace((c, rank)).map(|(_, r)| r)),
        };
        if want.start <= lo && hi <= want.end && node.longest < thin {
            let c = column(lo);
            if c == column(hi - 1) {
                gather(c, node.last);
                return;
            }
        }
        if hi - lo == 1 {
            let (s, e) = (self.start[lo], self.end[lo]);
            if !at.shown(s, e) {
                return;
            }
            let (x0, x1) = at.xs(s, e);
            if x1 - x0 >= 1.0 {
                out.push(self.rank[lo]);
            } else {
                gather(column(lo), self.rank[lo]);
            }
            return;
        }
        let mid = (lo + hi) / 2;
        self.columns(2 * k, lo, mid, want.clone(), thin, at, last, out);
        self.columns(2 * k + 1, mid, hi, want, thin, at, last, out);
    }
}

/// The first position in `lo..hi` where `past` holds (`hi` if none);
/// `past` must hold from some position on.
fn first(mut lo: usize, mut hi: usize, past: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if past(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use eframe::egui::{Rect, pos2};

    use crate::app::timeline::view::ViewState;

    /// What [`Band::drawn`] must give, mark by mark: every shown mark a
    /// pixel wide or more or outside the columns, and the last narrow one
    /// of each column.
    fn drawn_one_by_one(spans: &[(Ns, Ns)], at: &Columns) -> Vec<u32> {
        let mut out = Vec::new();
        let mut last_in_column = std::collections::BTreeMap::new();
        for (rank, &(s, e)) in (0u32..).zip(spans) {
            let e = e.max(s);
            if !at.shown(s, e) {
                continue;
            }
            let (x0, x1) = at.xs(s, e);
            let px = (x0 - at.left).floor();
            let columns = at.width.max(0.0) as usize + 1;
            let column = (px >= 0.0 && (px as usize) < columns).then_some(px as usize);
            match column {
                Some(c) if x1 - x0 < 1.0 => {
                    last_in_column.insert(c, rank);
                }
                _ => out.push(rank),
            }
        }
        out.extend(last_in_column.into_values());
        out.sort_unstable();
        out
    }

    /// Spans like a findings-heavy report's: many short ones in bursts,
    /// some long, some of zero length, some sharing starts.
    fn spans(n: usize) -> Vec<(Ns, Ns)> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|_| {
                let start = 1_000_000 + next() % 1_000_000_000 / 1000 * 1000;
                let len = match next() % 10 {
                    0 => next() % 200_000_000,
                    1 => 0,
                    _ => next() % 50_000,
                };
                (start as Ns, (start + len) as Ns)
            })
            .collect()
    }

    #[test]
    fn a_frame_draws_what_drawing_the_marks_one_by_one_leaves_on_top() {
        let spans = spans(20_000);
        let band = Band::new(spans.iter().copied());
        let rect = Rect::from_min_max(pos2(100.0, 0.0), pos2(1700.0, 20.0));
        let whole = (0.0, 1_300_000_000.0);
        let views = [
            whole,
            (400_000_000.0, 401_000_000.0),
            (500_123_456.0, 500_133_456.0),
            (-5e8, 3e8),
            (2e9, 3e9),
        ];
        for (v, (from, to)) in views.into_iter().enumerate() {
            let view = ViewState {
                start: from,
                end: to,
                ..Default::default()
            };
            let map = Mapping::new(rect, &view);
            let (from, to) = map.visible();
            let at = Columns {
                map: &map,
                left: rect.left(),
                width: rect.width(),
                from,
                to,
            };
            let want = drawn_one_by_one(&spans, &at);
            assert_eq!(band.drawn(&at), want, "view {from}..{to}");
            if v == 0 {
                assert!(want.len() < spans.len() / 4, "columns shared");
            }
        }
    }

    #[test]
    fn marks_under_a_point_come_last_drawn_first() {
        let spans = [(10, 20), (15, 15), (0, 100), (30, 40)];
        let band = Band::new(spans);
        assert_eq!(band.overlapping(15.0, 15.0), vec![2, 1, 0]);
        assert_eq!(band.overlapping(21.0, 29.0), vec![2]);
        assert_eq!(band.overlapping(101.0, 200.0), Vec::<u32>::new());
        assert!(Band::new([]).drawn_is_empty_everywhere());
    }

    impl Band {
        fn drawn_is_empty_everywhere(&self) -> bool {
            let map = Mapping::new(
                Rect::from_min_max(pos2(0.0, 0.0), pos2(100.0, 10.0)),
                &ViewState {
                    start: 0.0,
                    end: 1e9,
                    ..Default::default()
                },
            );
            self.drawn(&Columns {
                map: &map,
                left: 0.0,
                width: 100.0,
                from: 0.0,
                to: 1e9,
            })
            .is_empty()
        }
    }
}
