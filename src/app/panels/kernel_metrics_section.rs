//! The kernel panel's hardware-metrics sections: each metric with min /
//! median / max over the kernel's instances, its unit and source; the speed
//! of light ([`crate::app::panels::speed_of_light`]) and the roofline
//! ([`crate::app::panels::roofline`]). The numbers are computed on a worker (a kernel may
//! have a million instances), tagged with what they are for.

use std::sync::Arc;
use std::time::Duration;

use eframe::egui::{self, RichText, Ui};

use crate::analysis::metrics::{SetSummary, sampled, summarise, units};
use crate::app::job::Job;
use crate::model::{KernelMetrics, MetricSource, StrId, Trace};

/// What a summary was computed for: kernel, range, and the sets' generation.
type Key = (StrId, Option<(i64, i64)>, u64);

#[derive(Default)]
pub struct MetricsSection {
    /// The document's metric sets, handed over before each frame.
    pub sets: Vec<Arc<KernelMetrics>>,
    pub generation: u64,
    key: Option<Key>,
    job: Job<Computed>,
    pub summaries: Vec<SetSummary>,
    /// The kernel's median duration and nsys's sampling period (ns), for the
    /// speed of light's words.
    pub median_ns: Option<f64>,
    pub period_ns: Option<f64>,
}

/// What the worker computes for one kernel.
struct Computed {
    summaries: Vec<SetSummary>,
    median_ns: Option<f64>,
    period_ns: Option<f64>,
}

/// The median duration of `kernels`' instances.
fn median_duration(trace: &Trace, kernels: &[u32]) -> Option<f64> {
    let spans = &trace.kernels.spans;
    let mut d: Vec<i64> = kernels
        .iter()
        .filter(|&&k| (k as usize) < spans.len())
        .map(|&k| spans.duration(k as usize))
        .collect();
    if d.is_empty() {
        return None;
    }
    let mid = d.len() / 2;
    let (_, &mut m, _) = d.select_nth_unstable(mid);
    Some(m as f64)
}

impl MetricsSection {
    /// Hands over the document's sets; a new generation recomputes.
    pub fn set_sources(&mut self, sets: &[Arc<KernelMetrics>], generation: u64) {
        if generation != self.generation {
            self.sets = sets.to_vec();
            self.generation = generation;
        }
    }

    pub fn is_pending(&self) -> bool {
        self.job.is_running()
    }

    /// Starts (or keeps) the computation for `name`'s `kernels` over `range`.
    pub fn request(
        &mut self,
        trace: &Arc<Trace>,
        name: StrId,
        range: Option<(i64, i64)>,
        kernels: Vec<u32>,
    ) {
        let key = (name, range, self.generation);
        if self.key == Some(key) {
            return;
        }
        self.key = Some(key);
        self.summaries.clear();
        if self.sets.is_empty() {
            self.job.cancel();
            return;
        }
        let (trace, sets) = (trace.clone(), self.sets.clone());
        self.job.start("sightline-kernel-metrics", None, move |_| {
            Some(Computed {
                summaries: summarise(&trace, &sets, &kernels),
                median_ns: median_duration(&trace, &kernels),
                period_ns: sampled::sampling_period(&trace),
            })
        });
    }

    /// Takes a finished computation.
    pub fn poll(&mut self) -> bool {
        match self.job.take() {
            Some(c) => {
                self.take(c);
                true
            }
            None => false,
        }
    }

    /// Blocks until the computation is done (tests, benchmarks).
    pub fn wait(&mut self) {
        if let Some(c) = self.job.wait() {
            self.take(c);
        }
    }

    fn take(&mut self, c: Computed) {
        self.summaries = c.summaries;
        self.median_ns = c.median_ns;
        self.period_ns = c.period_ns;
    }

    /// Draws the sections for the kernel whose instances are `kernels`.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        name: StrId,
        range: Option<(i64, i64)>,
        kernels: impl FnOnce() -> Vec<u32>,
    ) {
        if self.sets.is_empty() {
            return;
        }
        let key = (name, range, self.generation);
        if self.key != Some(key) {
            self.request(trace, name, range, kernels());
        }
        if self.poll() {
            ui.ctx().request_repaint();
        }
        ui.separator();
        ui.heading("Hardware metrics");
        if self.is_pending() {
            ui.ctx().request_repaint_after(Duration::from_millis(50));
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("computing…");
            });
            return;
        }
        if self.summaries.is_empty() {
            ui.label("No metric source has values for this kernel.");
            return;
        }
        for (i, s) in self.summaries.iter().enumerate() {
            metrics_table(ui, i, s);
        }
        crate::app::panels::speed_of_light::ui(ui, &self.summaries, self.period_ns, self.median_ns);
        crate::app::panels::roofline::ui(ui, trace, &self.summaries);
    }
}

/// A metric's value in `unit` as people read it (rounded to its unit's
/// places, grouped), or a flag where the unit cannot have it
/// ([`units::shown`]).
pub fn number(unit: &str, v: f64) -> String {
    units::shown(unit, v)
}

fn metrics_table(ui: &mut Ui, index: usize, s: &SetSummary) {
    let set = &s.set;
    ui.label(RichText::new(format!("Source: {}", set.source.label())).strong());
    for note in &set.notes {
        ui.label(RichText::new(note).weak());
    }
    // The set's notes are about the whole report; this line is about this
    // kernel's instances (said once, here).
    if set.source == MetricSource::NsysSampling && s.too_short > 0 {
        ui.label(format!(
            "{} instance(s) {} (fewer than {} samples): left out of these numbers.",
            s.too_short,
            sampled::TOO_SHORT,
            sampled::MIN_SAMPLES
        ));
    }
    egui::Grid::new(("kernel_metrics", index))
        .striped(true)
        .num_columns(6)
        .show(ui, |ui| {
            for h in ["Metric", "Unit", "Min", "Median", "Max", "Instances"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for m in &s.stats {
                let def = &set.metrics[m.metric as usize];
                ui.label(def.name.as_str());
                ui.label(def.unit.as_str());
                for v in [m.min, m.median, m.max] {
                    let text = number(&def.unit, v);
                    let label = ui.label(text.as_str());
                    if text.starts_with("impossible (") {
                        label.on_hover_text(format!(
                            "the source recorded {v}, which a value in {} cannot be",
                            if def.unit.is_empty() {
                                "this metric"
                            } else {
                                &def.unit
                            }
                        ));
                    }
                }
                ui.label(m.instances.to_string());
                ui.end_row();
            }
        });
}
