//! Painting rows with level of detail: events at least a pixel wide are boxes,
//! runs of narrower events become one "busy" mark. A lane costs
//! O(pixels × log n), never O(events in view).

use eframe::egui::{Align2, Color32, FontId, Mesh, Painter, Pos2, Rect, Stroke, StrokeKind, pos2};

use std::collections::HashMap;

use crate::app::state::events::{EventRef, Table};
use crate::app::timeline::rows::{LANE_H, MetricRow};
use crate::app::timeline::view::Mapping;
use crate::app::widgets::colors;
use crate::app::widgets::format;
use crate::model::{MetricSeries, Ns, Run, Span, Trace, Track};

/// Narrower than this (in points), an event merges into the busy mark.
pub(super) const MIN_BOX_PX: f32 = 1.0;
/// How far back (in events) to look for long events hidden behind short ones.
const LOOKBACK: usize = 64;

/// What a lane needs besides its own events.
pub struct LaneStyle<'a> {
    pub name_colors: &'a [Color32],
    /// By `StrId`: names to outline (search or stats row); empty for none.
    pub highlight: &'a [bool],
    pub selected: Option<EventRef>,
    pub related: &'a [EventRef],
    pub show_names: bool,
}

#[inline]
fn level(trace: &Trace, table: Table, i: usize) -> u8 {
    if table == Table::Nvtx {
        trace.nvtx.depth.get(i).copied().unwrap_or(0)
    } else {
        0
    }
}

pub fn event_color(trace: &Trace, ev: EventRef, name_colors: &[Color32]) -> Color32 {
    let i = ev.index as usize;
    let by_name = || {
        let id = ev.table.spans(trace).name[i].0 as usize;
        name_colors.get(id).copied().unwrap_or(Color32::GRAY)
    };
    match ev.table {
        Table::Memcpy => {
            colors::for_copy_kind(trace.memcpys.copy_kind.get(i).copied().unwrap_or(0))
        }
        Table::Memset => colors::MEMSET,
        Table::Sync => colors::SYNC,
        Table::Nvtx => trace
            .nvtx
            .color
            .get(i)
            .and_then(|&c| colors::from_argb(c))
            .unwrap_or_else(|| {
                let name = trace.name(trace.nvtx.spans.name[i]);
                colors::for_nvtx(name, level(trace, Table::Nvtx, i))
            }),
        _ => by_name(),
    }
}

/// Paints one lane into `rect`, run after run of its track (see
/// [`crate::model::track`]); returns how many boxes and busy marks it drew.
/// Only the runs the view may touch are looked at, and a busy mark goes on
/// from one run into the next: a capture's track is a run per snapshot, and
/// painted run by run it cost what its runs number, not what the view shows.
pub fn lane(
    painter: &Painter,
    trace: &Trace,
    table: Table,
    track: &Track,
    rect: Rect,
    map: &Mapping,
    style: &LaneStyle,
) -> usize {
    let depth = track.depth.max(1) as usize;
    let (from, to) = map.visible();
    // `as` saturates at i64::MAX when the view reaches past an extreme
    // timestamp; `+ 1` must not overflow there.
    let (from_ns, to_ns) = (from.floor() as Ns, (to.ceil() as Ns).saturating_add(1));
    let spans = table.spans(trace);
    let mut busy = BusyMarks::new(painter, rect, depth);
    let boxes: usize = (track.runs_overlapping(spans, from_ns, to_ns).iter())
        .map(|run| lane_run(painter, trace, table, run, &mut busy, rect, map, style))
        .sum();
    boxes + busy.finish()
}

/// The busy marks a lane has open, one per level: a mark grows while events
/// keep starting in the next pixel column, and is painted when a gap ends it
/// or the lane is done.
struct BusyMarks<'p> {
    painter: &'p Painter,
    rect: Rect,
    /// By level: the mark's first and past-last pixel column, and its colour
    /// (its first event's).
    open: Vec<Option<(f32, f32, Color32)>>,
    painted: usize,
}

impl<'p> BusyMarks<'p> {
    fn new(painter: &'p Painter, rect: Rect, depth: usize) -> Self {
        BusyMarks {
            painter,
            rect,
            open: vec![None; depth],
            painted: 0,
        }
    }

    /// Pixel column `px` of level `l` holds an event's start; `color` (the
    /// event's) is asked for only when a new mark begins there.
    fn mark(&mut self, l: usize, px: f32, color: impl FnOnce() -> Color32) {
        let Some(slot) = self.open.get_mut(l) else {
            return;
        };
        let ended = match slot {
            Some((_, to, _)) if *to >= px => {
                *to = to.max(px + 1.0);
                None
            }
            _ => slot.replace((px, px + 1.0, color())),
        };
        if let Some(mark) = ended {
            self.paint(l, mark);
        }
    }

    fn paint(&mut self, l: usize, (x0, x1, c): (f32, f32, Color32)) {
        self.painted += 1;
        let y0 = self.rect.top() + 1.0 + l as f32 * LANE_H;
        let r = Rect::from_min_max(pos2(x0, y0 + 3.0), pos2(x1, y0 + LANE_H - 5.0));
        self.painter.rect_filled(r, 0.0, colors::busy(c));
    }

    /// Paints the marks still open; returns how many marks were painted.
    fn finish(mut self) -> usize {
        for l in 0..self.open.len() {
            if let Some(mark) = self.open[l].take() {
                self.paint(l, mark);
            }
        }
        self.painted
    }
}

#[allow(clippy::too_many_arguments)] // all per-lane inputs; a struct would only rename them
/// Paints one run of a lane's track: its boxes (returns how many), and its
/// narrower events into the lane's busy marks.
fn lane_run(
    painter: &Painter,
    trace: &Trace,
    table: Table,
    run: &Run,
    busy: &mut BusyMarks,
    rect: Rect,
    map: &Mapping,
    style: &LaneStyle,
) -> usize {
    let spans = table.spans(trace);
    let depth = busy.open.len();
    let (from, to) = map.visible();
    // `as` saturates at i64::MAX when the view reaches past an extreme
    // timestamp; `+ 1` must not overflow there.
    let (from_ns, to_ns) = (from.floor() as Ns, (to.ceil() as Ns).saturating_add(1));
    let starts = &spans.start;
    // At a zoom where even the run's longest event is well under a box's
    // width (a whole-trace view of millions of events), no event is drawn
    // as a box: its end, a cache miss per pixel column, is not read, nor
    // are the skipped events looked back over for a long one.
    let sub_pixel_only = (run.max_duration as f64) * map.px_per_ns < f64::from(MIN_BOX_PX) / 2.0;
    // A run in view whose events all start in one pixel column (a
    // snapshot's worth of a capture, seen whole) marks that column, as the
    // loop below would, without a search.
    let (first, last) = (run.events.start as usize, run.events.end as usize - 1);
    if sub_pixel_only && depth == 1 && (starts[first] as f64) >= from && (starts[last] as f64) <= to
    {
        let px = map.x(starts[first]).floor();
        if map.x(starts[last]).floor() == px {
            busy.mark(0, px, || {
                event_color(trace, EventRef::new(table, first as u32), style.name_colors)
            });
            return 0;
        }
    }
    // A run wholly in view (at a whole-trace zoom, each of a capture's
    // hundreds of runs) holds the rows a window search would give: its
    // searches, three binary searches of memory not in cache, are skipped.
    let in_view = (starts[first] as f64) >= from && starts[last] < to_ns;
    let (lo, hi) = if in_view {
        (first, last + 1)
    } else {
        let win = run.window(spans, from_ns, to_ns);
        (win.start as usize, win.end as usize)
    };
    let mut drawn = 0;
    let draw = |i: usize, drawn: &mut usize| {
        *drawn += 1;
        let ev = EventRef::new(table, i as u32);
        let l = level(trace, table, i) as f32;
        let x0 = map.x(starts[i]).max(rect.left() - 2.0);
        let x1 = map
            .x(spans.end(i))
            .min(rect.right() + 2.0)
            .max(x0 + MIN_BOX_PX);
        let y0 = rect.top() + 1.0 + l * LANE_H;
        let r = Rect::from_min_max(pos2(x0, y0), pos2(x1, y0 + LANE_H - 2.0));
        let fill = event_color(trace, ev, style.name_colors);
        painter.rect_filled(r, 1.0, fill);
        let name_id = spans.name[i].0 as usize;
        let outline = if style.selected == Some(ev) {
            Some(colors::SELECTED)
        } else if style.related.contains(&ev) {
            Some(colors::RELATED)
        } else if style.highlight.get(name_id).copied().unwrap_or(false) {
            Some(colors::HIGHLIGHT)
        } else {
            None
        };
        if let Some(c) = outline {
            painter.rect_stroke(r.expand(1.0), 1.0, Stroke::new(2.0, c), StrokeKind::Outside);
        }
        if style.show_names {
            name_in_box(painter, rect, r, || ev.short_name(trace));
        }
    };

    // Events starting before the view that still reach into it: for flat
    // lanes only the last one can; for nested NVTX, the last one per level.
    let a = match in_view {
        true => lo,
        false => lo + starts[lo..hi].partition_point(|&s| (s as f64) < from),
    };
    let mut min_level = u8::MAX;
    for k in (lo..a).rev().take(LOOKBACK) {
        let l = level(trace, table, k);
        if l < min_level {
            min_level = l;
            if spans.end(k) as f64 > from {
                draw(k, &mut drawn);
            }
            if l == 0 {
                break;
            }
        }
    }

    let mut search = ForwardSearch::new(starts, &run.sampled_starts, run.events.start as usize, hi);
    let mut i = a;
    while i < hi {
        let x0 = map.x(starts[i]);
        if !sub_pixel_only && map.x(spans.end(i)) - x0 >= MIN_BOX_PX {
            draw(i, &mut drawn);
            i += 1;
            continue;
        }
        // Sub-pixel: mark the pixel busy, then jump by binary search to the
        // first event starting in the next pixel.
        let l = (level(trace, table, i) as usize).min(depth - 1);
        let px = x0.floor();
        busy.mark(l, px, || {
            event_color(trace, EventRef::new(table, i as u32), style.name_colors)
        });
        let t_next = map.t(px + 1.0);
        let j = search.first_at_or_after(i + 1, t_next);
        // A long event may start in this pixel after short ones: the last one
        // of each level among those skipped is the only candidate (the
        // others of its level end before it starts, inside this pixel, where
        // a level's events do not nest). It is a box by the rule above, its
        // own width: a track cut into runs (a capture's) meets it first in a
        // run and draws it so, and the runs' cuts must not change the
        // picture. (Flat lanes whose calls nest, API and OS runtime calls,
        // still show only the last: a call holding a shorter one that starts
        // in its pixel gets a busy mark, not a box.)
        let mut min_level = u8::MAX;
        let skipped = if sub_pixel_only { j..j } else { i + 1..j };
        for k in skipped.rev().take(LOOKBACK) {
            let lk = level(trace, table, k);
            if lk < min_level {
                min_level = lk;
                if map.x(spans.end(k)) - map.x(starts[k]) >= MIN_BOX_PX {
                    draw(k, &mut drawn);
                }
                if lk == 0 {
                    break;
                }
            }
        }
        i = j.max(i + 1);
    }
    drawn
}

/// The first index in `[lo, hi)` of sorted `values` whose value is ≥ `t`
/// (a partition point), searched outward from `guess`: steps that double
/// from it find a bracket, then a binary search of the bracket. A good
/// guess touches a line or two of memory where a binary search of the whole
/// range misses the cache at most of its steps.
fn partition_near(values: &[Ns], lo: usize, hi: usize, guess: usize, t: f64) -> usize {
    let below = |i: usize| (values[i] as f64) < t;
    let g = guess.clamp(lo, hi);
    let (from, to) = if g < hi && below(g) {
        // The answer is in (g, hi].
        let (mut from, mut step) = (g + 1, 1);
        let to = loop {
            let end = from + step;
            if end > hi {
                break hi;
            }
            if !below(end - 1) {
                break end;
            }
            from = end;
            step *= 2;
        };
        (from, to)
    } else {
        // The answer is in [lo, g].
        let (mut to, mut step) = (g, 1);
        let from = loop {
            if to < lo + step {
                break lo;
            }
            let at = to - step;
            if below(at) {
                break at + 1;
            }
            to = at;
            step *= 2;
        };
        (from, to)
    };
    from + values[from..to].partition_point(|&v| (v as f64) < t)
}

/// The first index of a track whose start is at or after a time, for times
/// that mostly grow (a lane's pixel columns, left to right). The sparse
/// index is searched outward from where the last search ended: two columns
/// are a few dozen entries apart there, in lines already fetched. The block
/// of starts it leaves is searched outward from where `t` falls between the
/// block's first and last start. A binary search of both missed the cache
/// at most of its steps: nine tenths of the lanes' time in a whole-trace
/// frame of 100M events.
pub(super) struct ForwardSearch<'a> {
    starts: &'a [Ns],
    sparse: &'a [Ns],
    base: usize,
    hi: usize,
    /// The sparse entries below the last time asked.
    below: usize,
}

impl<'a> ForwardSearch<'a> {
    /// Searches for indexes below `hi` in a track whose first event is at
    /// `base` and whose sparse index is `sparse`.
    pub(super) fn new(starts: &'a [Ns], sparse: &'a [Ns], base: usize, hi: usize) -> Self {
        ForwardSearch {
            starts,
            sparse,
            base,
            hi,
            below: 0,
        }
    }

    /// The first sparse entry whose start is ≥ `t` (`sparse.len()` if
    /// none): entry `b` is the start of event `base + b * SPARSE_STRIDE`.
    pub(super) fn sample_at_or_after(&mut self, t: f64) -> usize {
        let b = partition_near(self.sparse, 0, self.sparse.len(), self.below, t);
        self.below = b;
        b
    }

    /// The start sparse entry `b` holds.
    pub(super) fn sample_start(&self, b: usize) -> Option<Ns> {
        self.sparse.get(b).copied()
    }

    /// The end of the rows searched (`hi`).
    pub(super) fn end(&self) -> usize {
        self.hi
    }

    /// The first index in `[lo, hi)` whose start is ≥ `t`.
    pub(super) fn first_at_or_after(&mut self, lo: usize, t: f64) -> usize {
        use crate::app::timeline::rows::SPARSE_STRIDE;
        let (sparse, hi) = (self.sparse, self.hi);
        let b = self.sample_at_or_after(t);
        // Sparse entry `k` is the start of event `base + k * SPARSE_STRIDE`:
        // the answer is after the one below `t` and at most the one above.
        let block_lo = match b {
            0 => lo,
            _ => self.base + (b - 1) * SPARSE_STRIDE + 1,
        };
        let block_hi = match sparse.get(b) {
            Some(_) => self.base + b * SPARSE_STRIDE,
            None => hi,
        };
        let from = lo.max(block_lo).min(hi);
        let to = hi.min(block_hi).max(from);
        let guess = match (b.checked_sub(1).map(|k| sparse[k]), sparse.get(b)) {
            (Some(a), Some(&z)) if z > a => {
                let f = ((t - a as f64) / (z - a) as f64).clamp(0.0, 1.0);
                block_lo + (f * (SPARSE_STRIDE - 1) as f64) as usize
            }
            _ => from,
        };
        partition_near(self.starts, from, to, guess, t)
    }
}

/// Writes the name `name` gives in box `r` of a lane (`rect`), cut with "…"
/// to fit, when the box is wide enough for a few characters (the name is
/// looked up only then: most boxes of a busy lane are narrower).
pub(super) fn name_in_box<'a>(
    painter: &Painter,
    rect: Rect,
    r: Rect,
    name: impl FnOnce() -> &'a str,
) {
    let w = r.width();
    if w <= 24.0 {
        return;
    }
    let name = name();
    if name.is_empty() {
        return;
    }
    // Proportional 11pt averages ~6.2 points a character.
    let fit = ((w - 6.0) / 6.2) as usize;
    if fit < 2 {
        return;
    }
    // `nth`, not `count`: stops after `fit` chars of a huge name.
    let text: String = if name.chars().nth(fit).is_some() {
        let mut t: String = name.chars().take(fit.saturating_sub(1)).collect();
        t.push('…');
        t
    } else {
        name.to_string()
    };
    let visible = r.intersect(rect);
    painter.with_clip_rect(visible).text(
        pos2(visible.left().max(r.left()) + 3.0, r.center().y),
        Align2::LEFT_CENTER,
        text,
        FontId::proportional(11.0),
        Color32::WHITE,
    );
}

/// The NVTX ranges of `trace` without an end whose faded part (see
/// [`open_tails`]) shows: a capture's ranges still open, or ranges a program
/// never ended. Every such range is counted to the same time (the report's
/// last NVTX time), so their faded parts on one level of a track cover each
/// other: only the one that started last is kept, a level at most (a report
/// with 30k ranges never ended painted 30k faded boxes a frame).
pub fn open_ranges(trace: &Trace) -> Vec<u32> {
    let nvtx = &trace.nvtx;
    // Each track's rows, by their first: a range's track is a search away.
    let mut tracks: Vec<(u32, usize)> = (trace.threads.iter())
        .flat_map(|t| t.nvtx.iter())
        .enumerate()
        .filter_map(|(k, n)| n.track.first().map(|first| (first, k)))
        .collect();
    tracks.sort_unstable();
    let all: Vec<&Track> = (trace.threads.iter())
        .flat_map(|t| t.nvtx.iter().map(|n| &n.track))
        .collect();
    let mut latest: HashMap<(usize, u8), u32> = HashMap::new();
    for (i, _) in nvtx.unended.iter().enumerate().filter(|&(_, &open)| open) {
        let i = i as u32;
        // A track whose rows are not one block (not how the loader builds
        // them today) is found by a look at every track.
        let Some(k) = (tracks
            .partition_point(|&(first, _)| first <= i)
            .checked_sub(1))
        .map(|at| tracks[at].1)
        .filter(|&k| all[k].contains(i))
        .or_else(|| all.iter().position(|t| t.contains(i))) else {
            continue;
        };
        let level = level(trace, Table::Nvtx, i as usize);
        let start = |r: u32| nvtx.spans.start[r as usize];
        latest
            .entry((k, level))
            .and_modify(|r| {
                if start(i) >= start(*r) {
                    *r = i;
                }
            })
            .or_insert(i);
    }
    let mut open: Vec<u32> = latest.into_values().collect();
    open.sort_unstable();
    open
}

/// Where range `i` (one of [`open_ranges`]) is drawn past the end it is
/// counted to (the report's last NVTX time, as nsys counts it): on to the
/// report's end. `None` when that adds nothing.
fn open_tail(trace: &Trace, i: usize) -> Option<(Ns, Ns)> {
    let counted_to = trace.nvtx.spans.end(i);
    let report_end = trace.info.time_range.1;
    (report_end > counted_to).then_some((counted_to, report_end))
}

/// Paints, faded, the part of each range of `open` (see [`open_ranges`]) of
/// an NVTX lane's `track` that lies past the end it is counted to: a
/// capture's outermost range, open for minutes, would otherwise show as a
/// sliver at its start until it ends. Returns how many it painted.
pub fn open_tails(
    painter: &Painter,
    trace: &Trace,
    track: &Track,
    rect: Rect,
    map: &Mapping,
    open: &[u32],
    style: &LaneStyle,
) -> usize {
    let (from, to) = map.visible();
    let mut painted = 0;
    for &i in open.iter().filter(|&&i| track.contains(i)) {
        let Some((s, e)) = open_tail(trace, i as usize) else {
            continue;
        };
        if (e as f64) < from || (s as f64) > to {
            continue;
        }
        let ev = EventRef::new(Table::Nvtx, i);
        let l = level(trace, Table::Nvtx, i as usize) as f32;
        let x0 = map.x(s).max(rect.left() - 2.0);
        let x1 = map.x(e).min(rect.right() + 2.0).max(x0 + MIN_BOX_PX);
        let y0 = rect.top() + 1.0 + l * LANE_H;
        let r = Rect::from_min_max(pos2(x0, y0), pos2(x1, y0 + LANE_H - 2.0));
        let fill = event_color(trace, ev, style.name_colors).gamma_multiply(0.35);
        painter.rect_filled(r, 1.0, fill);
        if style.selected == Some(ev) {
            let stroke = Stroke::new(2.0, colors::SELECTED);
            painter.rect_stroke(r.expand(1.0), 1.0, stroke, StrokeKind::Outside);
        }
        // Named here where its solid part is too narrow to hold its name
        // (a capture's range that no NVTX event has followed yet).
        let solid = map.x(s) - map.x(trace.nvtx.spans.start[i as usize]);
        if style.show_names && solid < 24.0 {
            name_in_box(painter, rect, r, || ev.short_name(trace));
        }
        painted += 1;
    }
    painted
}

/// The range of `open` whose faded part (see [`open_tails`]) in an NVTX
/// lane's `track` is under `pos`, if any.
pub fn hit_open_tail(
    trace: &Trace,
    track: &Track,
    rect: Rect,
    map: &Mapping,
    pos: Pos2,
    open: &[u32],
) -> Option<EventRef> {
    let t = map.t(pos.x);
    let want_level = ((pos.y - rect.top()) / LANE_H).floor().max(0.0) as u8;
    open.iter()
        .copied()
        .filter(|&i| track.contains(i) && level(trace, Table::Nvtx, i as usize) == want_level)
        .find(|&i| {
            open_tail(trace, i as usize).is_some_and(|(s, e)| s as f64 <= t && t <= e as f64)
        })
        .map(|i| EventRef::new(Table::Nvtx, i))
}

/// The end of event `ev` as drawn: a range without an end is drawn on to
/// the report's end (see [`open_tails`]).
pub fn drawn_end(trace: &Trace, ev: EventRef) -> Ns {
    let unended = ev.table == Table::Nvtx && trace.nvtx.is_unended(ev.index as usize);
    match unended
        .then(|| open_tail(trace, ev.index as usize))
        .flatten()
    {
        Some((_, e)) => e,
        None => ev.end(trace),
    }
}

/// The event under `pos` in a lane, if any (within 3 points).
pub fn hit(
    trace: &Trace,
    table: Table,
    track: &Track,
    rect: Rect,
    map: &Mapping,
    pos: Pos2,
) -> Option<EventRef> {
    let spans = table.spans(trace);
    let t = map.t(pos.x);
    let tol = 3.0 / map.px_per_ns;
    let want_level = ((pos.y - rect.top()) / LANE_H).floor().max(0.0) as u8;
    let windows: Vec<Span> = track
        .windows(
            spans,
            (t - tol).floor() as Ns,
            // Saturating: a view near i64::MAX (extreme timestamps) must not overflow.
            ((t + tol).ceil() as Ns).saturating_add(1),
        )
        .collect();
    let mut best: Option<(f64, usize)> = None;
    // From the last candidate backwards: the nearest events are at the end.
    let candidates = windows
        .iter()
        .rev()
        .flat_map(|w| (w.start as usize..w.end as usize).rev());
    for i in candidates.take(4096) {
        if level(trace, table, i) != want_level {
            continue;
        }
        let (s, e) = (spans.start[i] as f64, spans.end(i) as f64);
        let dist = if t < s {
            s - t
        } else if t > e {
            t - e
        } else {
            0.0
        };
        if dist <= tol && best.is_none_or(|(d, _)| dist < d) {
            best = Some((dist, i));
            if dist == 0.0 {
                break;
            }
        }
    }
    best.map(|(_, i)| EventRef::new(table, i as u32))
}

/// A GPU metric as a filled chart. Each pixel column shows the mean of the
/// samples in it (a pale area with a bright top) and their maximum (a bright
/// whisker above it), so short spikes
/// survive any zoom; a column without samples holds the value in force. The
/// cost is O(pixels × log samples + samples in view), samples capped per
/// column; the whole chart is one mesh.
pub fn metric(
    painter: &Painter,
    series: &MetricSeries,
    row: &MetricRow,
    rect: Rect,
    map: &Mapping,
    color: Color32,
) {
    let ts = &series.timestamp;
    let vs = &series.value;
    if ts.is_empty() {
        return;
    }
    let base = rect.bottom() - 1.0;
    let h = rect.height() - 4.0;
    let y_of = |v: f64| base - h * ((v - row.lo) / (row.hi - row.lo)).clamp(0.0, 1.0) as f32;
    let y0 = y_of(0.0_f64.max(row.lo));
    let pale = color.gamma_multiply(0.3);
    let mut mesh = Mesh::default();
    let left = rect.left().floor().max(map.left.floor());
    let mut x = left;
    let mut i = ts.partition_point(|&s| (s as f64) < map.t(x));
    while x < rect.right() {
        let t1 = map.t(x + 1.0);
        let j = i + ts[i..].partition_point(|&s| (s as f64) < t1);
        let (mean, max) = if j > i {
            let stride = ((j - i) / 256).max(1);
            let (mut sum, mut n, mut max) = (0.0f64, 0usize, f64::NEG_INFINITY);
            let mut k = i;
            while k < j {
                let v = vs.get(k).copied().unwrap_or(0.0) as f64;
                sum += v;
                n += 1;
                max = max.max(v);
                k += stride;
            }
            (sum / n as f64, max)
        } else if i > 0 && i < ts.len() {
            let v = vs.get(i - 1).copied().unwrap_or(0.0) as f64;
            (v, v)
        } else {
            // Before the first sample or after the last: nothing recorded.
            i = j;
            x += 1.0;
            continue;
        };
        let (ym, yx) = (y_of(mean), y_of(max));
        // A pale area under the mean, a bright cap on it, and a bright
        // whisker up to the maximum.
        let col = Rect::from_min_max(pos2(x, ym.min(y0)), pos2(x + 1.0, ym.max(y0) + 0.01));
        mesh.add_colored_rect(col, pale);
        mesh.add_colored_rect(
            Rect::from_min_max(pos2(x, yx.min(ym - 0.75)), pos2(x + 1.0, ym + 0.75)),
            color,
        );
        i = j;
        x += 1.0;
    }
    painter.add(mesh);
}

/// The value of a metric in force at time `t` (the last sample at or before it).
pub fn metric_at(series: &MetricSeries, t: f64) -> Option<(Ns, f32)> {
    let k = series.timestamp.partition_point(|&s| (s as f64) <= t);
    if k == 0 || k >= series.timestamp.len() {
        return None;
    }
    Some((series.timestamp[k - 1], series.value[k - 1]))
}

/// The time ruler on the session clock (the report's ns, as `nsys stats` and
/// `--range` use them): 1-2-5 steps spaced so that labels never overlap,
/// labelled with the unit and decimals the step needs. Returns the tick x
/// positions.
/// A summary of a lane's activity between `left` and `right` (a collapsed group's header): the
/// x spans of pixel columns where one of its events runs. One binary search per column,
/// whatever the number of events.
pub fn activity_spans(
    trace: &Trace,
    table: Table,
    track: &Track,
    (left, right): (f32, f32),
    map: &Mapping,
) -> Vec<(f32, f32)> {
    let spans = table.spans(trace);
    let runs: Vec<(usize, &[Ns])> = track
        .runs()
        .iter()
        .filter_map(|r| Some((r.rows().start, spans.start.get(r.rows())?)))
        .collect();
    // The last event starting before `t`: in the last run whose first event
    // does (runs are in time order).
    let last_before = |t: f64| {
        let k =
            runs.partition_point(|&(_, starts)| starts.first().is_some_and(|&s| (s as f64) < t));
        let (base, starts) = runs.get(k.checked_sub(1)?)?;
        Some(base + starts.partition_point(|&s| (s as f64) < t) - 1)
    };
    let left = left.max(map.left);
    let mut out = Vec::new();
    let mut run: Option<f32> = None;
    let mut x = left.floor();
    while x < right {
        let (a, b) = (map.t(x), map.t(x + 1.0));
        // The last event starting before the column's end: busy if it
        // reaches into the column (nested ranges end inside their parents,
        // so a column inside a long outer range may read idle: a summary).
        let busy = last_before(b).is_some_and(|i| (spans.end(i) as f64) > a);
        match (busy, run) {
            (true, None) => run = Some(x),
            (false, Some(x0)) => {
                out.push((x0, x));
                run = None;
            }
            _ => {}
        }
        x += 1.0;
    }
    if let Some(x0) = run {
        out.push((x0, right));
    }
    out
}

/// Paints [`activity_spans`] in `rect`'s height; the marks drawn.
pub fn activity(painter: &Painter, spans: &[(f32, f32)], rect: Rect, color: Color32) -> usize {
    for &(x0, x1) in spans {
        painter.rect_filled(
            Rect::from_min_max(pos2(x0, rect.top()), pos2(x1, rect.bottom())),
            0.0,
            color,
        );
    }
    spans.len()
}

/// The ruler's ticks: (time, label). Labels count from `origin` — 0 for
/// session time, a selected range's start for times relative to it (shown
/// with a sign, as Nsight Systems and Perfetto do).
pub fn ruler_ticks(map: &Mapping, origin: f64) -> Vec<(f64, String)> {
    let ns_per_px = 1.0 / map.px_per_ns;
    let (from, to) = map.visible();
    let relative = origin != 0.0;
    let label = |v: f64, step: f64| {
        let text = format::tick(v - origin, step);
        if relative && v > origin {
            format!("+{text}")
        } else {
            text
        }
    };
    // Smallest 1-2-5 step whose widest label fits in its spacing.
    let mut step = 10f64.powf((ns_per_px * 60.0).max(1.0).log10().floor());
    let mut k = 0;
    loop {
        let widest = label(
            if relative {
                to.max(from)
            } else {
                to.abs().max(from.abs())
            },
            step,
        );
        let need = widest.chars().count() as f64 * 6.3 + 18.0;
        if step * map.px_per_ns >= need.max(70.0) || k > 40 {
            break;
        }
        step *= if k % 3 == 1 { 2.5 } else { 2.0 };
        k += 1;
    }
    let n0 = ((from - origin) / step).floor();
    let mut ticks = Vec::new();
    for n in 0.. {
        // Multiples of the step from the origin, not a running sum: no drift.
        let v = origin + (n0 + n as f64) * step;
        if v > to {
            break;
        }
        ticks.push((v, label(v, step)));
    }
    ticks
}

/// Paints the ruler; returns the x of each tick (for the grid lines).
pub fn ruler(painter: &Painter, rect: Rect, map: &Mapping, text: Color32, origin: f64) -> Vec<f32> {
    let font = FontId::proportional(11.0);
    let mut xs = Vec::new();
    for (v, label) in ruler_ticks(map, origin) {
        let x = map.xf(v);
        if x >= rect.left() - 1.0 {
            painter.line_segment(
                [pos2(x, rect.bottom() - 6.0), pos2(x, rect.bottom())],
                Stroke::new(1.0, text),
            );
            painter.text(
                pos2(x + 3.0, rect.top() + 2.0),
                Align2::LEFT_TOP,
                label,
                font.clone(),
                text,
            );
            xs.push(x);
        }
    }
    xs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruler_counts_from_the_range_start_when_one_is_selected() {
        let view = crate::app::timeline::view::ViewState {
            start: 1_000_000.0,
            end: 2_000_000.0,
            ..Default::default()
        };
        let canvas = Rect::from_min_max(pos2(0.0, 0.0), pos2(1000.0, 20.0));
        let map = Mapping::new(canvas, &view);
        let absolute = ruler_ticks(&map, 0.0);
        assert!(absolute.iter().all(|(_, l)| !l.starts_with('+')));
        let origin = 1_234_567.0;
        let relative = ruler_ticks(&map, origin);
        assert!(
            relative
                .iter()
                .any(|(v, l)| *v == origin && !l.starts_with('+'))
        );
        assert!(
            relative
                .iter()
                .filter(|(v, _)| *v > origin)
                .all(|(_, l)| l.starts_with('+'))
        );
        let step = relative[1].0 - relative[0].0;
        for (v, _) in &relative {
            let k = (v - origin) / step;
            assert!(
                (k - k.round()).abs() < 1e-9,
                "ticks are whole steps from the origin"
            );
        }
    }

    #[test]
    fn sparse_search_matches_a_plain_binary_search() {
        let starts: Vec<Ns> = (0..5000).map(|i| (i / 3) * 7).collect();
        let base = 100;
        let track = &starts[base..4900];
        let sparse: Vec<Ns> = track
            .iter()
            .step_by(super::super::rows::SPARSE_STRIDE)
            .copied()
            .collect();
        let mut ranges = vec![(base, 4900), (base + 300, 4000), (2000, 2001), (4899, 4900)];
        // Every start of a block and its neighbours, as the painter's walk
        // from left to right asks.
        for lo in (base..4900).step_by(37).chain((base..4900).step_by(256)) {
            ranges.push((lo, 4900));
            ranges.push((lo + 1, 4900));
        }
        let times: Vec<f64> = [-5.0, 0.0, 700.0, 700.5, 5000.0, 11_430.0, 1e9]
            .into_iter()
            .chain((0..12_000).step_by(97).map(|t| t as f64))
            .collect();
        for (lo, hi) in ranges {
            // The times in order (as a lane's columns ask them), then as given
            // (jumping back), then a NaN: the forward search answers them all.
            let mut sorted = times.clone();
            sorted.sort_by(f64::total_cmp);
            let mut forward = ForwardSearch::new(&starts, &sparse, base, hi);
            for &t in sorted.iter().chain(&times).chain(&[f64::NAN, 3.0]) {
                let want = lo + starts[lo..hi].partition_point(|&s| (s as f64) < t);
                assert_eq!(
                    forward.first_at_or_after(lo, t),
                    want,
                    "forward, {lo}..{hi} t={t}"
                );
            }
        }
    }
}
