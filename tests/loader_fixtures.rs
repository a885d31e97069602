//! The loader against nsys's own per-event traces of the same reports
//! (`nsys stats` `cuda_api_trace`, `cuda_gpu_trace`, `nvtx_pushpop_trace`):
//! every event nsys lists must be in the model, with the same fields.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use sightline::model::nsys::strip_version_suffix;
use sightline::model::{GpuOp, GpuOpKind, NvtxKind, Trace};

const FIXTURES: [&str; 3] = ["sync_timing", "streams", "torch_work"];

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn load(name: &str) -> Trace {
    let path = fixture_dir().join(format!("{name}.sqlite"));
    sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Rows of an nsys CSV as header → value maps (RFC 4180 quoting).
fn read_csv(name: &str, report: &str) -> Vec<HashMap<String, String>> {
    let path = fixture_dir().join(format!("stats/{name}_{report}.csv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().map(common::csv_fields);
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    lines
        .map(|fields| header.iter().cloned().zip(fields).collect())
        .collect()
}

fn num(row: &HashMap<String, String>, column: &str) -> i64 {
    row[column]
        .parse()
        .unwrap_or_else(|e| panic!("{column}={:?}: {e}", row[column]))
}

#[test]
fn every_cuda_api_call_nsys_lists_is_loaded_with_its_fields() {
    for name in FIXTURES {
        let trace = load(name);
        let rows = read_csv(name, "cuda_api_trace");
        assert!(!rows.is_empty(), "{name}: empty reference");
        assert_eq!(
            trace.cuda_api.spans.len(),
            rows.len(),
            "{name}: API call count"
        );
        // Index our calls by (tid, start).
        let mut ours = HashMap::new();
        for thread in &trace.threads {
            for i in thread.cuda_api.rows() {
                ours.insert(
                    (thread.tid, trace.cuda_api.spans.start[i as usize]),
                    (thread, i as usize),
                );
            }
        }
        for row in &rows {
            let key = (num(row, "Tid") as u32, num(row, "Start (ns)"));
            let (thread, i) = ours
                .get(&key)
                .unwrap_or_else(|| panic!("{name}: no API call at {key:?}"));
            let api = &trace.cuda_api;
            assert_eq!(
                api.spans.duration(*i),
                num(row, "Duration (ns)"),
                "{name} {key:?}"
            );
            assert_eq!(
                strip_version_suffix(trace.name(api.spans.name[*i])),
                row["Name"],
                "{name} {key:?}"
            );
            assert_eq!(
                api.correlation[*i] as i64,
                num(row, "CorrID"),
                "{name} {key:?}"
            );
            assert_eq!(
                api.return_value.at(*i) as i64,
                num(row, "Result"),
                "{name} {key:?}"
            );
            assert_eq!(thread.pid as i64, num(row, "Pid"), "{name} {key:?}");
            assert_eq!(thread.name, row["Thread Name"], "{name} {key:?}");
        }
    }
}

#[test]
fn every_gpu_operation_nsys_lists_is_loaded_and_correlated() {
    for name in FIXTURES {
        let trace = load(name);
        let rows = read_csv(name, "cuda_gpu_trace");
        let ops_loaded =
            trace.kernels.spans.len() + trace.memcpys.spans.len() + trace.memsets.spans.len();
        assert_eq!(ops_loaded, rows.len(), "{name}: GPU op count");
        for row in &rows {
            let start = num(row, "Start (ns)");
            let stream_id = num(row, "Strm") as u32;
            let stream = trace
                .streams
                .iter()
                .find(|s| s.stream_id == stream_id)
                .unwrap_or_else(|| panic!("{name}: no stream {stream_id}"));
            let label = &row["Name"];
            let (kind, track) = if label.starts_with("[CUDA memcpy") {
                (GpuOpKind::Memcpy, &stream.memcpys)
            } else if label == "[CUDA memset]" {
                (GpuOpKind::Memset, &stream.memsets)
            } else {
                (GpuOpKind::Kernel, &stream.kernels)
            };
            let spans = trace.gpu_spans(kind);
            let index = track
                .starting_in(spans, start, start + 1)
                .find(|&i| trace.name(spans.name[i as usize]) == label)
                .unwrap_or_else(|| panic!("{name}: no {label} at {start} on stream {stream_id}"));
            let i = index as usize;
            assert_eq!(
                spans.duration(i),
                num(row, "Duration (ns)"),
                "{name} {label} {start}"
            );
            let corr = num(row, "CorrId") as u32;
            match kind {
                GpuOpKind::Kernel => {
                    let k = &trace.kernels;
                    assert_eq!(k.correlation[i], corr);
                    let cfg = &k.configs[k.config[i] as usize];
                    let grid = [num(row, "GrdX"), num(row, "GrdY"), num(row, "GrdZ")];
                    let block = [num(row, "BlkX"), num(row, "BlkY"), num(row, "BlkZ")];
                    assert_eq!(cfg.grid.map(i64::from), grid, "{name} {label} {start}");
                    assert_eq!(cfg.block.map(i64::from), block, "{name} {label} {start}");
                    assert_eq!(cfg.registers_per_thread as i64, num(row, "Reg/Trd"));
                }
                GpuOpKind::Memcpy => {
                    let m = &trace.memcpys;
                    assert_eq!(m.correlation[i], corr);
                    assert_eq!(format!("{:.3}", m.bytes[i] as f64 / 1e6), row["Bytes (MB)"]);
                }
                _ => {
                    assert_eq!(trace.memsets.correlation[i], corr);
                }
            }
            // The API call that launched it, both ways round.
            let op = GpuOp { kind, index };
            if let Some(api) = trace.correlation.api_call(stream.pid, corr) {
                assert_eq!(trace.cuda_api.correlation[api as usize], corr);
                assert!(
                    trace.correlation.gpu_ops(stream.pid, corr).any(|o| o == op),
                    "{name}: API call {corr} does not list its {label}"
                );
            } else {
                panic!("{name}: no API call for correlation id {corr}");
            }
        }
    }
}

#[test]
fn nvtx_nesting_levels_match_nsys() {
    for name in FIXTURES {
        let trace = load(name);
        let rows = read_csv(name, "nvtx_pushpop_trace");
        assert!(!rows.is_empty(), "{name}: empty reference");
        for row in &rows {
            let start = num(row, "Start (ns)");
            let tid = num(row, "TID") as u32;
            let thread = trace
                .threads
                .iter()
                .find(|t| t.tid == tid)
                .unwrap_or_else(|| panic!("{name}: no thread {tid}"));
            let nvtx = &trace.nvtx;
            let found = thread.nvtx.iter().find_map(|track| {
                (track.track.starting_in(&nvtx.spans, start, start + 1))
                    .find(|&i| {
                        format!(
                            "{}:{}",
                            track.domain,
                            trace.name(nvtx.spans.name[i as usize])
                        ) == row["Name"]
                    })
                    .map(|i| i as usize)
            });
            let i = found.unwrap_or_else(|| panic!("{name}: no range {} at {start}", row["Name"]));
            let end = nvtx.spans.end(i);
            assert_eq!(end, num(row, "End (ns)"), "{name} {}", row["Name"]);
            // nsys's level counts enclosing push/pop ranges of every domain of the
            // thread; our depth (a row inside the domain's track) counts those of
            // the same domain only.
            let encloses = |j: usize| {
                j != i
                    && nvtx.kind[j] == NvtxKind::PushPop
                    && nvtx.spans.start[j] <= start
                    && nvtx.spans.end(j) >= end
            };
            let across_domains: usize = thread
                .nvtx
                .iter()
                .map(|t| (t.track.rows()).filter(|&j| encloses(j as usize)).count())
                .sum();
            assert_eq!(
                across_domains as i64,
                num(row, "Lvl"),
                "{name} {} at {start}",
                row["Name"]
            );
            let own = thread
                .nvtx
                .iter()
                .find(|t| t.track.contains(i as u32))
                .map(|t| (t.track.rows()).filter(|&j| encloses(j as usize)).count());
            assert_eq!(
                Some(nvtx.depth[i] as usize),
                own,
                "{name} {} at {start}",
                row["Name"]
            );
        }
    }
}

#[test]
fn streams_fixture_has_named_threads_domains_payloads_and_a_cross_thread_range() {
    let trace = load("streams");
    let names: Vec<&str> = trace.threads.iter().map(|t| t.name.as_str()).collect();
    for expected in ["main", "worker-0", "worker-1"] {
        assert!(
            names.contains(&expected),
            "thread {expected} missing from {names:?}"
        );
    }
    let domains: Vec<&str> = trace
        .threads
        .iter()
        .flat_map(|t| t.nvtx.iter().map(|n| n.domain.as_str()))
        .collect();
    assert!(domains.contains(&"fixture-demo"), "{domains:?}");
    let nvtx = &trace.nvtx;
    assert!(!nvtx.payload.is_empty(), "int64 payloads are loaded");
    assert!(nvtx.color.iter().any(|&c| c != 0), "colors are loaded");
    let category = nvtx.category_names.get(&("fixture-demo".to_string(), 1));
    assert_eq!(category.map(String::as_str), Some("worker-0-work"));
    // `handoff-range` starts on one thread and ends on another.
    let handoff = (0..nvtx.spans.len())
        .find(|&i| trace.name(nvtx.spans.name[i]) == "handoff-range")
        .expect("handoff-range is loaded");
    assert!(nvtx.end_thread.contains_key(&(handoff as u32)));
    // The GPU, by name.
    assert_eq!(trace.gpus.len(), 1);
    assert_eq!(trace.gpus[0].name, "NVIDIA H100 80GB HBM3");
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
}

#[test]
fn cuda_graph_kernels_and_records_are_loaded() {
    let trace = load("torch_work");
    let graph_kernels = trace
        .kernels
        .graph_node_id
        .iter()
        .filter(|&n| n != 0)
        .count();
    assert!(
        graph_kernels > 0,
        "kernels launched from a graph keep their node id"
    );
    assert!(trace.graph_records.iter().any(|r| r.is_node));
}

#[test]
fn a_background_load_reports_progress_then_the_trace() {
    use sightline::loader::{LoadJob, LoadMessage};
    let job = LoadJob::spawn(
        fixture_dir().join("streams.sqlite"),
        sightline::loader::LoadOptions::WHOLE,
    );
    let mut fractions = Vec::new();
    let trace = loop {
        match job
            .messages()
            .recv_timeout(std::time::Duration::from_secs(60))
        {
            Ok(LoadMessage::Progress(p)) => fractions.push(p.fraction),
            Ok(LoadMessage::Partial { .. }) => {}
            Ok(LoadMessage::Done { result, .. }) => {
                break result.unwrap_or_else(|e| panic!("{e}"));
            }
            Err(e) => panic!("no message from the loader: {e}"),
        }
    };
    assert!(!fractions.is_empty(), "progress is reported");
    assert!(
        fractions.windows(2).all(|w| w[0] <= w[1]),
        "progress never goes back: {fractions:?}"
    );
    assert_eq!(fractions.last(), Some(&1.0));
    assert!(trace.event_count() > 60_000);
}

#[test]
fn a_cancelled_load_stops_with_a_cancelled_error() {
    use sightline::loader::Problem;
    let cancel = AtomicBool::new(true);
    let path = fixture_dir().join("streams.sqlite");
    let err = sightline::loader::load(&path, &mut |_| {}, &cancel).expect_err("cancelled");
    assert_eq!(err.problem, Problem::Cancelled);
    assert!(err.to_string().contains("streams.sqlite"), "{err}");
}

/// Older nsys exports lack columns added over the years. A copy of a fixture
/// with those columns removed still loads (with warnings naming them) and
/// still gives nsys's numbers.
#[test]
fn a_report_without_the_newer_columns_loads_and_matches_nsys() {
    use sightline::analysis::stats::{Report, compute};
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("older.sqlite");
    std::fs::copy(fixture_dir().join("sync_timing.sqlite"), &path)
        .unwrap_or_else(|e| panic!("{e}"));
    let conn = rusqlite::Connection::open(&path).unwrap_or_else(|e| panic!("{e}"));
    for (table, column) in [
        ("CUPTI_ACTIVITY_KIND_KERNEL", "greenContextId"),
        ("CUPTI_ACTIVITY_KIND_KERNEL", "graphNodeId"),
        ("CUPTI_ACTIVITY_KIND_KERNEL", "sharedMemoryLimitConfig"),
        ("CUPTI_ACTIVITY_KIND_KERNEL", "mangledName"),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", "copyCount"),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", "graphNodeId"),
        ("NVTX_EVENTS", "endGlobalTid"),
        ("NVTX_EVENTS", "jsonText"),
        ("NVTX_EVENTS", "textId"),
    ] {
        conn.execute_batch(&format!("ALTER TABLE {table} DROP COLUMN {column}"))
            .unwrap_or_else(|e| panic!("{table}.{column}: {e}"));
    }
    drop(conn);
    let trace = sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("{e}"));
    for column in [
        "greenContextId",
        "graphNodeId",
        "copyCount",
        "endGlobalTid",
        "textId",
    ] {
        // Columns the loader reads are named in a warning; others are not read at all.
        let read = ["graphNodeId", "endGlobalTid", "textId"].contains(&column);
        assert_eq!(
            trace.warnings.iter().any(|w| w.contains(column)),
            read,
            "{column}: {:?}",
            trace.warnings
        );
    }
    for report in [
        Report::CudaGpuKernSum,
        Report::NvtxSum,
        Report::CudaGpuMemTimeSum,
    ] {
        let name = report.name();
        let expected =
            std::fs::read_to_string(fixture_dir().join(format!("stats/sync_timing_{name}.csv")))
                .unwrap_or_else(|e| panic!("{e}"));
        let got = compute(&trace, report, None).to_csv();
        assert_eq!(got.trim_end(), expected.trim_end(), "{name}");
    }
}

/// A progressive load publishes the report as it is read, and every
/// snapshot is a prefix of the final trace: each table is either not read
/// yet (empty, and named as still to come) or exactly the final table, so an
/// event shown early keeps its index. The final trace is the one a plain load
/// gives. Checked on every fixture report, not one.
#[test]
fn a_progressive_load_shows_whole_tables_that_keep_their_indexes() {
    for name in [
        "streams.sqlite",
        "sync_timing.sqlite",
        "torch_work.sqlite",
        "timing_cases.sqlite",
        "torch_metrics_excerpt.sqlite",
    ] {
        let path = fixture_dir().join(name);
        let mut snapshots: Vec<(usize, sightline::model::Trace)> = Vec::new();
        let loaded = sightline::loader::load_progressive(
            &path,
            sightline::loader::LoadOptions::WHOLE,
            &mut |_| {},
            &mut |attempt, trace| snapshots.push((attempt, trace)),
            &AtomicBool::new(false),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let whole = loaded.trace;
        let plain = sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(whole.event_count(), plain.event_count(), "{name}");
        assert_eq!(
            whole.kernels.spans.start, plain.kernels.spans.start,
            "{name}"
        );
        assert_eq!(
            whole.cuda_api.spans.start, plain.cuda_api.spans.start,
            "{name}"
        );
        assert!(whole.is_complete(), "{name}");
        assert!(
            snapshots.len() >= 5,
            "{name}: {} snapshots",
            snapshots.len()
        );
        // The first is drawn before any event is read: GPUs and a time axis.
        let first = &snapshots[0].1;
        assert_eq!(first.event_count(), 0, "{name}");
        assert_eq!(first.gpus.len(), whole.gpus.len(), "{name}");
        let (lo, hi) = first.info.time_range;
        let (wlo, whi) = whole.info.time_range;
        assert!(
            lo < hi && lo <= whi && hi >= wlo,
            "{name}: axis {lo}..{hi} vs {wlo}..{whi}"
        );
        let mut counts = Vec::new();
        for (attempt, snap) in &snapshots {
            assert_eq!(*attempt, loaded.attempt, "{name}");
            assert!(!snap.is_complete(), "{name}");
            // Whole tables or none, with the final trace's indexes.
            for (what, part, full) in [
                ("kernels", &snap.kernels.spans, &whole.kernels.spans),
                ("copies", &snap.memcpys.spans, &whole.memcpys.spans),
                ("NVTX", &snap.nvtx.spans, &whole.nvtx.spans),
                ("CUDA API", &snap.cuda_api.spans, &whole.cuda_api.spans),
                ("OS runtime", &snap.osrt.spans, &whole.osrt.spans),
            ] {
                if !part.is_empty() {
                    assert_eq!(part.start, full.start, "{name}: {what}");
                    assert!(part.ends().eq(full.ends()), "{name}: {what}");
                    assert_eq!(part.name, full.name, "{name}: {what}");
                }
            }
            // Streams and threads already there keep their index and events.
            for (i, s) in snap.streams.iter().enumerate() {
                assert_eq!(s.kernels, whole.streams[i].kernels, "{name}");
            }
            for (i, t) in snap.threads.iter().enumerate() {
                assert_eq!(t.global_tid, whole.threads[i].global_tid, "{name}");
            }
            // The axis holds every event read so far.
            let (lo, hi) = snap.info.time_range;
            if let (Some(&s), Some(e)) = (
                snap.kernels.spans.start.iter().min(),
                snap.kernels.spans.ends().max(),
            ) {
                assert!(lo <= s && e <= hi, "{name}");
            }
            counts.push((snap.event_count(), snap.info.still_loading.len()));
        }
        // Rows come in, never go; what is still to come only shrinks.
        assert!(
            counts
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 > w[1].1),
            "{name}: {counts:?}"
        );
        // GPU rows come before the CPU side.
        let gpu_first = snapshots
            .iter()
            .position(|(_, t)| !t.kernels.spans.is_empty());
        let api_first = snapshots
            .iter()
            .position(|(_, t)| !t.cuda_api.spans.is_empty());
        if let (Some(g), Some(a)) = (gpu_first, api_first) {
            assert!(g < a, "{name}");
        }
    }
}
