//! CPU samples, Python samples and scheduling against SQL over the same
//! real reports (nsys 2025.3.1: `torch_loop`, `cpu_only`): every count the
//! model gives is computed here by a query on the file, never typed.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use sightline::analysis::cpu_profile::{
    SampleScope, flame_tree, flat_profile, function_label, thread_states, top_functions,
};
use sightline::model::{FrameKind, SampleSource, SchedState, Trace};

const FIXTURES: [&str; 5] = [
    "torch_loop/torch_loop",
    "cpu_only/cpu_only",
    "torch_loop_py/torch_loop",
    "cpu_only_py/cpu_only",
    "native_burn/native_burn",
];

/// The reports exported with `--include-json=true`: Python frames in.
const WITH_PYTHON_FRAMES: [&str; 2] = ["torch_loop_py/torch_loop", "cpu_only_py/cpu_only"];

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.sqlite"))
}

fn load_path(path: &std::path::Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `SELECT key, count` rows as a map.
fn counts(db: &rusqlite::Connection, sql: &str) -> HashMap<i64, usize> {
    let mut stmt = db.prepare(sql).expect("query");
    stmt.query_map([], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as usize))
    })
    .expect("rows")
    .map(|r| r.expect("row"))
    .collect()
}

fn thread_of(trace: &Trace, global_tid: i64) -> u32 {
    trace
        .threads
        .iter()
        .position(|t| t.global_tid == global_tid)
        .unwrap_or_else(|| panic!("thread {global_tid} not loaded")) as u32
}

#[test]
fn every_threads_samples_and_switches_are_those_the_file_holds() {
    for name in FIXTURES {
        let trace = load_path(&path(name));
        let db = rusqlite::Connection::open(path(name)).expect("open");
        let native = counts(
            &db,
            "SELECT globalTid, count(*) FROM COMPOSITE_EVENTS GROUP BY globalTid",
        );
        let python = counts(
            &db,
            "SELECT globalTid, count(*) FROM NVTX_EVENTS WHERE eventType = 34 AND domainId = \
             (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'Python Periodic Sampling') \
             GROUP BY globalTid",
        );
        let switches = counts(
            &db,
            "SELECT globalTid, count(*) FROM SCHED_EVENTS GROUP BY globalTid",
        );
        assert!(!native.is_empty() && !switches.is_empty(), "{name}");
        for (source, expected) in [
            (SampleSource::Native, &native),
            (SampleSource::Python, &python),
        ] {
            for (&tid, &n) in expected {
                let t = thread_of(&trace, tid);
                let got = trace.cpu.samples_of(t, source).map_or(0, |s| s.len());
                assert_eq!(got, n, "{name}: {source:?} samples of {tid}");
            }
            let total: usize = expected.values().sum();
            let ours: usize = (trace.cpu.threads.iter())
                .filter(|s| s.source == source)
                .map(|s| s.len())
                .sum();
            assert_eq!(ours, total, "{name}: {source:?} samples in all");
        }
        for (&tid, &n) in &switches {
            let t = thread_of(&trace, tid);
            let got = trace.cpu.sched_of(t).map_or(0, |s| s.at.len());
            assert_eq!(got, n, "{name}: switches of {tid}");
            let s = trace.cpu.sched_of(t).expect("sched");
            assert!(s.at.is_sorted(), "{name}: switches in time order");
        }
    }
}

/// Every sample's stack, innermost first, is the file's callchain by
/// `stackDepth` (symbol names; an unresolved address named after its module).
#[test]
fn every_samples_stack_is_its_callchain() {
    for name in FIXTURES {
        let trace = load_path(&path(name));
        let db = rusqlite::Connection::open(path(name)).expect("open");
        let mut stmt = db
            .prepare(
                "SELECT c.globalTid, c.start, s.value, m.value, ch.unresolved \
                 FROM COMPOSITE_EVENTS c JOIN SAMPLING_CALLCHAINS ch ON ch.id = c.id \
                 JOIN StringIds s ON s.id = ch.symbol JOIN StringIds m ON m.id = ch.module \
                 ORDER BY c.id, ch.stackDepth",
            )
            .expect("query");
        let mut expected: HashMap<(i64, i64), Vec<String>> = HashMap::new();
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<i64>>(4)?.unwrap_or(0),
                ))
            })
            .expect("rows");
        for row in rows {
            let (tid, start, symbol, module, unresolved) = row.expect("row");
            let function = if unresolved != 0 {
                format!("[{}]", module.rsplit('/').next().unwrap_or(&module))
            } else {
                symbol
            };
            expected.entry((tid, start)).or_default().push(function);
        }
        let mut checked = 0;
        for s in trace
            .cpu
            .threads
            .iter()
            .filter(|s| s.source == SampleSource::Native)
        {
            let tid = trace.threads[s.thread as usize].global_tid;
            for (&time, stack) in s.times.iter().zip(s.stacks.iter()) {
                let ours: Vec<String> = (trace.cpu.stacks.frames(stack.stack()))
                    .map(|f| {
                        trace
                            .name(trace.cpu.frames[f as usize].function)
                            .to_string()
                    })
                    .collect();
                assert_eq!(
                    Some(&ours),
                    expected.get(&(tid, time)),
                    "{name}: sample at {time}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, expected.len(), "{name}: every sample checked");
    }
}

/// The flat profile over everything: its samples are the file's, self
/// counts add up to them, and the top function's self count is what SQL
/// counts for its depth-0 frames.
#[test]
fn the_flat_profile_counts_what_sql_counts() {
    for name in FIXTURES {
        let trace = load_path(&path(name));
        let db = rusqlite::Connection::open(path(name)).expect("open");
        let profile = flat_profile(&trace, &SampleScope::whole().source(SampleSource::Native));
        let total: u64 = db
            .query_row("SELECT count(*) FROM COMPOSITE_EVENTS", [], |r| r.get(0))
            .expect("count");
        assert_eq!(profile.samples, total, "{name}");
        let self_sum: u64 = profile.rows.iter().map(|r| r.self_samples).sum();
        assert_eq!(
            self_sum, total,
            "{name}: every sample has one innermost frame"
        );
        let top = &profile.rows[0];
        assert_eq!(top.key.kind, FrameKind::Native);
        let top_name = trace.name(top.key.function).to_string();
        if !top_name.starts_with('[') {
            let sql_self: u64 = db
                .query_row(
                    "SELECT count(*) FROM SAMPLING_CALLCHAINS ch JOIN StringIds s ON s.id = ch.symbol \
                     WHERE ch.stackDepth = 0 AND ch.unresolved = 0 AND s.value = ?1",
                    [&top_name],
                    |r| r.get(0),
                )
                .expect("count");
            assert_eq!(top.self_samples, sql_self, "{name}: {top_name}");
        }
        for r in &profile.rows {
            assert!(r.self_samples <= r.total_samples && r.total_samples <= total);
        }
        // The flame tree holds the same samples: its root is all of them,
        // and each node's children hold no more than it.
        let tree = flame_tree(&trace, &SampleScope::whole().source(SampleSource::Native));
        assert_eq!(tree.root().total, total);
        for node in &tree.nodes {
            let below: u64 = node
                .children
                .iter()
                .map(|&c| tree.nodes[c as usize].total)
                .sum();
            assert_eq!(below + node.self_samples, node.total, "{name}");
        }
    }
}

/// A range holds the samples taken in it: half the report's span gives
/// SQL's count of samples starting in it.
#[test]
fn a_range_profile_holds_the_samples_taken_in_it() {
    let name = "cpu_only/cpu_only";
    let trace = load_path(&path(name));
    let db = rusqlite::Connection::open(path(name)).expect("open");
    let (lo, hi) = trace.info.time_range;
    let mid = lo + (hi - lo) / 2;
    let profile = flat_profile(
        &trace,
        &SampleScope::range(lo, mid).source(SampleSource::Native),
    );
    let expected: u64 = db
        .query_row(
            "SELECT count(*) FROM COMPOSITE_EVENTS WHERE start >= ?1 AND start < ?2",
            [lo, mid],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(profile.samples, expected);
    assert!(expected > 0);
}

/// A thread's states cover the recorded switches: its running time in a
/// range is what SQL's switch pairs give, and off-CPU time inside an OS
/// runtime call names the call.
#[test]
fn thread_states_follow_the_switches_and_name_os_calls() {
    let name = "cpu_only/cpu_only";
    let trace = load_path(&path(name));
    let db = rusqlite::Connection::open(path(name)).expect("open");
    let tid: i64 = db
        .query_row(
            "SELECT globalTid FROM OSRT_API GROUP BY globalTid ORDER BY count(*) DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .expect("the thread with most OS calls");
    // Running time: each switch in to the next switch of the thread.
    let running: i64 = db
        .query_row(
            "SELECT sum(nxt - start) FROM (SELECT start, isSchedIn, \
             lead(start) OVER (ORDER BY start, rowid) AS nxt FROM SCHED_EVENTS WHERE globalTid = ?1) \
             WHERE isSchedIn != 0 AND nxt IS NOT NULL",
            [tid],
            |r| r.get(0),
        )
        .expect("running");
    let t = thread_of(&trace, tid);
    let states = thread_states(&trace, t, i64::MIN / 2, i64::MAX / 2);
    let ours: i64 = (states.iter())
        .filter(|s| s.state == SchedState::Running)
        .map(|s| s.end - s.start)
        .sum();
    assert_eq!(ours, running);
    assert!(states.windows(2).all(|w| w[0].end <= w[1].start));
    let in_calls: Vec<_> = states.iter().filter(|s| s.os_call.is_some()).collect();
    assert!(!in_calls.is_empty(), "the main thread waits in OS calls");
    for s in in_calls {
        let call = s.os_call.expect("call") as usize;
        let (cs, ce) = trace.osrt.spans.get(call).expect("call row");
        assert!(cs <= s.start && s.end <= ce, "the call covers its stretch");
        assert!(
            trace.threads[t as usize].osrt.contains(call as u32),
            "the thread's own call"
        );
    }
}

#[test]
fn top_functions_name_the_native_frames_without_python_ones() {
    let trace = load_path(&path("torch_loop/torch_loop"));
    let (lo, hi) = trace.info.time_range;
    let main = (trace.cpu.threads.iter())
        .filter(|s| s.source == SampleSource::Native)
        .max_by_key(|s| s.len())
        .expect("samples")
        .thread;
    let top = top_functions(&trace, main, &[(lo, hi + 1)], 3);
    assert_eq!(top.source, Some(SampleSource::Native));
    assert!(top.samples > 0);
    assert!(!top.functions.is_empty());
    let profile = flat_profile(&trace, &SampleScope::whole().threads(vec![main]));
    let first = &profile.rows[0];
    assert_eq!(
        top.functions[0].label,
        function_label(&trace, first.key, first.line)
    );
}

/// Python samples keep Python frames: each sample's innermost frame is the
/// payload's `Frames[0]` (by SQL's JSON functions over `jsonText`, names
/// through StringIds, HTML entities undone), counted per function.
#[test]
fn python_samples_have_the_payloads_frames() {
    for name in WITH_PYTHON_FRAMES {
        let trace = load_path(&path(name));
        let db = rusqlite::Connection::open(path(name)).expect("open");
        let mut stmt = db
            .prepare(
                "SELECT replace(replace(replace(s.value, '&lt;', '<'), '&gt;', '>'), '&amp;', '&'), count(*) \
                 FROM NVTX_EVENTS e JOIN StringIds s ON s.id = \
                 json_extract(e.jsonText, '$.\"Python Periodic Sampling\".Frames[0].Function') \
                 WHERE e.eventType = 34 GROUP BY 1",
            )
            .expect("query");
        let expected: HashMap<String, u64> = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect();
        assert!(!expected.is_empty(), "{name}: SQL finds frames");
        let profile = flat_profile(&trace, &SampleScope::whole().source(SampleSource::Python));
        // By name: `<module>` of several files is one name to SQL.
        let mut ours: HashMap<String, u64> = HashMap::new();
        for r in profile.rows.iter().filter(|r| r.self_samples > 0) {
            assert_eq!(
                r.key.kind,
                FrameKind::Python,
                "{name}: Python frames stay Python"
            );
            *ours
                .entry(trace.name(r.key.function).to_string())
                .or_default() += r.self_samples;
        }
        assert_eq!(ours, expected, "{name}: innermost Python functions");
    }
}

/// The names of the functions a program defines (`def NAME`).
fn defined_functions(program: &str) -> Vec<String> {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(program),
    )
    .expect("program");
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("def "))
        .filter_map(|l| l.split('(').next())
        .map(str::to_string)
        .collect()
}

/// On a CPU-only Python program, the profile's top function (self) is one
/// the program defines, shown as Python with its file.
#[test]
fn the_cpu_only_programs_top_function_is_its_own() {
    let trace = load_path(&path("cpu_only_py/cpu_only"));
    let own = defined_functions("cpu_only/programs/cpu_only.py");
    let profile = flat_profile(&trace, &SampleScope::whole());
    let top = &profile.rows[0];
    let name = trace.name(top.key.function);
    assert!(
        own.iter().any(|f| f == name),
        "{name} is not one of {own:?}"
    );
    assert_eq!(top.key.kind, FrameKind::Python);
    let label = function_label(&trace, top.key, top.line);
    assert!(label.contains("cpu_only.py:"), "{label}");
}

/// A copy of fixture `name` edited with `sql`, loaded (it must load).
fn edited(name: &str, sql: &str) -> Trace {
    let dir = tempfile::TempDir::new().expect("a temporary folder");
    let copy = dir.path().join("edited.sqlite");
    std::fs::copy(path(name), &copy).expect("copy");
    rusqlite::Connection::open(&copy)
        .expect("open")
        .execute_batch(sql)
        .expect("edit");
    load_path(&copy)
}

fn warned(trace: &Trace, words: &str) -> bool {
    trace.warnings.iter().any(|w| w.contains(words))
}

/// A callchain table without the column that orders its frames: the
/// samples load (with empty stacks), and the warnings say why.
#[test]
fn callchains_without_a_needed_column_leave_samples_without_stacks() {
    let name = "cpu_only/cpu_only";
    let trace = edited(
        name,
        "CREATE TABLE c2 AS SELECT id, symbol, module FROM SAMPLING_CALLCHAINS; \
         DROP TABLE SAMPLING_CALLCHAINS; ALTER TABLE c2 RENAME TO SAMPLING_CALLCHAINS;",
    );
    let db = rusqlite::Connection::open(path(name)).expect("open");
    let total: usize = db
        .query_row("SELECT count(*) FROM COMPOSITE_EVENTS", [], |r| r.get(0))
        .expect("count");
    let native: usize = (trace.cpu.threads.iter())
        .filter(|s| s.source == SampleSource::Native)
        .map(|s| s.len())
        .sum();
    assert_eq!(native, total);
    assert!(
        warned(&trace, "SAMPLING_CALLCHAINS has no column `stackDepth`"),
        "{:?}",
        trace.warnings
    );
    assert!(warned(&trace, "have no call stack"), "{:?}", trace.warnings);
    assert!(trace.cpu.stacks.is_empty());
}

/// Frames of samples that are not in the report (ids no sample has) are
/// dropped and counted; every sample keeps its own frames.
#[test]
fn dangling_callchain_ids_are_counted_not_loaded() {
    let name = "cpu_only/cpu_only";
    let trace = edited(
        name,
        "INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, stackDepth) \
           VALUES (999999, 1, 1, 0), (1000000, 1, 1, 0), (1000000, 1, 1, 1); \
         DELETE FROM COMPOSITE_EVENTS WHERE id = (SELECT min(id) FROM COMPOSITE_EVENTS);",
    );
    let db = rusqlite::Connection::open(path(name)).expect("open");
    let first_frames: usize = db
        .query_row(
            "SELECT count(*) FROM SAMPLING_CALLCHAINS WHERE id = (SELECT min(id) FROM COMPOSITE_EVENTS)",
            [],
            |r| r.get(0),
        )
        .expect("count");
    let dangling = 3 + first_frames;
    assert!(
        warned(&trace, &format!("SAMPLING_CALLCHAINS: {dangling} frames")),
        "{:?}",
        trace.warnings
    );
    let samples: usize = db
        .query_row("SELECT count(*) FROM COMPOSITE_EVENTS", [], |r| r.get(0))
        .expect("count");
    let native: usize = (trace.cpu.threads.iter())
        .filter(|s| s.source == SampleSource::Native)
        .map(|s| s.len())
        .sum();
    assert_eq!(native, samples - 1);
}

/// Tables without the columns their rows need are skipped with a warning;
/// the rest of the report loads.
#[test]
fn tables_missing_needed_columns_are_skipped_with_a_warning() {
    let trace = edited(
        "cpu_only/cpu_only",
        "ALTER TABLE COMPOSITE_EVENTS DROP COLUMN globalTid; \
         ALTER TABLE SCHED_EVENTS DROP COLUMN isSchedIn;",
    );
    assert!(warned(&trace, "COMPOSITE_EVENTS has no column `globalTid`"));
    assert!(warned(&trace, "SCHED_EVENTS has no column `isSchedIn`"));
    assert!(trace.cpu.sched.is_empty());
    assert!(
        trace
            .cpu
            .threads
            .iter()
            .all(|s| s.source == SampleSource::Python)
    );
    assert!(
        !trace.osrt.spans.is_empty(),
        "the OS runtime calls still load"
    );
}

/// Python payloads that are not JSON, name ids StringIds lacks, frames
/// that are not objects: samples kept, nothing panics, the warning counts.
#[test]
fn odd_python_payloads_are_kept_without_frames() {
    let trace = edited(
        "cpu_only_py/cpu_only",
        "UPDATE NVTX_EVENTS SET jsonText = '{not json' WHERE rowid IN \
           (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 34 LIMIT 3); \
         UPDATE NVTX_EVENTS SET jsonText = '{\"x\":{\"Frames\":[{\"Function\":987654321,\"Line\":\"7\"},3]}}' \
           WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 34 LIMIT 2 OFFSET 3); \
         UPDATE NVTX_EVENTS SET jsonText = '[]' WHERE rowid IN \
           (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 34 LIMIT 1 OFFSET 5);",
    );
    let db = rusqlite::Connection::open(path("cpu_only_py/cpu_only")).expect("open");
    let marks: usize = db
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34",
            [],
            |r| r.get(0),
        )
        .expect("count");
    let python: usize = (trace.cpu.threads.iter())
        .filter(|s| s.source == SampleSource::Python)
        .map(|s| s.len())
        .sum();
    assert_eq!(python, marks, "every sample kept");
    assert!(
        warned(&trace, "3 Python samples have a payload that is not JSON"),
        "{:?}",
        trace.warnings
    );
    assert!(
        warned(&trace, "1 Python samples have no frames"),
        "{:?}",
        trace.warnings
    );
}

/// Call chains written out of order (not by sample and depth): each
/// sample still has its stack, as when they come in order.
#[test]
fn callchains_out_of_order_give_the_same_stacks() {
    let name = "native_burn/native_burn";
    let ordered = load_path(&path(name));
    let reversed = edited(
        name,
        "CREATE TABLE chains AS SELECT * FROM SAMPLING_CALLCHAINS ORDER BY id DESC, stackDepth DESC; \
         DELETE FROM SAMPLING_CALLCHAINS; \
         INSERT INTO SAMPLING_CALLCHAINS SELECT * FROM chains; DROP TABLE chains;",
    );
    let stacks = |t: &Trace| -> Vec<Vec<String>> {
        (t.cpu.threads.iter())
            .flat_map(|s| s.stacks.iter())
            .map(|st| {
                (t.cpu.stacks.frames(st.stack()))
                    .filter_map(|f| t.cpu.frame(f))
                    .map(|f| t.name(f.function).to_string())
                    .collect()
            })
            .collect()
    };
    assert!(ordered.cpu.sample_count() > 0);
    assert_eq!(stacks(&reversed), stacks(&ordered));
}

/// The CPU samples are read last: the snapshot a window draws before them
/// has every other part of the report (nothing else waits on them).
#[test]
fn the_timeline_is_whole_before_the_samples_are_read() {
    for name in ["torch_loop_py/torch_loop", "native_burn/native_burn"] {
        let mut snapshots: Vec<Trace> = Vec::new();
        let loaded = sightline::loader::load_progressive(
            &path(name),
            sightline::loader::LoadOptions::WHOLE,
            &mut |_| {},
            &mut |_, trace| snapshots.push(trace),
            &AtomicBool::new(false),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let last = snapshots.last().expect("snapshots");
        assert_eq!(
            last.info.still_loading,
            vec!["CPU samples and scheduling"],
            "{name}"
        );
        let whole = loaded.trace;
        assert!(whole.cpu.sample_count() > 0 && last.cpu.sample_count() == 0);
        assert_eq!(last.event_count(), whole.event_count(), "{name}");
        assert!(
            std::sync::Arc::ptr_eq(&last.correlation, &whole.correlation),
            "{name}: the links are in"
        );
    }
}
