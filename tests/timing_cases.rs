//! The textbook program (`tests/fixtures/programs/timing_cases.cu`, profiled
//! with real nsys on an H100): every case shows what
//! `tests/fixtures/timing_cases.expected.json` says it must, and nothing it
//! must not. Kinds, ranges, spans and first proving events are checked per
//! case; cause shares against an independent SQL computation
//! (`tests/fixtures/idle_attribution.sql`).

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use common::{fixture, load};
use rusqlite::Connection;
use serde_json::Value;
use sightline::analysis::findings::{Finding, Severity, Thresholds, analyze, entries};
use sightline::analysis::idle::{self, Cause, Classifier, Lanes};
use sightline::model::{EventId, EventKind, NvtxKind, Trace};

struct Case {
    name: String,
    start: i64,
    end: i64,
}

fn cases(trace: &Trace) -> Vec<Case> {
    let spans = &trace.nvtx.spans;
    (0..spans.len())
        .filter(|&i| trace.nvtx.kind[i] != NvtxKind::Mark)
        .filter_map(|i| {
            let full = trace.name(spans.name[i]);
            full.strip_prefix("case:").map(|n| Case {
                name: n.to_string(),
                start: spans.start[i],
                end: spans.end(i),
            })
        })
        .collect()
}

/// Every finding of the report, with the default thresholds.
fn findings(trace: &Trace) -> Vec<Finding> {
    analyze(trace, None, &Thresholds::default(), &AtomicBool::new(false)).expect("not cancelled")
}

fn event_start(trace: &Trace, e: EventId) -> i64 {
    let i = e.index as usize;
    match e.kind {
        EventKind::Api => trace.cuda_api.spans.start[i],
        EventKind::Nvtx => trace.nvtx.spans.start[i],
        EventKind::Kernel => trace.kernels.spans.start[i],
        EventKind::Memcpy => trace.memcpys.spans.start[i],
        EventKind::Memset => trace.memsets.spans.start[i],
        other => panic!("unexpected proving event kind {other:?}"),
    }
}

/// Whether finding `f` is about case `c`: its range is the case's range or
/// inside it, or it has no range and starts in the case.
fn in_case(f: &Finding, c: &Case) -> bool {
    let path = format!("case:{}", c.name);
    match &f.range {
        Some(r) => r == &path || r.starts_with(&format!("{path}/")),
        None => f.start >= c.start && f.start < c.end,
    }
}

fn kinds_of(value: &Value, root: &Value) -> Vec<String> {
    let list = match value {
        Value::String(s) if s == "timing_kinds" => &root["timing_kinds"],
        other => other,
    };
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|k| k.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Per case and cause, the idle ns the SQL computes.
fn sql_shares(cases: &[Case]) -> BTreeMap<(String, String), i64> {
    let body = std::fs::read_to_string(fixture("idle_attribution.sql")).expect("the SQL");
    let windows: Vec<String> = cases
        .iter()
        .map(|c| format!("SELECT '{}', {}, {}", c.name, c.start, c.end))
        .collect();
    let sql = format!(
        "WITH windows(wname, ws, we) AS ({}),\n{body}",
        windows.join(" UNION ALL ")
    );
    let conn = Connection::open_with_flags(
        fixture("timing_cases.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open");
    let mut stmt = conn.prepare(&sql).expect("prepare");
    stmt.query_map([], |row| {
        Ok((
            (row.get::<_, String>(0)?, row.get::<_, String>(2)?),
            row.get::<_, i64>(3)?,
        ))
    })
    .expect("query")
    .map(|r| r.expect("row"))
    .collect()
}

#[test]
fn every_case_shows_what_it_must() {
    let text = std::fs::read_to_string(fixture("timing_cases.expected.json")).expect("json");
    let root: Value = serde_json::from_str(&text).expect("valid JSON");
    let trace = load("timing_cases.sqlite");
    let found = findings(&trace);
    let all = cases(&trace);
    let expected = root["cases"].as_object().expect("cases");
    assert!(expected.len() >= 15);
    assert_eq!(all.len(), expected.len(), "one NVTX range per case");
    let shares = sql_shares(&all);
    let attribution =
        idle::attribute(&trace, Lanes::Device, &AtomicBool::new(false)).expect("runs");
    let classifier = Classifier::new(&trace);
    let mut failures = Vec::new();
    for case in &all {
        let spec = &expected[&case.name];
        let mine: Vec<&Finding> = found.iter().filter(|f| in_case(f, case)).collect();
        let listed = || {
            mine.iter()
                .map(|f| format!("  {} [{}] {}", f.kind.name(), f.severity.name(), f.message))
                .collect::<Vec<_>>()
                .join("\n")
        };
        for kind in kinds_of(&spec["required"], &root) {
            let ok = mine.iter().any(|f| {
                f.kind.name() == kind
                    && f.start >= case.start
                    && f.end <= case.end
                    && f.events
                        .first()
                        .is_some_and(|&e| (case.start..case.end).contains(&event_start(&trace, e)))
            });
            if !ok {
                failures.push(format!(
                    "{}: no {kind} inside the case; found:\n{}",
                    case.name,
                    listed()
                ));
            }
        }
        for kind in kinds_of(&spec["forbidden"], &root) {
            for f in mine.iter().filter(|f| f.kind.name() == kind) {
                failures.push(format!("{}: forbidden {kind}: {}", case.name, f.message));
            }
        }
        for kind in kinds_of(&spec["no_sync_advice"], &root) {
            for f in mine.iter().filter(|f| f.kind.name() == kind) {
                if f.severity != Severity::Info || f.fix.to_lowercase().contains("synchronize") {
                    failures.push(format!(
                        "{}: sync advice in {kind}: {}",
                        case.name, f.message
                    ));
                }
            }
        }
        // Shares of the case's idle time: ours (per SQL's definition) within 5 points.
        let summary = idle::summarize(
            &classifier,
            &attribution,
            Some(&[(case.start, case.end)][..]),
        )
        .into_iter()
        .next()
        .expect("one GPU");
        let sql_idle: i64 = shares
            .iter()
            .filter(|((w, _), _)| w == &case.name)
            .map(|(_, v)| v)
            .sum();
        for cause in Cause::ALL {
            let theirs = shares
                .get(&(case.name.clone(), cause.name().to_string()))
                .copied()
                .unwrap_or(0) as f64
                * 100.0
                / sql_idle.max(1) as f64;
            let ours = summary.time(cause) as f64 * 100.0 / summary.idle.max(1) as f64;
            if (ours - theirs).abs() > 5.0 {
                failures.push(format!(
                    "{}: {} {ours:.1} % of idle, SQL {theirs:.1} %",
                    case.name,
                    cause.name()
                ));
            }
        }
        if let Some(want) = spec["cause"].as_str() {
            let why = idle::dominant(&summary.verdicts).map(|c| c.name());
            if why != Some(want) {
                failures.push(format!(
                    "{}: idle explained by {why:?}, not {want}",
                    case.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Loop findings sit on their loop: the range is the case (or inside it),
/// the count is the loop's, and grouping gives one entry per kind and range.
#[test]
fn loop_findings_are_bounded_and_grouped() {
    let trace = load("timing_cases.sqlite");
    let found = findings(&trace);
    let all = cases(&trace);
    let case = |n: &str| all.iter().find(|c| c.name == n).expect("case");
    let sync = case("sync-per-tiny-kernel");
    let loops: Vec<&Finding> = found
        .iter()
        .filter(|f| f.kind.name() == "sync-in-loop" && in_case(f, sync))
        .collect();
    assert_eq!(loops.len(), 1, "one loop, one finding");
    // The program syncs 60 times in the loop: the finding counts them, not
    // the sync before the case.
    assert!(
        loops[0].message.starts_with("60 synchronizations"),
        "{}",
        loops[0].message
    );
    assert_eq!(loops[0].range.as_deref(), Some("case:sync-per-tiny-kernel"));
    // 100 tiny symbol copies: one entry with all of them.
    let symbol = case("tiny-symbol-copies");
    let grouped = entries(&found);
    let copies: Vec<_> = grouped
        .iter()
        .filter(|e| {
            e.kind.name() == "sync-memcpy" && e.range.as_deref() == Some("case:tiny-symbol-copies")
        })
        .collect();
    assert_eq!(copies.len(), 1);
    assert_eq!(copies[0].count(), 100);
    let worst = &found[copies[0].worst];
    assert!(worst.start >= symbol.start && worst.end <= symbol.end);
    assert!(!worst.message.contains("0.000 MB"), "{}", worst.message);
    assert!(worst.message.contains("16 B"), "{}", worst.message);
    assert!(grouped.len() < found.len());
}
