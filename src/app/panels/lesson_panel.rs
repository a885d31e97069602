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

use eframe::egui::{self, Color32, Key, RichText, Ui};

use crate::analysis::findings::FindingKind;
use crate::app::timeline::rows::{Row, RowKind};
use crate::app::widgets::format::file_name;
use crate::files::same_file;
use crate::lessons::{self, Lesson, LessonCapture, LessonError, RowName};

/// The lessons menu, the lesson being followed and its panel.
#[derive(Default)]
pub struct Lessons {
    /// The bundled lessons, read when the menu first opens (Reload reads again).
    pub(crate) catalog: Option<Vec<Result<Lesson, LessonError>>>,
    /// The path box of "Open lesson file".
    pub(crate) path: String,
    /// The lesson being followed.
    pub run: Option<Run>,
    /// A lesson file that could not be read, shown in the panel until closed.
    pub broken: Option<LessonError>,
    /// Rows and projection of each report as they were before the lesson
    /// changed them: given back when the lesson closes.
    pub(crate) saved: Vec<(PathBuf, SavedRows)>,
}

pub(crate) struct SavedRows {
    pub(crate) collapsed: BTreeSet<String>,
    pub(crate) hidden: BTreeSet<String>,
    pub(crate) show_projection: bool,
}

/// A lesson and the step shown.
pub struct Run {
    pub lesson: Lesson,
    pub step: usize,
    /// The step is applied once its report is open and shown.
    pub(crate) pending: bool,
    /// The step's report was asked to open (a tab that vanishes after that
    /// failed to load).
    pub(crate) asked_open: bool,
    /// What is wrong with this step in its report.
    pub error: Option<LessonError>,
    /// What the panel says of where this step's events come from (a live capture recording,
    /// or the report shown because none could be made).
    pub note: Option<String>,
    /// The captures this run started, and the tabs they record in.
    pub(crate) captures: Vec<(LessonCapture, PathBuf)>,
    /// Why no live capture can be made here (asked once a run): `Some(None)` when one can.
    pub(crate) live_unavailable: Option<Option<String>>,
}

impl Run {
    /// Whether `path` is one of this lesson's tabs: a step's report or a
    /// capture it recorded.
    pub(crate) fn owns(&self, path: &Path) -> bool {
        self.lesson.steps.iter().any(|s| same_file(&s.report, path))
            || self.captures.iter().any(|(_, p)| p == path)
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

    pub(crate) fn close_requested(&mut self) {
        self.run = None;
        self.broken = None;
    }
}

pub(crate) fn read_catalog() -> Vec<Result<Lesson, LessonError>> {
    lessons::bundled_dir()
        .map(|d| lessons::load_dir(&d))
        .unwrap_or_default()
}

pub(crate) const ERROR_COLOR: Color32 = Color32::from_rgb(255, 110, 90);
pub(crate) const QUESTION_COLOR: Color32 = Color32::from_rgb(250, 200, 90);
pub(crate) const NOTE_COLOR: Color32 = Color32::from_rgb(120, 180, 255);

/// What the panel's buttons asked for.
pub(crate) enum Action {
    Go(usize),
    Close,
}

/// The size of a step's text and question: smaller only where a long step would not fit the
/// window otherwise (see [`contents_height`]).
pub const TEXT_SIZE: f32 = 14.5;

/// The panel's contents, the step's text at `text_size`; returns what a button asked for.
pub(crate) fn panel(
    lessons: &Lessons,
    loading: bool,
    text_size: f32,
    ui: &mut Ui,
) -> Option<Action> {
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
                    ui.add(egui::Label::new(RichText::new(text).size(text_size)).wrap());
                    ui.add_space(6.0);
                }
            }
            if let Some(q) = &step.question {
                ui.add_space(4.0);
                egui::Frame::group(ui.style()).show(ui, |ui| {
                    ui.label(RichText::new("Question").color(QUESTION_COLOR).strong());
                    let text = q.split_whitespace().collect::<Vec<_>>().join(" ");
                    ui.add(egui::Label::new(RichText::new(text).size(text_size).italics()).wrap());
                });
            }
        });
    action
}

/// The height the panel's contents take at `width` (its inner width): the header, the step's
/// note, text and question, the buttons. The window widens the panel until it fits, so that
/// a step is read whole, never scrolled (a projector's 1280×720 cut questions off).
pub fn contents_height(lessons: &Lessons, ui: &Ui, width: f32, text_size: f32) -> f32 {
    let Some(run) = &lessons.run else {
        return 0.0;
    };
    let Some(step) = run.lesson.steps.get(run.step) else {
        return 0.0;
    };
    let spacing = ui.spacing().item_spacing.y;
    let height = |text: RichText, wrap: bool| {
        let galley = egui::WidgetText::from(text).into_galley(
            ui,
            Some(if wrap {
                egui::TextWrapMode::Wrap
            } else {
                egui::TextWrapMode::Extend
            }),
            width,
            egui::TextStyle::Body,
        );
        galley.size().y + spacing
    };
    let one_line = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    // Title, "Step n of m", the step's title, the separator; the buttons and their hint.
    let mut total = 4.0
        + height(RichText::new(&run.lesson.title).heading().strong(), true)
        + height(RichText::new("Step").weak(), false)
        + height(RichText::new(&step.title).size(16.0).strong(), true)
        + 2.0 * spacing
        + 4.0
        + ui.spacing().interact_size.y
        + height(RichText::new("Left/Right").weak(), false)
        + 4.0 * spacing;
    if let Some(note) = &run.note {
        total += height(RichText::new(note), true) + 6.0;
    }
    for paragraph in step.text.split("\n\n").map(one_line) {
        if !paragraph.is_empty() {
            total += height(RichText::new(paragraph).size(text_size), true) + 6.0;
        }
    }
    if let Some(q) = &step.question {
        // The group's frame: its margins and stroke around "Question" and the text.
        total += 4.0 + 16.0 + height(RichText::new("Question").strong(), false);
        total += height(RichText::new(one_line(q)).size(text_size).italics(), true);
    }
    total
}

/// Where a step with a live capture is shown.
pub(crate) enum Shows {
    /// The capture still records (or was just started): the step waits.
    Recording,
    /// The capture has finished in this tab.
    Capture(PathBuf),
    /// No capture can be made here, or it failed: the step's report instead.
    Report,
}

pub(crate) fn recording_note(name: &str) -> String {
    format!(
        "Recording {name} live on this GPU: the step is shown when it finishes (Stop, above the \
         timeline, ends it early)."
    )
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
pub(crate) fn without_count(label: &str) -> &str {
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
