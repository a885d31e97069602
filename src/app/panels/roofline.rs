//! The kernel panel's roofline: log-log FLOP/s against arithmetic intensity
//! (FLOPs per DRAM byte), the device's ceilings (FP32 FMA, dense FP16/BF16
//! tensor, DRAM bandwidth) from the report's GPU properties, and the kernel as
//! a point per source; the achieved numbers against the peaks in words. When
//! the kernel cannot be plotted, the section says why.

use eframe::egui::{self, Color32, RichText, Ui};
use egui_plot::{Line, Plot, PlotPoints, Points};

use crate::analysis::metrics::SetSummary;
use crate::analysis::metrics::roofline::{Ceilings, against_peak, attainable, ceilings};
use crate::model::Trace;

const FP32: Color32 = Color32::from_rgb(120, 200, 120);
const TENSOR: Color32 = Color32::from_rgb(200, 120, 220);
const KERNEL: [Color32; 3] = [
    Color32::from_rgb(255, 200, 0),
    Color32::from_rgb(255, 90, 90),
    Color32::from_rgb(90, 220, 255),
];

/// Why a kernel the speed of light calls compute-bound can sit far under
/// the roofline's FLOP peak.
const SPEED_OF_LIGHT_VS_ROOFLINE: &str = "Far under the FLOP peak: the roofline counts FLOPs \
    only, while the speed of light's SM throughput is the busiest SM unit (loads, shared memory, \
    integer and address work count too), so a kernel can be compute-bound there and still use a \
    small share of the FP32 FLOP peak.";

pub fn ui(ui: &mut Ui, trace: &Trace, summaries: &[SetSummary]) {
    ui.separator();
    ui.heading("Roofline");
    let Some(gpu) = trace.gpus.first() else {
        ui.label("Not plotted: the report lists no GPU, so there are no ceilings.");
        return;
    };
    let c = match ceilings(gpu) {
        Ok(c) => c,
        Err(e) => {
            ui.label(format!("Not plotted: {e}."));
            return;
        }
    };
    let mut points = Vec::new();
    for s in summaries {
        match &s.roofline {
            Ok(p) => {
                ui.label(RichText::new(s.set.source.label()).weak());
                let tflops = p.flops_per_second();
                let peak = if c.tensor.is_some() && tflops > c.fp32 {
                    c.tensor.unwrap_or(c.fp32)
                } else {
                    c.fp32
                };
                ui.label(
                    RichText::new(format!(
                        "{} · {} DRAM · {:.1} FLOP/byte ({} instances)",
                        against_peak(tflops, peak, "TFLOPS", 1e12),
                        against_peak(p.bytes_per_second(), c.dram, "GB/s", 1e9),
                        p.intensity(),
                        p.instances
                    ))
                    .strong(),
                );
                ui.add(egui::Label::new(RichText::new(p.how()).weak()).wrap());
                if tflops < 0.5 * peak {
                    ui.add(
                        egui::Label::new(RichText::new(SPEED_OF_LIGHT_VS_ROOFLINE).weak()).wrap(),
                    );
                }
                points.push((
                    s.set.source.label(),
                    [p.intensity().log10(), tflops.log10()],
                ));
            }
            Err(why) => {
                ui.label(format!("{}: {why}.", s.set.source.label()));
            }
        }
    }
    ui.label(
        RichText::new(format!(
            "{}: FP32 {:.1} TFLOPS{}, DRAM {:.0} GB/s (from the report's SMs, clock and bandwidth)",
            c.gpu_name,
            c.fp32 / 1e12,
            c.tensor
                .map(|t| format!(", FP16/BF16 tensor {:.0} TFLOPS", t / 1e12))
                .unwrap_or_default(),
            c.dram / 1e9
        ))
        .weak(),
    );
    if points.is_empty() {
        return;
    }
    plot(ui, &c, points);
}

/// The roof `peak` over intensities 10^-2 … 10^4, in log10 coordinates.
fn roof(c: &Ceilings, peak: f64) -> Vec<[f64; 2]> {
    (-20..=40)
        .map(|i| {
            let x = i as f64 / 10.0;
            [x, attainable(c, peak, 10f64.powf(x)).log10()]
        })
        .collect()
}

fn plot(ui: &mut Ui, c: &Ceilings, points: Vec<(&'static str, [f64; 2])>) {
    let power = |v: f64| -> String {
        let e = v.round();
        if (v - e).abs() < 1e-6 {
            format!("1e{e:.0}")
        } else {
            String::new()
        }
    };
    Plot::new("kernel_roofline")
        .height(240.0)
        .x_axis_label("arithmetic intensity (FLOP/byte, log)")
        .y_axis_label("FLOP/s (log)")
        .x_axis_formatter(move |mark, _| power(mark.value))
        .y_axis_formatter(move |mark, _| power(mark.value))
        .allow_scroll(false)
        .legend(egui_plot::Legend::default().position(egui_plot::Corner::LeftTop))
        .show(ui, |plot_ui| {
            plot_ui
                .line(Line::new("FP32 FMA + DRAM", PlotPoints::new(roof(c, c.fp32))).color(FP32));
            if let Some(t) = c.tensor {
                plot_ui.line(
                    Line::new("FP16/BF16 tensor + DRAM", PlotPoints::new(roof(c, t))).color(TENSOR),
                );
            }
            for (i, (source, point)) in points.into_iter().enumerate() {
                plot_ui.points(
                    Points::new(
                        format!("this kernel ({source})"),
                        PlotPoints::new(vec![point]),
                    )
                    .radius(5.0)
                    .color(KERNEL[i % KERNEL.len()]),
                );
            }
        });
}
