//! The kernel panel's speed-of-light section: per source, compute (SM) and
//! memory throughput as two bars and that source's verdict, named by its
//! source; then which source the panel goes by and why (counters over
//! sampling: `analysis::metrics::speed_of_light::judge`).

use eframe::egui::{self, Color32, RichText, Ui};

use crate::analysis::metrics::SetSummary;
use crate::analysis::metrics::speed_of_light::{SourceNumbers, judge};

const SM_COLOR: Color32 = Color32::from_rgb(90, 170, 255);
const MEMORY_COLOR: Color32 = Color32::from_rgb(240, 160, 60);

pub fn ui(ui: &mut Ui, summaries: &[SetSummary], period_ns: Option<f64>, median_ns: Option<f64>) {
    ui.separator();
    ui.heading("Speed of light");
    let sources: Vec<SourceNumbers> = summaries
        .iter()
        .map(|s| SourceNumbers {
            source: s.set.source,
            speed_of_light: s.speed_of_light,
            too_short: s.too_short,
        })
        .collect();
    if sources
        .iter()
        .all(|s| s.speed_of_light.is_none() && s.too_short == 0)
    {
        ui.label(
            "No throughput metrics for this kernel (SM and memory throughput, or nsys's \
             SM Issue and DRAM bandwidth samples).",
        );
        return;
    }
    let judgement = judge(&sources, period_ns, median_ns);
    for ((source, line), s) in judgement.lines.iter().zip(&sources) {
        let trusted = judgement.trusted == Some(*source);
        let mark = if trusted { " (trusted)" } else { "" };
        ui.label(RichText::new(format!("{}{mark}", source.label())).strong());
        if let Some(sol) = s.speed_of_light {
            bar(ui, "Compute (SM) throughput", sol.sm_percent, SM_COLOR);
            bar(ui, "Memory throughput", sol.memory_percent, MEMORY_COLOR);
        }
        let text = RichText::new(format!("{}: {line}", source.short_label()));
        ui.label(if trusted { text.strong() } else { text.weak() });
    }
    if !judgement.why.is_empty() {
        ui.add(egui::Label::new(RichText::new(&judgement.why).italics()).wrap());
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
