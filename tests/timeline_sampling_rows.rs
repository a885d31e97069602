//! What nsys's sampling adds to a report is shown once, as CPU rows: the marks its Python
//! sampler writes into NVTX (one per sample, in the `Python Periodic Sampling` domain) are not
//! also an NVTX lane, and the threads nsys starts inside the profiled process to sample and
//! talk to its daemon (`[NSys]`, `[NSys Comms]`, `NSys PySampling`) get no rows of their own.

mod common;

use sightline::app::timeline::Timeline;
use sightline::model::samples::PYTHON_SAMPLING_DOMAIN;

fn labels(timeline: &Timeline) -> Vec<&str> {
    timeline.rows.iter().map(|r| r.label.as_str()).collect()
}

#[test]
fn python_sampling_marks_are_not_an_nvtx_lane() {
    let trace = common::load("torch_loop_py/torch_loop.sqlite");
    let marks_in_domain = (trace.threads.iter())
        .flat_map(|t| &t.nvtx)
        .filter(|n| n.domain == PYTHON_SAMPLING_DOMAIN)
        .map(|n| n.track.len())
        .sum::<usize>();
    assert!(
        marks_in_domain > 0,
        "the report's Python samples are NVTX marks"
    );
    let mut timeline = Timeline::new(&trace);
    let rows = labels(&timeline);
    assert!(
        !rows.iter().any(|l| l.contains(PYTHON_SAMPLING_DOMAIN)),
        "no lane of the sampler's marks: {rows:?}"
    );
    assert!(
        rows.iter().any(|l| l.starts_with("CPU samples (")),
        "the samples are shown as CPU samples: {rows:?}"
    );
    // A rank of a job drawn compact shows its busiest NVTX lane: the loop's, never the
    // sampler's (it has a mark per sample, more than the loop has ranges).
    timeline.compact = true;
    for r in timeline.visible_rows() {
        let label = &timeline.rows[r].label;
        assert!(
            !label.contains(PYTHON_SAMPLING_DOMAIN),
            "compact row {label}"
        );
    }
}

#[test]
fn nsys_own_threads_get_no_rows() {
    let trace = common::load("cpu_only_py/cpu_only.sqlite");
    let own: Vec<String> = (trace.threads.iter())
        .filter(|t| t.name.starts_with("[NSys") || t.name.starts_with("NSys "))
        .map(|t| format!("{} [{}]", t.name, t.tid))
        .collect();
    let sampled_own = own.iter().filter(|l| {
        let tid = l
            .rsplit('[')
            .next()
            .unwrap_or_default()
            .trim_end_matches(']');
        (trace.threads.iter().enumerate())
            .filter(|(_, t)| t.tid.to_string() == tid)
            .any(|(i, _)| {
                trace
                    .cpu
                    .sched_of(i as u32)
                    .is_some_and(|s| !s.at.is_empty())
            })
    });
    assert!(
        sampled_own.count() > 0,
        "nsys's threads were scheduled: {own:?}"
    );
    let timeline = Timeline::new(&trace);
    let rows = labels(&timeline);
    for label in &own {
        let row_of_it = rows.iter().any(|l| l.starts_with(label.as_str()));
        assert!(!row_of_it, "a row for {label}: {rows:?}");
    }
    assert!(
        rows.iter().any(|l| l.starts_with("python3 [")),
        "the program's threads keep theirs: {rows:?}"
    );
}
