//! A report with CPU samples and scheduling but no CUDA (nsys 2025.3.1,
//! `tests/fixtures/cpu_only`) opens on its CPU rows: every thread with
//! samples has a row, and the time axis spans its samples, not 0 ns.

mod common;

use eframe::egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::app::SightlineApp;
use sightline::model::SampleSource;

#[test]
fn a_report_of_cpu_samples_shows_its_threads_over_their_samples() {
    let trace = common::load("cpu_only/cpu_only.sqlite");
    let (lo, hi) = trace.info.time_range;
    let bounds = trace.cpu.bounds().expect("the report has samples");
    assert!(
        lo <= bounds.0 && bounds.1 <= hi,
        "the extent holds the samples"
    );
    let sampled: Vec<String> = (trace.cpu.threads.iter())
        .filter(|s| s.source == SampleSource::Native && !s.is_empty())
        // nsys's own threads (its sampler) get no rows (tests/timeline_sampling_rows.rs).
        .filter(|s| !trace.threads[s.thread as usize].is_profilers_own())
        .map(|s| format!("[{}]", trace.threads[s.thread as usize].tid))
        .collect();
    assert!(sampled.len() >= 2, "main thread and hasher are sampled");
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    for thread in &sampled {
        assert!(
            h.query_all_by_label_contains(thread).next().is_some(),
            "a row for sampled thread {thread}"
        );
    }
    let span = h
        .state()
        .doc()
        .map(|d| d.timeline.view.span())
        .unwrap_or(0.0);
    assert!(
        span >= 0.5 * (bounds.1 - bounds.0) as f64,
        "the view spans the samples ({span} ns of {} ns)",
        bounds.1 - bounds.0
    );
}

/// Samples and scheduling alone (no OS runtime calls, no NVTX, as a Julia
/// trace recorded with `--sample` only): the axis is theirs, not 0 ns.
#[test]
fn samples_alone_give_the_time_axis() {
    let dir = tempfile::TempDir::new().expect("a temporary folder");
    let path = dir.path().join("samples_only.sqlite");
    std::fs::copy(common::fixture("cpu_only/cpu_only.sqlite"), &path).expect("copy");
    rusqlite::Connection::open(&path)
        .expect("open")
        .execute_batch("DELETE FROM OSRT_API; DELETE FROM NVTX_EVENTS;")
        .expect("edit");
    let trace = sightline::loader::load(
        &path,
        &mut |_| {},
        &std::sync::atomic::AtomicBool::new(false),
    )
    .expect("loads");
    let bounds = trace.cpu.bounds().expect("samples");
    assert_eq!(trace.info.time_range, bounds);
    assert!(bounds.1 > bounds.0);
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    assert!(
        h.query_all_by_label_contains("CPU samples (")
            .next()
            .is_some(),
        "CPU rows"
    );
    let span = h
        .state()
        .doc()
        .map(|d| d.timeline.view.span())
        .unwrap_or(0.0);
    assert!(
        span >= (bounds.1 - bounds.0) as f64,
        "the view spans the samples"
    );
}
