//! Marks narrower than a pixel that share a pixel column are drawn as one:
//! the one on top (drawn last) is the one that shows, on the ruler and
//! under the events alike. A report's findings are marked mildest first, so
//! at a whole-trace zoom the column shows its most severe finding.

mod common;
use common::load;

use eframe::egui::{self, Color32, Rect};
use sightline::app::SightlineApp;
use sightline::app::state::events::{EventRef, Table};
use sightline::app::timeline::{Anchor, Overlay};

const UNDER: Color32 = Color32::from_rgb(1, 2, 3);
const ON_TOP: Color32 = Color32::from_rgb(4, 5, 6);

/// One frame of the window on a 1600×1000 screen; the rects it fills.
fn frame(ctx: &egui::Context, app: &mut SightlineApp) -> Vec<(Rect, Color32)> {
    let input = egui::RawInput {
        screen_rect: Some(Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1600.0, 1000.0),
        )),
        ..Default::default()
    };
    let mut out = ctx.run_ui(input, |ui| app.ui(ui));
    out.textures_delta.clear();
    out.shapes
        .into_iter()
        .filter_map(|c| match c.shape {
            egui::Shape::Rect(r) => Some((r.rect, r.fill)),
            _ => None,
        })
        .collect()
}

fn mark(start: i64, anchor: Anchor, color: Color32) -> Overlay {
    Overlay {
        start,
        end: start + 1,
        anchor,
        color,
        label: String::new(),
        source: "test",
    }
}

#[test]
fn of_marks_sharing_a_pixel_the_last_drawn_shows() {
    let trace = load("sync_timing.sqlite");
    let mut app = SightlineApp::with_trace(trace);
    let ctx = egui::Context::default();
    let doc = app.doc_mut().expect("a report");
    doc.timeline.fit_all();
    frame(&ctx, &mut app);
    // An NVTX range whose lane is on screen.
    let doc = app.doc_mut().expect("a report");
    let range = (0..doc.trace.nvtx.spans.len() as u32)
        .map(|i| EventRef::new(Table::Nvtx, i))
        .find(|&ev| doc.timeline.lane_of(ev).is_some())
        .expect("an NVTX lane on screen");
    let t = doc.trace.nvtx.spans.start[range.index as usize];
    // A nanosecond apart: the same pixel column at a whole-report zoom.
    let marks = vec![
        mark(t, Anchor::Ruler, UNDER),
        mark(t + 1, Anchor::Ruler, ON_TOP),
        mark(t, Anchor::Under(range), UNDER),
        mark(t + 1, Anchor::Under(range), ON_TOP),
    ];
    doc.timeline.set_overlays("test", marks);
    let rects = frame(&ctx, &mut app);
    let of = |color| rects.iter().filter(|(_, c)| *c == color).count();
    assert_eq!(
        (of(UNDER), of(ON_TOP)),
        (0, 2),
        "the ruler's and the lane's column show the mark drawn last"
    );
}
