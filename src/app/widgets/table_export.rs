//! "Copy" and "Save CSV…" for a table the viewer shows: the table's headings
//! and raw numbers exactly as `sightline stats` writes them (one emitter,
//! [`Table::to_csv`] / [`Table::to_tsv`]), no thousands separators.
//!
//! Copy puts tab-separated lines on the clipboard, which spreadsheets paste
//! into cells; Save writes CSV to a path typed in a box (written aside, then
//! renamed). Both run on a worker thread: a kernel's instance table can be
//! built from a million rows, and a save may hit a slow disk.

use std::path::{Path, PathBuf};
use std::time::Duration;

use eframe::egui::{self, Ui};

use crate::analysis::Table;
use crate::app::job::Job;

/// Builds the table to export; runs on the worker thread.
pub type TableJob = Box<dyn FnOnce() -> Table + Send + 'static>;

enum SaveOutcome {
    /// Tab-separated text for the clipboard, and its row count.
    Copy(String, usize),
    Saved(PathBuf, usize),
    Failed(String),
}

enum Request {
    Copy,
    Save(PathBuf),
}

/// The state of one table's export buttons.
#[derive(Default)]
pub struct TableExport {
    /// The Save CSV path box, shown once "Save CSV…" is clicked.
    path: Option<String>,
    job: Job<SaveOutcome>,
    /// What the last copy or save did, for the line beside the buttons.
    pub status: Option<Result<String, String>>,
}

impl TableExport {
    pub fn is_pending(&self) -> bool {
        self.job.is_running()
    }

    /// Forgets the last outcome and closes the path box: the table shown
    /// changed, and "saved 7 rows" must not seem to be about the new one. A
    /// copy or save under way still finishes.
    pub fn forget(&mut self) {
        self.status = None;
        self.path = None;
    }

    /// Draws the buttons (and the path box while a save is being set up).
    /// `file_stem` names the default file (`STEM.csv` in the working
    /// folder); `rows` is the table's row count, 0 disables both buttons;
    /// `job` is asked for only when a button is used.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        file_stem: &str,
        rows: usize,
        job: impl FnOnce() -> TableJob,
    ) {
        self.poll(ui.ctx());
        let mut request = None;
        ui.horizontal(|ui| {
            let enabled = rows > 0 && !self.is_pending();
            if ui
                .add_enabled(enabled, egui::Button::new("Copy"))
                .on_hover_text(
                    "copy the table as tab-separated lines (pastes into a spreadsheet): \
                     the headings and raw numbers of `sightline stats`, in its row order",
                )
                .clicked()
            {
                request = Some(Request::Copy);
            }
            if ui
                .add_enabled(enabled, egui::Button::new("Save CSV…"))
                .on_hover_text("write the table as CSV, as `sightline stats --format csv` does")
                .clicked()
                && self.path.is_none()
            {
                self.path = Some(String::new());
            }
            if self.is_pending() {
                ui.spinner();
            }
            match &self.status {
                Some(Ok(text)) => {
                    ui.weak(text);
                }
                Some(Err(text)) => {
                    ui.colored_label(egui::Color32::from_rgb(240, 110, 90), text);
                }
                None => {}
            }
        });
        let mut close = false;
        if let Some(path) = &mut self.path {
            ui.horizontal(|ui| {
                // An empty box saves to the default shown in it.
                let default = default_path(file_stem);
                let label = ui.label("Save as");
                let edit = ui
                    .add(
                        egui::TextEdit::singleline(path)
                            .desired_width(420.0)
                            .hint_text(default.display().to_string()),
                    )
                    .labelled_by(label.id);
                let entered = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if (ui
                    .add_enabled(rows > 0, egui::Button::new("Save"))
                    .clicked()
                    || entered)
                    && rows > 0
                {
                    let typed = path.trim();
                    let target = if typed.is_empty() {
                        default
                    } else {
                        PathBuf::from(typed)
                    };
                    request = Some(Request::Save(target));
                    close = true;
                }
                if ui.button("Cancel").clicked() {
                    close = true;
                }
            });
        }
        if close {
            self.path = None;
        }
        if let Some(request) = request {
            self.start(request, job());
            ui.ctx().request_repaint();
        }
        if self.is_pending() {
            ui.ctx().request_repaint_after(Duration::from_millis(30));
        }
    }

    fn start(&mut self, request: Request, job: TableJob) {
        self.status = None;
        let started = self.job.start("sightline-export", None, move |_| {
            let table = job();
            let rows = table.rows.len();
            Some(match request {
                Request::Copy => SaveOutcome::Copy(table.to_tsv(), rows),
                Request::Save(path) => {
                    match crate::files::write_aside(&path, table.to_csv().as_bytes()) {
                        Ok(()) => SaveOutcome::Saved(path, rows),
                        Err(e) => {
                            SaveOutcome::Failed(format!("cannot write {}: {e}", path.display()))
                        }
                    }
                }
            })
        });
        if !started {
            self.status = Some(Err("cannot start the export: no thread".into()));
        }
    }

    /// Takes a finished copy or save; true when one arrived.
    pub fn poll(&mut self, ctx: &egui::Context) -> bool {
        if !self.job.is_running() {
            return false;
        }
        let outcome = match self.job.take() {
            Some(outcome) => outcome,
            None if self.job.is_running() => return false,
            // The worker ended without an outcome: it panicked.
            None => SaveOutcome::Failed("the export stopped before it finished".into()),
        };
        self.status = Some(match outcome {
            SaveOutcome::Copy(text, rows) => {
                ctx.copy_text(text);
                Ok(format!("copied {} (tab-separated)", rows_text(rows)))
            }
            SaveOutcome::Saved(path, rows) => {
                Ok(format!("saved {} to {}", rows_text(rows), path.display()))
            }
            SaveOutcome::Failed(message) => Err(message),
        });
        true
    }
}

fn rows_text(rows: usize) -> String {
    let n = crate::app::widgets::format::grouped(rows as i64);
    if rows == 1 {
        format!("{n} row")
    } else {
        format!("{n} rows")
    }
}

/// `STEM.csv` in the working folder: never beside the report, which
/// Sightline leaves untouched.
fn default_path(file_stem: &str) -> PathBuf {
    let name = format!("{file_stem}.csv");
    std::env::current_dir()
        .map(|dir| dir.join(&name))
        .unwrap_or_else(|_| Path::new(&name).to_path_buf())
}
