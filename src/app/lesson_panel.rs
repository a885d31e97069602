//! The lesson panel: a guided walk through real reports (issue #10, teaching).
//! The Lessons menu lists the bundled lessons (`assets/lessons/*.toml`) and
//! opens others by path; the panel on the left shows the step's text and
//! question, with Back and Next (also ← → and PageUp/PageDown while no text
//! box has the keyboard). Each step opens its report and sets the view
//! through the same `Document` methods a click uses; what a step names is
//! found by [`crate::lessons::resolve`], and a target that is not in the
//! report is an error shown in the panel.
//!
//! A step may capture a benchmark live (`capture = "sync-timing"`): where a GPU and CUPTI are
//! there, the capture runs once per lesson run in its own tab, the timeline grows while it
//! records, and the step is shown in it when it has finished; elsewhere (or when it fails) the
//! step's report is shown, and the panel says why.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use eframe::egui::{self, Color32, Key, Modifiers, RichText, Ui};

use super::capture_panel::Live;
use super::events::{EventRef, Table};
use super::format::file_name;
use super::timeline::rows::{Row, RowKind};
use super::{Document, SightlineApp, Tab, same_file};
use crate::analysis::findings::FindingKind;
use crate::capture::environment;
use crate::lessons::{self, Lesson, LessonCapture, LessonError, RowName, Shown, View};

/// The lessons menu, the lesson being followed and its panel.
#[derive(Default)]
pub struct Lessons {
    /// The bundled lessons, read when the menu first opens (Reload reads again).
    catalog: Option<Vec<Result<Lesson, LessonError>>>,
    /// The path box of "Open lesson file".
    path: String,
    /// The lesson being followed.
    pub run: Option<Run>,
    /// A lesson file that could not be read, shown in the panel until closed.
    pub broken: Option<LessonError>,
    /// Rows and projection of each report as they were before the lesson
    /// changed them: given back when the lesson closes.
    saved: Vec<(PathBuf, SavedRows)>,
}

struct SavedRows {
    collapsed: BTreeSet<String>,
    hidden: BTreeSet<String>,
    show_projection: bool,
}

/// A lesson and the step shown.
pub struct Run {
    pub lesson: Lesson,
    pub step: usize,
    /// The step is applied once its report is open and shown.
    pending: bool,
    /// The step's report was asked to open (a tab that vanishes after that
    /// failed to load).
    asked_open: bool,
    /// What is wrong with this step in its report.
    pub error: Option<LessonError>,
    /// What the panel says of where this step's events come from (a live capture recording,
    /// or the report shown because none could be made).
    pub note: Option<String>,
    /// The captures this run started, and the tabs they record in.
    captures: Vec<(LessonCapture, PathBuf)>,
    /// Why no live capture can be made here (asked once a run): `Some(None)` when one can.
    live_unavailable: Option<Option<String>>,
}

impl Run {
    /// Whether `path` is one of this lesson's tabs: a step's report or a
    /// capture it recorded.
    fn owns(&self, path: &Path) -> bool {
        self.lesson.steps.iter().any(|s| same_file(&s.report, path))
            || self.captures.iter().any(|(_, p)| p == path)
    }
}

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
        Some(Tab::Compare(_)) => false,
        Some(Tab::Loading(_)) | None => true,
    }
}

impl Lessons {
    /// Starts `lesson` at its first step.
    pub fn start(&mut self, lesson: Lesson) {
        self.broken = None;
        self.run = Some(Run {
            lesson,
            step: 0,
            pending: true,
            asked_open: false,
            error: None,
            note: None,
            captures: Vec::new(),
            live_unavailable: None,
        });
    }

    /// Reads the lesson in `path` and starts it; a file that cannot be used
    /// is shown in the panel, with its line.
    pub fn open_file(&mut self, path: &Path) {
        match lessons::load(path) {
            Ok(lesson) => self.start(lesson),
            Err(e) => {
                self.run = None;
                self.broken = Some(e);
            }
        }
    }

    /// Whether a lesson (or a lesson's error) is shown.
    pub fn is_open(&self) -> bool {
        self.run.is_some() || self.broken.is_some()
    }

    /// Index of the step shown.
    pub fn step(&self) -> Option<usize> {
        self.run.as_ref().map(|r| r.step)
    }

    /// Whether the current step still waits for its report.
    pub fn is_pending(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.pending)
    }

    /// Moves to step `i` (clamped to the lesson).
    pub fn go(&mut self, i: usize) {
        if let Some(run) = &mut self.run {
            let i = i.min(run.lesson.steps.len().saturating_sub(1));
            run.step = i;
            run.pending = true;
            run.asked_open = false;
            run.error = None;
            run.note = None;
        }
    }

    pub fn next(&mut self) {
        if let Some(step) = self.step() {
            self.go(step + 1);
        }
    }

    pub fn back(&mut self) {
        if let Some(step) = self.step() {
            self.go(step.saturating_sub(1));
        }
    }

    /// The Lessons menu: the bundled lessons, a path box, Close.
    pub fn menu(&mut self, ui: &mut Ui) {
        // The path box needs clicks inside the menu.
        let config = egui::containers::menu::MenuConfig::new()
            .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
        egui::containers::menu::MenuButton::new("Lessons")
            .config(config)
            .ui(ui, |ui| {
                let catalog = self.catalog.get_or_insert_with(read_catalog);
                let mut chosen = None;
                let mut broken = None;
                if catalog.is_empty() {
                    ui.weak("No bundled lessons found (assets/lessons).");
                }
                for (i, entry) in catalog.iter().enumerate() {
                    match entry {
                        Ok(lesson) => {
                            let r = ui.button(&lesson.title).on_hover_text(
                                if lesson.about.is_empty() {
                                    lesson.path.display().to_string()
                                } else {
                                    lesson.about.clone()
                                },
                            );
                            if r.clicked() {
                                chosen = Some(i);
                            }
                        }
                        Err(e) => {
                            let name = file_name(&e.path);
                            let text = RichText::new(format!("{name} (cannot be used)"))
                                .color(ERROR_COLOR);
                            if ui.button(text).on_hover_text(e.to_string()).clicked() {
                                broken = Some(e.clone());
                            }
                        }
                    }
                }
                if let Some(i) = chosen
                    && let Some(Ok(lesson)) = catalog.get(i)
                {
                    let lesson = lesson.clone();
                    self.start(lesson);
                    ui.close();
                }
                if let Some(e) = broken {
                    self.run = None;
                    self.broken = Some(e);
                    ui.close();
                }
                ui.separator();
                ui.horizontal(|ui| {
                    let label = ui.label("Open lesson file:");
                    let r = ui
                        .text_edit_singleline(&mut self.path)
                        .labelled_by(label.id)
                        .on_hover_text("a lesson .toml (Enter opens it)");
                    if r.lost_focus()
                        && ui.input(|i| i.key_pressed(Key::Enter))
                        && !self.path.trim().is_empty()
                    {
                        let path = PathBuf::from(self.path.trim());
                        self.open_file(&path);
                        ui.close();
                    }
                });
                ui.horizontal(|ui| {
                    if ui
                        .button("Reload lessons")
                        .on_hover_text("read assets/lessons again (after editing a lesson)")
                        .clicked()
                    {
                        self.catalog = Some(read_catalog());
                    }
                    if ui
                        .add_enabled(self.is_open(), egui::Button::new("Close lesson"))
                        .clicked()
                    {
                        self.close_requested();
                        ui.close();
                    }
                });
            });
    }

    fn close_requested(&mut self) {
        self.run = None;
        self.broken = None;
    }
}

fn read_catalog() -> Vec<Result<Lesson, LessonError>> {
    lessons::bundled_dir()
        .map(|d| lessons::load_dir(&d))
        .unwrap_or_default()
}

const ERROR_COLOR: Color32 = Color32::from_rgb(255, 110, 90);
const QUESTION_COLOR: Color32 = Color32::from_rgb(250, 200, 90);
const NOTE_COLOR: Color32 = Color32::from_rgb(120, 180, 255);

/// What the panel's buttons asked for.
enum Action {
    Go(usize),
    Close,
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
    // 1280×720 at presentation zoom.
    let width = ui.available_width();
    egui::Panel::left("lesson")
        .default_size((width * 0.26).clamp(200.0, 330.0))
        .min_size(200.0)
        .max_size((width * 0.4).max(200.0))
        .resizable(true)
        .show(ui, |ui| action = panel(&app.lessons, loading, ui));
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

/// The panel's contents; returns what a button asked for.
fn panel(lessons: &Lessons, loading: bool, ui: &mut Ui) -> Option<Action> {
    let mut action = None;
    let Some(run) = &lessons.run else {
        ui.heading("Lesson");
        if let Some(e) = &lessons.broken {
            ui.colored_label(ERROR_COLOR, "This lesson cannot be used:");
            ui.add(egui::Label::new(RichText::new(e.to_string()).color(ERROR_COLOR)).wrap());
        }
        if ui.button("Close lesson").clicked() {
            action = Some(Action::Close);
        }
        return action;
    };
    let steps = run.lesson.steps.len();
    let step = &run.lesson.steps[run.step.min(steps - 1)];
    ui.add_space(4.0);
    ui.label(RichText::new(&run.lesson.title).heading().strong());
    ui.label(RichText::new(format!("Step {} of {steps}", run.step + 1)).weak());
    ui.add(egui::Label::new(RichText::new(&step.title).size(16.0).strong()).wrap());
    ui.separator();
    // Back, Next and Close stay at the bottom, whatever the text's length.
    egui::Panel::bottom("lesson_buttons")
        .show_separator_line(true)
        .show(ui, |ui| {
            ui.add_space(4.0);
            ui.horizontal(|ui| {
                if ui
                    .add_enabled(run.step > 0, egui::Button::new("< Back"))
                    .on_hover_text("previous step (Left arrow or PageUp)")
                    .clicked()
                {
                    action = Some(Action::Go(run.step - 1));
                }
                if ui
                    .add_enabled(run.step + 1 < steps, egui::Button::new("Next >"))
                    .on_hover_text("next step (Right arrow or PageDown)")
                    .clicked()
                {
                    action = Some(Action::Go(run.step + 1));
                }
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    if ui.button("Close lesson").clicked() {
                        action = Some(Action::Close);
                    }
                });
            });
            ui.weak("Left/Right arrow or PageUp/PageDown: steps");
        });
    egui::ScrollArea::vertical()
        .auto_shrink(false)
        .show(ui, |ui| {
            if run.pending && run.note.is_none() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    let name = file_name(&step.report);
                    ui.label(if loading {
                        format!("Opening {name}…")
                    } else {
                        format!("Showing {name}…")
                    });
                });
            }
            if let Some(note) = &run.note {
                ui.horizontal(|ui| {
                    if run.pending {
                        ui.spinner();
                    }
                    ui.add(egui::Label::new(RichText::new(note).color(NOTE_COLOR)).wrap());
                });
                ui.add_space(6.0);
            }
            if let Some(e) = &run.error {
                ui.add(
                    egui::Label::new(
                        RichText::new(format!("This step cannot be shown: {e}")).color(ERROR_COLOR),
                    )
                    .wrap(),
                );
                ui.add_space(6.0);
            }
            // Paragraphs are separated by blank lines in the file.
            for paragraph in step.text.split("\n\n") {
                let text = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
                if !text.is_empty() {
                    ui.add(egui::Label::new(RichText::new(text).size(14.5)).wrap());
                    ui.add_space(6.0);
                }
            }
            if let Some(q) = &step.question {
                ui.add_space(4.0);
                egui::Frame::group(ui.style()).show(ui, |ui| {
                    ui.label(RichText::new("Question").color(QUESTION_COLOR).strong());
                    let text = q.split_whitespace().collect::<Vec<_>>().join(" ");
                    ui.add(egui::Label::new(RichText::new(text).size(14.5).italics()).wrap());
                });
            }
        });
    action
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
        Tab::Ready(_) | Tab::Loading(_) | Tab::Compare(_) => None,
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

/// Where a step with a live capture is shown.
enum Shows {
    /// The capture still records (or was just started): the step waits.
    Recording,
    /// The capture has finished in this tab.
    Capture(PathBuf),
    /// No capture can be made here, or it failed: the step's report instead.
    Report,
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

fn recording_note(name: &str) -> String {
    format!(
        "Recording {name} live on this GPU: the step is shown when it finishes (Stop, above the \
         timeline, ends it early)."
    )
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

/// The findings group a step's text talks about: the kind named first in it
/// (`None` when it names none, and the panel shows its top).
pub fn group_named_in(text: &str) -> Option<FindingKind> {
    FindingKind::ALL
        .into_iter()
        .filter_map(|k| text.find(k.name()).map(|at| (at, k)))
        .min_by_key(|&(at, _)| at)
        .map(|(_, k)| k)
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
    doc.timeline.select(&trace, selected);
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
            doc.follow_selection();
        }
        None => doc.kernel.close(),
    }
}

/// The timeline's rows as lessons name them: labels without their counts.
pub fn row_names(rows: &[Row]) -> Vec<RowName> {
    rows.iter()
        .map(|r| RowName {
            name: without_count(&r.label).to_string(),
            parent: r.parent,
            header: matches!(r.kind, RowKind::Header { .. }),
        })
        .collect()
}

/// `"Kernels (1,234)"` → `"Kernels"`; `"GPU 0 · Stream 7 · 30 events"` →
/// `"GPU 0 · Stream 7"`; other labels as they are.
fn without_count(label: &str) -> &str {
    let count = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == ',');
    if let Some(inner) = label.strip_suffix(')')
        && let Some(open) = inner.rfind(" (")
        && count(&inner[open + 2..])
    {
        return &label[..open];
    }
    for unit in [" events", " series"] {
        if let Some(rest) = label.strip_suffix(unit)
            && let Some(dot) = rest.rfind(" · ")
            && count(&rest[dot + " · ".len()..])
        {
            return &label[..dot];
        }
    }
    label
}

#[cfg(test)]
mod tests {
    use super::without_count;

    #[test]
    fn counts_come_off_row_labels() {
        assert_eq!(without_count("Kernels (1,234)"), "Kernels");
        assert_eq!(
            without_count("GPU 0 · Stream 7 · 30 events"),
            "GPU 0 · Stream 7"
        );
        assert_eq!(without_count("GPU metrics · 3 series"), "GPU metrics");
        assert_eq!(
            without_count("python3 [123] · 1,000 events"),
            "python3 [123]"
        );
        assert_eq!(without_count("NVTX on GPU"), "NVTX on GPU");
        assert_eq!(without_count("main (pid 12)"), "main (pid 12)");
    }
}
