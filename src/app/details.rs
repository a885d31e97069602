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
        .min_col_width(120.0)
        .show(ui, |ui| {
            for (k, v) in selected.fields(trace) {
                ui.strong(k);
                // Times and numbers stay on one line; names may wrap.
                // Clipped for layout; the Copy menu below copies it whole.
                let label =
                    egui::Label::new(super::format::clip(&v, super::format::MAX_LABEL_CHARS));
                let label = if v.contains(" ns") || v.len() < 32 {
                    label.extend()
                } else {
                    label.wrap()
                };
                ui.add(label).context_menu(|ui| {
                    if ui.button("Copy").clicked() {
                        ui.ctx().copy_text(v.clone());
                        ui.close();
                    }
                });
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
            let text = format!(
                "{}: {}",
                r.table.label(),
                super::format::clip(r.short_name(trace), super::format::MAX_LABEL_CHARS)
            );
            if ui.link(text).clicked() {
                jump = Some(r);
            }
            // How long the work waited between the call and its start on the GPU.
            let (call, work) = if selected.table == super::events::Table::Api {
                (selected, r)
            } else {
                (r, selected)
            };
            if call.table == super::events::Table::Api {
                let latency = work.start(trace) - call.start(trace);
                ui.weak(format!(
                    "from call start to GPU start: {}",
                    super::format::exact(latency)
                ));
            }
        }
    }
    jump
}
