//! The lesson frame as the window runs it: a lesson steps through reports, opening their tabs,
//! recording captures and setting each document's view; the panel itself (panels/lesson_panel.rs)
//! only draws the text and returns what was clicked.

use super::{SightlineApp, Tab, same_file};
use crate::app::document::Document;
use crate::app::panels::capture_panel::Live;
use crate::app::panels::lesson_panel::*;
use crate::app::state::events::{EventRef, Table};
use crate::app::widgets::format::file_name;
use crate::capture::environment;
use crate::lessons::{self, LessonCapture, LessonError, Shown, View};
use eframe::egui::{self, Key, Modifiers, Ui};
use std::path::{Path, PathBuf};

/// Whether the lesson panel belongs in the tab shown: one of the lesson's
/// tabs, a report still being read, or while a step waits to be shown (it
/// is about to switch tabs). Another report's tab shows no lesson; going
/// back to a lesson's tab shows it again where it was.
pub fn belongs_to_shown_tab(app: &SightlineApp) -> bool {
    let Some(run) = &app.lessons.run else {
        return app.lessons.broken.is_some();
    };
    match app.tabs.get(app.active) {
        Some(Tab::Ready(doc)) => run.pending || run.owns(&doc.path) || doc.is_loading(),
        Some(Tab::Compare(_) | Tab::Job(_)) => false,
        Some(Tab::Loading(_)) | None => true,
    }
}

/// Shows the lesson (once per frame, before the report's panels): applies a
/// step whose report is open, draws the panel, takes Back/Next.
pub fn frame(app: &mut SightlineApp, ui: &mut Ui) {
    if app.lessons.run.is_none() && app.lessons.broken.is_none() {
        if !app.lessons.saved.is_empty() {
            restore_rows(app);
        }
        return;
    }
    apply_pending(app);
    if !belongs_to_shown_tab(app) {
        return;
    }
    let loading = app.is_loading();
    let mut action = None;
    // A share of the window, so the timeline keeps the most of a projector's
    // 1280×720 at presentation zoom; wider when the step's text needs it to be read whole.
    let width = ui.available_width();
    let max = (width * 0.4).max(200.0);
    let (needed, text_size) = fit_text(app, ui, 200.0, max);
    egui::Panel::left("lesson")
        .default_size((width * 0.26).clamp(200.0, 330.0).max(needed))
        .min_size(needed)
        .max_size(max)
        .resizable(true)
        .show(ui, |ui| {
            action = panel(&app.lessons, loading, text_size, ui)
        });
    // ← → and PageUp/PageDown, unless a text box (or any widget) has the keys.
    if let Some(run) = &app.lessons.run
        && !ui.ctx().egui_wants_keyboard_input()
    {
        let (next, back) = ui.input_mut(|i| {
            (
                i.consume_key(Modifiers::NONE, Key::ArrowRight)
                    || i.consume_key(Modifiers::NONE, Key::PageDown),
                i.consume_key(Modifiers::NONE, Key::ArrowLeft)
                    || i.consume_key(Modifiers::NONE, Key::PageUp),
            )
        });
        if next && run.step + 1 < run.lesson.steps.len() {
            action = Some(Action::Go(run.step + 1));
        } else if back && run.step > 0 {
            action = Some(Action::Go(run.step - 1));
        }
    }
    match action {
        Some(Action::Go(i)) => {
            app.lessons.go(i);
            ui.ctx().request_repaint();
        }
        Some(Action::Close) => {
            app.lessons.close_requested();
            restore_rows(app);
        }
        None => {}
    }
    if app.lessons.is_pending() {
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_millis(50));
    }
}

/// The narrowest panel width, from `least` to `most`, at which the step is read without a
/// scroll, and the size of its text: the lesson's own, or smaller where even `most` is too
/// narrow for a long step (a projector's 1280×720).
fn fit_text(app: &SightlineApp, ui: &Ui, least: f32, most: f32) -> (f32, f32) {
    // The panel's frame and a floating scroll bar take this much of its width; what the
    // estimate may miss (a label's own spacing), this much of its height.
    const MARGINS: f32 = 24.0;
    const SLACK: f32 = 30.0;
    let height = ui.available_height() - SLACK;
    let fits =
        |width: f32, size: f32| contents_height(&app.lessons, ui, width - MARGINS, size) <= height;
    for size in [TEXT_SIZE, TEXT_SIZE - 1.0, TEXT_SIZE - 2.0] {
        let mut width = least;
        while width < most && !fits(width, size) {
            width += 10.0;
        }
        if fits(width.min(most), size) {
            return (width.min(most), size);
        }
    }
    (most, TEXT_SIZE - 2.0)
}

/// Applies the current step when its report is the tab shown; opens it
/// first when it is not.
fn apply_pending(app: &mut SightlineApp) {
    let Some(run) = app.lessons.run.as_mut() else {
        return;
    };
    if !run.pending {
        return;
    }
    let Some(step) = run.lesson.steps.get(run.step) else {
        run.pending = false;
        return;
    };
    let (report, line, number, asked_open) =
        (step.report.clone(), step.line, run.step + 1, run.asked_open);
    let lesson_path = run.lesson.path.clone();
    let report = match step.capture.clone() {
        None => report,
        Some(capture) => match live_step(app, &capture, &report) {
            Shows::Recording => return,
            Shows::Capture(tab) => tab,
            Shows::Report => report,
        },
    };
    if !app.doc().is_some_and(|d| same_file(&d.path, &report)) {
        let exists = app.tabs.iter().any(|t| same_file(t.path(), &report));
        let failure = (asked_open && !exists).then(|| LessonError {
            path: lesson_path,
            line: Some(line),
            message: format!(
                "step {number}: cannot open {}: {}",
                report.display(),
                app.error
                    .clone()
                    .unwrap_or_else(|| "its tab was closed".into())
            ),
        });
        let loading = app
            .tabs
            .get(app.active)
            .is_some_and(|t| t.is_loading() && same_file(t.path(), &report));
        if failure.is_none() && !loading {
            // Opens it, or shows its tab when it is already open.
            app.open(report);
        }
        if let Some(run) = app.lessons.run.as_mut() {
            run.asked_open = true;
            if let Some(e) = failure {
                // The tab closed: the report failed to load (or was closed).
                run.pending = false;
                run.error = Some(e);
            }
        }
        return;
    }
    let Some(mut run) = app.lessons.run.take() else {
        return;
    };
    let saved = &mut app.lessons.saved;
    // A step acts on the whole report, not on a snapshot of one being read.
    let Some(doc) = app.tabs.get_mut(app.active).and_then(|t| match t {
        Tab::Ready(d) if !d.is_loading() => Some(d),
        Tab::Ready(_) | Tab::Loading(_) | Tab::Compare(_) | Tab::Job(_) => None,
    }) else {
        app.lessons.run = Some(run);
        return;
    };
    if !app_saved(saved, &doc.path) {
        let view = &doc.timeline.view;
        let rows = SavedRows {
            collapsed: view.collapsed.clone(),
            hidden: view.hidden.clone(),
            show_projection: view.show_projection,
        };
        saved.push((doc.path.clone(), rows));
    }
    let rows = row_names(&doc.timeline.rows);
    match lessons::resolve(&run.lesson, run.step, &doc.trace, &rows) {
        Ok(shown) => {
            show(doc, &shown);
            if shown.findings_panel
                && let Some(step) = run.lesson.steps.get(run.step)
            {
                doc.findings.reveal = Some(group_named_in(&step.text));
            }
            run.error = None;
        }
        Err(e) => run.error = Some(e),
    }
    run.pending = false;
    app.lessons.run = Some(run);
}

/// Starts the step's capture (once per lesson run), shows its tab while it records, and says
/// where the step is shown; the panel's note says what happens.
fn live_step(app: &mut SightlineApp, capture: &LessonCapture, report: &Path) -> Shows {
    let Some(run) = app.lessons.run.as_mut() else {
        return Shows::Report;
    };
    let name = capture.benchmark.name;
    let unavailable = run
        .live_unavailable
        .get_or_insert_with(|| environment::check_cupti().err().map(|e| e.to_string()))
        .clone();
    if let Some(reason) = unavailable {
        run.note = Some(format!(
            "This step shows {}, a capture of {name} made earlier. No live capture here: \
             {reason}.",
            file_name(report)
        ));
        return Shows::Report;
    }
    let started = run
        .captures
        .iter()
        .find(|(c, _)| c == capture)
        .map(|(_, tab)| tab.clone());
    let tab = started.and_then(|path| app.tabs.iter().position(|t| t.path() == path));
    let Some(index) = tab else {
        // Not started yet, or its tab was closed: (re)start it.
        let tab = app.start_capture(
            capture.benchmark,
            capture.params.clone(),
            capture.counters.clone(),
        );
        if let Some(run) = app.lessons.run.as_mut() {
            run.captures.retain(|(c, _)| c != capture);
            run.captures.push((capture.clone(), tab));
            run.note = Some(recording_note(name));
        }
        return Shows::Recording;
    };
    app.switch_to(index);
    let Some(Tab::Ready(doc)) = app.tabs.get(index) else {
        return Shows::Recording;
    };
    let live = doc.live.as_ref();
    let (shows, note) = if live.is_some_and(Live::is_running) {
        (Shows::Recording, recording_note(name))
    } else if let Some(problem) = live
        .and_then(|l| l.problem.as_ref())
        .filter(|_| doc.trace.event_count() == 0)
    {
        let note = format!(
            "This step shows {}, a capture of {name} made earlier. The live capture failed: \
             {problem}",
            file_name(report)
        );
        (Shows::Report, note)
    } else {
        let note = format!(
            "Captured live on this machine: {name}, {} events (its result table: Output, \
             above the timeline).",
            doc.trace.event_count()
        );
        (Shows::Capture(doc.path.clone()), note)
    };
    if let Some(run) = app.lessons.run.as_mut() {
        run.note = Some(note);
    }
    shows
}

fn app_saved(saved: &[(PathBuf, SavedRows)], path: &Path) -> bool {
    saved.iter().any(|(p, _)| p == path)
}

/// Gives each report the rows and projection it had before the lesson.
fn restore_rows(app: &mut SightlineApp) {
    let saved = std::mem::take(&mut app.lessons.saved);
    for tab in &mut app.tabs {
        let Tab::Ready(doc) = tab else { continue };
        if let Some((_, rows)) = saved.iter().find(|(p, _)| p == &doc.path) {
            doc.timeline.view.collapsed = rows.collapsed.clone();
            doc.timeline.view.hidden = rows.hidden.clone();
            doc.timeline.view.show_projection = rows.show_projection;
        }
    }
}

/// Sets the view of `doc` to what a step shows: rows, range, highlighted
/// names, selection, zoom, panels. Everything a step does not name is reset,
/// so Back shows a step exactly as Next did.
pub fn show(doc: &mut Document, shown: &Shown) {
    let trace = doc.trace.clone();
    let key = |i: &usize| doc.timeline.rows.get(*i).map(|r| r.key.clone());
    let collapsed = shown.collapsed.iter().filter_map(key).collect();
    let hidden = shown.hidden.iter().filter_map(key).collect();
    let view = &mut doc.timeline.view;
    view.collapsed = collapsed;
    view.hidden = hidden;
    view.show_projection = shown.nvtx_on_gpu;
    view.scroll_y = 0.0;
    // The findings must not move the view when they arrive after the step.
    doc.findings.focus_on_arrival = false;
    match shown.range {
        Some((s, e)) => doc.select_range(s, e),
        None => doc.clear_range(),
    }
    match &shown.search {
        Some(s) => {
            doc.search.query = s.query.clone();
            doc.search.regex = s.regex;
            doc.search.run(&trace);
        }
        None => doc.search.clear(),
    }
    let selected = shown.select.map(EventRef::from);
    doc.select_event(selected);
    match shown.view {
        Some(View::All) => doc.timeline.fit_all(),
        Some(View::Span(s, e)) => doc.timeline.zoom_to(s as f64, e as f64),
        Some(View::Around(..)) => {
            if let Some(ev) = selected {
                doc.reveal_event(ev);
            }
        }
        None => {}
    }
    doc.findings.open = shown.findings_panel;
    let kernel = selected
        .filter(|ev| shown.kernel_panel && ev.table == Table::Kernel)
        .and_then(|ev| trace.kernels.spans.name.get(ev.index as usize).copied());
    match kernel {
        Some(name) => {
            doc.kernel.unpin();
            doc.open_kernel(name);
        }
        None => doc.kernel.close(),
    }
}

impl SightlineApp {
    /// The lesson frame around the shown tab, and the lesson's pending steps applied.
    pub(super) fn lesson_frame(&mut self, ui: &mut Ui) {
        frame(self, ui);
    }

    /// Whether the lesson under way is about the shown tab's report.
    pub(super) fn lesson_is_on_shown_tab(&self) -> bool {
        belongs_to_shown_tab(self)
    }
}
