//! Drives the real window UI headlessly (egui_kittest + AccessKit): no display,
//! no GPU. Rows are found by their labels, input is real egui events.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use eframe::egui::{
    self, Event, Modifiers, MouseWheelUnit, PointerButton, Pos2, TouchPhase, pos2, vec2,
};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::stats::{Report, TimeRange, compute};
use sightline::app::SightlineApp;
use sightline::app::events::{EventRef, Table};
use sightline::model::Trace;

fn load(name: &str) -> Trace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false)).expect("fixture loads")
}

fn harness(trace: Trace) -> Harness<'static, SightlineApp> {
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

fn span(h: &Harness<'_, SightlineApp>) -> f64 {
    h.state()
        .doc
        .as_ref()
        .map(|d| d.timeline.view.span())
        .unwrap_or(0.0)
}

fn click(h: &mut Harness<'_, SightlineApp>, pos: Pos2) {
    h.event(Event::PointerMoved(pos));
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    h.run_steps(2);
}

#[test]
fn rows_are_labelled_by_thread_and_stream() {
    let trace = load("sync_timing.sqlite");
    let thread = trace
        .threads
        .iter()
        .find(|t| !t.cuda_api.is_empty())
        .map(|t| format!("[{}]", t.tid))
        .expect("a thread with CUDA API calls");
    let h = harness(trace);
    assert!(
        h.query_all_by_label_contains(&thread).next().is_some(),
        "thread row {thread}"
    );
    assert!(h.query_all_by_label_contains("CUDA API (").next().is_some());
    assert!(h.query_all_by_label_contains("Kernels (").next().is_some());
    assert!(h.query_all_by_label_contains("Stream").next().is_some());
    assert!(h.query_all_by_label_contains("Timeline,").next().is_some());
}

#[test]
fn collapsing_a_thread_hides_its_lanes() {
    let trace = load("sync_timing.sqlite");
    let thread = trace
        .threads
        .iter()
        .find(|t| !t.cuda_api.is_empty())
        .map(|t| format!("[{}] ·", t.tid))
        .expect("a thread with CUDA API calls");
    let mut h = harness(trace);
    let lanes_before = h.query_all_by_label_contains("CUDA API (").count();
    assert!(lanes_before > 0);
    let header = h
        .query_all_by(move |n| {
            n.label()
                .is_some_and(|l| l.starts_with("- ") && l.contains(&thread))
        })
        .next()
        .expect("a header row");
    header.click();
    h.run_steps(3);
    let collapsed = h
        .state()
        .doc
        .as_ref()
        .map_or(0, |d| d.timeline.view.collapsed.len());
    assert_eq!(collapsed, 1);
    assert!(h.query_all_by_label_contains("CUDA API (").count() < lanes_before);
}

#[test]
fn keys_and_ctrl_wheel_zoom_at_the_cursor() {
    let mut h = harness(load("sync_timing.sqlite"));
    let canvas = h.get_by_label_contains("Timeline,").rect();
    h.event(Event::PointerMoved(canvas.center()));
    h.step();
    let before = span(&h);
    h.key_press(egui::Key::W);
    h.run_steps(2);
    let after_w = span(&h);
    assert!(after_w < before * 0.9, "W zooms in: {before} -> {after_w}");
    h.key_press(egui::Key::S);
    h.run_steps(2);
    assert!(span(&h) > after_w, "S zooms out");
    let before = span(&h);
    h.event(Event::MouseWheel {
        unit: MouseWheelUnit::Line,
        delta: vec2(0.0, 3.0),
        phase: TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
        modifiers: Modifiers::COMMAND,
    });
    h.run_steps(3);
    assert!(
        (span(&h) - before).abs() > before * 0.01,
        "ctrl+wheel zooms: {before} -> {}",
        span(&h)
    );
    // Home fits everything again; Backspace goes back.
    h.key_press(egui::Key::Home);
    h.run_steps(2);
    let (lo, hi) = h
        .state()
        .doc
        .as_ref()
        .map(|d| d.trace.info.time_range)
        .unwrap_or_default();
    assert!((span(&h) - (hi - lo) as f64).abs() < 2.0);
}

#[test]
fn clicking_a_kernel_shows_details_and_its_api_call() {
    let trace = load("sync_timing.sqlite");
    assert!(!trace.kernels.spans.is_empty());
    let mut h = harness(trace);
    // Bring the first kernel into view the way a user would: search for it.
    let kernel = EventRef::new(Table::Kernel, 0);
    {
        let doc = h.state_mut().doc.as_mut().expect("doc");
        doc.show_event(kernel);
        doc.timeline.select(&doc.trace, None);
    }
    h.run_steps(3);
    let pos = {
        let doc = h.state().doc.as_ref().expect("doc");
        doc.timeline
            .event_pos(&doc.trace, kernel)
            .expect("kernel is drawn")
    };
    click(&mut h, pos);
    let doc = h.state().doc.as_ref().expect("doc");
    assert_eq!(doc.timeline.selected, Some(kernel));
    assert!(
        doc.timeline.related.iter().any(|r| r.table == Table::Api),
        "the launching API call is highlighted"
    );
    let name = kernel.name(&doc.trace).to_string();
    assert!(h.query_by_label("Grid").is_some(), "details list the grid");
    assert!(h.query_by_label("Registers/thread").is_some());
    assert!(
        h.query_by_label(&name).is_some(),
        "details show the name {name}"
    );
    // Escape clears the selection.
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert_eq!(
        h.state().doc.as_ref().and_then(|d| d.timeline.selected),
        None
    );
}

#[test]
fn dragging_on_the_ruler_aggregates_exactly_that_range() {
    let mut h = harness(load("sync_timing.sqlite"));
    let canvas = h.get_by_label_contains("Timeline,").rect();
    let y = canvas.top() - 12.0; // the ruler sits just above the rows
    let (x0, x1) = (
        canvas.left() + canvas.width() * 0.2,
        canvas.left() + canvas.width() * 0.7,
    );
    h.event(Event::PointerMoved(pos2(x0, y)));
    h.step();
    h.drag_at(pos2(x0, y));
    h.step();
    for k in 1..=5 {
        h.event(Event::PointerMoved(pos2(
            x0 + (x1 - x0) * k as f32 / 5.0,
            y,
        )));
        h.step();
    }
    h.drop_at(pos2(x1, y));
    h.run_steps(2);
    let app = h.state_mut();
    let doc = app.doc.as_mut().expect("doc");
    let (a, b) = doc.timeline.range.expect("a range is selected");
    assert!(b > a);
    doc.stats.wait();
    let range = TimeRange { start: a, end: b };
    assert_eq!(doc.stats.range, Some(range));
    for (report, table) in &doc.stats.tables {
        assert_eq!(
            table,
            &compute(&doc.trace, *report, Some(range)),
            "{}",
            report.name()
        );
    }
    assert_eq!(doc.stats.tables.len(), 6);
    h.run_steps(2);
    assert!(h.query_by_label(Report::CudaGpuKernSum.title()).is_some());
    assert!(h.query_all_by_label_contains("Range ").next().is_some());
}

#[test]
fn search_finds_and_selects_matches() {
    let mut h = harness(load("sync_timing.sqlite"));
    let name = {
        let doc = h.state().doc.as_ref().expect("doc");
        EventRef::new(Table::Kernel, 0).name(&doc.trace).to_string()
    };
    let needle: String = name.chars().take(6).collect();
    let field = h.get_by_label("Search");
    field.focus();
    field.type_text(&needle);
    h.run_steps(2);
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    let doc = h.state().doc.as_ref().expect("doc");
    assert!(!doc.search.matches.is_empty(), "matches for {needle}");
    let sel = doc.timeline.selected.expect("first match selected");
    assert!(
        sel.name(&doc.trace)
            .to_lowercase()
            .contains(&needle.to_lowercase())
            || sel.short_name(&doc.trace).contains(&needle)
    );
    assert!(h.query_all_by_label_contains("matches").next().is_some());
}

#[test]
fn a_bad_file_shows_the_loader_message_in_the_window() {
    let mut app = SightlineApp::default();
    app.open("/nonexistent/report.sqlite".into());
    app.wait_for_load();
    let mut h = Harness::builder()
        .with_size(vec2(1000.0, 600.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(2);
    assert!(
        h.query_all_by_label_contains("no such file")
            .next()
            .is_some()
    );
}

#[test]
fn streams_fixture_and_torch_fixture_open() {
    for f in ["streams.sqlite", "torch_work.sqlite"] {
        let mut h = harness(load(f));
        assert!(
            h.query_all_by_label_contains("Stream").next().is_some(),
            "{f}"
        );
        h.key_press(egui::Key::W);
        h.run_steps(2);
        assert!(
            h.state()
                .doc
                .as_ref()
                .is_some_and(|d| d.timeline.painted > 0),
            "{f} paints events"
        );
    }
}
