//! The kernel panel and the NVTX → GPU projection rows, driven headlessly
//! through the real window UI (egui_kittest + AccessKit), as `gui.rs` does.

mod common;
use common::load;

use eframe::egui::{self, Event, Modifiers, PointerButton, Pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::kernels::kernel_stats;
use sightline::analysis::projection::project_nvtx;
use sightline::app::SightlineApp;
use sightline::app::events::{EventRef, Table};
use sightline::app::format::grouped;
use sightline::model::Trace;

/// A tall window, so the kernel panel's charts are on screen.
fn harness(trace: Trace) -> Harness<'static, SightlineApp> {
    sized_harness(trace, 1500.0)
}

fn sized_harness(trace: Trace, width: f32) -> Harness<'static, SightlineApp> {
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(width, 1300.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

fn click(h: &mut Harness<'_, SightlineApp>, pos: Pos2) {
    h.event(Event::PointerMoved(pos));
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    h.run_steps(3);
}

/// Brings `ev` into view without selecting it, then clicks it on the timeline.
fn click_event(h: &mut Harness<'_, SightlineApp>, ev: EventRef) {
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.show_event(ev);
        doc.timeline.select(&doc.trace, None);
    }
    h.run_steps(3);
    let pos = {
        let doc = h.state().doc().expect("doc");
        doc.timeline
            .event_pos(&doc.trace, ev)
            .expect("event is drawn")
    };
    click(h, pos);
}

/// The kernel with the most instances in `trace`: row of its first instance.
fn busiest_kernel(trace: &Trace) -> (u32, String, u64) {
    let all = kernel_stats(trace, None);
    let k = all
        .iter()
        .max_by_key(|k| k.durations.instances)
        .expect("kernels");
    let first = *k.instances.first().expect("an instance");
    (first, trace.name(k.name).to_string(), k.durations.instances)
}

#[test]
fn clicking_a_kernel_opens_its_panel_with_kernel_stats_numbers() {
    let trace = load("sync_timing.sqlite");
    let (row, name, instances) = busiest_kernel(&trace);
    assert!(instances > 1, "a kernel with several instances");
    let mut h = harness(trace);
    assert!(!h.state().doc().expect("doc").kernel.is_open());
    click_event(&mut h, EventRef::new(Table::Kernel, row));
    let doc = h.state().doc().expect("doc");
    assert_eq!(
        doc.timeline.selected,
        Some(EventRef::new(Table::Kernel, row))
    );
    assert!(doc.kernel.is_open(), "the click opened the kernel panel");
    let view = doc.kernel.view.clone().expect("computed");
    assert_eq!(doc.trace.name(view.stats.name), name);
    assert_eq!(view.stats.durations.instances, instances);
    assert_eq!(view.points.len() as u64, instances);
    // Each launch is attributed to one innermost NVTX range (or none).
    assert_eq!(view.nvtx.iter().map(|n| n.1).sum::<u64>(), instances);
    assert!(
        view.nvtx.iter().any(|n| n.0 == "timed-iteration"),
        "sync_timing launches its kernels inside timed-iteration ranges"
    );
    // What the window shows, read through AccessKit.
    assert!(
        h.query_by_label(&format!("Kernel: {name}")).is_some(),
        "the panel is titled with the kernel's name"
    );
    assert!(h.query_by_label("Instances").is_some());
    assert!(
        h.query_all_by_label(&grouped(instances as i64))
            .next()
            .is_some(),
        "the panel shows {instances} instances"
    );
    assert!(h.query_by_label("P99").is_some());
    assert!(h.query_by_label("NVTX ranges").is_some());
    // The "what if" curve passes through the launched configuration's occupancy.
    let config = view.configs.first().expect("a launch configuration");
    let limits = config.limits.expect("the report's GPU is known");
    let launched = config.occupancy.as_ref().expect("occupancy");
    let block: u32 = config.config.block.iter().product();
    let curve = sightline::app::kernel_panel::occupancy_curve(&limits, &config.config);
    let at = curve
        .iter()
        .find(|p| p[0] == block as f64)
        .expect("the curve covers the launched block size");
    assert_eq!(at[1], launched.theoretical_percent);
    assert!(h.query_by_label("What if the block had").is_some());
    assert!(
        h.query_all_by_label_contains("Launch configurations (")
            .next()
            .is_some()
    );
}

#[test]
fn clicking_a_scatter_point_selects_that_instance_on_the_timeline() {
    let trace = load("sync_timing.sqlite");
    let (row, _, _) = busiest_kernel(&trace);
    let mut h = harness(trace);
    click_event(&mut h, EventRef::new(Table::Kernel, row));
    h.run_steps(3);
    // A marker alone on screen (nothing else within 9 px), not the instance
    // already selected, the last one in time if possible.
    let (pos, target) = {
        let doc = h.state().doc().expect("doc");
        let panel = &doc.kernel;
        let pts = &panel.scatter_points;
        assert!(!pts.is_empty(), "the scatter drew its points");
        pts.iter()
            .rev()
            .filter(|(p, r)| {
                *r != row
                    && panel
                        .scatter_rect
                        .is_some_and(|r| r.shrink(4.0).contains(*p))
            })
            .find(|(p, r)| pts.iter().all(|(q, s)| s == r || q.distance(*p) > 9.0))
            .copied()
            .expect("a lone marker on screen")
    };
    click(&mut h, pos);
    let doc = h.state().doc().expect("doc");
    let ev = EventRef::new(Table::Kernel, target);
    assert_eq!(doc.timeline.selected, Some(ev), "the instance is selected");
    // ... and the timeline zoomed to it.
    let (s, e) = (ev.start(&doc.trace) as f64, ev.end(&doc.trace) as f64);
    let v = &doc.timeline.view;
    assert!(v.start <= s && e <= v.end, "the instance is in view");
    assert!(v.span() < (e - s) * 10.0, "and zoomed to");
}

#[test]
fn clicking_a_histogram_bar_steps_through_its_instances() {
    let trace = load("sync_timing.sqlite");
    let (row, _, _) = busiest_kernel(&trace);
    let mut h = harness(trace);
    click_event(&mut h, EventRef::new(Table::Kernel, row));
    h.run_steps(3);
    // The bar with the most instances, so the second click steps on.
    let (pos, bin, rows) = {
        let doc = h.state().doc().expect("doc");
        let view = doc.kernel.view.clone().expect("computed");
        let (pos, bin) = doc
            .kernel
            .histogram_bars
            .iter()
            .copied()
            .max_by_key(|(_, b)| view.histogram.counts[*b])
            .expect("bars drawn");
        let rows = sightline::app::kernel_panel::KernelPanel::bin_instances(&view, bin);
        assert_eq!(rows.len() as u64, view.histogram.counts[bin]);
        (pos, bin, rows)
    };
    assert!(rows.len() > 1, "bin {bin} holds several instances");
    click(&mut h, pos);
    let first = h.state().doc().and_then(|d| d.timeline.selected);
    assert_eq!(first, Some(EventRef::new(Table::Kernel, rows[0])));
    click(&mut h, pos);
    let second = h.state().doc().and_then(|d| d.timeline.selected);
    assert_eq!(second, Some(EventRef::new(Table::Kernel, rows[1])));
}

#[test]
fn the_panel_command_path_selects_an_instance() {
    let trace = load("sync_timing.sqlite");
    let (row, _, _) = busiest_kernel(&trace);
    let mut h = harness(trace);
    let last = {
        let doc = h.state_mut().doc_mut().expect("doc");
        let name = doc.trace.kernels.spans.name[row as usize];
        doc.open_kernel(name);
        let view = doc.kernel.view.clone().expect("computed");
        view.points.last().expect("points").2
    };
    let command = sightline::app::kernel_panel::KernelPanel::show_instance(last);
    h.state_mut().doc_mut().expect("doc").apply(command);
    h.run_steps(2);
    let doc = h.state().doc().expect("doc");
    assert_eq!(
        doc.timeline.selected,
        Some(EventRef::new(Table::Kernel, last))
    );
}

#[test]
fn kernel_names_in_the_exec_summary_open_the_panel() {
    let trace = load("sync_timing.sqlite");
    let (_, name, _) = busiest_kernel(&trace);
    let (lo, hi) = trace.info.time_range;
    // Wide enough that the table's last column, the kernel name, is on screen.
    let mut h = sized_harness(trace, 4200.0);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.select_range(lo, hi + 1);
        doc.stats.wait();
        // The cuda_kern_exec_sum tab: its kernel column is "Kernel Name".
        doc.stats.tab = sightline::app::range_stats::REPORTS
            .iter()
            .position(|r| *r == sightline::analysis::stats::Report::CudaKernExecSum)
            .expect("tab");
    }
    h.run_steps(3);
    let link = name.clone();
    h.query_all_by(move |n| {
        n.role() == egui::accesskit::Role::Link && n.label().as_deref() == Some(&link)
    })
    .next()
    .expect("the kernel name is a link")
    .click();
    h.run_steps(3);
    let doc = h.state().doc().expect("doc");
    assert!(doc.kernel.is_open(), "clicked row: {:?}", doc.stats.active);
    let shown = doc.kernel.name.map(|n| doc.trace.name(n).to_string());
    assert_eq!(shown.as_deref(), Some(name.as_str()));
}

#[test]
fn projection_rows_mark_the_no_sync_ranges_as_overhanging() {
    let trace = load("sync_timing.sqlite");
    // What the analysis says, range by range: GPU work past the range's end.
    let expected: Vec<(u32, bool)> = project_nvtx(&trace, None)
        .iter()
        .map(|p| (p.nvtx, p.gpu_end > trace.nvtx.spans.end[p.nvtx as usize]))
        .collect();
    let no_sync = trace
        .nvtx
        .spans
        .name
        .iter()
        .position(|&n| trace.name(n) == "no-sync")
        .expect("a no-sync range") as u32;
    let mut h = harness(trace);
    assert!(h.query_all_by_label_contains(" on GPU").next().is_none());
    assert!(
        h.state()
            .doc()
            .expect("doc")
            .timeline
            .projected_drawn
            .is_empty()
    );
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("NVTX ranges on GPU (projection rows)")
        .click();
    h.run_steps(3);
    assert!(
        h.query_all_by_label_contains(" on GPU").next().is_some(),
        "projection rows are shown"
    );
    let doc = h.state().doc().expect("doc");
    let mut drawn = doc.timeline.projected_drawn.clone();
    drawn.sort_unstable();
    let mut expected = expected;
    expected.sort_unstable();
    assert_eq!(
        drawn, expected,
        "every projected range drawn, overhang as analysed"
    );
    assert!(
        drawn.contains(&(no_sync, true)),
        "the no-sync range is drawn overhanging"
    );
    assert!(drawn.iter().any(|d| !d.1), "synchronised ranges are not");

    // The details of the no-sync range say by how much.
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .show_event(EventRef::new(Table::Nvtx, no_sync));
    h.run_steps(3);
    // Labels carry their text as the AccessKit value, which `_label_contains` reads.
    assert!(
        h.query_all_by_label_contains("GPU work of this range ends")
            .next()
            .is_some()
            && h.query_all_by_label_contains("µs after it")
                .next()
                .is_some(),
        "the details say the GPU work ends after the range"
    );
    assert!(h.query_by_label("GPU work of this range").is_some());
}
