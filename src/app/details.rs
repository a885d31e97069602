//! The details panel: every field of the selected event and its correlated work.

use eframe::egui::{self, Ui};

use super::events::EventRef;
use crate::model::Trace;

/// Draws the selection's fields; returns an event the user clicked to jump to.
pub fn ui(
    ui: &mut Ui,
    trace: &Trace,
    selected: EventRef,
    related: &[EventRef],
) -> Option<EventRef> {
    let mut jump = None;
    ui.heading("Selected event");
    egui::Grid::new("details")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for (k, v) in selected.fields(trace) {
                ui.strong(k);
                ui.add(egui::Label::new(v).wrap());
                ui.end_row();
            }
        });
    if !related.is_empty() {
        ui.separator();
        let title = if selected.table == super::events::Table::Api {
            "Launched GPU work"
        } else {
            "Launched by"
        };
        ui.strong(title);
        for &r in related.iter().take(50) {
            let text = format!("{}: {}", r.table.label(), r.short_name(trace));
            if ui.link(text).clicked() {
                jump = Some(r);
            }
        }
    }
    jump
}
