//! The kernel panel and the NVTX → GPU projection rows, driven headlessly
//! through the real window UI (egui_kittest + AccessKit), as `gui.rs` does.

mod common;
use common::load;

use eframe::egui::{self, Pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use sightline::analysis::kernels::kernel_stats;
use sightline::analysis::projection::project_nvtx;
use sightline::app::SightlineApp;
use sightline::app::state::events::{EventRef, Table};
use sightline::app::widgets::format::grouped;
use sightline::model::{TimeRange, Trace};

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
    common::click(h, pos, 3);
}

/// Brings `ev` into view without selecting it, then clicks it on the timeline.
fn click_event(h: &mut Harness<'_, SightlineApp>, ev: EventRef) {
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.show_event(ev);
        doc.select_event(None);
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

/// Closing the panel and clicking the kernel that is still selected opens
/// it again, as clicking another kernel does.
#[test]
fn clicking_the_still_selected_kernel_reopens_its_closed_panel() {
    let trace = load("sync_timing.sqlite");
    let (row, _, _) = busiest_kernel(&trace);
    let ev = EventRef::new(Table::Kernel, row);
    let mut h = harness(trace);
    click_event(&mut h, ev);
    h.run_steps(20);
    assert!(h.state().doc().expect("doc").kernel.is_open());
    h.state_mut().doc_mut().expect("doc").kernel.close();
    h.run_steps(20);
    let pos = {
        let doc = h.state().doc().expect("doc");
        assert_eq!(doc.selection().event, Some(ev), "still selected");
        doc.timeline.event_pos(&doc.trace, ev).expect("drawn")
    };
    click(&mut h, pos);
    h.run_steps(20);
    let doc = h.state().doc().expect("doc");
    assert_eq!(doc.selection().event, Some(ev));
    assert!(doc.kernel.is_open(), "the click reopened the kernel panel");
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
        doc.selection().event,
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
    let curve = sightline::app::panels::kernel_panel::occupancy_curve(&limits, &config.config);
    let at = curve
        .iter()
        .find(|p| p[0] == block as f64)
        .expect("the curve covers the launched block size");
    assert_eq!(at[1], launched.theoretical_percent);
    assert!(
        h.query_all_by_label("What if the block had")
            .next()
            .is_some()
    );
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
    // The axis from 0 keeps this kernel's markers in the plot's top part, which is on
    // screen in this window (the panel scrolls below it).
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .kernel
        .scatter_from_zero = true;
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
    assert_eq!(doc.selection().event, Some(ev), "the instance is selected");
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
        let rows = sightline::app::panels::kernel_panel::KernelPanel::bin_instances(&view, bin);
        assert_eq!(rows.len() as u64, view.histogram.counts[bin]);
        (pos, bin, rows)
    };
    assert!(rows.len() > 1, "bin {bin} holds several instances");
    click(&mut h, pos);
    let first = h.state().doc().and_then(|d| d.selection().event);
    assert_eq!(first, Some(EventRef::new(Table::Kernel, rows[0])));
    click(&mut h, pos);
    let second = h.state().doc().and_then(|d| d.selection().event);
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
    let command = sightline::app::panels::kernel_panel::KernelPanel::show_instance(last);
    let ctx = h.ctx.clone();
    h.state_mut().doc_mut().expect("doc").apply(command, &ctx);
    h.run_steps(2);
    let doc = h.state().doc().expect("doc");
    assert_eq!(
        doc.selection().event,
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
        doc.stats.tab = sightline::app::panels::range_stats::REPORTS
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
        .map(|p| (p.nvtx, p.gpu_end > trace.nvtx.spans.end(p.nvtx as usize)))
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

/// "GPU work of this range" keeps its count, time and share columns in the
/// details panel however long the kernel names are (here PyTorch's, of
/// hundreds of characters), in presentation mode too: names are cut, not
/// the numbers.
#[test]
fn gpu_work_of_a_range_keeps_its_numbers_beside_long_names() {
    use sightline::app::panels::nvtx_gpu::RangeWork;
    let trace = load("torch_work.sqlite");
    let (nvtx, work) = (0..trace.nvtx.spans.len() as u32)
        .map(|i| (i, RangeWork::compute(&trace, i)))
        .filter(|(_, w)| w.rows.iter().any(|r| trace.name(r.name).len() > 80))
        .max_by_key(|(_, w)| w.rows.len())
        .expect("a range that launched long-named kernels");
    let mut h = sized_harness(trace, 1400.0);
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .show_event(EventRef::new(Table::Nvtx, nvtx));
    h.run_steps(3);
    for presenting in [false, true] {
        if presenting {
            h.key_press(egui::Key::F5);
            h.run_steps(4);
        }
        assert!(h.query_by_label("GPU work of this range").is_some());
        // The details: right of the timeline, or under it in presentation mode.
        let canvas = h.state().doc().expect("doc").timeline.canvas;
        let in_details = |r: &egui::Rect| {
            if presenting {
                r.top() >= canvas.bottom()
            } else {
                r.left() >= canvas.right()
            }
        };
        let panel_left = if presenting { 0.0 } else { canvas.right() };
        let screen_right = h.ctx.content_rect().right();
        for r in work.rows.iter().take(50) {
            let count = grouped(r.count as i64);
            let nodes: Vec<_> = h
                .query_all_by_label(&count)
                .map(|n| n.rect())
                .filter(in_details)
                .collect();
            assert!(!nodes.is_empty(), "count {count} is shown in the details");
            for rect in nodes {
                assert!(
                    rect.right() <= screen_right + 0.5,
                    "presenting {presenting}: count {count} at {rect:?} outside the panel \
                     ({panel_left}..{screen_right})"
                );
            }
        }
        let share = h
            .query_all_by_label_contains(" %")
            .map(|n| n.rect())
            .filter(in_details)
            .collect::<Vec<_>>();
        assert!(!share.is_empty(), "shares shown");
        for rect in share {
            assert!(rect.right() <= screen_right + 0.5, "a share cut: {rect:?}");
        }
    }
}

/// The duration-over-time scatter runs on the ruler's clock: each instance
/// is plotted at its session time (the time the details and the ruler
/// give it), not at milliseconds since the report started.
#[test]
fn the_scatter_plots_each_instance_at_its_session_time() {
    let trace = load("sync_timing.sqlite");
    let (row, _, _) = busiest_kernel(&trace);
    let mut h = harness(trace);
    click_event(&mut h, EventRef::new(Table::Kernel, row));
    h.run_steps(3);
    let doc = h.state().doc().expect("doc");
    let (frame, t0, t1) = doc.kernel.scatter_axis.expect("the scatter is drawn");
    assert!(t1 > t0);
    let ns_per_px = (t1 - t0) / frame.width() as f64;
    let points = &doc.kernel.scatter_points;
    assert!(!points.is_empty());
    for &(pos, r) in points {
        let start = doc.trace.kernels.spans.start[r as usize] as f64;
        let plotted = t0 + (pos.x - frame.left()) as f64 * ns_per_px;
        assert!(
            (plotted - start).abs() <= 2.0 * ns_per_px,
            "kernel row {r} starts at {start} ns, plotted at {plotted} ns"
        );
    }
}

/// The histogram reads at a glance: whole counts on its y axis even for a
/// handful of instances, a legend naming P50/P90/P99 with their values,
/// each bar's range and count on hover, and short log-scale labels.
#[test]
fn the_duration_histogram_has_counts_a_legend_and_bar_tooltips() {
    use sightline::app::panels::kernel_panel::{
        KernelPanel, bar_tooltip, count_marks, percentile_label,
    };
    use sightline::app::widgets::format::short_duration;
    let trace = load("sync_timing.sqlite");
    let (row, _, _) = busiest_kernel(&trace);
    let mut h = harness(trace);
    click_event(&mut h, EventRef::new(Table::Kernel, row));
    h.run_steps(3);
    let view = h
        .state()
        .doc()
        .expect("doc")
        .kernel
        .view
        .clone()
        .expect("computed");
    let d = &view.stats.durations;
    for (which, v) in [
        ("P50", d.median),
        ("P90", d.p90 as f64),
        ("P99", d.p99 as f64),
    ] {
        let label = percentile_label(which, v);
        assert!(
            h.query_all_by_label(&label).next().is_some(),
            "the legend names {label}"
        );
    }
    // Every bar's tooltip gives its range and the instances it holds.
    for (bin, &n) in view.histogram.counts.iter().enumerate() {
        let tip = bar_tooltip(&view.histogram, bin).expect("a bar");
        let held = KernelPanel::bin_instances(&view, bin).len();
        assert_eq!(held as u64, n);
        let count = format!("{} instance", grouped(n as i64));
        assert!(tip.contains(" – ") && tip.contains(&count), "{tip}");
    }
    // Small counts: 0, 1, 2, 3 on the axis, not just "0".
    let marks: Vec<f64> = count_marks((0.0, 3.45)).iter().map(|m| m.value).collect();
    assert_eq!(marks, [0.0, 1.0, 2.0, 3.0]);
    let max = *view.histogram.counts.iter().max().expect("bars") as f64;
    let marks = count_marks((0.0, max * 1.15));
    assert!(
        marks.len() >= 2 && marks.len() <= 8,
        "{} marks",
        marks.len()
    );
    assert!(marks.iter().all(|m| m.value.fract() == 0.0));
    // And the marks are far enough apart on screen for egui_plot to label
    // them (it paints no y label closer than 20 points to the next): the
    // points per instance from two bars of different heights (a bar's
    // centre is at half its count).
    let bars = &h.state().doc().expect("doc").kernel.histogram_bars;
    let (lo, hi) = (
        bars.iter()
            .min_by_key(|(_, b)| view.histogram.counts[*b])
            .expect("bars"),
        bars.iter()
            .max_by_key(|(_, b)| view.histogram.counts[*b])
            .expect("bars"),
    );
    let dn = (view.histogram.counts[hi.1] - view.histogram.counts[lo.1]) as f32;
    assert!(dn > 0.0, "bars of different heights");
    let per_instance = 2.0 * (lo.0.y - hi.0.y) / dn;
    let spacing = marks[0].step_size as f32 * per_instance;
    assert!(
        spacing > 25.0,
        "y labels {spacing} points apart ({} per mark): egui_plot hides them",
        marks[0].step_size
    );
    // Log-scale labels: "10 µs", not "10.000 µs".
    assert_eq!(short_duration(10_000.0), "10 µs");
    assert_eq!(short_duration(2_500_000.0), "2.5 ms");
    assert_eq!(short_duration(130.0), "130 ns");
}

/// The launch-configuration table shows its limiter whole at the panel's
/// usual width.
#[test]
fn the_launch_configuration_table_shows_the_limiter_whole() {
    let trace = load("sync_timing.sqlite");
    let (row, _, _) = busiest_kernel(&trace);
    let mut h = harness(trace);
    click_event(&mut h, EventRef::new(Table::Kernel, row));
    h.run_steps(3);
    let doc = h.state().doc().expect("doc");
    let view = doc.kernel.view.clone().expect("computed");
    let right = doc.kernel.scatter_rect.expect("drawn").right();
    let limiter = view
        .configs
        .iter()
        .find_map(|c| c.occupancy.as_ref())
        .expect("an occupancy")
        .limiter_text();
    let node = h
        .query_all_by_label(&limiter)
        .next()
        .unwrap_or_else(|| panic!("{limiter} shown"));
    assert!(
        node.rect().right() <= right + 1.0,
        "{limiter} at {:?} is cut at {right}",
        node.rect()
    );
}

/// Hovering a long name cut in "GPU work of this range" shows it whole,
/// once (egui's label already shows elided text on hover; a second tooltip
/// of our own repeated it).
#[test]
fn a_cut_name_in_gpu_work_shows_whole_once_on_hover() {
    use sightline::app::panels::nvtx_gpu::RangeWork;
    let trace = load("torch_work.sqlite");
    let (nvtx, long) = (0..trace.nvtx.spans.len() as u32)
        .find_map(|i| {
            let w = RangeWork::compute(&trace, i);
            w.rows
                .iter()
                .find(|r| trace.name(r.name).len() > 200)
                .map(|r| (i, trace.name(r.name).to_string()))
        })
        .expect("a range that launched a long-named kernel");
    let mut h = sized_harness(trace, 1400.0);
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .show_event(EventRef::new(Table::Nvtx, nvtx));
    h.run_steps(3);
    let panel_left = h.state().doc().expect("doc").timeline.canvas.right();
    // A name is cut in the middle: its end is shown.
    let tail: String = {
        let chars: Vec<char> = long.chars().collect();
        chars[chars.len() - 6..].iter().collect()
    };
    let shown = |h: &Harness<'_, SightlineApp>| -> Vec<egui::Rect> {
        h.query_all_by_label_contains(&tail)
            .map(|n| n.rect())
            .collect()
    };
    let cell = shown(&h)
        .into_iter()
        .find(|r| r.left() >= panel_left)
        .expect("the name is listed in the details");
    let before = shown(&h).len();
    common::hover(&mut h, cell.center());
    let after = shown(&h);
    assert_eq!(
        after.len(),
        before + 1,
        "one tooltip with the whole name: {after:?}"
    );
}

/// The kernel panel pinned to "Whole report" stays pinned when an instance
/// of that same kernel is clicked on the timeline (README: it follows the
/// selected range "unless you pin it to Whole report").
#[test]
fn a_kernel_panel_pinned_to_the_whole_report_stays_pinned_when_its_kernel_is_clicked() {
    let trace = load("sync_timing.sqlite");
    // The most launched kernel and its instances by start.
    let k = &trace.kernels.spans;
    let name = *k
        .name
        .iter()
        .max_by_key(|&&n| k.name.iter().filter(|&&m| m == n).count())
        .expect("kernels");
    let mut rows: Vec<u32> = (0..k.len() as u32)
        .filter(|&i| k.name[i as usize] == name)
        .collect();
    rows.sort_by_key(|&i| k.start[i as usize]);
    let (a, b) = (rows[0], rows[rows.len() / 2]);
    let range = TimeRange {
        start: k.start[a as usize],
        end: k.start[b as usize] + 1,
    };
    let clicked = EventRef::new(Table::Kernel, rows[rows.len() / 4]);
    let mut h = sized_harness(trace, 2600.0);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.select_range(range.start, range.end);
        doc.open_kernel(name);
        assert_eq!(doc.kernel.over(doc.selection().range), Some(range));
    }
    h.run_steps(5);
    // Pinned to the whole report.
    h.get_by_label("Whole report").click();
    h.run_steps(3);
    let doc = h.state().doc().expect("doc");
    assert_eq!(doc.kernel.over(doc.selection().range), None);

    // An instance of the same kernel, clicked on the timeline.
    click_event(&mut h, clicked);
    h.run_steps(40);
    let doc = h.state().doc().expect("doc");
    assert_eq!(
        doc.selection().event,
        Some(clicked),
        "the click selected it"
    );
    assert_eq!(doc.selection().range, Some(range));
    assert!(doc.kernel.is_open());
    assert_eq!(
        doc.kernel.over(doc.selection().range),
        None,
        "the panel pinned to the whole report went back to the selected range"
    );
}

/// Issue 45: torch's kernels all start "void at::native::<unnamed>::…", and the
/// GPU-work list cut them at their end, so most rows read the same. Cut in the
/// middle, each row keeps its own end (and its kernel's own name), so rows of
/// different kernels read apart; the whole name is on hover.
#[test]
fn names_cut_in_the_gpu_work_list_keep_what_tells_them_apart() {
    use sightline::app::panels::nvtx_gpu::RangeWork;
    let trace = load("torch_work.sqlite");
    let (nvtx, names) = (0..trace.nvtx.spans.len() as u32)
        .map(|i| {
            let w = RangeWork::compute(&trace, i);
            let long: Vec<String> = w
                .rows
                .iter()
                .take(50)
                .map(|r| trace.name(r.name).to_string())
                .filter(|n| n.starts_with("void at::native::") && n.len() > 130)
                .collect();
            (i, long)
        })
        .find(|(_, long)| !long.is_empty())
        .expect("a range that launched a long at::native kernel");
    let mut h = sized_harness(trace, 1400.0);
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .show_event(EventRef::new(Table::Nvtx, nvtx));
    h.run_steps(3);
    assert!(h.query_by_label("GPU work of this range").is_some());
    let panel_left = h.state().doc().expect("doc").timeline.canvas.right();
    let cut: Vec<String> = h
        .query_all_by_label_contains("…")
        .filter(|n| n.rect().left() >= panel_left)
        .filter_map(|n| {
            // A label's text is its value (kittest reads it so too).
            let node = n.accesskit_node();
            node.value().or_else(|| node.label())
        })
        .collect();
    for name in &names {
        let chars: Vec<char> = name.chars().collect();
        let end: String = chars[chars.len() - 6..].iter().collect();
        // The kernel's own name (its start, in a narrow panel): after the namespaces, before its template arguments.
        let before_args = name
            .find("_kernel<")
            .map_or(name.len(), |i| i + "_kernel".len());
        let own = &name[name[..before_args].rfind("::").map_or(0, |i| i + 2)..before_args];
        assert!(
            cut.iter()
                .any(|c| c.ends_with(&end) && c.contains(&own[..12]) && c.len() < name.len()),
            "{name:.80} is cut keeping {own:?} and its end {end:?}: {cut:?}"
        );
    }
    assert!(
        cut.iter().all(|c| !c.starts_with("void at::native::")),
        "the shared start is what goes: {cut:?}"
    );
}

/// Runs frames until the report's metric sets and the kernel panel's metrics are computed.
fn settle_metrics(h: &mut Harness<'_, SightlineApp>) {
    for _ in 0..600 {
        h.step();
        let doc = h.state().doc().expect("doc");
        if !doc.metric_sets.is_busy() && !doc.kernel.metrics.is_pending() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    h.run_steps(4);
}

/// Issue 45: the speed of light gave one verdict per source with no word on which holds
/// (sgemm_tiled: latency-bound by sampling, compute-bound by ncu). Each verdict is named by its
/// source, the panel says which it trusts and why (counters over sampling, which cannot see a
/// kernel shorter than its period), and says the too-short notice once.
#[test]
fn each_source_gives_its_verdict_and_the_panel_says_which_it_trusts() {
    let trace = load("torch_metrics_excerpt.sqlite");
    let kernel = (0..trace.kernels.spans.len() as u32)
        .find(|&k| {
            trace
                .name(trace.kernels.spans.name[k as usize])
                .starts_with("sm80_xmma_gemm_f32f32")
        })
        .expect("the fp32 GEMM");
    let mut h = harness(trace);
    let ncu = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ncu_metrics/torch_work.ncu.csv");
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        let trace = doc.trace.clone();
        doc.metric_sets.attach(&trace, ncu, None);
    }
    settle_metrics(&mut h);
    click_event(&mut h, EventRef::new(Table::Kernel, kernel));
    settle_metrics(&mut h);
    let doc = h.state().doc().expect("doc");
    let sources: Vec<_> = doc
        .kernel
        .metrics
        .summaries
        .iter()
        .map(|s| s.set.source)
        .collect();
    assert_eq!(sources.len(), 2, "sampling and ncu: {sources:?}");
    for line in ["By nsys sampling: ", "By Nsight Compute: "] {
        assert!(
            h.query_all_by_label_contains(line).next().is_some(),
            "a verdict named by its source: {line}"
        );
    }
    let why = h
        .query_all_by_label_contains("Trusted: Nsight Compute")
        .next()
        .expect("which source the panel goes by");
    let why = why.accesskit_node().value().unwrap_or_default();
    assert!(
        why.contains("once every") && why.contains("not seen"),
        "and why: {why}"
    );
    // Said once: one text (before, the report's note and the kernel's line said it twice,
    // in two wordings).
    let all: Vec<String> = h
        .query_all_by_label_contains(sightline::analysis::metrics::sampled::TOO_SHORT)
        .filter_map(|n| {
            let node = n.accesskit_node();
            node.value().or_else(|| node.label())
        })
        .collect();
    let mut notices = all.clone();
    notices.sort();
    notices.dedup();
    assert!(notices.len() <= 1, "the too-short notice once: {all:?}");
}

/// Issue 45: the duration-over-time plot's y axis started at 0, flattening all variation
/// between instances. It fits the data; a toggle brings 0 back.
#[test]
fn the_duration_over_time_axis_fits_the_data_unless_asked_to_include_zero() {
    let trace = load("sync_timing.sqlite");
    let (row, _, _) = busiest_kernel(&trace);
    let mut h = harness(trace);
    click_event(&mut h, EventRef::new(Table::Kernel, row));
    h.run_steps(4);
    let (view, y) = {
        let doc = h.state().doc().expect("doc");
        (
            doc.kernel.view.clone().expect("view"),
            doc.kernel.scatter_y.expect("the scatter was drawn"),
        )
    };
    let min_us = view.points.iter().map(|p| p.1).min().expect("instances") as f64 / 1e3;
    assert!(min_us > 0.5, "a kernel far from 0: {min_us} µs");
    assert!(
        y.0 > 0.25 * min_us,
        "the axis fits the data: {y:?}, shortest {min_us} µs"
    );
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .kernel
        .scatter_from_zero = true;
    h.run_steps(4);
    let y = h
        .state()
        .doc()
        .expect("doc")
        .kernel
        .scatter_y
        .expect("drawn");
    assert!(y.0 <= 0.0, "from 0 when asked: {y:?}");
}
