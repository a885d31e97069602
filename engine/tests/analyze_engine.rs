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
    in_memory_of(&reports(job))
}

/// [`in_memory`] of the reports `paths`.
fn in_memory_of(paths: &[std::path::PathBuf]) -> (String, Option<String>) {
    let ranks =
        sightline::loader::ranks::load_ranks(paths, 2, &|_| {}, &AtomicBool::new(false)).unwrap();
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

/// A job of more ranks than one of the engine's queries takes (the phases' work is asked a few
/// ranks at a time): the same finding, words and numbers, as the job loaded in memory.
#[test]
fn a_job_of_many_ranks_has_the_windows_straggler_on_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, folder) = common::many_ranks(dir.path());
    let (text, json) = in_memory_of(&paths);
    assert!(
        text.contains(&format!("rank {} reaches", common::MANY_RANKS - 2)),
        "the slowed rank: {text}"
    );
    assert_eq!(
        engine_analyze(std::slice::from_ref(&folder), &["--format", "table"]),
        format!("cross-rank:\n{text}")
    );
    assert_eq!(
        engine_analyze(&[folder], &["--format", "json"]),
        json.expect("a straggler")
    );
}

/// Each phase's work (kernels, their GPU time, time outside CUDA) as the engine's plans give it,
/// asked a few ranks at a time, is the window's, phase by phase on every rank of a job of more
/// ranks than one query takes.
#[test]
fn every_phases_work_on_the_engine_is_the_windows_rank_by_rank() {
    use sightline::analysis::ranks::{job_iterations, phase_work};
    use sightline_engine::query::{context, iterations, sources::JobSource};
    let ranks = common::MANY_RANKS;
    let dir = tempfile::tempdir().unwrap();
    let (paths, folder) = common::many_ranks(dir.path());
    let job =
        sightline::loader::ranks::load_ranks(&paths, 2, &|_| {}, &AtomicBool::new(false)).unwrap();
    let found = job_iterations(&job);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let engine = runtime
        .block_on(async {
            let ctx = context::embedded(None)?;
            JobSource::of(&[folder]).register(&ctx).await?;
            iterations::engine_iterations(&ctx).await
        })
        .unwrap();
    let mut compared = 0;
    for (i, it) in found.ranks.iter().enumerate() {
        let rank = job.ranks.iter().find(|r| r.number == it.rank).unwrap();
        for (number, iteration) in &it.iterations {
            for phase in &iteration.phases {
                let key = (i, *number, phase.name.clone());
                let want = phase_work(rank, it.thread, phase);
                assert_eq!(
                    engine.work.get(&key),
                    Some(&want),
                    "rank {} iteration {number} {}",
                    it.rank,
                    phase.name
                );
                compared += 1;
            }
        }
    }
    assert_eq!(found.ranks.len(), ranks as usize);
    assert!(compared >= ranks as usize * 10, "{compared} phases");
}
