//! Panels that used to cover the timeline or could not be closed (issue 45): the kernel panel
//! docked so that its kernel stays in sight, the notes panel's own close and the N key in
//! presentation mode, and the legend of the "GPU idle — why" row. Each drives the real window
//! (egui_kittest).

mod common;
use common::load;

use eframe::egui::{self, Order, Pos2, Shape, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::idle::Cause;
use sightline::app::SightlineApp;
use sightline::app::state::events::{EventRef, Table};
use sightline::app::timeline::idle_row::{cause_color, legend_word};

fn harness(app: SightlineApp, w: f32, h: f32) -> Harness<'static, SightlineApp> {
    let mut h = Harness::builder()
        .with_size(vec2(w, h))
        .with_step_dt(0.05)
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

fn click(h: &mut Harness<'_, SightlineApp>, pos: Pos2) {
    // Past the double-click delay: the kernel panel opens.
    common::click(h, pos, 12);
}

/// Whether what is drawn at `pos` is a panel of the window, not a window floating over it.
fn on_a_panel(h: &Harness<'_, SightlineApp>, pos: Pos2) -> bool {
    h.ctx
        .layer_id_at(pos)
        .is_none_or(|layer| layer.order == Order::Background)
}

/// A kernel clicked at the left, the middle and the right of the timeline opens its panel, and
/// the kernel stays in sight: on the canvas, under no window. (The panel floated over the
/// right of the timeline, over a kernel clicked there.)
#[test]
fn the_kernel_panel_never_hides_the_kernel_it_describes() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1600.0,
        1000.0,
    );
    let kernels = h.state().doc().expect("doc").trace.kernels.spans.len() as u32;
    for (i, fraction) in [(3, 0.2), (kernels / 2, 0.5), (kernels - 2, 0.85)] {
        let ev = EventRef::new(Table::Kernel, i);
        {
            let doc = h.state_mut().doc_mut().expect("doc");
            doc.kernel.close();
            doc.select_event(None);
            let (s, e) = (ev.start(&doc.trace) as f64, ev.end(&doc.trace) as f64);
            let span = (e - s) * 20.0;
            let start = (s + e) / 2.0 - fraction * span;
            doc.timeline.view.set(start, start + span);
        }
        h.run_steps(3);
        let pos = {
            let doc = h.state().doc().expect("doc");
            doc.timeline.event_pos(&doc.trace, ev).expect("drawn")
        };
        click(&mut h, pos);
        let doc = h.state().doc().expect("doc");
        assert_eq!(doc.selection().event, Some(ev), "kernel {i} selected");
        assert!(doc.kernel.is_open(), "its panel opened");
        assert!(
            h.query_by_label("Close kernel panel").is_some(),
            "the panel is shown"
        );
        let now = doc.timeline.event_pos(&doc.trace, ev).expect("still drawn");
        assert!(
            doc.timeline.canvas.contains(now) && on_a_panel(&h, now),
            "kernel {i} at {fraction} of the width: at {now:?}, hidden (canvas {:?})",
            doc.timeline.canvas
        );
    }
    // Its own close button closes it.
    h.get_by_label("Close kernel panel").click();
    h.run_steps(3);
    assert!(!h.state().doc().expect("doc").kernel.is_open());
}

/// In presentation mode beside a lesson (no menu bar, no Notes button): N opens the notes, N
/// again or their own x closes them, and while open the timeline keeps a real share of a
/// projector's 1280×720.
#[test]
fn notes_close_by_n_or_their_x_in_presentation_and_leave_the_timeline_room() {
    // A lesson on a copy of a report: the notes are written beside it, not into assets/.
    let dir = tempfile::tempdir().expect("a temp dir");
    let report = dir.path().join("sync_timing.sqlite");
    std::fs::copy(common::fixture("sync_timing.sqlite"), &report).expect("copied");
    let path = dir.path().join("notes.toml");
    std::fs::write(
        &path,
        format!(
            "title = \"Notes\"\nreport = {:?}\n\n[[step]]\ntext = \"Press N.\"\n",
            report.display().to_string()
        ),
    )
    .expect("written");
    let mut app = SightlineApp::default();
    app.lessons.open_file(&path);
    assert!(app.lessons.run.is_some(), "{:?}", app.lessons.broken);
    let mut h = harness(app, 1280.0, 720.0);
    let ctx = h.ctx.clone();
    h.state_mut().prefs.set_presentation(&ctx, true);
    // A real 1280×720 at presentation zoom (the harness's size is in points).
    let zoom = h.ctx.zoom_factor();
    h.set_size(vec2(1280.0, 720.0) / zoom);
    for _ in 0..10 {
        h.run_steps(2);
        h.state_mut().wait_for_load();
    }
    assert!(h.state().prefs.presentation);
    let window = h.ctx.content_rect();
    for closing in ["N", "x"] {
        h.key_press(egui::Key::N);
        h.run_steps(3);
        // The new note's text box has the keys: give them back, as a click elsewhere does.
        h.ctx.memory_mut(|m| m.stop_text_input());
        h.run_steps(2);
        let doc = h.state().doc().expect("doc");
        assert!(doc.notes.open, "N opened the notes");
        let canvas = doc.timeline.canvas;
        assert!(
            canvas.width() >= 0.4 * window.width() && canvas.height() >= 0.25 * window.height(),
            "with the notes open the events get {canvas:?} of {window:?}"
        );
        if closing == "N" {
            h.key_press(egui::Key::N);
        } else {
            h.get_by_label("Close notes").click();
        }
        h.run_steps(3);
        assert!(
            !h.state().doc().expect("doc").notes.open,
            "{closing} closed the notes"
        );
    }
}

/// The "GPU idle — why" row says what its colours mean: a swatch of each cause's colour and
/// its word, on the row.
#[test]
fn the_idle_row_has_a_legend_of_its_colours() {
    let mut app = SightlineApp::with_trace(load("sync_timing.sqlite"));
    app.doc_mut().expect("doc").timeline.view.show_idle_why = true;
    let mut h = harness(app, 1600.0, 1000.0);
    for _ in 0..200 {
        h.run_steps(1);
        let doc = h.state().doc().expect("doc");
        if !doc.findings.is_pending() && doc.timeline.idle_rows.attribution.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    h.run_steps(2);
    let canvas = h.state().doc().expect("doc").timeline.canvas;
    let shapes: Vec<_> = h
        .output()
        .shapes
        .iter()
        .flat_map(|s| match &s.shape {
            Shape::Vec(v) => v.clone(),
            other => vec![other.clone()],
        })
        .collect();
    for cause in Cause::ALL {
        let word = shapes.iter().find_map(|s| match s {
            Shape::Text(t) if t.galley.job.text == legend_word(cause) => {
                Some(s.visual_bounding_rect())
            }
            _ => None,
        });
        let word = word.unwrap_or_else(|| panic!("no legend for {cause:?}"));
        assert!(canvas.contains_rect(word), "{cause:?}'s word on the row");
        // Its swatch: a square of its colour just left of the word.
        let swatch = shapes.iter().any(|s| match s {
            Shape::Rect(r) => {
                r.fill == cause_color(cause)
                    && r.rect.right() <= word.left() + 1.0
                    && word.left() - r.rect.right() < 8.0
                    && (r.rect.center().y - word.center().y).abs() < 4.0
            }
            _ => false,
        });
        assert!(swatch, "{cause:?}'s colour beside its word");
    }
}
