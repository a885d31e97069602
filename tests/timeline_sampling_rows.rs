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

/// The sampler's marks are the thread's Python samples, and only that: no NVTX events of the
/// trace (nor of the nsys NVTX reports, which count ranges), no lane.
#[test]
fn python_sampling_marks_are_not_an_nvtx_lane() {
    let path = common::fixture("torch_loop_py/torch_loop.sqlite");
    let marks: i64 = rusqlite::Connection::open(&path)
        .expect("opens")
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34 AND domainId IN
               (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = ?1)",
            [PYTHON_SAMPLING_DOMAIN],
            |r| r.get(0),
        )
        .expect("count");
    assert!(marks > 0, "the report's Python samples are NVTX marks");
    let trace = common::load("torch_loop_py/torch_loop.sqlite");
    let python_samples: usize = (trace.cpu.threads.iter())
        .filter(|s| s.source == sightline::model::SampleSource::Python)
        .map(|s| s.len())
        .sum();
    assert_eq!(python_samples as i64, marks, "each mark is a Python sample");
    let in_nvtx = (trace.threads.iter())
        .flat_map(|t| &t.nvtx)
        .filter(|n| n.domain == PYTHON_SAMPLING_DOMAIN)
        .count();
    assert_eq!(in_nvtx, 0, "not NVTX events of the trace");
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

/// Where a report's work is (`Trace::activity_span`: what a report or a job opens on) comes
/// from its GPU work and its program's NVTX ranges, not from the Python sampler's marks, which
/// run from the interpreter's start (a whole recording's first mark comes seconds before its
/// first kernel; this fixture is cut, so a copy gets one a second early): SQL over the report
/// gives the span without them.
#[test]
fn the_python_samplers_marks_are_not_where_the_work_is() {
    let dir = tempfile::TempDir::new().expect("a temporary folder");
    let path = dir.path().join("torch_loop.sqlite");
    std::fs::copy(common::fixture("torch_loop_py/torch_loop.sqlite"), &path).expect("copy");
    let db = rusqlite::Connection::open(&path).expect("opens");
    let (lo, hi): (i64, i64) = db
        .query_row(
            "WITH work(s, e) AS (
               SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL
               UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY
               UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET
               UNION ALL SELECT start, coalesce(end, start) FROM NVTX_EVENTS
                 WHERE eventType IN (34, 59, 60) AND domainId NOT IN
                   (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75
                      AND text = 'Python Periodic Sampling'))
             SELECT min(s), max(e) FROM work",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the work's span");
    db.execute(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, domainId, jsonText)
         SELECT ?1, NULL, 34, globalTid, domainId, jsonText FROM NVTX_EVENTS
         WHERE eventType = 34 ORDER BY start LIMIT 1",
        [lo - 1_000_000_000],
    )
    .expect("an early sample");
    drop(db);
    let trace = common::load_path(&path);
    assert!(trace.cpu.sample_count() > 0);
    assert_eq!(trace.activity_span(), Some((lo, hi)));
}
