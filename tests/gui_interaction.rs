//! Interaction defects a new user met in the first minutes (issue 11), each
//! driven through the real UI (egui_kittest).

mod common;
use common::load;

use eframe::egui::{self, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::app::SightlineApp;
use sightline::app::state::events::{EventRef, Table};
use sightline::app::timeline::paint::event_color;
use sightline::model::Trace;

fn harness(trace: Trace) -> Harness<'static, SightlineApp> {
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

fn view(h: &Harness<'_, SightlineApp>) -> (f64, f64) {
    let d = h.state().doc().expect("a report");
    (d.timeline.view.start, d.timeline.view.end)
}

/// Searches for `query` by typing it and pressing Enter.
fn search(h: &mut Harness<'_, SightlineApp>, query: &str) {
    h.get_by_label("Search").click();
    h.run_steps(2);
    h.get_by_label("Search").type_text(query);
    h.run_steps(1);
    h.key_press(egui::Key::Enter);
    h.run_steps(1);
    h.state_mut().wait_for_search();
    h.run_steps(2);
}

#[test]
fn after_enter_in_search_the_keys_move_the_timeline() {
    let mut h = harness(load("sync_timing.sqlite"));
    search(&mut h, "no-sync");
    let query = h.state().doc().map(|d| d.search.query.clone());
    assert_eq!(query.as_deref(), Some("no-sync"));
    let (s0, e0) = view(&h);
    h.key_press(egui::Key::W);
    h.run_steps(2);
    let (s1, e1) = view(&h);
    assert!(e1 - s1 < (e0 - s0) * 0.95, "W zoomed in after the search");
    let query = h.state().doc().map(|d| d.search.query.clone());
    assert_eq!(
        query.as_deref(),
        Some("no-sync"),
        "no letters typed into the box"
    );
}

#[test]
fn ctrl_f_and_slash_go_back_to_the_search_box() {
    let mut h = harness(load("sync_timing.sqlite"));
    search(&mut h, "add2");
    // The keyboard goes elsewhere (a click on the timeline) …
    let canvas = h.get_by_label_contains("Timeline,").rect();
    h.event(egui::Event::PointerMoved(canvas.center()));
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: canvas.center(),
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
    h.run_steps(2);
    h.key_press(egui::Key::W);
    h.run_steps(1);
    // … and Ctrl+F brings it back to the box.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    h.run_steps(2);
    h.event(egui::Event::Text("x".into()));
    h.run_steps(1);
    let query = h.state().doc().map(|d| d.search.query.clone());
    assert_eq!(query.as_deref(), Some("add2x"));
}

#[test]
fn a_search_match_is_shown_with_context_around_it() {
    let mut h = harness(load("sync_timing.sqlite"));
    search(&mut h, "cudaLaunchKernel");
    let doc = h.state().doc().expect("doc");
    let ev = doc.selection().event.expect("the match is selected");
    let (s, e) = (ev.start(&doc.trace) as f64, ev.end(&doc.trace) as f64);
    let (vs, ve) = view(&h);
    assert!(vs <= s && e <= ve, "the match is in view");
    assert!(
        e - s <= (ve - vs) / 3.0 + 1.0,
        "it fills at most a third of the width"
    );
    assert!(s - vs >= (ve - vs) * 0.2, "with context before it");
}

#[test]
fn nested_nvtx_ranges_never_share_their_parents_colour() {
    let trace = load("sync_timing.sqlite");
    let n = &trace.nvtx;
    let mut checked = 0;
    for thread in &trace.threads {
        for track in &thread.nvtx {
            let events: Vec<usize> = (track.track.rows()).map(|i| i as usize).collect();
            for &child in &events {
                let d = n.depth[child];
                if d == 0 {
                    continue;
                }
                let Some(&parent) = events.iter().rev().find(|&&p| {
                    n.depth[p] + 1 == d
                        && n.spans.start[p] <= n.spans.start[child]
                        && n.spans.end(child) <= n.spans.end(p)
                }) else {
                    continue;
                };
                let color = |i: usize| {
                    event_color(
                        &trace,
                        EventRef {
                            table: Table::Nvtx,
                            index: i as u32,
                        },
                        &[],
                    )
                };
                let (a, b) = (color(parent), color(child));
                let distance = (a.r() as i32 - b.r() as i32).abs()
                    + (a.g() as i32 - b.g() as i32).abs()
                    + (a.b() as i32 - b.b() as i32).abs();
                assert!(
                    distance >= 60,
                    "{} in {}: {a:?} vs {b:?}",
                    trace.name(n.spans.name[child]),
                    trace.name(n.spans.name[parent])
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "nested ranges checked: {checked}");
}

#[test]
fn hidden_rows_are_announced_and_can_be_shown() {
    let mut h = harness(load("sync_timing.sqlite"));
    let key = h.state().doc().expect("doc").timeline.rows[1].key.clone();
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .timeline
        .view
        .hidden
        .insert(key);
    h.run_steps(2);
    assert!(h.get_by_label("1 row hidden").rect().width() > 0.0);
    h.get_by_label("Show").click();
    h.run_steps(2);
    assert!(
        h.state()
            .doc()
            .expect("doc")
            .timeline
            .view
            .hidden
            .is_empty()
    );
    assert!(h.query_by_label("1 row hidden").is_none());
}

#[test]
fn a_collapsed_row_still_shows_where_its_events_are() {
    let mut h = harness(load("sync_timing.sqlite"));
    let tops: Vec<String> = h
        .state()
        .doc()
        .expect("doc")
        .timeline
        .rows
        .iter()
        .filter(|r| r.parent.is_none())
        .map(|r| r.key.clone())
        .collect();
    assert!(tops.len() >= 2, "a process and a GPU");
    let doc = h.state_mut().doc_mut().expect("doc");
    doc.timeline.view.collapsed.extend(tops);
    h.run_steps(2);
    let painted = h.state().doc().expect("doc").timeline.painted;
    assert!(painted > 0, "collapsed groups summarise their activity");
    // Nothing is painted where nothing happens: zoomed into a gap before the
    // first event, the summary is empty.
    let doc = h.state_mut().doc_mut().expect("doc");
    let (lo, _) = doc.timeline.limits();
    doc.timeline.view.set(lo - 2e6, lo - 1e6);
    h.run_steps(2);
    assert_eq!(h.state().doc().expect("doc").timeline.painted, 0);
}

#[test]
fn panels_opening_keep_the_selected_event_in_view() {
    let trace = load("sync_timing.sqlite");
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(1100.0, 470.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    // A kernel: the GPU rows are the lowest of the timeline.
    let ev = EventRef {
        table: Table::Kernel,
        index: 0,
    };
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.show_event(ev);
        let (lo, hi) = doc.timeline.limits();
        // The range statistics open below the timeline.
        doc.select_range(lo as i64, hi as i64);
    }
    h.run_steps(8);
    let doc = h.state().doc().expect("doc");
    let canvas = doc.timeline.canvas;
    let Some((_, lane)) = doc.timeline.lane_of(ev) else {
        panic!("the selected kernel's row is not drawn (canvas {canvas:?})");
    };
    assert!(
        lane.top() >= canvas.top() && lane.bottom() <= canvas.bottom(),
        "{lane:?} within {canvas:?}"
    );
}
