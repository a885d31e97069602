//! The compare view, driven through the real UI (egui_kittest) on a real pair:
//! assets/sync_timing.sqlite (nsys's recording of the sync_timing program) and
//! assets/sync_timing_capture.sqlite (Sightline's own capture of the same
//! program on the same H100). Expected values come from the traces and from
//! the `sightline diff` binary, never typed into the tests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;

use eframe::egui::accesskit::Role;
use eframe::egui::{self, Pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::compare::{self, COLUMNS, DiffReport};
use sightline::analysis::stats::{Cell, Table};
use sightline::app::SightlineApp;
use sightline::app::panels::compare_view::{Alignment, CompareView, Side, section_label};
use sightline::app::state::events::{EventRef, Table as EventTable};
use sightline::model::{NvtxKind, Trace};

fn asset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(name)
}

fn nsys_report() -> PathBuf {
    asset("sync_timing.sqlite")
}

fn capture_report() -> PathBuf {
    asset("sync_timing_capture.sqlite")
}

fn load(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// A window with a compare tab of the pair, opened as the command line would
/// (`app::run_compare` calls `open_compare`), both reports read and diffed.
fn compare_harness() -> Harness<'static, SightlineApp> {
    let mut app = SightlineApp::default();
    app.open_compare(nsys_report(), capture_report());
    let view = app.compare_view_mut().expect("a compare tab is shown");
    view.wait();
    assert_eq!(view.error, None);
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(4);
    h
}

/// The tab of a diff section: its name and row count.
fn tab_label(h: &Harness<'_, SightlineApp>, report: DiffReport) -> String {
    let rows = view(h).diff(report).map_or(0, |d| d.rows.len());
    format!("{} ({rows})", section_label(report))
}

fn view<'a>(h: &'a Harness<'_, SightlineApp>) -> &'a CompareView {
    h.state().compare_view().expect("the compare tab is shown")
}

/// (start, end) of a half's view on the shared axis, and its span.
fn axis_of(v: &CompareView, side: Side) -> (f64, f64) {
    let half = v.half(side).expect("both reports are read");
    (
        half.timeline.view.start - half.offset,
        half.timeline.view.end - half.offset,
    )
}

fn assert_same_axis(v: &CompareView, what: &str) {
    let (a, b) = (axis_of(v, Side::A), axis_of(v, Side::B));
    let tolerance = (a.1 - a.0).abs() * 1e-9 + 1e-3;
    assert!(
        (a.0 - b.0).abs() < tolerance && (a.1 - b.1).abs() < tolerance,
        "{what}: A shows {a:?} of the axis, B shows {b:?}"
    );
}

fn canvas_center(h: &Harness<'_, SightlineApp>, side: Side) -> Pos2 {
    let half = view(h).half(side).expect("both reports are read");
    half.timeline.canvas.center()
}

fn drag(h: &mut Harness<'_, SightlineApp>, from: Pos2, to: Pos2) {
    h.event(egui::Event::PointerMoved(from));
    h.event(egui::Event::PointerButton {
        pos: from,
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: egui::Modifiers::NONE,
    });
    h.run_steps(1);
    for k in 1..=5 {
        let t = k as f32 / 5.0;
        h.event(egui::Event::PointerMoved(from + (to - from) * t));
        h.run_steps(1);
    }
    h.event(egui::Event::PointerButton {
        pos: to,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.run_steps(3);
}

#[test]
fn file_menu_compares_two_tabs_and_zooming_either_moves_both() {
    // Two reports open in tabs; File ▸ Compare with … opens the view.
    let mut app = SightlineApp::with_trace(load(&nsys_report()));
    app.open(capture_report());
    app.wait_for_load();
    app.switch_to(0);
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Compare with sync_timing_capture.sqlite")
        .click();
    h.run_steps(2);
    assert_eq!(h.state().tab_count(), 3, "a third tab: the comparison");
    h.state_mut()
        .compare_view_mut()
        .expect("the compare tab is shown")
        .wait();
    h.run_steps(4);
    let v = view(&h);
    for side in Side::BOTH {
        let half = v.half(side).expect("both halves");
        assert!(
            h.query_all_by_label(&half.file_name()).count() >= 2,
            "half {side:?} is labelled with its file name (in the bar and over it)"
        );
    }
    assert_same_axis(v, "after opening");
    let span0 = axis_of(v, Side::A).1 - axis_of(v, Side::A).0;

    // Ctrl+wheel (or a pinch) over A zooms A at the pointer, and B follows:
    // the zoom reaches only the timeline under the pointer.
    let canvas_a = view(&h).half(Side::A).expect("A").timeline.canvas;
    let over_a = canvas_a.left_center() + vec2(canvas_a.width() * 0.25, 0.0);
    h.event(egui::Event::PointerMoved(over_a));
    h.run_steps(1);
    for _ in 0..3 {
        h.event(egui::Event::Zoom(1.5));
        h.run_steps(2);
    }
    let v = view(&h);
    let (a, b) = (axis_of(v, Side::A), axis_of(v, Side::B));
    assert!(a.1 - a.0 < span0 * 0.6, "A zoomed in: {a:?} of {span0}");
    assert!(b.1 - b.0 < span0 * 0.6, "B zoomed with A: {b:?} of {span0}");
    assert_same_axis(v, "after zooming A");

    // W zooms too (keys reach both timelines; the one under the pointer leads).
    let span_w = a.1 - a.0;
    h.key_press(egui::Key::W);
    h.run_steps(2);
    let v = view(&h);
    let a = axis_of(v, Side::A);
    assert!(a.1 - a.0 < span_w * 0.9, "W zoomed in: {a:?}");
    assert_same_axis(v, "after W");

    // Dragging B pans B, and A follows.
    let before = axis_of(view(&h), Side::A);
    let over_b = canvas_center(&h, Side::B);
    drag(&mut h, over_b, over_b + vec2(-300.0, 0.0));
    let v = view(&h);
    let after = axis_of(v, Side::A);
    assert!(
        after.0 > before.0 + (before.1 - before.0) * 0.1,
        "dragging B left moved A later too: {before:?} → {after:?}"
    );
    assert_same_axis(v, "after panning B");

    // Ctrl+wheel over B zooms out both.
    let span1 = after.1 - after.0;
    h.event(egui::Event::PointerMoved(over_b));
    h.event(egui::Event::Zoom(0.5));
    h.run_steps(3);
    let v = view(&h);
    let b = axis_of(v, Side::B);
    assert!(b.1 - b.0 > span1 * 1.5, "B zoomed out: {b:?}");
    assert_same_axis(v, "after zooming B out");
}

/// The push/pop and start/end ranges of `trace` whose message is `name`, in
/// any domain, by start: this test's own reading of the NVTX table.
fn nvtx_ranges(trace: &Trace, name: &str) -> Vec<EventRef> {
    let spans = &trace.nvtx.spans;
    let mut found: Vec<(i64, EventRef)> = (0..spans.len())
        .filter(|&i| {
            trace.name(spans.name[i]) == name
                && matches!(trace.nvtx.kind[i], NvtxKind::PushPop | NvtxKind::StartEnd)
        })
        .map(|i| (spans.start[i], EventRef::new(EventTable::Nvtx, i as u32)))
        .collect();
    found.sort_by_key(|&(s, e)| (s, e.index));
    found.into_iter().map(|(_, e)| e).collect()
}

#[test]
fn aligning_on_an_nvtx_range_puts_its_instances_at_one_axis_position() {
    let mut h = compare_harness();
    let (a_trace, b_trace) = {
        let v = view(&h);
        (
            v.half(Side::A).expect("A").trace.clone(),
            v.half(Side::B).expect("B").trace.clone(),
        )
    };
    // A range name both reports have more than once, picked from the traces
    // (the recording marks it in the default domain, the capture in
    // `sightline`: the name is what they share).
    let name = view(&h)
        .anchors
        .iter()
        .find(|c| c.count_a >= 2 && c.count_b >= 2)
        .map(|c| c.name.clone())
        .expect("the pair has an NVTX range in both, more than once");
    let ranges_a = nvtx_ranges(&a_trace, &name);
    let ranges_b = nvtx_ranges(&b_trace, &name);
    assert!(ranges_a.len() >= 2 && ranges_b.len() >= 2);

    // Aligned on the reports' first events, the second instances are apart
    // (else this test could not tell alignment from luck).
    let second = |trace: &Trace, ranges: &[EventRef]| ranges[1].start(trace);
    let apart = (second(&a_trace, &ranges_a) - a_trace.info.time_range.0)
        - (second(&b_trace, &ranges_b) - b_trace.info.time_range.0);
    assert!(apart.abs() > 1_000, "second instances {apart} ns apart");

    // Choose the range in the combo box, through the UI.
    h.get_by_label("Align on").click();
    h.run_steps(2);
    h.get_by_label(&name).click();
    h.run_steps(3);
    let v = view(&h);
    assert_eq!(
        v.align,
        Alignment::Nvtx {
            name: name.clone(),
            instance: 0
        }
    );
    for (side, trace, ranges) in [
        (Side::A, &a_trace, &ranges_a),
        (Side::B, &b_trace, &ranges_b),
    ] {
        let half = v.half(side).expect("half");
        assert_eq!(
            half.offset,
            ranges[0].start(trace) as f64,
            "{side:?}: axis 0 is the first instance's start"
        );
    }
    // On screen: the first instances start at the same x in both halves.
    let x_a = h.state().compare_view().and_then(|v| {
        let half = v.half(Side::A)?;
        half.timeline.event_pos(&a_trace, ranges_a[0])
    });
    let x_b = h.state().compare_view().and_then(|v| {
        let half = v.half(Side::B)?;
        half.timeline.event_pos(&b_trace, ranges_b[0])
    });
    let (x_a, x_b) = (x_a.expect("A's range drawn"), x_b.expect("B's range drawn"));
    let left = |side: Side, trace: &Trace, ev: EventRef| {
        let v = view(&h);
        let half = v.half(side).expect("half");
        let t = &half.timeline;
        let px = t.canvas.width() as f64 / t.view.span();
        t.canvas.left() as f64 + (ev.start(trace) as f64 - t.view.start) * px
    };
    let (l_a, l_b) = (
        left(Side::A, &a_trace, ranges_a[0]),
        left(Side::B, &b_trace, ranges_b[0]),
    );
    assert!(
        (l_a - l_b).abs() < 1.0,
        "first instances start at x {l_a} in A, {l_b} in B"
    );
    assert!(x_a.x > 0.0 && x_b.x > 0.0);

    // The second instance, chosen in the instance box: aligned in turn.
    h.state_mut()
        .compare_view_mut()
        .expect("view")
        .align_on(Alignment::Nvtx {
            name: name.clone(),
            instance: 1,
        })
        .expect("both have a second instance");
    h.run_steps(3);
    let v = view(&h);
    let at_axis = |side: Side, trace: &Trace, ev: EventRef| {
        ev.start(trace) as f64 - v.half(side).expect("half").offset
    };
    assert_eq!(at_axis(Side::A, &a_trace, ranges_a[1]), 0.0);
    assert_eq!(at_axis(Side::B, &b_trace, ranges_b[1]), 0.0);
    assert_same_axis(v, "after aligning");
}

/// A table of the window's cell texts with the thousands separators taken out
/// of the numeric columns: what the CLI writes, if the window shows its numbers.
fn without_separators(rows: &[Vec<String>]) -> Table {
    Table {
        columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
        rows: rows
            .iter()
            .map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(c, text)| {
                        if c == 0 {
                            Cell::Text(text.clone())
                        } else {
                            Cell::Text(text.replace(',', ""))
                        }
                    })
                    .collect()
            })
            .collect(),
    }
}

#[test]
fn diff_table_shows_the_numbers_of_sightline_diff() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let prefix = dir.path().join("pair");
    let status = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("diff")
        .arg(nsys_report())
        .arg(capture_report())
        .arg("--output")
        .arg(&prefix)
        .status()
        .expect("the binary runs");
    assert!(status.success());

    let mut h = compare_harness();
    let mut separators_seen = false;
    for report in DiffReport::ALL {
        h.get_by_label(&tab_label(&h, report)).click();
        h.run_steps(3);
        let v = view(&h);
        assert_eq!(v.section, report);
        let cli =
            std::fs::read_to_string(format!("{}_diff_{}.csv", prefix.display(), report.name()))
                .expect("the CLI wrote the section");
        // The window keeps the name first (its name column is cut to fit); the CLI puts it
        // last, as nsys stats does: the same rows and numbers.
        let mut shown = without_separators(&v.drawn_rows);
        shown.columns.rotate_left(1);
        for row in &mut shown.rows {
            row.rotate_left(1);
        }
        assert_eq!(
            shown.to_csv(),
            cli,
            "{}: the window's table is the CLI's",
            report.name()
        );
        // And the library's, row for row.
        let diff = v.diff(report).expect("computed");
        assert_eq!(shown.rows.len(), diff.rows.len());
        separators_seen |= v
            .drawn_rows
            .iter()
            .any(|r| r[3].contains(',') && r[3].replace(',', "").parse::<i64>().is_ok());
        // The cells are real widgets on screen.
        if let Some(row) = v.drawn_rows.first() {
            let total = row[3].clone();
            if !total.is_empty() {
                assert!(
                    h.query_all_by_label(&total).next().is_some(),
                    "{total} is shown"
                );
            }
        }
    }
    assert!(
        separators_seen,
        "totals are shown with thousands separators"
    );
}

#[test]
fn clicking_a_row_outlines_its_instances_in_both_and_shows_the_first_of_each() {
    let mut h = compare_harness();
    let (a_trace, b_trace) = {
        let v = view(&h);
        (
            v.half(Side::A).expect("A").trace.clone(),
            v.half(Side::B).expect("B").trace.clone(),
        )
    };
    // A kernel or memory operation that both reports ran more than once.
    let (report, row) = [DiffReport::Kernels, DiffReport::Memcpy]
        .into_iter()
        .find_map(|report| {
            let diff = view(&h).diff(report)?;
            let row = diff.rows.iter().find(|r| {
                r.a.is_some_and(|s| s.instances > 1) && r.b.is_some_and(|s| s.instances > 1)
            })?;
            Some((report, row.clone()))
        })
        .expect("a kernel or copy in both reports");
    // This test's own reading: the GPU work of that name, by start.
    let instances = |trace: &Trace| {
        let mut found: Vec<(i64, EventRef)> = Vec::new();
        for table in [EventTable::Kernel, EventTable::Memcpy, EventTable::Memset] {
            let spans = table.spans(trace);
            for i in 0..spans.len() {
                if trace.name(spans.name[i]) == row.key.name {
                    found.push((spans.start[i], EventRef::new(table, i as u32)));
                }
            }
        }
        found.sort_by_key(|&(s, e)| (s, e.table as u8, e.index));
        found.into_iter().map(|(_, e)| e).collect::<Vec<_>>()
    };
    let (ka, kb) = (instances(&a_trace), instances(&b_trace));
    assert_eq!(ka.len() as u64, row.a.expect("A").instances);
    assert_eq!(kb.len() as u64, row.b.expect("B").instances);
    for side in Side::BOTH {
        let half = view(&h).half(side).expect("half");
        assert!(
            !half.timeline.highlight.iter().any(|&b| b),
            "nothing outlined before the click"
        );
        assert_eq!(half.selection.event, None);
    }

    h.get_by_label(&tab_label(&h, report)).click();
    h.run_steps(2);
    assert_eq!(view(&h).section, report);
    h.get_by_role_and_label(Role::Link, &row.name).click();
    h.run_steps(3);
    for (side, trace, expected) in [(Side::A, &a_trace, &ka), (Side::B, &b_trace, &kb)] {
        let v = view(&h);
        let half = v.half(side).expect("half");
        let outlined: Vec<EventRef> = [EventTable::Kernel, EventTable::Memcpy, EventTable::Memset]
            .into_iter()
            .flat_map(|table| {
                let spans = table.spans(trace);
                (0..spans.len())
                    .filter(|&i| {
                        half.timeline
                            .highlight
                            .get(spans.name[i].0 as usize)
                            .copied()
                            .unwrap_or(false)
                    })
                    .map(move |i| EventRef::new(table, i as u32))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(
            outlined.len(),
            expected.len(),
            "{side:?}: every instance is outlined, and no other GPU work"
        );
        assert_eq!(half.instances, *expected, "{side:?}: instances by start");
        assert_eq!(
            half.selection.event,
            Some(expected[0]),
            "{side:?}: the first instance is selected"
        );
        let pos = half
            .timeline
            .event_pos(trace, expected[0])
            .expect("the first instance is drawn");
        assert!(
            half.timeline.canvas.x_range().contains(pos.x),
            "{side:?}: the first instance is in view"
        );
    }
    assert_same_axis(view(&h), "after showing the row");

    // Again: the next instance of each.
    h.get_by_role_and_label(Role::Link, &row.name).click();
    h.run_steps(3);
    let v = view(&h);
    assert_eq!(v.half(Side::A).expect("A").selection.event, Some(ka[1]));
    assert_eq!(v.half(Side::B).expect("B").selection.event, Some(kb[1]));
}

/// Every row's instances, in both reports and all four sections, are exactly
/// what its numbers count: as many, with the same total time.
#[test]
fn each_rows_instances_are_what_its_numbers_count() {
    let (a, b) = (load(&nsys_report()), load(&capture_report()));
    for report in DiffReport::ALL {
        let diff = compare::diff(&a, &b, report);
        assert!(!diff.rows.is_empty() || report == DiffReport::Memcpy);
        for row in &diff.rows {
            for (trace, side) in [(&a, row.a), (&b, row.b)] {
                let found = compare::instances(trace, report, &row.key, None);
                let (count, total) = side.map_or((0, 0), |s| (s.instances, s.total));
                assert_eq!(
                    found.events.len() as u64,
                    count,
                    "{}: {}",
                    report.name(),
                    row.name
                );
                let sum: i128 = found
                    .events
                    .iter()
                    .map(|&e| {
                        let e = EventRef::from(e);
                        (e.end(trace) - e.start(trace)) as i128
                    })
                    .sum();
                assert_eq!(sum, total, "{}: {} total", report.name(), row.name);
            }
        }
    }
}

/// At 1600×1000 the diff table shows more than three rows, its header stays
/// put while the rows scroll under it, and the Avg Change is coloured only
/// past the stated threshold, more strongly the larger the change.
#[test]
fn diff_table_has_room_sticky_headers_and_colours_by_significance() {
    let mut h = compare_harness();
    // The section with the most rows.
    let report = DiffReport::ALL
        .into_iter()
        .max_by_key(|&r| view(&h).diff(r).map_or(0, |d| d.rows.len()))
        .expect("sections");
    h.get_by_label(&tab_label(&h, report)).click();
    h.run_steps(3);
    let rows = view(&h).diff(report).expect("computed").rows.len();
    assert!(rows > 6, "a long diff: {rows} rows");
    // The diff takes a share of the window (45 %), not a fixed strip: at
    // 1600×1000 a dozen rows or more (the old 260 points showed 9).
    let shown = view(&h).rows_visible;
    assert!(
        shown >= rows.min(12),
        "{shown} of {rows} rows visible at 1600×1000"
    );

    let header = h.get_by_label(COLUMNS[7]).rect();
    let first = view(&h).drawn_rows[0][0].clone();
    let first_before = h.get_all_by_label(&first).next().expect("row").rect();
    h.event(egui::Event::PointerMoved(Pos2::new(
        first_before.center().x,
        first_before.center().y + 20.0,
    )));
    for _ in 0..5 {
        h.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: vec2(0.0, -60.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
            modifiers: egui::Modifiers::NONE,
        });
        h.run_steps(2);
    }
    let first_after = h.get_all_by_label(&first).next().expect("row").rect();
    assert!(
        first_after.min.y < first_before.min.y,
        "the rows scrolled ({first_before:?} → {first_after:?})"
    );
    assert_eq!(
        h.get_by_label(COLUMNS[7]).rect(),
        header,
        "the header stays"
    );
    // Each number stands under its own column's header (right-aligned
    // both): the header row is laid out apart from the rows.
    let cells = &view(&h).drawn_rows[0];
    let mut aligned = 0;
    for (c, text) in cells.iter().enumerate().skip(1) {
        if text.is_empty() {
            continue;
        }
        let head = h.get_by_label(COLUMNS[c]).rect();
        let cell = h
            .get_all_by_label(text)
            .map(|n| n.rect())
            .find(|r| (r.center().y - first_after.center().y).abs() < 3.0)
            .unwrap_or_else(|| panic!("{text} in the first row"));
        assert!(
            (cell.right() - head.right()).abs() < 3.0,
            "{} ends at {}, its value {text} at {}",
            COLUMNS[c],
            head.right(),
            cell.right()
        );
        aligned += 1;
    }
    assert!(aligned > 0);

    // Colour by significance, stated in the window.
    let threshold = sightline::app::panels::compare_view::SIGNIFICANT_CHANGE_PERCENT;
    assert!(
        h.query_all_by_label_contains(&format!("±{threshold} %"))
            .next()
            .is_some(),
        "the threshold is stated"
    );
    use sightline::app::panels::compare_view::change_color;
    let mut changes: Vec<f64> = DiffReport::ALL
        .into_iter()
        .filter_map(|r| view(&h).diff(r))
        .flat_map(|d| d.rows.iter().filter_map(|r| r.avg_change_percent()))
        .collect();
    changes.sort_by(f64::total_cmp);
    for &c in &changes {
        assert_eq!(change_color(c).is_some(), c.abs() >= threshold, "{c} %");
    }
    let alpha = |c: f64| change_color(c).map_or(0, |c| c.a());
    // +0.6 % is not coloured; +1,841 % is, more strongly than +6 %.
    assert_eq!(change_color(0.6), None);
    assert!(alpha(1841.0) > alpha(6.0) && alpha(6.0) > 0);
    assert!(alpha(-60.0) > alpha(-6.0) && alpha(-6.0) > 0);
}
