//! The window's side of background work: the one job type ([`Job`], in `crate::job`), and the
//! window's wake for it ([`repaint`]).

use eframe::egui;

pub use crate::job::{Emitter, Job, Wake, drop_off_thread};

/// The wake that repaints the window: a job calls it after each result, so the window shows it
/// at once rather than at its next timer.
pub fn repaint(ctx: egui::Context) -> Wake {
    std::sync::Arc::new(move || ctx.request_repaint())
}
