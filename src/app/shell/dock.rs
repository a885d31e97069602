//! The dock under the timeline: the kernel panel when one is open and, in presentation mode,
//! the selected event's details beside it. Docked, neither ever covers the events it describes
//! (the kernel panel used to float over the timeline, over its own kernel); on a projector the
//! details below leave the timeline the window's width, where a third column left it a strip.

use eframe::egui::{self, Ui};

use super::SightlineApp;
use crate::app::document::Document;

/// The dock's share of the height below the window's bars: what it opens with, and at most.
const DOCK_SHARE: f32 = 0.42;
const DOCK_MAX_SHARE: f32 = 0.6;

impl SightlineApp {
    /// Draws the dock (nothing when it has nothing to show); `details` puts the details panel
    /// in it (presentation mode: only with a selection, the report's overview is no lesson).
    pub(super) fn dock(doc: &mut Document, ui: &mut Ui, details: bool, presenting: bool) {
        let kernel = doc.kernel.is_open();
        let details = details && doc.selection().event.is_some();
        if !kernel && !details {
            return;
        }
        let height = ui.available_height();
        // One remembered height per mode: presentation's is a share of a smaller window.
        egui::Panel::bottom(("dock", presenting))
            .resizable(true)
            .default_size(height * DOCK_SHARE)
            .min_size(100.0_f32.min(height * 0.3))
            .max_size((height * DOCK_MAX_SHARE).max(100.0))
            .show(ui, |ui| {
                if details && kernel {
                    let width = ui.available_width();
                    egui::Panel::left(("dock_details", presenting))
                        .resizable(true)
                        .default_size(width * 0.4)
                        .min_size(200.0_f32.min(width * 0.3))
                        .max_size((width * 0.6).max(200.0))
                        .show(ui, |ui| Self::docked_details(doc, ui));
                    doc.kernel_panel_ui(ui);
                } else if details {
                    Self::docked_details(doc, ui);
                } else {
                    doc.kernel_panel_ui(ui);
                }
            });
    }

    /// The details panel's contents, scrolled down (never sideways: they wrap to the width).
    fn docked_details(doc: &mut Document, ui: &mut Ui) {
        egui::ScrollArea::vertical()
            .id_salt("docked_details")
            .auto_shrink([false, false])
            .show(ui, |ui| Self::details_contents(doc, ui));
    }
}
