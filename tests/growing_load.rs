//! A report that grows by appended rows (a capture's working file), loaded
//! again and again with `loader::load_growing`, which reads only the rows of
//! the big tables added since its last load, gives at every step the trace a
//! fresh `loader::load` of the file gives.
//!
//! Real reports are rebuilt row by row in a new file: first their small
//! tables, then every event table in five slices of rowids, loaded after
//! each slice.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use rusqlite::Connection;
use sightline::analysis::findings::{self, FindingKind};
use sightline::analysis::{Report, compute, idle};
use sightline::loader::{Carry, load, load_growing};
use sightline::model::{GpuOpKind, LaunchConfig, SpanColumns, StrId, Trace, Track};

const SLICES: i64 = 5;

/// Tables copied in slices, as a capture adds to them (the rest are copied
/// whole first).
const EVENT_TABLES: [&str; 9] = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    "CUDA_GRAPH_NODE_EVENTS",
    "NVTX_EVENTS",
    "OSRT_API",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

struct Growing {
    conn: Connection,
    path: PathBuf,
    /// (table, first rowid, last rowid) of the event tables the source has.
    tables: Vec<(String, i64, i64)>,
    /// The kernel and API tables were given a rowid column of their own.
    aliased: bool,
}

/// Tables [`Growing::start_aliased`] gives a column that is their rowid.
const ALIASED: [&str; 2] = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"];

impl Growing {
    /// A new file beside the others of this test with `source`'s schema and
    /// its tables other than the event tables.
    fn start(source: &Path, name: &str) -> Growing {
        Growing::create(source, name, false)
    }

    /// [`Growing::start`], with the kernel and API tables given an `id
    /// INTEGER PRIMARY KEY` (their rowid) set to the source row's rowid, so
    /// that rows added later may have lower rowids.
    fn start_aliased(source: &Path, name: &str) -> Growing {
        Growing::create(source, name, true)
    }

    fn create(source: &Path, name: &str, aliased: bool) -> Growing {
        let path = std::env::temp_dir().join(format!(
            "sightline-growing-{}-{name}.sqlite",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        let conn = Connection::open(&path).expect("working file");
        conn.execute("ATTACH DATABASE ?1 AS src", [source.to_string_lossy()])
            .expect("attach");
        let tables: Vec<(String, String)> = conn
            .prepare("SELECT name, sql FROM src.sqlite_master WHERE type = 'table' AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%'")
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<_, _>>()
            })
            .expect("schema");
        let mut slices = Vec::new();
        for (table, sql) in &tables {
            let sql = if aliased && ALIASED.contains(&table.as_str()) {
                sql.replacen('(', "(id INTEGER PRIMARY KEY, ", 1)
            } else {
                sql.clone()
            };
            conn.execute_batch(&sql).expect("create table");
            if EVENT_TABLES.contains(&table.as_str()) {
                let bounds: (Option<i64>, Option<i64>) = conn
                    .query_row(
                        &format!("SELECT min(rowid), max(rowid) FROM src.\"{table}\""),
                        [],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .expect("bounds");
                if let (Some(lo), Some(hi)) = bounds {
                    slices.push((table.clone(), lo, hi));
                }
            } else {
                conn.execute_batch(&format!(
                    "INSERT INTO main.\"{table}\" SELECT * FROM src.\"{table}\""
                ))
                .expect("copy table");
            }
        }
        Growing {
            conn,
            path,
            tables: slices,
            aliased,
        }
    }

    /// Moves the rows of `table` added since the last call `by` ns later.
    fn move_new_rows(&self, table: &str, by: i64) {
        self.conn
            .execute_batch(&format!(
                "CREATE TABLE IF NOT EXISTS moved (name TEXT PRIMARY KEY, upto INTEGER);
                 INSERT OR IGNORE INTO moved VALUES ('{table}', 0);
                 UPDATE main.\"{table}\" SET start = start + {by}, \"end\" = \"end\" + {by}
                  WHERE rowid > (SELECT upto FROM moved WHERE name = '{table}');
                 UPDATE moved SET upto = (SELECT coalesce(max(rowid), 0) FROM main.\"{table}\")
                  WHERE name = '{table}';"
            ))
            .expect("move rows");
    }

    /// The thread (globalTid) of the source's first NVTX row.
    fn nvtx_thread(&self) -> i64 {
        self.conn
            .query_row("SELECT globalTid FROM src.NVTX_EVENTS LIMIT 1", [], |r| {
                r.get(0)
            })
            .expect("a thread with NVTX rows")
    }

    /// Adds slice `k` (of `slices`) of every event table, in rowid order.
    fn add_slice(&self, k: i64, slices: i64) {
        self.add_slice_where(k, slices, |_| true);
    }

    /// Adds slice `k` (of `slices`) of the event tables `pick` says, in
    /// rowid order.
    fn add_slice_where(&self, k: i64, slices: i64, pick: impl Fn(&str) -> bool) {
        for (table, lo, hi) in self.tables.iter().filter(|t| pick(&t.0)) {
            let width = (hi - lo) / slices + 1;
            let (from, to) = (lo + k * width, lo + (k + 1) * width);
            let columns = if self.aliased && ALIASED.contains(&table.as_str()) {
                "rowid, *"
            } else {
                "*"
            };
            self.conn
                .execute(
                    &format!(
                        "INSERT INTO main.\"{table}\" SELECT {columns} FROM src.\"{table}\" \
                         WHERE rowid >= ?1 AND rowid < ?2 ORDER BY rowid"
                    ),
                    [from, to],
                )
                .expect("copy slice");
        }
    }
}

impl Drop for Growing {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn same_spans(what: &str, a: &SpanColumns, b: &SpanColumns) {
    assert_eq!(a.start, b.start, "{what}: starts");
    assert_eq!(a.name, b.name, "{what}: names");
    let ends = |s: &SpanColumns| s.ends().collect::<Vec<_>>();
    assert_eq!(ends(a), ends(b), "{what}: ends");
}

fn same_track(what: &str, a: &Track, b: &Track) {
    assert_eq!(a.runs(), b.runs(), "{what}: runs");
    assert_eq!(a.depth, b.depth, "{what}: depth");
}

/// A kernel as every reader sees it.
type KernelFacts = (
    i64,
    i64,
    String,
    u32,
    LaunchConfig,
    Option<u64>,
    Option<u64>,
    String,
    String,
);

/// The kernels of `track`, in track order.
fn kernels(t: &Trace, track: &Track) -> Vec<KernelFacts> {
    let k = &t.kernels;
    let name = |id: Option<StrId>| id.map(|id| t.name(id).to_string()).unwrap_or_default();
    track
        .rows()
        .map(|i| i as usize)
        .map(|i| {
            (
                k.spans.start[i],
                k.spans.end(i),
                t.name(k.spans.name[i]).to_string(),
                k.correlation[i],
                k.configs[k.config[i] as usize],
                k.grid_id.get(i),
                k.graph_node_id.get(i),
                name(k.short_name(i)),
                name(k.mangled_name(i)),
            )
        })
        .collect()
}

/// The CUDA API calls of `track`, in track order.
fn api_calls(t: &Trace, track: &Track) -> Vec<(i64, i64, String, u32, Option<i32>)> {
    let a = &t.cuda_api;
    track
        .rows()
        .map(|i| i as usize)
        .map(|i| {
            (
                a.spans.start[i],
                a.spans.end(i),
                t.name(a.spans.name[i]).to_string(),
                a.correlation[i],
                a.return_value.get(i),
            )
        })
        .collect()
}

/// The GPU operations of `track` (in `spans`, with `correlation`), in track order.
fn gpu_ops(
    t: &Trace,
    spans: &SpanColumns,
    correlation: &[u32],
    track: &Track,
) -> Vec<(i64, i64, String, u32)> {
    track
        .rows()
        .map(|i| i as usize)
        .map(|i| {
            (
                spans.start[i],
                spans.end(i),
                t.name(spans.name[i]).to_string(),
                correlation[i],
            )
        })
        .collect()
}

/// The copies of `track`, in track order, with every column of their own.
fn copies(t: &Trace, track: &Track) -> Vec<((i64, i64, String, u32), CopyFacts)> {
    let c = &t.memcpys;
    let ops = gpu_ops(t, &c.spans, &c.correlation, track);
    let own = track.rows().map(|i| i as usize).map(|i| {
        (
            c.bytes[i],
            c.copy_kind[i],
            c.src_kind[i],
            c.dst_kind[i],
            c.kind_known[i],
            c.src_device[i],
            c.dst_device[i],
            c.green_context[i],
        )
    });
    ops.into_iter().zip(own).collect()
}

/// A copy's own columns.
type CopyFacts = (u64, u8, u8, u8, bool, i32, i32, u32);

/// The OS runtime calls of `track`, in track order.
fn os_calls(t: &Trace, track: &Track) -> Vec<(i64, i64, String, i64, u8)> {
    let o = &t.osrt;
    track
        .rows()
        .map(|i| i as usize)
        .map(|i| {
            (
                o.spans.start[i],
                o.spans.end(i),
                t.name(o.spans.name[i]).to_string(),
                o.return_value[i],
                o.event_class[i],
            )
        })
        .collect()
}

/// A GPU operation as its API call's links list it: kind, start, end, name.
type LinkedOp = (u8, i64, i64, String);

/// Each thread's API calls in track order, each with the GPU operations
/// linked to it (in the order a whole load lists them; a growing load lists
/// an id's operations in the order they came, so sorted here).
fn links(t: &Trace) -> Vec<Vec<(i64, Vec<LinkedOp>)>> {
    let op = |kind: GpuOpKind, i: usize| {
        let (code, spans) = match kind {
            GpuOpKind::Kernel => (0, &t.kernels.spans),
            GpuOpKind::Memcpy => (1, &t.memcpys.spans),
            GpuOpKind::Memset => (2, &t.memsets.spans),
            GpuOpKind::Sync => (3, &t.syncs.spans),
        };
        (
            code,
            spans.start[i],
            spans.end(i),
            t.name(spans.name[i]).to_string(),
        )
    };
    (t.threads.iter())
        .map(|th| {
            let of = t.correlation.of_process(th.pid);
            (th.cuda_api.rows())
                .map(|i| i as usize)
                .map(|i| {
                    let id = t.cuda_api.correlation[i];
                    let mut ops: Vec<LinkedOp> = of
                        .gpu_ops(id)
                        .map(|o| op(o.kind, o.index as usize))
                        .collect();
                    ops.sort();
                    // The call each operation names is this one.
                    assert_eq!(of.api_call(id).map(|r| r as usize), Some(i));
                    (t.cuda_api.spans.start[i], ops)
                })
                .collect()
        })
        .collect()
}

/// Everything a view or a report reads, event by event.
fn assert_same(grown: &Trace, whole: &Trace, at: &str) {
    assert_eq!(grown.event_count(), whole.event_count(), "{at}: events");
    let strings = |t: &Trace| {
        t.strings
            .iter()
            .map(|(_, s)| s.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(strings(grown), strings(whole), "{at}: strings");
    same_spans(at, &grown.nvtx.spans, &whole.nvtx.spans);
    let (gn, wn) = (&grown.nvtx, &whole.nvtx);
    assert_eq!(gn.row_id, wn.row_id, "{at}: NVTX row ids");
    assert_eq!(
        (&gn.kind, &gn.depth, &gn.color, &gn.category, &gn.unended),
        (&wn.kind, &wn.depth, &wn.color, &wn.category, &wn.unended),
        "{at}: NVTX columns"
    );
    assert_eq!(gn.payload, wn.payload, "{at}: NVTX payloads");
    assert_eq!(gn.end_thread, wn.end_thread, "{at}: NVTX end threads");
    assert_eq!(
        gn.category_names, wn.category_names,
        "{at}: NVTX categories"
    );
    // CUDA event records, each with its stream named by key.
    let records = |t: &Trace| -> Vec<_> {
        (t.cuda_events.iter())
            .map(|r| {
                let s = &t.streams[r.stream as usize];
                (s.pid, s.device_id, s.stream_id, r.correlation, r.event_id)
            })
            .collect()
    };
    assert_eq!(records(grown), records(whole), "{at}: CUDA event records");
    // Every other table is appended to as the report grows: the same events
    // on every track, in the same order, not at the same indexes.
    for (what, g, w) in [
        ("copies", &grown.memcpys.spans, &whole.memcpys.spans),
        ("memsets", &grown.memsets.spans, &whole.memsets.spans),
        ("syncs", &grown.syncs.spans, &whole.syncs.spans),
        (
            "graph executions",
            &grown.graph_execs.spans,
            &whole.graph_execs.spans,
        ),
    ] {
        assert_eq!(g.len(), w.len(), "{at}: {what}");
    }
    assert_eq!(
        grown.kernels.spans.len(),
        whole.kernels.spans.len(),
        "{at}: kernels"
    );
    assert_eq!(
        grown.cuda_api.spans.len(),
        whole.cuda_api.spans.len(),
        "{at}: API calls"
    );
    assert_eq!(
        grown.osrt.spans.len(),
        whole.osrt.spans.len(),
        "{at}: OS runtime calls"
    );
    assert_eq!(grown.threads.len(), whole.threads.len(), "{at}: threads");
    for (g, w) in grown.threads.iter().zip(&whole.threads) {
        assert_eq!(g.global_tid, w.global_tid, "{at}: thread");
        assert_eq!(
            api_calls(grown, &g.cuda_api),
            api_calls(whole, &w.cuda_api),
            "{at}: API calls of thread {}",
            g.global_tid
        );
        assert_eq!(g.cuda_api.max_duration(), w.cuda_api.max_duration(), "{at}");
        assert_eq!(
            os_calls(grown, &g.osrt),
            os_calls(whole, &w.osrt),
            "{at}: OS runtime calls of thread {}",
            g.global_tid
        );
        assert_eq!(g.osrt.max_duration(), w.osrt.max_duration(), "{at}");
        // An empty track's depth is 0 or 1 (drawn one lane tall either way).
        assert_eq!(
            g.osrt.depth.max(1),
            w.osrt.depth.max(1),
            "{at}: OS runtime depth"
        );
        assert_eq!(g.nvtx.len(), w.nvtx.len(), "{at}: NVTX domains");
        for (gn, wn) in g.nvtx.iter().zip(&w.nvtx) {
            same_track(at, &gn.track, &wn.track);
        }
    }
    assert_eq!(grown.streams.len(), whole.streams.len(), "{at}: streams");
    for (g, w) in grown.streams.iter().zip(&whole.streams) {
        assert_eq!(
            (g.device_id, g.context_id, g.stream_id),
            (w.device_id, w.context_id, w.stream_id),
            "{at}: stream"
        );
        assert_eq!(
            kernels(grown, &g.kernels),
            kernels(whole, &w.kernels),
            "{at}: kernels"
        );
        assert_eq!(g.kernels.max_duration(), w.kernels.max_duration(), "{at}");
        assert_eq!(
            copies(grown, &g.memcpys),
            copies(whole, &w.memcpys),
            "{at}: copies"
        );
        assert_eq!(
            gpu_ops(
                grown,
                &grown.memsets.spans,
                &grown.memsets.correlation,
                &g.memsets
            ),
            gpu_ops(
                whole,
                &whole.memsets.spans,
                &whole.memsets.correlation,
                &w.memsets
            ),
            "{at}: memsets"
        );
        assert_eq!(
            gpu_ops(
                grown,
                &grown.syncs.spans,
                &grown.syncs.correlation,
                &g.syncs
            ),
            gpu_ops(
                whole,
                &whole.syncs.spans,
                &whole.syncs.correlation,
                &w.syncs
            ),
            "{at}: syncs"
        );
        assert_eq!(
            gpu_ops(
                grown,
                &grown.graph_execs.spans,
                &grown.graph_execs.correlation,
                &g.graphs
            ),
            gpu_ops(
                whole,
                &whole.graph_execs.spans,
                &whole.graph_execs.correlation,
                &w.graphs
            ),
            "{at}: graph executions"
        );
        for (gt, wt) in [
            (&g.memcpys, &w.memcpys),
            (&g.memsets, &w.memsets),
            (&g.syncs, &w.syncs),
            (&g.graphs, &w.graphs),
        ] {
            assert_eq!(gt.max_duration(), wt.max_duration(), "{at}");
            assert_eq!(gt.depth, wt.depth, "{at}: depth");
        }
    }
    assert_eq!(
        grown.info.time_range, whole.info.time_range,
        "{at}: time range"
    );
    // Idle gaps and their causes (walks of each thread's calls across its
    // runs, the GPU ops merged across theirs): the same, ops aside (their
    // rows differ).
    let idle = |t: &Trace| {
        let never = AtomicBool::new(false);
        let found = idle::attribute(t, idle::Lanes::Device, &never).expect("not cancelled");
        let gaps: Vec<_> = (found.gaps())
            .map(|g| (g.start, g.end, g.lane, g.thread, g.dominant, g.verdict))
            .collect();
        (gaps, found.spans().collect::<Vec<_>>())
    };
    assert_eq!(idle(grown), idle(whole), "{at}: idle gaps");
    assert_eq!(links(grown), links(whole), "{at}: links");
    for report in Report::ALL {
        assert_eq!(
            compute(grown, report, None).rows,
            compute(whole, report, None).rows,
            "{at}: {}",
            report.name()
        );
    }
}

fn grows_as_a_whole_load_reads(name: &str) {
    grows_as_a_whole_load_reads_from(&fixture(name), name);
}

fn grows_as_a_whole_load_reads_from(source: &Path, name: &str) {
    let growing = Growing::start(source, name);
    let mut carry = Carry::default();
    let never = AtomicBool::new(false);
    let mut previous: Option<Trace> = None;
    // Before any event, then after each slice, and once more with nothing new.
    for step in 0..=SLICES + 1 {
        if (1..=SLICES).contains(&step) {
            growing.add_slice(step - 1, SLICES);
        }
        let grown = load_growing(&growing.path, &mut carry).expect("growing load");
        let whole = load(&growing.path, &mut |_| {}, &never).expect("whole load");
        assert_same(&grown, &whole, &format!("{name}, step {step}"));
        // What was shown keeps its index (unless the report's rows came out
        // of time order, when the table was read whole again).
        if let Some(before) = &previous {
            for (what, old, new) in [
                ("kernels", &before.kernels.spans, &grown.kernels.spans),
                ("API calls", &before.cuda_api.spans, &grown.cuda_api.spans),
            ] {
                let kept = (0..old.len())
                    .all(|i| new.get(i) == old.get(i) && new.name.get(i) == old.name.get(i));
                assert!(
                    kept || name == "torch_work.sqlite",
                    "{name}, step {step}: {what} moved"
                );
            }
        }
        previous = Some(grown);
        if step == SLICES {
            assert_eq!(whole.event_count(), {
                let src = load(source, &mut |_| {}, &never).expect("source");
                src.event_count()
            });
        }
    }
}

/// Rows that come with lower rowids than rows already read (a table whose
/// rowid is a column of its own, filled from elsewhere) are not missed: such
/// a table is read whole at every load.
#[test]
fn rows_added_below_the_last_rowid_read_are_not_missed() {
    let name = "streams.sqlite";
    let growing = Growing::start_aliased(&fixture(name), "aliased");
    let mut carry = Carry::default();
    let never = AtomicBool::new(false);
    // The last slice first: each slice's rowids are below the last one's.
    for k in (0..SLICES).rev() {
        growing.add_slice(k, SLICES);
        let grown = load_growing(&growing.path, &mut carry).expect("growing load");
        let whole = load(&growing.path, &mut |_| {}, &never).expect("whole load");
        assert_same(
            &grown,
            &whole,
            &format!("{name} with rowid columns, slice {k}"),
        );
    }
}

/// A table whose last rowid is the largest there is (a whole load reads
/// it as any other) loads the same by growing loads, again and again.
#[test]
fn a_table_at_the_last_rowid_there_is_loads_as_a_whole_load() {
    let name = "streams.sqlite";
    let growing = Growing::start(&fixture(name), "last-rowid");
    for k in 0..SLICES {
        growing.add_slice(k, SLICES);
    }
    growing
        .conn
        .execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = 9223372036854775807 \
             WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)",
            [],
        )
        .expect("last rowid");
    let mut carry = Carry::default();
    let never = AtomicBool::new(false);
    let whole = load(&growing.path, &mut |_| {}, &never).expect("whole load");
    for at in ["first", "second", "third"] {
        let grown = load_growing(&growing.path, &mut carry).expect("growing load");
        assert_same(
            &grown,
            &whole,
            &format!("{name} at the last rowid, {at} load"),
        );
    }
}

/// A range recorded without an end (its program stopped inside it) ends at
/// the last NVTX timestamp, which moves as the report grows, and with it
/// its place among ranges starting with it: here one read before it, ending
/// at the last timestamp of the first slice, comes first until the next
/// slice moves that timestamp on. Both come with the first slice.
#[test]
fn a_growing_report_with_an_unended_range_loads_as_a_whole_load() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("sync_timing_unended.sqlite");
    std::fs::copy(fixture("sync_timing.sqlite"), &source).expect("copy");
    let conn = Connection::open(&source).expect("copy opens");
    let first_two: Vec<i64> = conn
        .prepare("SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59 ORDER BY rowid LIMIT 2")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("two ranges");
    let (read_first, unended) = (first_two[0], first_two[1]);
    // The last timestamp of the first slice (as `Growing::add_slice` cuts).
    let slice_end: i64 = conn
        .query_row(
            &format!(
                "SELECT max(max(start), max(coalesce(\"end\", start))) FROM NVTX_EVENTS \
                 WHERE rowid < (SELECT min(rowid) + (max(rowid) - min(rowid)) / {SLICES} + 1 \
                 FROM NVTX_EVENTS)"
            ),
            [],
            |r| r.get(0),
        )
        .expect("first slice's last timestamp");
    conn.execute_batch(&format!(
        "UPDATE NVTX_EVENTS SET start = (SELECT start FROM NVTX_EVENTS WHERE rowid = {unended}), \
           \"end\" = {} WHERE rowid = {read_first}; \
         UPDATE NVTX_EVENTS SET \"end\" = NULL WHERE rowid = {unended};",
        slice_end + 1
    ))
    .expect("a tie with an unended range");
    drop(conn);
    let whole = load(&source, &mut |_| {}, &AtomicBool::new(false)).expect("whole load");
    assert_eq!(whole.nvtx.unended.iter().filter(|&&u| u).count(), 1);
    grows_as_a_whole_load_reads_from(&source, "sync_timing_unended");
}

/// A capture writes an NVTX range when it starts, its end left NULL, and
/// fills the end in when the range ends (as nsys numbers ranges: by start).
/// A growing load reads each such row once, open; it must see the end come,
/// or the range stays unended, ending at the last NVTX timestamp, in every
/// later snapshot. Here each slice adds its ranges open, then ends those
/// that ended by the last start so far; a last step ends the rest.
#[test]
fn ranges_written_open_and_ended_later_load_as_a_whole_load() {
    for name in ["sync_timing.sqlite", "timing_cases.sqlite"] {
        let source = fixture(name);
        let growing = Growing::start(&source, &format!("open-{name}"));
        let conn = &growing.conn;
        let columns: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info('NVTX_EVENTS')")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("NVTX columns");
        let quoted: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
        let open: Vec<String> = columns
            .iter()
            .map(|c| match c.as_str() {
                "end" => "NULL".to_string(),
                c => format!("\"{c}\""),
            })
            .collect();
        let (lo, hi): (i64, i64) = conn
            .query_row(
                "SELECT min(rowid), max(rowid) FROM src.NVTX_EVENTS",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("NVTX rows");
        let end_those_ended_by = |t: i64| {
            conn.execute(
                "UPDATE main.NVTX_EVENTS SET \"end\" = (SELECT s.\"end\" FROM src.NVTX_EVENTS s \
                   WHERE s.rowid = main.NVTX_EVENTS.rowid) \
                 WHERE \"end\" IS NULL AND rowid IN \
                   (SELECT rowid FROM src.NVTX_EVENTS WHERE \"end\" <= ?1)",
                [t],
            )
            .expect("end ranges")
        };
        let mut carry = Carry::default();
        let never = AtomicBool::new(false);
        let mut ended_later = 0;
        for step in 1..=SLICES + 1 {
            if step <= SLICES {
                let k = step - 1;
                for (table, lo, hi) in &growing.tables {
                    if table == "NVTX_EVENTS" {
                        continue;
                    }
                    let width = (hi - lo) / SLICES + 1;
                    conn.execute(
                        &format!(
                            "INSERT INTO main.\"{table}\" SELECT * FROM src.\"{table}\" \
                             WHERE rowid >= ?1 AND rowid < ?2 ORDER BY rowid"
                        ),
                        [lo + k * width, lo + (k + 1) * width],
                    )
                    .expect("copy slice");
                }
                let width = (hi - lo) / SLICES + 1;
                conn.execute(
                    &format!(
                        "INSERT INTO main.NVTX_EVENTS (rowid, {}) SELECT rowid, {} \
                         FROM src.NVTX_EVENTS WHERE rowid >= ?1 AND rowid < ?2 ORDER BY rowid",
                        quoted.join(", "),
                        open.join(", ")
                    ),
                    [lo + k * width, lo + (k + 1) * width],
                )
                .expect("open ranges");
                let last_start: i64 = conn
                    .query_row("SELECT max(start) FROM main.NVTX_EVENTS", [], |r| r.get(0))
                    .expect("last start");
                end_those_ended_by(last_start);
            } else {
                ended_later = end_those_ended_by(i64::MAX);
            }
            let grown = load_growing(&growing.path, &mut carry).expect("growing load");
            let whole = load(&growing.path, &mut |_| {}, &never).expect("whole load");
            assert_same(&grown, &whole, &format!("{name} written open, step {step}"));
        }
        assert!(
            ended_later > 0,
            "{name}: no range was still open at the end"
        );
        // Ranges come in start order on their thread, as a capture writes
        // them: the table is extended, not built whole, at some loads.
        assert!(
            carry.nvtx_tables_extended() > 0,
            "{name}: every load built the NVTX table whole"
        );
        let grown = load_growing(&growing.path, &mut carry).expect("growing load");
        let source = load(&source, &mut |_| {}, &never).expect("source");
        assert_eq!(
            compute(&grown, Report::NvtxSum, None).to_csv(),
            compute(&source, Report::NvtxSum, None).to_csv(),
            "{name}: the ranges ended as the source's"
        );
    }
}

#[test]
fn a_growing_report_loads_as_a_whole_load_at_every_step_sync_timing() {
    grows_as_a_whole_load_reads("sync_timing.sqlite");
}

#[test]
fn a_growing_report_loads_as_a_whole_load_at_every_step_streams() {
    grows_as_a_whole_load_reads("streams.sqlite");
}

#[test]
fn a_growing_report_loads_as_a_whole_load_at_every_step_torch_work() {
    grows_as_a_whole_load_reads("torch_work.sqlite");
}

#[test]
fn a_growing_report_loads_as_a_whole_load_at_every_step_timing_cases() {
    grows_as_a_whole_load_reads("timing_cases.sqlite");
}

#[test]
fn a_growing_report_loads_as_a_whole_load_at_every_step_torch_metrics() {
    grows_as_a_whole_load_reads("torch_metrics_excerpt.sqlite");
}

/// Timing, not a check: `SIGHTLINE_BENCH_FILE=REPORT cargo test --release
/// --test growing_load -- --ignored --nocapture` rebuilds REPORT in
/// `SIGHTLINE_SLICES` slices (5) and loads it after each growing, and
/// whole after every fifth (`SIGHTLINE_GROWING_ONLY=1`: never).
#[test]
#[ignore]
fn growing_loads_against_whole_loads() {
    let Ok(path) = std::env::var("SIGHTLINE_BENCH_FILE") else {
        eprintln!("SIGHTLINE_BENCH_FILE names the report to grow");
        return;
    };
    let growing = Growing::start(Path::new(&path), "bench");
    let mut carry = Carry::default();
    let never = AtomicBool::new(false);
    let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;
    let slices: i64 = std::env::var("SIGHTLINE_SLICES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(SLICES);
    // `SIGHTLINE_SEARCH=QUERY`: a search kept as the report grows, against
    // a new search of each state.
    let query = std::env::var("SIGHTLINE_SEARCH").ok();
    let mut kept = sightline::app::panels::search::Search::default();
    let mut last: Option<std::sync::Arc<Trace>> = None;
    for step in 0..slices {
        growing.add_slice(step, slices);
        let t = std::time::Instant::now();
        let (grown, phases) =
            sightline::loader::load_growing_timed(&growing.path, &mut carry).expect("growing");
        let grown_ms = ms(t);
        if let Some(query) = &query {
            let grown = std::sync::Arc::new(grown.share(Vec::new()));
            let t = std::time::Instant::now();
            match &last {
                Some(old) => {
                    kept.refresh(old, &grown, None);
                    kept.wait();
                }
                None => {
                    kept.query = query.clone();
                    kept.run(&grown);
                }
            }
            let extended_ms = ms(t);
            let mut fresh = sightline::app::panels::search::Search::default();
            fresh.query = query.clone();
            let t = std::time::Instant::now();
            fresh.run(&grown);
            println!(
                "slice {}: search {query:?}: {} matches, new search {:.1} ms, extended {extended_ms:.1} ms",
                step + 1,
                fresh.matches.len(),
                ms(t)
            );
            last = Some(grown);
        }
        let phases: Vec<String> = phases
            .0
            .iter()
            .map(|(p, d)| format!("{p} {:.0}", d.as_secs_f64() * 1e3))
            .collect();
        // `SIGHTLINE_GROWING_ONLY=1`: no whole loads (for a profiler).
        if std::env::var_os("SIGHTLINE_GROWING_ONLY").is_some() || (step + 1) % 5 != 0 {
            println!(
                "slice {}: {} events, growing load {grown_ms:.0} ms ({})",
                step + 1,
                grown.event_count(),
                phases.join(", "),
            );
            continue;
        }
        let t = std::time::Instant::now();
        let whole = load(&growing.path, &mut |_| {}, &never).expect("whole");
        let whole_ms = ms(t);
        assert_eq!(grown.event_count(), whole.event_count());
        println!(
            "slice {} of {slices}: {} events, growing load {grown_ms:.0} ms ({}), whole load {whole_ms:.0} ms, ratio {:.2}",
            step + 1,
            whole.event_count(),
            phases.join(", "),
            grown_ms / whole_ms
        );
    }
    // `SIGHTLINE_REPEAT=n`: n more growing loads with nothing new, the
    // rebuild alone (for a profiler).
    let repeat: usize = std::env::var("SIGHTLINE_REPEAT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    for _ in 0..repeat {
        let t = std::time::Instant::now();
        let (grown, phases) =
            sightline::loader::load_growing_timed(&growing.path, &mut carry).expect("growing");
        let phases: Vec<String> = (phases.0.iter())
            .map(|(p, d)| format!("{p} {:.1}", d.as_secs_f64() * 1e3))
            .collect();
        println!(
            "again: {} events, {:.0} ms ({})",
            grown.event_count(),
            ms(t),
            phases.join(", ")
        );
    }
}

/// Loads made while another connection writes the file (as a capture's
/// snapshots are, on a thread of their own, the file in WAL mode) each read
/// one committed state: the kernels and API calls of the same number of
/// slices, never rows of two commits, nor a row twice. The last equals a
/// whole load.
#[test]
fn loads_while_the_file_is_written_each_read_one_commit() {
    const SMALL_SLICES: i64 = 300;
    let name = "streams.sqlite";
    let growing = Growing::start(&fixture(name), "written-meanwhile");
    growing
        .conn
        .query_row("PRAGMA main.journal_mode=WAL", [], |_| Ok(()))
        .expect("WAL");
    let path = growing.path.clone();
    let count = |conn: &Connection, table: &str| -> usize {
        conn.query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| {
            r.get::<_, i64>(0)
        })
        .expect("count") as usize
    };
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        // (kernels, API calls) after each commit.
        let mut committed = vec![(0, 0)];
        for k in 0..SMALL_SLICES {
            growing.conn.execute_batch("BEGIN").expect("begin");
            growing.add_slice(k, SMALL_SLICES);
            growing.conn.execute_batch("COMMIT").expect("commit");
            committed.push((
                count(&growing.conn, "CUPTI_ACTIVITY_KIND_KERNEL"),
                count(&growing.conn, "CUPTI_ACTIVITY_KIND_RUNTIME"),
            ));
        }
        drop(done_tx);
        (growing, committed)
    });
    let mut carry = Carry::default();
    let mut seen = Vec::new();
    loop {
        let finished = matches!(
            done.try_recv(),
            Err(std::sync::mpsc::TryRecvError::Disconnected)
        );
        let grown = load_growing(&path, &mut carry).expect("a load while the file is written");
        seen.push((grown.kernels.spans.len(), grown.cuda_api.spans.len()));
        if finished {
            let whole = load(&path, &mut |_| {}, &AtomicBool::new(false)).expect("whole load");
            assert_same(&grown, &whole, "after the last commit");
            break;
        }
    }
    let (_growing, committed) = writer.join().expect("writer");
    let mid_write = seen
        .iter()
        .filter(|s| **s != committed[0] && Some(*s) != committed.last())
        .count();
    for (i, s) in seen.iter().enumerate() {
        assert!(
            committed.contains(s),
            "load {i} of {}: (kernels, API calls) {s:?} is no commit's",
            seen.len()
        );
    }
    // The loads did overlap the writing.
    assert!(mid_write >= 2, "{mid_write} loads while writing: {seen:?}");
}

/// `INSERT` of copies of `table`'s rows up to rowid ?2 with their times
/// moved by ?1 (past the newest: each track's rows stay in start order).
fn shifted_copies(conn: &Connection, table: &str) -> String {
    let columns: Vec<String> = conn
        .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("columns");
    let shifted: Vec<String> = columns
        .iter()
        .map(|c| match c.as_str() {
            "start" | "end" => format!("{c} + ?1"),
            _ => c.clone(),
        })
        .collect();
    format!(
        "INSERT INTO main.\"{table}\" ({}) SELECT {} FROM main.\"{table}\" WHERE rowid <= ?2",
        columns.join(", "),
        shifted.join(", ")
    )
}

/// A load reads a big table in pieces, each on a connection of its own
/// opened after the load's read transaction began; the last piece stops at
/// that transaction's last rowid, so rows committed meanwhile wait for the
/// next load. Loaded again and again from nothing (every load reads the
/// whole kernel table, 120k rows and more, in pieces, and the small API
/// table on its own connection) while a writer commits kernels and an API
/// call together: every load's (kernels, API calls) are one commit's.
#[test]
fn pieces_of_a_table_written_meanwhile_stop_at_the_loads_commit() {
    const COMMITS: i64 = 150;
    const KERNELS_A_COMMIT: i64 = 2_000;
    const KERNELS: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
    const API: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
    let growing = Growing::start(&fixture("streams.sqlite"), "pieces-meanwhile");
    for k in 0..SLICES {
        growing.add_slice(k, SLICES);
    }
    let conn = &growing.conn;
    conn.query_row("PRAGMA main.journal_mode=WAL", [], |_| Ok(()))
        .expect("WAL");
    let (add_kernels, add_api) = (shifted_copies(conn, KERNELS), shifted_copies(conn, API));
    // (rows, newest end - oldest start + 1) of a table.
    let rows = |conn: &Connection, table: &str| -> (usize, i64) {
        conn.query_row(
            &format!("SELECT count(*), max(end) - min(start) + 1 FROM main.\"{table}\""),
            [],
            |r| Ok((r.get::<_, i64>(0)? as usize, r.get::<_, i64>(1)?)),
        )
        .expect("count")
    };
    while rows(conn, KERNELS).0 < 120_000 {
        let (n, span) = rows(conn, KERNELS);
        conn.execute(&add_kernels, rusqlite::params![span, n as i64])
            .expect("grow");
    }
    let state = move |conn: &Connection| (rows(conn, KERNELS).0, rows(conn, API).0);
    let path = growing.path.clone();
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        let conn = &growing.conn;
        let mut committed = vec![state(conn)];
        for _ in 0..COMMITS {
            let (kernel_span, api_span) = (rows(conn, KERNELS).1, rows(conn, API).1);
            conn.execute_batch("BEGIN").expect("begin");
            conn.execute(
                &add_kernels,
                rusqlite::params![kernel_span, KERNELS_A_COMMIT],
            )
            .expect("kernels");
            conn.execute(&add_api, rusqlite::params![api_span, 1])
                .expect("an API call");
            conn.execute_batch("COMMIT").expect("commit");
            committed.push(state(conn));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        drop(done_tx);
        (growing, committed)
    });
    let mut seen = Vec::new();
    while !matches!(
        done.try_recv(),
        Err(std::sync::mpsc::TryRecvError::Disconnected)
    ) {
        let fresh = load_growing(&path, &mut Carry::default()).expect("a load");
        seen.push((fresh.kernels.spans.len(), fresh.cuda_api.spans.len()));
    }
    let (_growing, committed) = writer.join().expect("writer");
    for (i, s) in seen.iter().enumerate() {
        assert!(
            committed.contains(s),
            "load {i} of {}: (kernels, API calls) {s:?} is no commit's (first commits: {:?})",
            seen.len(),
            &committed[..3]
        );
    }
    let mid_write = seen
        .iter()
        .filter(|&s| *s != committed[0] && Some(s) != committed.last())
        .count();
    assert!(mid_write >= 2, "{mid_write} loads while writing: {seen:?}");
}

/// The rows of the tables read whole before (copies, memsets and
/// synchronizations, kept as read; OS runtime calls, appended as API calls
/// are) are not read again by the next growing load, so that a load reads
/// what was added. A row changed in place after it was read (a capture
/// never changes a row it wrote; here it shows which rows were read again)
/// keeps in the next growing load what was read; the rows added since are in.
#[test]
fn rows_of_the_small_tables_read_once_are_not_read_again() {
    let growing = Growing::start(&fixture("timing_cases.sqlite"), "kept");
    let never = AtomicBool::new(false);
    let mut carry = Carry::default();
    growing.add_slice(0, 2);
    let first = load_growing(&growing.path, &mut carry).expect("first growing load");
    let (copies, os_calls) = (first.memcpys.spans.len(), first.osrt.spans.len());
    assert!(
        copies > 0 && os_calls > 0,
        "{copies} copies, {os_calls} OS calls"
    );
    growing
        .conn
        .execute_batch(
            "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = bytes + 1;
             UPDATE OSRT_API SET returnValue = returnValue + 7;
             UPDATE NVTX_EVENTS SET color = 12345;",
        )
        .expect("rows changed in place");
    growing.add_slice(1, 2);
    let second = load_growing(&growing.path, &mut carry).expect("second growing load");
    let whole = load(&growing.path, &mut |_| {}, &never).expect("whole load");
    assert_eq!(second.memcpys.spans.len(), whole.memcpys.spans.len());
    assert_eq!(second.osrt.spans.len(), whole.osrt.spans.len());
    let bytes = |t: &Trace| t.memcpys.bytes.iter().sum::<u64>();
    let returned = |t: &Trace| t.osrt.return_value.iter().sum::<i64>();
    assert_eq!(
        bytes(&second),
        bytes(&whole) - copies as u64,
        "the copies read by the first load were read again"
    );
    assert_eq!(
        returned(&second),
        returned(&whole) - 7 * os_calls as i64,
        "the OS runtime calls read by the first load were read again"
    );
    let recoloured = |t: &Trace| t.nvtx.color.iter().filter(|&&c| c == 12345).count();
    assert!(!first.nvtx.spans.is_empty());
    assert_eq!(
        recoloured(&second),
        recoloured(&whole) - first.nvtx.spans.len(),
        "the NVTX ranges read by the first load were read again"
    );
}

/// A string the capture adds to `StringIds` between two loads moves the
/// strings a load makes itself (the copies' and syncs' names) one place on:
/// the rows read before are named again, as a whole load names them.
#[test]
fn names_made_by_the_loader_follow_strings_added_between_loads() {
    let growing = Growing::start(&fixture("timing_cases.sqlite"), "renamed");
    let never = AtomicBool::new(false);
    let mut carry = Carry::default();
    growing.add_slice(0, 2);
    let first = load_growing(&growing.path, &mut carry).expect("first growing load");
    assert!(!first.memcpys.spans.is_empty() && !first.syncs.spans.is_empty());
    growing
        .conn
        .execute(
            "INSERT INTO StringIds (id, value) SELECT max(id) + 1, 'added meanwhile' FROM StringIds",
            [],
        )
        .expect("a string added");
    growing.add_slice(1, 2);
    let second = load_growing(&growing.path, &mut carry).expect("second growing load");
    let whole = load(&growing.path, &mut |_| {}, &never).expect("whole load");
    assert_same(&second, &whole, "after a string was added");
}

/// Each state of a growing report holds every event of the states before
/// at the same index, for each kind its lineage says keeps them (every kind;
/// NVTX when every range shown is where it was, the lineage saying exactly
/// when); an NVTX range is carried to the range of the same row. A table read
/// whole at every load (its own rowid column) numbers its events anew, and
/// the lineage says so.
#[test]
fn events_keep_their_indexes_as_the_report_grows_where_the_lineage_says_so() {
    use sightline::annotations::{Carrier, Footprint};
    use sightline::model::{EventId, EventKind};
    let spans_of = |t: &Trace, kind: EventKind| -> SpanColumns {
        match kind {
            EventKind::Api => t.cuda_api.spans.clone(),
            EventKind::Osrt => t.osrt.spans.clone(),
            EventKind::Nvtx => t.nvtx.spans.clone(),
            EventKind::Kernel => t.kernels.spans.clone(),
            EventKind::Memcpy => t.memcpys.spans.clone(),
            EventKind::Memset => t.memsets.spans.clone(),
            EventKind::Sync => t.syncs.spans.clone(),
            EventKind::Graph => t.graph_execs.spans.clone(),
        }
    };
    let (mut ranges_said_to_stay, mut ranges_looked_at) = (0, 0);
    let (mut nvtx_kept, mut nvtx_renumbered) = (0, 0);
    for (aliased, name) in [(false, "timing_cases.sqlite"), (true, "streams.sqlite")] {
        let growing = if aliased {
            Growing::start_aliased(&fixture(name), "lineage-aliased")
        } else {
            Growing::start(&fixture(name), "lineage")
        };
        let mut carry = Carry::default();
        let mut old: Option<Trace> = None;
        for step in 0..SLICES {
            growing.add_slice(step, SLICES);
            let new = load_growing(&growing.path, &mut carry).expect("growing load");
            if let Some(old) = &old {
                for kind in EventKind::ALL {
                    let kept = new.lineage.keeps_indexes_of(&old.lineage, kind);
                    let renumbered = match kind {
                        EventKind::Nvtx => {
                            let (was, is) = (&old.nvtx.row_id, &new.nvtx.row_id);
                            let moved = !is.starts_with(was);
                            *(if moved {
                                &mut nvtx_renumbered
                            } else {
                                &mut nvtx_kept
                            }) += 1;
                            moved
                        }
                        EventKind::Api | EventKind::Kernel => aliased,
                        _ => false,
                    };
                    assert_eq!(kept, !renumbered, "{name} step {step}: {kind:?}");
                    let (was, is) = (spans_of(old, kind), spans_of(&new, kind));
                    for i in (0..was.len()).filter(|_| kept) {
                        assert_eq!(was.get(i), is.get(i), "{name} step {step}: {kind:?} {i}");
                        assert_eq!(old.name(was.name[i]), new.name(is.name[i]));
                    }
                }
                let mut carrier = Carrier::new(old, &new);
                for i in 0..old.nvtx.spans.len() {
                    let ev = EventId::new(EventKind::Nvtx, i as u32);
                    let found = carrier.carry(ev).expect("every range is still there");
                    let j = found.index as usize;
                    assert_eq!(old.nvtx.row_id[i], new.nvtx.row_id[j]);
                    assert_eq!(old.nvtx.spans.start[i], new.nvtx.spans.start[j]);
                    // A range said not to move is where it was.
                    let stays = !carrier.may_move(Footprint::of(&[ev]));
                    assert!(!stays || found == ev, "{name} step {step}: range {i}");
                    ranges_said_to_stay += usize::from(stays);
                    ranges_looked_at += usize::from(!stays);
                }
                // Entries on ranges (the GPU work each launched), in range
                // order, carried at once: each as carried alone, in range
                // order in the newer state.
                let entries: Vec<(u32, i64, i64)> = (0..old.nvtx.spans.len() as u32)
                    .map(|i| (i, old.nvtx.spans.start[i as usize], i64::from(i)))
                    .collect();
                // Given in another order (the findings engine lists ranges
                // by thread and domain name, not by index).
                let mut carried: Vec<(u32, i64, i64)> = entries.iter().rev().copied().collect();
                Carrier::new(old, &new).carry_ranges(&mut carried);
                let mut one_by_one: Vec<(u32, i64, i64)> = (entries.iter())
                    .filter_map(|&(i, start, tag)| {
                        let found = carrier.carry(EventId::new(EventKind::Nvtx, i))?;
                        Some((found.index, start, tag))
                    })
                    .collect();
                one_by_one.sort_unstable();
                assert_eq!(carried, one_by_one, "{name} step {step}: entries on ranges");
            }
            old = Some(new);
        }
    }
    // Both ways taken: NVTX kept and renumbered; ranges that lead both
    // states, ranges renumbered.
    assert!(
        nvtx_kept > 0 && nvtx_renumbered > 0,
        "NVTX kept {nvtx_kept} times, renumbered {nvtx_renumbered}"
    );
    assert!(
        ranges_said_to_stay > 0 && ranges_looked_at > 0,
        "{ranges_said_to_stay} said to stay, {ranges_looked_at} looked at"
    );
}

/// A search kept while a report grows finds, at every state, what a search
/// of that state finds: the earlier matches stand for the events the state
/// kept at their indexes, and only the rest are looked at.
#[test]
fn a_search_extended_as_the_report_grows_finds_what_a_new_search_finds() {
    use sightline::app::panels::search::Search;
    use std::sync::Arc;
    for (name, query) in [
        ("timing_cases.sqlite", "cuda"),
        ("timing_cases.sqlite", "spin"),
        ("streams.sqlite", "e"),
    ] {
        let growing = Growing::start(&fixture(name), "search");
        let mut carry = Carry::default();
        let mut kept = Search::default();
        kept.query = query.into();
        let mut old: Option<Arc<Trace>> = None;
        for step in 0..SLICES {
            growing.add_slice(step, SLICES);
            let new = Arc::new(load_growing(&growing.path, &mut carry).expect("growing load"));
            match &old {
                None => kept.run(&new),
                Some(old) => {
                    kept.refresh(old, &new, None);
                    kept.wait();
                }
            }
            let mut fresh = Search::default();
            fresh.query = query.into();
            fresh.run(&new);
            assert!(!fresh.matches.is_empty() || step == 0, "{name} {query:?}");
            assert_eq!(kept.matches, fresh.matches, "{name} {query:?} step {step}");
            old = Some(new);
        }
    }
}

/// A range open in one state ends, as drawn, at the last NVTX timestamp,
/// which another thread's later mark may put after its real end: a search
/// for the instances overlapping a stretch matches it there, and must not
/// once its end is in, though it keeps its index.
#[test]
fn an_extended_search_looks_again_at_ranges_that_were_open() {
    use sightline::analysis::stats::RangeRule;
    use sightline::app::panels::search::Search;
    use sightline::model::TimeRange;
    use std::sync::Arc;
    let growing = Growing::start(&fixture("sync_timing.sqlite"), "search-open");
    let tid = growing.nvtx_thread();
    growing
        .conn
        .execute_batch(&format!(
            "INSERT INTO NVTX_EVENTS (start, \"end\", eventType, globalTid, text)
               VALUES (1000, NULL, 59, {tid}, 'opened'), (9000, NULL, 34, {}, 'later');",
            tid + 1
        ))
        .expect("an open range, a mark after it on another thread");
    let mut carry = Carry::default();
    let open = Arc::new(load_growing(&growing.path, &mut carry).expect("load"));
    let stretch = Some(TimeRange {
        start: 5000,
        end: 6000,
    });
    let mut search = Search::default();
    search.start_exact(&open, None, "opened", stretch, RangeRule::Overlapping);
    search.wait();
    assert_eq!(search.matches.len(), 1, "open, it reaches the mark");
    growing
        .conn
        .execute_batch("UPDATE NVTX_EVENTS SET \"end\" = 2000 WHERE text = 'opened'")
        .expect("it ends");
    let ended = Arc::new(load_growing(&growing.path, &mut carry).expect("load"));
    assert!(
        ended
            .lineage
            .keeps_indexes_of(&open.lineage, sightline::model::EventKind::Nvtx)
    );
    search.refresh(&open, &ended, None);
    search.wait();
    assert!(
        search.matches.is_empty(),
        "ended at 2000: {:?}",
        search.matches
    );
}

/// A row changed while its end stays NULL (a capture's range that never
/// ended gets its type, colour and payload when the capture closes it) is
/// read as changed by the next growing load, as by a whole load.
#[test]
fn an_open_range_changed_while_still_open_loads_as_a_whole_load() {
    let growing = Growing::start(&fixture("sync_timing.sqlite"), "open-changed");
    let tid = growing.nvtx_thread();
    growing.add_slice(0, 1);
    growing
        .conn
        .execute_batch(&format!(
            "INSERT INTO NVTX_EVENTS (start, \"end\", eventType, globalTid, text)
               VALUES (1000, NULL, 60, {tid}, 'opened');"
        ))
        .unwrap();
    let mut carry = Carry::default();
    let never = AtomicBool::new(false);
    let g1 = load_growing(&growing.path, &mut carry).unwrap();
    assert_eq!(g1.nvtx.unended.iter().filter(|&&u| u).count(), 1);
    growing
        .conn
        .execute_batch(
            "UPDATE NVTX_EVENTS SET eventType = 59, color = 4278190335, int64Value = 7
             WHERE text = 'opened'",
        )
        .unwrap();
    let g2 = load_growing(&growing.path, &mut carry).unwrap();
    let whole = load(&growing.path, &mut |_| {}, &never).unwrap();
    assert_same(&g2, &whole, "open row updated while open");
}

/// `value()` as an SQL literal when `some` (only then asked for: the
/// random sequence stays as it was), else `NULL`.
fn or_null<T: ToString>(some: bool, value: impl FnOnce() -> T) -> String {
    if some {
        value().to_string()
    } else {
        "NULL".into()
    }
}

/// Ranges on one to three threads written open and ended later, at random:
/// many starting together, some out of start order, some ending before they
/// start, changing type, payload and end thread as they end, among marks.
/// At every load the grown trace equals a whole load, and where the lineage
/// says the NVTX ranges kept their indexes, the earlier rows lead the newer
/// table. `SEED` and `ROUNDS` pick other cases.
#[test]
fn ranges_opened_and_ended_at_random_load_as_a_whole_load() {
    use sightline::model::EventKind;
    let mut seed: u64 = std::env::var("SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let rounds: u64 = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let mut rnd = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let never = AtomicBool::new(false);
    let (mut kept_claims, mut renumbered) = (0, 0);
    let mut extended = 0;
    for round in 0..rounds {
        let growing = Growing::start(&fixture("sync_timing.sqlite"), &format!("random-{round}"));
        let tid0 = growing.nvtx_thread();
        let mut carry = Carry::default();
        let mut old: Option<Trace> = None;
        let mut clock = [1000i64; 3];
        for step in 0..12 {
            let mut sql = String::new();
            // new rows
            for _ in 0..rnd(6) {
                let t = rnd(if round % 2 == 0 { 1 } else { 3 }) as usize;
                clock[t] += rnd(3) as i64 * 10; // many ties
                let start = clock[t] - if rnd(8) == 0 { 50 } else { 0 }; // sometimes out of order
                let kind = match rnd(6) {
                    0 => 34,
                    1 | 2 => 60,
                    _ => 59,
                };
                let end = or_null(kind != 34 && rnd(3) == 0, || start + rnd(40) as i64);
                let payload = or_null(rnd(3) == 0, || rnd(100));
                let etid = or_null(rnd(4) == 0, || tid0 + 9);
                sql += &format!(
                    "INSERT INTO NVTX_EVENTS (start, \"end\", eventType, globalTid, text, int64Value, endGlobalTid) VALUES ({start}, {end}, {kind}, {}, 'r{}', {payload}, {etid});",
                    tid0 + t as i64,
                    rnd(4)
                );
            }
            // close some open ones, possibly changing kind and payload
            let open: Vec<(i64, i64)> = growing
                .conn
                .prepare("SELECT rowid, start FROM NVTX_EVENTS WHERE \"end\" IS NULL AND eventType != 34")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            for (row, start) in open {
                if rnd(3) == 0 {
                    let end = start + rnd(60) as i64 - if rnd(10) == 0 { 100 } else { 0 };
                    let kind = if rnd(2) == 0 { 59 } else { 60 };
                    let payload = or_null(rnd(2) == 0, || rnd(100));
                    let etid = or_null(rnd(3) == 0, || tid0 + 9);
                    sql += &format!(
                        "UPDATE NVTX_EVENTS SET \"end\" = {end}, eventType = {kind}, int64Value = {payload}, endGlobalTid = {etid} WHERE rowid = {row};"
                    );
                }
            }
            growing.conn.execute_batch(&sql).unwrap();
            let grown = load_growing(&growing.path, &mut carry).unwrap();
            let whole = load(&growing.path, &mut |_| {}, &never).unwrap();
            assert_same(&grown, &whole, &format!("round {round} step {step}"));
            if let Some(old) = &old {
                if grown
                    .lineage
                    .keeps_indexes_of(&old.lineage, EventKind::Nvtx)
                {
                    kept_claims += 1;
                    assert!(
                        grown.nvtx.row_id.starts_with(&old.nvtx.row_id),
                        "round {round} step {step}: lineage keeps NVTX but rows moved"
                    );
                } else {
                    renumbered += 1;
                }
            }
            old = Some(grown);
        }
        extended += carry.nvtx_tables_extended();
    }
    assert!(extended > 0, "no load extended the last one's NVTX table");
    assert!(
        kept_claims > 0 && renumbered > 0,
        "{kept_claims} kept, {renumbered} renumbered"
    );
}

/// The idle attribution extended from each state of a growing report to the
/// next (`Attribution::extended`, taken up at a checkpoint) equals the
/// attribution of the grown trace made whole: every gap, its thread,
/// causes and the operation that ends it. Each table's rows come late by
/// its own number of slices, so a new call launches work already there (the
/// gap's thread is found later), a copy's record comes after its call (the
/// call's cause changes from a launch to a pageable copy), and the GPU's
/// operations come before or after the calls around them.
#[test]
fn the_idle_attribution_and_findings_extended_as_the_report_grows_equal_those_made_whole() {
    const API: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
    const KERNELS: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
    const COPIES: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
    // Per order: each table's lag in slices, and the table whose times are
    // moved 300 µs later (a clock ahead of the others): calls that start
    // after the work they launched, copies that start after the next work.
    type Lag = fn(&str) -> i64;
    let orders: [(&str, Lag, Option<&str>); 6] = [
        ("together", |_| 0, None),
        ("calls late", |t| 2 * i64::from(t == API), None),
        (
            "calls late, their clock ahead",
            |t| 2 * i64::from(t == API),
            Some(API),
        ),
        (
            "work late",
            |t| i64::from(t == KERNELS) + 2 * i64::from(t == COPIES),
            None,
        ),
        ("copies late", |t| 3 * i64::from(t == COPIES), None),
        (
            "copies late, their clock ahead",
            |t| 2 * i64::from(t == COPIES),
            Some(COPIES),
        ),
    ];
    let never = AtomicBool::new(false);
    let low = findings::Thresholds {
        gap_ms: 0.02,
        util_threshold: 90.0,
        ..findings::Thresholds::default()
    };
    let mut taken_up = 0;
    let mut rule_findings = 0;
    let mut quiet = 0;
    for name in [
        "sync_timing.sqlite",
        "streams.sqlite",
        "timing_cases.sqlite",
        "torch_work.sqlite",
    ] {
        for (order, lag, ahead) in orders {
            let growing = Growing::start(&fixture(name), &format!("idle-{order}-{name}"));
            let mut carry = Carry::default();
            let mut extended: Option<idle::Attribution> = None;
            let mut carried: Option<findings::Carried> = None;
            for step in 0..=SLICES + 3 {
                // Each table's slice `step - lag`.
                for late in 0..=3 {
                    if (0..SLICES).contains(&(step - late)) {
                        growing.add_slice_where(step - late, SLICES, |t| lag(t) == late);
                    }
                }
                if let Some(table) = ahead {
                    growing.move_new_rows(table, 300_000);
                }
                let grown = load_growing(&growing.path, &mut carry).expect("growing load");
                let whole = idle::attribute(&grown, idle::Lanes::Device, &never).expect("runs");
                let next = match extended.take() {
                    Some(before) => before.extended(&grown, &never).expect("runs"),
                    // Four operations between checkpoints: a small report's
                    // extensions are taken up at many places.
                    None => whole.clone().checkpoints_every(4),
                };
                assert!(
                    next == whole,
                    "{name}, {order}, step {step}: {}",
                    first_difference(&next, &whole)
                );
                if next.merged() < whole.merged() {
                    taken_up += 1;
                }
                // A lane with nothing new bounds nothing: every summary of an
                // extension that brought nothing holds (a GPU gone quiet held
                // every later one back).
                if next.merged() == 0 && step > 0 {
                    assert_eq!(
                        next.settled_until(),
                        i64::MAX,
                        "{name}, {order}, step {step}"
                    );
                    quiet += 1;
                }
                extended = Some(next);
                // The whole engine, which carries its idle attribution and
                // its sorted operations from run to run, finds what a run
                // from nothing finds; thresholds low enough that nsys's
                // gap and utilization rules find something.
                let (found, _, kept) =
                    findings::analyze_grown(&grown, carried.take(), None, &low, &never)
                        .expect("runs");
                let fresh = findings::analyze(&grown, None, &low, &never).expect("runs");
                assert!(found == fresh, "{name}, {order}, step {step}: findings");
                for kind in [FindingKind::GpuIdleGap, FindingKind::LowGpuUtilization] {
                    rule_findings += found.iter().filter(|f| f.kind == kind).count();
                }
                carried = Some(kept);
            }
        }
    }
    assert!(
        taken_up > 20,
        "extensions taken up at a checkpoint: {taken_up}"
    );
    assert!(quiet > 0, "no extension that brought nothing");
    assert!(
        rule_findings > 100,
        "gap and utilization findings: {rule_findings}"
    );
}

/// Where two attributions differ first: a gap, or the lanes' spans.
fn first_difference(a: &idle::Attribution, b: &idle::Attribution) -> String {
    let (ga, gb): (Vec<_>, Vec<_>) = (a.gaps().collect(), b.gaps().collect());
    match (0..ga.len().max(gb.len())).find(|&i| ga.get(i) != gb.get(i)) {
        Some(i) => format!("gap {i}: {:?} against {:?}", ga.get(i), gb.get(i)),
        None => format!(
            "spans {:?} against {:?}",
            a.spans().collect::<Vec<_>>(),
            b.spans().collect::<Vec<_>>()
        ),
    }
}
