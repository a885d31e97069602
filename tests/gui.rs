//! Drives the real window UI headlessly (egui_kittest + AccessKit): no display,
//! no GPU. Rows are found by their labels, input is real egui events.

mod common;
use common::{MemStorage, load};

use std::path::Path;
use std::sync::atomic::AtomicBool;

use eframe::egui::{self, Event, Modifiers, MouseWheelUnit, Pos2, TouchPhase, pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::stats::{Cell, Report, TimeRange, compute};
use sightline::app::SightlineApp;
use sightline::app::state::events::{EventRef, Table};
use sightline::model::Trace;

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
        .doc()
        .map(|d| d.timeline.view.span())
        .unwrap_or(0.0)
}

fn click(h: &mut Harness<'_, SightlineApp>, pos: Pos2) {
    common::click(h, pos, 2);
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
        .doc()
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
        .doc()
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
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.show_event(kernel);
        doc.select_event(None);
    }
    h.run_steps(3);
    let pos = {
        let doc = h.state().doc().expect("doc");
        doc.timeline
            .event_pos(&doc.trace, kernel)
            .expect("kernel is drawn")
    };
    click(&mut h, pos);
    let doc = h.state().doc().expect("doc");
    assert_eq!(doc.selection().event, Some(kernel));
    assert!(
        doc.selection()
            .related
            .iter()
            .any(|r| r.table == Table::Api),
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
    assert_eq!(h.state().doc().and_then(|d| d.selection().event), None);
}

/// Screen x of session time `t` in the last frame.
fn x_of(h: &Harness<'_, SightlineApp>, t: i64) -> f32 {
    let doc = h.state().doc().expect("doc");
    let c = doc.timeline.canvas;
    let v = &doc.timeline.view;
    c.left() + ((t as f64 - v.start) / v.span()) as f32 * c.width()
}

fn drag_ruler(h: &mut Harness<'_, SightlineApp>, x0: f32, x1: f32) {
    let canvas = h.get_by_label_contains("Timeline,").rect();
    let y = canvas.top() - 12.0; // the ruler sits just above the rows
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
}

/// Clicks the link (a stats row's name) labelled `name`.
fn click_link(h: &Harness<'_, SightlineApp>, name: &str) {
    let name = name.to_string();
    h.query_all_by(move |n| {
        n.role() == egui::accesskit::Role::Link && n.label().as_deref() == Some(&name)
    })
    .next()
    .expect("a link")
    .click();
}

#[test]
fn dragging_on_the_ruler_aggregates_exactly_that_range() {
    let mut h = harness(load("sync_timing.sqlite"));
    // From just before the first kernel to just after the last one.
    let (first, last) = {
        let k = &h.state().doc().expect("doc").trace.kernels.spans.start;
        (
            *k.iter().min().expect("kernels"),
            *k.iter().max().expect("kernels"),
        )
    };
    let (x0, x1) = (x_of(&h, first) - 3.0, x_of(&h, last) + 3.0);
    drag_ruler(&mut h, x0, x1);
    let app = h.state_mut();
    let doc = app.doc_mut().expect("doc");
    let range = doc.selection().range.expect("a range is selected");
    let (a, b) = (range.start, range.end);
    assert!(b > a);
    doc.stats.wait();
    assert_eq!(doc.selection().range, Some(range));
    assert_eq!(
        doc.stats.tables.len(),
        sightline::app::panels::range_stats::REPORTS.len()
    );
    for (report, table) in &doc.stats.tables {
        assert_eq!(
            table,
            &compute(&doc.trace, *report, Some(range)),
            "{}",
            report.name()
        );
    }
    // Real numbers: add2_kernel with every kernel that starts in the range.
    let started = doc
        .trace
        .kernels
        .spans
        .start
        .iter()
        .filter(|&&s| (a..b).contains(&s))
        .count();
    assert!(started > 0);
    let kern = doc
        .stats
        .table(Report::CudaGpuKernSum)
        .expect("kernel table");
    let name_col = kern.columns.iter().position(|c| c == "Name").expect("Name");
    let inst_col = kern
        .columns
        .iter()
        .position(|c| c == "Instances")
        .expect("Instances");
    let row = kern
        .rows
        .iter()
        .find(|r| r[name_col].to_string().starts_with("add2_kernel"))
        .expect("an add2_kernel row");
    assert_eq!(row[inst_col], Cell::Int(started as i64));
    assert_eq!(
        doc.stats.cli_range(doc.selection().range),
        Some(format!("--range {a}:{b}"))
    );
    let kernel_name = row[name_col].to_string();
    h.run_steps(2);
    assert!(
        h.query_all_by_label_contains(Report::CudaGpuKernSum.title())
            .next()
            .is_some()
    );
    assert!(
        h.query_all_by_label_contains(Report::CudaKernExecSum.title())
            .next()
            .is_some()
    );
    assert!(
        h.query_all_by_label_contains("events that start in the range")
            .next()
            .is_some()
    );
    assert!(
        h.query_all_by_label_contains("Copy --range")
            .next()
            .is_some()
    );

    // Clicking the row highlights its instances in the range and shows the
    // first; clicking again steps to the next.
    click_link(&h, &kernel_name);
    h.run_steps(1);
    h.state_mut().wait_for_search();
    h.run_steps(2);
    let first_sel = {
        let doc = h.state().doc().expect("doc");
        assert_eq!(doc.search.matches.len(), started);
        let sel = doc.selection().event.expect("an instance is selected");
        assert_eq!(sel.table, Table::Kernel);
        assert!((a..b).contains(&sel.start(&doc.trace)));
        sel
    };
    click_link(&h, &kernel_name);
    h.run_steps(3);
    let doc = h.state().doc().expect("doc");
    let second = doc.selection().event.expect("next instance");
    assert_ne!(second, first_sel);
    assert!(second.start(&doc.trace) >= first_sel.start(&doc.trace));
    assert_eq!(doc.search.current, Some(1));
}

#[test]
fn an_nvtx_range_aggregates_from_the_details_panel() {
    let trace = load("sync_timing.sqlite");
    let idx = trace
        .nvtx
        .spans
        .name
        .iter()
        .position(|&n| trace.name(n) == "timed-iteration")
        .expect("a timed-iteration range") as u32;
    let mut h = harness(trace);
    let ev = EventRef::new(Table::Nvtx, idx);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.show_event(ev);
    }
    h.run_steps(3);
    h.get_by_label("Aggregate this range").click();
    h.run_steps(2);
    let doc = h.state_mut().doc_mut().expect("doc");
    doc.stats.wait();
    let (s, e) = (ev.start(&doc.trace), ev.end(&doc.trace));
    assert_eq!(doc.selection().range, Some(TimeRange { start: s, end: e }));
    let nvtx = doc.stats.table(Report::NvtxSum).expect("nvtx table");
    assert!(
        nvtx.rows
            .iter()
            .any(|r| r.iter().any(|c| c.to_string() == ":timed-iteration"))
    );
}

#[test]
fn api_names_show_without_their_version_suffix() {
    let trace = load("sync_timing.sqlite");
    let idx = trace
        .cuda_api
        .spans
        .name
        .iter()
        .position(|&n| trace.name(n) == "cudaLaunchKernel_v7000")
        .expect("a cudaLaunchKernel_v7000 call") as u32;
    let mut h = harness(trace);
    let call = EventRef::new(Table::Api, idx);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        assert_eq!(call.short_name(&doc.trace), "cudaLaunchKernel");
        assert_eq!(call.display_name(&doc.trace), "cudaLaunchKernel");
        doc.show_event(call);
    }
    h.run_steps(3);
    assert!(
        h.query_by_label("cudaLaunchKernel").is_some(),
        "details name"
    );
    assert!(
        h.query_by_label("cudaLaunchKernel_v7000").is_some(),
        "full name kept"
    );
    // Exact times on the session clock.
    let start = {
        let doc = h.state().doc().expect("doc");
        call.start(&doc.trace)
    };
    let exact = sightline::app::widgets::format::exact(start);
    assert!(exact.contains(" ns ("), "{exact}");
    assert!(h.query_by_label(&exact).is_some(), "details show {exact}");

    // Search matches both forms, and a regex anchored on the short form.
    for (q, regex) in [
        ("cudaLaunchKernel_v7000", false),
        ("cudaLaunchKernel", false),
        ("^cudaLaunchKernel$", true),
    ] {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.search.query = q.into();
        doc.search.regex = regex;
        doc.search.run(&doc.trace);
        let n = doc
            .search
            .matches
            .iter()
            .filter(|m| m.table == Table::Api)
            .count();
        assert_eq!(n, 90, "{q}");
    }
}

#[test]
fn context_wide_syncs_get_their_own_row_label() {
    let trace = load("sync_timing.sqlite");
    assert!(trace.streams.iter().any(|s| s.stream_id == u32::MAX));
    let h = harness(trace);
    assert!(
        h.query_all_by_label_contains("Context-wide sync")
            .next()
            .is_some()
    );
    assert!(h.query_all_by_label_contains("4294967295").next().is_none());
}

#[test]
fn wheel_and_key_bursts_are_one_undo_step() {
    let mut h = harness(load("sync_timing.sqlite"));
    let canvas = h.get_by_label_contains("Timeline,").rect();
    h.event(Event::PointerMoved(canvas.center()));
    h.step();
    let before = span(&h);
    for _ in 0..3 {
        h.key_press(egui::Key::W);
        h.step();
    }
    for _ in 0..3 {
        h.event(Event::MouseWheel {
            unit: MouseWheelUnit::Line,
            delta: vec2(0.0, 1.0),
            phase: TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
            modifiers: Modifiers::COMMAND,
        });
        h.step();
    }
    h.run_steps(2);
    assert!(span(&h) < before * 0.5, "zoomed in");
    let hist = h.state().doc().map_or(0, |d| d.timeline.history_len());
    assert_eq!(hist, 1, "one entry for the burst");
    h.key_press(egui::Key::Backspace);
    h.run_steps(2);
    assert!(
        (span(&h) - before).abs() < 1.0,
        "back to {before}, at {}",
        span(&h)
    );
}

#[test]
fn warnings_are_listed_behind_a_button() {
    let mut trace = load("sync_timing.sqlite");
    trace.warnings.push("skipped 3 rows with NULL times".into());
    // Counted with nsys's own warnings (the report's DIAGNOSTIC_EVENT).
    let from_nsys = trace
        .info
        .diagnostics
        .iter()
        .filter(|d| d.is_warning())
        .count();
    let h = harness(trace);
    let label = format!("{} warning", 1 + from_nsys);
    assert!(h.query_all_by_label_contains(&label).next().is_some());
}

#[test]
fn gpu_metrics_are_charted_under_the_gpu() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/nsys-2025.3/torch_metrics.sqlite");
    if !path.is_file() {
        eprintln!("skipped: {} not present", path.display());
        return;
    }
    let trace =
        sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false)).expect("loads");
    let n = trace
        .metrics
        .iter()
        .filter(|m| !m.timestamp.is_empty())
        .count();
    assert_eq!(n, 22);
    let mut h = harness(trace);
    assert!(
        h.query_all_by_label_contains("GPU metrics · 22 series")
            .next()
            .is_some()
    );
    let row = h.get_by_label("SMs Active [Throughput %]").rect();
    // Hovering the chart shows the value with its unit.
    let canvas = h.get_by_label_contains("Timeline,").rect();
    h.event(Event::PointerMoved(pos2(canvas.center().x, row.center().y)));
    // Tooltips wait for the pointer to rest (egui's tooltip delay).
    h.run_steps(60);
    assert!(h.query_all_by_label_contains("sample at").next().is_some());
    let doc = h.state().doc().expect("doc");
    let found = doc.timeline.rows.iter().any(|r| {
        matches!(&r.kind, sightline::app::timeline::rows::RowKind::Metric(m)
            if r.label == "GPC Clock Frequency [MHz]" && m.scale == 1e-6 && m.unit == "MHz")
    });
    assert!(found, "clocks are shown in MHz");
}

#[test]
fn search_finds_and_selects_matches() {
    let mut h = harness(load("sync_timing.sqlite"));
    let name = {
        let doc = h.state().doc().expect("doc");
        EventRef::new(Table::Kernel, 0).name(&doc.trace).to_string()
    };
    let needle: String = name.chars().take(6).collect();
    let field = h.get_by_label("Search");
    field.focus();
    field.type_text(&needle);
    h.run_steps(2);
    h.key_press(egui::Key::Enter);
    h.run_steps(1);
    h.state_mut().wait_for_search();
    h.run_steps(2);
    let doc = h.state().doc().expect("doc");
    assert!(!doc.search.matches.is_empty(), "matches for {needle}");
    let sel = doc.selection().event.expect("first match selected");
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
            h.state().doc().is_some_and(|d| d.timeline.painted > 0),
            "{f} paints events"
        );
    }
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn the_file_menu_path_box_takes_clicks_and_opens_what_is_typed() {
    let mut h = harness(load("sync_timing.sqlite"));
    h.get_by_label("File").click();
    h.run_steps(2);
    // A real click in the box must not close the menu (it used to).
    h.get_by_label("Open path:").click();
    h.run_steps(2);
    assert!(
        h.query_by_label("Quit (Ctrl+Q)").is_some(),
        "menu still open"
    );
    let not_a_report = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    h.get_by_label("Open path:")
        .type_text(&not_a_report.display().to_string());
    h.run_steps(2);
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    h.state_mut().wait_for_load();
    h.run_steps(2);
    let app = h.state();
    let err = app.error.as_deref().expect("an error");
    assert!(err.contains("not an SQLite file"), "{err}");
    // The open report stays, and the message is in the window.
    assert!(app.doc().is_some());
    assert!(
        h.query_all_by_label_contains("not an SQLite file")
            .next()
            .is_some()
    );
}

#[test]
fn opening_a_second_report_opens_a_fresh_tab() {
    let mut h = harness(load("sync_timing.sqlite"));
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        let trace = doc.trace.clone();
        let (s, e) = (
            trace.kernels.spans.start[0],
            trace.kernels.spans.start[0] + 1000,
        );
        doc.select_range(s, e);
        doc.stats.wait();
        doc.select_event(Some(EventRef::new(Table::Kernel, 0)));
        doc.search.query = "cuda".into();
        doc.search.run(&trace);
    }
    h.run_steps(3);
    assert!(h.query_by_label("Selected event").is_some());
    assert!(
        h.query_all_by_label_contains("Copy --range")
            .next()
            .is_some()
    );

    let streams = fixture("streams.sqlite");
    h.state_mut().open(streams.clone());
    h.state_mut().wait_for_load();
    h.run_steps(3);
    let app = h.state();
    assert!(app.error.is_none(), "{:?}", app.error);
    let doc = app.doc().expect("doc");
    assert_eq!(doc.path, streams);
    assert!(doc.selection().event.is_none());
    assert!(doc.selection().range.is_none());
    assert!(doc.selection().range.is_none() && doc.stats.tables.is_empty());
    assert!(doc.search.query.is_empty() && doc.search.matches.is_empty());
    assert_eq!(
        app.recent.first(),
        Some(&std::fs::canonicalize(&streams).expect("fixture"))
    );
    assert!(h.query_by_label("Selected event").is_none());
    assert!(
        h.query_all_by_label_contains("Copy --range")
            .next()
            .is_none()
    );
    assert!(
        h.query_all_by_label_contains("streams.sqlite")
            .next()
            .is_some()
    );
    // The first report kept its selection, range and search in its tab.
    h.get_by_label("sync_timing.sqlite").click();
    h.run_steps(3);
    let doc = h.state().doc().expect("doc");
    assert!(doc.path.ends_with("sync_timing.sqlite"));
    assert!(doc.selection().event.is_some() && doc.selection().range.is_some());
    assert_eq!(doc.search.query, "cuda");
    assert!(h.query_by_label("Selected event").is_some());
}

/// The label of the first thread with CUDA API calls, e.g. `[1234]`.
fn first_cuda_thread(trace: &Trace) -> String {
    trace
        .threads
        .iter()
        .find(|t| !t.cuda_api.is_empty())
        .map(|t| format!("[{}]", t.tid))
        .expect("a thread with CUDA API calls")
}

#[test]
fn two_reports_in_tabs_switch_without_reloading_and_close() {
    let sync = load("sync_timing.sqlite");
    let sync_thread = first_cuda_thread(&sync);
    let mut h = harness(sync);
    h.state_mut().open(fixture("streams.sqlite"));
    h.state_mut().wait_for_load();
    h.run_steps(3);
    assert_eq!(h.state().tab_count(), 2);
    assert_eq!(h.state().active_tab(), 1, "the new report is shown");
    let streams_thread = first_cuda_thread(&h.state().doc().expect("doc").trace);
    assert_ne!(sync_thread, streams_thread, "the fixtures differ");
    let has =
        |h: &Harness<'_, SightlineApp>, l: &str| h.query_all_by_label_contains(l).next().is_some();
    assert!(has(&h, &streams_thread) && !has(&h, &sync_thread));

    // Switching is instant: same trace in memory, no load started.
    let sync_trace = h.state().docs().next().expect("first").trace.clone();
    h.get_by_label("sync_timing.sqlite").click();
    h.run_steps(3);
    assert!(!h.state().is_loading());
    assert_eq!(h.state().active_tab(), 0);
    assert!(std::sync::Arc::ptr_eq(
        &h.state().doc().expect("doc").trace,
        &sync_trace
    ));
    assert!(has(&h, &sync_thread) && !has(&h, &streams_thread));

    // Opening a report that is already open just shows its tab.
    h.state_mut().open(fixture("streams.sqlite"));
    assert!(!h.state().is_loading());
    assert_eq!((h.state().tab_count(), h.state().active_tab()), (2, 1));
    h.run_steps(2);

    // Closing the shown tab shows the other one.
    h.get_by_label("Close streams.sqlite").click();
    h.run_steps(3);
    assert_eq!(h.state().tab_count(), 1);
    assert!(has(&h, &sync_thread) && !has(&h, &streams_thread));
    h.get_by_label("Close sync_timing.sqlite").click();
    h.run_steps(3);
    assert_eq!(h.state().tab_count(), 0);
    assert!(h.state().doc().is_none());
    assert!(has(&h, "Open an Nsight Systems report"));
}

#[test]
fn several_reports_load_side_by_side() {
    let mut app = SightlineApp::default();
    app.open(fixture("sync_timing.sqlite"));
    app.open(fixture("streams.sqlite"));
    assert_eq!(app.tab_count(), 2);
    assert!(app.doc().is_none(), "still reading");
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(1);
    h.state_mut().wait_for_load();
    h.run_steps(3);
    let names: Vec<_> = h
        .state()
        .docs()
        .map(|d| d.path.file_name().expect("name").to_owned())
        .collect();
    assert_eq!(names, ["sync_timing.sqlite", "streams.sqlite"]);
    assert!(h.query_by_label("sync_timing.sqlite").is_some());
    assert!(h.query_by_label("Close streams.sqlite").is_some());
}

#[test]
fn recent_files_and_view_options_survive_a_restart() {
    let (a, b) = (fixture("streams.sqlite"), fixture("sync_timing.sqlite"));
    let mut app = SightlineApp::default();
    for p in [&a, &b] {
        app.open(p.clone());
        app.wait_for_load();
    }
    app.doc_mut().expect("doc").timeline.view.show_names = false;
    let mut storage = MemStorage::default();
    eframe::App::save(&mut app, &mut storage);

    let mut again = SightlineApp::restore(Some(&storage));
    let canon = |p: &Path| std::fs::canonicalize(p).expect("fixture");
    assert_eq!(again.recent, vec![canon(&b), canon(&a)]);
    assert!(again.doc().is_none() && again.error.is_none());
    again.open(again.recent[1].clone());
    again.wait_for_load();
    assert!(!again.doc().expect("doc").timeline.view.show_names);
    // No storage (first start, or persistence off): an empty app.
    assert!(SightlineApp::restore(None).recent.is_empty());
}

/// A report reached through a symlink and through its real path is one
/// Recent entry, also in a list saved before paths were canonicalised.
#[test]
fn recent_files_hold_a_symlinked_report_once() {
    let real = std::fs::canonicalize(fixture("streams.sqlite")).expect("fixture");
    let dir = tempfile::tempdir().expect("temp dir");
    let link = dir.path().join("linked.sqlite");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let mut app = SightlineApp::default();
    app.recent = vec![link.clone(), real.clone()];
    let mut storage = MemStorage::default();
    eframe::App::save(&mut app, &mut storage);
    let mut again = SightlineApp::restore(Some(&storage));
    assert_eq!(again.recent, vec![real.clone()]);
    // Opened through the link again, it stays one entry.
    again.recent.insert(0, link.clone());
    again.open(link);
    again.wait_for_load();
    assert_eq!(again.recent, vec![real]);
}

#[test]
fn hidden_and_collapsed_rows_are_kept_per_report() {
    let (a, b) = (fixture("streams.sqlite"), fixture("sync_timing.sqlite"));
    let mut app = SightlineApp::default();
    app.open(a.clone());
    app.wait_for_load();
    let doc = app.doc_mut().expect("doc");
    let key = doc.timeline.rows[1].key.clone();
    doc.timeline.view.hidden.insert(key.clone());
    doc.timeline
        .view
        .collapsed
        .insert(doc.timeline.rows[0].key.clone());
    let mut storage = MemStorage::default();
    eframe::App::save(&mut app, &mut storage);

    // Another report opens with none of them.
    let mut again = SightlineApp::restore(Some(&storage));
    again.open(b);
    again.wait_for_load();
    let view = &again.doc().expect("doc").timeline.view;
    assert!(view.hidden.is_empty() && view.collapsed.is_empty());
    // The same report gets its own back.
    again.open(a);
    again.wait_for_load();
    let view = &again.doc().expect("doc").timeline.view;
    assert!(view.hidden.contains(&key));
    assert_eq!(view.collapsed.len(), 1);
}

/// A selected NVTX range's idle time is summed on a worker (a range over
/// millions of gaps takes longer than a frame), then shown in its details.
#[test]
fn a_selected_range_shows_its_idle_time_once_summed() {
    let trace = load("sync_timing.sqlite");
    let range = (0..trace.nvtx.spans.len() as u32)
        .map(|i| EventRef::new(Table::Nvtx, i))
        .max_by_key(|e| e.end(&trace) - e.start(&trace))
        .expect("an NVTX range");
    let mut h = harness(trace);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.show_event(range);
    }
    h.run_steps(2);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        let trace = doc.trace.clone();
        doc.timeline.idle_rows.wait(&trace);
    }
    h.run_steps(2);
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .timeline
        .idle_rows
        .wait_range();
    h.run_steps(2);
    assert!(
        h.query_all_by_label_contains("GPU 0: GPU idle ")
            .next()
            .is_some(),
        "the range's idle sentence"
    );
}

/// How many instances of kernel `name` start in `range`.
fn instances_in(trace: &Trace, name: sightline::model::StrId, range: TimeRange) -> usize {
    let k = &trace.kernels.spans;
    (0..k.len())
        .filter(|&i| k.name[i] == name && (range.start..range.end).contains(&k.start[i]))
        .count()
}

#[test]
fn every_panel_follows_the_one_selected_range() {
    // Wide, so that the kernel panel, which floats at the right of the
    // timeline, leaves the left of the ruler free to drag on.
    let mut h = Harness::builder()
        .with_size(vec2(2600.0, 900.0))
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::with_trace(load("sync_timing.sqlite")),
        );
    h.run_steps(3);
    // The most launched kernel, its instances shown in the left third of
    // the timeline: drags stay there, the kernel panel floats on the right.
    let (name, starts) = {
        let doc = h.state_mut().doc_mut().expect("doc");
        let k = &doc.trace.kernels.spans;
        let whole = TimeRange {
            start: i64::MIN,
            end: i64::MAX,
        };
        let name = *k
            .name
            .iter()
            .max_by_key(|&&n| instances_in(&doc.trace, n, whole))
            .expect("kernels");
        let mut starts: Vec<i64> = (0..k.len())
            .filter(|&i| k.name[i] == name)
            .map(|i| k.start[i])
            .collect();
        starts.sort_unstable();
        (name, starts)
    };
    let (lo, hi) = (starts[0] as f64, *starts.last().expect("starts") as f64);
    let view_them = |h: &mut Harness<'_, SightlineApp>| {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.timeline.zoom_to_span(lo - 1.0, lo + (hi - lo) * 3.0);
        h.run_steps(2);
    };
    view_them(&mut h);
    h.run_steps(2);
    let at = |h: &Harness<'_, SightlineApp>, q: usize| x_of(h, starts[starts.len() * q / 8]);
    let (x0, x1, x2) = (at(&h, 1) - 0.5, at(&h, 3) - 0.5, at(&h, 6) - 0.5);
    drag_ruler(&mut h, x0, x1);
    let first = {
        let doc = h.state_mut().doc_mut().expect("doc");
        let first = doc.selection().range.expect("a range is selected");
        doc.stats.wait();
        assert_eq!(doc.selection().range, Some(first));
        assert!(instances_in(&doc.trace, name, first) > 0);
        doc.open_kernel(name);
        assert_eq!(doc.kernel.over(doc.selection().range), Some(first));
        first
    };
    h.run_steps(2);

    // A second range dragged out on the timeline: the tables, the kernel
    // panel and a stats row's instances are all over it.
    drag_ruler(&mut h, x1, x2);
    h.run_steps(2);
    let second = {
        let doc = h.state_mut().doc_mut().expect("doc");
        let second = doc.selection().range.expect("a range is selected");
        assert_ne!(second, first);
        doc.stats.wait();
        assert_eq!(doc.selection().range, Some(second));
        assert_eq!(doc.kernel.over(doc.selection().range), Some(second));
        doc.kernel.wait(&doc.trace.clone());
        let view = doc
            .kernel
            .view
            .clone()
            .expect("the kernel starts in the range");
        assert_eq!(view.points.len(), instances_in(&doc.trace, name, second));
        let text = doc.trace.name(name).to_string();
        doc.step_instances(&text, None);
        second
    };
    h.state_mut().wait_for_search();
    h.run_steps(2);
    {
        let doc = h.state().doc().expect("doc");
        assert!(!doc.search.matches.is_empty());
        for ev in doc.search.matches.iter() {
            assert!((second.start..second.end).contains(&ev.start(&doc.trace)));
        }
    }

    // Escape clears the selection: the tables go, the panel is over the
    // whole report.
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        assert_eq!(doc.selection().range, None);
        assert!(doc.selection().range.is_none() && doc.stats.tables.is_empty());
        assert_eq!(doc.kernel.over(doc.selection().range), None);
        doc.kernel.wait(&doc.trace.clone());
        let whole = doc.kernel.view.clone().expect("view");
        let all = doc
            .trace
            .kernels
            .spans
            .name
            .iter()
            .filter(|&&n| n == name)
            .count();
        assert_eq!(whole.points.len(), all);
    }

    // "Whole report" keeps the panel there whatever is selected next.
    // (Showing the row's first instance moved the view.)
    view_them(&mut h);
    drag_ruler(&mut h, x0, x1);
    h.run_steps(2);
    let doc = h.state().doc().expect("doc");
    assert_eq!(doc.kernel.over(doc.selection().range), Some(first));
    h.get_by_label("Whole report").click();
    h.run_steps(2);
    drag_ruler(&mut h, x1, x2);
    h.run_steps(2);
    let doc = h.state().doc().expect("doc");
    assert_eq!(doc.selection().range, Some(second));
    assert_eq!(doc.selection().range, Some(second));
    assert_eq!(doc.kernel.over(doc.selection().range), None);
}

/// Fixture `name` copied into `dir`, edited by `sql`, loaded.
fn load_edited(dir: &tempfile::TempDir, name: &str, sql: &str) -> Trace {
    let path = dir.path().join(name);
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
        &path,
    )
    .expect("copy");
    rusqlite::Connection::open(&path)
        .and_then(|c| c.execute_batch(sql))
        .expect("edit");
    sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false)).expect("loads")
}

/// sync_timing with its first push/pop range's end taken away (in `dir`),
/// and that range's index.
fn sync_timing_with_a_range_without_an_end(dir: &tempfile::TempDir) -> (Trace, usize) {
    let trace = load_edited(
        dir,
        "sync_timing.sqlite",
        "UPDATE NVTX_EVENTS SET \"end\" = NULL WHERE rowid =
           (SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType = 59)",
    );
    let i = (0..trace.nvtx.spans.len())
        .find(|&i| trace.nvtx.unended[i])
        .expect("the range");
    (trace, i)
}

/// A range without an end (a capture's range still open, or one its program
/// never ended) is counted to the report's last NVTX time, as nsys counts
/// it, but drawn on to the report's end: a capture's outermost range, open
/// for minutes, is not a sliver at its start. A click on that part selects
/// it.
#[test]
fn a_range_without_an_end_is_drawn_and_clicked_to_the_reports_end() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (trace, i) = sync_timing_with_a_range_without_an_end(&dir);
    let (start, counted_to) = (trace.nvtx.spans.start[i], trace.nvtx.spans.end(i));
    let report_end = trace.info.time_range.1;
    assert!(
        report_end > counted_to + 1_000_000,
        "the report goes on after it"
    );
    let range = EventRef::new(Table::Nvtx, i as u32);
    let mut h = harness(trace);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.timeline.zoom_to(start as f64, report_end as f64);
    }
    h.run_steps(3);
    let pos = {
        let tl = &h.state().doc().expect("doc").timeline;
        // Screen x of a time, from two points of the view's mapping.
        let (t0, t1) = (tl.time_at(0.0), tl.time_at(1.0));
        let t = (counted_to as f64 + report_end as f64) / 2.0;
        let y = tl
            .event_pos(&h.state().doc().expect("doc").trace, range)
            .expect("drawn")
            .y;
        pos2(((t - t0) / (t1 - t0)) as f32, y)
    };
    click(&mut h, pos);
    let doc = h.state().doc().expect("doc");
    assert_eq!(doc.selection().event, Some(range));
}

/// A range without an end has no end to weigh its GPU work against: its
/// details do not say the work ends after it (the end shown is the report's
/// last NVTX time, which a capture's open range has not reached).
#[test]
fn a_range_without_an_end_is_not_said_to_end_before_its_gpu_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (trace, i) = sync_timing_with_a_range_without_an_end(&dir);
    let work = sightline::app::panels::nvtx_gpu::RangeWork::compute(&trace, i as u32);
    assert!(work.gpu_end.is_some(), "the range launched GPU work");
    assert_eq!(work.overhang(&trace), None);
    // Nor is its projection drawn overhanging.
    let projected = sightline::app::timeline::projection::Projected {
        nvtx: i as u32,
        gpu_start: work.gpu_start.expect("GPU work"),
        gpu_end: trace.info.time_range.1,
    };
    assert_eq!(projected.overhang(&trace), None);
    let mut h = harness(trace);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        let range = EventRef::new(Table::Nvtx, i as u32);
        doc.select_event(Some(range));
    }
    h.run_steps(3);
    assert!(
        h.query_by_label_contains("GPU work of this range ends")
            .is_none()
    );
    assert!(h.query_by_label("GPU work of this range").is_some());
}

/// Ranges without an end are all counted to the report's last NVTX time, so
/// their faded parts on one level of a track cover each other: one a level
/// is painted, the one that started last (a report whose 30k ranges never
/// ended painted 30k a frame, 20 ms).
#[test]
fn one_faded_part_is_painted_a_level_whatever_the_ranges_without_an_end() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = load_edited(
        &dir,
        "timing_cases.sqlite",
        "UPDATE NVTX_EVENTS SET \"end\" = NULL WHERE eventType = 59",
    );
    let unended = trace.nvtx.unended.iter().filter(|&&u| u).count();
    assert!(unended > 20, "{unended} ranges without an end");
    let open = sightline::app::timeline::paint::open_ranges(&trace);
    let tracks: Vec<&sightline::model::Track> = trace
        .threads
        .iter()
        .flat_map(|t| t.nvtx.iter().map(|n| &n.track))
        .collect();
    let levels: usize = tracks.iter().map(|t| t.depth as usize).sum();
    assert!(
        !open.is_empty() && open.len() <= levels,
        "{} for {levels} levels",
        open.len()
    );
    // Each is the last to start of the ranges without an end on its level.
    for &r in &open {
        let track = tracks.iter().find(|t| t.contains(r)).expect("its track");
        let level = trace.nvtx.depth[r as usize];
        let later = track.rows().any(|i| {
            trace.nvtx.unended[i as usize]
                && trace.nvtx.depth[i as usize] == level
                && trace.nvtx.spans.start[i as usize] > trace.nvtx.spans.start[r as usize]
        });
        assert!(!later, "range {r} is not the last to start on its level");
    }
}
