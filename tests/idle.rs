//! Idle-gap attribution (`analysis::idle`, `sightline stats --report gpu_idle_sum`)
//! against an independent SQL computation over real nsys reports
//! (`tests/fixtures/idle_attribution.sql`).

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use common::{fixture, load, load_path};
use rusqlite::Connection;
use sightline::analysis::idle::{self, Cause, Classifier, IdleSummary, Lanes};
use sightline::analysis::{Report, compute};
use sightline::model::{NvtxKind, Trace};

/// `(window name, device, cause) → ns`, as the SQL computes it for `windows`
/// (`SELECT name, start, end ...`).
fn sql_attribution(report: &str, windows: &str) -> BTreeMap<(String, i64, String), i64> {
    sql_attribution_of(&fixture(report), windows)
}

/// [`sql_attribution`] of the report at `path`.
fn sql_attribution_of(
    path: &std::path::Path,
    windows: &str,
) -> BTreeMap<(String, i64, String), i64> {
    let body = std::fs::read_to_string(fixture("idle_attribution.sql")).expect("the SQL");
    let sql = format!("WITH windows(wname, ws, we) AS ({windows}),\n{body}");
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open");
    // A report without memsets has no memset table (sync_timing): an empty temporary one
    // stands in, leaving the file itself untouched.
    for (table, columns) in [
        (
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "deviceId, start, end, correlationId, globalPid, srcKind, dstKind",
        ),
        (
            "CUPTI_ACTIVITY_KIND_MEMSET",
            "deviceId, start, end, correlationId, globalPid",
        ),
        ("OSRT_API", "globalTid, start, end"),
    ] {
        let present: bool = conn
            .query_row(
                "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .expect("schema");
        if !present {
            conn.execute_batch(&format!("CREATE TEMP TABLE {table} ({columns})"))
                .expect("empty stand-in table");
        }
    }
    let mut stmt = conn.prepare(&sql).expect("prepare");
    stmt.query_map([], |row| {
        Ok((
            (
                row.get::<_, String>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, String>(2)?,
            ),
            row.get::<_, i64>(3)?,
        ))
    })
    .expect("query")
    .map(|r| r.expect("row"))
    .collect()
}

const WHOLE: &str = "SELECT 'all', -9223372036854775807, 9223372036854775807";

fn ours(trace: &Trace, windows: Option<&[(i64, i64)]>) -> Vec<IdleSummary> {
    let attribution =
        idle::attribute(trace, Lanes::Device, &AtomicBool::new(false)).expect("not cancelled");
    idle::summarize(&Classifier::new(trace), &attribution, windows)
}

/// `summaries`' time per (window `name`, lane, cause), as the SQL keys it.
fn by_cause(name: &str, summaries: &[IdleSummary]) -> BTreeMap<(String, i64, String), i64> {
    (summaries.iter())
        .flat_map(|s| s.causes.iter().map(move |c| (s.lane, c)))
        .map(|(lane, c)| {
            let key = (
                name.to_string(),
                i64::from(lane),
                c.cause.name().to_string(),
            );
            (key, c.time)
        })
        .collect()
}

/// Every cause's time over the whole report equals the SQL's, on reports of
/// the runtime and the driver API; shares add up to 100 % of the idle time.
#[test]
fn whole_report_matches_sql() {
    for report in ["timing_cases.sqlite", "sync_timing.sqlite"] {
        let trace = load(report);
        let expected = sql_attribution(report, WHOLE);
        assert!(!expected.is_empty(), "{report}: the SQL found gaps");
        let summaries = ours(&trace, None);
        for s in &summaries {
            assert_eq!(
                s.idle,
                s.causes.iter().map(|c| c.time).sum::<i64>(),
                "{report}: causes add up to the idle time"
            );
        }
        let got = by_cause("all", &summaries);
        assert_eq!(got, expected, "{report}");
        // The table's shares of the idle time add up to 100 % (each rounded to 0.1).
        let table = compute(&trace, Report::GpuIdleSum, None);
        assert_eq!(table.columns[4], "Idle (%)");
        let total: f64 = table.rows.iter().filter_map(|r| r[4].as_f64()).sum();
        assert!((total - 100.0).abs() < 1e-6, "{report}: {total}");
        assert_eq!(table.rows.len(), got.len());
    }
}

/// The top-level NVTX ranges named `case:...`, as (name, start, end).
fn cases(trace: &Trace) -> Vec<(String, i64, i64)> {
    let spans = &trace.nvtx.spans;
    (0..spans.len())
        .filter(|&i| trace.nvtx.kind[i] != NvtxKind::Mark)
        .map(|i| {
            (
                trace.name(spans.name[i]).to_string(),
                spans.start[i],
                spans.end(i),
            )
        })
        .filter(|(n, _, _)| n.starts_with("case:"))
        .collect()
}

/// Clipped to each case of the textbook program, our times per cause equal
/// the SQL's.
#[test]
fn each_case_matches_sql() {
    let trace = load("timing_cases.sqlite");
    let all = cases(&trace);
    assert!(all.len() >= 15, "{} cases", all.len());
    let windows: Vec<String> = all
        .iter()
        .map(|(n, s, e)| format!("SELECT '{n}', {s}, {e}"))
        .collect();
    let expected = sql_attribution("timing_cases.sqlite", &windows.join(" UNION ALL "));
    for (name, start, end) in &all {
        let summaries = ours(&trace, Some(&[(*start, *end)][..]));
        for s in &summaries {
            assert!(s.idle <= end - start);
        }
        let got = by_cause(name, &summaries);
        let want: BTreeMap<_, _> = expected
            .iter()
            .filter(|((w, _, _), _)| w == name)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

/// A gap's causes are found on the thread that launched the work after it,
/// and every gap lies between two operations of its GPU.
#[test]
fn gaps_are_between_operations() {
    let trace = load("streams.sqlite");
    let a = idle::attribute(&trace, Lanes::Device, &AtomicBool::new(false)).expect("runs");
    assert!(a.gap_count() > 0);
    let gaps: Vec<_> = a.gaps().copied().collect();
    for pair in gaps.windows(2) {
        assert!(
            (pair[0].lane, pair[0].end) <= (pair[1].lane, pair[1].start),
            "sorted and disjoint"
        );
    }
    for g in a.gaps() {
        let span = trace.gpu_spans(g.next.kind);
        assert_eq!(span.start[g.next.index as usize], g.end);
        assert!(g.start < g.end);
    }
    let per_stream = idle::attribute(&trace, Lanes::Stream, &AtomicBool::new(false)).expect("runs");
    let idle_of = |a: &idle::Attribution| -> i64 { a.gaps().map(|g| g.end - g.start).sum() };
    // Streams idle at least as long, together, as their device: a device is
    // idle only when all its streams are.
    assert!(idle_of(&per_stream) >= idle_of(&a));
    let cancelled = AtomicBool::new(true);
    assert!(idle::attribute(&trace, Lanes::Device, &cancelled).is_err());
    assert!(ours(&Trace::default(), None).is_empty());
}

fn sightline(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("runs")
}

/// `--nvtx NAME` sums the named ranges; `--range` clips; the causes named are
/// the ones that explain each case.
#[test]
fn cli_gpu_idle_sum_by_nvtx_range() {
    let file = fixture("timing_cases.sqlite");
    let file = file.to_str().expect("utf-8 path");
    let out = sightline(&[
        "stats",
        file,
        "--report",
        "gpu_idle_sum",
        "--nvtx",
        "case:cpu-bound-loop",
        "--format",
        "csv",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().nth(1).expect("a row");
    assert!(first.starts_with("0,outside-cuda,"), "{text}");
    let trace = load("timing_cases.sqlite");
    let (_, s, e) = cases(&trace)
        .into_iter()
        .find(|c| c.0 == "case:cpu-bound-loop")
        .expect("the case");
    let ranged = sightline(&[
        "stats",
        file,
        "--report",
        "gpu_idle_sum",
        "--range",
        &format!("{s}:{e}"),
        "--format",
        "csv",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&ranged.stdout),
        text,
        "--nvtx of a single range equals --range over it"
    );
    let bad = sightline(&["stats", file, "--report", "nvtx_sum", "--nvtx", "x"]);
    assert_eq!(bad.status.code(), Some(2));
    let summaries = ours(&trace, Some(&[(s, e)][..]));
    let sentence = summaries[0].sentence();
    assert!(
        sentence.starts_with("GPU idle ") && sentence.contains(Cause::Outside.label()),
        "{sentence}"
    );
}

/// Time outside CUDA that the launching thread spent in an OS call of 100 µs or more
/// (`pthread_cond_wait`: waiting for another thread, process or rank) is an OS wait, not CPU
/// work; a shorter call is part of its work. On a copy of the textbook program whose
/// CPU-bound case's thread gets a 2 ms wait and a 50 µs one: our times per cause equal the
/// SQL's, and the wait is there.
#[test]
fn os_waits_of_the_launching_thread_are_their_own_cause() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("timing_cases.sqlite");
    std::fs::copy(fixture("timing_cases.sqlite"), &path).expect("copy");
    let original = load("timing_cases.sqlite");
    let (_, start, end) = (cases(&original).into_iter())
        .find(|(n, _, _)| n == "case:cpu-bound-loop")
        .expect("the CPU-bound case");
    {
        let conn = Connection::open(&path).expect("open the copy");
        let tid: i64 = conn
            .query_row(
                "SELECT globalTid FROM NVTX_EVENTS WHERE start = ?1",
                [start],
                |r| r.get(0),
            )
            .expect("the case's thread");
        conn.execute(
            "INSERT INTO StringIds (id, value) SELECT max(id) + 1, 'pthread_cond_wait' FROM StringIds",
            [],
        )
        .expect("name");
        let middle = start + (end - start) / 2;
        for (from, ns) in [(middle, 2_000_000), (start + (end - start) / 5, 50_000)] {
            conn.execute(
                "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, callchainId)
                 SELECT ?1, ?2, 27, ?3, (SELECT id FROM StringIds WHERE value = 'pthread_cond_wait'), 0, 0",
                (from, from + ns, tid),
            )
            .expect("the wait");
        }
    }
    let trace = load_path(&path);
    let windows = format!("SELECT 'case', {start}, {end}");
    let expected = sql_attribution_of(&path, &windows);
    let got = by_cause("case", &ours(&trace, Some(&[(start, end)][..])));
    assert_eq!(got, expected);
    let waited: i64 = (got.iter())
        .filter(|((_, _, cause), _)| cause == Cause::OsWait.name())
        .map(|(_, ns)| *ns)
        .sum();
    assert!(waited > 0 && waited <= 2_000_000, "os-wait {waited} ns");
}
