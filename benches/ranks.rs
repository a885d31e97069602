//! Cross-rank analysis benchmark (issue 42): the straggler finding of a job, its reports
//! already loaded (what `analyze` adds to the ranks' own findings).
//!
//! `SIGHTLINE_BENCH_JOB=DIR cargo bench --bench ranks` (a folder of `rankK.sqlite`, e.g. made
//! by `sightline synth --ranks 64`); without it, 64 ranks of the recorded DDP job's rank 0
//! (16 iterations) are made in a temporary folder first. Prints the load time and the
//! median of 5 runs of the straggler finding.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use sightline::analysis::ranks::{StragglerThresholds, analyze_job};
use sightline::loader::ranks::{load_ranks, reports_in};

fn job_folder(keep: &mut Option<tempfile::TempDir>) -> PathBuf {
    if let Some(dir) = std::env::var_os("SIGHTLINE_BENCH_JOB") {
        return PathBuf::from(dir);
    }
    use sightline::synth::job::{JobSpec, StragglerSpec, write_job};
    let source =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jobs/balanced/rank0.sqlite");
    let trace = sightline::loader::load(&source, &mut |_| {}, &AtomicBool::new(false))
        .expect("the fixture loads");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let spec = JobSpec {
        ranks: 64,
        clock_spread_ns: 90_000_000,
        straggler: Some(StragglerSpec {
            rank: 37,
            phase: "forward".into(),
            extra_ns: 20_000_000,
        }),
    };
    write_job(
        &trace,
        &spec,
        dir.path(),
        &mut |_| {},
        &AtomicBool::new(false),
    )
    .expect("written");
    let path = dir.path().to_path_buf();
    *keep = Some(dir);
    path
}

fn main() {
    let mut keep = None;
    let dir = job_folder(&mut keep);
    let paths = reports_in(&dir).expect("reports");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t0 = Instant::now();
    let job = load_ranks(&paths, cores, &|_| {}, &AtomicBool::new(false)).expect("the job loads");
    println!(
        "{} ranks loaded in {:.2} s",
        job.len(),
        t0.elapsed().as_secs_f64()
    );
    let mut times: Vec<Duration> = Vec::new();
    let mut analysis = None;
    for _ in 0..5 {
        let t = Instant::now();
        analysis = Some(analyze_job(&job, &StragglerThresholds::default()));
        times.push(t.elapsed());
    }
    times.sort();
    if let Some(a) = analysis {
        println!(
            "{} common iterations; straggler: {}",
            a.iterations.common.len(),
            match &a.straggler {
                Ok(s) => format!(
                    "rank {} in '{}', iterations {}-{}",
                    s.rank,
                    s.excess_phase,
                    s.first(),
                    s.last()
                ),
                Err(why) => why.to_string(),
            }
        );
    }
    println!(
        "straggler finding: median {:.1} ms (min {:.1}, max {:.1}) over 5 runs",
        ms(times[2]),
        ms(times[0]),
        ms(times[4])
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
