//! The Findings panel and its timeline marks, driven headlessly (egui_kittest
//! + AccessKit) and checked against the engine's own output.

mod common;
use common::fixture;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use eframe::egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use rusqlite::Connection;
use sightline::analysis::findings::{Finding, FindingKind, Thresholds, analyze, entries};
use sightline::app::SightlineApp;
use sightline::app::panels::findings_panel::OVERLAY_SOURCE;
use sightline::app::state::events::EventRef;
use sightline::app::timeline::Anchor;
use sightline::model::Trace;

const ENDS_BEFORE: &str = "Finding range-ends-before-gpu-work:";

fn load(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

fn findings(trace: &Trace) -> Vec<Finding> {
    analyze(trace, None, &Thresholds::default(), &AtomicBool::new(false)).expect("not cancelled")
}

/// The app on `trace`, with the findings job finished and a few frames drawn.
fn harness(trace: Trace) -> Harness<'static, SightlineApp> {
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 2400.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(2);
    h.state_mut()
        .doc_mut()
        .expect("a report is open")
        .wait_for_findings();
    h.run_steps(3);
    h
}

fn badge_text(n: usize) -> String {
    format!("{n} finding{}", if n == 1 { "" } else { "s" })
}

/// Opens the panel from the badge, which counts `n` entries, and unfolds
/// every entry's instances so each finding has its own line.
fn open_panel(h: &mut Harness<'_, SightlineApp>, n: usize) {
    h.get_by_label(&badge_text(n)).click();
    h.run_steps(3);
    assert!(
        h.state().doc().is_some_and(|d| d.findings.open),
        "the badge opens the panel"
    );
    let folded: Vec<String> = h
        .query_all_by_label_contains(" × ")
        .filter_map(|n| n.accesskit_node().label())
        .collect();
    for label in folded {
        h.get_by_label(&label).click();
        h.run_steps(2);
    }
}

/// Without any click: the badge counts the engine's findings, and every
/// `range-ends-before-gpu-work` (the `no-sync` and `sync-before-only` timed
/// iterations) has a ruler mark on its span and a bar under its range that
/// reaches past the range's end.
#[test]
fn sync_timing_shows_badge_and_marks_without_a_click() {
    let trace = load(&fixture("sync_timing.sqlite"));
    let expected = findings(&trace);
    let ends: Vec<&Finding> = expected
        .iter()
        .filter(|f| f.kind == FindingKind::RangeEndsBeforeGpuWork)
        .collect();
    assert!(!ends.is_empty());
    for f in &ends {
        let path = f.range.as_deref().unwrap_or("");
        assert!(
            path.starts_with("no-sync/") || path.starts_with("sync-before-only/"),
            "{path}"
        );
    }
    // Opened as a user opens it: read in the background, then analysed.
    let mut app = SightlineApp::default();
    app.open(fixture("sync_timing.sqlite"));
    app.wait_for_load();
    app.doc_mut().expect("opened").wait_for_findings();
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 2400.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    assert!(
        h.query_by_label(&badge_text(entries(&expected).len()))
            .is_some(),
        "badge '{}': it counts entries",
        badge_text(entries(&expected).len())
    );
    let doc = h.state().doc().expect("doc");
    assert!(!doc.findings.open, "the panel waits for a click");
    let marks: Vec<_> = doc.timeline.overlays_of(OVERLAY_SOURCE).collect();
    for f in &expected {
        assert!(
            marks
                .iter()
                .any(|m| m.anchor == Anchor::Ruler && (m.start, m.end) == (f.start, f.end)),
            "ruler mark for {} at {}",
            f.kind.name(),
            f.start
        );
    }
    for f in &ends {
        let range = EventRef::from(f.events[0]);
        assert!(
            marks
                .iter()
                .any(|m| m.anchor == Anchor::Under(range) && m.start >= f.end && m.end > f.end),
            "overhang bar under the range at {}",
            f.start
        );
    }
    // The view went to where the timing mistakes are, and painted them.
    let (lo, hi) = doc.timeline.limits();
    let view = &doc.timeline.view;
    for f in &ends {
        assert!(
            view.start <= f.start as f64 && view.end >= f.end as f64,
            "{}..{} in view {}..{}",
            f.start,
            f.end,
            view.start,
            view.end
        );
    }
    assert!(view.span() < (hi - lo) / 100.0, "focused: {}", view.span());
    assert!(
        doc.timeline.overlays_painted >= ends.len(),
        "a bar under each range is painted: {}",
        doc.timeline.overlays_painted
    );
    assert_eq!(doc.timeline.history_len(), 1, "Backspace shows it all");
}

/// The panel lists exactly the engine's `range-ends-before-gpu-work`
/// findings, one entry each.
#[test]
fn panel_lists_every_range_ends_before_gpu_work_finding() {
    let trace = load(&fixture("sync_timing.sqlite"));
    let expected = findings(&trace);
    let ends: Vec<&Finding> = expected
        .iter()
        .filter(|f| f.kind == FindingKind::RangeEndsBeforeGpuWork)
        .collect();
    let mut h = harness(trace);
    open_panel(&mut h, entries(&expected).len());
    let listed: Vec<String> = h
        .query_all_by_label_contains(ENDS_BEFORE)
        .filter_map(|n| n.accesskit_node().label())
        .collect();
    assert_eq!(listed.len(), ends.len(), "{listed:#?}");
    for f in &ends {
        let label = format!("{ENDS_BEFORE} {}", f.message);
        assert!(listed.contains(&label), "listed: {label}");
    }
    assert!(
        h.query_all_by_label_contains("range-ends-before-gpu-work (")
            .next()
            .is_some(),
        "a group header for the kind"
    );
    assert!(
        h.query_all_by_label_contains("Why / how to fix:")
            .next()
            .is_some(),
        "the fix text is shown"
    );
}

/// Clicking an entry zooms to its span (and no further out than needed) and
/// selects its first event.
#[test]
fn clicking_a_finding_zooms_to_it_and_selects_its_event() {
    let trace = load(&fixture("sync_timing.sqlite"));
    let expected = findings(&trace);
    let mut h = harness(trace);
    let (lo, hi) = h.state().doc().expect("doc").timeline.limits();
    open_panel(&mut h, entries(&expected).len());
    // The third one, so that a click landing on the first entry would fail.
    let target = expected
        .iter()
        .filter(|f| f.kind == FindingKind::RangeEndsBeforeGpuWork)
        .nth(2)
        .expect("three findings");
    h.get_by_label(&format!("{ENDS_BEFORE} {}", target.message))
        .click();
    h.run_steps(3);
    let doc = h.state().doc().expect("doc");
    let view = &doc.timeline.view;
    assert!(
        view.start <= target.start as f64 && view.end >= target.end as f64,
        "view {}..{} contains {}..{}",
        view.start,
        view.end,
        target.start,
        target.end
    );
    assert!(
        view.span() < (hi - lo) / 100.0,
        "zoomed in: {} of {}",
        view.span(),
        hi - lo
    );
    assert_eq!(
        doc.selection().event,
        Some(EventRef::from(target.events[0])),
        "its first event is selected"
    );
    let outlined: Vec<EventRef> = doc
        .timeline
        .overlays_of(OVERLAY_SOURCE)
        .filter_map(|m| match m.anchor {
            Anchor::Outline(ev) => Some(ev),
            _ => None,
        })
        .collect();
    let others: Vec<EventRef> = target.events[1..]
        .iter()
        .map(|&e| EventRef::from(e))
        .collect();
    assert_eq!(outlined, others, "the other events are outlined");
}

/// A copy of torch_work with one kernel and no copies, sets or syncs: the
/// engine finds nothing, and the panel lists nothing and marks nothing.
#[test]
fn a_report_without_mistakes_lists_no_findings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("clean.sqlite");
    std::fs::copy(fixture("torch_work.sqlite"), &path).expect("copy");
    {
        let conn = Connection::open(&path).expect("open copy");
        conn.execute_batch(
            "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY;
             DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET;
             DELETE FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
             DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL
               WHERE rowid <> (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);",
        )
        .expect("edit");
    }
    let trace = load(&path);
    assert_eq!(trace.kernels.spans.len(), 1, "GPU work is left");
    assert_eq!(findings(&trace), Vec::new(), "the engine finds nothing");
    let mut h = harness(trace);
    open_panel(&mut h, 0);
    assert_eq!(
        h.query_all_by_label_contains("Finding ").count(),
        0,
        "no entries"
    );
    assert!(
        h.query_all_by_label_contains("No timing or sync mistakes")
            .next()
            .is_some()
    );
    let doc = h.state().doc().expect("doc");
    // No finding marks; a range's GPU-work bar may be there (it is no mistake).
    assert_eq!(
        doc.timeline
            .overlays_of(OVERLAY_SOURCE)
            .filter(|m| !matches!(m.anchor, Anchor::Under(_)))
            .count(),
        0
    );
}

/// Closing the report's tab stops its findings job.
#[test]
fn closing_the_tab_cancels_the_job() {
    let trace = load(&fixture("sync_timing.sqlite"));
    let mut app = SightlineApp::with_trace(trace);
    let cancel = app.doc().expect("doc").findings.cancel_flag();
    assert!(!cancel.load(std::sync::atomic::Ordering::Relaxed));
    app.close_tab(0);
    assert!(cancel.load(std::sync::atomic::Ordering::Relaxed));
}

/// The first `timed-iteration` NVTX row inside the range named `parent`.
fn first_timed_iteration(trace: &Trace, parent: &str) -> EventRef {
    let spans = &trace.nvtx.spans;
    let named = |name: &str| {
        (0..spans.len())
            .filter(|&i| trace.name(spans.name[i]) == name)
            .collect::<Vec<_>>()
    };
    let outer = named(parent)[0];
    let inner = named("timed-iteration")
        .into_iter()
        .find(|&i| spans.start[i] >= spans.start[outer] && spans.end(i) <= spans.end(outer))
        .expect("a timed iteration in it");
    EventRef::new(sightline::app::state::events::Table::Nvtx, inner as u32)
}

/// With the panel open, a selected range says why it has a finding or not:
/// `sync-after-only` has none because the warm-up work had drained before
/// its sync began; `no-sync` measured the launch.
#[test]
fn a_selected_range_explains_its_verdict() {
    let trace = load(&fixture("sync_timing.sqlite"));
    let n = entries(&findings(&trace)).len();
    let after_only = first_timed_iteration(&trace, "sync-after-only");
    let no_sync = first_timed_iteration(&trace, "no-sync");
    let mut h = harness(trace);
    open_panel(&mut h, n);
    let select = |h: &mut Harness<'_, SightlineApp>, ev: EventRef| {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.select_event(Some(ev));
        h.run_steps(3);
    };
    select(&mut h, after_only);
    assert!(
        h.query_all_by_label_contains("had finished")
            .next()
            .is_some(),
        "sync-after-only: the earlier work had drained"
    );
    assert!(h.query_by_label("No finding for this range.").is_some());
    select(&mut h, no_sync);
    assert!(
        h.query_all_by_label_contains("measured the launch, not the work")
            .next()
            .is_some()
    );
    assert!(
        h.query_by_label("Findings: range-ends-before-gpu-work.")
            .is_some()
    );
}

/// Every range that launched GPU work has a bar for it under it, flagged or
/// not: under `sync-before-and-after`'s timed iterations the bar ends inside
/// the range (the range covers its work).
#[test]
fn correct_ranges_show_their_gpu_work_inside() {
    let trace = load(&fixture("sync_timing.sqlite"));
    let spans = trace.nvtx.spans.clone();
    let parent = (0..spans.len())
        .find(|&i| trace.name(spans.name[i]) == "sync-before-and-after")
        .expect("the variant range");
    let timed: Vec<usize> = (0..spans.len())
        .filter(|&i| trace.name(spans.name[i]) == "timed-iteration")
        .filter(|&i| spans.start[i] >= spans.start[parent] && spans.end(i) <= spans.end(parent))
        .collect();
    assert!(!timed.is_empty());
    let h = harness(trace);
    let doc = h.state().doc().expect("doc");
    for i in timed {
        let ev = EventRef::new(sightline::app::state::events::Table::Nvtx, i as u32);
        let bars: Vec<_> = doc
            .timeline
            .overlays_of(OVERLAY_SOURCE)
            .filter(|m| m.anchor == Anchor::Under(ev))
            .collect();
        assert_eq!(bars.len(), 1, "one bar under range {i}");
        assert!(
            bars[0].start >= spans.start[i] && bars[0].end <= spans.end(i),
            "inside range {i}"
        );
    }
}

/// A copy of sync_timing where the last warm-up kernel of `sync-after-only`
/// runs into its first timed sync (as tests/findings.rs builds it): the
/// sync's wait for that earlier work is hatched on the thread, linked to the
/// kernel it waited for.
#[test]
fn a_wait_on_earlier_work_is_hatched_and_linked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("waits.sqlite");
    std::fs::copy(fixture("sync_timing.sqlite"), &path).expect("copy");
    let original = load(&path);
    let (api, kernels, nvtx) = (&original.cuda_api, &original.kernels, &original.nvtx.spans);
    let named = |name: &str| {
        (0..nvtx.len())
            .filter(|&i| original.name(nvtx.name[i]) == name)
            .collect::<Vec<_>>()
    };
    let parent = named("sync-after-only")[0];
    let inside = |i: usize| nvtx.start[i] >= nvtx.start[parent] && nvtx.end(i) <= nvtx.end(parent);
    let warmup = named("warmup")
        .into_iter()
        .find(|&i| inside(i))
        .expect("warm-up");
    let first = named("timed-iteration")
        .into_iter()
        .find(|&i| inside(i))
        .expect("timed");
    let sync = (0..api.spans.len())
        .filter(|&i| api.spans.start[i] > nvtx.start[first] && api.spans.start[i] < nvtx.end(first))
        .find(|&i| {
            original
                .name(api.spans.name[i])
                .starts_with("cudaDeviceSynchronize")
        })
        .expect("the timed sync");
    let last_warmup = (0..api.spans.len())
        .filter(|&a| {
            api.spans.start[a] >= nvtx.start[warmup] && api.spans.start[a] < nvtx.end(warmup)
        })
        .flat_map(|a| {
            (0..kernels.spans.len()).filter(move |&k| kernels.correlation[k] == api.correlation[a])
        })
        .max_by_key(|&k| kernels.spans.end(k))
        .expect("a warm-up kernel");
    Connection::open(&path)
        .expect("open copy")
        .execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = ?1 WHERE correlationId = ?2",
            (api.spans.end(sync) - 500, kernels.correlation[last_warmup]),
        )
        .expect("edit");
    let trace = load(&path);
    let waits: Vec<Finding> = findings(&trace)
        .into_iter()
        .filter(|f| f.kind == FindingKind::RangeWaitsOnEarlierWork)
        .collect();
    assert_eq!(waits.len(), 1);
    let mut h = harness(trace);
    // Zoom to the finding, so the hatch is on screen.
    let n = h.state().doc().expect("doc").findings.entries.len();
    open_panel(&mut h, n);
    h.get_by_label(&format!(
        "Finding range-waits-on-earlier-work: {}",
        waits[0].message
    ))
    .click();
    h.run_steps(3);
    let doc = h.state().doc().expect("doc");
    let sync_ev = EventRef::new(sightline::app::state::events::Table::Api, sync as u32);
    let kernel_ev = EventRef::new(
        sightline::app::state::events::Table::Kernel,
        last_warmup as u32,
    );
    let hatch = doc
        .timeline
        .overlays_of(OVERLAY_SOURCE)
        .find(|m| {
            m.anchor
                == Anchor::Hatch {
                    on: sync_ev,
                    link: Some(kernel_ev),
                }
        })
        .expect("a hatched wait on the sync, linked to the warm-up kernel");
    assert_eq!(hatch.start, doc.trace.cuda_api.spans.start[sync]);
    assert_eq!(hatch.end, doc.trace.kernels.spans.end(last_warmup));
    assert!(doc.timeline.overlays_painted > 0);
}

/// Zoomed out until many ranges' GPU-work bars fall in the same pixel
/// columns, one rect is drawn per column and lane level, not one per bar:
/// on a report of 17,000 ranges they were 17,000 rects a frame.
#[test]
fn bars_narrower_than_a_pixel_share_it() {
    let trace = load(&fixture("sync_timing.sqlite"));
    let mut h = harness(trace);
    let doc = h.state_mut().doc_mut().expect("doc");
    doc.timeline.fit_all();
    let under = doc
        .timeline
        .overlays_of(OVERLAY_SOURCE)
        .filter(|m| matches!(m.anchor, Anchor::Under(_)))
        .count();
    let other = doc.timeline.overlays().count() - under;
    assert!(under > 20, "{under} bars under ranges");
    h.run_steps(2);
    let painted = h.state().doc().expect("doc").timeline.overlays_painted;
    assert!(
        painted < other + under / 2,
        "{painted} marks painted for {under} bars under ranges and {other} other marks"
    );
}

/// The events of each finding, as keys (kind, times, name) in `trace`.
fn finding_keys(
    trace: &Trace,
    findings: &[Finding],
) -> Vec<(String, Vec<Option<sightline::annotations::EventKey>>)> {
    findings
        .iter()
        .map(|f| {
            let keys = f
                .events
                .iter()
                .map(|&ev| sightline::annotations::key_of(trace, ev))
                .collect();
            (f.message.clone(), keys)
        })
        .collect()
}

/// Each of the findings' marks: its times and the key of each event it hangs
/// on (none for a mark on the ruler).
fn mark_keys(
    trace: &Trace,
    timeline: &sightline::app::timeline::Timeline,
) -> Vec<(i64, i64, Vec<Option<sightline::annotations::EventKey>>)> {
    let key = |ev: EventRef| sightline::annotations::key_of(trace, ev.into());
    timeline
        .overlays_of(OVERLAY_SOURCE)
        .map(|mark| {
            let events = match mark.anchor {
                Anchor::Under(ev) | Anchor::Outline(ev) => vec![key(ev)],
                Anchor::Hatch { on, link } => {
                    std::iter::once(key(on)).chain(link.map(key)).collect()
                }
                Anchor::Ruler | Anchor::Flag => Vec::new(),
            };
            (mark.start, mark.end, events)
        })
        .collect()
}

/// Each finding's events, as the trace shown numbers them.
fn event_ids(findings: &[Finding]) -> Vec<Vec<sightline::model::EventId>> {
    findings.iter().map(|f| f.events.clone()).collect()
}

/// Whether `among` holds `f` (same kind, span and range), with its events.
fn same_finding(f: &Finding, among: &[Finding]) -> bool {
    !f.events.is_empty()
        && among
            .iter()
            .any(|w| (w.kind, w.start, w.end, &w.range) == (f.kind, f.start, f.end, &f.range))
}

/// The report `name` loaded whole, and the traces a replay of it shows from
/// the first snapshot with one of the whole report's findings on: every
/// snapshot, then the final one. The replay's states without its clock
/// (`replay_in_steps`): the same snapshots on any machine, however busy (a
/// timed replay on a loaded one took in too few to show anything).
fn replay_with_findings(name: &str) -> (Trace, Vec<std::sync::Arc<Trace>>) {
    replay_with_findings_from(&fixture(name))
}

/// [`replay_with_findings`] of the report at `path`.
fn replay_with_findings_from(path: &Path) -> (Trace, Vec<std::sync::Arc<Trace>>) {
    let full = load(path);
    let mut snapshots = Vec::new();
    sightline::capture::replay::replay_in_steps(path, 120, |t| {
        snapshots.push(std::sync::Arc::new(t))
    })
    .expect("the replay ran");
    // A snapshot's findings may still change as more comes (a range whose
    // GPU work is not all in yet): start where one is as the whole report's.
    let whole = findings(&full);
    let first = snapshots
        .iter()
        .position(|t| findings(t).iter().any(|f| same_finding(f, &whole)))
        .expect("a snapshot with a finding the whole report has");
    snapshots.drain(..first);
    (full, snapshots)
}

/// A capture's findings stay on screen through its snapshots: each
/// snapshot's trace shows the findings of the one before (until the engine's
/// of the new trace are in), naming the same events (by kind, times and
/// name) although NVTX ranges and the small tables are numbered anew each
/// snapshot. Before, each snapshot emptied the panel and the marks.
///
/// A replay writes ranges by start, so one thread's ranges keep their
/// places: marks on another thread, the first before any range (a track that
/// comes first), one just before each range (growing at every snapshot),
/// move them on.
#[test]
fn findings_stay_through_a_captures_snapshots_and_name_the_same_events() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("timing_cases_ticks.sqlite");
    std::fs::copy(fixture("timing_cases.sqlite"), &path).expect("copy");
    Connection::open(&path)
        .and_then(|c| {
            c.execute_batch(
                "INSERT INTO NVTX_EVENTS (start, eventType, globalTid, text)
                 SELECT start - 1, 34, globalTid + 1, 'tick' FROM NVTX_EVENTS
                 WHERE eventType = 59
                 UNION ALL SELECT min(start), 34,
                   (SELECT globalTid + 1 FROM NVTX_EVENTS WHERE eventType = 59), 'first tick'
                 FROM CUPTI_ACTIVITY_KIND_RUNTIME;",
            )
        })
        .expect("ticks");
    let (full, snapshots) = replay_with_findings_from(&path);
    let mut app = SightlineApp::with_shared_trace(snapshots[0].clone());
    app.doc_mut().expect("doc").wait_for_findings();
    // The user clicks a finding the whole report has too: it stays clicked.
    let whole = findings(&full);
    let doc = app.doc_mut().expect("doc");
    let clicked = (doc.findings.findings.iter())
        .position(|f| same_finding(f, &whole))
        .expect("a finding the whole report has");
    let clicked_finding = doc.findings.findings[clicked].clone();
    doc.show_finding(clicked);
    let (mut carried, mut renumbered, mut unmoved) = (0, 0, 0);
    for next in &snapshots[1..] {
        let doc = app.doc_mut().expect("doc");
        let nothing_moves = sightline::annotations::Carrier::new(&doc.trace, next)
            .moving()
            .is_empty();
        unmoved += usize::from(nothing_moves);
        let before = finding_keys(&doc.trace, &doc.findings.findings);
        let indexes = event_ids(&doc.findings.findings);
        let marks = mark_keys(&doc.trace, &doc.timeline);
        doc.grow(next.clone(), false);
        let after = finding_keys(&doc.trace, &doc.findings.findings);
        assert_eq!(after, before, "the findings shown, in the newer trace");
        assert_eq!(
            mark_keys(&doc.trace, &doc.timeline),
            marks,
            "their marks, on the same events"
        );
        carried += after.len();
        renumbered += (event_ids(&doc.findings.findings) != indexes) as usize;
        doc.wait_for_findings();
        let active = doc.findings.active.map(|i| &doc.findings.findings[i]);
        assert!(
            active.is_some_and(|f| same_finding(f, std::slice::from_ref(&clicked_finding))),
            "the clicked finding stays clicked"
        );
    }
    assert!(carried > 0, "findings were carried over");
    // Both ways: snapshots where no kind of event moved (the marks are left
    // as they are, unlooked at) and snapshots that renumbered (below).
    assert!(unmoved > 0, "no snapshot kept every index");
    let doc = app.doc().expect("doc");
    assert_eq!(
        finding_keys(&doc.trace, &doc.findings.findings),
        finding_keys(&full, &findings(&full)),
        "the last findings are the whole report's"
    );
    // Which snapshots renumber NVTX ranges holding findings depends on how
    // the replay's rows fell into snapshots (on a loaded machine, few and
    // big): the first snapshot's findings are also carried straight to the
    // last state, across every range that came meanwhile.
    let (first, last) = (&snapshots[0], snapshots.last().expect("a last state"));
    let mut jump = SightlineApp::with_shared_trace(first.clone());
    let doc = jump.doc_mut().expect("doc");
    doc.wait_for_findings();
    let before = finding_keys(&doc.trace, &doc.findings.findings);
    let indexes = event_ids(&doc.findings.findings);
    doc.grow(last.clone(), false);
    assert_eq!(
        finding_keys(&doc.trace, &doc.findings.findings),
        before,
        "the first snapshot's findings, in the last state"
    );
    renumbered += (event_ids(&doc.findings.findings) != indexes) as usize;
    assert!(
        renumbered > 0,
        "no snapshot renumbered a finding's events: the test shows nothing"
    );
}

/// While a growing report's findings are brought up to date (a capture runs
/// the engine after every snapshot: nearly all the time), the badge counts
/// the findings shown and opens the panel. It showed only "finding
/// mistakes…" then, so the panel could not be opened while a capture ran.
#[test]
fn the_badge_counts_and_opens_while_a_growing_reports_findings_are_redone() {
    let (_, snapshots) = replay_with_findings("timing_cases.sqlite");
    assert!(snapshots.len() >= 5, "four snapshots after the first");
    let app = SightlineApp::with_shared_trace(snapshots[0].clone());
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 2400.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(2);
    h.state_mut().doc_mut().expect("doc").wait_for_findings();
    h.run_steps(2);
    assert!(!h.state().doc().expect("doc").findings.entries.is_empty());
    // Two snapshots in a row: the second waits for the engine's run on the
    // first, so a run is under way through the next frame whatever the
    // first one's speed.
    let grow_twice = |h: &mut Harness<'_, SightlineApp>, k: usize| {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.grow(snapshots[k].clone(), false);
        doc.grow(snapshots[k + 1].clone(), false);
        h.run_steps(1);
        let doc = h.state().doc().expect("doc");
        assert!(doc.findings.is_pending(), "the engine runs again");
        doc.findings.entries.len()
    };
    let n = grow_twice(&mut h, 1);
    h.get_by_label(&badge_text(n)).click();
    h.run_steps(1);
    assert!(
        h.state().doc().is_some_and(|d| d.findings.open),
        "the badge opens the panel"
    );
    // The open panel lists them while the next run is under way.
    grow_twice(&mut h, 3);
    assert!(
        h.query_by_label_contains("Click one to zoom to it")
            .is_some(),
        "the panel lists the findings"
    );
}

/// A capture's findings engine extends the idle attribution of the last
/// run rather than making it again, and its findings are still those of a
/// run from nothing on each snapshot: the same findings, with the same
/// events, at every step.
#[test]
fn a_growing_reports_findings_extend_the_last_runs_idle_attribution() {
    let (_, snapshots) = replay_with_findings("timing_cases.sqlite");
    assert!(snapshots.len() > 3, "snapshots: {}", snapshots.len());
    let mut app = SightlineApp::with_shared_trace(snapshots[0].clone());
    app.doc_mut().expect("doc").wait_for_findings();
    let mut extended = 0;
    for next in &snapshots[1..] {
        let doc = app.doc_mut().expect("doc");
        doc.grow(next.clone(), false);
        doc.wait_for_findings();
        let whole = whole_attribution(next);
        let merged = doc
            .findings
            .idle_merged()
            .expect("kept for a growing report");
        extended += usize::from(merged < whole.merged());
        assert_eq!(
            event_ids(&doc.findings.findings),
            event_ids(&findings(next)),
            "the findings of a run from nothing, with the same events"
        );
        assert_eq!(
            finding_keys(&doc.trace, &doc.findings.findings),
            finding_keys(next, &findings(next))
        );
    }
    assert!(
        extended * 2 >= snapshots.len() - 1,
        "extended in {extended} of {} runs",
        snapshots.len() - 1
    );
    // The capture's last snapshot comes while the run for the one before
    // is still going (`Document` says so as the capture ends): the last
    // state's run still extends, then nothing is kept.
    // (Three states before the replay's last one, which brings calls that
    // started long before: its extension merges everything again.)
    let n = snapshots.len();
    let mut app = SightlineApp::with_shared_trace(snapshots[n - 4].clone());
    let doc = app.doc_mut().expect("doc");
    doc.wait_for_findings();
    let last = &snapshots[n - 2];
    doc.grow(snapshots[n - 3].clone(), false);
    doc.grow(last.clone(), false);
    doc.findings.stopped_growing();
    doc.wait_for_findings();
    let whole = whole_attribution(last);
    let merged = doc.findings.idle_merged().expect("a growing report's run");
    assert!(merged < whole.merged(), "{merged} of {}", whole.merged());
    assert!(!doc.findings.carries());
    // A report loaded whole keeps none.
    let mut whole =
        SightlineApp::with_shared_trace(std::sync::Arc::new(load(&fixture("timing_cases.sqlite"))));
    let doc = whole.doc_mut().expect("doc");
    doc.wait_for_findings();
    assert_eq!(doc.findings.idle_merged(), None);
}

/// The timeline's "GPU idle — why" row keeps its gaps on screen through a
/// capture's snapshots and extends them on a worker to each new state (the
/// same gaps as an attribution made whole). Each snapshot emptied the row
/// and started the attribution over: on a big capture, whose attribution
/// takes longer than the time between snapshots, the row stayed empty. A
/// selected range's idle time is summed again once the new state is in.
#[test]
fn the_idle_row_keeps_its_gaps_through_snapshots_and_extends_them() {
    let (_, snapshots) = replay_with_findings("timing_cases.sqlite");
    let mut app = SightlineApp::with_shared_trace(snapshots[0].clone());
    let doc = app.doc_mut().expect("doc");
    doc.timeline.idle_rows.wait(&snapshots[0]);
    let mut extended = 0;
    for next in &snapshots[1..] {
        doc.grow(next.clone(), false);
        assert!(
            doc.timeline.idle_rows.attribution.is_some(),
            "the row's gaps stay while their extension runs"
        );
        // A range selected meanwhile is summed from the state shown.
        let range = next.info.time_range;
        let rows = &mut doc.timeline.idle_rows;
        if rows.range_summary(range, None).is_none() {
            rows.wait_range();
        }
        doc.timeline.idle_rows.wait(next);
        let whole = whole_attribution(next);
        let shown = doc.timeline.idle_rows.attribution.as_ref().expect("in");
        assert!(**shown == whole, "the gaps of the new state");
        extended += usize::from(shown.merged() < whole.merged());
        // Then summed again, from the new state.
        let rows = &mut doc.timeline.idle_rows;
        let summed = loop {
            if let Some(s) = rows.range_summary(range, None) {
                break s.to_vec();
            }
            rows.wait_range();
        };
        let classifier = sightline::analysis::idle::Classifier::new(next);
        let expected =
            sightline::analysis::idle::summarize(&classifier, &whole, Some(&[range][..]));
        assert_eq!(summed, expected, "the range's idle time, of the new state");
    }
    // A state that does not hold the shown one's events at their indexes
    // (here the report loaded whole, numbered apart): the row starts over,
    // as its gaps would name other threads and operations.
    let apart = load(&fixture("timing_cases.sqlite"));
    let doc = app.doc_mut().expect("doc");
    doc.timeline.idle_rows.grown(&apart);
    assert!(doc.timeline.idle_rows.attribution.is_none());
    assert!(
        extended * 2 >= snapshots.len() - 1,
        "extended in {extended} of {} snapshots",
        snapshots.len() - 1
    );
}

/// The idle attribution of `trace` made whole.
fn whole_attribution(trace: &Trace) -> sightline::analysis::idle::Attribution {
    let lanes = sightline::analysis::idle::Lanes::Device;
    sightline::analysis::idle::attribute(trace, lanes, &AtomicBool::new(false)).expect("runs")
}

/// The "GPU idle — why" row shows the findings engine's attribution: made
/// once, the same gaps as the findings'. Shown before the engine's run is in,
/// the row made its own on a worker all the same (the engine's longest pass,
/// twice, and twice the gaps in memory); it now waits for the engine's.
/// Through a capture's snapshots it shows each run's attribution itself,
/// shared with what the engine carries to its next run, not a copy.
#[test]
fn the_idle_row_shows_the_findings_engines_attribution_not_one_of_its_own() {
    let frames_until = |h: &mut Harness<'_, SightlineApp>, done: &dyn Fn(&SightlineApp) -> bool| {
        for _ in 0..2_000 {
            if done(h.state()) {
                return;
            }
            h.run_steps(1);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        panic!("not done after 2,000 frames");
    };
    let with_row_shown = |trace: std::sync::Arc<Trace>| {
        let mut app = SightlineApp::with_shared_trace(trace);
        app.doc_mut().expect("doc").timeline.view.show_idle_why = true;
        Harness::builder()
            .with_size(vec2(1400.0, 1000.0))
            .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app)
    };
    // A report opened whole, the row shown from the first frame.
    let trace = std::sync::Arc::new(load(&fixture("timing_cases.sqlite")));
    let mut h = with_row_shown(trace.clone());
    frames_until(&mut h, &|app| {
        let doc = app.doc().expect("doc");
        !doc.findings.is_pending() && doc.timeline.idle_rows.attribution.is_some()
    });
    let rows = &h.state().doc().expect("doc").timeline.idle_rows;
    assert_eq!(rows.own_runs, 0, "the row made an attribution of its own");
    let shown = rows.attribution.as_ref().expect("in");
    assert!(**shown == whole_attribution(&trace), "the report's gaps");

    // A growing report: each run's attribution is the row's.
    let (_, snapshots) = replay_with_findings("timing_cases.sqlite");
    let mut h = with_row_shown(snapshots[0].clone());
    for next in &snapshots[1..] {
        h.state_mut()
            .doc_mut()
            .expect("doc")
            .grow(next.clone(), false);
        frames_until(&mut h, &|app| {
            let doc = app.doc().expect("doc");
            !doc.findings.is_pending() && doc.timeline.idle_rows.attribution.is_some()
        });
        let doc = h.state().doc().expect("doc");
        let shown = doc.timeline.idle_rows.attribution.as_ref().expect("in");
        let carried = doc.findings.carried_idle().expect("kept while it grows");
        assert!(
            std::sync::Arc::ptr_eq(shown, carried),
            "the row shows the engine's attribution, not a copy"
        );
        assert!(
            **shown == whole_attribution(next),
            "the gaps of the new state"
        );
    }
    let rows = &h.state().doc().expect("doc").timeline.idle_rows;
    assert_eq!(rows.own_runs, 0, "the row made an attribution of its own");
}

/// Iterations numbered as a training loop numbers its steps (`timed-iteration
/// 1`, `2`, ...) are one loop: the panel lists one entry for the ten no-sync
/// warnings, in how many of the loop's iterations; a click shows its worst.
#[test]
fn numbered_iterations_are_one_entry_in_the_panel() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("numbered.sqlite");
    std::fs::copy(fixture("sync_timing.sqlite"), &path).expect("copy");
    Connection::open(&path)
        .expect("open copy")
        .execute_batch(
            "UPDATE NVTX_EVENTS SET text = 'timed-iteration ' || rowid WHERE text = 'timed-iteration'",
        )
        .expect("number the iterations");
    let trace = load(&path);
    let expected = findings(&trace);
    let mut h = harness(trace);
    h.get_by_label(&badge_text(entries(&expected).len()))
        .click();
    h.run_steps(3);
    let label = "Entry range-ends-before-gpu-work: 10 instances in \
                 no-sync/timed-iteration # (10 of 10 iterations)";
    h.get_by_label(label).click();
    h.run_steps(3);
    let active = h.state().doc().and_then(|d| d.findings.active);
    let worst = active.and_then(|i| expected[i].range.clone());
    assert!(
        worst
            .as_deref()
            .is_some_and(|r| r.starts_with("no-sync/timed-iteration ")),
        "{worst:?}"
    );
}
