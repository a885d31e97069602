//! Quitting the window: Ctrl+Q, File ▸ Quit and the window's close button first write every
//! report's notes that are not on disk (typed text still waiting for its delayed write too);
//! where some could not be written, the window stays open and asks, as closing their tab does.

use super::{SightlineApp, Tab};
use crate::app::widgets::format::file_name;
use eframe::egui::{self, Color32, RichText};

impl SightlineApp {
    /// Ctrl+Q and File ▸ Quit: closes the window once every report's notes are on disk, else
    /// asks.
    pub(crate) fn quit(&mut self, ctx: &egui::Context) {
        if self.save_all_notes() {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        } else {
            self.confirm_quit = true;
        }
    }

    /// The window's close button (or the system's close, or the `Close` the window sent itself,
    /// which eframe hands back as a request): refused while notes could not be written, and
    /// asked about. Once a frame.
    pub(crate) fn close_requested(&mut self, ctx: &egui::Context) {
        if self.quit_anyway || !ctx.input(|i| i.viewport().close_requested()) {
            return;
        }
        if !self.save_all_notes() {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.confirm_quit = true;
        }
    }

    /// Writes every report's notes that are not on disk; whether all are now.
    pub fn save_all_notes(&mut self) -> bool {
        let mut all = true;
        for tab in &mut self.tabs {
            if let Tab::Ready(doc) = tab
                && doc.notes.has_unsaved()
            {
                doc.notes.save();
                all &= !doc.notes.has_unsaved();
            }
        }
        all
    }

    /// Whether the window waits for the user to say whether to quit without some notes.
    pub fn is_confirming_quit(&self) -> bool {
        self.confirm_quit
    }

    /// Asks whether to quit though some notes could not be written: which, and why.
    pub(crate) fn confirm_quit_ui(&mut self, ctx: &egui::Context) {
        if !self.confirm_quit {
            return;
        }
        let unsaved: Vec<(String, String)> = (self.tabs.iter())
            .filter_map(|t| match t {
                Tab::Ready(doc) if doc.notes.has_unsaved() => Some((
                    file_name(&doc.path),
                    doc.notes.error.clone().unwrap_or_default(),
                )),
                _ => None,
            })
            .collect();
        if unsaved.is_empty() {
            // Written since (or their tabs closed): nothing to lose.
            self.confirm_quit = false;
            return;
        }
        let mut answer = None;
        egui::Modal::new(egui::Id::unique("confirm quit")).show(ctx, |ui| {
            ui.heading("Notes not saved");
            for (name, why) in &unsaved {
                ui.label(format!("The notes on {name} could not be saved:"));
                let why = RichText::new(why).color(Color32::from_rgb(255, 110, 90));
                ui.add(egui::Label::new(why).wrap());
            }
            ui.label("Quitting now loses them.");
            ui.horizontal(|ui| {
                if ui.button("Keep the window open").clicked() {
                    answer = Some(false);
                }
                if ui.button("Quit and lose the notes").clicked() {
                    answer = Some(true);
                }
            });
        });
        match answer {
            Some(true) => {
                self.confirm_quit = false;
                self.quit_anyway = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            Some(false) => self.confirm_quit = false,
            None => {}
        }
    }
}
