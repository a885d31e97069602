//! A lesson walked through the real window (egui_kittest + AccessKit): Next
//! through every step of lesson 1, Back once, the arrow keys; each step's
//! view checked against what the lesson file names, in its real report.

use std::path::{Path, PathBuf};

use eframe::egui::{self, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::app::SightlineApp;
use sightline::app::panels::lesson_panel::row_names;
use sightline::lessons::{self, Lesson, View};
use sightline::model::{EventId, EventKind, Trace};

fn lesson_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/lessons")
        .join(name)
}

fn load_lesson(name: &str) -> Lesson {
    lessons::load(&lesson_file(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// The window with `lesson` started and its first report read.
fn harness_with(lesson: Lesson) -> Harness<'static, SightlineApp> {
    let mut app = SightlineApp::default();
    app.lessons.start(lesson);
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    settle(&mut h);
    h
}

/// Frames until the step's report is read (or its capture recorded) and the step applied.
fn settle(h: &mut Harness<'_, SightlineApp>) {
    for _ in 0..50 {
        h.run_steps(2);
        h.state_mut().wait_for_load();
        h.state_mut().wait_for_captures();
        h.run_steps(2);
        if !h.state().lessons.is_pending() {
            return;
        }
    }
    panic!("the step was never shown");
}

fn span(trace: &Trace, ev: EventId) -> (i64, i64) {
    let spans = match ev.kind {
        EventKind::Nvtx => &trace.nvtx.spans,
        EventKind::Kernel => &trace.kernels.spans,
        EventKind::Api => &trace.cuda_api.spans,
        EventKind::Memcpy => &trace.memcpys.spans,
        EventKind::Graph => &trace.graph_execs.spans,
        other => panic!("no lesson selects a {other:?} here"),
    };
    (spans.start[ev.index as usize], spans.end(ev.index as usize))
}

/// Checks that step `i` of `lesson` is the one shown, as its file says: its
/// report, the span in view, the selection, the range, the panels, its text.
fn assert_step_shown(h: &Harness<'_, SightlineApp>, lesson: &Lesson, i: usize) {
    let app = h.state();
    let step = &lesson.steps[i];
    let at = format!("step {} ({})", i + 1, step.title);
    assert_eq!(app.lessons.step(), Some(i), "{at}");
    let run = app.lessons.run.as_ref().expect("a lesson runs");
    assert!(run.error.is_none(), "{at}: {:?}", run.error);
    let doc = app.doc().expect("the step's report is shown");
    if step.capture.is_some() && doc.live.is_some() {
        // Captured live here (a GPU machine): the capture's tab, not the report on disk.
        assert!(
            run.note
                .as_deref()
                .is_some_and(|n| n.starts_with("Captured live")),
            "{at}"
        );
    } else {
        assert_eq!(
            std::fs::canonicalize(&doc.path).ok(),
            std::fs::canonicalize(&step.report).ok(),
            "{at}: its report"
        );
    }
    // What the file names, found independently of the window.
    let expected = lessons::resolve(lesson, i, &doc.trace, &row_names(&doc.timeline.rows))
        .unwrap_or_else(|e| panic!("{e}"));
    let view = (doc.timeline.view.start, doc.timeline.view.end);
    let inside = |(s, e): (i64, i64)| view.0 <= s as f64 && e as f64 <= view.1;
    match expected.view {
        Some(View::Span(s, e)) => assert!(inside((s, e)), "{at}: [{s}, {e}] in {view:?}"),
        Some(View::All) => {
            let (lo, hi) = doc.trace.info.time_range;
            assert!(inside((lo, hi)), "{at}: the whole report in view");
        }
        Some(View::Around(..)) | None => {}
    }
    let selected = doc.selection().event.map(EventId::from);
    assert_eq!(selected, expected.select, "{at}: the selection");
    if let Some(ev) = expected.select {
        assert!(
            inside(span(&doc.trace, ev)),
            "{at}: the selection is in view"
        );
    }
    assert_eq!(
        doc.selection().range.map(|r| (r.start, r.end)),
        expected.range,
        "{at}: the selected span"
    );
    assert_eq!(
        doc.kernel.is_open(),
        step.kernel_panel,
        "{at}: kernel panel"
    );
    assert_eq!(
        doc.findings.open, step.findings_panel,
        "{at}: findings panel"
    );
    assert_eq!(
        doc.search.query,
        step.search.as_ref().map_or("", |s| s.query.as_str()),
        "{at}: the search"
    );
    // Hidden rows are the file's: "OS runtime" lanes hidden.
    for &r in &expected.hidden {
        let key = &doc.timeline.rows[r].key;
        assert!(
            doc.timeline.view.hidden.contains(key),
            "{at}: row {key} hidden"
        );
    }
    // Its title and the start of its text are on screen.
    h.get_by_label(&step.title);
    let first: String = step
        .text
        .split_whitespace()
        .take(8)
        .collect::<Vec<_>>()
        .join(" ");
    h.get_by_label_contains(&first);
    if let Some(q) = &step.question {
        let start: String = q.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
        h.get_by_label_contains(&start);
    }
    h.get_by_label(&format!("Step {} of {}", i + 1, lesson.steps.len()));
}

/// On a machine that can capture, a lesson's live capture needs NVTX to reach CUPTI, and
/// NVTX reads `NVTX_INJECTION64_PATH` once: `main` sets it before any thread starts, which a
/// test cannot (the harness already runs threads). So the test runs itself again, in a child
/// process with the variable set. True when it did (the caller is done).
fn ran_again_with_nvtx_injected(test: &str) -> bool {
    use sightline::capture::environment;
    if environment::check_cupti().is_err() || std::env::var_os("NVTX_INJECTION64_PATH").is_some() {
        return false;
    }
    let cupti = environment::cupti_library_path().expect("CUPTI loads, so it has a path");
    let exe = std::env::current_exe().expect("the test binary");
    let status = std::process::Command::new(exe)
        .args(["--exact", test, "--nocapture"])
        .env("NVTX_INJECTION64_PATH", cupti)
        .status()
        .expect("the test runs again");
    assert!(status.success(), "{test} with NVTX injected failed");
    true
}

#[test]
fn lesson_one_walks_forward_through_every_step_and_back() {
    if ran_again_with_nvtx_injected("lesson_one_walks_forward_through_every_step_and_back") {
        return;
    }
    let lesson = load_lesson("01_sync_timing.toml");
    let n = lesson.steps.len();
    assert!(n >= 5);
    let mut h = harness_with(lesson.clone());
    for i in 0..n {
        assert_step_shown(&h, &lesson, i);
        if i + 1 < n {
            h.get_by_label("Next >").click();
            settle(&mut h);
        }
    }
    // The last step: Next does nothing more.
    h.get_by_label("Next >").click();
    settle(&mut h);
    assert_step_shown(&h, &lesson, n - 1);
    // Back once shows the step before exactly as Next did.
    h.get_by_label("< Back").click();
    settle(&mut h);
    assert_step_shown(&h, &lesson, n - 2);
}

#[test]
fn arrow_keys_and_page_keys_move_but_not_while_typing() {
    let lesson = load_lesson("01_sync_timing.toml");
    let mut h = harness_with(lesson.clone());
    h.key_press(egui::Key::ArrowRight);
    settle(&mut h);
    assert_step_shown(&h, &lesson, 1);
    h.key_press(egui::Key::PageDown);
    settle(&mut h);
    assert_step_shown(&h, &lesson, 2);
    h.key_press(egui::Key::ArrowLeft);
    settle(&mut h);
    assert_step_shown(&h, &lesson, 1);
    h.key_press(egui::Key::PageUp);
    settle(&mut h);
    assert_step_shown(&h, &lesson, 0);

    // In the search box the arrows move the cursor, not the lesson.
    h.get_by_label("Search").click();
    h.run_steps(2);
    h.get_by_label("Search").type_text("add2");
    h.run_steps(1);
    h.key_press(egui::Key::ArrowLeft);
    h.key_press(egui::Key::ArrowRight);
    h.key_press(egui::Key::PageDown);
    h.run_steps(2);
    assert_eq!(h.state().lessons.step(), Some(0), "typing kept the step");
}

/// A lesson whose step names a range the report does not have: the panel
/// says so with the line, the window goes on.
#[test]
fn a_target_missing_from_the_report_is_shown_in_the_panel() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("broken_target.toml");
    let report = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sync_timing.sqlite");
    std::fs::write(
        &path,
        format!(
            "title = \"Broken\"\nreport = {:?}\n\n[[step]]\ntext = \"A range this report lacks.\"\nzoom = {{ nvtx = \"no-such-range\" }}\n",
            report.display().to_string()
        ),
    )
    .expect("written");
    let mut app = SightlineApp::default();
    app.lessons.open_file(&path);
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    settle(&mut h);
    let error = h
        .state()
        .lessons
        .run
        .as_ref()
        .and_then(|r| r.error.clone())
        .expect("the step's error");
    assert_eq!(error.line, Some(6), "{error}");
    h.get_by_label_contains("no-such-range");
    h.get_by_label_contains("line 6");
}

/// A file that is not a lesson: the panel names the line, nothing opens.
#[test]
fn a_malformed_lesson_file_is_shown_with_its_line() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "title = \"Bad\"\nreport = \"sync_timing.sqlite\"\n[[step]]\ntext = \"x\"\npanels = [\"timeline\"]\n",
    )
    .expect("written");
    let mut app = SightlineApp::default();
    app.lessons.open_file(&path);
    let mut h = Harness::builder()
        .with_size(vec2(1200.0, 800.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    assert!(h.state().lessons.run.is_none());
    assert_eq!(h.state().tab_count(), 0, "no report opened");
    h.get_by_label_contains("line 5");
    h.get_by_label_contains("unknown panel \"timeline\"");
    h.get_by_label("Close lesson").click();
    h.run_steps(2);
    assert!(!h.state().lessons.is_open());
}

/// Lesson 5 opens its own report in a new tab; closing the lesson gives the
/// report its rows back.
#[test]
fn a_lesson_on_another_report_opens_it_and_closing_restores_its_rows() {
    let lesson = load_lesson("05_nvtx_layers.toml");
    let mut h = harness_with(lesson.clone());
    assert_step_shown(&h, &lesson, 0);
    assert!(
        !h.state()
            .doc()
            .expect("shown")
            .timeline
            .view
            .hidden
            .is_empty(),
        "the lesson hid rows"
    );
    h.get_by_label("Next >").click();
    settle(&mut h);
    assert_step_shown(&h, &lesson, 1);
    h.get_by_label("Close lesson").click();
    h.run_steps(3);
    assert!(!h.state().lessons.is_open());
    let doc = h.state().doc().expect("the report stays open");
    assert!(doc.timeline.view.hidden.is_empty(), "rows given back");
}

/// The step of lesson 1 that captures sync-timing, on a machine where no capture can be made
/// (CI: no driver): its report, recorded on an H100, is shown, and the panel says why.
#[test]
fn a_capture_step_without_a_gpu_shows_its_report_and_says_why() {
    if let Ok(()) = sightline::capture::environment::check_cupti() {
        eprintln!("skipped: this machine can capture (see the GPU test below)");
        return;
    }
    let lesson = load_lesson("01_sync_timing.toml");
    let last = lesson.steps.len() - 1;
    assert!(
        lesson.steps[last].capture.is_some(),
        "lesson 1 ends with a live capture"
    );
    let mut h = harness_with(lesson.clone());
    h.state_mut().lessons.go(last);
    settle(&mut h);
    assert_step_shown(&h, &lesson, last);
    let note = h.state().lessons.run.as_ref().and_then(|r| r.note.clone());
    let note = note.expect("the panel says where the step comes from");
    assert!(
        note.starts_with("This step shows sync_timing_capture.sqlite"),
        "{note}"
    );
    assert!(note.contains("No live capture here: "), "{note}");
    h.get_by_label_contains("No live capture here");
    assert!(
        h.state().docs().all(|d| d.live.is_none()),
        "nothing was started"
    );
}

/// The same step on a GPU: the benchmark is captured live in its own tab, the step waits for
/// it, then selects its targets in the capture (NVTX ranges included, so NVTX must reach
/// CUPTI: the test runs itself again with NVTX_INJECTION64_PATH set, as `main` sets it before
/// any thread starts). Says "skipped" where no capture can be made.
#[test]
fn a_capture_step_on_a_gpu_records_live_then_shows_its_targets() {
    use sightline::capture::environment;
    if let Err(e) = environment::check_cupti() {
        eprintln!("skipped: no live capture here ({e})");
        return;
    }
    if ran_again_with_nvtx_injected("a_capture_step_on_a_gpu_records_live_then_shows_its_targets") {
        return;
    }
    let lesson = load_lesson("01_sync_timing.toml");
    let last = lesson.steps.len() - 1;
    let mut h = harness_with(lesson.clone());
    h.state_mut().lessons.go(last);
    h.run_steps(3);
    // Started and recording: its own tab, shown, the panel says so.
    let recording = h.state().lessons.run.as_ref().and_then(|r| r.note.clone());
    assert!(
        recording
            .as_deref()
            .is_some_and(|n| n.starts_with("Recording sync-timing live")),
        "{recording:?}"
    );
    assert!(
        h.state().doc().is_some_and(|d| d.live.is_some()),
        "the capture's tab is shown"
    );
    settle(&mut h);
    assert_step_shown(&h, &lesson, last);
    let doc = h.state().doc().expect("shown");
    assert!(
        doc.live.is_some(),
        "the step is shown in the capture, not the report"
    );
    assert!(
        doc.trace.event_count() > 100,
        "{} events",
        doc.trace.event_count()
    );
    // Back and Next again: the same capture, not a second one.
    h.get_by_label("< Back").click();
    settle(&mut h);
    h.get_by_label("Next >").click();
    settle(&mut h);
    assert_step_shown(&h, &lesson, last);
    let captures = h.state().docs().filter(|d| d.live.is_some()).count();
    assert_eq!(captures, 1, "one capture per lesson run");
}

/// Lesson 3's last step captures gemm with counters: on a GPU its tab holds
/// the counters of every kernel and the step shows the selected kernel's
/// panel; elsewhere the step asks for them and says "skipped".
#[test]
fn a_capture_step_with_metrics_on_a_gpu_shows_the_kernels_counters() {
    use sightline::capture::environment;
    let lesson = load_lesson("03_gemm_tensor_cores.toml");
    let last = lesson.steps.len() - 1;
    let asks = lesson.steps[last]
        .capture
        .as_ref()
        .and_then(|c| c.counters.as_ref())
        .is_some_and(|c| !c.metrics.is_empty());
    assert!(asks, "the step's capture asks for counters");
    if let Err(e) = environment::check_cupti() {
        eprintln!("skipped: no live capture here ({e})");
        return;
    }
    if ran_again_with_nvtx_injected(
        "a_capture_step_with_metrics_on_a_gpu_shows_the_kernels_counters",
    ) {
        return;
    }
    let mut h = harness_with(lesson.clone());
    h.state_mut().lessons.go(last);
    h.run_steps(3);
    settle(&mut h);
    assert_step_shown(&h, &lesson, last);
    let doc = h.state().doc().expect("shown");
    assert!(doc.live.is_some(), "the step is shown in the capture");
    let counted: std::collections::BTreeSet<u32> = doc
        .trace
        .kernel_metrics
        .iter()
        .flat_map(|set| set.kernel.iter().copied())
        .collect();
    assert_eq!(
        counted.len(),
        doc.trace.kernels.spans.len(),
        "every kernel has counters: {:?}",
        doc.trace.warnings
    );
}

/// A step that opens the Findings panel shows the group its text names,
/// whatever scroll position an earlier visit left: lesson 1 step 4 talks
/// about range-ends-before-gpu-work.
#[test]
fn a_step_that_opens_the_findings_shows_the_group_it_names() {
    use sightline::analysis::findings::FindingKind;
    let lesson = load_lesson("01_sync_timing.toml");
    let step = 3;
    let named = sightline::app::panels::lesson_panel::group_named_in(&lesson.steps[step].text);
    assert_eq!(named, Some(FindingKind::RangeEndsBeforeGpuWork));
    let mut h = harness_with(lesson);
    h.state_mut().lessons.go(step);
    settle(&mut h);
    h.state_mut().doc_mut().expect("doc").wait_for_findings();
    h.run_steps(3);
    let prefix = format!("{} (", FindingKind::RangeEndsBeforeGpuWork.name());
    let header = |h: &Harness<'_, SightlineApp>| {
        h.query_all_by_label_contains(&prefix)
            .next()
            .map(|n| n.rect())
            .expect("the group is listed")
    };
    let top = h
        .get_by_label("Click one to zoom to it and outline the events that prove it.")
        .rect()
        .bottom();
    // Scroll the list far down, as a reader would, then leave and come back.
    let at = header(&h).center();
    h.event(egui::Event::PointerMoved(at));
    for _ in 0..40 {
        h.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: vec2(0.0, -200.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
            modifiers: egui::Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(3);
    assert!(header(&h).top() < top, "scrolled past the group first");
    h.state_mut().lessons.go(step + 1);
    settle(&mut h);
    h.state_mut().lessons.go(step);
    settle(&mut h);
    h.run_steps(3);
    let shown = header(&h);
    assert!(
        shown.top() >= top - 1.0 && shown.bottom() <= 1000.0,
        "the group {prefix}…) is on screen: {shown:?} (list starts at {top})"
    );
}

/// The lesson panel belongs to its lesson's tabs: another report's tab shows
/// no lesson, and going back shows it again at the same step.
#[test]
fn the_lesson_panel_shows_only_over_its_lessons_tabs() {
    let lesson = load_lesson("01_sync_timing.toml");
    let title = lesson.steps[0].title.clone();
    let mut h = harness_with(lesson);
    assert!(h.query_all_by_label_contains(&title).next().is_some());
    let lesson_tab = h.state().active_tab();
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/streams.sqlite");
    h.state_mut().open(other);
    h.state_mut().wait_for_load();
    h.run_steps(3);
    assert_ne!(h.state().active_tab(), lesson_tab);
    assert!(
        h.query_all_by_label_contains(&title).next().is_none(),
        "no lesson over an unrelated report"
    );
    h.state_mut().switch_to(lesson_tab);
    h.run_steps(3);
    assert!(h.query_all_by_label_contains(&title).next().is_some());
    assert_eq!(h.state().lessons.step(), Some(0));
}

/// Two steps in a row show one kernel's panel over two ranges. A user who
/// pinned the panel to "Whole report" on the first still gets the second
/// step as its file says: the panel over the second step's range.
#[test]
fn a_step_shows_its_kernel_panel_over_its_range_even_after_a_pin() {
    let text = r#"
title = "Two ranges, one kernel"
about = "test"
report = "sync_timing.sqlite"

[[step]]
title = "No sync"
text = "The first range, add2_kernel over no-sync."
select = { kernel = "add2_kernel", within = "no-sync", occurrence = 2 }
range = { nvtx = "no-sync" }
panels = ["kernel"]

[[step]]
title = "Sync after only"
text = "The second range, add2_kernel over sync-after-only."
select = { kernel = "add2_kernel", within = "sync-after-only", occurrence = 2 }
range = { nvtx = "sync-after-only" }
panels = ["kernel"]
"#;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/lessons/two_ranges.toml");
    let lesson = lessons::parse(text, &path).unwrap_or_else(|e| panic!("{e}"));
    let mut h = harness_with(lesson.clone());
    assert_step_shown(&h, &lesson, 0);
    let over = |h: &Harness<'_, SightlineApp>| {
        let doc = h.state().doc().expect("doc");
        (
            doc.kernel.over(doc.selection().range),
            doc.selection().range,
        )
    };
    let (panel, selected) = over(&h);
    assert!(selected.is_some());
    assert_eq!(panel, selected, "the first step's panel is over its range");
    h.get_by_label("Whole report").click();
    h.run_steps(3);
    assert_eq!(over(&h).0, None, "pinned to the whole report");
    h.get_by_label("Next >").click();
    settle(&mut h);
    assert_step_shown(&h, &lesson, 1);
    let (panel, selected) = over(&h);
    assert!(selected.is_some());
    assert_eq!(panel, selected, "the second step's panel is over its range");
}
