//! The desktop viewer (eframe): opening reports, menus, and the panels around
//! the timeline. The UI reads the model and the analysis, never the file.

pub mod document;
pub mod job;
pub mod panels;
pub mod shell;
pub mod state;
pub mod timeline;
pub mod widgets;

use std::path::PathBuf;

pub use document::Document;
pub use shell::compare::run_compare;
pub use shell::{SightlineApp, bundled_report};

/// Why the window cannot open, said plainly: without it winit fails deep inside
/// eframe with a raw error naming a cargo registry path.
pub const NO_DISPLAY: &str = "no display found (DISPLAY/WAYLAND_DISPLAY unset): the viewer needs \
a desktop; `sightline stats FILE` works without one";

/// `Some(NO_DISPLAY)` when the window surely cannot open: on Linux, neither an X11
/// nor a Wayland display is named (an empty value names none). Other platforms
/// always have a desktop session to try, so they are left to eframe.
pub fn missing_display() -> Option<&'static str> {
    if cfg!(target_os = "linux") {
        let named = |var: &str| std::env::var_os(var).is_some_and(|v| !v.is_empty());
        if !named("DISPLAY") && !named("WAYLAND_DISPLAY") {
            return Some(NO_DISPLAY);
        }
    }
    None
}

/// Opens the window on `files` (or the bundled report when empty).
pub fn run(files: Vec<PathBuf>) -> Result<(), String> {
    shell::launch(move |app| {
        // No file given: the last session's tabs, else the bundled example.
        if files.is_empty() && app.reopen_last_session() {
            return;
        }
        let files = if files.is_empty() {
            bundled_report().into_iter().collect()
        } else {
            files
        };
        if files.is_empty() {
            app.error = Some("no report given and the bundled example was not found".into());
        }
        // Each file in its own tab, read side by side; the first is shown.
        for f in files {
            app.open(f);
        }
        app.active = 0;
    })
}

/// Opens the window on the reports of one job (`sightline --job FILE…`).
pub fn run_job(files: Vec<PathBuf>) -> Result<(), String> {
    if files.is_empty() {
        return Err("--job needs the reports of the job (or their folder)".into());
    }
    shell::launch(move |app| app.open_ranks(files, None))
}

/// Opens the window replaying `path` as if it were being captured now.
pub fn run_replay(path: PathBuf, speed: f64) -> Result<(), String> {
    shell::launch(move |app| app.start_replay(path, speed))
}
