//! The kernel panel: everything about one kernel name over the whole report
//! or the selected range — duration statistics with percentiles, launch
//! configurations with their theoretical occupancy, and three charts
//! (duration histogram, duration against time, launch latency).
//!
//! The numbers come from `analysis::kernels` (the same code as the CLI's
//! `kernel_launch_sum`); this file only arranges and draws them. The panel
//! never changes the document itself: a click on a point returns a
//! [`Command`] that the app applies, so the panel stays testable alone.

use std::sync::Arc;
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, Pos2, RichText, Ui};
use egui_plot::{Bar, BarChart, Plot, PlotPoints, Points, VLine};

use crate::analysis::kernels::{DurationStats, KernelStats, kernel_stats_for, occupancy_of};
use crate::analysis::occupancy::{DeviceLimits, LaunchShape, Occupancy, theoretical_occupancy};
use crate::analysis::projection::innermost_ranges;
use crate::analysis::stats::{self, Report, TimeRange};
use crate::app::job::Job;
use crate::app::panels::kernel_chart_labels;
use crate::app::state::command::Command;
use crate::app::state::events::{EventRef, Table};
use crate::app::state::selection::FollowsRange;
use crate::app::widgets::format;
use crate::app::widgets::table_export::TableExport;
use crate::model::{LaunchConfig, Ns, StrId, StreamIdx, Trace};

/// Reports with fewer kernels than this are summarised on the UI thread: the
/// walk over every kernel then takes well under the ~50 ms a frame can spare,
/// and the panel appears in the same frame as the click.
const INLINE_KERNELS: usize = 200_000;
/// From this width (points) the docked panel shows its numbers and its charts side by side.
const WIDE: f32 = 900.0;
/// Histogram bins.
const BINS: usize = 40;
/// When max/min duration exceeds this, bins are log-spaced: a linear
/// histogram would put nearly every instance in its first bar.
const LOG_SPREAD: f64 = 20.0;
/// A click on the scatter selects the nearest point within this many pixels.
const PICK_PX: f32 = 8.0;

/// Bars of a histogram over `[edges[i], edges[i + 1])` (nanoseconds).
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// Bins are log-spaced; the chart's x axis is then log10(ns).
    pub log: bool,
    pub edges: Vec<f64>,
    pub counts: Vec<u64>,
}

impl Histogram {
    /// `BINS` bins over `values` (ns); log-spaced when the spread is wide.
    pub fn of(values: &[i64]) -> Histogram {
        let (Some(&lo), Some(&hi)) = (values.iter().min(), values.iter().max()) else {
            return Histogram::default();
        };
        let (lo, hi) = (lo.max(0) as f64, hi.max(0) as f64);
        let log = lo > 0.0 && hi / lo > LOG_SPREAD;
        let (a, b) = if log {
            (lo.log10(), hi.log10())
        } else {
            (lo, hi)
        };
        // One bin of width 1 when every value is equal.
        let width = if b > a { (b - a) / BINS as f64 } else { 1.0 };
        let n = if b > a { BINS } else { 1 };
        let edges: Vec<f64> = (0..=n)
            .map(|i| a + width * i as f64)
            .map(|e| if log { 10f64.powf(e) } else { e })
            .collect();
        let mut h = Histogram {
            log,
            edges,
            counts: vec![0; n],
        };
        // One binning rule (`bin_of`) for the counts and for a clicked bar's
        // instances, so they always agree.
        for &v in values {
            if let Some(i) = h.bin_of(v as f64) {
                h.counts[i] += 1;
            }
        }
        h
    }

    /// The bin a value (ns) falls in, as [`Histogram::of`] counts it.
    fn bin_of(&self, ns: f64) -> Option<usize> {
        let n = self.counts.len();
        let (a, b) = (*self.edges.first()?, *self.edges.last()?);
        let (a, b, x) = if self.log {
            (a.log10(), b.log10(), ns.max(1.0).log10())
        } else {
            (a, b, ns)
        };
        let width = if n > 0 && b > a {
            (b - a) / n as f64
        } else {
            1.0
        };
        Some((((x - a) / width).max(0.0) as usize).min(n.checked_sub(1)?))
    }

    /// Chart x of a value in nanoseconds (log10 for log bins, µs otherwise).
    pub fn x(&self, ns: f64) -> f64 {
        if self.log {
            ns.max(1.0).log10()
        } else {
            ns / 1e3
        }
    }

    /// Nanoseconds of a chart x.
    pub fn ns(&self, x: f64) -> f64 {
        if self.log { 10f64.powf(x) } else { x * 1e3 }
    }
}

/// One launch configuration with its instance count and occupancy.
#[derive(Clone, Debug)]
pub struct ConfigRow {
    pub config: LaunchConfig,
    pub instances: u64,
    pub occupancy: Option<Occupancy>,
    /// The limits of the GPU that ran it, for the "what if" curve.
    pub limits: Option<DeviceLimits>,
}

/// The computed summary of one kernel name over one range.
#[derive(Clone, Debug)]
pub struct KernelView {
    pub stats: KernelStats,
    pub configs: Vec<ConfigRow>,
    /// (start, duration, kernel row) of every instance, by start.
    pub points: Vec<(Ns, Ns, u32)>,
    pub histogram: Histogram,
    /// Launch latency (API call start to kernel start) of the instances whose
    /// call the report has.
    pub latency: Option<Histogram>,
    /// The innermost NVTX range each instance was launched in, by name, with
    /// instance counts, most first ("" for launches outside any range).
    pub nvtx: Vec<(String, u64)>,
    pub took: Duration,
}

impl KernelView {
    /// Computes everything the panel shows; `None` when the kernel has no
    /// instance in `range`.
    pub fn compute(trace: &Trace, name: StrId, range: Option<TimeRange>) -> Option<KernelView> {
        let t0 = Instant::now();
        let stats = kernel_stats_for(trace, name, range)?;
        let spans = &trace.kernels.spans;
        // Which stream each kernel row lives on.
        let owners = crate::model::RowOwners::of(
            (trace.streams.iter().enumerate()).map(|(s, st)| (s as StreamIdx, &st.kernels)),
        );
        let stream_of = |row: u32| owners.owner_of(row);
        // The same attribution as `cuda_gpu_kern_sum:nvtx-name`.
        let innermost = innermost_ranges(trace);
        let mut under: std::collections::HashMap<StrId, u64> = std::collections::HashMap::new();
        let mut outside = 0u64;
        let mut points: Vec<(Ns, Ns, u32)> = Vec::with_capacity(stats.instances.len());
        let mut latencies = Vec::new();
        let mut config_stream: Vec<(LaunchConfig, StreamIdx)> = Vec::new();
        for &row in &stats.instances {
            let i = row as usize;
            let Some((start, end)) = spans.get(i) else {
                continue;
            };
            points.push((start, end - start, row));
            let Some(stream) = stream_of(row) else {
                continue;
            };
            let pid = trace.streams[stream as usize].pid;
            let call = trace
                .kernels
                .correlation
                .get(i)
                .and_then(|&c| trace.correlation.api_call(pid, c));
            if let Some(&call_start) = call.and_then(|c| trace.cuda_api.spans.start.get(c as usize))
            {
                latencies.push(start.saturating_sub(call_start));
            }
            match call
                .and_then(|c| innermost.get(c as usize))
                .and_then(|&r| trace.nvtx.spans.name.get(r as usize))
            {
                Some(&range) => *under.entry(range).or_default() += 1,
                None => outside += 1,
            }
            let config = trace
                .kernels
                .config
                .get(i)
                .and_then(|&c| trace.kernels.configs.get(c as usize))
                .copied()
                .unwrap_or_default();
            // The occupancy needs the device: remember one stream per config.
            if !config_stream.iter().any(|(c, _)| *c == config) {
                config_stream.push((config, stream));
            }
        }
        points.sort_unstable();
        let durations: Vec<i64> = points.iter().map(|p| p.1).collect();
        let configs = stats
            .configs
            .iter()
            .map(|(config, instances)| {
                let stream = config_stream
                    .iter()
                    .find(|(c, _)| c == config)
                    .map(|(_, s)| *s)
                    .or_else(|| stats.streams.first().copied());
                ConfigRow {
                    config: *config,
                    instances: *instances,
                    occupancy: stream.and_then(|s| occupancy_of(trace, s, config)),
                    limits: stream.and_then(|s| device_limits(trace, s)),
                }
            })
            .collect();
        let mut nvtx: Vec<(String, u64)> = under
            .into_iter()
            .map(|(n, c)| (trace.name(n).to_string(), c))
            .collect();
        if outside > 0 {
            nvtx.push((String::new(), outside));
        }
        nvtx.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Some(KernelView {
            nvtx,
            histogram: Histogram::of(&durations),
            latency: (!latencies.is_empty()).then(|| Histogram::of(&latencies)),
            stats,
            configs,
            points,
            took: t0.elapsed(),
        })
    }
}

/// The occupancy limits of the GPU that ran stream `stream`.
fn device_limits(trace: &Trace, stream: StreamIdx) -> Option<DeviceLimits> {
    let device = trace.streams.get(stream as usize)?.device_id;
    let gpu = trace.gpus.iter().find(|g| g.device_id == device)?;
    DeviceLimits::for_gpu(gpu)
}

/// Theoretical occupancy (percent) of `config` at every block size from one
/// warp to the device's maximum, a warp apart: the calculator's curve.
pub fn occupancy_curve(limits: &DeviceLimits, config: &LaunchConfig) -> Vec<[f64; 2]> {
    let warp = limits.warp_size.max(1);
    let mut shape = LaunchShape::from(config);
    (1..=limits.max_threads_per_block / warp)
        .filter_map(|w| {
            shape.threads_per_block = w * warp;
            let o = theoretical_occupancy(limits, &shape).ok()?;
            Some([(w * warp) as f64, o.theoretical_percent])
        })
        .collect()
}

/// What the scatter drew in its last frame: decimated points, cached until
/// the visible x range or the plot width changes.
#[derive(Default)]
struct Decimated {
    key: Option<(u64, u64, u32)>,
    /// Indexes into `KernelView::points`.
    shown: Vec<u32>,
}

/// At most two points (the shortest and the longest instance) per pixel
/// column of `[x0, x1]` (ns) over `columns` columns: a million instances
/// draw as a few thousand markers and the outliers stay visible.
fn decimate(points: &[(Ns, Ns, u32)], x0: f64, x1: f64, columns: usize) -> Vec<u32> {
    let lo = points.partition_point(|p| (p.0 as f64) < x0);
    let hi = points.partition_point(|p| (p.0 as f64) <= x1);
    if hi <= lo {
        return Vec::new();
    }
    if hi - lo <= columns * 2 {
        return (lo as u32..hi as u32).collect();
    }
    let columns = columns.max(1);
    let width = ((x1 - x0) / columns as f64).max(1e-9);
    let mut best: Vec<Option<(u32, u32)>> = vec![None; columns];
    for i in lo..hi {
        let c = (((points[i].0 as f64 - x0) / width) as usize).min(columns - 1);
        let d = points[i].1;
        best[c] = Some(match best[c] {
            None => (i as u32, i as u32),
            Some((a, b)) => (
                if d < points[a as usize].1 {
                    i as u32
                } else {
                    a
                },
                if d > points[b as usize].1 {
                    i as u32
                } else {
                    b
                },
            ),
        });
    }
    let mut out = Vec::with_capacity(columns * 2);
    for (a, b) in best.into_iter().flatten() {
        out.push(a);
        if b != a {
            out.push(b);
        }
    }
    out
}

/// The panel's state, one per document.
#[derive(Default)]
pub struct KernelPanel {
    /// The kernel shown (a demangled name).
    pub name: Option<StrId>,
    /// Whether the panel is over the document's selected range, and follows
    /// it (the whole report while none is selected), or over the whole
    /// report whatever is selected ("Whole report"). The range itself is the
    /// document's: see [`KernelPanel::over`].
    follows_selection: bool,
    pub view: Option<Arc<KernelView>>,
    /// The view being computed for a big report (a newer kernel cancels it).
    job: Job<Option<KernelView>>,
    scatter: Decimated,
    /// Screen positions of the scatter's markers in the last frame, with
    /// their kernel rows (for tests, which click them).
    pub scatter_points: Vec<(Pos2, u32)>,
    /// The part of the scatter visible in the last frame.
    pub scatter_rect: Option<egui::Rect>,
    /// The scatter's plot frame on screen and the session times (ns) at its
    /// left and right edges in the last frame: where a time is plotted.
    pub scatter_axis: Option<(egui::Rect, f64, f64)>,
    /// The scatter's y range (µs) in the last frame.
    pub scatter_y: Option<(f64, f64)>,
    /// Whether the scatter's y axis starts at 0 (else it fits the data, so
    /// that variation shows).
    pub scatter_from_zero: bool,
    scatter_y_was_zero: Option<bool>,
    /// Screen centres of the duration histogram's non-empty bars in the last
    /// frame, with their bin (for tests).
    pub histogram_bars: Vec<(Pos2, usize)>,
    /// The histogram bin clicked and how many of its instances were shown.
    pub bin: Option<(usize, usize)>,
    /// The "what if" block size (threads), 0 until the user moves it.
    what_if_block: u32,
    /// Copy and Save CSV of the launch configurations (`kernel_launch_sum`
    /// rows) and of the instances (`cuda_gpu_trace` rows).
    pub config_export: TableExport,
    pub instance_export: TableExport,
    /// Hardware metrics, speed of light and roofline (their own file).
    pub metrics: crate::app::panels::kernel_metrics_section::MetricsSection,
}

/// A panel over the selected range is computed over each new one.
impl FollowsRange for KernelPanel {
    fn range_changed(&mut self, trace: &Arc<Trace>, range: Option<TimeRange>) {
        if let (Some(name), true) = (self.name, self.follows_selection) {
            self.show(trace, name, range);
        }
    }
}

impl KernelPanel {
    pub fn is_open(&self) -> bool {
        self.name.is_some()
    }

    pub fn is_pending(&self) -> bool {
        self.job.is_running()
    }

    /// Shows kernel `name` over the selected `range` (the whole report
    /// without one), following the selection from now on. The kernel it
    /// already shows stays as it is: a click on one of its instances must
    /// not undo a pin to the whole report.
    pub fn open(&mut self, trace: &Arc<Trace>, name: StrId, range: Option<TimeRange>) {
        if self.name == Some(name) {
            return;
        }
        self.follows_selection = true;
        self.show(trace, name, range);
    }

    /// The panel follows the selected range again (undoes a pin to "Whole
    /// report"): a lesson step shows it as its file says.
    pub fn unpin(&mut self) {
        self.follows_selection = true;
    }

    /// The range the panel is over when the document's selected range is `selected`
    /// (`None`: the whole report).
    pub fn over(&self, selected: Option<TimeRange>) -> Option<TimeRange> {
        selected.filter(|_| self.follows_selection)
    }

    /// Shows kernel `name` over `range`.
    fn show(&mut self, trace: &Arc<Trace>, name: StrId, range: Option<TimeRange>) {
        self.name = Some(name);
        self.view = None;
        self.scatter = Decimated::default();
        self.scatter_points.clear();
        self.histogram_bars.clear();
        self.bin = None;
        self.what_if_block = 0;
        self.config_export.forget();
        self.instance_export.forget();
        self.compute(trace, range);
    }

    /// The report grew: the kernel shown (named `name` in `trace`, whose ids
    /// may differ from the old trace's) is computed again over the same range
    /// (`selected` is the document's). What is on screen stays until the new view is in.
    pub fn refresh(&mut self, trace: &Arc<Trace>, name: StrId, selected: Option<TimeRange>) {
        self.name = Some(name);
        self.compute(trace, self.over(selected));
    }

    /// Computes the view of the kernel and range shown: here for small
    /// reports, on a worker for big ones (a newer request replaces it).
    fn compute(&mut self, trace: &Arc<Trace>, range: Option<TimeRange>) {
        let Some(name) = self.name else {
            return;
        };
        if trace.kernels.spans.len() < INLINE_KERNELS {
            self.job.cancel();
            self.view = KernelView::compute(trace, name, range).map(Arc::new);
            return;
        }
        let shared = trace.clone();
        let started = self.job.start("sightline-kernel", None, move |_| {
            Some(KernelView::compute(&shared, name, range))
        });
        if !started {
            // No thread could be started: compute here, late but right.
            self.view = KernelView::compute(trace, name, range).map(Arc::new);
        }
    }

    pub fn close(&mut self) {
        self.name = None;
        self.view = None;
        self.job.cancel();
    }

    /// Takes a finished computation; true when one arrived.
    pub fn poll(&mut self, _trace: &Trace) -> bool {
        match self.job.take() {
            Some(view) => {
                self.view = view.map(Arc::new);
                true
            }
            None => false,
        }
    }

    /// Blocks until the computation is done (tests, benchmarks).
    pub fn wait(&mut self, _trace: &Trace) {
        if let Some(view) = self.job.wait() {
            self.view = view.map(Arc::new);
        }
    }

    /// The kernel rows of the instances in duration-histogram bin `bin`, by start.
    pub fn bin_instances(view: &KernelView, bin: usize) -> Vec<u32> {
        let h = &view.histogram;
        view.points
            .iter()
            .filter(|p| h.bin_of(p.1 as f64) == Some(bin))
            .map(|p| p.2)
            .collect()
    }

    /// A bar was clicked: the first of its instances, or the next one when
    /// the same bar is clicked again.
    fn step_bin(&mut self, view: &KernelView, bin: usize) -> Option<Command> {
        let rows = Self::bin_instances(view, bin);
        let next = match self.bin {
            Some((b, n)) if b == bin => (n + 1) % rows.len().max(1),
            _ => 0,
        };
        self.bin = Some((bin, next));
        rows.get(next).map(|&r| Self::show_instance(r))
    }

    /// The command that selects instance `row` (a kernel row) on the timeline.
    pub fn show_instance(row: u32) -> Command {
        Command::ShowEvent(EventRef::new(Table::Kernel, row))
    }

    /// Draws the panel into `ui` (the window docks it under the timeline, so that it never
    /// covers the kernel it describes); returns what the app should do. `selected_range` is
    /// the document's range, offered as the scope.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        selected_range: Option<TimeRange>,
    ) -> Option<Command> {
        let name = self.name?;
        let ctx = ui.ctx().clone();
        let range = self.over(selected_range);
        if self.poll(trace) {
            ctx.request_repaint();
        }
        if self.is_pending() {
            ctx.request_repaint_after(Duration::from_millis(50));
        }
        let mut open = true;
        let mut command = None;
        let mut rescope = None;
        let title = format!(
            "Kernel: {}",
            format::clip(trace.name(name), format::MAX_LABEL_CHARS)
        );
        // The title wraps in the room the close button leaves.
        ui.horizontal_top(|ui| {
            let room = egui::vec2((ui.available_width() - 36.0).max(60.0), 0.0);
            ui.allocate_ui(room, |ui| {
                // The whole room, so that the close button sits at the panel's right edge.
                ui.set_min_width(room.x);
                ui.add(egui::Label::new(RichText::new(&title).strong()).wrap());
            });
            let x = ui.button("x").on_hover_text("close the kernel panel");
            x.widget_info(|| {
                egui::WidgetInfo::labeled(egui::Role::Button, true, "Close kernel panel")
            });
            if x.clicked() {
                open = false;
            }
        });
        ui.separator();
        ui.horizontal_wrapped(|ui| {
            let over = match range {
                Some(r) => format!(
                    "over the selected range, {} – {} (instances that start in it)",
                    format::duration(r.start),
                    format::duration(r.end)
                ),
                None => "over the whole report".to_string(),
            };
            ui.label(over);
            if range.is_some() && ui.button("Whole report").clicked() {
                rescope = Some(None);
            }
            if let Some(r) = selected_range
                && range != Some(r)
                && ui.button("Selected range").clicked()
            {
                rescope = Some(Some(r));
            }
        });
        let view = self.view.clone().filter(|_| !self.is_pending());
        if self.is_pending() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("computing…");
            });
        } else if view.is_none() {
            ui.label("No instance of this kernel starts in the range.");
        }
        if let Some(view) = view {
            let scope = (trace, name, range);
            if ui.available_width() >= WIDE {
                // Docked as wide as the timeline and half as high: the numbers on the left,
                // the charts on the right, neither scrolled out of reach.
                ui.columns(2, |columns| {
                    let [numbers, charts] = columns else { return };
                    Self::scrolled(numbers, "kernel_numbers", |ui| {
                        self.numbers(ui, scope, &view);
                    });
                    Self::scrolled(charts, "kernel_charts", |ui| {
                        command = self.charts(ui, trace, &view);
                    });
                });
            } else {
                Self::scrolled(ui, "kernel_panel", |ui| {
                    self.numbers(ui, scope, &view);
                    ui.separator();
                    command = self.charts(ui, trace, &view);
                });
            }
        }
        if let Some(r) = rescope {
            // "Whole report" stays so when another range is selected.
            self.follows_selection = r.is_some();
            self.show(trace, name, r);
        }
        if !open {
            self.close();
        }
        command
    }

    /// A column of the panel that scrolls down on its own.
    fn scrolled(ui: &mut Ui, id: &str, contents: impl FnOnce(&mut Ui)) {
        egui::ScrollArea::vertical()
            .id_salt(id)
            .auto_shrink([false, false])
            .show(ui, contents);
    }

    /// The panel's numbers: duration statistics, launch configurations and their exports, the
    /// occupancy's "what if", the hardware metrics.
    fn numbers(
        &mut self,
        ui: &mut Ui,
        (trace, name, range): (&Arc<Trace>, StrId, Option<TimeRange>),
        view: &KernelView,
    ) {
        summary(ui, trace, view);
        ui.separator();
        configs(ui, view);
        self.exports(ui, (trace, name, range), view);
        self.what_if(ui, view);
        let range = range.map(|r| (r.start, r.end));
        self.metrics.ui(ui, trace, name, range, || {
            view.points.iter().map(|p| p.2).collect()
        });
    }

    /// Copy / Save CSV of this kernel's rows of `kernel_launch_sum` (its
    /// configurations) and of `cuda_gpu_trace` (its instances), over the
    /// panel's range: the numbers `sightline stats` prints for them. Built
    /// on the export's worker: a kernel can have a million instances.
    fn exports(
        &mut self,
        ui: &mut Ui,
        (trace, name, range): (&Arc<Trace>, StrId, Option<TimeRange>),
        view: &KernelView,
    ) {
        let job = |report: Report| {
            let trace = trace.clone();
            move || -> crate::app::widgets::table_export::TableJob {
                Box::new(move || {
                    stats::compute_for_kernel(&trace, report, name, range).unwrap_or_default()
                })
            }
        };
        ui.horizontal(|ui| {
            ui.label("Configurations").on_hover_text(
                "this kernel's rows of `sightline stats --report kernel_launch_sum`",
            );
            self.config_export.ui(
                ui,
                Report::KernelLaunchSum.file_stem().as_str(),
                view.configs.len(),
                job(Report::KernelLaunchSum),
            );
        });
        ui.horizontal(|ui| {
            ui.label(format!(
                "Instances ({})",
                format::grouped(view.points.len() as i64)
            ))
            .on_hover_text("this kernel's rows of `sightline stats --report cuda_gpu_trace`");
            self.instance_export.ui(
                ui,
                Report::CudaGpuTrace.file_stem().as_str(),
                view.points.len(),
                job(Report::CudaGpuTrace),
            );
        });
    }

    /// The calculator's "what if": occupancy of the most used configuration
    /// at another block size, and the whole curve.
    fn what_if(&mut self, ui: &mut Ui, view: &KernelView) {
        let Some(row) = view.configs.first() else {
            return;
        };
        let Some(limits) = row.limits else {
            return;
        };
        let block = LaunchShape::from(&row.config).threads_per_block;
        if self.what_if_block == 0 {
            self.what_if_block = block;
        }
        let warp = limits.warp_size.max(1);
        let curve = occupancy_curve(&limits, &row.config);
        ui.horizontal(|ui| {
            let label = ui.label("What if the block had");
            // The slider and its value box both named by the label (screen
            // readers, and the UI tests' accessibility check).
            ui.add(
                egui::Slider::new(&mut self.what_if_block, warp..=limits.max_threads_per_block)
                    .step_by(warp as f64)
                    .show_value(false),
            )
            .labelled_by(label.id);
            ui.add(
                egui::DragValue::new(&mut self.what_if_block)
                    .range(warp..=limits.max_threads_per_block)
                    .speed(warp as f64)
                    .suffix(" threads"),
            )
            .labelled_by(label.id);
            let mut shape = LaunchShape::from(&row.config);
            shape.threads_per_block = self.what_if_block;
            match theoretical_occupancy(&limits, &shape) {
                Ok(o) => ui.monospace(format!(
                    "{:.1} % ({})",
                    o.theoretical_percent,
                    o.limiter_text()
                )),
                Err(e) => ui.weak(e.to_string()),
            };
        });
        let at = self.what_if_block as f64;
        Plot::new("kernel_what_if")
            .height(110.0)
            .x_axis_label("threads per block (most used configuration)")
            .y_axis_label("occupancy %")
            .include_y(0.0)
            .include_y(100.0)
            .allow_scroll(false)
            .show(ui, |plot_ui| {
                plot_ui.line(
                    egui_plot::Line::new("occupancy", PlotPoints::new(curve))
                        .color(Color32::from_rgb(118, 185, 0)),
                );
                plot_ui.vline(
                    VLine::new("launched", block as f64).color(Color32::from_rgb(90, 170, 255)),
                );
                plot_ui.vline(VLine::new("what if", at).color(Color32::from_rgb(255, 200, 0)));
            });
    }

    fn charts(&mut self, ui: &mut Ui, trace: &Trace, view: &KernelView) -> Option<Command> {
        let d = &view.stats.durations;
        ui.strong(if view.histogram.log {
            "Duration histogram (log bins)"
        } else {
            "Duration histogram"
        });
        ui.weak("click a bar to show its instances one after another");
        let chosen = self.bin.map(|b| b.0);
        let (bars, clicked) = histogram_plot(ui, "kernel_hist", &view.histogram, Some(d), chosen);
        self.histogram_bars = bars;
        let mut command = clicked.and_then(|bin| self.step_bin(view, bin));
        ui.horizontal(|ui| {
            ui.strong("Duration of each instance over time (click a point to show it)");
            ui.checkbox(&mut self.scatter_from_zero, "y from 0")
                .on_hover_text("start the duration axis at 0 (else it fits the instances, so their variation shows)");
        });
        command = self.scatter_plot(ui, trace, view).or(command);
        if let Some(h) = &view.latency
            && let Some(l) = &view.stats.launch_latency
        {
            ui.strong(kernel_chart_labels::latency_header(l));
            histogram_plot(ui, "kernel_latency", h, Some(l), None);
        }
        command
    }

    fn scatter_plot(&mut self, ui: &mut Ui, _trace: &Trace, view: &KernelView) -> Option<Command> {
        // The ruler's clock: session time, plotted in seconds and labelled
        // as the ruler labels it (an instance at 24.932 s is at 24.932 s).
        let to_x = |t: Ns| t as f64 / 1e9;
        let points = &view.points;
        let (first, last) = match (points.first(), points.last()) {
            (Some(a), Some(b)) => (a.0, b.0),
            _ => return None,
        };
        let cache = &mut self.scatter;
        let from_zero = self.scatter_from_zero;
        // A toggle refits the axes once (the plot keeps its bounds otherwise).
        let refit = self.scatter_y_was_zero != Some(from_zero);
        self.scatter_y_was_zero = Some(from_zero);
        let mut plot = Plot::new("kernel_scatter");
        if from_zero {
            plot = plot.include_y(0.0);
        }
        if refit {
            plot = plot.reset();
        }
        let response = plot
            .height(180.0)
            .x_axis_label("session time (as the ruler)")
            .y_axis_label("duration (µs)")
            .x_axis_formatter(|mark, _| format::tick(mark.value * 1e9, mark.step_size * 1e9))
            .label_formatter(|hover| {
                let at = match hover {
                    egui_plot::HoverPosition::NearDataPoint { position, .. } => position,
                    egui_plot::HoverPosition::Elsewhere { position } => position,
                };
                kernel_chart_labels::scatter_readout(points, at.x, at.y)
            })
            .allow_scroll(false)
            .show(ui, |plot_ui| {
                let bounds = plot_ui.plot_bounds();
                let width = plot_ui.transform().frame().width().max(1.0);
                // While the plot fits itself, decimate over every instance (the
                // bounds of the last frame may not hold them yet).
                let (x0, x1) = if plot_ui.auto_bounds().x {
                    (first as f64, last as f64)
                } else {
                    (bounds.min()[0] * 1e9, bounds.max()[0] * 1e9)
                };
                let frame = *plot_ui.transform().frame();
                let key = (x0.to_bits(), x1.to_bits(), width as u32);
                if cache.key != Some(key) {
                    cache.shown = decimate(points, x0, x1, width as usize);
                    cache.key = Some(key);
                }
                let xy: Vec<[f64; 2]> = cache
                    .shown
                    .iter()
                    .filter_map(|&i| points.get(i as usize))
                    .map(|p| [to_x(p.0), p.1 as f64 / 1e3])
                    .collect();
                let screen: Vec<(Pos2, u32)> = xy
                    .iter()
                    .zip(&cache.shown)
                    .filter_map(|(xy, &i)| {
                        let row = points.get(i as usize)?.2;
                        let p = plot_ui
                            .transform()
                            .position_from_point(&egui_plot::PlotPoint::new(xy[0], xy[1]));
                        Some((p, row))
                    })
                    .collect();
                plot_ui.points(
                    Points::new("instances", PlotPoints::new(xy))
                        .radius(2.5)
                        .color(Color32::from_rgb(90, 170, 255)),
                );
                let clicked = plot_ui.response().clicked();
                let pointer = plot_ui.response().interact_pointer_pos();
                let b = plot_ui.plot_bounds();
                let axis = (frame, b.min()[0] * 1e9, b.max()[0] * 1e9);
                let y = (b.min()[1], b.max()[1]);
                (screen, clicked.then_some(pointer).flatten(), axis, y)
            });
        let (screen, click, axis, y) = response.inner;
        self.scatter_axis = Some(axis);
        self.scatter_y = Some(y);
        self.scatter_rect = Some(response.response.rect.intersect(ui.clip_rect()));
        // Nearest marker to the click, in screen space.
        let command = click.and_then(|at| {
            screen
                .iter()
                .map(|&(p, row)| (p.distance(at), row))
                .filter(|(d, _)| *d <= PICK_PX)
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, row)| Self::show_instance(row))
        });
        self.scatter_points = screen;
        command
    }
}

/// Duration statistics, occupancy-free: the numbers `kernel_stats` gives.
fn summary(ui: &mut Ui, trace: &Trace, view: &KernelView) {
    let s = &view.stats;
    let d = &s.durations;
    egui::Grid::new("kernel_summary")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            let mut row = |k: &str, v: String| {
                ui.strong(k);
                ui.monospace(v);
                ui.end_row();
            };
            row("Instances", format::grouped(d.instances as i64));
            row(
                "Total time",
                format!(
                    "{} ({} ns)",
                    format::duration_wide(d.total),
                    format::grouped_wide(d.total)
                ),
            );
            row(
                "Share of GPU kernel time",
                format!("{:.1} %", s.gpu_time_percent),
            );
            row("Average", format::duration(d.avg.round() as Ns));
            row("Median", format::duration(d.median.round() as Ns));
            row("Minimum", format::duration(d.min));
            row("Maximum", format::duration(d.max));
            row("Std. deviation", format::duration(d.stddev.round() as Ns));
            row("P90", format::duration(d.p90));
            row("P99", format::duration(d.p99));
            let streams: Vec<String> = s
                .streams
                .iter()
                .filter_map(|&i| trace.streams.get(i as usize))
                .map(|st| format!("{} (device {})", st.stream_id, st.device_id))
                .collect();
            row("Streams", streams.join(", "));
            // Innermost NVTX range of each launch; the first few names.
            let ranges: Vec<String> = view
                .nvtx
                .iter()
                .take(6)
                .map(|(n, c)| {
                    let n = if n.is_empty() {
                        "(no range)"
                    } else {
                        n.as_str()
                    };
                    format!("{} ×{c}", format::clip(n, 60))
                })
                .collect();
            let more = if view.nvtx.len() > 6 { ", …" } else { "" };
            row("NVTX ranges", format!("{}{more}", ranges.join(", ")));
            row(
                "Computed in",
                format!("{:.1} ms", view.took.as_secs_f64() * 1e3),
            );
        });
}

fn xyz(v: [u32; 3]) -> String {
    format!("{}×{}×{}", v[0], v[1], v[2])
}

/// The launch configurations with their theoretical occupancy.
fn configs(ui: &mut Ui, view: &KernelView) {
    ui.strong(format!("Launch configurations ({})", view.configs.len()));
    egui::ScrollArea::horizontal()
        .id_salt("kernel_configs")
        .show(ui, |ui| {
            egui::Grid::new("kernel_configs_grid")
                .striped(true)
                .show(ui, |ui| {
                    // What a reader looks for first (the shape, how often,
                    // the occupancy and what limits it) leads, so the panel
                    // at its usual width shows it whole; the resources that
                    // explain the limiter follow, scrolled to if need be.
                    for h in [
                        "grid",
                        "block",
                        "instances",
                        "occupancy",
                        "limiter",
                        "regs/thread",
                        "static smem",
                        "dynamic smem",
                        "smem config",
                        "local/thread",
                        "limits reg/smem/warps/SM",
                    ] {
                        ui.label(RichText::new(h).weak());
                    }
                    ui.end_row();
                    // Quantities right-aligned so their digits line up.
                    let number = |ui: &mut Ui, text: String| {
                        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                            ui.add(egui::Label::new(RichText::new(text).monospace()).extend())
                        });
                    };
                    let text = |ui: &mut Ui, text: String| {
                        ui.add(egui::Label::new(RichText::new(text).monospace()).extend())
                    };
                    for c in &view.configs {
                        let k = &c.config;
                        text(ui, xyz(k.grid));
                        text(ui, xyz(k.block));
                        number(ui, format::grouped(c.instances as i64));
                        match &c.occupancy {
                            Some(o) => {
                                number(
                                    ui,
                                    format!(
                                        "{} %",
                                        stats::Cell::TwoDecimals(o.theoretical_percent)
                                    ),
                                );
                                text(ui, o.limiter_text());
                            }
                            None => {
                                // The report lacks the device's properties.
                                ui.weak("unknown");
                                ui.weak("–");
                            }
                        }
                        number(ui, format::grouped(k.registers_per_thread as i64));
                        number(ui, format::bytes(k.static_shared_memory as u64));
                        number(ui, format::bytes(k.dynamic_shared_memory as u64));
                        number(ui, format::bytes(k.shared_memory_executed as u64));
                        number(ui, format::bytes(k.local_memory_per_thread as u64));
                        match &c.occupancy {
                            Some(o) => {
                                text(
                                    ui,
                                    format!(
                                        "{}/{}/{}/{}",
                                        o.block_limit_registers,
                                        o.block_limit_shared_memory,
                                        o.block_limit_warps,
                                        o.block_limit_blocks
                                    ),
                                );
                            }
                            None => {
                                ui.weak("–");
                            }
                        }
                        ui.end_row();
                    }
                });
        });
}

/// Grid marks for a count axis: whole numbers only, 1-2-5 steps, at most
/// four steps over the range (five marks), so a histogram of three
/// instances reads 0, 1, 2, 3. Four steps keep the marks of the short
/// histogram plot about 28 points apart or more: egui_plot paints no y
/// label closer than 20 points to the next (six steps left them unlabelled).
pub fn count_marks(bounds: (f64, f64)) -> Vec<egui_plot::GridMark> {
    let (lo, hi) = (bounds.0.max(0.0), bounds.1.max(1.0));
    let mut step = 1.0_f64;
    let mut k = 0;
    while (hi - lo) / step > 4.0 {
        step *= if k % 3 == 1 { 2.5 } else { 2.0 };
        k += 1;
    }
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last)
        .map(|i| egui_plot::GridMark {
            value: i as f64 * step,
            step_size: step,
        })
        .collect()
}

/// What hovering bar `i` says: its duration range and its count.
pub fn bar_tooltip(h: &Histogram, i: usize) -> Option<String> {
    let (a, b) = (h.edges.get(i)?, h.edges.get(i + 1)?);
    let n = *h.counts.get(i)?;
    Some(format!(
        "{} – {}\n{} instance{}",
        format::duration(a.round() as Ns),
        format::duration(b.round() as Ns),
        format::grouped(n as i64),
        if n == 1 { "" } else { "s" }
    ))
}

/// The legend's name of a percentile line: which, and its value (as the
/// header says it: [`kernel_chart_labels::duration_of`]).
pub fn percentile_label(which: &str, ns: f64) -> String {
    format!("{which} {}", kernel_chart_labels::duration_of(ns))
}

/// A histogram with the median, p90 and p99 of `marks` drawn as lines.
/// Draws the histogram; returns the screen centre of each non-empty bar (for
/// tests) and the bar clicked, if any.
fn histogram_plot(
    ui: &mut Ui,
    id: &str,
    h: &Histogram,
    marks: Option<&DurationStats>,
    chosen: Option<usize>,
) -> (Vec<(Pos2, usize)>, Option<usize>) {
    let bars: Vec<Bar> = h
        .counts
        .iter()
        .enumerate()
        .filter_map(|(i, &n)| {
            let (a, b) = (h.edges.get(i)?, h.edges.get(i + 1)?);
            let (xa, xb) = (h.x(*a), h.x(*b));
            let fill = if chosen == Some(i) {
                Color32::from_rgb(255, 200, 0)
            } else {
                Color32::from_rgb(110, 160, 220)
            };
            Some(
                Bar::new((xa + xb) / 2.0, n as f64)
                    .fill(fill)
                    .width((xb - xa).abs().max(1e-9))
                    .name(bar_tooltip(h, i).unwrap_or_default()),
            )
        })
        .collect();
    let log = h.log;
    let axis = if log {
        "duration (log scale)"
    } else {
        "duration"
    };
    let unit = h.clone();
    let max_count = h.counts.iter().copied().max().unwrap_or(0) as f64;
    Plot::new(id)
        .height(150.0)
        .x_axis_label(axis)
        .y_axis_label("instances")
        .allow_scroll(false)
        .legend(egui_plot::Legend::default().position(egui_plot::Corner::RightTop))
        .include_y(0.0)
        // Headroom above the tallest bar, and whole counts on the axis.
        .include_y((max_count * 1.15).max(1.0))
        .y_grid_spacer(|input| count_marks(input.bounds))
        .y_axis_formatter(|mark, _| format!("{}", mark.value.round() as i64))
        .x_axis_formatter(move |mark, _| {
            kernel_chart_labels::axis_label(|x| unit.ns(x), mark.value, mark.step_size)
        })
        .show(ui, |plot_ui| {
            let centres: Vec<(Pos2, usize)> = bars
                .iter()
                .enumerate()
                .filter(|(_, b)| b.value > 0.0)
                .map(|(i, b)| {
                    let at = egui_plot::PlotPoint::new(b.argument, b.value / 2.0);
                    (plot_ui.transform().position_from_point(&at), i)
                })
                .collect();
            // Hovering a bar says its range and count.
            plot_ui.bar_chart(
                BarChart::new("instances", bars)
                    .element_formatter(Box::new(|bar, _| bar.name.clone())),
            );
            if let Some(d) = marks {
                for (label, v, color) in [
                    ("P50", d.median, Color32::from_rgb(120, 220, 120)),
                    ("P90", d.p90 as f64, Color32::from_rgb(240, 200, 80)),
                    ("P99", d.p99 as f64, Color32::from_rgb(250, 110, 90)),
                ] {
                    plot_ui.vline(
                        VLine::new(percentile_label(label, v), h.x(v))
                            .color(color)
                            .width(1.5),
                    );
                }
            }
            // The bar under a click: by x alone, so a short bar is easy to hit.
            let clicked = plot_ui
                .response()
                .clicked()
                .then(|| plot_ui.pointer_coordinate())
                .flatten()
                .and_then(|p| {
                    (0..h.counts.len()).find(|&i| {
                        let (a, b) = (h.x(h.edges[i]), h.x(h.edges[i + 1]));
                        a <= p.x && p.x <= b && h.counts[i] > 0
                    })
                });
            (centres, clicked)
        })
        .inner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_every_value_and_goes_log_when_wide() {
        let narrow: Vec<i64> = (100..200).collect();
        let h = Histogram::of(&narrow);
        assert!(!h.log);
        assert_eq!(h.counts.iter().sum::<u64>(), 100);
        let wide = [10, 20, 1000, 100_000];
        let h = Histogram::of(&wide);
        assert!(h.log);
        assert_eq!(h.counts.iter().sum::<u64>(), 4);
        let same = [5, 5, 5];
        assert_eq!(Histogram::of(&same).counts, vec![3]);
        assert!(Histogram::of(&[]).counts.is_empty());
    }

    /// Every instance is attributed to its stream (the run of a track that
    /// holds its row), so to an NVTX range or to none.
    #[test]
    fn every_instance_counts_under_a_range_or_none() {
        let trace = crate::loader::load_fixture("sync_timing.sqlite");
        let mut names: Vec<StrId> = trace.kernels.spans.name.to_vec();
        names.sort_unstable();
        names.dedup();
        assert!(!names.is_empty());
        for name in names {
            let view = KernelView::compute(&trace, name, None).expect("a view");
            let counted: u64 = view.nvtx.iter().map(|(_, n)| n).sum();
            assert_eq!(counted, view.points.len() as u64, "{}", trace.name(name));
        }
    }

    #[test]
    fn decimation_keeps_extremes_per_column() {
        let points: Vec<(Ns, Ns, u32)> = (0..10_000u32)
            .map(|i| {
                let d = if i == 5_000 { 1_000_000 } else { (i % 7) as Ns };
                (i as Ns, d, i)
            })
            .collect();
        let shown = decimate(&points, 0.0, 9_999.0, 100);
        assert!(shown.len() <= 200);
        assert!(shown.contains(&5_000), "the outlier stays");
        assert_eq!(decimate(&points, 0.0, 9.0, 100).len(), 10);
    }
}
