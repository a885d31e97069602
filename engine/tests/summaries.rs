//! The engine's summaries of a job (`sightline-engine summaries`: what the window opens a
//! Parquet job folder on) are the window's own: the ranks, their offsets and NVTX spans, the
//! iterations and phases, the straggler and its work, as the window finds them from the job
//! loaded in memory; from the `.sqlite` reports and from their Parquet export.

mod common;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use common::{engine_output, export, reports};
use sightline::analysis::ranks::{JobSummaries, StragglerThresholds, analyze_job};

/// The summaries the window makes of the reports `paths` loaded in memory.
fn in_window(paths: &[PathBuf]) -> JobSummaries {
    let ranks =
        sightline::loader::ranks::load_ranks(paths, 2, &|_| {}, &AtomicBool::new(false)).unwrap();
    let analysis = analyze_job(&ranks, &StragglerThresholds::default());
    JobSummaries::of_job(&ranks, analysis)
}

/// The engine's summaries of `inputs`.
fn on_engine(inputs: &[PathBuf]) -> JobSummaries {
    let json = engine_output("summaries", &[], inputs);
    JobSummaries::from_json(&json).unwrap()
}

/// `summaries` with what may differ by design made alike: the reports' paths absolute (the
/// export records them so), and each rank's iterations' thread (the window's is its index of
/// the thread in the report, the engine's the thread id), which the view does not show.
fn comparable(mut s: JobSummaries) -> String {
    for r in &mut s.ranks {
        r.path = std::path::absolute(&r.path).unwrap();
    }
    for r in &mut s.analysis.iterations.ranks {
        r.thread = 0;
    }
    format!("{s:#?}")
}

fn assert_same(window: &JobSummaries, engine: JobSummaries, what: &str) {
    let (window, engine) = (comparable(window.clone()), comparable(engine));
    if window != engine {
        let at = (window.lines().zip(engine.lines()))
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let around = |text: &str| {
            text.lines()
                .skip(at.saturating_sub(8))
                .take(16)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{what}: the engine's summaries differ from the window's at line {at}:\n--- window\n{}\n--- engine\n{}",
            around(&window),
            around(&engine)
        );
    }
}

#[test]
fn the_summaries_of_the_recorded_job_are_the_windows_from_the_reports_and_from_parquet() {
    let paths = reports("straggler");
    let window = in_window(&paths);
    // The rule is exercised: a straggler with its work, iterations with phases, spans.
    assert!(
        window.analysis.straggler.is_ok(),
        "{:?}",
        window.analysis.straggler
    );
    assert!(window.analysis.difference.is_some());
    assert!(window.ranks.iter().all(|r| r.span.is_some()));
    assert!(window.analysis.iterations.phase_names.len() >= 2);
    let dir = tempfile::tempdir().unwrap();
    let folder = export("straggler", dir.path());
    assert_same(&window, on_engine(&paths), "the reports");
    assert_same(&window, on_engine(&[folder]), "their Parquet export");
}

#[test]
fn the_summaries_of_a_job_of_many_ranks_are_the_windows() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, folder) = common::many_ranks(dir.path());
    let window = in_window(&paths);
    let slowed = common::MANY_RANKS - 2;
    assert_eq!(window.ranks.len(), common::MANY_RANKS as usize);
    assert_eq!(
        window.analysis.straggler.as_ref().map(|s| s.rank),
        Ok(slowed)
    );
    assert_same(&window, on_engine(&[folder]), "the Parquet export");
}

/// The engine's first document (`summaries --early`) is the window's own NVTX pass: each
/// rank's NVTX ranges alone, analysed (no phase's GPU work, no difference said).
#[test]
fn the_early_summaries_are_the_windows_nvtx_pass() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, folder) = common::many_ranks(dir.path());
    let ranks =
        sightline::loader::ranks::load_nvtx_of_ranks(&paths, 2, &|_| {}, &AtomicBool::new(false))
            .unwrap();
    let mut analysis = analyze_job(&ranks, &StragglerThresholds::default());
    analysis.difference = None;
    let mut window = JobSummaries::of_job(&ranks, analysis);
    window.complete = false;
    assert!(
        window.analysis.straggler.is_ok(),
        "{:?}",
        window.analysis.straggler
    );
    let out = engine_output("summaries", &["--early"], &[folder]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "the early document, then the whole one");
    let early = JobSummaries::from_json(lines[0]).unwrap();
    assert!(!early.complete);
    assert_same(&window, early, "the early summaries");
    let whole = JobSummaries::from_json(lines[1]).unwrap();
    assert!(whole.complete);
    assert!(whole.analysis.difference.is_some());
}

/// The balanced job: the engine says why there is no straggler, as the window does.
#[test]
fn the_balanced_jobs_summaries_say_why_no_straggler() {
    let paths = reports("balanced");
    let window = in_window(&paths);
    assert!(window.analysis.straggler.is_err());
    let dir = tempfile::tempdir().unwrap();
    let folder = export("balanced", dir.path());
    assert_same(&window, on_engine(&[folder]), "the Parquet export");
}
