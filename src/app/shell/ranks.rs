//! Opening a job of many reports (one per rank of a distributed run) as one tab: from the
//! command line (`sightline --job FILE…`, `sightline DIR`), File ▸ Open job…, a folder typed in
//! the path box, or several files dropped at once (the window asks: one job, or a tab each); a
//! Parquet job folder (`sightline export --format parquet`, or nsys's own `parquetdir` exports)
//! opens on the engine's summaries.

use std::path::PathBuf;

use eframe::egui::{self, Ui};

use super::{SightlineApp, Tab};
use crate::app::panels::job_view::JobView;

impl SightlineApp {
    /// Opens the reports of `paths` as one job in a tab of its own; a single folder stands for
    /// every `.sqlite` report in it.
    pub fn open_ranks(&mut self, paths: Vec<PathBuf>, window: Option<egui::Context>) {
        self.error = None;
        // A Parquet job folder, ours or nsys's exports, opens on the engine's summaries.
        if let [dir] = paths.as_slice()
            && (crate::loader::ranks::is_parquet_job(dir)
                || crate::loader::ranks::is_nsys_parquet_job(dir))
        {
            let view = JobView::open_parquet(dir.clone(), window);
            self.tabs.push(Tab::Job(Box::new(view)));
            self.active = self.tabs.len() - 1;
            return;
        }
        let paths = match paths.as_slice() {
            [dir] if dir.is_dir() => match crate::loader::ranks::reports_in(dir) {
                Ok(reports) => reports,
                Err(e) => {
                    self.error = Some(e.to_string());
                    return;
                }
            },
            _ => paths,
        };
        self.tabs
            .push(Tab::Job(Box::new(JobView::open(paths, window))));
        self.active = self.tabs.len() - 1;
    }

    /// The job shown, if the tab shown is one.
    pub fn job_view(&self) -> Option<&JobView> {
        match self.tabs.get(self.active)? {
            Tab::Job(view) => Some(view),
            _ => None,
        }
    }

    /// The job shown, to act on (tests, screenshots).
    pub fn job_view_mut(&mut self) -> Option<&mut JobView> {
        match self.tabs.get_mut(self.active)? {
            Tab::Job(view) => Some(view),
            _ => None,
        }
    }

    /// File ▸ Open job…: several reports, or a folder of them, from the desktop's dialog (or
    /// Sightline's browser).
    pub(super) fn ranks_menu(&mut self, ui: &mut Ui) {
        if ui
            .button("Open job…")
            .on_hover_text("the reports of one distributed run (one per rank), or their folder")
            .clicked()
        {
            // The desktop's dialog, or Sightline's browser where there is none.
            self.ask_file(crate::app::widgets::file_dialog::Purpose::OpenJob);
            ui.close();
        }
    }

    /// Asks what several dropped files are: one job, or a tab each.
    pub(super) fn dropped_ui(&mut self, ctx: &egui::Context) {
        if self.dropped.is_empty() {
            return;
        }
        let count = self.dropped.len();
        let mut choice = None;
        egui::Window::new("Several reports dropped")
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
            .show(ctx, |ui| {
                ui.label(format!(
                    "{count} reports: the ranks of one job (one tab, one clock), or each on its own?"
                ));
                ui.horizontal(|ui| {
                    if ui.button("One job").clicked() {
                        choice = Some(true);
                    }
                    if ui.button("A tab each").clicked() {
                        choice = Some(false);
                    }
                    if ui.button("Cancel").clicked() {
                        choice = Some(false);
                        self.dropped.clear();
                    }
                });
            });
        match choice {
            Some(true) => {
                let files = std::mem::take(&mut self.dropped);
                self.open_ranks(files, Some(ctx.clone()));
            }
            Some(false) => {
                for f in std::mem::take(&mut self.dropped) {
                    self.open(f);
                }
            }
            None => {}
        }
    }
}
