//! The kernel metrics a document has: what the report stores (a capture's
//! counters), nsys's GPU metrics averaged per kernel (computed on a worker
//! when the report has samples), and Nsight Compute results the user attached
//! (File ▸ Attach Nsight Compute results…, joined on a worker). The kernel
//! panel's sections and the timeline's metrics strip read these sets.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use eframe::egui::{self, Key, Ui};
use serde::{Deserialize, Serialize};

use crate::analysis::metrics::{ncu, sampled};
use crate::app::job::Job;
use crate::app::timeline::metrics_strip::MetricsStrip;
use crate::model::{KernelMetrics, Trace};

/// Generations are unique across documents and snapshots, so a view's cache
/// keyed by one never matches another trace's sets.
fn next_generation() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A finished background job.
enum AttachOutcome {
    Sampled(Option<Box<KernelMetrics>>),
    Attached(PathBuf, Result<Box<ncu::Joined>, String>),
}

/// The metric the strip shows, by name (indexes mean nothing in another
/// session): kept across restarts, shown again once a set that has it is in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StripChoice {
    /// The source's label ([`crate::model::MetricSource::label`]).
    pub source: String,
    pub metric: String,
}

#[derive(Default)]
pub struct MetricSets {
    /// Every set, in the order they arrived; the panel shows each.
    pub sets: Vec<Arc<KernelMetrics>>,
    /// Bumped whenever `sets` changes, so views can cache what they derive.
    pub generation: u64,
    /// Work under way: the sampled metrics, ncu files being joined; several
    /// at once, each its own job.
    jobs: Vec<Job<AttachOutcome>>,
    /// The last attach's outcome, for the File menu.
    pub message: Option<String>,
    /// The metrics strip's source and metric (indexes into `sets` and its
    /// metrics), when on.
    pub strip: Option<(usize, usize)>,
    /// The strip to show once its set is in (the last session's, or the
    /// choice kept while the report grows); none while one is chosen.
    pub wanted: Option<StripChoice>,
    /// The path box of File ▸ Attach, and the NVTX range ncu filtered on.
    path_text: String,
    nvtx_text: String,
}

impl MetricSets {
    /// The report's own sets now; the sampled GPU metrics on a worker. A
    /// report still being opened has none yet (its counters are read last).
    pub fn start(trace: &Arc<Trace>) -> Self {
        if !trace.is_complete() {
            return MetricSets {
                generation: next_generation(),
                ..MetricSets::default()
            };
        }
        let mut sets = MetricSets {
            sets: trace.kernel_metrics.iter().cloned().map(Arc::new).collect(),
            generation: next_generation(),
            ..MetricSets::default()
        };
        if !trace.metrics.is_empty() {
            let trace = trace.clone();
            sets.spawn("sightline-gpu-metrics", move || {
                AttachOutcome::Sampled(sampled::kernel_metrics(&trace).map(Box::new))
            });
        }
        sets
    }

    fn spawn(&mut self, name: &str, work: impl FnOnce() -> AttachOutcome + Send + 'static) {
        let mut job = Job::default();
        if job.start(name, None, move |_| Some(work())) {
            self.jobs.push(job);
        } else {
            self.message = Some("cannot start a worker thread".into());
        }
    }

    pub fn is_busy(&self) -> bool {
        !self.jobs.is_empty()
    }

    /// Joins `path` (an `ncu --csv --page raw` file) to the report's kernels
    /// on a worker; `nvtx` is the range ncu was filtered on.
    pub fn attach(&mut self, trace: &Arc<Trace>, path: PathBuf, nvtx: Option<String>) {
        let trace = trace.clone();
        self.message = Some(format!("joining {} …", path.display()));
        self.spawn("sightline-ncu", move || {
            let joined = ncu::attach(&trace, &path, nvtx.as_deref()).map(Box::new);
            AttachOutcome::Attached(path, joined)
        });
    }

    /// Takes finished jobs; true when something changed.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        let mut done = Vec::new();
        for (i, job) in self.jobs.iter_mut().enumerate() {
            match job.take() {
                Some(outcome) => done.push((i, Some(outcome))),
                None if !job.is_running() => done.push((i, None)),
                None => {}
            }
        }
        for (i, job) in done.into_iter().rev() {
            self.jobs.remove(i);
            changed = true;
            match job {
                Some(AttachOutcome::Sampled(Some(set))) => self.add(*set),
                Some(AttachOutcome::Sampled(None)) | None => {}
                Some(AttachOutcome::Attached(path, Ok(joined))) => {
                    self.message = Some(format!(
                        "{}: {} launches joined, {} matched no kernel",
                        path.display(),
                        joined.pairs.len(),
                        joined.unmatched.len()
                    ));
                    self.add(joined.metrics);
                }
                Some(AttachOutcome::Attached(_, Err(e))) => self.message = Some(e),
            }
        }
        changed
    }

    fn add(&mut self, set: KernelMetrics) {
        self.sets.push(Arc::new(set));
        self.generation = next_generation();
    }

    /// The strip shown, by name; or the one still wanted.
    pub fn choice(&self) -> Option<StripChoice> {
        let Some((s, m)) = self.strip else {
            return self.wanted.clone();
        };
        let set = self.sets.get(s)?;
        Some(StripChoice {
            source: set.source.label().to_string(),
            metric: set.metrics.get(m)?.name.clone(),
        })
    }

    /// The wanted strip, once a set that has its metric is in: chosen, and
    /// returned for the timeline.
    pub fn restore_strip(&mut self, trace: &Trace) -> Option<Arc<MetricsStrip>> {
        let wanted = self.wanted.as_ref()?;
        let (s, m) = self.sets.iter().enumerate().find_map(|(s, set)| {
            let m = (set.source.label() == wanted.source)
                .then(|| set.metrics.iter().position(|d| d.name == wanted.metric))??;
            Some((s, m))
        })?;
        let strip = MetricsStrip::new(trace, &self.sets[s], m).map(Arc::new)?;
        self.wanted = None;
        self.strip = Some((s, m));
        Some(strip)
    }

    /// View ▸ Metrics strip: off, or one metric of one source; sets the
    /// timeline's strip.
    pub fn strip_menu(
        &mut self,
        ui: &mut Ui,
        trace: &Trace,
        strip: &mut Option<Arc<MetricsStrip>>,
    ) {
        ui.menu_button("Metrics strip under kernels", |ui| {
            if self.sets.is_empty() {
                ui.label("No kernel metrics: attach Nsight Compute results (File menu).");
                return;
            }
            if ui.radio(self.strip.is_none(), "Off").clicked() {
                self.strip = None;
                self.wanted = None;
                *strip = None;
                ui.close();
            }
            let mut chosen = None;
            for (s, set) in self.sets.iter().enumerate() {
                ui.label(egui::RichText::new(set.source.label()).weak());
                for (m, def) in set.metrics.iter().enumerate() {
                    if ui
                        .radio(self.strip == Some((s, m)), def.name.as_str())
                        .clicked()
                    {
                        chosen = Some((s, m));
                    }
                }
            }
            if let Some((s, m)) = chosen {
                self.strip = Some((s, m));
                self.wanted = None;
                *strip = MetricsStrip::new(trace, &self.sets[s], m).map(Arc::new);
                ui.close();
            }
        });
    }

    /// Joins `path`, a file the user chose, with the NVTX range typed in the menu.
    pub fn attach_chosen(&mut self, trace: &Arc<Trace>, path: PathBuf) {
        let nvtx = Some(self.nvtx_text.trim().to_string()).filter(|s| !s.is_empty());
        self.attach(trace, path, nvtx);
    }

    /// File ▸ Attach Nsight Compute results…: a file asked for (true: the
    /// window shows the desktop's dialog, or its own browser), or a path
    /// typed in, and the NVTX range ncu filtered on.
    pub fn menu(&mut self, ui: &mut Ui, trace: &Arc<Trace>) -> bool {
        let mut ask = false;
        ui.horizontal(|ui| {
            let label = ui.label("ncu --nvtx-include:");
            ui.add(
                egui::TextEdit::singleline(&mut self.nvtx_text)
                    .hint_text("none, or e.g. MYPerf/")
                    .desired_width(110.0),
            )
            .labelled_by(label.id)
            .on_hover_text("the NVTX range ncu profiled in, when it was run with one");
        });
        if ui
            .button("Attach Nsight Compute results…")
            .on_hover_text("an `ncu --csv --page raw` file, joined to this report's kernels")
            .clicked()
        {
            ask = true;
            ui.close();
        }
        ui.horizontal(|ui| {
            let label = ui.label("Attach ncu CSV:");
            let r = ui
                .text_edit_singleline(&mut self.path_text)
                .labelled_by(label.id)
                .on_hover_text("a path to an `ncu --csv --page raw` file (Enter attaches)");
            if r.lost_focus()
                && ui.input(|i| i.key_pressed(Key::Enter))
                && !self.path_text.trim().is_empty()
            {
                let path = PathBuf::from(self.path_text.trim());
                let nvtx = Some(self.nvtx_text.trim().to_string()).filter(|s| !s.is_empty());
                self.attach(trace, path, nvtx);
                ui.close();
            }
        });
        if let Some(m) = &self.message {
            ui.label(egui::RichText::new(m).weak());
        }
        ask
    }
}
