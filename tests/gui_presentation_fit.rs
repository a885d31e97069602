//! Every step of every bundled lesson, in presentation mode on a projector's 1280×720, on
//! 1600×1000 and on 1920×1080 (issue 45): the timeline keeps a real share of the window and
//! nothing covers it, the lesson's title, text and question are on screen whole, and no text of
//! any panel is cut by the edge of the panel, the window or a scroll area, elided, or wrapped a
//! few characters a line. Checked on what the frame really paints (egui's text shapes and their clip rects),
//! not on the layout code's intentions.

use std::path::Path;
use std::sync::Arc;

use eframe::egui::{self, Order, Pos2, Rect, Shape, vec2};
use eframe::epaint::{ClippedShape, Galley};
use egui_kittest::Harness;
use sightline::app::SightlineApp;
use sightline::lessons::{self, Lesson};

/// The window sizes a lesson is given in presentation mode: a projector's, a laptop's (where
/// numbers were still cut), a large screen's.
const SIZES: [(f32, f32); 3] = [(1280.0, 720.0), (1600.0, 1000.0), (1920.0, 1080.0)];

/// What the timeline's events keep at least, as shares of the window (in points).
const MIN_TIMELINE_WIDTH: f32 = 0.4;
const MIN_TIMELINE_HEIGHT: f32 = 0.3;

/// Slack for anti-aliasing and rounding, in points.
const SLACK: f32 = 1.5;

fn load_lesson(name: &str) -> Lesson {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/lessons")
        .join(name);
    lessons::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Frames until the step's report is read, its step applied and its panels computed.
fn settle(h: &mut Harness<'_, SightlineApp>) {
    for _ in 0..50 {
        h.run_steps(2);
        h.state_mut().wait_for_load();
        h.state_mut().wait_for_captures();
        if let Some(doc) = h.state_mut().doc_mut() {
            let trace = doc.trace.clone();
            doc.kernel.wait(&trace);
            doc.wait_for_findings();
        }
        h.run_steps(3);
        if !h.state().lessons.is_pending() {
            return;
        }
    }
    panic!("the step was never shown");
}

/// Every text the frame painted: its clip rect, where its glyphs are, and its galley.
fn texts(shapes: &[ClippedShape]) -> Vec<(Rect, Rect, Arc<Galley>)> {
    fn walk(clip: Rect, shape: &Shape, out: &mut Vec<(Rect, Rect, Arc<Galley>)>) {
        match shape {
            Shape::Text(t) => out.push((clip, shape.visual_bounding_rect(), t.galley.clone())),
            Shape::Vec(v) => v.iter().for_each(|s| walk(clip, s, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for s in shapes {
        walk(s.clip_rect, &s.shape, &mut out);
    }
    out
}

/// Whether `pos` shows a panel (the window's background layer), not a window floating over it.
fn on_a_panel(ctx: &egui::Context, pos: Pos2) -> bool {
    ctx.layer_id_at(pos)
        .is_none_or(|layer| layer.order == Order::Background)
}

/// The checks, on the frame just painted; `at` names the lesson, step and size. Returns what
/// does not fit (all of it, so that one run shows every problem).
fn misfits(h: &Harness<'_, SightlineApp>, lesson: &Lesson, step: usize, at: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut check = |ok: bool, problem: String| {
        if !ok {
            problems.push(problem);
        }
    };
    let screen = h.ctx.content_rect();
    let app = h.state();
    let doc = app.doc().expect("the step's report is shown");

    // The timeline: a real share of the window, on screen, and nothing over it.
    let canvas = doc.timeline.canvas.intersect(screen);
    check(
        canvas.width() >= MIN_TIMELINE_WIDTH * screen.width()
            && canvas.height() >= MIN_TIMELINE_HEIGHT * screen.height(),
        format!("{at}: the timeline's events get {canvas:?} of {screen:?}"),
    );
    for pos in [canvas.center(), canvas.left_top() + vec2(4.0, 4.0)] {
        check(
            on_a_panel(&h.ctx, pos),
            format!("{at}: a window covers the timeline at {pos:?}"),
        );
    }
    // The selected event is in view, and no panel hides it.
    if let Some(ev) = doc.selection().event {
        let pos = doc
            .timeline
            .event_pos(&doc.trace, ev)
            .unwrap_or_else(|| panic!("{at}: the selected event is drawn"));
        check(
            canvas.contains(pos) && on_a_panel(&h.ctx, pos),
            format!("{at}: the selected event at {pos:?} is hidden ({canvas:?})"),
        );
    }

    let painted = texts(&h.output().shapes);
    // The lesson's title, each paragraph and the question: painted whole, on screen.
    let step_def = &lesson.steps[step];
    let mut wanted: Vec<String> = vec![lesson.title.clone(), step_def.title.clone()];
    wanted.extend(
        step_def
            .text
            .split("\n\n")
            .chain(step_def.question.as_deref())
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|p| !p.is_empty()),
    );
    for text in &wanted {
        let shown = painted.iter().find(|(_, _, g)| g.job.text == *text);
        let Some((clip, bounds, _)) = shown else {
            check(false, format!("{at}: not painted: {text:?}"));
            continue;
        };
        let visible = clip.intersect(screen).expand(SLACK);
        check(
            visible.contains_rect(*bounds),
            format!("{at}: cut: {bounds:?} outside {clip:?}: {text:?}"),
        );
    }

    // Every text of every panel: inside its clip rect and the window sideways (a scroll area
    // may hide rows below, never the end of a line), not elided, not wrapped to a few
    // characters a line. The timeline's own labels are its business (it clips them to its rows,
    // its boxes and its ruler).
    for (clip, bounds, galley) in &painted {
        let visible = clip.intersect(screen);
        if !visible.intersects(*bounds) || galley.job.text.trim().is_empty() {
            continue;
        }
        let text = &galley.job.text;
        let center = bounds.center();
        let area = doc.timeline.area.expand(SLACK);
        let timelines_own = area.contains_rect(*clip) || area.intersects(*bounds);
        if timelines_own && on_a_panel(&h.ctx, center) {
            continue;
        }
        // The range's statistics are nsys's tables, wider than a projector: they scroll
        // sideways (their names are another matter: issue 45, the details list).
        if doc
            .range_stats_area
            .is_some_and(|r| r.expand(SLACK).contains_rect(*clip))
        {
            continue;
        }
        check(
            bounds.left() >= visible.left() - SLACK && bounds.right() <= visible.right() + SLACK,
            format!("{at}: cut sideways: {bounds:?} beyond {visible:?}: {text:?}"),
        );
        check(
            !galley.elided,
            format!("{at}: elided: {bounds:?} in {clip:?} (timeline {area:?}): {text:?}"),
        );
        let rows = galley.rows.len();
        let chars = text.chars().count();
        check(
            rows < 3 || chars / rows >= 10,
            format!("{at}: {chars} characters wrapped to {rows} lines: {text:?}"),
        );
    }
    problems
}

fn walk_lesson(lesson: &Lesson) {
    let mut app = SightlineApp::default();
    app.lessons.start(lesson.clone());
    let (w, h) = SIZES[0];
    let mut h = Harness::builder()
        .with_size(vec2(w, h))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(1);
    let ctx = h.ctx.clone();
    h.state_mut().prefs.set_presentation(&ctx, true);
    settle(&mut h);
    let mut problems = Vec::new();
    // The harness's size is in points, which egui's zoom does not change (a real window's
    // are its pixels over the zoom): the window of `w`×`hh` pixels at presentation zoom.
    let zoom = h.ctx.zoom_factor();
    assert!(zoom > 1.0, "presentation enlarges");
    for (w, hh) in SIZES {
        h.set_size(vec2(w, hh) / zoom);
        for step in 0..lesson.steps.len() {
            h.state_mut().lessons.go(step);
            settle(&mut h);
            assert!(h.state().prefs.presentation);
            let at = format!("{} step {} at {w}×{hh}", lesson.title, step + 1);
            problems.extend(misfits(&h, lesson, step, &at));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// One test a lesson, so that they run side by side.
macro_rules! fits {
    ($($test:ident: $file:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            walk_lesson(&load_lesson($file));
        }
    )*};
}

fits! {
    lesson_1_fits_a_projector_and_larger_screens: "01_sync_timing.toml",
    lesson_2_fits_a_projector_and_larger_screens: "02_pinned_pageable.toml",
    lesson_3_fits_a_projector_and_larger_screens: "03_gemm_tensor_cores.toml",
    lesson_4_fits_a_projector_and_larger_screens: "04_launch_overhead_graphs.toml",
    lesson_5_fits_a_projector_and_larger_screens: "05_nvtx_layers.toml",
}

/// Every bundled lesson is walked above.
#[test]
fn every_bundled_lesson_is_checked() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/lessons");
    assert_eq!(
        lessons::load_dir(&dir).len(),
        5,
        "a new lesson needs its test above"
    );
}
