//! The nsys-schema writer and `sightline synth`: scaled reports load, hold N×
//! the events and N× the durations of their source, pair API calls with GPU
//! work inside each copy, and a failed or cancelled write leaves nothing broken.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;

use rusqlite::{Connection, OpenFlags};
use sightline::analysis::stats::{self, Cell, Report};
use sightline::model::{GpuOpKind, Trace};
use sightline::synth::{WriteError, write_report};

const FIXTURES: [&str; 3] = ["sync_timing", "streams", "torch_work"];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.sqlite"))
}

fn load(path: &Path) -> Trace {
    let cancel = AtomicBool::new(false);
    match sightline::loader::load(path, &mut |_| {}, &cancel) {
        Ok(t) => t,
        Err(e) => panic!("load failed: {e}"),
    }
}

fn write(trace: &Trace, copies: usize, out: &Path) {
    let cancel = AtomicBool::new(false);
    if let Err(e) = write_report(trace, copies, out, &mut |_| {}, &cancel) {
        panic!("write failed: {e}");
    }
}

/// Per event table: row count and total duration, by raw SQL (NVTX: ranges and
/// marks only, the rows that are events; domain/category/name rows are not).
fn raw_totals(path: &Path) -> Vec<(&'static str, i64, i64)> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let tables = [
        ("CUPTI_ACTIVITY_KIND_RUNTIME", ""),
        ("CUPTI_ACTIVITY_KIND_KERNEL", ""),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", ""),
        ("CUPTI_ACTIVITY_KIND_MEMSET", ""),
        ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", ""),
        ("OSRT_API", ""),
        ("NVTX_EVENTS", "WHERE eventType IN (34, 59, 60)"),
        ("CUDA_GRAPH_NODE_EVENTS", ""),
    ];
    tables
        .iter()
        .map(|&(table, filter)| {
            let exists: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .unwrap();
            if exists == 0 {
                return (table, 0, 0);
            }
            let (n, d) = conn
                .query_row(
                    &format!(
                        "SELECT count(*), coalesce(sum(end - start), 0) FROM {table} {filter}"
                    ),
                    [],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                )
                .unwrap();
            (table, n, d)
        })
        .collect()
}

/// Per model table: event count and total duration.
fn model_totals(t: &Trace) -> Vec<(&'static str, usize, i64)> {
    let spans = [
        ("cuda_api", &t.cuda_api.spans),
        ("osrt", &t.osrt.spans),
        ("nvtx", &t.nvtx.spans),
        ("kernels", &t.kernels.spans),
        ("memcpys", &t.memcpys.spans),
        ("memsets", &t.memsets.spans),
        ("syncs", &t.syncs.spans),
    ];
    let mut out: Vec<_> = spans
        .iter()
        .map(|(name, s)| (*name, s.len(), (0..s.len()).map(|i| s.duration(i)).sum()))
        .collect();
    out.push(("cuda_events", t.cuda_events.len(), 0));
    out.push((
        "graph_records",
        t.graph_records.len(),
        t.graph_records.iter().map(|g| g.end - g.start).sum(),
    ));
    out
}

#[test]
fn scaled_reports_hold_n_times_the_events_and_durations() {
    let dir = tempfile::tempdir().unwrap();
    for name in FIXTURES {
        let src = fixture(name);
        let trace = load(&src);
        let out = dir.path().join(format!("{name}_x3.sqlite"));
        write(&trace, 3, &out);

        let before = raw_totals(&src);
        let after = raw_totals(&out);
        assert!(
            before.iter().any(|&(_, n, _)| n > 0),
            "{name}: fixture has events"
        );
        for ((table, n, d), (_, n3, d3)) in before.iter().zip(&after) {
            assert_eq!(*n3, 3 * n, "{name} {table}: row count");
            assert_eq!(*d3, 3 * d, "{name} {table}: total duration");
        }

        let scaled = load(&out);
        assert_eq!(
            scaled.event_count(),
            3 * trace.event_count(),
            "{name}: events loaded"
        );
        for ((kind, n, d), (_, n3, d3)) in model_totals(&trace).iter().zip(model_totals(&scaled)) {
            assert_eq!(n3, 3 * n, "{name} {kind}: loaded count");
            assert_eq!(d3, 3 * d, "{name} {kind}: loaded duration");
        }
        // Copies share threads and streams: they line up on the same rows. (Threads known
        // only from CPU samples or scheduling are not copied: the writer copies the events
        // the model draws as boxes, not the samples.)
        let with_events =
            |t: &sightline::model::Trace| t.threads.iter().filter(|th| !th.is_empty()).count();
        assert_eq!(with_events(&scaled), with_events(&trace), "{name}: threads");
        assert_eq!(scaled.streams.len(), trace.streams.len(), "{name}: streams");
        assert_eq!(
            scaled.processes.len(),
            trace.processes.len(),
            "{name}: processes"
        );
    }
}

#[test]
fn one_copy_round_trips_sync_timing() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("sync_timing");
    let original = load(&src);
    let out = dir.path().join("x1.sqlite");
    write(&original, 1, &out);
    let copy = load(&out);

    assert_eq!(model_totals(&copy), model_totals(&original));
    assert_eq!(copy.info.time_range, original.info.time_range);
    assert_eq!(copy.warnings, original.warnings);
    // Names survive, per kind (strings are compared, not ids).
    let names = |t: &Trace, s: &sightline::model::SpanColumns| {
        let mut v: Vec<String> = s.name.iter().map(|&n| t.name(n).to_string()).collect();
        v.sort();
        v
    };
    for (a, b) in [
        (&original.cuda_api.spans, &copy.cuda_api.spans),
        (&original.osrt.spans, &copy.osrt.spans),
        (&original.nvtx.spans, &copy.nvtx.spans),
        (&original.kernels.spans, &copy.kernels.spans),
        (&original.memcpys.spans, &copy.memcpys.spans),
        (&original.syncs.spans, &copy.syncs.spans),
    ] {
        assert_eq!(names(&copy, b), names(&original, a));
    }
    let thread_names = |t: &Trace| {
        let mut v: Vec<(i64, String)> = t
            .threads
            .iter()
            .map(|th| (th.global_tid, th.name.clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(thread_names(&copy), thread_names(&original));
    let procs = |t: &Trace| {
        let mut v: Vec<(u32, String)> = t
            .processes
            .iter()
            .map(|p| (p.pid, p.name.clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(procs(&copy), procs(&original));
    assert_eq!(
        copy.gpus
            .iter()
            .map(|g| (&g.name, g.sm_count, g.memory_bytes))
            .collect::<Vec<_>>(),
        original
            .gpus
            .iter()
            .map(|g| (&g.name, g.sm_count, g.memory_bytes))
            .collect::<Vec<_>>()
    );
    assert_eq!(copy.kernels.configs.len(), original.kernels.configs.len());
}

#[test]
fn streams_round_trip_keeps_nvtx_domains_colors_and_cross_thread_ends() {
    let dir = tempfile::tempdir().unwrap();
    let original = load(&fixture("streams"));
    let out = dir.path().join("x1.sqlite");
    write(&original, 1, &out);
    let copy = load(&out);
    let domains = |t: &Trace| {
        let mut v: Vec<(i64, String, usize)> = t
            .threads
            .iter()
            .flat_map(|th| {
                th.nvtx
                    .iter()
                    .map(move |n| (th.global_tid, n.domain.clone(), n.track.len()))
            })
            .collect();
        v.sort();
        v
    };
    assert!(
        domains(&original).iter().any(|(_, d, _)| !d.is_empty()),
        "fixture has a named domain"
    );
    assert_eq!(domains(&copy), domains(&original));
    let mut colors_a = original.nvtx.color.to_vec();
    let mut colors_b = copy.nvtx.color.to_vec();
    colors_a.sort();
    colors_b.sort();
    assert_eq!(colors_b, colors_a);
    assert_eq!(copy.nvtx.end_thread.len(), original.nvtx.end_thread.len());
    assert!(
        !original.nvtx.category_names.is_empty(),
        "fixture names categories"
    );
    assert_eq!(copy.nvtx.category_names, original.nvtx.category_names);
    let kinds = |t: &Trace| {
        let mut v: Vec<u8> = t.nvtx.kind.iter().map(|&k| k as u8).collect();
        v.sort();
        v
    };
    assert_eq!(kinds(&copy), kinds(&original));
}

#[test]
fn api_calls_pair_with_gpu_work_of_their_own_copy() {
    let dir = tempfile::tempdir().unwrap();
    let trace = load(&fixture("sync_timing"));
    let out = dir.path().join("x4.sqlite");
    let cancel = AtomicBool::new(false);
    let summary = write_report(&trace, 4, &out, &mut |_| {}, &cancel).unwrap();
    let scaled = load(&out);
    let lo = trace.info.time_range.0;
    let copy_of = |t: i64| (t - lo).div_euclid(summary.copy_shift);
    let mut paired = 0;
    for stream in &scaled.streams {
        for i in stream.kernels.rows() {
            let corr = scaled.kernels.correlation[i as usize];
            let api = scaled
                .correlation
                .api_call(stream.pid, corr)
                .unwrap_or_else(|| panic!("kernel {i} has no API call"));
            let kernel_start = scaled.kernels.spans.start[i as usize];
            let api_start = scaled.cuda_api.spans.start[api as usize];
            assert_eq!(
                copy_of(api_start),
                copy_of(kernel_start),
                "kernel {i} paired across copies"
            );
            assert!(
                scaled
                    .correlation
                    .gpu_ops(stream.pid, corr)
                    .any(|op| op.kind == GpuOpKind::Kernel && op.index == i)
            );
            paired += 1;
        }
    }
    assert_eq!(paired, 4 * trace.kernels.spans.len());
    assert!(
        copy_of(scaled.info.time_range.1) == 3,
        "four copies one after another"
    );
}

/// Key cells (text, ids) and the columns that add up across copies.
fn additive_columns(table: &stats::Table) -> (Vec<usize>, Vec<usize>) {
    let scaled = [
        "Total Time (ns)",
        "Num Calls",
        "Instances",
        "Count",
        "QCount",
    ];
    let ids = ["PID", "TID", "DevId"];
    let mut keys = Vec::new();
    let mut sums = Vec::new();
    for (i, c) in table.columns.iter().enumerate() {
        if scaled.contains(&c.as_str()) {
            sums.push(i);
        } else if ids.contains(&c.as_str())
            || table
                .rows
                .iter()
                .all(|r| matches!(r.get(i), Some(Cell::Text(_))))
        {
            keys.push(i);
        }
    }
    (keys, sums)
}

#[test]
fn stats_of_scaled_report_are_n_times_the_original() {
    // Trivially true while the stats engine is a scaffold; real once it lands.
    let dir = tempfile::tempdir().unwrap();
    for name in ["sync_timing", "streams"] {
        let trace = load(&fixture(name));
        let out = dir.path().join(format!("{name}_x3.sqlite"));
        write(&trace, 3, &out);
        let scaled = load(&out);
        for report in Report::ALL {
            let a = stats::compute(&trace, report, None);
            let b = stats::compute(&scaled, report, None);
            assert_eq!(a.columns, b.columns, "{name} {}", report.name());
            assert_eq!(a.rows.len(), b.rows.len(), "{name} {}: rows", report.name());
            let (keys, sums) = additive_columns(&a);
            let index = |t: &stats::Table| -> HashMap<Vec<String>, Vec<Vec<Cell>>> {
                let mut m: HashMap<Vec<String>, Vec<Vec<Cell>>> = HashMap::new();
                for r in &t.rows {
                    let key = keys.iter().map(|&k| r[k].to_string()).collect();
                    m.entry(key)
                        .or_default()
                        .push(sums.iter().map(|&s| r[s].clone()).collect());
                }
                m
            };
            let (ia, ib) = (index(&a), index(&b));
            for (key, rows) in &ia {
                let scaled_rows = ib
                    .get(key)
                    .unwrap_or_else(|| panic!("{name} {}: row {key:?} missing", report.name()));
                let mut want: Vec<Vec<Cell>> = rows
                    .iter()
                    .map(|r| {
                        r.iter()
                            .map(|c| match c {
                                Cell::Int(v) => Cell::Int(3 * v),
                                other => other.clone(),
                            })
                            .collect()
                    })
                    .collect();
                let mut got = scaled_rows.clone();
                want.sort_by_key(|r| format!("{r:?}"));
                got.sort_by_key(|r| format!("{r:?}"));
                assert_eq!(got, want, "{name} {} {key:?}", report.name());
            }
        }
    }
}

#[test]
fn cancelled_write_leaves_existing_output_and_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let trace = load(&fixture("sync_timing"));
    let out = dir.path().join("out.sqlite");
    std::fs::write(&out, b"previous contents").unwrap();
    let cancel = AtomicBool::new(true);
    let result = write_report(&trace, 2, &out, &mut |_| {}, &cancel);
    assert!(matches!(result, Err(WriteError::Cancelled)), "{result:?}");
    assert_eq!(std::fs::read(&out).unwrap(), b"previous contents");
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        files,
        vec![std::ffi::OsString::from("out.sqlite")],
        "temp file left behind"
    );
}

#[test]
fn writer_refuses_zero_copies_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    let trace = load(&fixture("sync_timing"));
    let cancel = AtomicBool::new(false);
    let zero = write_report(
        &trace,
        0,
        &dir.path().join("a.sqlite"),
        &mut |_| {},
        &cancel,
    );
    assert!(matches!(zero, Err(WriteError::Invalid(_))), "{zero:?}");
    let to_dir = write_report(&trace, 1, dir.path(), &mut |_| {}, &cancel);
    assert!(matches!(to_dir, Err(WriteError::Invalid(_))), "{to_dir:?}");
    let no_dir = write_report(
        &trace,
        1,
        &dir.path().join("missing/a.sqlite"),
        &mut |_| {},
        &cancel,
    );
    assert!(no_dir.is_err());
    assert!(!dir.path().join("missing").exists());
}

fn sightline(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline")
}

#[test]
fn synth_command_writes_a_loadable_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x2.sqlite");
    let src = fixture("sync_timing");
    let o = sightline(&[
        "synth",
        "--from",
        src.to_str().unwrap(),
        "--scale",
        "2",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("x2.sqlite"));
    let (a, b) = (raw_totals(&src), raw_totals(&out));
    for ((table, n, _), (_, n2, _)) in a.iter().zip(&b) {
        assert_eq!(*n2, 2 * n, "{table}");
    }
}

#[test]
fn synth_command_rejects_bad_arguments_without_touching_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.sqlite");
    std::fs::copy(fixture("sync_timing"), &src).unwrap();
    let before = std::fs::read(&src).unwrap();
    let s = src.to_str().unwrap();
    let out = dir.path().join("o.sqlite");
    let o = out.to_str().unwrap();
    for args in [
        vec!["synth", "--from", s, "--scale", "2", "--output", s],
        vec!["synth", "--from", s, "--scale", "0", "--output", o],
        vec!["synth", "--from", s, "--scale", "two", "--output", o],
        vec!["synth", "--from", s, "--output", o],
        vec![
            "synth", "--from", s, "--scale", "2", "--output", o, "--colour", "red",
        ],
        vec![
            "synth",
            "--from",
            "/nonexistent/x.sqlite",
            "--scale",
            "2",
            "--output",
            o,
        ],
    ] {
        let r = sightline(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.starts_with("sightline"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote an output");
    }
    assert_eq!(std::fs::read(&src).unwrap(), before, "source modified");
}

#[test]
fn bench_command_reports_the_loaded_events_as_json() {
    let src = fixture("streams");
    let events = load(&src).event_count();
    let o = sightline(&["bench", src.to_str().unwrap(), "--json"]);
    assert!(
        o.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.trim();
    assert!(
        line.starts_with('{') && line.ends_with('}') && !line.contains('\n'),
        "{line}"
    );
    assert!(line.contains(&format!("\"events\":{events},")), "{line}");
    for key in [
        "\"load_s\":",
        "\"phases_s\":{\"strings and threads\":",
        "\"floor_s\":",
        "\"load_over_floor\":",
        "\"rss_growth_bytes\":",
    ] {
        assert!(line.contains(key), "{key} missing: {line}");
    }
    let text = sightline(&["bench", src.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains(&format!("events loaded        {events}"))
    );
    let bad = sightline(&["bench"]);
    assert_eq!(bad.status.code(), Some(2));
}
