//! Live capture in the window: the dialog that starts one (a benchmark and
//! its parameters), and the bar above a capture's timeline (what was
//! recorded, events per second, follow mode, Stop, the benchmark's output).
//!
//! The capture itself runs in [`crate::capture::session`]; this file only
//! turns its messages into the document's state and draws it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use eframe::egui::{self, RichText, Ui};

use crate::capture::benchmarks::{self, BenchmarkSpec, Params};
use crate::capture::counters::CounterRequest;
use crate::capture::environment;
use crate::capture::live::LiveReport;
use crate::capture::session::{CaptureJob, CaptureMessage, LiveStatus};
use crate::model::Trace;

/// A capture shown in a tab: running, or finished and kept for saving.
pub struct Live {
    pub job: Option<CaptureJob>,
    pub status: LiveStatus,
    /// Keep the newest events in view; off as soon as the user zooms or pans.
    pub follow: bool,
    /// What the benchmark printed.
    pub output: Vec<String>,
    /// What the capture is doing before its first snapshot, when it says.
    pub preparing: Option<String>,
    /// The finished capture's working file, for File ▸ Save as.
    pub report: Option<Arc<Mutex<LiveReport>>>,
    /// Why the capture failed or what went wrong in the benchmark.
    pub problem: Option<String>,
    pub stopped_early: bool,
    pub show_output: bool,
}

/// What a live capture asks of its document this frame.
pub enum LiveUpdate {
    Nothing,
    /// A newer snapshot of the report.
    Trace(Arc<Trace>),
}

impl Live {
    pub fn new(job: CaptureJob) -> Live {
        Live {
            job: Some(job),
            status: LiveStatus::default(),
            follow: true,
            output: Vec::new(),
            preparing: None,
            report: None,
            problem: None,
            stopped_early: false,
            show_output: false,
        }
    }

    pub fn is_running(&self) -> bool {
        self.job.is_some()
    }

    /// Takes the capture's messages; returns the newest snapshot, if any.
    /// `window`, when given, is woken by each message from then on.
    pub fn poll(&mut self, window: Option<&egui::Context>) -> LiveUpdate {
        let Some(job) = &mut self.job else {
            return LiveUpdate::Nothing;
        };
        if let Some(ctx) = window.filter(|_| !job.wakes()) {
            job.wake_with(crate::app::job::repaint(ctx.clone()));
        }
        let mut newest = None;
        let mut finished = false;
        while let Some(message) = job.take_next() {
            match message {
                CaptureMessage::Output(line) => self.output.push(line),
                CaptureMessage::Preparing(what) => self.preparing = Some(what),
                CaptureMessage::Snapshot(trace, status) => {
                    self.preparing = None;
                    self.status = status;
                    newest = Some(trace);
                }
                CaptureMessage::Finished(Ok(result)) => {
                    let result = *result;
                    self.status = result.status;
                    self.stopped_early = result.stopped_early;
                    self.problem = result.benchmark_error;
                    if result.dropped_records > 0 {
                        self.output.push(format!(
                            "CUPTI dropped {} records (its buffers were full)",
                            result.dropped_records
                        ));
                    }
                    self.report = Some(Arc::new(Mutex::new(result.live)));
                    newest = Some(result.trace);
                    finished = true;
                }
                CaptureMessage::Finished(Err(e)) => {
                    self.problem = Some(e.to_string());
                    finished = true;
                }
            }
        }
        if finished {
            self.job = None;
        }
        newest.map_or(LiveUpdate::Nothing, LiveUpdate::Trace)
    }

    /// Asks the capture to stop; what it recorded stays.
    pub fn stop(&self) {
        if let Some(job) = &self.job {
            job.stop();
        }
    }

    /// The bar above the timeline.
    pub fn bar(&mut self, ui: &mut Ui, label: &str) {
        ui.horizontal_wrapped(|ui| {
            let c = self.status.counts;
            let state = if self.is_running() {
                ui.spinner();
                "recording"
            } else if self.problem.is_some() && c.total() == 0 {
                "failed"
            } else if self.stopped_early {
                "stopped"
            } else {
                "finished"
            };
            ui.label(RichText::new(format!("{label}: {state}")).strong());
            ui.separator();
            if let Some(what) = self.preparing.as_ref().filter(|_| self.is_running()) {
                ui.label(format!("{what}…"));
            } else {
                ui.label(format!(
                "{:.1} s · {} events · {:.0} events/s · {} kernels · {} copies · {} API calls · {} NVTX",
                self.status.elapsed.as_secs_f64(),
                c.total(),
                self.status.events_per_second,
                c.kernels,
                c.copies,
                c.api_calls,
                c.nvtx
            ));
            }
            if self.is_running() {
                ui.separator();
                ui.checkbox(&mut self.follow, "Follow")
                    .on_hover_text("keep the newest events in view (zooming or panning turns it off)");
                if ui.button("Stop").clicked() {
                    self.stop();
                }
            }
            if !self.output.is_empty() {
                ui.toggle_value(&mut self.show_output, "Output");
            }
        });
        if let Some(lag) = self.is_running().then(|| lag_note(&self.status)).flatten() {
            ui.colored_label(ui.visuals().warn_fg_color, lag);
        }
        if let Some(problem) = &self.problem {
            ui.colored_label(ui.visuals().error_fg_color, problem);
        }
        if self.show_output {
            egui::ScrollArea::vertical()
                .max_height(160.0)
                .stick_to_bottom(true)
                .show(ui, |ui| {
                    for line in &self.output {
                        ui.monospace(line);
                    }
                });
        }
    }

    /// How soon the window should look again.
    pub fn repaint_after(&self) -> Option<Duration> {
        self.is_running().then_some(Duration::from_millis(50))
    }
}

/// How old the newest event of a snapshot may have been when it was written
/// before the bar says that the view trails the program: an event normally
/// reaches the working file within a CUPTI flush and a batch's writing
/// (tens of milliseconds).
pub const LAG_SHOWN: Duration = Duration::from_millis(250);

/// What the bar says while the writing trails what the program makes (a
/// program making kernels faster than the working file takes them in: a
/// CUDA graph of tiny kernels can). Both must hold: the newest event was
/// old when written, and record batches wait to be written. Age alone is no
/// sign: the first batch after the program was quiet for a while (compiling,
/// sleeping) brings an event as old as the quiet, with nothing waiting.
pub fn lag_note(status: &LiveStatus) -> Option<String> {
    let lag = status.newest_event_age_written;
    let waiting = status.batches_waiting;
    (lag >= LAG_SHOWN && waiting > 0).then(|| {
        let batches = if waiting == 1 { "batch" } else { "batches" };
        format!(
            "The view trails the program by {:.1} s: its events come faster than they are \
             written ({waiting} {batches} of records waiting); they come in as the writing \
             catches up.",
            lag.as_secs_f64()
        )
    })
}

/// Capture ▸ New capture: pick a benchmark, set its parameters, Start.
#[derive(Default)]
pub struct CaptureDialog {
    pub open: bool,
    benchmark: usize,
    /// Parameter values as typed, by parameter of the chosen benchmark.
    values: Vec<String>,
    /// Collect hardware counters per kernel (a separate counter pass).
    counters: bool,
    /// The metric list as typed (`default` or names).
    metrics: String,
    /// NVTX range names to sum the counters over, as typed.
    metric_ranges: String,
    error: Option<String>,
}

impl CaptureDialog {
    /// Opens the dialog with the first benchmark's defaults.
    pub fn show(&mut self) {
        self.open = true;
        self.error = None;
        if self.metrics.is_empty() {
            self.metrics = "default".into();
        }
        if self.values.is_empty() {
            self.choose(0);
        }
    }

    fn choose(&mut self, i: usize) {
        self.benchmark = i;
        self.values = benchmarks::all()
            .get(i)
            .map(|s| s.params.iter().map(|p| p.default.to_string()).collect())
            .unwrap_or_default();
    }

    /// Draws the dialog; returns the benchmark to capture when Start is
    /// pressed with valid parameters.
    pub fn ui(
        &mut self,
        ctx: &egui::Context,
    ) -> Option<(&'static BenchmarkSpec, Params, Option<CounterRequest>)> {
        if !self.open {
            return None;
        }
        let mut open = true;
        let mut start = None;
        egui::Window::new("New capture")
            .open(&mut open)
            .resizable(false)
            .show(ctx, |ui| {
                let all = benchmarks::all();
                if !environment::driver_present() {
                    ui.colored_label(ui.visuals().warn_fg_color, environment::NO_DRIVER);
                    ui.label("Capture › Replay shows how a recorded run unfolds instead.");
                }
                let current = all.get(self.benchmark).map_or("", |s| s.name);
                let mut chosen = None;
                egui::ComboBox::from_label("Benchmark")
                    .selected_text(current)
                    .show_ui(ui, |ui| {
                        for (i, spec) in all.iter().enumerate() {
                            if ui
                                .selectable_label(i == self.benchmark, spec.name)
                                .on_hover_text(spec.about)
                                .clicked()
                            {
                                chosen = Some(i);
                            }
                        }
                    });
                if let Some(i) = chosen {
                    self.choose(i);
                }
                let Some(spec) = all.get(self.benchmark) else {
                    return;
                };
                ui.label(RichText::new(spec.about).weak());
                egui::Grid::new("capture_params")
                    .num_columns(2)
                    .show(ui, |ui| {
                        for (param, value) in spec.params.iter().zip(self.values.iter_mut()) {
                            let label = ui.label(param.name).on_hover_text(param.help);
                            ui.text_edit_singleline(value).labelled_by(label.id);
                            ui.end_row();
                        }
                    });
                self.counters_ui(ui);
                if let Some(e) = &self.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                if ui.button("Start capture").clicked() {
                    let values = spec
                        .params
                        .iter()
                        .zip(&self.values)
                        .map(|(p, v)| (p.name, v.as_str()));
                    match (
                        benchmarks::params_with(spec, values),
                        self.counter_request(),
                    ) {
                        (Ok(params), Ok(counters)) => start = Some((spec, params, counters)),
                        (Err(e), _) => self.error = Some(e.to_string()),
                        (_, Err(e)) => self.error = Some(e),
                    }
                }
            });
        if start.is_some() || !open {
            self.open = false;
        }
        start
    }

    /// The hardware-counter choice: off, or a metric list and range names.
    fn counters_ui(&mut self, ui: &mut Ui) {
        ui.checkbox(&mut self.counters, "Hardware counters per kernel")
            .on_hover_text(
                "Runs the benchmark a second time under CUPTI's range profiler and joins the \
                 counters to the timeline's kernels (the timeline keeps a plain run's timings).",
            );
        if !self.counters {
            return;
        }
        egui::Grid::new("capture_counters")
            .num_columns(2)
            .show(ui, |ui| {
                let label = ui.label("Metrics").on_hover_text(
                    "`default`, or metric names as ncu spells them, comma-separated",
                );
                ui.text_edit_singleline(&mut self.metrics)
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui
                    .label("Sum over NVTX ranges")
                    .on_hover_text("Optional: range names, comma-separated");
                ui.text_edit_singleline(&mut self.metric_ranges)
                    .labelled_by(label.id);
                ui.end_row();
            });
    }

    fn counter_request(&self) -> Result<Option<CounterRequest>, String> {
        if !self.counters {
            return Ok(None);
        }
        let ranges = Some(self.metric_ranges.as_str()).filter(|r| !r.trim().is_empty());
        CounterRequest::from_args(Some(self.metrics.as_str()), ranges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_says_the_view_trails_only_when_the_writing_does() {
        let at = |written_ms: u64, on_screen_ms: u64, waiting: usize| LiveStatus {
            newest_event_age_written: Duration::from_millis(written_ms),
            newest_event_age: Duration::from_millis(on_screen_ms),
            batches_waiting: waiting,
            ..LiveStatus::default()
        };
        assert_eq!(lag_note(&at(20, 40, 0)), None, "a live view, as usual");
        assert_eq!(
            lag_note(&at(20, 40, 3)),
            None,
            "a few batches, written at once"
        );
        // A program that made no event for 3 s: nothing trails, whether
        // the snapshot came during the quiet or with the first batch after.
        assert_eq!(lag_note(&at(20, 3_000, 0)), None);
        assert_eq!(lag_note(&at(3_000, 3_020, 0)), None);
        let note = lag_note(&at(800, 830, 12)).expect("trailing");
        assert!(note.contains("by 0.8 s"), "{note}");
        assert!(note.contains("12 batches of records waiting"), "{note}");
        assert!(lag_note(&at(250, 260, 1)).is_some_and(|n| n.contains("(1 batch ")));
    }
}
