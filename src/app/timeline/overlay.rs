//! Overlay marks: spans that other views ask the timeline to draw on top of
//! the events. Findings use them today; search hits, compare diffs and lesson
//! highlights can use the same list, so each view says *what* to mark and the
//! timeline alone decides *how* (and culls it to what is on screen).

use eframe::egui::{self, Color32, Pos2, Rect, Stroke, StrokeKind, pos2, vec2};

use crate::app::state::events::EventRef;
use crate::app::timeline::band::Columns;
use crate::app::timeline::mark::{Anchor, Overlay};
use crate::app::timeline::marks::Marks;
use crate::app::timeline::rows::LANE_H;
use crate::app::timeline::view::Mapping;

/// Where an event's box is on screen (`None`: not drawn), as the last frame laid it out.
pub(super) type SlotOf<'a> = &'a dyn Fn(EventRef) -> Option<Rect>;

/// Height of the band ruler marks take at the bottom of the ruler.
const RULER_BAND_H: f32 = 5.0;
/// Height of a bar drawn under an event.
const UNDER_H: f32 = 4.0;
/// At most this many labels in one ruler tooltip: a dense spot would
/// otherwise list thousands.
const MAX_TIP_LABELS: usize = 6;
/// Characters of a flag's label shown in its tag (the tooltip has it all).
const FLAG_TAG_CHARS: usize = 40;

/// Paints every mark that is on screen; returns how many it drew.
pub(super) fn paint(
    (all_marks, lanes, slot): (&[Marks], &[Option<Rect>], SlotOf),
    painter: &egui::Painter,
    ruler: Rect,
    canvas: Rect,
    map: &Mapping,
) -> usize {
    let (from, to) = map.visible();
    let ruler_painter = painter.with_clip_rect(ruler);
    let lane_painter = painter.with_clip_rect(canvas);
    let mut drawn = 0;
    // Flags whose tags are drawn once all lines are (tags go on top).
    let mut flags: Vec<(f32, &Overlay)> = Vec::new();
    let columns = Columns {
        map,
        left: ruler.left(),
        width: ruler.width(),
        from,
        to,
    };
    for marks in all_marks {
        for rank in marks.band.drawn(&columns) {
            let m = &marks.ruler[rank as usize];
            let (x0, x1) = columns.xs(m.start, m.end);
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
        drawn += paint_in_lanes(
            (marks, lanes, slot),
            (&lane_painter, &ruler_painter),
            (ruler, canvas),
            &columns,
            &mut flags,
        );
    }
    flag_tags(&lane_painter, canvas, &mut flags);
    drawn
}

/// Paints the marks of `marks` that are not the ruler's, on the rows at
/// `lanes` ([`Timeline::lane_rects`]); returns how many.
fn paint_in_lanes<'a>(
    (marks, lanes, slot_of): (&'a Marks, &[Option<Rect>], SlotOf),
    (lane_painter, ruler_painter): (&egui::Painter, &egui::Painter),
    (ruler, canvas): (Rect, Rect),
    columns: &Columns,
    flags: &mut Vec<(f32, &'a Overlay)>,
) -> usize {
    let map = columns.map;
    let mut drawn = 0;
    // Each lane level's bars: its band says which a frame draws.
    for bars in marks.bars.iter().flatten() {
        let Some(lane) = lanes.get(bars.row).copied().flatten() else {
            continue;
        };
        let bottom = lane.top() + 1.0 + bars.level as f32 * LANE_H + LANE_H - 2.0;
        for rank in bars.band.drawn(columns) {
            let m = &marks.under[bars.at[rank as usize] as usize];
            let (x0, x1) = columns.xs(m.start, m.end);
            let bar =
                Rect::from_min_max(pos2(x0, bottom - UNDER_H), pos2(x1.max(x0 + 2.0), bottom));
            lane_painter.rect_filled(bar, 0.0, m.color);
            drawn += 1;
        }
    }
    for m in &marks.others {
        if (m.end as f64) < columns.from || (m.start as f64) > columns.to {
            continue;
        }
        let (x0, x1) = columns.xs(m.start, m.end);
        match m.anchor {
            // In `ruler` and `under`.
            Anchor::Ruler | Anchor::Under(_) => {}
            Anchor::Hatch { on, link } => {
                let Some(slot) = slot_of(on) else {
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
                if let Some(target) = link.and_then(slot_of) {
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
                flag(ruler_painter, lane_painter, ruler, canvas, x, m);
                flags.push((x, m));
                drawn += 1;
            }
            Anchor::Outline(ev) => {
                let Some(slot) = slot_of(ev) else {
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
    drawn
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
    all_marks: &'a [Marks],
    ruler: Rect,
    map: &Mapping,
    pos: Pos2,
) -> Vec<&'a str> {
    // Bands sit at the bottom of the ruler; a flag's pole spans all of it.
    let in_band = pos.y >= ruler.bottom() - RULER_BAND_H - 7.0;
    // A few pixels of slack: a mark one pixel wide must still be hoverable.
    let (t0, t1) = (map.t(pos.x - 3.0), map.t(pos.x + 3.0));
    let under =
        |m: &&Overlay| !m.label.is_empty() && (m.start as f64) <= t1 && (m.end as f64) >= t0;
    let mut labels = Vec::new();
    // The views' later marks first, and of the ruler's the one on top first.
    for marks in all_marks.iter().rev() {
        let flags = marks.others.iter().filter(|m| m.anchor == Anchor::Flag);
        labels.extend(flags.filter(under).map(|m| m.label.as_str()));
        if in_band {
            let ruler = marks.band.overlapping(t0, t1).into_iter();
            let ruler = ruler.map(|rank| &marks.ruler[rank as usize]);
            labels.extend(ruler.filter(under).map(|m| m.label.as_str()));
        }
    }
    labels.truncate(MAX_TIP_LABELS + 1);
    labels
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
    use crate::app::timeline::Timeline;
    use crate::app::timeline::view::ViewState;
    use crate::model::Ns;

    fn ruler_mark(start: Ns, end: Ns, label: &str) -> Overlay {
        Overlay {
            start,
            end,
            anchor: Anchor::Ruler,
            color: Color32::RED,
            label: label.into(),
            source: "test",
        }
    }

    /// The tooltip over a ruler column lists the mark on top first: a
    /// report's findings are marked mildest first, so its most severe
    /// finding there leads (the mildest led, and more than six hid it).
    #[test]
    fn a_ruler_tooltip_lists_the_mark_on_top_first() {
        let trace = crate::loader::load_fixture("sync_timing.sqlite");
        let mut tl = Timeline::new(&trace);
        let marks = vec![
            ruler_mark(0, 1_000_000, "mild, long"),
            ruler_mark(400_000, 400_100, "warning"),
            ruler_mark(2_000_000, 3_000_000, "elsewhere"),
            ruler_mark(400_050, 400_060, "error"),
        ];
        tl.set_overlays("test", marks);
        let ruler = Rect::from_min_max(pos2(0.0, 0.0), pos2(1000.0, 20.0));
        let view = ViewState {
            start: 0.0,
            end: 4_000_000.0,
            ..Default::default()
        };
        let map = Mapping::new(ruler, &view);
        let at = pos2(map.x(400_000), ruler.bottom() - 1.0);
        assert_eq!(
            ruler_labels(&tl.marks, ruler, &map, at),
            vec!["error", "warning", "mild, long"]
        );
    }
}
