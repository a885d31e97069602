//! Layout and input defects of issue 11 that need the whole window: a
//! double-click anywhere, small windows, many tabs, the key help, the UI zoom,
//! presentation mode and the theme. Each drives the real UI (egui_kittest).

mod common;
use common::{MemStorage, fixture, load};

use eframe::egui::{self, Event, Modifiers, Pos2, Rect, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use sightline::app::SightlineApp;
use sightline::app::state::events::{EventRef, Table};
use sightline::app::widgets::help::KEYS;
use sightline::app::widgets::prefs::{PRESENTATION_ZOOM, Theme};

fn harness(app: SightlineApp, w: f32, h: f32) -> Harness<'static, SightlineApp> {
    let mut h = Harness::builder()
        .with_size(vec2(w, h))
        .with_step_dt(0.05)
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

fn press(h: &mut Harness<'_, SightlineApp>, pos: Pos2) {
    common::press(h, pos);
}

/// Puts kernel `ev` at `fraction` of the canvas width, a twentieth of the view.
fn place(h: &mut Harness<'_, SightlineApp>, ev: EventRef, fraction: f64) {
    let doc = h.state_mut().doc_mut().expect("doc");
    let (s, e) = (ev.start(&doc.trace) as f64, ev.end(&doc.trace) as f64);
    let span = (e - s) * 20.0;
    let start = (s + e) / 2.0 - fraction * span;
    doc.timeline.view.set(start, start + span);
    h.run_steps(2);
}

/// The second click of a double-click lands where the first did, even on the
/// right of the timeline where the details panel used to open after the first.
#[test]
fn double_clicking_an_event_on_the_right_zooms_to_it() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1400.0,
        900.0,
    );
    let kernels = h.state().doc().expect("doc").trace.kernels.spans.len() as u32;
    for (i, fraction) in [(kernels / 2, 0.85), (kernels - 1, 0.65), (0, 0.3)] {
        let ev = EventRef {
            table: Table::Kernel,
            index: i,
        };
        h.state_mut().doc_mut().expect("doc").select_event(None);
        // Past egui's double-click delay: the last double-click is over, the
        // kernel panel it opened is open; closed, it uncovers the timeline.
        h.run_steps(10);
        h.state_mut().doc_mut().expect("doc").kernel.close();
        place(&mut h, ev, fraction);
        let before = h.state().doc().expect("doc").timeline.view.span();
        let doc = h.state().doc().expect("doc");
        let pos = doc.timeline.event_pos(&doc.trace, ev).expect("drawn");
        h.event(Event::PointerMoved(pos));
        h.step();
        press(&mut h, pos);
        // Frames go on between the clicks, as in the window (anything the
        // first click opens is drawn and clickable by the second); each
        // press and release is a frame of 50 ms here.
        h.run_steps(2);
        press(&mut h, pos);
        h.run_steps(3);
        let doc = h.state().doc().expect("doc");
        assert_eq!(doc.selection().event, Some(ev), "kernel {i} selected");
        let after = doc.timeline.view.span();
        assert!(
            after < before / 5.0,
            "double-click at {fraction} of the width zoomed to kernel {i}: span {before} → {after}"
        );
    }
}

#[test]
fn selecting_an_event_does_not_move_the_timeline() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1400.0,
        900.0,
    );
    let ev = EventRef {
        table: Table::Kernel,
        index: 3,
    };
    place(&mut h, ev, 0.7);
    let (canvas, pos) = {
        let doc = h.state().doc().expect("doc");
        (
            doc.timeline.canvas,
            doc.timeline.event_pos(&doc.trace, ev).expect("drawn"),
        )
    };
    h.event(Event::PointerMoved(pos));
    h.step();
    press(&mut h, pos);
    h.run_steps(3);
    let doc = h.state().doc().expect("doc");
    assert_eq!(doc.selection().event, Some(ev));
    assert_eq!(doc.timeline.canvas, canvas, "the canvas kept its place");
    assert_eq!(doc.timeline.event_pos(&doc.trace, ev), Some(pos));
}

#[test]
fn the_label_column_gives_way_in_a_small_window() {
    for (w, h) in [(800.0, 500.0), (1280.0, 720.0), (1600.0, 1000.0)] {
        let mut harness = harness(SightlineApp::with_trace(load("sync_timing.sqlite")), w, h);
        harness.run_steps(2);
        let doc = harness.state().doc().expect("doc");
        let canvas = doc.timeline.canvas;
        // The timeline starts at the central panel's margin.
        let timeline = canvas.right() - 8.0;
        let labels = canvas.left() - 8.0;
        assert!(
            labels <= 0.22 * timeline,
            "at {w}×{h} the labels take {labels} of {timeline}"
        );
        assert!(
            canvas.width() >= 0.5 * w,
            "the events keep most of {w}: {canvas:?}"
        );
    }
}

fn rect_of(h: &Harness<'_, SightlineApp>, label: &str) -> Rect {
    h.get_by_label(label).rect()
}

#[test]
fn nothing_in_the_menu_bar_overlaps_in_a_small_window() {
    let mut app = SightlineApp::with_trace(load("sync_timing.sqlite"));
    app.doc_mut().expect("doc").wait_for_findings();
    let mut h = harness(app, 800.0, 500.0);
    h.run_steps(2);
    let next = rect_of(&h, ">");
    let previous = rect_of(&h, "<");
    let regex = rect_of(&h, "regex");
    let roles = [
        egui::accesskit::Role::Button,
        egui::accesskit::Role::Label,
        egui::accesskit::Role::CheckBox,
    ];
    for node in roles.into_iter().flat_map(|role| h.get_all_by_role(role)) {
        let r = node.rect();
        let label = node.accesskit_node().label().unwrap_or_default();
        if label == ">" || label == "<" || label == "regex" || r.top() > next.bottom() {
            continue;
        }
        for (what, other) in [(">", next), ("<", previous), ("regex", regex)] {
            assert!(
                !r.intersects(other.shrink(1.0)),
                "{label:?} at {r:?} overlaps {what} at {other:?}"
            );
        }
        assert!(r.right() <= 801.0, "{label:?} at {r:?} is off the window");
    }
}

const N_TABS: usize = 12;

#[test]
fn tab_close_buttons_stay_beside_their_titles_when_tabs_wrap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = SightlineApp::default();
    // Names of many lengths: somewhere a title fits the line and its close
    // button does not (the case that left buttons alone on a line).
    let name = |i: usize| format!("r{i}_{}.sqlite", "x".repeat(8 + 5 * i));
    for i in 0..N_TABS {
        let path = dir.path().join(name(i));
        std::fs::copy(fixture("sync_timing.sqlite"), &path).expect("copy");
        app.open(path);
    }
    app.wait_for_load();
    let mut h = harness(app, 800.0, 500.0);
    h.run_steps(2);
    let mut lines = std::collections::BTreeSet::new();
    for i in 0..N_TABS {
        let title = name(i);
        let t = rect_of(&h, &title);
        let x = rect_of(&h, &format!("Close {title}"));
        assert!(
            (t.center().y - x.center().y).abs() < 4.0 && x.left() >= t.right() - 1.0,
            "tab {i}: title at {t:?}, close at {x:?}"
        );
        lines.insert(t.center().y as i32);
    }
    assert!(
        lines.len() > 1,
        "the tabs wrapped (else the test shows nothing)"
    );
}

/// The README's key table is the in-app help's, row for row.
#[test]
fn the_readme_lists_the_keys_the_help_lists() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README");
    let table: Vec<(String, String)> = readme
        .lines()
        .skip_while(|l| !l.starts_with("### Keys"))
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect();
            (cells[0].clone(), cells.get(1).cloned().unwrap_or_default())
        })
        .collect();
    let help: Vec<(String, String)> = KEYS
        .iter()
        .map(|(k, a)| (k.to_string(), a.to_string()))
        .collect();
    assert_eq!(table, help);
}

#[test]
fn f1_opens_the_key_help() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1400.0,
        900.0,
    );
    assert!(h.query_by_label("Keys and mouse").is_none());
    h.key_press(egui::Key::F1);
    h.run_steps(2);
    assert!(h.query_by_label("Keys and mouse").is_some());
    assert!(
        h.query_by_label(KEYS[1].1).is_some(),
        "the help lists the keys"
    );
}

/// Esc closes the topmost transient window (the help) first; the selection
/// goes only with a second Esc.
#[test]
fn escape_closes_the_help_before_it_clears_the_selection() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1400.0,
        900.0,
    );
    let kernel = EventRef::new(Table::Kernel, 0);
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .select_event(Some(kernel));
    h.key_press(egui::Key::F1);
    h.run_steps(2);
    assert!(h.query_by_label("Keys and mouse").is_some());
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(h.query_by_label("Keys and mouse").is_none(), "help closed");
    let selected = h.state().doc().expect("doc").selection().event;
    assert_eq!(selected, Some(kernel), "the selection stays");
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert_eq!(h.state().doc().expect("doc").selection().event, None);
}

#[test]
fn ctrl_plus_and_minus_zoom_the_whole_ui_and_ctrl_0_resets() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1400.0,
        900.0,
    );
    let zoom = |h: &Harness<'_, SightlineApp>| h.ctx.zoom_factor();
    assert_eq!(zoom(&h), 1.0);
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::Plus);
    h.run_steps(2);
    assert!(zoom(&h) > 1.05, "Ctrl + zoomed in: {}", zoom(&h));
    let span = h.state().doc().expect("doc").timeline.view.span();
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::Num0);
    h.run_steps(2);
    assert_eq!(zoom(&h), 1.0);
    assert_eq!(
        h.state().doc().expect("doc").timeline.view.span(),
        span,
        "Ctrl+0 resets the UI zoom, it does not fit the timeline"
    );
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::Minus);
    h.run_steps(2);
    assert!(zoom(&h) < 0.95);
    assert!((h.state().prefs.zoom - zoom(&h)).abs() < 1e-6, "remembered");
}

#[test]
fn presentation_mode_hides_the_chrome_enlarges_and_comes_back() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1280.0,
        720.0,
    );
    assert!(h.query_by_label("File").is_some());
    let rows_before = h.state().doc().expect("doc").timeline.canvas;
    h.key_press(egui::Key::F5);
    h.run_steps(3);
    assert!(h.state().prefs.presentation);
    assert_eq!(h.ctx.zoom_factor(), PRESENTATION_ZOOM);
    assert!(h.query_by_label("File").is_none(), "menus hidden");
    assert!(h.query_by_label("Search").is_none(), "search hidden");
    assert!(h.query_by_label("Exit presentation (F5)").is_some());
    // Still the timeline, with most of the width for the events.
    let canvas = h.state().doc().expect("doc").timeline.canvas;
    assert!(
        canvas.width() >= 0.45 * 1280.0 / PRESENTATION_ZOOM,
        "{canvas:?} vs {rows_before:?}"
    );
    h.get_by_label("Exit presentation (F5)").click();
    h.run_steps(3);
    assert!(!h.state().prefs.presentation);
    assert_eq!(h.ctx.zoom_factor(), 1.0);
    assert!(h.query_by_label("File").is_some());
}

/// The details panel's width, from the timeline's right edge to the window's.
fn details_width(h: &Harness<'_, SightlineApp>) -> f32 {
    let screen = h.ctx.content_rect().right();
    screen - h.state().doc().expect("doc").timeline.canvas.right()
}

/// Presentation mode narrows the details panel while it lasts, never after:
/// F5 twice, with a lesson open too, gives the width back; and a number
/// in a narrow panel stays on one line.
#[test]
fn presentation_mode_does_not_shrink_the_details_panel_for_good() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1400.0,
        900.0,
    );
    let kernel = EventRef::new(Table::Kernel, 0);
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .select_event(Some(kernel));
    h.run_steps(3);
    let before = details_width(&h);
    for _ in 0..2 {
        h.key_press(egui::Key::F5);
        h.run_steps(3);
    }
    assert!(!h.state().prefs.presentation);
    let after = details_width(&h);
    assert!(
        (after - before).abs() < 1.0,
        "{before} → {after} after F5 twice"
    );

    // With a lesson open beside it, then closed.
    let lesson = sightline::lessons::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/lessons/01_sync_timing.toml"),
    )
    .expect("lesson 1");
    h.state_mut().lessons.start(lesson);
    for _ in 0..5 {
        h.run_steps(2);
        h.state_mut().wait_for_load();
    }
    h.key_press(egui::Key::F5);
    h.run_steps(3);
    // Presenting beside the lesson: the panel is narrow; its numbers are
    // still one line each.
    // (The lesson's step may have cleared the selection: select a kernel.)
    let doc_trace = h.state().doc().expect("doc").trace.clone();
    let sel = match h.state().doc().expect("doc").selection().event {
        Some(sel) => sel,
        None => {
            h.state_mut()
                .doc_mut()
                .expect("doc")
                .select_event(Some(kernel));
            h.run_steps(3);
            kernel
        }
    };
    assert!(h.state().lessons.run.is_some(), "the lesson is still open");
    // Resolved outside the fonts lock (the style needs the context).
    let font = egui::TextStyle::Body.resolve(&h.ctx.global_style());
    let line = h.ctx.fonts_mut(|f| f.row_height(&font));
    let mut checked = 0;
    for (key, value) in sel.fields(&doc_trace) {
        if !sightline::app::panels::details::is_number(&value) {
            continue;
        }
        if let Some(node) = h.query_all_by_label(&value).next() {
            let height = node.rect().height();
            assert!(height < line * 1.6, "{key} = {value} wraps ({height} px)");
            checked += 1;
        }
    }
    assert!(checked > 0, "some numbers of the details were checked");
    h.key_press(egui::Key::F5);
    h.run_steps(3);
    h.state_mut().lessons.run = None;
    h.run_steps(3);
    if h.state().doc().expect("doc").selection().event.is_none() {
        h.state_mut()
            .doc_mut()
            .expect("doc")
            .select_event(Some(kernel));
        h.run_steps(3);
    }
    let again = details_width(&h);
    assert!(
        (again - before).abs() < 1.0,
        "{before} → {again} after presenting beside a lesson"
    );
}

#[test]
fn the_theme_and_presentation_survive_a_restart() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1280.0,
        720.0,
    );
    h.state_mut().prefs.theme = Theme::Light;
    h.key_press(egui::Key::F5);
    h.run_steps(2);
    let mut storage = MemStorage::default();
    eframe::App::save(h.state_mut(), &mut storage);
    let again = SightlineApp::restore(Some(&storage));
    assert_eq!(again.prefs.theme, Theme::Light);
    assert!(again.prefs.presentation);
    let h = harness(again, 1280.0, 720.0);
    assert_eq!(
        h.ctx.theme(),
        egui::Theme::Light,
        "the light theme is applied"
    );
    assert_eq!(h.ctx.zoom_factor(), PRESENTATION_ZOOM);
}

/// A bad regex says so in one line of the menu bar (not over the tabs), and
/// the message goes when the query is edited away.
#[test]
fn a_bad_regex_error_stays_in_the_bar_and_goes_with_the_query() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1000.0,
        700.0,
    );
    h.get_by_label("regex").click();
    h.run_steps(2);
    h.get_by_label("Search").click();
    h.run_steps(2);
    h.get_by_label("Search").type_text("(unclosed");
    h.run_steps(1);
    h.key_press(egui::Key::Enter);
    h.run_steps(1);
    h.state_mut().wait_for_search();
    h.run_steps(2);
    assert!(h.state().doc().expect("doc").search.error.is_some());
    let shown = rect_of(&h, "bad regex");
    let next = rect_of(&h, ">");
    assert!(
        shown.bottom() <= next.bottom() + 2.0 && shown.top() >= next.top() - 2.0,
        "one line, in the bar: {shown:?} beside {next:?}"
    );
    h.get_by_label("Search").click();
    h.run_steps(2);
    for _ in 0.."(unclosed".len() {
        h.key_press(egui::Key::Backspace);
    }
    h.run_steps(2);
    assert!(h.state().doc().expect("doc").search.error.is_none());
    assert!(h.query_by_label("bad regex").is_none());
}

/// The reports open when the window closed come back when it starts with no
/// file, the one shown shown again.
#[test]
fn open_tabs_come_back_after_a_restart() {
    let (a, b) = (fixture("streams.sqlite"), fixture("sync_timing.sqlite"));
    let mut app = SightlineApp::default();
    for p in [&a, &b] {
        app.open(p.clone());
        app.wait_for_load();
    }
    app.switch_to(0);
    let mut storage = MemStorage::default();
    eframe::App::save(&mut app, &mut storage);

    let mut again = SightlineApp::restore(Some(&storage));
    assert_eq!(again.tab_count(), 0, "nothing opens by itself");
    assert!(again.reopen_last_session());
    again.wait_for_load();
    let names: Vec<String> = again
        .docs()
        .map(|d| {
            d.path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(names, ["streams.sqlite", "sync_timing.sqlite"]);
    assert_eq!(again.active_tab(), 0);
    // Asked again: the session was used up.
    assert!(!again.reopen_last_session());
}

/// With no desktop portal the native dialog answers at once with nothing:
/// the in-app browser opens, lists reports, and a click opens one.
#[test]
fn without_a_file_dialog_the_in_app_browser_opens_a_report() {
    let mut app = SightlineApp::default();
    app.no_file_chosen(std::time::Duration::from_millis(5));
    assert!(app.browser.open, "the browser took over");
    app.browser.show_at(&fixture("sync_timing.sqlite"));
    let mut h = harness(app, 1200.0, 800.0);
    assert!(
        h.query_by_label("README.md").is_none(),
        "only reports are listed"
    );
    // (Below the fixtures' folders, maybe out of the list's view: clicked as a screen reader
    // would.)
    h.get_by_label("sync_timing.sqlite").click_accesskit();
    h.run_steps(2);
    h.state_mut().wait_for_load();
    h.run_steps(2);
    assert!(!h.state().browser.open);
    let doc = h.state().doc().expect("the report opened");
    assert!(doc.path.ends_with("sync_timing.sqlite"));
    // A cancelled dialog (after a while) leaves the window alone.
    let mut app = SightlineApp::default();
    app.no_file_chosen(std::time::Duration::from_secs(5));
    assert!(!app.browser.open && app.error.is_none());
}

#[test]
fn the_browser_says_why_a_folder_cannot_be_listed() {
    let mut app = SightlineApp::default();
    app.browser.show_at(std::path::Path::new("/no/such/folder"));
    let h = harness(app, 1000.0, 700.0);
    assert!(
        h.query_by_label_contains("cannot list /no/such/folder")
            .is_some()
    );
}

/// A report opens on its GPU and NVTX work, not on the whole session around it
/// (start-up and tear-down); G comes back to it; Home shows everything.
#[test]
fn a_report_opens_on_its_activity_and_g_returns_to_it() {
    for name in ["sync_timing.sqlite", "streams.sqlite", "torch_work.sqlite"] {
        let trace = load(name);
        let gpu_and_nvtx = [
            &trace.kernels.spans,
            &trace.memcpys.spans,
            &trace.memsets.spans,
            &trace.nvtx.spans,
        ];
        let first = gpu_and_nvtx
            .iter()
            .filter_map(|t| t.start.iter().min())
            .min();
        let last = gpu_and_nvtx.iter().filter_map(|t| t.ends().max()).max();
        let (first, last) = (*first.expect("work") as f64, last.expect("work") as f64);
        let mut app = SightlineApp::with_trace(trace);
        // The findings' own first view is not what is tested here.
        app.doc_mut().expect("doc").findings.focus_on_arrival = false;
        let mut h = harness(app, 1400.0, 900.0);
        let view = |h: &Harness<'_, SightlineApp>| {
            let v = &h.state().doc().expect("doc").timeline.view;
            (v.start, v.end)
        };
        let (s, e) = view(&h);
        assert!(s <= first && last <= e, "{name}: the work is in view");
        assert!(e - s <= (last - first) * 1.1, "{name}: and fills it");
        h.key_press(egui::Key::Home);
        h.run_steps(2);
        let (lo, hi) = h.state().doc().expect("doc").timeline.limits();
        assert_eq!(view(&h), (lo, hi), "{name}: Home shows the session");
        h.key_press(egui::Key::G);
        h.run_steps(2);
        assert_eq!(view(&h), (s, e), "{name}: G comes back to the work");
    }
}

#[test]
fn go_to_time_centers_the_view_there() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1400.0,
        900.0,
    );
    h.get_by_label("View").click();
    h.run_steps(2);
    let span = h.state().doc().expect("doc").timeline.view.span();
    h.get_by_label("Go to time:").click();
    h.run_steps(1);
    h.get_by_label("Go to time:").type_text("524.8 ms");
    h.run_steps(1);
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    let v = &h.state().doc().expect("doc").timeline.view;
    assert!(
        ((v.start + v.end) / 2.0 - 524.8e6).abs() < 1.0,
        "{} {}",
        v.start,
        v.end
    );
    assert!((v.span() - span).abs() < 1.0, "the zoom is kept");
    // Nonsense is said, not guessed at.
    h.get_by_label("Go to time:").click();
    h.run_steps(1);
    h.get_by_label("Go to time:").type_text("x");
    h.run_steps(1);
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert!(h.query_by_label_contains("is not a time").is_some());
}

#[test]
fn times_are_read_with_their_units() {
    use sightline::app::widgets::format::parse_time;
    assert_eq!(parse_time("524.8 ms"), Ok(524.8e6));
    assert_eq!(parse_time("3s"), Ok(3e9));
    assert_eq!(parse_time("12 us"), Ok(12e3));
    assert_eq!(parse_time("12 µs"), Ok(12e3));
    assert_eq!(parse_time("524,800,000"), Ok(524.8e6));
    assert_eq!(parse_time("1_000 ns"), Ok(1000.0));
    assert!(parse_time("ms").is_err() && parse_time("").is_err() && parse_time("inf").is_err());
}

#[test]
fn question_mark_opens_the_help_unless_typing() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        1400.0,
        900.0,
    );
    h.key_press(egui::Key::Questionmark);
    h.run_steps(2);
    assert!(h.query_by_label("Keys and mouse").is_some());
}

/// The range panel in a small window: its heading (span, the `--range` to copy, the time it
/// took), the rule's explanation and every report tab wrap inside the space beside the details
/// panel, instead of running under it.
#[test]
fn the_range_panel_wraps_beside_the_details_in_a_small_window() {
    let mut h = harness(
        SightlineApp::with_trace(load("sync_timing.sqlite")),
        800.0,
        500.0,
    );
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        let (lo, hi) = doc.trace.activity_span().expect("GPU work");
        doc.select_range(lo, hi);
        doc.stats.wait();
    }
    h.run_steps(4);
    let details_left = rect_of(&h, "Report").left();
    let mut checked = 0;
    for needle in [
        "Copy --range",
        "computed in",
        "events that start in the range",
        "CUDA GPU MemOps Summary",
        "CUDA Summary",
    ] {
        let mut found = false;
        for node in h.query_all_by_label_contains(needle) {
            let r = node.rect();
            assert!(
                r.right() <= details_left + 1.0,
                "'{needle}' runs under the details panel: {r:?}, panel at {details_left}"
            );
            found = true;
        }
        assert!(found, "'{needle}' is shown");
        checked += 1;
    }
    assert_eq!(checked, 5);
}
