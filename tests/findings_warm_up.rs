//! `warm-up-included` only where there is warm-up: a repeated range with GPU
//! work whose first instance's excess is one-time CUDA work. Never on ranges
//! without GPU work (a compiler's CPU-only passes, long the first time), and
//! never where the first instance's excess is a sync waiting for earlier
//! queued work (`range-waits-on-earlier-work`'s verdict, which it must not
//! contradict). On copies of sync_timing edited to hold each case.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use rusqlite::Connection;
use sightline::analysis::findings::{Finding, FindingKind, Thresholds, analyze};
use sightline::model::Trace;

fn load(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false)).expect("loads")
}

fn edited(edit: impl FnOnce(&Connection)) -> Vec<Finding> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sync_timing.sqlite");
    std::fs::copy(common::fixture("sync_timing.sqlite"), &path).expect("copy");
    {
        let conn = Connection::open(&path).expect("open copy");
        edit(&conn);
    }
    analyze(
        &load(&path),
        None,
        &Thresholds::default(),
        &AtomicBool::new(false),
    )
    .expect("not cancelled")
}

fn of_kind(found: &[Finding], kind: FindingKind) -> Vec<&Finding> {
    found.iter().filter(|f| f.kind == kind).collect()
}

/// Ten CPU-only `compile` ranges on the program's thread after its CUDA work
/// (no CUDA call in them), the first 40× as long as the others, as a JIT
/// compiler's first pass is: no warm-up. Positive control: the same ranges
/// over the calls of the no-sync variant's launches are warm-up only where
/// the first holds one-time CUDA work, which these do not: none either.
#[test]
fn cpu_only_ranges_are_never_warm_up() {
    let found = edited(|conn| {
        let (tid, after): (i64, i64) = conn
            .query_row(
                "SELECT globalTid, (SELECT max(end) FROM NVTX_EVENTS) FROM NVTX_EVENTS LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("a range");
        let mut at = after + 1_000_000;
        for i in 0..10 {
            let length = if i == 0 { 2_000_000 } else { 50_000 };
            conn.execute(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid)
                 VALUES (?1, ?2, 59, 'compile', ?3, ?3)",
                (at, at + length, tid),
            )
            .expect("insert");
            at += length + 10_000;
        }
    });
    let warm = of_kind(&found, FindingKind::WarmUpIncluded);
    assert!(
        !warm.iter().any(|f| f.range.as_deref() == Some("compile")),
        "{warm:#?}"
    );
}

/// The first timed iteration of sync-after-only made to wait 2 ms in its sync
/// for the warm-up's last kernel (everything after it moved 2 ms later): its
/// excess is waiting for earlier queued work. range-waits-on-earlier-work
/// says so; warm-up-included must not say otherwise.
#[test]
fn waiting_for_earlier_work_is_not_warm_up() {
    const MORE: i64 = 2_000_000;
    let found = edited(|conn| {
        let first: (i64, i64) = conn
            .query_row(
                "SELECT t.start, t.end FROM NVTX_EVENTS t, NVTX_EVENTS v
                 WHERE t.text = 'timed-iteration' AND v.text = 'sync-after-only'
                   AND t.start >= v.start AND t.end <= v.end ORDER BY t.start LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("the first timed iteration");
        let (sync_start, sync_end): (i64, i64) = conn
            .query_row(
                "SELECT r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
                 WHERE s.value LIKE 'cudaDeviceSynchronize%' AND r.start > ?1 AND r.start < ?2",
                first,
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("its sync");
        // Everything from inside the sync on, 2 ms later: the sync (and the
        // ranges around it) 2 ms longer.
        let cut = sync_end - 1;
        for table in [
            "NVTX_EVENTS",
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        ] {
            conn.execute_batch(&format!(
                "UPDATE {table} SET start = start + {MORE} WHERE start >= {cut};
                 UPDATE {table} SET end = end + {MORE} WHERE end >= {cut};"
            ))
            .expect("shift");
        }
        // The warm-up's last kernel runs until just before the sync returns.
        conn.execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = ?1 WHERE rowid =
               (SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < ?2 ORDER BY end DESC LIMIT 1)",
            (sync_end + MORE - 500, sync_start),
        )
        .expect("stretch the kernel");
    });
    let waits = of_kind(&found, FindingKind::RangeWaitsOnEarlierWork);
    assert_eq!(waits.len(), 1, "{waits:#?}");
    let warm = of_kind(&found, FindingKind::WarmUpIncluded);
    assert!(
        !warm.iter().any(|f| f.start == waits[0].start),
        "both verdicts on one range: {warm:#?}"
    );
}

/// An nvFuser-like recording (`iteration N` › runFusionWithInputs ›
/// `IrContainer::clear`, `FusionKernelRuntime::compile` (CPU only, 25 ms the
/// first time), `runKernel` (four `cuLibraryLoadData` the first time);
/// `measure`, whose sync waits for the iteration's earlier kernels): every
/// warm-up found is on a range whose first instance launched GPU work and
/// whose span has no range-waits-on-earlier-work; none is on a range without
/// a CUDA call; the one-time library loading is found.
#[test]
fn fuser_like_warm_up_is_on_gpu_ranges_only() {
    let trace = common::load("fuser_like/fuser_like.sqlite");
    let found = analyze(
        &trace,
        None,
        &Thresholds::default(),
        &AtomicBool::new(false),
    )
    .expect("not cancelled");
    let warm = of_kind(&found, FindingKind::WarmUpIncluded);
    let waits = of_kind(&found, FindingKind::RangeWaitsOnEarlierWork);
    let api = &trace.cuda_api.spans;
    let kernels = &trace.kernels;
    for f in &warm {
        assert!(
            !waits.iter().any(|w| (w.start, w.end) == (f.start, f.end)),
            "{f:?}"
        );
        // A CUDA call in it, and one of its calls launched a kernel.
        let calls: Vec<usize> = (0..api.len())
            .filter(|&i| api.start[i] >= f.start && api.start[i] < f.end)
            .collect();
        let launched = calls.iter().any(|&i| {
            let c = trace.cuda_api.correlation[i];
            kernels.correlation.contains(&c)
        });
        assert!(launched, "warm-up on a range without GPU work: {f:?}");
    }
    for cpu_only in ["IrContainer::clear", "FusionKernelRuntime::compile"] {
        assert!(
            !warm
                .iter()
                .any(|f| f.range.as_deref().is_some_and(|r| r.ends_with(cpu_only))),
            "{cpu_only}: {warm:#?}"
        );
    }
    // Once, on the innermost range that paid it: `iteration 0` and
    // `runFusionWithInputs` around `runKernel` paid the same calls.
    assert_eq!(warm.len(), 1, "{warm:#?}");
    assert!(
        warm[0].message.contains("cuLibraryLoadData")
            && warm[0]
                .range
                .as_deref()
                .is_some_and(|r| r.ends_with("/runKernel")),
        "{warm:#?}"
    );
    assert!(!waits.is_empty());
}
