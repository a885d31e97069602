//! The findings engine on real reports, and on copies edited to hold (or not
//! hold) each mistake: positive and negative controls.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use rusqlite::Connection;
use sightline::analysis::findings::{
    Finding, FindingKind, Severity, Thresholds, analyze, analyze_with_range_work, range_gpu_spans,
};
use sightline::model::{EventKind, NvtxKind, TimeRange, Trace};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.sqlite"))
}

fn load(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

fn findings(trace: &Trace) -> Vec<Finding> {
    analyze(trace, None, &Thresholds::default(), &AtomicBool::new(false)).expect("not cancelled")
}

fn kinds(found: &[Finding], kind: FindingKind) -> Vec<&Finding> {
    found.iter().filter(|f| f.kind == kind).collect()
}

/// A copy of a fixture edited with SQL, loaded.
fn edited(name: &str, edit: impl FnOnce(&Connection, &Trace)) -> Trace {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(format!("{name}.sqlite"));
    std::fs::copy(fixture(name), &path).expect("copy");
    let original = load(&path);
    {
        let conn = Connection::open(&path).expect("open copy");
        edit(&conn, &original);
    }
    load(&path)
}

/// An NVTX range instance: name, start, end.
#[derive(Clone, Debug)]
struct Range {
    name: String,
    start: i64,
    end: i64,
}

fn ranges(trace: &Trace) -> Vec<Range> {
    let spans = &trace.nvtx.spans;
    (0..spans.len())
        .filter(|&i| trace.nvtx.kind[i] != NvtxKind::Mark)
        .map(|i| Range {
            name: trace.name(spans.name[i]).to_string(),
            start: spans.start[i],
            end: spans.end(i),
        })
        .collect()
}

/// Instances of `name` that lie inside an instance of `within` (any when None).
fn instances(all: &[Range], name: &str, within: Option<&str>) -> Vec<Range> {
    all.iter()
        .filter(|r| r.name == name)
        .filter(|r| {
            within.is_none_or(|w| {
                all.iter()
                    .any(|p| p.name == w && p.start <= r.start && r.end <= p.end)
            })
        })
        .cloned()
        .collect()
}

/// Rows of the kernels launched by API calls that start inside `r`.
fn launched_in(trace: &Trace, r: &Range) -> Vec<usize> {
    let api = &trace.cuda_api;
    let k = &trace.kernels;
    (0..api.spans.len())
        .filter(|&a| api.spans.start[a] >= r.start && api.spans.start[a] < r.end)
        .flat_map(|a| (0..k.spans.len()).filter(move |&i| k.correlation[i] == api.correlation[a]))
        .collect()
}

// ---------------------------------------------------------------------------
// A small JSON reader for the expected-findings file (no serde_json here).

#[derive(Debug)]
enum Json {
    Str(String),
    Arr(Vec<Json>),
    Obj(BTreeMap<String, Json>),
}

fn parse_json(text: &str) -> Json {
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    parse_value(&chars, &mut at)
}

fn skip_ws(c: &[char], at: &mut usize) {
    while *at < c.len() && c[*at].is_whitespace() {
        *at += 1;
    }
}

fn parse_value(c: &[char], at: &mut usize) -> Json {
    skip_ws(c, at);
    match c[*at] {
        '"' => {
            *at += 1;
            let mut s = String::new();
            while c[*at] != '"' {
                if c[*at] == '\\' {
                    *at += 1;
                }
                s.push(c[*at]);
                *at += 1;
            }
            *at += 1;
            Json::Str(s)
        }
        '[' => {
            *at += 1;
            let mut items = Vec::new();
            loop {
                skip_ws(c, at);
                if c[*at] == ']' {
                    *at += 1;
                    return Json::Arr(items);
                }
                items.push(parse_value(c, at));
                skip_ws(c, at);
                if c[*at] == ',' {
                    *at += 1;
                }
            }
        }
        '{' => {
            *at += 1;
            let mut map = BTreeMap::new();
            loop {
                skip_ws(c, at);
                if c[*at] == '}' {
                    *at += 1;
                    return Json::Obj(map);
                }
                let Json::Str(key) = parse_value(c, at) else {
                    panic!("object key")
                };
                skip_ws(c, at);
                assert_eq!(c[*at], ':');
                *at += 1;
                map.insert(key, parse_value(c, at));
                skip_ws(c, at);
                if c[*at] == ',' {
                    *at += 1;
                }
            }
        }
        other => panic!("unexpected {other} in the expected-findings file"),
    }
}

fn strings(value: &Json) -> Vec<String> {
    match value {
        Json::Arr(items) => items
            .iter()
            .filter_map(|i| match i {
                Json::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        Json::Str(s) => vec![s.clone()],
        Json::Obj(_) => Vec::new(),
    }
}

#[test]
fn sync_timing_matches_the_expected_findings() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sync_timing.expected-findings.json"),
    )
    .expect("expected findings");
    let Json::Obj(root) = parse_json(&text) else {
        panic!("not an object")
    };
    let timing_kinds = strings(&root["timing_kinds"]);
    let Json::Obj(cases) = &root["cases"] else {
        panic!("no cases")
    };
    let trace = load(&fixture("sync_timing"));
    let found = findings(&trace);
    let all = ranges(&trace);
    // Every listed range instance, with its case.
    let mut listed: Vec<(String, Range)> = Vec::new();
    for (case, spec) in cases {
        let Json::Obj(spec) = spec else { continue };
        let name = match spec.get("range") {
            Some(Json::Str(r)) => r.clone(),
            _ => case.clone(),
        };
        let within = match spec.get("within") {
            Some(Json::Str(w)) => Some(w.as_str()),
            _ => None,
        };
        let found_instances = instances(&all, &name, within);
        assert!(
            !found_instances.is_empty(),
            "case {case}: no '{name}' range"
        );
        listed.extend(found_instances.into_iter().map(|r| (case.clone(), r)));
    }
    // A finding belongs to the innermost listed range that contains its start.
    let owner = |f: &Finding| -> Option<usize> {
        (0..listed.len())
            .filter(|&i| listed[i].1.start <= f.start && f.start < listed[i].1.end)
            .min_by_key(|&i| listed[i].1.end - listed[i].1.start)
    };
    let mut problems = Vec::new();
    for (i, (case, range)) in listed.iter().enumerate() {
        let Json::Obj(spec) = &cases[case] else {
            continue;
        };
        let mine: Vec<&str> = found
            .iter()
            .filter(|f| owner(f) == Some(i))
            .map(|f| f.kind.name())
            .collect();
        if let Some(required) = spec.get("required") {
            for kind in strings(required) {
                if !mine.contains(&kind.as_str()) {
                    problems.push(format!("{case} at {}: missing {kind}", range.start));
                }
            }
        }
        if let Some(forbidden) = spec.get("forbidden") {
            let forbidden = match forbidden {
                Json::Str(s) if s == "timing_kinds" => timing_kinds.clone(),
                other => strings(other),
            };
            for kind in mine.iter().filter(|k| forbidden.iter().any(|f| f == *k)) {
                problems.push(format!("{case} at {}: forbidden {kind}", range.start));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Each timed iteration of no-sync and sync-before-only: one finding with
    // the range's own span, naming the range, its launch and its kernel.
    for variant in ["no-sync", "sync-before-only"] {
        for r in instances(&all, "timed-iteration", Some(variant)) {
            let hits: Vec<&Finding> = kinds(&found, FindingKind::RangeEndsBeforeGpuWork)
                .into_iter()
                .filter(|f| f.start == r.start && f.end == r.end)
                .collect();
            assert_eq!(hits.len(), 1, "{variant} at {}", r.start);
            let f = hits[0];
            assert_eq!(
                f.range.as_deref(),
                Some(&*format!("{variant}/timed-iteration"))
            );
            assert_eq!(f.severity, Severity::Warning);
            for kind in [EventKind::Nvtx, EventKind::Api, EventKind::Kernel] {
                assert!(f.events.iter().any(|e| e.kind == kind), "{f:?}");
            }
            assert!(f.message.contains("µs") && !f.fix.is_empty());
        }
    }
    // Exactly those twenty: the warm-up and variant ranges are not timing ranges
    // that measured only launches (their work mostly ran inside them).
    assert_eq!(kinds(&found, FindingKind::RangeEndsBeforeGpuWork).len(), 20);
}

/// The viewer's findings job collects each range's GPU work once, for the
/// verdicts and for the bars under the ranges: what it gets equals the
/// findings and the spans asked for apart, on every real report here.
#[test]
fn findings_and_range_work_from_one_pass_equal_those_asked_for_apart() {
    let cancel = AtomicBool::new(false);
    let mut spans_seen = 0;
    for name in ["sync_timing", "timing_cases", "torch_work", "streams"] {
        let trace = load(&fixture(name));
        let (found, work) = analyze_with_range_work(&trace, None, &Thresholds::default(), &cancel)
            .expect("not cancelled");
        assert_eq!(found, findings(&trace), "{name}: findings");
        let apart = range_gpu_spans(&trace, &cancel).expect("not cancelled");
        assert_eq!(work, apart, "{name}: range work");
        spans_seen += work.len();
    }
    assert!(spans_seen > 100, "{spans_seen} ranges with GPU work");
}

#[test]
fn range_restriction_and_cancel() {
    let trace = load(&fixture("sync_timing"));
    let all = ranges(&trace);
    let r = &instances(&all, "timed-iteration", Some("no-sync"))[0];
    let range = TimeRange {
        start: r.start,
        end: r.end,
    };
    let found = analyze(
        &trace,
        Some(range),
        &Thresholds::default(),
        &AtomicBool::new(false),
    )
    .expect("not cancelled");
    assert!(!found.is_empty());
    assert!(found.iter().all(|f| f.start >= r.start && f.start < r.end));
    assert!(
        analyze(&trace, None, &Thresholds::default(), &AtomicBool::new(true)).is_err(),
        "a cancelled run returns no findings"
    );
}

#[test]
fn thresholds_are_overridable() {
    let trace = load(&fixture("sync_timing"));
    let strict = Thresholds {
        overhang_min_ns: 1_000_000,
        launch_bound_min_kernels: 1_000_000,
        ..Thresholds::default()
    };
    let found = analyze(&trace, None, &strict, &AtomicBool::new(false)).expect("not cancelled");
    assert!(kinds(&found, FindingKind::RangeEndsBeforeGpuWork).is_empty());
    assert!(kinds(&found, FindingKind::LaunchBound).is_empty());
}

/// Negative control: the no-sync kernels moved to end before their ranges do
/// (as if each range synchronized): no `range-ends-before-gpu-work` there.
#[test]
fn synchronized_ranges_have_no_overhang() {
    let trace = edited("sync_timing", |conn, trace| {
        let all = ranges(trace);
        let k = &trace.kernels;
        for r in instances(&all, "timed-iteration", Some("no-sync")) {
            let launched = launched_in(trace, &r);
            assert_eq!(launched.len(), 1);
            for i in launched {
                let end = r.end - 1_000;
                conn.execute(
                    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = ?1, end = ?2 WHERE correlationId = ?3",
                    (end - 3_600, end, k.correlation[i]),
                )
                .expect("update");
            }
        }
    });
    let found = findings(&trace);
    let all = ranges(&trace);
    for r in instances(&all, "timed-iteration", Some("no-sync")) {
        assert!(
            !kinds(&found, FindingKind::RangeEndsBeforeGpuWork)
                .iter()
                .any(|f| f.start == r.start),
            "no-sync at {} still flagged",
            r.start
        );
    }
    // The untouched variant still is.
    assert_eq!(kinds(&found, FindingKind::RangeEndsBeforeGpuWork).len(), 10);
}

/// Positive control: in sync-after-only, the warm-up queue had drained before
/// timing began. Make its last warm-up kernel run into the first timed sync:
/// now that sync also waits for earlier work.
#[test]
fn sync_after_launch_waiting_on_warm_up_is_found() {
    let mut target_start = 0;
    let trace = edited("sync_timing", |conn, trace| {
        let all = ranges(trace);
        let warmup = &instances(&all, "warmup", Some("sync-after-only"))[0];
        let first = &instances(&all, "timed-iteration", Some("sync-after-only"))[0];
        target_start = first.start;
        let api = &trace.cuda_api.spans;
        let sync = (0..api.len())
            .filter(|&i| api.start[i] > first.start && api.start[i] < first.end)
            .find(|&i| trace.name(api.name[i]).starts_with("cudaDeviceSynchronize"))
            .expect("the timed sync");
        let k = &trace.kernels;
        let last_warmup = launched_in(trace, warmup)
            .into_iter()
            .max_by_key(|&i| k.spans.end(i))
            .expect("a warm-up kernel");
        conn.execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = ?1 WHERE correlationId = ?2",
            (api.end(sync) - 500, k.correlation[last_warmup]),
        )
        .expect("update");
    });
    let found = findings(&trace);
    let hits = kinds(&found, FindingKind::RangeWaitsOnEarlierWork);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].start, target_start);
    assert_eq!(
        hits[0].range.as_deref(),
        Some("sync-after-only/timed-iteration")
    );
    assert!(hits[0].events.iter().any(|e| e.kind == EventKind::Kernel));
    // Negative control: the real report has none.
    let real = findings(&load(&fixture("sync_timing")));
    assert!(kinds(&real, FindingKind::RangeWaitsOnEarlierWork).is_empty());
}

/// Positive control: give the four variant ranges one name, so they become
/// four iterations of one loop: the first carries the lazy module loading.
/// Negative control: as recorded, no repeated range has a long first instance.
#[test]
fn first_iteration_with_module_loading_is_warm_up() {
    let real = findings(&load(&fixture("sync_timing")));
    assert!(kinds(&real, FindingKind::WarmUpIncluded).is_empty());
    let trace = edited("sync_timing", |conn, _| {
        conn.execute_batch(
            "UPDATE NVTX_EVENTS SET text = 'variant' WHERE text IN
               ('sync-before-and-after', 'sync-before-only', 'sync-after-only', 'no-sync')",
        )
        .expect("update");
    });
    let found = findings(&trace);
    let hits = kinds(&found, FindingKind::WarmUpIncluded);
    let warmup = hits
        .iter()
        .find(|f| f.range.as_deref() == Some("variant/warmup"))
        .unwrap_or_else(|| panic!("{hits:?}"));
    assert!(
        warmup.message.contains("cuLibraryLoadData"),
        "{}",
        warmup.message
    );
    // The timed iterations, now one group of forty, still are not warm-up.
    assert!(
        !hits
            .iter()
            .any(|f| f.range.as_deref() == Some("variant/timed-iteration"))
    );
}

/// Positive control: an event sync that failed with cudaErrorNotReady (nsys
/// does not trace cudaEventElapsedTime, the call that returns it in practice).
#[test]
fn api_errors_are_found() {
    assert!(
        kinds(
            &findings(&load(&fixture("sync_timing"))),
            FindingKind::ApiError
        )
        .is_empty()
    );
    let trace = edited("sync_timing", |conn, _| {
        conn.execute_batch(
            "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 600 WHERE rowid IN (
               SELECT r.rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
               WHERE s.value LIKE 'cudaEventSynchronize%' ORDER BY r.start LIMIT 1)",
        )
        .expect("update");
    });
    let hits = kinds(&findings(&trace), FindingKind::ApiError)
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].severity, Severity::Warning);
    assert_eq!(hits[0].range.as_deref(), Some("cuda-events"));
    assert!(hits[0].message.contains("not ready"), "{}", hits[0].message);
}

/// streams.cu allocates and frees a scratch buffer every fourth iteration on
/// each worker; PyTorch's caching allocator only grows (a negative control).
#[test]
fn alloc_in_loop_on_streams_not_on_torch() {
    let found = findings(&load(&fixture("streams")));
    let hits = kinds(&found, FindingKind::AllocInLoop);
    assert_eq!(hits.len(), 2, "{hits:?}");
    for f in hits {
        assert!(f.message.contains("cudaMalloc"), "{}", f.message);
    }
    let torch = findings(&load(&fixture("torch_work")));
    assert!(kinds(&torch, FindingKind::AllocInLoop).is_empty());
    assert!(
        kinds(
            &findings(&load(&fixture("sync_timing"))),
            FindingKind::AllocInLoop
        )
        .is_empty()
    );
}

/// 20,000 one-microsecond kernels launched in a loop are launch-bound; the
/// streams workers' syncs wait for 16 MB copies (substantial work): no
/// sync-in-loop there.
#[test]
fn launch_bound_and_sync_in_loop_controls() {
    let found = findings(&load(&fixture("streams")));
    assert!(
        kinds(&found, FindingKind::LaunchBound)
            .iter()
            .any(|f| f.range.as_deref() == Some("whole-run/tiny-kernels"))
    );
    assert!(kinds(&found, FindingKind::SyncInLoop).is_empty());
    let torch = findings(&load(&fixture("torch_work")));
    assert!(kinds(&torch, FindingKind::LaunchBound).is_empty());
    // Each timed loop is its own loop: every sync-in-loop lies in one variant
    // range, never glued to the syncs of another.
    let timing = findings(&load(&fixture("sync_timing")));
    let loops = kinds(&timing, FindingKind::SyncInLoop);
    assert!(!loops.is_empty());
    for f in loops {
        let range = f.range.as_deref().unwrap_or("");
        assert!(
            [
                "sync-before-and-after",
                "sync-before-only",
                "sync-after-only",
                "no-sync",
                "cuda-events"
            ]
            .iter()
            .any(|v| range == *v || range.starts_with(&format!("{v}/"))),
            "{range}: {}",
            f.message
        );
    }
}

/// The nsys-rule kinds are the rule rows: one finding per row.
#[test]
fn rule_kinds_follow_the_rules() {
    use sightline::analysis::rules::{Rule, RuleOptions, run};
    for name in ["sync_timing", "streams", "torch_work"] {
        let trace = load(&fixture(name));
        let found = findings(&trace);
        let all_rows = RuleOptions {
            rows: None,
            ..RuleOptions::default()
        };
        for (rule, kind) in [
            (Rule::CudaMemcpyAsync, FindingKind::PageableMemcpy),
            (Rule::CudaMemcpySync, FindingKind::SyncMemcpy),
            (Rule::CudaMemsetSync, FindingKind::SyncMemset),
            (Rule::GpuGaps, FindingKind::GpuIdleGap),
            (Rule::GpuTimeUtil, FindingKind::LowGpuUtilization),
        ] {
            assert_eq!(
                kinds(&found, kind).len(),
                run(&trace, rule, &all_rows).rows.len(),
                "{name} {}",
                kind.name()
            );
        }
    }
}

/// A range nsys recorded without an end gets a made-up end: no timing verdict.
#[test]
fn unended_ranges_are_not_judged() {
    let mut target = 0;
    let trace = edited("sync_timing", |conn, trace| {
        let all = ranges(trace);
        target = instances(&all, "timed-iteration", Some("no-sync"))[0].start;
        conn.execute(
            "UPDATE NVTX_EVENTS SET end = NULL WHERE start = ?1 AND text = 'timed-iteration'",
            [target],
        )
        .expect("update");
    });
    let found = findings(&trace);
    let hits = kinds(&found, FindingKind::RangeEndsBeforeGpuWork);
    assert!(!hits.iter().any(|f| f.start == target), "{hits:?}");
    assert_eq!(hits.len(), 19);
}

/// gpu_gaps on a report it was never checked against: shift the second half
/// of sync_timing's GPU work one second later; the rule reports exactly that
/// gap, numbered, from the last end before it to the first start after it.
#[test]
fn gpu_gaps_finds_an_inserted_gap() {
    use sightline::analysis::rules::{Rule, RuleOptions, run};
    let mut expected = (0i64, 0i64);
    let trace = edited("sync_timing", |conn, trace| {
        let k = &trace.kernels.spans;
        let mut starts: Vec<i64> = k.start.to_vec();
        starts.sort_unstable();
        let cut = starts[starts.len() / 2];
        conn.execute_batch(&format!(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 1000000000, end = end + 1000000000 WHERE start >= {cut};
             UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = start + 1000000000, end = end + 1000000000 WHERE start >= {cut};"
        ))
        .expect("update");
        let m = &trace.memcpys.spans;
        let ops: Vec<(i64, i64)> = (0..k.len())
            .map(|i| (k.start[i], k.end(i)))
            .chain((0..m.len()).map(|i| (m.start[i], m.end(i))))
            .collect();
        let before = ops.iter().filter(|o| o.0 < cut).map(|o| o.1).max().unwrap();
        let after = ops
            .iter()
            .filter(|o| o.0 >= cut)
            .map(|o| o.0)
            .min()
            .unwrap()
            + 1_000_000_000;
        expected = (after - before, before);
    });
    let table = run(&trace, Rule::GpuGaps, &RuleOptions::default());
    assert_eq!(
        table.to_csv(),
        format!(
            "Row#,Duration (ns),Start (ns),PID,Device ID,Context ID\n1,{},{},553,0,1\n",
            expected.0, expected.1
        )
    );
    let found = findings(&trace);
    let gaps = kinds(&found, FindingKind::GpuIdleGap);
    assert_eq!(gaps.len(), 1);
    assert_eq!(
        (gaps[0].start, gaps[0].end),
        (expected.1, expected.1 + expected.0)
    );
}

/// A report the synthetic writer builds from three time-shifted copies of
/// sync_timing: every per-range finding appears once per copy, in each
/// copy's own ranges.
#[test]
fn synthetic_copies_triple_the_range_findings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("x3.sqlite");
    let original = load(&fixture("sync_timing"));
    sightline::synth::write_report(&original, 3, &out, &mut |_| {}, &AtomicBool::new(false))
        .expect("synthetic report");
    let (one, three) = (findings(&original), findings(&load(&out)));
    for kind in [
        FindingKind::RangeEndsBeforeGpuWork,
        FindingKind::RangeWaitsOnEarlierWork,
        FindingKind::WarmUpIncluded,
        FindingKind::LaunchBound,
        // Not `SyncInLoop`: in the copies every case range repeats (once per copy), so it is
        // a loop's iteration and a run of syncs is no longer split where one case ends and
        // the next begins: the last case's run takes in the two syncs before it (12 syncs in
        // 361.6 µs, 75.2 µs waiting) and its syncs hold the thread too little of that.
        FindingKind::AllocInLoop,
        FindingKind::ApiError,
    ] {
        assert_eq!(
            kinds(&three, kind).len(),
            3 * kinds(&one, kind).len(),
            "{}",
            kind.name()
        );
    }
    assert_eq!(kinds(&three, FindingKind::RangeEndsBeforeGpuWork).len(), 60);
}

/// Damaged timestamps (the loader keeps any i64) must not panic any detector
/// or rule: a kernel spanning almost all of i64, an API call at the far end.
#[test]
fn extreme_timestamps_do_not_panic() {
    use sightline::analysis::rules::{Rule, RuleOptions, run};
    let trace = edited("sync_timing", |conn, _| {
        conn.execute_batch(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9000000000000000000, end = 9000000000000000000
               WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);
             UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 9000000000000000000, end = 9100000000000000000
               WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);
             UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = -9100000000000000000
               WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME);
             UPDATE NVTX_EVENTS SET end = 9200000000000000000
               WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS);",
        )
        .expect("update");
    });
    let _ = findings(&trace);
    for rule in Rule::ALL {
        let _ = run(&trace, rule, &RuleOptions::default()).to_csv();
    }
}

/// The facts behind the sync_timing verdicts: in sync-after-only the warm-up
/// queue had drained before the first timed sync began (so that variant
/// measured correctly in this run); in sync-before-only the kernel ends after
/// the range.
#[test]
fn range_timing_explains_the_verdicts() {
    use sightline::analysis::findings::range_timing;
    let trace = load(&fixture("sync_timing"));
    let spans = &trace.nvtx.spans;
    let row_of = |r: &Range| {
        (0..spans.len())
            .find(|&i| spans.start[i] == r.start && trace.name(spans.name[i]) == r.name)
            .expect("the range's row") as u32
    };
    let all = ranges(&trace);
    let after_only = &instances(&all, "timed-iteration", Some("sync-after-only"))[0];
    let t = range_timing(&trace, row_of(after_only)).expect("a range");
    let (sync_start, _) = t.sync_after_launch.expect("the sync after the launch");
    let drained = t.earlier_work_end.expect("earlier work");
    assert!(drained < sync_start, "{t:?}");
    assert!(t.gpu_work.expect("its kernel").1 < t.end);
    let before_only = &instances(&all, "timed-iteration", Some("sync-before-only"))[0];
    let t = range_timing(&trace, row_of(before_only)).expect("a range");
    assert!(t.sync_after_launch.is_none());
    assert!(t.gpu_work.expect("its kernel").1 > t.end, "{t:?}");
}

/// Positive controls for two rule kinds no fixture triggers: a synchronous
/// memset of pinned memory, an async copy from pageable memory.
#[test]
fn sync_memset_and_pageable_memcpy_controls() {
    let real = findings(&load(&fixture("streams")));
    assert!(kinds(&real, FindingKind::SyncMemset).is_empty());
    assert!(kinds(&real, FindingKind::PageableMemcpy).is_empty());
    let trace = edited("streams", |conn, _| {
        conn.execute_batch(
            "UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET memKind = 1;
             UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = 0 WHERE copyKind = 1;",
        )
        .expect("update");
    });
    let found = findings(&trace);
    let sets = kinds(&found, FindingKind::SyncMemset);
    assert_eq!(sets.len(), 1, "{sets:?}");
    assert!(
        sets[0].message.starts_with("cudaMemset "),
        "{}",
        sets[0].message
    );
    assert!(sets[0].events.iter().any(|e| e.kind == EventKind::Memset));
    let copies = kinds(&found, FindingKind::PageableMemcpy);
    assert_eq!(copies.len(), 24);
    // Each is inside its worker's iteration range.
    assert!(
        copies
            .iter()
            .all(|f| f.range.as_deref() == Some("iteration")),
        "{copies:?}"
    );
}

/// A selected range lists the findings about it: those it proves itself and
/// those placed in it. Loop findings prove with the loop's first call and
/// name the range around the loop, so the variant ranges of sync_timing have
/// their sync-in-loop (the details said "No finding for this range").
#[test]
fn a_range_lists_the_loop_findings_placed_in_it() {
    use sightline::app::panels::findings_panel::range_finding_kinds;
    use sightline::app::state::events::{EventRef, Table};
    let trace = load(&fixture("sync_timing"));
    let found = findings(&trace);
    let spans = &trace.nvtx.spans;
    for variant in [
        "sync-before-and-after",
        "sync-before-only",
        "sync-after-only",
    ] {
        let row = (0..spans.len())
            .find(|&i| trace.name(spans.name[i]) == variant)
            .expect("the variant's range");
        let timing = sightline::analysis::findings::range_timing(&trace, row as u32)
            .expect("an ended range");
        let kinds = range_finding_kinds(
            &found,
            EventRef::new(Table::Nvtx, row as u32),
            variant,
            &timing,
        );
        assert!(
            kinds.contains(&FindingKind::SyncInLoop),
            "{variant}: {kinds:?}"
        );
    }
    // A timed iteration proves its own finding and holds no loop.
    let row = (0..spans.len())
        .find(|&i| {
            trace.name(spans.name[i]) == "timed-iteration"
                && found.iter().any(|f| {
                    f.kind == FindingKind::RangeEndsBeforeGpuWork && f.start == spans.start[i]
                })
        })
        .expect("a flagged timed iteration");
    let timing = sightline::analysis::findings::range_timing(&trace, row as u32).expect("ended");
    let kinds = range_finding_kinds(
        &found,
        EventRef::new(Table::Nvtx, row as u32),
        "timed-iteration",
        &timing,
    );
    assert_eq!(kinds, vec![FindingKind::RangeEndsBeforeGpuWork]);
}

/// The engine tells its idle attribution as soon as it is made (the
/// timeline's "GPU idle — why" row shows it while the detectors that judge
/// it still run): the same attribution it carries to its next run, told
/// once, and equal to one made apart.
#[test]
fn the_engine_tells_the_idle_attribution_it_carries_once_made() {
    use sightline::analysis::findings::analyze_grown_telling;
    use sightline::analysis::idle::{Attribution, Lanes, attribute};
    let never = AtomicBool::new(false);
    for name in ["sync_timing", "streams"] {
        let trace = load(&fixture(name));
        let told = std::sync::Mutex::new(Vec::new());
        let tell =
            |a: &std::sync::Arc<Attribution>| told.lock().expect("not poisoned").push(a.clone());
        let (_, _, carried) =
            analyze_grown_telling(&trace, None, None, &Thresholds::default(), &never, &tell)
                .expect("not cancelled");
        let told = told.into_inner().expect("not poisoned");
        assert_eq!(told.len(), 1, "{name}: told once");
        assert!(std::sync::Arc::ptr_eq(&told[0], carried.idle()), "{name}");
        let apart = attribute(&trace, Lanes::Device, &never).expect("not cancelled");
        assert!(*told[0] == apart, "{name}: the report's gaps");
    }
}

/// `sync-in-loop` says each sync stalls the CPU until the GPU drains: only where the syncs
/// do hold the thread (at least a quarter of the run). On the textbook program every run it
/// reports waits that long; with the syncs of `sync-per-tiny-kernel` made to return at once
/// (as PyTorch's event syncs on events long done, between a DDP step's end and the next
/// step's first launches), that case has none, while it keeps the others'.
#[test]
fn syncs_that_return_at_once_are_no_sync_in_loop() {
    let waits = |trace: &Trace, f: &Finding| -> f64 {
        let api = &trace.cuda_api.spans;
        let waiting: i64 = (f.events.iter())
            .filter(|e| e.kind == EventKind::Api)
            .map(|e| api.end(e.index as usize) - api.start[e.index as usize])
            .sum();
        waiting as f64 / (f.end - f.start).max(1) as f64
    };
    let trace = load(&fixture("timing_cases"));
    let found = findings(&trace);
    let syncs = kinds(&found, FindingKind::SyncInLoop);
    assert!(syncs.len() >= 4, "{syncs:#?}");
    for f in &syncs {
        assert!(waits(&trace, f) >= 0.25, "{f:#?}");
    }
    let case = instances(&ranges(&trace), "case:sync-per-tiny-kernel", None)[0].clone();
    let in_case = |f: &&Finding| f.start >= case.start && f.end <= case.end;
    assert!(
        syncs.iter().any(in_case),
        "the case's syncs are a sync-in-loop"
    );
    let quick = edited("timing_cases", |conn, _| {
        conn.execute(
            "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start + 100
             WHERE start >= ?1 AND start < ?2 AND nameId IN
               (SELECT id FROM StringIds WHERE value LIKE '%Synchronize%')",
            [case.start, case.end],
        )
        .expect("syncs made quick");
    });
    let found = findings(&quick);
    let syncs = kinds(&found, FindingKind::SyncInLoop);
    assert!(!syncs.iter().any(in_case), "{syncs:#?}");
    assert!(syncs.len() >= 3, "the other cases keep theirs");
}
