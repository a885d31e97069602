//! The report's warnings, behind one button of the menu bar: what the loader skipped or guessed,
//! and what nsys itself logged while recording (`DIAGNOSTIC_EVENT`: "No CUDA events collected…"),
//! each message once, with its severity and how often it was logged.

use eframe::egui::{self, Color32, RichText, Ui};

use crate::model::Trace;

const WARNING: Color32 = Color32::from_rgb(230, 180, 80);

/// The button's label: the loader's warnings and nsys's warnings and errors counted; a report
/// whose nsys messages are all information says how many there are. `None`: nothing to show.
pub fn label(trace: &Trace) -> Option<(String, bool)> {
    let diagnostics = &trace.info.diagnostics;
    let warnings = trace.warnings.len() + diagnostics.iter().filter(|d| d.is_warning()).count();
    if warnings > 0 {
        let s = if warnings == 1 { "" } else { "s" };
        return Some((format!("{warnings} warning{s}"), true));
    }
    (!diagnostics.is_empty()).then(|| (format!("{} nsys messages", diagnostics.len()), false))
}

/// The button and its list (nothing when there is nothing to list).
pub fn badge(ui: &mut Ui, trace: &Trace) {
    let Some((label, warns)) = label(trace) else {
        return;
    };
    let text = if warns {
        RichText::new(label).color(WARNING)
    } else {
        RichText::new(label).weak()
    };
    ui.menu_button(text, |ui| list(ui, trace))
        .response
        .on_hover_text("what the loader skipped or guessed, and what nsys logged while recording");
}

/// The loader's warnings, then nsys's messages.
fn list(ui: &mut Ui, trace: &Trace) {
    egui::ScrollArea::vertical()
        .max_height(400.0)
        .show(ui, |ui| {
            ui.set_max_width(640.0);
            // Left-aligned: a menu's justified layout would spread a wrapped line's letters.
            ui.with_layout(egui::Layout::top_down(egui::Align::Min), |ui| {
                lines(ui, trace)
            });
        });
}

/// The list's lines.
fn lines(ui: &mut Ui, trace: &Trace) {
    if !trace.warnings.is_empty() {
        ui.label(RichText::new("The loader noted while reading this report:").weak());
        for w in &trace.warnings {
            ui.add(egui::Label::new(format!("• {w}")).wrap());
        }
    }
    let diagnostics = &trace.info.diagnostics;
    if diagnostics.is_empty() {
        return;
    }
    if !trace.warnings.is_empty() {
        ui.separator();
    }
    ui.label(RichText::new("nsys logged while recording (the report's diagnostics):").weak());
    for d in diagnostics {
        let times = if d.count > 1 {
            format!(" (×{})", d.count)
        } else {
            String::new()
        };
        let text = format!("{}: {}{times}", d.severity_label, d.text);
        let text = if d.is_warning() {
            RichText::new(text).color(WARNING)
        } else {
            RichText::new(text)
        };
        ui.add(egui::Label::new(text).wrap());
    }
}
