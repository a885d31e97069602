//! A report that grows under the user (egui_kittest): a report being opened,
//! shown from its first snapshot, and a live capture (a replay of a real
//! report) taking snapshot after snapshot. Whatever the user did meanwhile —
//! a selected event, a selected range, a kernel panel, a search — is still
//! there at the end, and what it shows equals a whole load of the report.

mod common;
use common::{empty_window as harness, fixture, step_until};

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::stats::{self, TimeRange};
use sightline::app::SightlineApp;
use sightline::app::panels::kernel_panel::KernelView;
use sightline::app::panels::search::Then;
use sightline::app::state::events::{EventRef, Table};
use sightline::loader::{LoadJob, LoadMessage};
use sightline::model::Trace;

/// The kernel with the most instances, and one instance of it.
fn busiest_kernel(trace: &Trace) -> (String, u32) {
    let spans = &trace.kernels.spans;
    let mut counts = std::collections::HashMap::new();
    for &n in &spans.name {
        *counts.entry(n).or_insert(0u32) += 1;
    }
    let (&name, _) = counts
        .iter()
        .max_by_key(|&(n, c)| (*c, std::cmp::Reverse(n.0)))
        .expect("a kernel");
    let index = spans
        .name
        .iter()
        .position(|&n| n == name)
        .expect("an instance");
    (trace.name(name).to_string(), index as u32)
}

/// What the user did, to set up and to check after the report grew.
struct UserState {
    kernel: String,
    selected_key: sightline::annotations::EventKey,
    range: TimeRange,
    query: &'static str,
}

/// Selects a kernel, the whole report's span, opens the busiest kernel's
/// panel and searches for `query` — through the document, as the window's
/// clicks do.
fn act(h: &mut Harness<'_, SightlineApp>, range: TimeRange, query: &'static str) -> UserState {
    let doc = h.state_mut().doc_mut().expect("a document");
    let trace = doc.trace.clone();
    let (kernel, index) = busiest_kernel(&trace);
    let ev = EventRef::new(Table::Kernel, index);
    doc.show_event(ev);
    doc.select_range(range.start, range.end);
    let name = trace.strings.find(&kernel).expect("kernel name");
    doc.open_kernel(name);
    doc.search.query = query.into();
    doc.search.start(&trace, None, Then::Outline);
    UserState {
        selected_key: sightline::annotations::key_of(&trace, ev.into()).expect("key"),
        kernel,
        range,
        query,
    }
}

/// Everything the user did is still there, and shows what a whole load of
/// the report gives.
fn check_kept(h: &mut Harness<'_, SightlineApp>, full: &Trace, user: &UserState) {
    // Let every summary, search and panel that the last growth started finish.
    let doc = h.state_mut().doc_mut().expect("a document");
    doc.stats.wait();
    h.state_mut().wait_for_search();
    assert!(step_until(h, Duration::from_secs(60), |h| {
        h.state()
            .doc()
            .is_some_and(|d| !d.kernel.is_pending() && !d.stats.is_pending())
    }));
    let doc = h.state().doc().expect("a document");
    let trace = &doc.trace;
    assert_eq!(
        trace.event_count(),
        full.event_count(),
        "the whole report is in"
    );
    // The selected event: the same kernel instance.
    let selected = doc.selection().event.expect("the selection is kept");
    assert_eq!(
        sightline::annotations::key_of(trace, selected.into()).as_ref(),
        Some(&user.selected_key)
    );
    // The range, and its tables as a whole load computes them.
    assert_eq!(doc.selection().range, Some(user.range));
    assert_eq!(doc.selection().range, Some(user.range));
    for (report, table) in &doc.stats.tables {
        let whole =
            stats::compute_in(full, *report, Some(user.range), doc.stats.rule).unwrap_or_default();
        // As printed: a capture's rows may come in another order than the
        // report's, so sums of floats may differ in their last bits.
        assert_eq!(table.to_csv(), whole.to_csv(), "{report:?} over the range");
    }
    assert!(!doc.stats.tables.is_empty());
    // The kernel panel: the same kernel, all its instances, and launch
    // latencies (which need the API calls' links to the GPU work).
    let name = doc.kernel.name.map(|n| trace.name(n).to_string());
    assert_eq!(name.as_deref(), Some(user.kernel.as_str()));
    let view = doc.kernel.view.as_ref().expect("the kernel panel's view");
    let whole = KernelView::compute(
        full,
        full.strings.find(&user.kernel).expect("name"),
        Some(user.range),
    )
    .expect("view");
    // The same instances (start, duration); their rows differ: a growing
    // report appends each snapshot's kernels, a whole load groups them.
    let instances = |v: &KernelView| v.points.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>();
    assert_eq!(instances(view), instances(&whole));
    assert_eq!(
        view.latency.as_ref().map(|l| l.counts.clone()),
        whole.latency.as_ref().map(|l| l.counts.clone())
    );
    // The search: its query, and the matches a search of the whole report finds.
    assert_eq!(doc.search.query, user.query);
    let mut fresh = sightline::app::panels::search::Search::default();
    fresh.query = user.query.into();
    fresh.run(full);
    assert!(!fresh.matches.is_empty());
    let keys = |t: &Trace, m: &[EventRef]| -> Vec<_> {
        m.iter()
            .map(|&e| sightline::annotations::key_of(t, e.into()))
            .collect()
    };
    assert_eq!(keys(trace, &doc.search.matches), keys(full, &fresh.matches));
}

#[test]
fn a_report_being_opened_is_drawn_from_its_first_snapshot_and_keeps_what_the_user_did() {
    let path = fixture("sync_timing.sqlite");
    let mut snapshots: Vec<(usize, Trace)> = Vec::new();
    let loaded = sightline::loader::load_progressive(
        &path,
        sightline::loader::LoadOptions::WHOLE,
        &mut |_| {},
        &mut |attempt, trace| snapshots.push((attempt, trace)),
        &AtomicBool::new(false),
    )
    .expect("load");
    let full = loaded.trace;
    let whole_span = TimeRange {
        start: full.info.time_range.0,
        end: full.info.time_range.1 + 1,
    };
    // The load's own messages, fed at the test's pace.
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut h = harness();
    let opened = Instant::now();
    h.state_mut()
        .open_job(LoadJob::from_channel(path.clone(), rx));
    let mut snapshots = std::collections::VecDeque::from(snapshots);
    let send_next =
        |tx: &crossbeam_channel::Sender<LoadMessage>,
         snapshots: &mut std::collections::VecDeque<(usize, Trace)>| {
            let (attempt, trace) = snapshots.pop_front().expect("a snapshot");
            tx.send(LoadMessage::Partial {
                trace: Arc::new(trace),
                attempt,
            })
            .expect("send");
        };
    send_next(&tx, &mut snapshots);
    h.step();
    // Not before the load has run a while: a quick one opens whole. (Checked
    // when this step came soon enough: a loaded machine may take longer.)
    if opened.elapsed() < std::time::Duration::from_millis(200) {
        assert!(h.state().doc().is_none(), "a snapshot is not shown at once");
    }
    std::thread::sleep(Duration::from_millis(300));
    h.step();
    h.step();
    // The first picture: before any event is read, a tab with the time axis
    // and the GPU, saying what is still to come.
    let doc = h.state().doc().expect("the first snapshot is shown");
    assert!(doc.is_loading());
    assert_eq!(doc.trace.event_count(), 0);
    assert!(
        h.get_by_label_contains("still to come: GPU rows")
            .rect()
            .width()
            > 0.0
    );
    assert!(h.get_by_label_contains("Timeline,").rect().width() > 0.0);
    // The GPU's row is there, saying its rows are being read.
    assert!(
        doc.timeline
            .rows
            .iter()
            .any(|r| r.label.contains("NVIDIA") && r.label.ends_with("reading its rows…")),
        "{:?}",
        doc.timeline
            .rows
            .iter()
            .map(|r| &r.label)
            .collect::<Vec<_>>()
    );
    // The GPU rows: drawn while the CPU side is still being read.
    send_next(&tx, &mut snapshots);
    h.step();
    h.step();
    let doc = h.state().doc().expect("a document");
    assert!(doc.is_loading());
    assert!(!doc.trace.kernels.spans.is_empty() && doc.trace.cuda_api.spans.is_empty());
    assert!(doc.timeline.painted > 0, "kernels are drawn");
    assert!(
        !doc.timeline
            .rows
            .iter()
            .any(|r| r.label.contains("reading"))
    );
    // Saving now would write a report without its CPU side: refused, said.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("half.sqlite");
    h.state_mut().save_as(out.clone());
    h.state_mut().wait_for_captures();
    assert!(!out.exists(), "a report being read is not saved half");
    let error = h.state().error.clone().unwrap_or_default();
    assert!(error.contains("still being read"), "{error}");
    h.state_mut().error = None;
    // The user works in it: selects a kernel, the whole span, opens the
    // kernel's panel, searches for a CUDA API call not read yet.
    let user = act(&mut h, whole_span, "Synchronize");
    // The rest comes in.
    for _ in 0..10 {
        h.step();
    }
    while !snapshots.is_empty() {
        send_next(&tx, &mut snapshots);
        h.step();
        h.step();
        assert!(h.state().doc().expect("doc").selection().event.is_some());
    }
    tx.send(LoadMessage::Done {
        result: Box::new(Ok(full_copy(&path))),
        attempt: loaded.attempt,
    })
    .expect("send");
    h.state_mut().wait_for_load();
    h.step();
    let doc = h.state().doc().expect("a document");
    assert!(!doc.is_loading());
    assert!(doc.trace.is_complete());
    check_kept(&mut h, &full, &user);
}

/// The report loaded whole again (the load's final trace went to the test).
fn full_copy(path: &std::path::Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false)).expect("load")
}

#[test]
fn a_live_capture_keeps_the_selection_range_kernel_panel_and_search_through_its_snapshots() {
    // Kernels over the last third of the report: snapshots keep coming
    // long after the first kernel is in.
    let path = fixture("streams.sqlite");
    let full = full_copy(&path);
    let span = (full.info.time_range.1 - full.info.time_range.0) as f64;
    let whole_span = TimeRange {
        start: full.info.time_range.0,
        end: full.info.time_range.1 + 1,
    };
    let mut h = harness();
    // About 24 s for the whole report: the kernels take the last 8 s, in
    // which about 40 snapshots arrive on an idle 2-core machine (10 needed,
    // with room for a loaded CI machine).
    h.state_mut().start_replay(path, span / 24e9);
    let events =
        |h: &Harness<'_, SightlineApp>| h.state().doc().map_or(0, |d| d.trace.event_count());
    assert!(step_until(&mut h, Duration::from_secs(30), |h| {
        h.state()
            .doc()
            .is_some_and(|d| !d.trace.kernels.spans.is_empty())
    }));
    let user = act(&mut h, whole_span, "Synchronize");
    let mut snapshots = 0;
    let mut last = events(&h);
    let running = |h: &Harness<'_, SightlineApp>| {
        h.state()
            .doc()
            .and_then(|d| d.live.as_ref())
            .is_some_and(|l| l.is_running())
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while running(&h) && Instant::now() < deadline {
        h.step();
        let now = events(&h);
        if now != last {
            snapshots += 1;
            last = now;
            let doc = h.state().doc().expect("doc");
            assert!(
                doc.selection().event.is_some(),
                "kept at snapshot {snapshots}"
            );
            assert!(doc.kernel.is_open(), "kept at snapshot {snapshots}");
            assert_eq!(doc.search.query, user.query);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!running(&h), "the replay ends");
    assert!(
        snapshots >= 10,
        "{snapshots} snapshots after the user acted"
    );
    check_kept(&mut h, &full, &user);
}
