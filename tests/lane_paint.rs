//! A lane drawn at a zoom where every one of its events is narrower than a
//! pixel (a whole-trace view of a big report): the painter marks exactly
//! the pixel columns that hold an event's start, and nothing else. Checked
//! on every lane of real reports, against the starts themselves.

mod common;
use common::load;

use std::collections::BTreeSet;

use eframe::egui::{self, Color32, Rect, pos2};
use sightline::app::timeline::paint::{LaneStyle, lane};
use sightline::app::timeline::rows::{self, LANE_H, RowKind};
use sightline::app::timeline::view::{Mapping, ViewState};
use sightline::model::{Run, Track};

/// The rects `paint` adds, drawn in a frame of a bare context.
fn painted(paint: impl FnOnce(&egui::Painter)) -> Vec<Rect> {
    let ctx = egui::Context::default();
    let mut paint = Some(paint);
    let mut out = ctx.run_ui(egui::RawInput::default(), |ui| {
        if let Some(p) = paint.take() {
            p(&ui.ctx().layer_painter(egui::LayerId::background()));
        }
    });
    // No renderer takes the font texture.
    out.textures_delta.clear();
    out.shapes
        .into_iter()
        .filter_map(|c| match c.shape {
            egui::Shape::Rect(r) => Some(r.rect),
            _ => None,
        })
        .collect()
}

/// Lanes in `colors`, nothing selected or outlined, no names.
fn plain(colors: &[Color32]) -> LaneStyle<'_> {
    LaneStyle {
        name_colors: colors,
        highlight: &[],
        selected: None,
        related: &[],
        show_names: false,
    }
}

#[test]
fn a_lane_of_events_narrower_than_a_pixel_marks_the_columns_holding_their_starts() {
    let mut lanes_checked = 0;
    for report in ["sync_timing.sqlite", "torch_work.sqlite", "streams.sqlite"] {
        let trace = load(report);
        let (lo, hi) = trace.info.time_range;
        let view = ViewState {
            start: lo as f64,
            end: hi as f64,
            ..Default::default()
        };
        let colors = vec![Color32::GRAY; trace.strings.len()];
        let style = plain(&colors);
        for row in rows::build(&trace) {
            let RowKind::Lane { table, track } = &row.kind else {
                continue;
            };
            // As wide as leaves the longest event under half a pixel.
            let span = (hi - lo) as f64;
            let width = (0.4 * span / track.max_duration().max(1) as f64)
                .min(4000.0)
                .floor();
            if width < 16.0 || track.is_empty() {
                continue;
            }
            let rect = Rect::from_min_max(pos2(0.0, 0.0), pos2(width as f32, 400.0));
            let map = Mapping::new(rect, &view);
            let spans = table.spans(&trace);
            let want: BTreeSet<i64> = track
                .rows()
                .map(|i| map.x(spans.start[i as usize]).floor() as i64)
                .collect();
            let rects = painted(|p| {
                lane(p, &trace, *table, track, rect, &map, &style);
            });
            let mut got = BTreeSet::new();
            for r in &rects {
                assert!(
                    r.width() >= 1.0,
                    "{report} {}: only busy runs, {r:?}",
                    row.label
                );
                for px in r.left() as i64..r.right() as i64 {
                    got.insert(px);
                }
            }
            assert_eq!(got, want, "{report} {}: columns marked busy", row.label);
            lanes_checked += 1;
        }
    }
    assert!(lanes_checked >= 6, "{lanes_checked} lanes checked");
}

#[test]
fn the_loader_samples_every_tracks_starts_and_the_rows_share_them() {
    use sightline::model::SAMPLED_STARTS_STRIDE;
    for report in ["sync_timing.sqlite", "torch_work.sqlite", "streams.sqlite"] {
        let trace = load(report);
        let mut tracks = Vec::new();
        for st in &trace.streams {
            tracks.push((&st.kernels, &trace.kernels.spans.start));
            tracks.push((&st.memcpys, &trace.memcpys.spans.start));
            tracks.push((&st.memsets, &trace.memsets.spans.start));
            tracks.push((&st.syncs, &trace.syncs.spans.start));
            tracks.push((&st.graphs, &trace.graph_execs.spans.start));
        }
        for th in &trace.threads {
            tracks.push((&th.cuda_api, &trace.cuda_api.spans.start));
            tracks.push((&th.osrt, &trace.osrt.spans.start));
            for n in &th.nvtx {
                tracks.push((&n.track, &trace.nvtx.spans.start));
            }
        }
        let mut sampled = 0;
        let samples: Vec<_> = tracks
            .iter()
            .flat_map(|(t, _)| t.runs().iter().map(|r| r.sampled_starts.clone()))
            .collect();
        for (track, starts) in tracks {
            for run in track.runs() {
                let own = &starts[run.rows()];
                let want: Vec<i64> = own.iter().step_by(SAMPLED_STARTS_STRIDE).copied().collect();
                assert_eq!(&*run.sampled_starts, &want[..], "{report}");
                sampled += usize::from(!want.is_empty());
            }
        }
        assert!(sampled >= 3, "{report}: {sampled} tracks");
        // The window's lanes take the loader's samples, not a copy of their own.
        let lanes: Vec<_> = rows::build(&trace)
            .into_iter()
            .filter_map(|r| match r.kind {
                RowKind::Lane { track, .. } => Some(track),
                _ => None,
            })
            .collect();
        assert!(!lanes.is_empty());
        for sparse in lanes
            .iter()
            .flat_map(|t| t.runs())
            .map(|r| &r.sampled_starts)
        {
            assert!(
                samples.iter().any(|s| std::sync::Arc::ptr_eq(s, sparse)),
                "{report}: a lane sampled its track's starts again"
            );
        }
    }
}

/// A box's height in a lane (a busy mark is lower).
const BOX_H: f32 = LANE_H - 2.0;

/// The track `whole` (one run, as a report loaded whole has) cut into runs
/// of 1 to 7 rows, as a capture's snapshots cut it.
fn cut_into_runs(whole: &Track, spans: &sightline::model::SpanColumns) -> Track {
    let rows = whole.runs()[0].events.clone();
    let mut cut: Option<Track> = None;
    let (mut from, mut length) = (rows.start, 1);
    while from < rows.end {
        let to = (from + length).min(rows.end);
        let run = Run::of(from..to, spans);
        match &mut cut {
            Some(track) => track.push(run),
            None => cut = Some(Track::whole(run, whole.depth)),
        }
        from = to;
        length = length % 7 + 1;
    }
    cut.unwrap_or_default()
}

/// A capture's lanes are tracks of a run per snapshot. Cut so, every lane of
/// real reports paints what it paints whole, at the whole view, at a middle
/// zoom and at a deep one: no busy mark stops at a run's end.
#[test]
fn a_lane_cut_into_many_runs_paints_what_it_paints_whole() {
    let mut lanes_checked = 0;
    for report in [
        "sync_timing.sqlite",
        "torch_work.sqlite",
        "streams.sqlite",
        "timing_cases.sqlite",
    ] {
        let trace = load(report);
        let (lo, hi) = trace.info.time_range;
        let colors = vec![Color32::GRAY; trace.strings.len()];
        let style = plain(&colors);
        let rect = Rect::from_min_max(pos2(0.0, 0.0), pos2(1200.0, 400.0));
        for row in rows::build(&trace) {
            let RowKind::Lane { table, track } = &row.kind else {
                continue;
            };
            if track.runs().len() != 1 || track.len() < 20 {
                continue;
            }
            let spans = table.spans(&trace);
            let cut = cut_into_runs(track, spans);
            assert_eq!(cut.len(), track.len());
            let mid = spans.start[track.rows().nth(track.len() / 2).unwrap_or(0) as usize] as f64;
            let span = (hi - lo) as f64;
            for (zoom, width) in [("whole", span), ("1/100", span / 100.0), ("deep", 20_000.0)] {
                let view = ViewState {
                    start: mid - width / 2.0,
                    end: mid + width / 2.0,
                    ..Default::default()
                };
                let map = Mapping::new(rect, &view);
                let paint = |track: &Track| {
                    let mut rects = painted(|p| {
                        lane(p, &trace, *table, track, rect, &map, &style);
                    });
                    rects.sort_by(|a, b| {
                        (a.left(), a.top(), a.right())
                            .partial_cmp(&(b.left(), b.top(), b.right()))
                            .unwrap()
                    });
                    rects
                };
                // Busy marks are lower than boxes (see `paint::lane`).
                let busy = |rects: &[Rect]| -> Vec<Rect> {
                    rects
                        .iter()
                        .filter(|r| r.height() < BOX_H - 1.0)
                        .copied()
                        .collect()
                };
                let (whole, runs) = (paint(track), paint(&cut));
                let (whole_busy, runs_busy) = (busy(&whole), busy(&runs));
                assert!(
                    !whole_busy.is_empty() || zoom != "whole",
                    "{report} {}: no busy mark",
                    row.label
                );
                if track.depth <= 1 {
                    assert_eq!(
                        runs_busy.len(),
                        whole_busy.len(),
                        "{report} {} at {zoom}: busy marks cut into {} runs against one",
                        row.label,
                        cut.runs().len()
                    );
                    assert_eq!(runs_busy, whole_busy, "{report} {} at {zoom}", row.label);
                } else {
                    // Nested: in one pixel column the search skips a deeper
                    // level's start behind another level's; cut, a run's
                    // first event is never skipped. Cut covers all whole does.
                    let columns = |rects: &[Rect]| -> BTreeSet<(i64, i64)> {
                        (rects.iter())
                            .flat_map(|r| {
                                (r.left() as i64..r.right() as i64).map(|x| (r.top() as i64, x))
                            })
                            .collect()
                    };
                    let missing: Vec<_> = columns(&whole_busy)
                        .difference(&columns(&runs_busy))
                        .copied()
                        .collect();
                    assert!(
                        missing.is_empty(),
                        "{report} {} at {zoom}: {missing:?}",
                        row.label
                    );
                }
                // Every event a pixel wide or more is a box, whether it
                // starts a run or hides behind a shorter one in its pixel
                // column: the boxes are the same, cut or whole.
                let boxes = |rects: &[Rect]| -> Vec<Rect> {
                    (rects.iter())
                        .filter(|r| r.height() >= BOX_H - 1.0)
                        .copied()
                        .collect()
                };
                assert_eq!(
                    boxes(&runs),
                    boxes(&whole),
                    "{report} {} at {zoom}: boxes cut into {} runs against one",
                    row.label,
                    cut.runs().len()
                );
            }
            lanes_checked += 1;
        }
    }
    assert!(lanes_checked >= 6, "{lanes_checked} lanes checked");
}

/// A collapsed timeline (a rank of a job) keeps each lane's activity columns for the view they
/// were made for: after a zoom it paints what a timeline that saw another view first paints
/// there, and a repaint at one view paints the same.
#[test]
fn collapsed_activity_follows_the_view() {
    use sightline::app::state::selection::Selection;
    use sightline::app::timeline::Timeline;
    let trace = load("sync_timing.sqlite");
    let frame = |timeline: &mut Timeline| {
        let ctx = egui::Context::default();
        let input = egui::RawInput {
            screen_rect: Some(Rect::from_min_size(
                pos2(0.0, 0.0),
                egui::vec2(1400.0, 600.0),
            )),
            ..Default::default()
        };
        let mut out = ctx.run_ui(input, |ui| {
            timeline.ui(ui, &trace, &Selection::default());
        });
        // No renderer takes the font texture.
        out.textures_delta.clear();
        timeline.painted
    };
    // Around the 10th kernel, and around the 40th: each view holds other work.
    let k = &trace.kernels.spans;
    let around = |i: usize| {
        let (s, e) = k.get(i).expect("a kernel");
        (s as f64 - 200_000.0, e as f64 + 200_000.0)
    };
    let (target, elsewhere) = (around(10), around(40));
    let mut moved = Timeline::new(&trace);
    moved.compact = true;
    let whole = frame(&mut moved);
    moved.zoom_to_span(target.0, target.1);
    let after = frame(&mut moved);
    let again = frame(&mut moved);
    // A timeline whose first frame is at the target view: nothing cached before it.
    let mut straight = Timeline::new(&trace);
    straight.compact = true;
    straight.zoom_to_span(target.0, target.1);
    let direct = frame(&mut straight);
    // And one that went elsewhere on the way.
    let mut other = Timeline::new(&trace);
    other.compact = true;
    other.zoom_to_span(elsewhere.0, elsewhere.1);
    let there = frame(&mut other);
    other.zoom_to_span(target.0, target.1);
    let via = frame(&mut other);
    assert_eq!(
        via, direct,
        "painted at the target whatever the view before"
    );
    assert!(
        after > 0,
        "work in the zoomed view: {whole} {after} {there}"
    );
    assert_eq!(
        after, direct,
        "painted after the zoom as if the view had been another"
    );
    assert_eq!(again, direct, "a repaint at the same view paints the same");
}
