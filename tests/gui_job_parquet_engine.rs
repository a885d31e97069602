//! A Parquet job folder opens on the engine's summaries, the engine run as a child process
//! (`SIGHTLINE_ENGINE` names it here): a missing engine, an engine that fails, and output that
//! is not the summaries each give one clear line in the job's tab, never a panic or a hang.
//! A cancel kills the engine. One test: the variable is the process's, and each case sets it
//! in turn.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use eframe::egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::ranks::{JobSummaries, StragglerThresholds, analyze_job};
use sightline::app::SightlineApp;

/// A folder laid out as a Parquet job (what the window checks before it asks the engine).
fn parquet_folder(dir: &Path) -> PathBuf {
    let folder = dir.join("job.parquet");
    for table in ["kernels", "ranks"] {
        std::fs::create_dir_all(folder.join(table)).expect("made");
    }
    folder
}

/// An executable script at `dir/name` that runs `body`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("written");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("executable");
    path
}

/// The job tab's error after opening `folder` with the engine at `engine`, and that the window
/// draws it.
fn error_with_engine(folder: &Path, engine: &Path) -> String {
    // SAFETY: this test binary's only test; nothing else reads the environment meanwhile.
    unsafe { std::env::set_var("SIGHTLINE_ENGINE", engine) };
    let mut app = SightlineApp::default();
    app.open(folder.to_path_buf());
    let view = app.job_view_mut().expect("a job tab");
    view.wait();
    assert!(!view.is_loading());
    assert!(view.ranks.is_empty());
    let error = view.error.clone().expect("the open fails");
    let mut h = Harness::builder()
        .with_size(vec2(1200.0, 800.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(2);
    h.get_by_label(&error);
    error
}

#[test]
fn a_missing_or_failing_engine_or_output_not_understood_is_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = parquet_folder(dir.path());

    let missing = dir.path().join("no-such-engine");
    let error = error_with_engine(&folder, &missing);
    assert!(
        error.contains(&format!("the engine is not at {}", missing.display())),
        "{error}"
    );
    assert!(error.contains("sightline-engine"), "how to get it: {error}");

    let failing = script(
        dir.path(),
        "failing",
        "echo 'sightline: a bad folder' >&2; exit 1",
    );
    let error = error_with_engine(&folder, &failing);
    assert!(
        error.ends_with("the engine failed (exit status 1): sightline: a bad folder"),
        "{error}"
    );

    let babbling = script(dir.path(), "babbling", "echo 'not a document'");
    let error = error_with_engine(&folder, &babbling);
    assert!(
        error.contains("the engine's summaries are not understood"),
        "{error}"
    );

    let newer = script(dir.path(), "newer", "echo '{\"version\": 99}'");
    let error = error_with_engine(&folder, &newer);
    assert!(
        error.contains("the engine's summaries are of version 99"),
        "{error}"
    );
    assert!(error.starts_with(&folder.display().to_string()), "{error}");

    an_engine_failing_after_its_early_summaries_keeps_them(dir.path(), &folder);
    a_cancel_kills_the_engine(dir.path(), folder);
}

/// The engine fails after its early summaries (the NVTX ranges'): the ranks panel keeps them,
/// and one line says the phases' work is missing and why.
fn an_engine_failing_after_its_early_summaries_keeps_them(dir: &Path, folder: &Path) {
    let reports = sightline::loader::ranks::reports_in(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jobs/straggler"),
    )
    .expect("the recorded job");
    let never = std::sync::atomic::AtomicBool::new(false);
    let ranks = sightline::loader::ranks::load_nvtx_of_ranks(&reports, 2, &|_| {}, &never)
        .expect("its NVTX ranges");
    let analysis = analyze_job(&ranks, &StragglerThresholds::default());
    let mut early = JobSummaries::of_job(&ranks, analysis);
    early.complete = false;
    let document = dir.join("early.json");
    std::fs::write(&document, early.to_json().expect("json") + "\n").expect("written");
    let engine = script(
        dir,
        "early-then-lost",
        &format!(
            "cat {}; echo 'sightline: the executor was lost' >&2; exit 1",
            document.display()
        ),
    );
    // SAFETY: as in `error_with_engine`.
    unsafe { std::env::set_var("SIGHTLINE_ENGINE", &engine) };
    let mut app = SightlineApp::default();
    app.open(folder.to_path_buf());
    let view = app.job_view_mut().expect("a job tab");
    view.wait();
    assert_eq!(view.error, None, "the job stays open");
    assert_eq!(view.ranks.len(), 4);
    assert!(view.analysis.as_ref().is_some_and(|a| a.straggler.is_ok()));
    let why = view.engine_failed.clone().expect("the failure said");
    assert!(why.ends_with("sightline: the executor was lost"), "{why}");
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h.get_by_label_contains("the phases' GPU work was not computed");
    h.get_by_label_contains("Straggler: rank 2 reaches");
}

/// A cancel while the engine works kills it: the open ends at once, the engine process gone.
fn a_cancel_kills_the_engine(dir: &Path, folder: PathBuf) {
    let pid_file = dir.join("engine.pid");
    let slow = script(
        dir,
        "slow",
        &format!("echo $$ > {}; exec sleep 60", pid_file.display()),
    );
    // SAFETY: as in `error_with_engine`.
    unsafe { std::env::set_var("SIGHTLINE_ENGINE", &slow) };
    let mut view = sightline::app::panels::job_view::JobView::open_parquet(folder, None);
    let started = std::time::Instant::now();
    while !pid_file.exists()
        || std::fs::read_to_string(&pid_file)
            .unwrap_or_default()
            .trim()
            .is_empty()
    {
        assert!(started.elapsed().as_secs() < 30, "the engine never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = std::fs::read_to_string(&pid_file)
        .expect("its pid")
        .trim()
        .to_string();
    assert!(
        Path::new(&format!("/proc/{pid}")).exists(),
        "the engine runs"
    );
    view.load_cancel_flag()
        .store(true, std::sync::atomic::Ordering::Relaxed);
    view.wait();
    assert!(!view.is_loading());
    assert!(
        started.elapsed().as_secs() < 30,
        "the open waited for the engine"
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the engine {pid} was killed"
    );
}
