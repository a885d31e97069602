//! The kernel panel's speed-of-light section: compute (SM) and memory
//! throughput as two bars per source, and the verdict line (the logic is
//! `analysis::metrics::speed_of_light`).

use eframe::egui::{self, Color32, RichText, Ui};

use crate::analysis::metrics::SetSummary;

const SM_COLOR: Color32 = Color32::from_rgb(90, 170, 255);
const MEMORY_COLOR: Color32 = Color32::from_rgb(240, 160, 60);

pub fn ui(ui: &mut Ui, summaries: &[SetSummary]) {
    let with: Vec<_> = summaries
        .iter()
        .filter_map(|s| s.speed_of_light.map(|sol| (s, sol)))
        .collect();
    ui.separator();
    ui.heading("Speed of light");
    if with.is_empty() {
        ui.label(
            "No throughput metrics for this kernel (SM and memory throughput, or nsys's \
             SM Issue and DRAM bandwidth samples).",
        );
        return;
    }
    for (s, sol) in with {
        ui.label(RichText::new(s.set.source.label()).weak());
        bar(ui, "Compute (SM) throughput", sol.sm_percent, SM_COLOR);
        bar(ui, "Memory throughput", sol.memory_percent, MEMORY_COLOR);
        ui.label(RichText::new(sol.verdict()).strong());
    }
}

fn bar(ui: &mut Ui, label: &str, percent: f64, color: Color32) {
    ui.horizontal(|ui| {
        ui.add_sized([170.0, 18.0], egui::Label::new(label));
        let fraction = (percent / 100.0).clamp(0.0, 1.0) as f32;
        ui.add(
            egui::ProgressBar::new(fraction)
                .desired_width(320.0)
                .fill(color)
                .text(format!("{percent:.1} %")),
        );
    });
}
