//! The Notes panel: notes pinned to a moment or to an event, listed in time
//! order (a click zooms there), edited in place, and drawn on the timeline
//! as flags (an event note also outlines its event).
//!
//! Notes live in the report's sidecar ([`crate::annotations`]): read when the
//! report opens, written on every change. A note added, deleted or restyled
//! is written right here on the UI thread: the file is a few kilobytes,
//! written aside and renamed in a few milliseconds, and a synchronous write
//! means the note is on disk before the next frame. Text is written when its
//! box loses the keyboard, or a second after the last keystroke by a writer
//! of its own that needs no frame ([`super::notes_saver`]): not on every
//! keystroke, and not lost when the window stops being drawn. A quit writes
//! what is still waiting (the window's `quit`).

use std::path::{Path, PathBuf};

use eframe::egui::{self, Color32, RichText, Ui, vec2};

use crate::annotations::{self, EventKey, Note, Pin};
use crate::app::panels::notes_saver::{Saver, Written};
use crate::app::state::command::Command;
use crate::app::state::events::EventRef;
use crate::app::timeline::{Anchor, Overlay};
use crate::app::widgets::format;
use crate::model::{EventId, Ns, Trace};

/// The overlay source name of this panel's marks.
pub const OVERLAY_SOURCE: &str = "notes";
/// Colours a note can take: (name, sRGB). The first is a new note's.
pub const PALETTE: [(&str, [u8; 3]); 6] = [
    ("yellow", [250, 204, 21]),
    ("orange", [249, 115, 22]),
    ("red", [239, 68, 68]),
    ("green", [34, 197, 94]),
    ("blue", [59, 130, 246]),
    ("violet", [168, 85, 247]),
];
/// Typed text is written this long after the last keystroke.
pub const TEXT_SAVE_DELAY_S: f64 = 1.0;

/// One note and the event it resolved to in this report.
pub struct NoteEntry {
    pub note: Note,
    /// The event it is pinned to, found in this report; `None` for a time
    /// note, or an event note whose event is not here.
    pub event: Option<EventRef>,
    /// Stable across sorting, for widget ids.
    pub(crate) id: u64,
}

impl NoteEntry {
    /// Pinned to an event that this report does not hold (shown at its time).
    pub fn is_orphan(&self) -> bool {
        matches!(self.note.pin, Pin::Event(_)) && self.event.is_none()
    }
}

/// One report's notes.
#[derive(Default)]
pub struct AnnotationsPanel {
    /// The report the notes sit beside; `None` where there is no file (a
    /// capture being recorded): notes are then off.
    pub(crate) report: Option<PathBuf>,
    /// Where its notes are kept (beside it, or in the user's data folder when
    /// its folder is not theirs), decided once: it is asked every frame.
    sidecar_file: Option<PathBuf>,
    /// In time order.
    pub notes: Vec<NoteEntry>,
    /// Whether the side panel is shown (the toolbar badge toggles it).
    pub open: bool,
    /// The last problem reading or writing the sidecar, shown in the panel.
    pub error: Option<String>,
    /// Said once, in the panel (a sidecar set aside).
    pub notice: Option<String>,
    /// The sidecar's writers, and what they share: the notes as last read
    /// from or written to the sidecar (what a save merges against, so notes
    /// saved meanwhile by another window or process are kept,
    /// [`annotations::save_merged`]), and whether the sidecar could not be
    /// read (renamed aside before the first write: its contents are never
    /// lost).
    pub(crate) saver: Saver,
    /// Notes merged in from the sidecar whose events are not looked up yet
    /// (a save has no trace at hand; the next frame does).
    pub(crate) unresolved: bool,
    /// The last save failed: the notes live in this window only.
    pub(crate) unsaved: bool,
    /// The timeline's marks no longer match the notes.
    pub(crate) marks_stale: bool,
    /// Input time of the last unsaved keystroke.
    pub(crate) text_dirty_since: Option<f64>,
    /// Keystrokes typed into notes, counted: the delayed writer says which
    /// one its write is of (a later one is still to be written).
    pub(crate) edits: u64,
    /// No delayed writer could be started: the frame's timer writes typed
    /// text (when frames are drawn).
    pub(crate) frame_timer: bool,
    /// How long after the last keystroke typed text is written; `None`:
    /// [`TEXT_SAVE_DELAY_S`] (a test sets another).
    text_save_delay: Option<std::time::Duration>,
    /// The note whose text box takes the keyboard next frame (a new note).
    pub(crate) focus: Option<u64>,
    pub(crate) next_id: u64,
}

impl AnnotationsPanel {
    /// The notes of `report` read from its sidecar, their events found in
    /// `trace`. A sidecar that cannot be read leaves the list empty and says
    /// why in the panel, which opens; the report opens regardless.
    pub fn load(report: &Path, trace: &Trace) -> Self {
        if !report.is_file() {
            return Self::default();
        }
        let sidecar = annotations::sidecar_path(report);
        let mut panel = AnnotationsPanel {
            report: Some(report.to_path_buf()),
            sidecar_file: Some(sidecar.clone()),
            marks_stale: true,
            ..Default::default()
        };
        panel.saver.disk().sidecar = Some(sidecar.clone());
        match annotations::load_at(report, &sidecar) {
            Ok(notes) => {
                panel.saver.disk().base = notes.clone();
                panel.set_notes(trace, notes);
            }
            Err(e) => {
                // Whatever the reason (not JSON, not UTF-8, no permission,
                // a directory): it is kept aside before the first save.
                panel.saver.disk().unreadable = true;
                panel.error = Some(e.to_string());
                panel.open = true;
            }
        }
        panel
    }

    /// The report grew. Notes whose events were not found are looked for
    /// again; where events were numbered afresh (`ids_kept` false), every
    /// note's event is.
    pub fn trace_grew(&mut self, ids_kept: bool) {
        if !ids_kept {
            for entry in &mut self.notes {
                entry.event = None;
            }
        }
        self.unresolved = true;
        self.marks_stale = true;
    }

    /// How long after the last keystroke typed text is written.
    pub fn text_save_delay(&self) -> std::time::Duration {
        (self.text_save_delay).unwrap_or(std::time::Duration::from_secs_f64(TEXT_SAVE_DELAY_S))
    }

    /// Writes typed text `delay` after the last keystroke instead of
    /// [`TEXT_SAVE_DELAY_S`] (tests: a delay that never comes leaves a
    /// quit as the only writer).
    pub fn set_text_save_delay(&mut self, delay: std::time::Duration) {
        self.text_save_delay = Some(delay);
    }

    /// Notes are off (no report file to keep them beside).
    pub fn is_enabled(&self) -> bool {
        self.report.is_some()
    }

    /// Where the notes are saved.
    pub fn sidecar(&self) -> Option<PathBuf> {
        self.sidecar_file.clone()
    }

    pub(crate) fn set_notes(&mut self, trace: &Trace, notes: Vec<Note>) {
        let keys: Vec<&EventKey> = notes
            .iter()
            .filter_map(|n| match &n.pin {
                Pin::Event(k) => Some(k),
                Pin::Time(_) => None,
            })
            .collect();
        let mut found = annotations::resolve(trace, &keys).into_iter();
        self.notes = notes
            .into_iter()
            .map(|note| {
                let event = match note.pin {
                    Pin::Event(_) => found.next().flatten().map(EventRef::from),
                    Pin::Time(_) => None,
                };
                self.next_id += 1;
                NoteEntry {
                    note,
                    event,
                    id: self.next_id,
                }
            })
            .collect();
        self.sort();
        self.marks_stale = true;
    }

    pub(crate) fn sort(&mut self) {
        self.notes.sort_by_key(|e| e.note.time());
    }

    /// Adds an empty note at time `at` and opens it for typing.
    pub fn add_at(&mut self, at: Ns) {
        self.push(Pin::Time(at), None);
    }

    /// Adds an empty note on `ev` and opens it for typing.
    pub fn add_on(&mut self, trace: &Trace, ev: EventRef) {
        if let Some(key) = annotations::key_of(trace, EventId::from(ev)) {
            self.push(Pin::Event(key), Some(ev));
        }
    }

    pub(crate) fn push(&mut self, pin: Pin, event: Option<EventRef>) {
        if !self.is_enabled() {
            return;
        }
        self.next_id += 1;
        self.notes.push(NoteEntry {
            note: Note {
                text: String::new(),
                color: PALETTE[0].1,
                pin,
            },
            event,
            id: self.next_id,
        });
        self.sort();
        self.focus = Some(self.next_id);
        self.open = true;
        self.changed();
    }

    /// Deletes the note at `index` (in time order).
    pub fn delete(&mut self, index: usize) {
        if index < self.notes.len() {
            self.notes.remove(index);
            self.changed();
        }
    }

    /// Sets the text of the note at `index` and saves (tests, scripts).
    pub fn set_text(&mut self, index: usize, text: &str) {
        if let Some(e) = self.notes.get_mut(index) {
            e.note.text = text.to_string();
            self.changed();
        }
    }

    /// A note was added, removed or restyled: redraw and save now.
    pub(crate) fn changed(&mut self) {
        self.marks_stale = true;
        self.save();
    }

    /// Writes the sidecar now (synchronously: see the module comment).
    pub fn save(&mut self) {
        self.text_dirty_since = None;
        let Some(report) = self.report.clone() else {
            return;
        };
        let notes: Vec<Note> = self.notes.iter().map(|e| e.note.clone()).collect();
        let written = self.saver.write_now(&report, &notes);
        self.took(written, true);
    }

    /// Text was typed (keystroke number `self.edits`): written by the
    /// delayed writer once typing stops, whether or not frames are drawn.
    pub(crate) fn save_later(&mut self, ctx: &egui::Context) {
        let Some(report) = self.report.clone() else {
            return;
        };
        let notes: Vec<Note> = self.notes.iter().map(|e| e.note.clone()).collect();
        let when = (self.edits, self.text_save_delay());
        let wake = || crate::app::job::repaint(ctx.clone());
        self.frame_timer = !self.saver.write_later(&report, notes, when, wake);
    }

    /// Once a frame: takes what the delayed writer did; where it could not
    /// be started, writes typed text the delay after the last keystroke
    /// (input time `now`), asking for the frame that does.
    pub(crate) fn delayed_saves(&mut self, ctx: &egui::Context, now: f64) {
        if let Some(done) = self.saver.take_delayed() {
            // Typed since: the list is newer than what was written.
            let current = done.edit == self.edits;
            if current {
                self.text_dirty_since = None;
            }
            self.took(done.written, current);
        }
        if let Some(since) = self.text_dirty_since.filter(|_| self.frame_timer) {
            let wait = since + self.text_save_delay().as_secs_f64() - now;
            if wait <= 0.0 {
                self.save();
            } else {
                ctx.request_repaint_after(std::time::Duration::from_secs_f64(wait.max(0.01)));
            }
        }
    }

    /// Shows what a write did; `current`: it wrote the notes as they are,
    /// and the list takes what it merged in.
    fn took(&mut self, written: Written, current: bool) {
        if let Some(notice) = written.notice {
            self.notice = Some(notice);
        }
        match written.result {
            Ok(merged) => {
                self.error = None;
                self.unsaved = false;
                if current {
                    self.take_merged(&merged);
                }
            }
            Err(e) => {
                self.error = Some(e);
                self.unsaved = true;
                self.open = true;
            }
        }
    }

    /// Brings the list in line with `merged` (what a save wrote): notes
    /// deleted elsewhere go, notes added elsewhere come in (their events
    /// looked up at the next frame).
    pub(crate) fn take_merged(&mut self, merged: &[Note]) {
        let before = self.notes.len();
        self.notes.retain(|e| merged.contains(&e.note));
        let mut changed = self.notes.len() != before;
        for note in merged {
            if !self.notes.iter().any(|e| &e.note == note) {
                self.next_id += 1;
                self.notes.push(NoteEntry {
                    note: note.clone(),
                    event: None,
                    id: self.next_id,
                });
                self.unresolved = true;
                changed = true;
            }
        }
        if changed {
            self.sort();
            self.marks_stale = true;
        }
    }

    /// Looks up the events of notes merged in from the sidecar.
    pub(crate) fn resolve_merged(&mut self, trace: &Trace) {
        self.unresolved = false;
        let keys: Vec<(usize, &EventKey)> = self
            .notes
            .iter()
            .enumerate()
            .filter(|(_, e)| e.event.is_none())
            .filter_map(|(i, e)| match &e.note.pin {
                Pin::Event(k) => Some((i, k)),
                Pin::Time(_) => None,
            })
            .collect();
        let just_keys: Vec<&EventKey> = keys.iter().map(|(_, k)| *k).collect();
        let found = annotations::resolve(trace, &just_keys);
        let at: Vec<usize> = keys.iter().map(|(i, _)| *i).collect();
        for (i, ev) in at.into_iter().zip(found) {
            self.notes[i].event = ev.map(EventRef::from);
        }
        self.marks_stale = true;
    }

    /// Notes that are not on disk: the last save failed, or typed text
    /// waits for its delayed save. Closing the report would lose them.
    pub fn has_unsaved(&self) -> bool {
        self.is_enabled() && (self.unsaved || self.text_dirty_since.is_some())
    }

    /// The timeline marks: a flag per note; an event note also outlines
    /// its event.
    pub(crate) fn marks(&self, trace: &Trace) -> Vec<Overlay> {
        let mut marks = Vec::new();
        for e in &self.notes {
            let color = Color32::from_rgb(e.note.color[0], e.note.color[1], e.note.color[2]);
            let t = e.note.time();
            marks.push(Overlay {
                start: t,
                end: t,
                anchor: Anchor::Flag,
                color,
                label: e.note.text.clone(),
                source: OVERLAY_SOURCE,
            });
            if let Some(ev) = e.event {
                marks.push(Overlay {
                    start: ev.start(trace),
                    end: ev.end(trace),
                    anchor: Anchor::Outline(ev),
                    color,
                    label: String::new(),
                    source: OVERLAY_SOURCE,
                });
            }
        }
        marks
    }

    /// The toolbar badge: "3 notes"; a click shows or hides the panel.
    pub fn badge(&mut self, ui: &mut Ui) {
        if !self.is_enabled() {
            return;
        }
        let n = self.notes.len();
        let text = match n {
            0 => "Notes".to_string(),
            1 => "1 note".to_string(),
            _ => format!("{n} notes"),
        };
        let rt = if self.error.is_some() {
            RichText::new(format!("{text} (not saved)")).color(ERROR)
        } else if n == 0 {
            RichText::new(text).weak()
        } else {
            RichText::new(text)
        };
        let r = ui
            .selectable_label(self.open, rt)
            .on_hover_text("your notes on this report (N adds one)");
        if r.clicked() {
            self.open = !self.open;
        }
    }

    /// The panel's contents; returns what a click asked for.
    pub fn ui(&mut self, ui: &mut Ui, now: f64) -> Option<Command> {
        let mut cmd = None;
        self.header_ui(ui);
        if self.notes.is_empty() {
            ui.add(
                egui::Label::new(
                    RichText::new(
                        "No notes yet. Right-click the timeline (Add note here, Note on this \
                         event) or press N: on the selected event, else at the pointer.",
                    )
                    .weak(),
                )
                .wrap(),
            );
        }
        ui.separator();
        let mut delete = None;
        let mut restyled = false;
        let mut save_now = false;
        let mut typed = false;
        egui::ScrollArea::vertical().show(ui, |ui| {
            for (i, e) in self.notes.iter_mut().enumerate() {
                let n = i + 1;
                let color = Color32::from_rgb(e.note.color[0], e.note.color[1], e.note.color[2]);
                egui::Frame::group(ui.style()).show(ui, |ui| {
                    ui.set_width(ui.available_width());
                    let header = ui.horizontal(|ui| {
                        let (swatch, _) =
                            ui.allocate_exact_size(vec2(10.0, 14.0), egui::Sense::hover());
                        ui.painter().rect_filled(swatch, 2.0, color);
                        let label = ui.strong(format!("Note {n}"));
                        let t = e.note.time();
                        let go = ui
                            .link(format::duration(t))
                            .on_hover_text(format!("{} — click to zoom there", format::exact(t)));
                        if go.clicked() {
                            cmd = Some(match e.event {
                                Some(ev) => Command::ShowEvent(ev),
                                None => Command::ShowTime(t),
                            });
                        }
                        label
                    });
                    match (&e.note.pin, e.event) {
                        (Pin::Event(key), Some(_)) => {
                            ui.weak(format!(
                                "on {} {}",
                                key.kind.name(),
                                format::clip(format::display_name(&key.name), 80)
                            ));
                        }
                        (Pin::Event(key), None) => {
                            ui.add(
                                egui::Label::new(
                                    RichText::new(format!(
                                        "Its event ({} {}, {}–{}) is not in this report: \
                                         shown as a note at its time.",
                                        key.kind.name(),
                                        format::clip(&key.name, 80),
                                        format::grouped(key.start),
                                        format::grouped(key.end),
                                    ))
                                    .color(WARNING),
                                )
                                .wrap(),
                            );
                        }
                        (Pin::Time(_), _) => {}
                    }
                    let edit = ui.add(
                        egui::TextEdit::multiline(&mut e.note.text)
                            .id_salt(("note-text", e.id))
                            .hint_text("Note text")
                            .desired_rows(2)
                            .desired_width(f32::INFINITY),
                    );
                    let edit = edit.labelled_by(header.inner.id);
                    if self.focus == Some(e.id) {
                        edit.request_focus();
                        self.focus = None;
                    }
                    if edit.changed() {
                        self.marks_stale = true;
                        self.text_dirty_since = Some(now);
                        typed = true;
                    }
                    if edit.lost_focus() && self.text_dirty_since.is_some() {
                        save_now = true;
                    }
                    ui.horizontal(|ui| {
                        for (name, rgb) in PALETTE {
                            let c = Color32::from_rgb(rgb[0], rgb[1], rgb[2]);
                            let chosen = e.note.color == rgb;
                            let stroke = if chosen {
                                egui::Stroke::new(2.0, ui.visuals().strong_text_color())
                            } else {
                                egui::Stroke::NONE
                            };
                            let b = ui
                                .add(
                                    egui::Button::new("")
                                        .fill(c)
                                        .stroke(stroke)
                                        .min_size(vec2(16.0, 16.0)),
                                )
                                .on_hover_text(name);
                            let a11y = format!("Note {n} {name}");
                            b.widget_info(|| {
                                egui::WidgetInfo::labeled(egui::Role::Button, true, &a11y)
                            });
                            if b.clicked() && !chosen {
                                e.note.color = rgb;
                                restyled = true;
                            }
                        }
                        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                            let d = ui.small_button("Delete");
                            let a11y = format!("Delete note {n}");
                            d.widget_info(|| {
                                egui::WidgetInfo::labeled(egui::Role::Button, true, &a11y)
                            });
                            if d.clicked() {
                                delete = Some(i);
                            }
                        });
                    });
                });
            }
        });
        if let Some(i) = delete {
            self.delete(i);
        } else if restyled || save_now {
            self.changed();
        } else if typed {
            self.edits += 1;
            self.save_later(ui.ctx());
        }
        cmd
    }

    /// The panel's heading: where the notes are saved, and the last error or notice (each with
    /// its dismiss button).
    fn header_ui(&mut self, ui: &mut Ui) {
        // Its own close: presentation mode has no menu bar (and its Notes button) to close it.
        ui.horizontal(|ui| {
            ui.heading("Notes");
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let x = ui.button("x").on_hover_text("close the notes (N)");
                x.widget_info(|| {
                    egui::WidgetInfo::labeled(egui::Role::Button, true, "Close notes")
                });
                if x.clicked() {
                    self.open = false;
                }
            });
        });
        if let (Some(path), Some(report)) = (&self.sidecar_file, &self.report) {
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let where_ = if path.parent() == report.parent() {
                "Saved beside the report"
            } else {
                "Saved in your data folder (the report's folder is not yours)"
            };
            ui.weak(format!("{where_}, in {name}"))
                .on_hover_text(path.display().to_string());
        }
        let mut dismiss = false;
        if let Some(e) = &self.error {
            ui.add(egui::Label::new(RichText::new(e).color(ERROR)).wrap());
            dismiss = ui.button("Dismiss").clicked();
        }
        if dismiss {
            self.error = None;
        }
        let mut seen = false;
        if let Some(n) = &self.notice {
            ui.add(egui::Label::new(RichText::new(n).weak()).wrap());
            seen = ui.small_button("OK").clicked();
        }
        if seen {
            self.notice = None;
        }
    }
}

pub(crate) const ERROR: Color32 = Color32::from_rgb(255, 110, 90);
pub(crate) const WARNING: Color32 = Color32::from_rgb(230, 180, 80);
