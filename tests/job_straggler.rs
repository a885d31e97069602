//! The straggler of a job, on the recorded 4-rank DDP jobs (rank 2 slowed in `forward` on
//! steps 10..19 of `straggler/`; nobody in `balanced/`) and on synthetic jobs.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use sightline::analysis::ranks::{
    NoStraggler, StragglerThresholds, analyze_job, job_iterations, phase_spreads,
};
use sightline::model::Ranks;

fn job(dir: &Path) -> Ranks {
    let paths = sightline::loader::ranks::reports_in(dir).expect("reports");
    sightline::loader::ranks::load_ranks(&paths, 2, &|_| {}, &AtomicBool::new(false))
        .expect("the job loads")
}

/// A per-step section of `measured-*.txt` (`## PHASE duration per step (ms)`): step → the
/// ranks' durations, ms.
fn measured(file: &str, phase: &str) -> Vec<(u64, Vec<f64>)> {
    let text = std::fs::read_to_string(common::fixture(&format!("jobs/{file}"))).expect("measured");
    let heading = format!("## {phase} duration per step (ms)");
    text.lines()
        .skip_while(|l| *l != heading)
        .skip(2)
        .take_while(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut cells = l.split_whitespace();
            let step = cells.next().and_then(|c| c.parse().ok()).expect("a step");
            (step, cells.map(|c| c.parse().expect("ms")).collect())
        })
        .collect()
}

fn at(table: &[(u64, Vec<f64>)], step: u64) -> &[f64] {
    &table
        .iter()
        .find(|(n, _)| *n == step)
        .expect("measured step")
        .1
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
fn the_recorded_straggler_is_rank_2_in_forward_over_steps_10_to_19() {
    let job = job(&common::fixture("jobs/straggler"));
    let analysis = analyze_job(&job, &StragglerThresholds::default());
    let s = analysis.straggler.as_ref().expect("a straggler");
    assert_eq!(s.rank, 2);
    assert_eq!(s.sync_phase, "backward");
    assert_eq!(s.excess_phase, "forward");
    // Step 20 is slow on every rank alike (rank 2 no later than the others): not the straggler's.
    assert_eq!((s.first(), s.last()), (10, 19));
    assert_eq!(s.excess.len(), 10);

    // The others' wait: their backward beyond its balanced length, as measured from the full
    // recording (backward minus the median over steps 1..9 and 20..29, the calm steps).
    let backward = measured("measured-straggler.txt", "backward");
    let forward = measured("measured-straggler.txt", "forward");
    assert_eq!(backward.len(), 30);
    for wait in &s.waits {
        let r = wait.rank as usize;
        let calm = median(
            (backward.iter())
                .filter(|(n, _)| (1..=9).contains(n) || (20..=29).contains(n))
                .map(|(_, b)| b[r])
                .collect(),
        );
        for &(n, ns) in &wait.per_iteration {
            let expected_ms = at(&backward, n)[r] - calm;
            let got_ms = ns as f64 / 1e6;
            assert!(
                (got_ms - expected_ms).abs() < 0.5,
                "rank {r} step {n}: wait {got_ms:.2} ms, measured {expected_ms:.2} ms"
            );
        }
        let typical = median(
            wait.per_iteration
                .iter()
                .map(|w| w.1 as f64 / 1e6)
                .collect(),
        );
        assert!((11.0..13.5).contains(&typical), "rank {r}: {typical} ms");
    }
    // The excess lies in forward: rank 2's forward less the others' (measured), per step.
    let forward_excess = median(
        (forward.iter())
            .filter(|(n, _)| (10..=19).contains(n))
            .map(|(_, f)| f[2] - median(vec![f[0], f[1], f[3]]))
            .collect(),
    );
    let got = s.phase_excess_median as f64 / 1e6;
    assert!(
        (got - forward_excess).abs() < 0.5,
        "{got} vs {forward_excess}"
    );
    let d = analysis.difference.expect("what rank 2 did");
    assert_eq!(
        d.kernels.round() as i64,
        8,
        "8 extra matmuls per slowed step"
    );
    assert!(d.outside_cuda_ns > 15_000_000, "the 20 ms CPU burn: {d:?}");
}

#[test]
fn the_balanced_job_has_no_straggler() {
    let job = job(&common::fixture("jobs/balanced"));
    let analysis = analyze_job(&job, &StragglerThresholds::default());
    match analysis.straggler {
        Err(NoStraggler::Balanced {
            sync_phase,
            largest_excess,
        }) => {
            assert_eq!(sync_phase, "backward");
            assert!(largest_excess < 1_000_000, "{largest_excess}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn aligned_the_ranks_end_backward_within_a_millisecond() {
    for name in ["balanced", "straggler"] {
        let job = job(&common::fixture(&format!("jobs/{name}")));
        let iterations = job_iterations(&job);
        assert_eq!(iterations.common, (6..=21).collect::<Vec<u64>>(), "{name}");
        let spreads = phase_spreads(&iterations, "backward");
        assert_eq!(spreads.len(), 16);
        for s in spreads {
            assert!(
                s.end_spread < 1_000_000,
                "{name} step {}: {} ns",
                s.number,
                s.end_spread
            );
        }
    }
}

/// A job of `ranks` copies of the balanced job's rank 0, sessions 30 ms apart, maybe slowed.
fn synthetic(ranks: u32, straggler: Option<(u32, &str, i64)>) -> (tempfile::TempDir, Ranks) {
    use sightline::synth::job::{JobSpec, StragglerSpec, write_job};
    let source = common::load("jobs/balanced/rank0.sqlite");
    let dir = tempfile::tempdir().expect("a folder");
    let spec = JobSpec {
        ranks,
        clock_spread_ns: 30_000_000,
        straggler: straggler.map(|(rank, phase, extra_ns)| StragglerSpec {
            rank,
            phase: phase.to_string(),
            extra_ns,
        }),
    };
    write_job(
        &source,
        &spec,
        dir.path(),
        &mut |_| {},
        &AtomicBool::new(false),
    )
    .expect("written");
    let ranks = job(dir.path());
    (dir, ranks)
}

#[test]
fn a_synthetic_straggler_is_found_where_it_was_put() {
    for (ranks, slow, extra) in [(3, 1, 15_000_000), (8, 7, 6_000_000)] {
        let (_dir, job) = synthetic(ranks, Some((slow, "forward", extra)));
        assert_eq!(job.len(), ranks as usize);
        let starts: std::collections::BTreeSet<i64> = job
            .ranks
            .iter()
            .filter_map(|r| r.trace.info.session_start_utc_ns)
            .collect();
        assert_eq!(
            starts.len(),
            ranks as usize,
            "each rank its own session start"
        );
        let analysis = analyze_job(&job, &StragglerThresholds::default());
        let s = analysis.straggler.expect("found");
        assert_eq!(
            (s.rank, s.excess_phase.as_str(), s.sync_phase.as_str()),
            (slow, "forward", "backward")
        );
        assert_eq!((s.first(), s.last()), (6, 21));
        assert_eq!(s.excess_median, extra);
        assert_eq!(s.waits.len(), ranks as usize - 1);
        assert!(
            s.waits
                .iter()
                .all(|w| w.per_iteration.iter().all(|p| p.1 == extra)),
            "{:?}",
            s.waits
        );
    }
}

#[test]
fn a_synthetic_job_without_a_straggler_has_none() {
    let (_dir, job) = synthetic(5, None);
    let iterations = job_iterations(&job);
    assert!(
        phase_spreads(&iterations, "backward")
            .iter()
            .all(|s| s.end_spread == 0),
        "aligned exactly"
    );
    let analysis = analyze_job(&job, &StragglerThresholds::default());
    assert!(
        matches!(analysis.straggler, Err(NoStraggler::Balanced { .. })),
        "{:?}",
        analysis.straggler
    );
    // Slowed by less than the bar (1 ms): still none.
    let (_dir, job) = synthetic(4, Some((2, "forward", 500_000)));
    let analysis = analyze_job(&job, &StragglerThresholds::default());
    assert!(analysis.straggler.is_err());
}

#[test]
fn an_unaligned_job_gets_no_straggler_and_says_why() {
    let (dir, _) = synthetic(3, Some((1, "forward", 15_000_000)));
    let conn = rusqlite::Connection::open(dir.path().join("rank2.sqlite")).expect("opens");
    conn.execute("DELETE FROM TARGET_INFO_SESSION_START_TIME", [])
        .expect("deleted");
    drop(conn);
    let job = job(dir.path());
    let analysis = analyze_job(&job, &StragglerThresholds::default());
    assert_eq!(
        analysis.straggler.as_ref().err(),
        Some(&NoStraggler::Unaligned)
    );
    assert!(
        analysis
            .straggler
            .unwrap_err()
            .to_string()
            .contains("not on one clock")
    );
}
