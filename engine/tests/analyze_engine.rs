//! The engine's cross-rank findings are the window's: the straggler of a job computed by
//! DataFusion, from the `.sqlite` reports or from their Parquet export, is the finding (same
//! words, same numbers) that `sightline analyze` gives for the job loaded in memory, and the
//! balanced job has none. The recorded jobs: rank 2 slowed in `forward` on steps 10–19.

mod common;

use std::sync::atomic::AtomicBool;

use common::{engine_analyze, export, reports};
use sightline::analysis::ranks::{
    StragglerThresholds, analyze_job, cross_rank_text, straggler_json,
};

/// What `sightline analyze` prints after "cross-rank:" for the job loaded in memory; its JSON
/// line where there is a straggler.
fn in_memory(job: &str) -> (String, Option<String>) {
    let ranks =
        sightline::loader::ranks::load_ranks(&reports(job), 2, &|_| {}, &AtomicBool::new(false))
            .unwrap();
    let analysis = analyze_job(&ranks, &StragglerThresholds::default());
    let text = cross_rank_text(&analysis.straggler, analysis.difference.as_ref());
    let json = (analysis.straggler.as_ref().ok())
        .map(|s| straggler_json(s, analysis.difference.as_ref()) + "\n");
    (text, json)
}

#[test]
fn the_straggler_on_the_engine_is_the_windows_from_the_reports_and_from_parquet() {
    let (text, json) = in_memory("straggler");
    assert!(
        text.contains("rank 2 reaches"),
        "the recorded straggler: {text}"
    );
    let json = json.expect("a straggler");
    let dir = tempfile::tempdir().unwrap();
    let folder = export("straggler", dir.path());
    for input in [reports("straggler"), vec![folder]] {
        assert_eq!(
            engine_analyze(&input, &["--format", "table"]),
            format!("cross-rank:\n{text}"),
            "{input:?}"
        );
        assert_eq!(
            engine_analyze(&input, &["--format", "json"]),
            json,
            "{input:?}"
        );
    }
}

#[test]
fn the_balanced_job_has_no_straggler_on_the_engine_either() {
    let (text, json) = in_memory("balanced");
    assert!(text.starts_with("no straggler"), "{text}");
    assert_eq!(json, None);
    assert_eq!(
        engine_analyze(&reports("balanced"), &["--format", "table"]),
        format!("cross-rank:\n{text}")
    );
    assert_eq!(
        engine_analyze(&reports("balanced"), &["--format", "json"]),
        ""
    );
}
