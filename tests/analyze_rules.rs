//! The rules' filters on reports edited to sit on each side of them: the
//! behaviour nsys's rule scripts define, beyond what the fixtures exercise.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use rusqlite::Connection;
use sightline::analysis::rules::{Rule, RuleOptions, RuleSpec, run};
use sightline::model::Trace;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.sqlite"))
}

fn edited(name: &str, sql: &str) -> Trace {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(format!("{name}.sqlite"));
    std::fs::copy(fixture(name), &path).expect("copy");
    Connection::open(&path)
        .expect("open copy")
        .execute_batch(sql)
        .expect("edit");
    sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false)).expect("load")
}

fn csv(trace: &Trace, rule: Rule) -> String {
    run(trace, rule, &RuleOptions::default()).to_csv()
}

fn starts(trace: &Trace, rule: Rule) -> Vec<String> {
    csv(trace, rule)
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap_or_default().to_string())
        .collect()
}

/// Host-to-device copies of at most 64,000 bytes return at once: not reported.
/// One byte more is.
#[test]
fn memcpy_sync_small_host_to_device_limit() {
    let at_limit = edited(
        "sync_timing",
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 64000 WHERE start = 523124266",
    );
    assert!(!starts(&at_limit, Rule::CudaMemcpySync).contains(&"523124266".to_string()));
    let above = edited(
        "sync_timing",
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 64001 WHERE start = 523124266",
    );
    let rows = csv(&above, Rule::CudaMemcpySync);
    assert!(
        rows.contains(",523124266,Pageable,Device,0.064,553,0,1,,7,cudaMemcpy_v3020\n"),
        "{rows}"
    );
    // A device-to-host copy of the same size is reported either way.
    let d2h = edited(
        "sync_timing",
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 100 WHERE start = 525120404",
    );
    assert!(starts(&d2h, Rule::CudaMemcpySync).contains(&"525120404".to_string()));
}

/// A copy within one device (source and destination device ids equal) is
/// not a synchronous host copy; a green context id is printed.
#[test]
fn memcpy_sync_same_device_and_green_context() {
    let trace = edited(
        "sync_timing",
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcDeviceId = 0, dstDeviceId = 0 WHERE start = 525120404;
         UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcDeviceId = 0, dstDeviceId = 1, greenContextId = 5
           WHERE start = 523495884;",
    );
    let rows = csv(&trace, Rule::CudaMemcpySync);
    assert!(!rows.contains(",525120404,"), "{rows}");
    assert!(
        rows.contains(",523495884,Pageable,Device,4.194,553,0,1,5,7,cudaMemcpy_v3020\n"),
        "{rows}"
    );
}

/// Synchronous memsets are reported on pinned and managed memory only, and
/// never the async ones.
#[test]
fn memset_sync_memory_kinds() {
    for (kind, label) in [
        (1, Some("Pinned")),
        (4, Some("Managed")),
        (0, None),
        (2, None),
    ] {
        let trace = edited(
            "streams",
            &format!("UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET memKind = {kind}"),
        );
        let rows = csv(&trace, Rule::CudaMemsetSync);
        match label {
            Some(label) => {
                let lines: Vec<&str> = rows.lines().collect();
                assert_eq!(lines.len(), 2, "{rows}");
                assert_eq!(
                    lines[0],
                    "Duration (ns),Start (ns),Memory Kind,Bytes (MB),PID,Device ID,Context ID,Green Context ID,Stream ID,API Name"
                );
                assert!(
                    lines[1].contains(&format!(",{label},0.000,647,0,1,,")),
                    "{rows}"
                );
                assert!(lines[1].ends_with(",cudaMemset_v3020"), "{rows}");
            }
            None => assert_eq!(rows, "", "memKind {kind}"),
        }
    }
}

/// Async copies with a pageable side are reported, whichever side; the
/// pinned ones of streams.cu are not until made pageable.
#[test]
fn memcpy_async_pageable_sides() {
    assert_eq!(
        csv(
            &sightline::loader::load(&fixture("streams"), &mut |_| {}, &AtomicBool::new(false))
                .expect("load"),
            Rule::CudaMemcpyAsync
        ),
        ""
    );
    let trace = edited(
        "streams",
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = 0 WHERE copyKind = 1;
         UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET dstKind = 0 WHERE copyKind = 2 AND dstKind = 1;",
    );
    let rows = csv(&trace, Rule::CudaMemcpyAsync);
    let lines: Vec<&str> = rows.lines().skip(1).collect();
    // 24 host-to-device and 24 device-to-host async copies (12 per worker).
    assert_eq!(lines.len(), 48, "{rows}");
    assert!(lines.iter().all(|l| l.ends_with(",cudaMemcpyAsync_v3020")));
    assert!(lines.iter().any(|l| l.contains(",Pageable,Device,")));
    assert!(lines.iter().any(|l| l.contains(",Device,Pageable,")));
    // Longest first.
    let durations: Vec<i64> = lines
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert!(durations.windows(2).all(|w| w[0] >= w[1]));
}

/// gpu_time_util's options: one chunk covers the whole span; a threshold of
/// 0 reports nothing; rows are numbered by in-use then duration.
#[test]
fn gpu_time_util_options() {
    let trace = sightline::loader::load(
        &fixture("sync_timing"),
        &mut |_| {},
        &AtomicBool::new(false),
    )
    .expect("load");
    let spec = |text: &str| RuleSpec::parse(text).expect("spec").options;
    let one = run(
        &trace,
        Rule::GpuTimeUtil,
        &spec("gpu_time_util:chunks=1:threshold=100"),
    )
    .to_csv();
    let lines: Vec<&str> = one.lines().collect();
    assert_eq!(lines.len(), 2, "{one}");
    // The whole span from the first GPU op's start to the last one's end.
    let k = &trace.kernels.spans;
    let m = &trace.memcpys.spans;
    let first = k.start.iter().chain(&m.start).min().unwrap();
    let last = k.ends().chain(m.ends()).max().unwrap();
    assert!(lines[1].starts_with("1,"));
    assert!(
        lines[1].ends_with(&format!(",{},{first},553,0,1", last - first)),
        "{one}"
    );
    assert_eq!(
        run(
            &trace,
            Rule::GpuTimeUtil,
            &spec("gpu_time_util:threshold=0")
        )
        .to_csv(),
        ""
    );
    let many = run(
        &trace,
        Rule::GpuTimeUtil,
        &spec("gpu_time_util:chunks=100:threshold=100"),
    )
    .to_csv();
    let uses: Vec<f64> = many
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(
        uses.len() > 1 && uses.windows(2).all(|w| w[0] <= w[1]),
        "{many}"
    );
}
