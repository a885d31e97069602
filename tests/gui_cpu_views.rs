//! The window's views of the CPU side (issue 43): per sampled thread a state
//! row and a samples row (a sample's stack on hover), the flat profile and
//! flame graph of a selected range, and the idle gap's tooltip naming the
//! functions that ran. Expected values come from SQL over the fixtures
//! (nsys's own tables), not from our output.

mod common;

use std::collections::{BTreeSet, HashMap};

use eframe::egui::{self, Event, Pos2, Rect, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use sightline::app::SightlineApp;
use sightline::app::timeline::rows::RowKind;
use sightline::model::{Ns, Trace};

fn harness(trace: Trace) -> Harness<'static, SightlineApp> {
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

fn sql(fixture: &str) -> rusqlite::Connection {
    rusqlite::Connection::open(common::fixture(fixture)).expect("fixture opens")
}

/// Distinct `globalTid`s of a query's rows.
fn tids(db: &rusqlite::Connection, query: &str) -> BTreeSet<i64> {
    let mut st = db.prepare(query).expect("query");
    st.query_map([], |r| r.get::<_, i64>(0))
        .expect("rows")
        .map(|r| r.expect("tid"))
        .collect()
}

/// The rect of the first row of `kind` in the last frame's layout.
fn row_rect(h: &Harness<'_, SightlineApp>, want: impl Fn(&RowKind) -> bool) -> Option<Rect> {
    let tl = &h.state().doc().expect("doc").timeline;
    tl.layout
        .iter()
        .find(|(r, _)| want(&tl.rows[*r].kind))
        .map(|&(_, rect)| rect)
}

/// The texts on screen (a widget's label, or a label's value) holding `needle`.
fn texts(h: &Harness<'_, SightlineApp>, needle: &str) -> Vec<String> {
    h.query_all_by(|n| {
        n.label().is_some_and(|l| l.contains(needle))
            || n.value().is_some_and(|v| v.contains(needle))
    })
    .filter_map(|n| {
        let node = n.accesskit_node();
        node.label().or_else(|| node.value())
    })
    .collect()
}

fn thread_of(trace: &Trace, global_tid: i64) -> u32 {
    trace
        .threads
        .iter()
        .position(|t| t.global_tid == global_tid)
        .expect("the thread is in the report") as u32
}

/// A Python sample from `NVTX_EVENTS` (nsys's `Python Periodic Sampling`
/// marks): time, thread and its innermost function's name (StringIds, HTML
/// unescaped).
struct PySample {
    time: Ns,
    global_tid: i64,
    innermost: String,
    functions: Vec<String>,
}

fn python_samples(db: &rusqlite::Connection) -> Vec<PySample> {
    let names: HashMap<i64, String> = {
        let mut st = db
            .prepare("SELECT id, value FROM StringIds")
            .expect("strings");
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("rows")
            .map(|r| r.expect("string"))
            .collect()
    };
    let unescape = |s: &str| {
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    let mut st = db
        .prepare(
            "SELECT start, globalTid, jsonText FROM NVTX_EVENTS \
             WHERE eventType = 34 AND jsonText IS NOT NULL ORDER BY start",
        )
        .expect("python samples");
    st.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
        ))
    })
    .expect("rows")
    .filter_map(|r| {
        let (time, global_tid, json) = r.ok()?;
        let v: serde_json::Value = serde_json::from_str(&json).ok()?;
        let frames = v["Python Periodic Sampling"]["Frames"].as_array()?.clone();
        let functions: Vec<String> = frames
            .iter()
            .filter_map(|f| names.get(&f["Function"].as_i64()?).map(|n| unescape(n)))
            .collect();
        Some(PySample {
            time,
            global_tid,
            innermost: functions.first()?.clone(),
            functions,
        })
    })
    .collect()
}

/// Every thread nsys scheduled gets a "CPU state" row, every sampled thread
/// a "CPU samples" row (threads from SQL over `SCHED_EVENTS`,
/// `COMPOSITE_EVENTS` and the Python sampling marks), on a report without
/// CUDA; a running stretch (a sched-in to the next sched-out of one thread)
/// reads "running" on hover, an off-CPU one does not.
#[test]
fn sampled_threads_have_state_and_sample_rows_with_their_states() {
    let db = sql("cpu_only_py/cpu_only.sqlite");
    // The program's threads: not those nsys starts in it (tests/timeline_sampling_rows.rs).
    let programs = "globalTid NOT IN (SELECT globalTid FROM ThreadNames JOIN StringIds \
         ON id = nameId WHERE value LIKE '[NSys%' OR value LIKE 'NSys %')";
    let scheduled = tids(
        &db,
        &format!("SELECT DISTINCT globalTid FROM SCHED_EVENTS WHERE {programs}"),
    );
    let sampled = tids(
        &db,
        &format!(
            "SELECT globalTid FROM COMPOSITE_EVENTS WHERE {programs} UNION \
             SELECT globalTid FROM NVTX_EVENTS WHERE eventType = 34 AND {programs}"
        ),
    );
    let trace = common::load("cpu_only_py/cpu_only.sqlite");
    let mut h = harness(trace);
    let rows = &h.state().doc().expect("doc").timeline.rows;
    let state_rows: BTreeSet<i64> = (rows.iter())
        .filter_map(|r| match r.kind {
            RowKind::CpuState { thread } => Some(thread),
            _ => None,
        })
        .map(|t| h.state().doc().expect("doc").trace.threads[t as usize].global_tid)
        .collect();
    let sample_rows: BTreeSet<i64> = (rows.iter())
        .filter_map(|r| match r.kind {
            RowKind::Samples { thread } => Some(thread),
            _ => None,
        })
        .map(|t| h.state().doc().expect("doc").trace.threads[t as usize].global_tid)
        .collect();
    assert_eq!(state_rows, scheduled);
    assert_eq!(sample_rows, sampled);
    assert_eq!(
        h.query_all_by_label("CPU state").count(),
        scheduled.len(),
        "each state row is on screen with its label"
    );
    assert_eq!(
        h.query_all_by_label_contains("CPU samples (").count(),
        sampled.len()
    );

    // The longest running and off-CPU stretches of the busiest thread, from SQL.
    let busiest: i64 = db
        .query_row(
            &format!(
                "SELECT globalTid FROM SCHED_EVENTS WHERE {programs} \
                 GROUP BY globalTid ORDER BY count(*) DESC LIMIT 1"
            ),
            [],
            |r| r.get(0),
        )
        .expect("a scheduled thread");
    let mut st = db
        .prepare("SELECT start, isSchedIn FROM SCHED_EVENTS WHERE globalTid = ?1 ORDER BY start")
        .expect("sched");
    let changes: Vec<(i64, bool)> = st
        .query_map([busiest], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? != 0)))
        .expect("rows")
        .map(|r| r.expect("change"))
        .collect();
    let longest = |running: bool| {
        changes
            .windows(2)
            .filter(|w| w[0].1 == running && w[1].1 != running)
            .map(|w| (w[0].0, w[1].0))
            .max_by_key(|(a, b)| b - a)
            .expect("a stretch")
    };
    let thread = thread_of(&h.state().doc().expect("doc").trace, busiest);
    for (running, (from, to)) in [(true, longest(true)), (false, longest(false))] {
        let doc = h.state_mut().doc_mut().expect("doc");
        let pad = (to - from) as f64;
        doc.timeline.zoom_to(from as f64 - pad, to as f64 + pad);
        h.run_steps(2);
        let rect = row_rect(
            &h,
            |k| matches!(k, RowKind::CpuState { thread: t } if *t == thread),
        )
        .expect("the state row is laid out");
        common::hover(&mut h, rect.center());
        let says_running = h.query_all_by_label_contains("running ").count() > 0;
        assert_eq!(
            says_running, running,
            "the stretch {from}..{to} (sched in: {running}) on hover"
        );
        common::hover(&mut h, Pos2::new(5.0, 990.0));
    }
}

/// Hovering a Python sample's tick shows its stack, innermost frame first,
/// named as nsys's own JSON names it (SQL over `NVTX_EVENTS.jsonText`).
#[test]
fn hovering_a_sample_tick_shows_its_stack_innermost_first() {
    let db = sql("cpu_only_py/cpu_only.sqlite");
    let samples = python_samples(&db);
    // A sample well apart from its thread's others, of a named function.
    let pick = samples
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.innermost.starts_with('<') && s.functions.len() >= 2)
        .map(|(_, s)| s)
        .nth(50)
        .expect("a Python sample with a stack");
    let trace = common::load("cpu_only_py/cpu_only.sqlite");
    let thread = thread_of(&trace, pick.global_tid);
    let mut h = harness(trace);
    let t = pick.time as f64;
    // ±20 µs: Python samples come a millisecond apart.
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .timeline
        .zoom_to(t - 20_000.0, t + 20_000.0);
    h.run_steps(2);
    let rect = row_rect(
        &h,
        |k| matches!(k, RowKind::Samples { thread: th } if *th == thread),
    )
    .expect("the samples row is laid out");
    let x = {
        let tl = &h.state().doc().expect("doc").timeline;
        let c = tl.canvas;
        c.left() + ((t - tl.view.start) / (tl.view.end - tl.view.start)) as f32 * c.width()
    };
    // The lower half holds the Python sampler's ticks.
    common::hover(&mut h, Pos2::new(x, rect.bottom() - 4.0));
    assert!(
        h.query_all_by_label_contains("Python sample at").count() > 0,
        "a Python sample's tooltip"
    );
    let innermost = format!("{} (", pick.innermost);
    let caller = format!("{} (", pick.functions[1]);
    // A frame's line starts with its function (`raw_decode (` holds `decode (` too).
    let lines_of = |start: &str| -> Vec<Rect> {
        h.query_all_by(|n| {
            n.label()
                .or_else(|| n.value())
                .is_some_and(|l| l.starts_with(start))
        })
        .map(|n| n.rect())
        .collect()
    };
    let shown = lines_of(&innermost);
    let callers = lines_of(&caller);
    assert!(!shown.is_empty(), "{innermost} is shown");
    assert!(!callers.is_empty(), "{caller} is shown");
    assert!(
        shown[0].top() < callers[0].top(),
        "the innermost frame comes first"
    );
}

/// A selected step of the PyTorch loop has a flame graph with `build_batch`
/// under it, its count the analysis API's and the count of the step's
/// Python samples whose stack holds it (SQL).
#[test]
fn a_steps_flame_graph_has_build_batch_with_its_sample_count() {
    use sightline::analysis::cpu_profile::{SampleScope, flame_tree};
    let db = sql("torch_loop_py/torch_loop.sqlite");
    let (from, to): (i64, i64) = db
        .query_row(
            "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
             WHERE e.eventType = 59 AND coalesce(e.text, s.value) = 'step 7'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("step 7");
    let in_step = python_samples(&db)
        .into_iter()
        .filter(|s| s.time >= from && s.time < to)
        .filter(|s| s.functions.iter().any(|f| f == "build_batch"))
        .count() as u64;
    assert!(in_step > 0, "the step's samples run build_batch");
    let trace = common::load("torch_loop_py/torch_loop.sqlite");
    let api = flame_tree(&trace, &SampleScope::range(from, to));
    let api_total: u64 = (api.nodes.iter())
        .filter(|n| {
            n.function
                .is_some_and(|k| trace.name(k.function) == "build_batch")
        })
        .map(|n| n.total)
        .sum();
    assert_eq!(api_total, in_step, "the analysis counts nsys's samples");
    let mut h = harness(trace);
    h.state_mut().doc_mut().expect("doc").select_range(from, to);
    h.state_mut().doc_mut().expect("doc").cpu_profile.wait();
    h.run_steps(4);
    let panel = &h.state().doc().expect("doc").cpu_profile;
    let node = panel
        .node_named("build_batch")
        .expect("build_batch in the flame graph");
    let profile = panel.profile.as_ref().expect("profile");
    let n = profile.flame.node(node).expect("node").total;
    assert_eq!(n, in_step);
    let label = "build_batch (torch_loop.py:";
    let shown = texts(&h, label);
    assert!(
        shown
            .iter()
            .any(|l| l.contains(&format!(": {n} of {} samples", profile.flame.root().total))),
        "the node's count is shown: {shown:?}"
    );
    // A click shows its whole stack.
    let rect = h
        .query_all_by_label_contains(&format!(": {n} of "))
        .find(|x| {
            x.accesskit_node()
                .label()
                .is_some_and(|l| l.starts_with("build_batch"))
        })
        .expect("the node")
        .rect();
    h.event(Event::PointerMoved(rect.center()));
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos: rect.center(),
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: Default::default(),
        });
        h.step();
    }
    h.run_steps(2);
    assert!(
        texts(&h, "stack (outermost first):")
            .iter()
            .any(|l| l.contains("build_batch")),
        "the clicked node's stack"
    );
}

/// The idle gap's tooltip names the functions the launching thread ran
/// meanwhile: on the PyTorch loop, the GPU idles while `build_batch` runs
/// `busy_until`.
#[test]
fn the_idle_gap_tooltip_names_the_functions_that_ran() {
    use sightline::analysis::idle::Cause;
    let trace = common::load("torch_loop_py/torch_loop.sqlite");
    let mut h = harness(trace);
    let shared = h.state().doc().expect("doc").trace.clone();
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.timeline.view.show_idle_why = true;
        doc.timeline.idle_rows.wait(&shared);
    }
    h.run_steps(2);
    // The longest gap whose cause is CPU work outside CUDA.
    let gap = {
        let a = (h
            .state()
            .doc()
            .expect("doc")
            .timeline
            .idle_rows
            .attribution
            .clone())
        .expect("attributed");
        a.gaps()
            .filter(|g| g.dominant == Cause::Outside)
            .max_by_key(|g| g.end - g.start)
            .copied()
            .expect("a gap of CPU work")
    };
    let (s, e) = (gap.start as f64, gap.end as f64);
    let pad = (e - s) * 0.5;
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .timeline
        .zoom_to(s - pad, e + pad);
    h.run_steps(2);
    let rect = row_rect(&h, |k| matches!(k, RowKind::IdleWhy { .. })).expect("the idle row");
    let x = {
        let tl = &h.state().doc().expect("doc").timeline;
        let c = tl.canvas;
        c.left()
            + (((s + e) / 2.0 - tl.view.start) / (tl.view.end - tl.view.start)) as f32 * c.width()
    };
    common::hover(&mut h, Pos2::new(x, rect.center().y));
    let lines = texts(&h, "outside CUDA:");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("`busy_until`") || l.contains("`build_batch`")),
        "the tooltip names the functions: {lines:?}"
    );
}

/// The CPU samples panel narrows its profile to one thread picked in its menu: the autograd
/// thread's profile counts exactly that thread's samples (SQL over `COMPOSITE_EVENTS`), and
/// the menu offers every sampled thread with its count.
#[test]
fn the_cpu_profile_narrows_to_the_thread_picked_in_its_menu() {
    let db = sql("torch_loop_py/torch_loop.sqlite");
    let (tid, name): (i64, String) = db
        .query_row(
            "SELECT t.globalTid, s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId \
             WHERE s.value LIKE 'pt_autograd%'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the autograd thread");
    let (from, to, autograd): (i64, i64, u64) = db
        .query_row(
            "SELECT (SELECT min(start) FROM COMPOSITE_EVENTS), \
                    (SELECT max(start) + 1 FROM COMPOSITE_EVENTS), \
                    (SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid = ?1)",
            [tid],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("the samples' span");
    assert!(autograd > 0, "the autograd thread was sampled");
    let trace = common::load("torch_loop_py/torch_loop.sqlite");
    let mut h = harness(trace);
    h.state_mut().doc_mut().expect("doc").select_range(from, to);
    h.state_mut().doc_mut().expect("doc").cpu_profile.wait();
    h.run_steps(4);
    let every = (h.state().doc().expect("doc").cpu_profile.profile.as_ref())
        .expect("profile")
        .flat
        .samples;
    // The menu's button shows what it holds as its value.
    h.get_by(|n| n.value().is_some_and(|v| v == "every thread"))
        .click();
    h.run_steps(3);
    let option = format!("{name} [{}] · {autograd}", tid & 0xFF_FFFF);
    h.get_by_label(&option).click();
    h.run_steps(2);
    h.state_mut().doc_mut().expect("doc").cpu_profile.wait();
    h.run_steps(3);
    let panel = &h.state().doc().expect("doc").cpu_profile;
    let profile = panel.profile.as_ref().expect("the thread's profile");
    let picked = profile.thread.expect("a thread picked");
    let picked_tid = h.state().doc().expect("doc").trace.threads[picked as usize].global_tid;
    assert_eq!(picked_tid, tid);
    assert_eq!(profile.flat.samples, autograd, "the thread's samples alone");
    assert!(profile.flat.samples < every);
    assert_eq!(
        profile.threads.iter().map(|&(_, n)| n).sum::<u64>(),
        every,
        "the menu's counts add up to every thread's profile"
    );
    assert!(
        !texts(&h, &format!("{name} [")).is_empty(),
        "the menu shows the thread picked"
    );
}
