//! A job holds its ranks and little else (issue 42: "memory ≤ 1.1 × the sum of the ranks loaded
//! alone"): the live heap an open job adds, against what each of its reports adds loaded alone.
//!
//! The live heap (glibc's `mallinfo2`: bytes handed out and not given back), not the resident
//! set: loaded one after another in one process, each report reuses the pages the one before
//! freed, so their resident sets sum to a fraction of what they hold (the job bench's first
//! measure: 35 MB for eight reports of 37 MB each). One test in this binary: no other test's
//! allocations run meanwhile.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sightline::app::panels::job_view::JobView;

fn live_heap() -> u64 {
    // SAFETY: mallinfo2 takes no pointer and returns a plain struct.
    let info = unsafe { libc::mallinfo2() };
    (info.uordblks + info.hblkhd) as u64
}

fn reports(job: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jobs")
        .join(job);
    sightline::loader::ranks::reports_in(&dir).expect("the job's reports")
}

#[test]
fn an_open_job_holds_no_more_than_its_ranks_loaded_alone() {
    let paths = reports("balanced");
    // Each report alone: what it adds while held.
    let mut alone = 0;
    for path in &paths {
        let before = live_heap();
        let trace = sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
            .expect("a rank's report loads");
        alone += live_heap().saturating_sub(before);
        drop(trace);
    }
    // The job as the window opens it: loaded in parallel, drawn as the ranks come, analysed.
    let before = live_heap();
    let mut view = JobView::open(paths.clone(), None);
    view.wait();
    assert_eq!(view.error, None);
    assert_eq!(view.ranks.len(), paths.len());
    let job = live_heap().saturating_sub(before);
    let ratio = job as f64 / alone as f64;
    eprintln!(
        "job {} kB, ranks alone {} kB in all: {ratio:.3}",
        job / 1024,
        alone / 1024
    );
    assert!(
        ratio <= 1.1,
        "the open job holds {ratio:.2} × its ranks alone ({job} against {alone} bytes)"
    );
    drop(view);
}
