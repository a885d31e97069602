//! `range-ends-before-gpu-work` warns only where a range is used as a timer:
//! its name says so, it records CUDA events around its work, or a sync in it waits for part of
//! its own work. A phase of a loop iteration that waits for its work as a
//! whole (a training step ending with `loss.item()`) gets nothing; any other
//! range that ends before its work at most an info note. On copies of the
//! `pipelined-loop` case of timing_cases (`step` › forward/backward/optimizer,
//! a stream sync ending each step), edited to hold each piece of evidence.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use rusqlite::Connection;
use sightline::analysis::findings::{Finding, FindingKind, Severity, Thresholds, analyze};
use sightline::model::{NvtxKind, Trace};

const CASE: &str = "case:pipelined-loop";

fn load(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false)).expect("loads")
}

/// A copy of timing_cases edited by `edit`, loaded.
fn edited(edit: impl FnOnce(&Connection, &Trace)) -> Trace {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("timing_cases.sqlite");
    std::fs::copy(common::fixture("timing_cases.sqlite"), &path).expect("copy");
    let original = load(&path);
    {
        let conn = Connection::open(&path).expect("open copy");
        edit(&conn, &original);
    }
    load(&path)
}

/// Start and end of every range named `name` inside the case, by start.
fn ranges(trace: &Trace, name: &str) -> Vec<(i64, i64)> {
    let spans = &trace.nvtx.spans;
    let case = (0..spans.len())
        .find(|&i| trace.name(spans.name[i]) == CASE)
        .map(|i| (spans.start[i], spans.end(i)))
        .expect("the case");
    let mut out: Vec<(i64, i64)> = (0..spans.len())
        .filter(|&i| trace.nvtx.kind[i] != NvtxKind::Mark && trace.name(spans.name[i]) == name)
        .map(|i| (spans.start[i], spans.end(i)))
        .filter(|&(s, e)| s >= case.0 && e <= case.1)
        .collect();
    out.sort_unstable();
    out
}

/// Every `range-ends-before-gpu-work` finding of `trace`.
fn all_ends_before(trace: &Trace) -> Vec<Finding> {
    analyze(trace, None, &Thresholds::default(), &AtomicBool::new(false))
        .expect("not cancelled")
        .into_iter()
        .filter(|f| f.kind == FindingKind::RangeEndsBeforeGpuWork)
        .collect()
}

/// Those inside the case.
fn ends_before(trace: &Trace) -> Vec<Finding> {
    let (start, end) = ranges(trace, CASE)[0];
    (all_ends_before(trace).into_iter())
        .filter(|f| f.start >= start && f.end <= end)
        .collect()
}

/// The CUDA API calls (start, end, globalTid) inside `[from, to)`, by start.
fn calls_in(conn: &Connection, from: i64, to: i64) -> Vec<(i64, i64, i64)> {
    let mut q = conn
        .prepare(
            "SELECT start, end, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME
             WHERE start >= ?1 AND start < ?2 ORDER BY start",
        )
        .expect("query");
    q.query_map((from, to), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect()
}

/// Adds a call named `name` on thread `tid` over `[start, end]`, with a
/// correlation id of its own.
fn add_call(conn: &Connection, name: &str, start: i64, end: i64, tid: i64) {
    conn.execute(
        "INSERT INTO StringIds (id, value) SELECT max(id) + 1, ?1 FROM StringIds
         WHERE NOT EXISTS (SELECT 1 FROM StringIds WHERE value = ?1)",
        [name],
    )
    .expect("name");
    conn.execute(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
           (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
         SELECT ?1, ?2, 1, ?3, (SELECT max(correlationId) + 1000 FROM CUPTI_ACTIVITY_KIND_RUNTIME),
           (SELECT id FROM StringIds WHERE value = ?4), 0",
        (start, end, tid, name),
    )
    .expect("call");
}

/// As recorded: each step ends with a stream sync that waits for all of its
/// phases' work, so the phases that end before their work get nothing (they
/// had an info note each, and before that warnings).
#[test]
fn phases_of_a_step_that_waits_get_nothing() {
    let trace = load(&common::fixture("timing_cases.sqlite"));
    assert_eq!(ranges(&trace, "step").len(), 8);
    let found = ends_before(&trace);
    assert!(found.is_empty(), "{found:#?}");
}

/// The steps' syncs made calls that do not wait: now nothing in the loop
/// waits for the phases' work, yet nothing says they are timers either: info
/// notes, no warning and no advice to synchronize for a phase.
#[test]
fn phases_whose_step_does_not_wait_get_at_most_a_note() {
    let trace = edited(|conn, _| {
        conn.execute(
            "INSERT INTO StringIds (id, value) SELECT max(id) + 1, 'cudaStreamQuery_v3020' FROM StringIds",
            [],
        )
        .expect("name");
        conn.execute(
            "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId =
               (SELECT id FROM StringIds WHERE value = 'cudaStreamQuery_v3020')
             WHERE nameId = (SELECT id FROM StringIds WHERE value = 'cudaStreamSynchronize_v3020')",
            [],
        )
        .expect("update");
    });
    let found = ends_before(&trace);
    assert!(!found.is_empty());
    for f in &found {
        assert_eq!(f.severity, Severity::Info, "{f:?}");
    }
}

/// A phase that records CUDA events around its work (a start event before its first launch,
/// a stop event after its last) times with them: it warns, the others of the loop do not.
#[test]
fn a_phase_that_records_events_around_its_work_is_a_timer() {
    let mut target = 0;
    let trace = edited(|conn, trace| {
        let forward = ranges(trace, "forward")[2];
        target = forward.0;
        let calls = calls_in(conn, forward.0, forward.1);
        let (first, _, tid) = calls[0];
        let (_, last, _) = calls[calls.len() - 1];
        add_call(conn, "cudaEventRecord_v3020", first - 300, first - 200, tid);
        add_call(conn, "cudaEventRecord_v3020", last + 10, last + 20, tid);
    });
    let found = ends_before(&trace);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].start, target);
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(
        found[0].message.contains("records CUDA events"),
        "{}",
        found[0].message
    );
}

/// Events recorded before a phase's first launch and between its launches, none after its
/// last, are a framework's (PyTorch's DDP records two in every `forward`), not a timer: the
/// phase of a step that waits for its work gets nothing.
#[test]
fn events_recorded_between_a_phases_launches_are_not_a_timer() {
    let trace = edited(|conn, trace| {
        let forward = ranges(trace, "forward")[2];
        let calls = calls_in(conn, forward.0, forward.1);
        assert!(calls.len() >= 2, "launches to record between");
        let (first, _, tid) = calls[0];
        let (_, first_end, _) = calls[0];
        add_call(conn, "cudaEventRecord_v3020", first - 300, first - 200, tid);
        add_call(
            conn,
            "cudaEventRecordWithFlags_v11010",
            first_end + 5,
            first_end + 8,
            tid,
        );
    });
    let found = ends_before(&trace);
    assert!(found.is_empty(), "{found:#?}");
}

/// A PyTorch DDP job (4 ranks, each under its own nsys; each `step N` ends with
/// `torch.cuda.synchronize()`): its `forward` phases end before their kernels and record
/// DDP's events, and no rank gets a `range-ends-before-gpu-work` warning for them.
#[test]
fn a_ddp_training_steps_phases_get_no_timer_warning() {
    for rank in 0..4 {
        let trace = common::load(&format!("jobs/straggler/rank{rank}.sqlite"));
        let warned: Vec<Finding> = (all_ends_before(&trace).into_iter())
            .filter(|f| f.severity == Severity::Warning)
            .collect();
        assert!(warned.is_empty(), "rank {rank}: {warned:#?}");
    }
}

/// A sync in a phase that waits for part of its work (its first kernel),
/// after which it launches more that outlasts it: a timer that synchronized
/// too early. It warns.
#[test]
fn a_sync_that_waits_for_part_of_the_work_is_a_timer() {
    let mut target = 0;
    let trace = edited(|conn, trace| {
        let forward = ranges(trace, "forward")[4];
        target = forward.0;
        let calls = calls_in(conn, forward.0, forward.1);
        let (_, second_end, tid) = calls[1];
        add_call(
            conn,
            "cudaStreamSynchronize_v3020",
            second_end + 10,
            second_end + 20,
            tid,
        );
    });
    let found = ends_before(&trace);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].start, target);
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(
        found[0].message.contains("waits for part of its work"),
        "{}",
        found[0].message
    );
}

/// In the nvFuser-like recording, `runKernel` (inside `runFusionWithInputs`,
/// inside `iteration N`) ends before its kernels, and the iteration's
/// `measure` synchronizes after it: a phase two deep in an iteration that
/// waits for its work gets nothing either.
#[test]
fn a_phase_deep_in_a_waiting_iteration_gets_nothing() {
    let trace = common::load("fuser_like/fuser_like.sqlite");
    let found = all_ends_before(&trace);
    assert!(found.is_empty(), "{found:#?}");
}
