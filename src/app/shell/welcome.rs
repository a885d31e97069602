//! The first start's welcome: what Sightline is, and where to begin (open a report, follow a
//! lesson, a recent report, a live capture where there is a GPU). Shown when nothing saved says
//! it was dismissed; once dismissed it does not come back (kept with the window's state). An
//! app made in code (tests, benchmarks) shows none: only [`SightlineApp::restore`] asks for it.

use std::path::PathBuf;

use eframe::egui::{self, RichText};

use super::SightlineApp;
use crate::app::widgets::format::file_name;
use crate::files::same_file;

/// How many lessons and recent reports the welcome lists (the menus have them all).
const LISTED: usize = 5;

/// What the user picked in the welcome.
enum Pick {
    Open,
    Lesson(usize),
    Recent(PathBuf),
    Capture,
    Close,
}

impl SightlineApp {
    /// Draws the welcome while it is open; any choice in it dismisses it.
    pub(crate) fn welcome_ui(&mut self, ctx: &egui::Context) {
        if !self.welcome {
            return;
        }
        let gpu =
            *(self.gpu_present).get_or_insert_with(crate::capture::environment::driver_present);
        // The bundled report opens on a first start: said to be an example.
        let shown = self.doc().map(|d| {
            let example = super::bundled_report().is_some_and(|b| same_file(&b, &d.path));
            (file_name(&d.path), example)
        });
        let catalog = self
            .lessons
            .catalog
            .get_or_insert_with(crate::app::panels::lesson_panel::read_catalog);
        let lessons: Vec<(usize, String)> = catalog
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.as_ref().ok().map(|l| (i, l.title.clone())))
            .take(LISTED)
            .collect();
        let recent: Vec<PathBuf> = self.recent.iter().take(LISTED).cloned().collect();
        let mut pick = None;
        let modal = egui::Modal::new(egui::Id::unique("welcome")).show(ctx, |ui| {
            ui.set_max_width(560.0);
            ui.heading("Welcome to Sightline");
            ui.label(
                "A viewer for NVIDIA Nsight Systems reports: the timeline of CPU threads, CUDA \
                 calls, NVTX ranges and GPU work, with the nsys stats summaries of any span \
                 you select.",
            );
            match shown {
                Some((name, true)) => {
                    ui.weak(format!("Behind this window: {name}, an example report."))
                }
                Some((name, false)) => ui.weak(format!("Behind this window: {name}.")),
                None => ui.weak("No report is open yet."),
            };
            ui.add_space(8.0);
            ui.horizontal(|ui| {
                if ui.button("Open a report…").clicked() {
                    pick = Some(Pick::Open);
                }
                ui.weak("the .sqlite that nsys export writes (or drop one on the window)");
            });
            ui.add_space(8.0);
            ui.label(
                RichText::new("Try a lesson (Lessons menu): a real report, step by step").strong(),
            );
            if lessons.is_empty() {
                ui.weak("No bundled lessons found (assets/lessons).");
            }
            for (i, title) in &lessons {
                if ui.button(title).clicked() {
                    pick = Some(Pick::Lesson(*i));
                }
            }
            ui.add_space(8.0);
            ui.label(RichText::new("Recent reports").strong());
            if recent.is_empty() {
                ui.weak("None yet: the reports you open are listed here and in the File menu.");
            }
            for p in &recent {
                if ui.button(p.display().to_string()).clicked() {
                    pick = Some(Pick::Recent(p.clone()));
                }
            }
            ui.add_space(8.0);
            if gpu {
                ui.horizontal(|ui| {
                    if ui.button("New capture…").clicked() {
                        pick = Some(Pick::Capture);
                    }
                    ui.weak("record a benchmark on this machine's GPU, live (Capture menu)");
                });
            } else {
                ui.weak("Live capture (Capture menu) needs an NVIDIA GPU; none was found here.");
            }
            ui.add_space(8.0);
            ui.weak("F1 lists the keys and the mouse.");
            ui.separator();
            if ui.button("Close the welcome").clicked() {
                pick = Some(Pick::Close);
            }
        });
        if modal.should_close() && pick.is_none() {
            pick = Some(Pick::Close);
        }
        let Some(pick) = pick else { return };
        self.welcome = false;
        match pick {
            Pick::Open => self.open_dialog(),
            Pick::Lesson(i) => {
                let lesson = self
                    .lessons
                    .catalog
                    .as_ref()
                    .and_then(|c| c.get(i))
                    .and_then(|l| l.as_ref().ok())
                    .cloned();
                if let Some(lesson) = lesson {
                    self.lessons.start(lesson);
                }
            }
            Pick::Recent(p) => self.open(p),
            Pick::Capture => self.capture_dialog.show(),
            Pick::Close => {}
        }
    }
}
