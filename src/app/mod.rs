//! The desktop viewer (eframe). SCAFFOLD: the timeline view replaces this.

use std::path::PathBuf;

/// Opens the window on `files` (or the bundled report when empty).
pub fn run(_files: Vec<PathBuf>) -> Result<(), String> {
    Err("the viewer is not built yet".into())
}
