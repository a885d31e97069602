//! An in-app file browser: File ▸ Browse…, and what every file dialog falls
//! back to when the desktop has no file-dialog portal (workshop machines often
//! lack one): a report to open, a job's folder, an Nsight Compute CSV. No
//! file-dialog crate for egui 0.37 exists yet (egui-file-dialog 0.15 needs
//! egui 0.36), and a list of folders and files is all this needs.

use std::path::{Path, PathBuf};

use eframe::egui::{self, RichText};

use crate::app::widgets::file_dialog::{Answer, Purpose};

/// One entry of the folder shown.
struct Entry {
    name: String,
    path: PathBuf,
    is_dir: bool,
    bytes: u64,
}

#[derive(Default)]
pub struct FileBrowser {
    pub open: bool,
    dir: PathBuf,
    entries: Vec<Entry>,
    /// Why the folder could not be listed (shown in place of the list).
    error: Option<String>,
    /// Every file, not only `.sqlite` and `.db` reports.
    all_files: bool,
    /// The path box: a folder to go to or a file to open.
    typed: String,
    /// What the file is for (its title, the files listed, what a choice does).
    purpose: Purpose,
}

/// Whether `path` is a file `purpose` lists: reports are SQLite exports (nsys
/// writes `.sqlite`, some tools `.db`), ncu results CSV files.
fn is_listed(path: &Path, purpose: &Purpose) -> bool {
    let (_, extensions) = purpose.filter();
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

impl FileBrowser {
    /// Opens the browser on `dir` (a file's folder when given a file) for a
    /// report to open.
    pub fn show_at(&mut self, dir: &Path) {
        self.show_for(dir, Purpose::OpenReport);
    }

    /// Opens the browser on `dir` (a file's folder when given a file) for `purpose`.
    pub fn show_for(&mut self, dir: &Path, purpose: Purpose) {
        self.purpose = purpose;
        self.open = true;
        let dir = if dir.is_file() {
            dir.parent().unwrap_or(dir)
        } else {
            dir
        };
        self.go(dir.to_path_buf());
    }

    /// The folder listed.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn go(&mut self, dir: PathBuf) {
        self.typed = dir.display().to_string();
        self.dir = dir;
        self.read();
    }

    /// Lists the folder: folders first, then files, each by name. A folder
    /// that cannot be read says why instead.
    fn read(&mut self) {
        self.entries.clear();
        self.error = None;
        let listing = match std::fs::read_dir(&self.dir) {
            Ok(l) => l,
            Err(e) => {
                self.error = Some(format!("cannot list {}: {e}", self.dir.display()));
                return;
            }
        };
        for item in listing.flatten() {
            let path = item.path();
            // Follows links: a link to a folder is entered like a folder.
            let meta = std::fs::metadata(&path);
            let is_dir = meta.as_ref().is_ok_and(|m| m.is_dir());
            let name = item.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            self.entries.push(Entry {
                name,
                path,
                is_dir,
                bytes: meta.map_or(0, |m| m.len()),
            });
        }
        self.entries
            .sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    }

    /// What the browser is open for.
    pub fn purpose(&self) -> &Purpose {
        &self.purpose
    }

    /// Draws the browser when open; returns what the user chose, for what.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<Answer> {
        if !self.open {
            return None;
        }
        let mut chosen = None;
        let mut go_to = None;
        let mut open = self.open;
        let (kind, extensions) = self.purpose.filter();
        egui::Window::new(self.purpose.title())
            .open(&mut open)
            .default_size([560.0, 420.0])
            .collapsible(false)
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    if ui.button("Up").clicked()
                        && let Some(parent) = self.dir.parent()
                    {
                        go_to = Some(parent.to_path_buf());
                    }
                    if let Some(home) = std::env::var_os("HOME")
                        && ui.button("Home").clicked()
                    {
                        go_to = Some(PathBuf::from(home));
                    }
                    let r = ui.add(
                        egui::TextEdit::singleline(&mut self.typed)
                            .desired_width(f32::INFINITY)
                            .hint_text("a folder or a report"),
                    );
                    if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        let p = PathBuf::from(self.typed.trim());
                        if p.is_dir() {
                            go_to = Some(p);
                        } else {
                            chosen = Some(p);
                        }
                    }
                });
                let only = extensions
                    .iter()
                    .map(|e| format!(".{e}"))
                    .collect::<Vec<_>>()
                    .join(" and ");
                ui.checkbox(
                    &mut self.all_files,
                    format!("Show every file (not only {only})"),
                )
                .on_hover_text(kind);
                if self.purpose == Purpose::OpenJob {
                    let reports = self
                        .entries
                        .iter()
                        .filter(|e| !e.is_dir && is_listed(&e.path, &self.purpose))
                        .count();
                    let button = ui.add_enabled(
                        reports > 0,
                        egui::Button::new(format!(
                            "Open the {reports} reports of this folder as one job"
                        )),
                    );
                    if button.clicked() {
                        chosen = Some(self.dir.clone());
                    }
                }
                ui.separator();
                if let Some(e) = &self.error {
                    ui.colored_label(egui::Color32::from_rgb(255, 110, 90), e);
                    return;
                }
                egui::ScrollArea::vertical()
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        let shown = self.entries.iter().filter(|e| {
                            e.is_dir || self.all_files || is_listed(&e.path, &self.purpose)
                        });
                        let mut any = false;
                        for entry in shown {
                            any = true;
                            if entry.is_dir {
                                if ui.button(format!("{}/", entry.name)).clicked() {
                                    go_to = Some(entry.path.clone());
                                }
                            } else {
                                ui.horizontal(|ui| {
                                    if ui.button(&entry.name).clicked() {
                                        chosen = Some(entry.path.clone());
                                    }
                                    ui.weak(crate::app::widgets::format::bytes(entry.bytes));
                                });
                            }
                        }
                        if !any {
                            ui.label(
                                RichText::new(format!("no folders or {only} files here")).weak(),
                            );
                        }
                    });
            });
        self.open = open && chosen.is_none();
        if let Some(dir) = go_to {
            self.go(dir);
        }
        chosen.map(|path| Answer::Chosen(self.purpose.clone(), vec![path]))
    }
}
