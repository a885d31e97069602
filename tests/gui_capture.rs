//! The window during a live capture, driven headless (egui_kittest): a replay
//! of a real report feeds the same path a CUPTI capture does, so the growing
//! tab, follow mode, Stop and Save as are tested without a GPU.

mod common;
use common::{empty_window as harness, fixture, step_until};

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::app::SightlineApp;

fn events(h: &Harness<'_, SightlineApp>) -> usize {
    h.state().doc().map_or(0, |d| d.trace.event_count())
}

fn report_span() -> (f64, sightline::model::Trace) {
    let full = sightline::loader::load(
        &fixture("sync_timing.sqlite"),
        &mut |_| {},
        &AtomicBool::new(false),
    )
    .expect("load");
    (
        (full.info.time_range.1 - full.info.time_range.0) as f64,
        full,
    )
}

#[test]
fn a_capture_tab_grows_follows_the_newest_events_and_stops_on_request() {
    let (span, full) = report_span();
    let mut h = harness();
    // A pace of about 20 s for the whole report: it is still running when
    // the test stops it.
    h.state_mut()
        .start_replay(fixture("sync_timing.sqlite"), span / 20e9);
    h.step();
    assert!(h.get_by_label_contains(": recording").rect().width() > 0.0);
    assert!(step_until(&mut h, Duration::from_secs(20), |h| events(h) > 0));
    let first = events(&h);
    assert!(step_until(&mut h, Duration::from_secs(20), |h| events(h) > first));
    // Follow mode: the whole capture so far is in view, up to its newest event.
    let doc = h.state().doc().expect("a tab");
    let (lo, hi) = doc.timeline.limits();
    let view = &doc.timeline.view;
    assert!(view.start <= lo && view.end >= hi, "{lo}..{hi} in view");
    assert!(
        view.end - hi < 1e3 + view.span() * 1e-6,
        "newest at the right edge"
    );
    assert!(doc.live.as_ref().is_some_and(|l| l.follow));
    // Zooming ends follow mode, and later snapshots keep the user's view.
    let canvas = h.get_by_label_contains("Timeline,").rect();
    h.event(egui::Event::PointerMoved(canvas.center()));
    h.key_press(egui::Key::W);
    h.step();
    let live = h.state().doc().and_then(|d| d.live.as_ref()).expect("live");
    assert!(!live.follow, "zooming turns follow mode off");
    let zoomed = h
        .state()
        .doc()
        .map(|d| d.timeline.view.span())
        .unwrap_or(0.0);
    let now = events(&h);
    assert!(step_until(&mut h, Duration::from_secs(20), |h| events(h) > now));
    let kept = h
        .state()
        .doc()
        .map(|d| d.timeline.view.span())
        .unwrap_or(0.0);
    assert_eq!(zoomed, kept, "a new snapshot keeps the zoom");
    // Stop: the capture ends cleanly with what it had.
    h.get_by_label("Stop").click();
    assert!(step_until(&mut h, Duration::from_secs(20), |h| {
        h.state()
            .doc()
            .and_then(|d| d.live.as_ref())
            .is_some_and(|l| !l.is_running())
    }));
    h.step();
    assert!(h.get_by_label_contains(": stopped").rect().width() > 0.0);
    assert!(events(&h) < full.event_count());
}

/// A window whose replay of sync_timing (of `span` ns) ran in 0.3 s and
/// has finished.
fn replayed_to_the_end(span: f64) -> Harness<'static, SightlineApp> {
    let mut h = harness();
    h.state_mut()
        .start_replay(fixture("sync_timing.sqlite"), span / 0.3e9);
    assert!(step_until(&mut h, Duration::from_secs(30), |h| {
        h.state()
            .doc()
            .and_then(|d| d.live.as_ref())
            .is_some_and(|l| !l.is_running())
    }));
    h
}

#[test]
fn a_finished_capture_saves_as_a_report_that_loads_the_same() {
    let (span, full) = report_span();
    let mut h = replayed_to_the_end(span);
    assert_eq!(events(&h), full.event_count());
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("saved.sqlite");
    h.state_mut().save_as(out.clone());
    h.state_mut().wait_for_captures();
    h.step();
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    let saved = sightline::loader::load(&out, &mut |_| {}, &AtomicBool::new(false)).expect("load");
    assert_eq!(saved.event_count(), full.event_count());
    assert_eq!(saved.kernels.spans.start, full.kernels.spans.start);
    // No half file or temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("saved.sqlite")]);
}

#[test]
fn the_window_asks_a_capture_to_wake_it_at_each_message() {
    // Without it a snapshot waited for the window's own timer (up to 50 ms)
    // before it was shown. That each message wakes is tests/capture.rs's.
    let (span, _) = report_span();
    let mut h = harness();
    h.state_mut()
        .start_replay(fixture("sync_timing.sqlite"), span / 20e9);
    h.step();
    let live = h
        .state()
        .doc()
        .and_then(|d| d.live.as_ref())
        .expect("a capture tab");
    assert!(
        live.job.as_ref().is_some_and(|job| job.wakes()),
        "the capture wakes the window"
    );
    live.stop();
    h.state_mut().wait_for_captures();
}

/// While a capture runs, its findings engine carries its idle attribution
/// and sorted operations from run to run; once the capture has finished,
/// nothing is carried (tens of bytes a GPU operation kept for no next run).
/// That the last state's run still extends them:
/// `gui_findings::a_growing_reports_findings_extend_the_last_runs_idle_attribution`.
#[test]
fn a_finished_captures_findings_engine_keeps_nothing_for_a_next_run() {
    let (span, _) = report_span();
    let mut h = replayed_to_the_end(span);
    let doc = h.state_mut().doc_mut().expect("doc");
    doc.wait_for_findings();
    assert!(doc.trace.lineage.report != 0, "a growing report's trace");
    assert!(!doc.findings.carries());
    assert!(
        doc.findings.idle_merged().is_some(),
        "a growing report's runs"
    );
}
