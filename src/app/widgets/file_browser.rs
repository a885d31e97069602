//! An in-app file browser: File ▸ Browse…, and what File ▸ Open falls back to
//! when the desktop has no file-dialog portal (workshop machines often lack
//! one). No file-dialog crate for egui 0.37 exists yet (egui-file-dialog 0.15
//! needs egui 0.36), and a list of folders and reports is all this needs.

use std::path::{Path, PathBuf};

use eframe::egui::{self, RichText};

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
}

/// Reports are SQLite exports; nsys writes `.sqlite`, some tools `.db`.
fn is_report(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("sqlite") || e.eq_ignore_ascii_case("db"))
}

impl FileBrowser {
    /// Opens the browser on `dir` (a file's folder when given a file).
    pub fn show_at(&mut self, dir: &Path) {
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

    /// Draws the browser when open; returns the file the user chose.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<PathBuf> {
        if !self.open {
            return None;
        }
        let mut chosen = None;
        let mut go_to = None;
        let mut open = self.open;
        egui::Window::new("Open a report")
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
                ui.checkbox(
                    &mut self.all_files,
                    "Show every file (not only .sqlite and .db)",
                );
                ui.separator();
                if let Some(e) = &self.error {
                    ui.colored_label(egui::Color32::from_rgb(255, 110, 90), e);
                    return;
                }
                egui::ScrollArea::vertical()
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        let shown = self
                            .entries
                            .iter()
                            .filter(|e| e.is_dir || self.all_files || is_report(&e.path));
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
                            ui.label(RichText::new("no folders or reports here").weak());
                        }
                    });
            });
        self.open = open && chosen.is_none();
        if let Some(dir) = go_to {
            self.go(dir);
        }
        chosen
    }
}
