//! What the document does with the user's notes: pins one at the selection, shows one, and keeps
//! them on their events as the report grows.

use super::Document;
use crate::app::panels::annotations_panel::OVERLAY_SOURCE;
use crate::app::timeline::{self};
use crate::app::widgets::format;
use crate::model::Ns;
use eframe::egui::{self, Key, Ui};

impl Document {
    /// Notes, once per frame before the central panel: the N key, the side
    /// panel (if open), delayed text saves, and the marks on the timeline.
    /// `under` (presentation mode) puts the panel under the timeline, at most that high.
    pub fn notes_frame(&mut self, ui: &mut Ui, under: Option<f32>) {
        let now = ui.input(|i| i.time);
        if self.notes.is_enabled()
            && !ui.ctx().egui_wants_keyboard_input()
            && ui.input_mut(|i| i.consume_key(egui::Modifiers::NONE, Key::N))
        {
            // The panel open: N closes it (presentation mode has no other
            // way but its x). Else a note on the selected event if there is
            // one, else at the time under the pointer (the middle of the view
            // when it is elsewhere).
            if self.notes.open {
                self.notes.open = false;
            } else if let Some(ev) = self.selection.event {
                self.notes.add_on(&self.trace, ev);
            } else {
                let pointer = ui.input(|i| i.pointer.hover_pos());
                let t = match pointer.filter(|p| self.timeline.canvas.contains(*p)) {
                    Some(p) => self.timeline.time_at(p.x),
                    None => (self.timeline.view.start + self.timeline.view.end) / 2.0,
                };
                self.notes.add_at(t as Ns);
            }
        }
        if self.notes.open && self.notes.is_enabled() {
            let mut cmd = None;
            match under {
                // On a projector, beside a lesson, a column more left the events a fifth of
                // the width (issue 45): under the timeline instead.
                Some(height) => egui::Panel::bottom(("notes", true))
                    .default_size(height)
                    .max_size(height)
                    .resizable(true)
                    .show(ui, |ui| cmd = self.notes.ui(ui, now)),
                None => {
                    // At most a quarter of the window: the timeline keeps the most of it.
                    let most = (ui.available_width() * 0.25).max(200.0);
                    egui::Panel::right("notes")
                        .default_size(320.0_f32.min(most))
                        .min_size(200.0)
                        .max_size(most)
                        .resizable(true)
                        .show(ui, |ui| cmd = self.notes.ui(ui, now))
                }
            };
            if let Some(cmd) = cmd {
                self.apply(cmd, ui.ctx());
            }
        }
        self.notes.delayed_saves(ui.ctx(), now);
        if self.notes.unresolved {
            self.notes.resolve_merged(&self.trace);
        }
        if self.notes.marks_stale {
            self.notes.marks_stale = false;
            let marks = self.notes.marks(&self.trace);
            self.timeline.set_overlays(OVERLAY_SOURCE, marks);
        }
    }

    /// The timeline's context menu entries for notes: "Add note here" at the
    /// time right-clicked, "Note on this event" for the event right-clicked
    /// (or else the one selected). Call after the timeline's `ui`.
    pub fn notes_menu(&mut self, out: &timeline::Output) {
        let Some(canvas) = &out.canvas else { return };
        let Some((at, hit)) = self.timeline.context_at else {
            return;
        };
        let enabled = self.notes.is_enabled();
        let event = hit.or(self.selection.event);
        let trace = &self.trace;
        let mut add_time = false;
        let mut add_event = false;
        canvas.context_menu(|ui| {
            ui.weak(format!("at {}", format::duration(at)));
            let why = "notes are kept beside a report file; save this capture first";
            let here = ui.add_enabled(enabled, egui::Button::new("Add note here"));
            let here = if enabled {
                here
            } else {
                here.on_disabled_hover_text(why)
            };
            if here.clicked() {
                add_time = true;
                ui.close();
            }
            if let Some(ev) = event {
                let on = ui
                    .add_enabled(enabled, egui::Button::new("Note on this event"))
                    .on_hover_text(format!(
                        "{} {}",
                        ev.table.label(),
                        format::clip(ev.display_name(trace), 120)
                    ));
                if on.clicked() {
                    add_event = true;
                    ui.close();
                }
            }
        });
        if add_time {
            self.notes.add_at(at);
        }
        if add_event && let Some(ev) = event {
            self.notes.add_on(&self.trace, ev);
        }
    }
}
