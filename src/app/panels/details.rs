//! The details panel: every field of the selected event and its correlated work.

use eframe::egui::{self, Ui};

use crate::app::state::events::EventRef;
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
    // A narrow panel (a projector at presentation zoom, the dock beside the kernel panel) puts
    // each value under its name, in the panel's whole width: a value column beside the names
    // left a few characters a line to a kernel's name and cut its numbers (issue 45).
    let narrow = ui.available_width() < 300.0;
    let fields = selected.fields(trace);
    if narrow {
        for (k, v) in fields {
            ui.strong(k);
            ui.indent(("details", k), |ui| value_label(ui, &v, true));
        }
    } else {
        egui::Grid::new("details")
            .num_columns(2)
            .striped(true)
            .min_col_width(120.0)
            .show(ui, |ui| {
                for (k, v) in fields {
                    ui.strong(k);
                    value_label(ui, &v, false);
                    ui.end_row();
                }
            });
    }
    if !related.is_empty() {
        ui.separator();
        let title = if selected.table == crate::app::state::events::Table::Api {
            "Launched GPU work"
        } else {
            "Launched by"
        };
        ui.strong(title);
        for &r in related.iter().take(50) {
            let text = format!(
                "{}: {}",
                r.table.label(),
                crate::app::widgets::format::clip(
                    r.short_name(trace),
                    crate::app::widgets::format::MAX_LABEL_CHARS
                )
            );
            if ui.link(text).clicked() {
                jump = Some(r);
            }
            // How long the work waited between the call and its start on the GPU.
            let (call, work) = if selected.table == crate::app::state::events::Table::Api {
                (selected, r)
            } else {
                (r, selected)
            };
            if call.table == crate::app::state::events::Table::Api {
                let latency = work.start(trace) - call.start(trace);
                ui.weak(format!(
                    "from call start to GPU start: {}",
                    crate::app::widgets::format::exact(latency)
                ));
            }
        }
    }
    jump
}

/// One field's value, with a Copy menu. Beside its name a number stays on one line (broken at
/// a separator it reads as two numbers: "11,883,676, / 786 ns") and a name may wrap; under its
/// name (`alone`) a value has the panel's width, and wraps at its spaces if it must.
fn value_label(ui: &mut Ui, value: &str, alone: bool) {
    // Clipped for layout; the Copy menu copies it whole.
    let label = egui::Label::new(crate::app::widgets::format::clip(
        value,
        crate::app::widgets::format::MAX_LABEL_CHARS,
    ));
    let label = if !alone && (is_number(value) || value.len() < 32) {
        label.extend()
    } else {
        label.wrap()
    };
    ui.add(label).context_menu(|ui| {
        if ui.button("Copy").clicked() {
            ui.ctx().copy_text(value.to_string());
            ui.close();
        }
    });
}

/// What the details panel shows with nothing selected: what is in the report,
/// and how to get at an event. The panel keeps its place either way, so a
/// click never moves what is under the pointer (a double-click's second
/// click lands where the first did).
pub fn overview(ui: &mut Ui, trace: &Trace) {
    use crate::app::widgets::format::{duration, grouped};
    ui.heading("Report");
    ui.weak("Click an event for its details; double-click or F zooms to it.");
    ui.add_space(6.0);
    let (start, end) = trace.info.time_range;
    let counts = [
        ("Kernels", trace.kernels.spans.len()),
        ("Memory copies", trace.memcpys.spans.len()),
        ("Memory sets", trace.memsets.spans.len()),
        ("CUDA API calls", trace.cuda_api.spans.len()),
        ("NVTX ranges", trace.nvtx.spans.len()),
        ("OS runtime calls", trace.osrt.spans.len()),
    ];
    // Narrow first column, wrapping values: the panel may be narrow (a
    // projector at presentation zoom) and must not need a horizontal scroll.
    let value = |ui: &mut Ui, text: String| ui.add(egui::Label::new(text).wrap());
    egui::Grid::new("overview")
        .num_columns(2)
        .striped(true)
        .min_col_width(60.0)
        .show(ui, |ui| {
            ui.strong("Duration");
            value(ui, duration(end.saturating_sub(start)));
            ui.end_row();
            if let Some(v) = &trace.info.nsys_version {
                ui.strong("Recorded by");
                value(ui, format!("nsys {v}"));
                ui.end_row();
            }
            for gpu in &trace.gpus {
                ui.strong(format!("GPU {}", gpu.device_id));
                value(ui, gpu.name.clone());
                ui.end_row();
            }
            for (what, n) in counts.into_iter().filter(|&(_, n)| n > 0) {
                ui.strong(what);
                value(ui, grouped(n as i64));
                ui.end_row();
            }
        });
}

/// A value made of numbers and their units ("11,883,676,786 ns",
/// "1,024 × 1 × 1", "12.5 %"): it must stay on one line.
pub fn is_number(value: &str) -> bool {
    value.chars().any(|c| c.is_ascii_digit())
        && value.split_whitespace().all(|word| {
            let word = word.trim_matches(|c| matches!(c, '(' | ')' | '[' | ']' | ';'));
            word.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, ',' | '.' | '-' | '+' | '%' | '×'))
                || matches!(
                    word,
                    "ns" | "µs"
                        | "ms"
                        | "s"
                        | "B"
                        | "KiB"
                        | "MiB"
                        | "GiB"
                        | "KB"
                        | "MB"
                        | "GB"
                        | "x"
                        | "×"
                )
                || word.ends_with("/s")
        })
}
