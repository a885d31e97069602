//! Overlay marks: spans that other views ask the timeline to draw on top of
//! the events. Findings use them today; search hits, compare diffs and lesson
//! highlights can use the same list, so each view says *what* to mark and the
//! timeline alone decides *how* (and culls it to what is on screen).

use eframe::egui::{self, Color32, Pos2, Rect, Stroke, StrokeKind, pos2, vec2};

use super::Timeline;
use super::rows::LANE_H;
use super::view::Mapping;
use crate::app::events::{EventRef, Table};
use crate::model::{Ns, Trace};

/// Height of the band ruler marks take at the bottom of the ruler.
const RULER_BAND_H: f32 = 5.0;
/// Height of a bar drawn under an event.
const UNDER_H: f32 = 4.0;
/// At most this many labels in one ruler tooltip: a dense spot would
/// otherwise list thousands.
const MAX_TIP_LABELS: usize = 6;
/// Characters of a flag's label shown in its tag (the tooltip has it all).
const FLAG_TAG_CHARS: usize = 40;

/// Where a mark is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// A band at the bottom of the ruler across the span, with a triangle at
    /// its start: visible whichever rows are collapsed or scrolled away.
    Ruler,
    /// A bar along the bottom of this event's box (its lane, its NVTX level)
    /// across the mark's span, which may reach past the event itself.
    Under(EventRef),
    /// An outline around this event's box (the mark's span is the event's).
    Outline(EventRef),
    /// Hatching over this event's box across the mark's span (time spent
    /// waiting), with a dashed line to `link`'s box (what it waited for).
    Hatch {
        on: EventRef,
        link: Option<EventRef>,
    },
    /// A flag on the ruler at the mark's start, a thin line from it down
    /// through the rows, and the label's first line as a tag at the top of
    /// the rows (a note: it must read without hovering).
    Flag,
}

impl Anchor {
    /// The same anchor on the events `find` gives for its own (a report
    /// that grew: events found again); false when one is not found.
    pub fn find_again(&mut self, mut find: impl FnMut(EventRef) -> Option<EventRef>) -> bool {
        let mut again = |ev: &mut EventRef| find(*ev).map(|found| *ev = found).is_some();
        match self {
            Anchor::Ruler | Anchor::Flag => true,
            Anchor::Under(ev) | Anchor::Outline(ev) => again(ev),
            Anchor::Hatch { on, link } => again(on) && link.as_mut().is_none_or(&mut again),
        }
    }
}

/// One mark.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    pub start: Ns,
    pub end: Ns,
    pub anchor: Anchor,
    pub color: Color32,
    /// Shown when the pointer rests on a ruler mark; may be empty.
    pub label: String,
    /// The view that asked for it: each view replaces only its own marks.
    pub source: &'static str,
}

impl Timeline {
    /// Replaces the marks of `source` (other views' marks stay).
    pub fn set_overlays(&mut self, source: &'static str, marks: Vec<Overlay>) {
        self.overlays.retain(|m| m.source != source);
        // Moved, not copied, when they are the only marks: a findings-heavy
        // capture hands tens of thousands over at every snapshot.
        if self.overlays.is_empty() {
            self.overlays = marks;
        } else {
            self.overlays.extend(marks);
        }
    }

    /// Takes the marks of `source` off the timeline (other views' marks stay).
    pub fn take_overlays(&mut self, source: &'static str) -> Vec<Overlay> {
        if self.overlays.iter().all(|m| m.source == source) {
            return std::mem::take(&mut self.overlays);
        }
        let (taken, kept) = std::mem::take(&mut self.overlays)
            .into_iter()
            .partition(|m| m.source == source);
        self.overlays = kept;
        taken
    }

    /// The marks of `source`.
    pub fn overlays_of(&self, source: &'static str) -> impl Iterator<Item = &Overlay> {
        self.overlays.iter().filter(move |m| m.source == source)
    }

    /// The box of `ev` as the last frame laid it out, or `None` when its lane
    /// is not on screen (collapsed, hidden, scrolled away) or it does not exist.
    fn slot(&self, trace: &Trace, ev: EventRef, map: &Mapping) -> Option<Rect> {
        let spans = ev.table.spans(trace);
        let i = ev.index as usize;
        let (s, e) = spans.get(i)?;
        let (_, lane) = self.lane_of(ev)?;
        let level = if ev.table == Table::Nvtx {
            trace.nvtx.depth.get(i).copied().unwrap_or(0)
        } else {
            0
        } as f32;
        let y0 = lane.top() + 1.0 + level * LANE_H;
        let x0 = map.x(s);
        Some(Rect::from_min_max(
            pos2(x0, y0),
            pos2(map.x(e).max(x0 + 1.0), y0 + LANE_H - 2.0),
        ))
    }
}

/// Paints every mark that is on screen; returns how many it drew.
pub(super) fn paint(
    tl: &Timeline,
    painter: &egui::Painter,
    trace: &Trace,
    ruler: Rect,
    canvas: Rect,
    map: &Mapping,
) -> usize {
    let (from, to) = map.visible();
    let ruler_painter = painter.with_clip_rect(ruler);
    let lane_painter = painter.with_clip_rect(canvas);
    let mut covered = PixelColumns::new(ruler);
    let mut drawn = 0;
    // Flags whose tags are drawn once all lines are (tags go on top).
    let mut flags: Vec<(f32, &Overlay)> = Vec::new();
    for m in &tl.overlays {
        if (m.end as f64) < from || (m.start as f64) > to {
            continue;
        }
        let x0 = map.x(m.start).max(ruler.left() - 8.0);
        let x1 = map.x(m.end).min(ruler.right() + 8.0);
        match m.anchor {
            Anchor::Ruler => {
                if covered.already_drawn(RULER_BAND, x0, x1) {
                    continue;
                }
                // A mark spanning most of the view would hide the short ones
                // drawn over it in the same colour: it gets a thin line.
                let h = if x1 - x0 > ruler.width() * 0.5 {
                    2.0
                } else {
                    RULER_BAND_H
                };
                let band = Rect::from_min_max(
                    pos2(x0, ruler.bottom() - h),
                    pos2(x1.max(x0 + 2.0), ruler.bottom()),
                );
                ruler_painter.rect_filled(band, 0.0, m.color);
                // The triangle points down at the span's start, so a short
                // span still reads as "here".
                let tip = pos2(x0, ruler.bottom() - RULER_BAND_H);
                ruler_painter.add(egui::Shape::convex_polygon(
                    vec![tip, tip + vec2(-4.0, -6.0), tip + vec2(4.0, -6.0)],
                    m.color,
                    Stroke::NONE,
                ));
                drawn += 1;
            }
            Anchor::Under(ev) => {
                let Some(slot) = tl.slot(trace, ev, map) else {
                    continue;
                };
                if covered.already_drawn(slot.bottom().round() as i32, x0, x1) {
                    continue;
                }
                let bar = Rect::from_min_max(
                    pos2(x0, slot.bottom() - UNDER_H),
                    pos2(x1.max(x0 + 2.0), slot.bottom()),
                );
                lane_painter.rect_filled(bar, 0.0, m.color);
                drawn += 1;
            }
            Anchor::Hatch { on, link } => {
                let Some(slot) = tl.slot(trace, on, map) else {
                    continue;
                };
                let area = Rect::from_min_max(
                    pos2(x0.max(slot.left()), slot.top()),
                    pos2(x1.min(slot.right()).max(x0 + 2.0), slot.bottom()),
                );
                hatch(
                    &lane_painter.with_clip_rect(area.intersect(canvas)),
                    area,
                    m.color,
                );
                lane_painter.rect_stroke(area, 0.0, Stroke::new(1.0, m.color), StrokeKind::Inside);
                if let Some(target) = link.and_then(|l| tl.slot(trace, l, map)) {
                    let from = pos2(area.right(), area.center().y);
                    let to = pos2(target.right().min(from.x), target.center().y);
                    lane_painter.extend(egui::Shape::dashed_line(
                        &[from, to],
                        Stroke::new(1.5, m.color),
                        5.0,
                        3.0,
                    ));
                }
                drawn += 1;
            }
            Anchor::Flag => {
                let x = map.x(m.start).round() + 0.5;
                flag(&ruler_painter, &lane_painter, ruler, canvas, x, m);
                flags.push((x, m));
                drawn += 1;
            }
            Anchor::Outline(ev) => {
                let Some(slot) = tl.slot(trace, ev, map) else {
                    continue;
                };
                lane_painter.rect_stroke(
                    slot.expand(1.0),
                    1.0,
                    Stroke::new(2.0, m.color),
                    StrokeKind::Outside,
                );
                drawn += 1;
            }
        }
    }
    flag_tags(&lane_painter, canvas, &mut flags);
    drawn
}

/// The band of ruler marks in [`PixelColumns`] (lane bands are keyed by
/// their bottom edge, a screen coordinate: never this).
const RULER_BAND: i32 = i32::MIN;

/// Marks narrower than a pixel share it: one rect per pixel column and band
/// (the ruler, or one level of a lane), not one per mark. On a report with
/// thousands of findings the ruler's marks, and at a whole-trace zoom of
/// 100M events the 17,000 bars under NVTX ranges (13 ms of tessellation a
/// frame), are a few hundred rects.
struct PixelColumns {
    left: f32,
    width: usize,
    bands: Vec<(i32, Vec<bool>)>,
}

impl PixelColumns {
    fn new(area: Rect) -> Self {
        PixelColumns {
            left: area.left(),
            width: area.width().max(0.0) as usize + 1,
            bands: Vec::new(),
        }
    }

    /// Whether a mark from `x0` to `x1` in `band` is narrower than a pixel
    /// whose column that band already has drawn; takes the column if not.
    fn already_drawn(&mut self, band: i32, x0: f32, x1: f32) -> bool {
        let px = (x0 - self.left).floor();
        if x1 - x0 >= 1.0 || px < 0.0 || px as usize >= self.width {
            return false;
        }
        // Marks come in runs of one band (a hundred thousand findings' ruler
        // marks, then each lane's bars): the last band asked for is looked
        // at first.
        let b = match self.bands.last() {
            Some((k, _)) if *k == band => self.bands.len() - 1,
            _ => match self.bands.iter().position(|(k, _)| *k == band) {
                Some(b) => {
                    let last = self.bands.len() - 1;
                    self.bands.swap(b, last);
                    last
                }
                None => {
                    self.bands.push((band, vec![false; self.width]));
                    self.bands.len() - 1
                }
            },
        };
        std::mem::replace(&mut self.bands[b].1[px as usize], true)
    }
}

/// A flag's pole and pennant in the ruler and its line down the rows (its
/// tag is drawn by [`flag_tags`]).
fn flag(
    ruler_painter: &egui::Painter,
    lane_painter: &egui::Painter,
    ruler: Rect,
    canvas: Rect,
    x: f32,
    m: &Overlay,
) {
    lane_painter.line_segment(
        [pos2(x, canvas.top()), pos2(x, canvas.bottom())],
        Stroke::new(1.0, m.color.gamma_multiply(0.85)),
    );
    ruler_painter.line_segment(
        [pos2(x, ruler.top() + 1.0), pos2(x, ruler.bottom())],
        Stroke::new(1.5, m.color),
    );
    ruler_painter.add(egui::Shape::convex_polygon(
        vec![
            pos2(x, ruler.top() + 1.0),
            pos2(x + 10.0, ruler.top() + 5.0),
            pos2(x, ruler.top() + 9.0),
        ],
        m.color,
        Stroke::NONE,
    ));
}

/// The tags of the flags at the top of the rows, each in the first of a few
/// stacked lanes where it does not cover the one before (notes close in time
/// would otherwise hide each other's text).
fn flag_tags(painter: &egui::Painter, canvas: Rect, flags: &mut [(f32, &Overlay)]) {
    const LANES: usize = 3;
    const LANE_STEP: f32 = 18.0;
    flags.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut lane_right = [f32::NEG_INFINITY; LANES];
    for &(x, m) in flags.iter() {
        let first_line = m.label.lines().next().unwrap_or("").trim();
        if first_line.is_empty() {
            continue;
        }
        let text = if first_line.chars().nth(FLAG_TAG_CHARS).is_some() {
            let mut t: String = first_line.chars().take(FLAG_TAG_CHARS - 1).collect();
            t.push('…');
            t
        } else {
            first_line.to_string()
        };
        let galley =
            painter.layout_no_wrap(text, egui::FontId::proportional(11.5), readable_on(m.color));
        // The first free lane, else the one that frees up first.
        let lane = (0..LANES).find(|&l| lane_right[l] < x).unwrap_or_else(|| {
            (0..LANES)
                .min_by(|&a, &b| lane_right[a].total_cmp(&lane_right[b]))
                .unwrap_or(0)
        });
        let tag = Rect::from_min_size(
            pos2(x + 1.0, canvas.top() + 2.0 + lane as f32 * LANE_STEP),
            galley.size() + vec2(8.0, 4.0),
        );
        lane_right[lane] = tag.right() + 2.0;
        painter.rect_filled(tag, 2.0, m.color.gamma_multiply(0.92));
        painter.galley(tag.min + vec2(4.0, 2.0), galley, Color32::WHITE);
    }
}

/// Black or white, whichever reads better on `bg`.
fn readable_on(bg: Color32) -> Color32 {
    let luma = 0.299 * bg.r() as f32 + 0.587 * bg.g() as f32 + 0.114 * bg.b() as f32;
    if luma > 150.0 {
        Color32::BLACK
    } else {
        Color32::WHITE
    }
}

/// Diagonal stripes over `area` (the painter clips them to it).
fn hatch(painter: &egui::Painter, area: Rect, color: Color32) {
    const STEP: f32 = 5.0;
    let h = area.height();
    let mut x = area.left() - h;
    // Bounded by the area's width in points, whatever the zoom.
    while x < area.right() {
        painter.line_segment(
            [pos2(x, area.bottom()), pos2(x + h, area.top())],
            Stroke::new(1.5, color),
        );
        x += STEP;
    }
}

/// The labels of the ruler marks under `pos` (in the ruler), for a tooltip.
pub(super) fn ruler_labels<'a>(
    tl: &'a Timeline,
    ruler: Rect,
    map: &Mapping,
    pos: Pos2,
) -> Vec<&'a str> {
    // Bands sit at the bottom of the ruler; a flag's pole spans all of it.
    let in_band = pos.y >= ruler.bottom() - RULER_BAND_H - 7.0;
    // A few pixels of slack: a mark one pixel wide must still be hoverable.
    let (t0, t1) = (map.t(pos.x - 3.0), map.t(pos.x + 3.0));
    tl.overlays
        .iter()
        .filter(|m| match m.anchor {
            Anchor::Ruler => in_band,
            Anchor::Flag => true,
            _ => false,
        })
        .filter(|m| !m.label.is_empty())
        .filter(|m| (m.start as f64) <= t1 && (m.end as f64) >= t0)
        .map(|m| m.label.as_str())
        .take(MAX_TIP_LABELS + 1)
        .collect()
}

/// Shows [`ruler_labels`] as a tooltip.
pub(super) fn ruler_tooltip(resp: &egui::Response, labels: &[&str]) {
    if labels.is_empty() {
        return;
    }
    resp.clone().on_hover_ui_at_pointer(|ui| {
        ui.set_max_width(480.0);
        for l in labels.iter().take(MAX_TIP_LABELS) {
            ui.add(egui::Label::new(*l).wrap());
        }
        if labels.len() > MAX_TIP_LABELS {
            ui.weak("…and more here");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column taken in one band is taken in that band only, however the
    /// bands asked for alternate; marks a pixel wide or more always draw.
    #[test]
    fn a_column_is_taken_once_per_band() {
        let mut columns = PixelColumns::new(Rect::from_min_max(pos2(10.0, 0.0), pos2(110.0, 5.0)));
        assert!(!columns.already_drawn(1, 20.2, 20.5));
        assert!(!columns.already_drawn(2, 20.2, 20.5));
        assert!(!columns.already_drawn(3, 20.2, 20.5));
        assert!(columns.already_drawn(1, 20.6, 20.9));
        assert!(columns.already_drawn(3, 20.1, 20.2));
        assert!(columns.already_drawn(2, 20.0, 20.3));
        assert!(!columns.already_drawn(1, 21.0, 21.5), "the next column");
        assert!(!columns.already_drawn(1, 20.2, 21.5), "a mark a pixel wide");
        assert!(!columns.already_drawn(1, 5.0, 5.5), "left of the area");
        assert!(!columns.already_drawn(1, 5.0, 5.5));
    }
}
