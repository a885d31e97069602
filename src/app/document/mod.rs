//! One document: a job of one report or several on one clock (today one), with the one
//! selection and the state of the panels that show it. `apply` is the only writer of the
//! selection and the view: the timeline and the panels return commands, the document acts.

pub mod cpu_samples;
pub mod findings;
pub mod frame;
pub mod notes;

use std::path::PathBuf;
use std::sync::Arc;

use eframe::egui::{self};

use crate::app::panels::capture_panel::{Live, LiveUpdate};
use crate::app::panels::cpu_profile_panel::CpuProfilePanel;
use crate::app::panels::findings_panel::FindingsPanel;
use crate::app::panels::kernel_panel::KernelPanel;
use crate::app::panels::range_stats::RangeStats;
use crate::app::panels::search::Search;
use crate::app::state::command::Command;
use crate::app::state::events::EventRef;
use crate::app::state::selection::{FollowsRange, Selection};
use crate::app::timeline::Timeline;
use crate::capture::session::CaptureJob;
use crate::loader::{LoadJob, Progress};
use crate::model::{TimeRange, Trace};

/// One open report and everything the user did with it.
pub struct Document {
    pub path: PathBuf,
    pub trace: Arc<Trace>,
    /// The one selection (event, linked events, range): written only through [`Document::apply`]
    /// and the few methods it calls; read by every view through [`Document::selection`].
    selection: Selection,
    pub timeline: Timeline,
    pub stats: RangeStats,
    /// What the CPU ran in the selected range (flat profile, flame graph), from the samples.
    pub cpu_profile: CpuProfilePanel,
    pub search: Search,
    /// Everything about one kernel name (a window, shown while open).
    pub kernel: KernelPanel,
    /// The GPU work of the selected NVTX range (details panel).
    pub nvtx_gpu: crate::app::panels::nvtx_gpu::NvtxGpu,
    pub findings: FindingsPanel,
    /// The user's notes, kept beside the report.
    pub notes: crate::app::panels::annotations_panel::AnnotationsPanel,
    /// Hardware metrics per kernel: the report's, nsys's sampling, attached ncu results.
    pub metric_sets: crate::app::panels::kernel_metrics::MetricSets,
    /// Set when the report is a live capture (running or finished).
    pub live: Option<Live>,
    /// A kernel clicked on the timeline, and when its panel opens: after the
    /// double-click delay, so the panel never appears under a double-click's
    /// second click.
    pub(crate) kernel_pending: Option<(crate::model::StrId, f64)>,
    /// What File ▸ Export image takes, as of the last frame: the caption
    /// (while an export is under way) and the timeline down to its last row.
    pub export_area: Option<egui::Rect>,
    /// Where the range-statistics panel was in the last frame (none while closed): its
    /// tables have nsys's columns and scroll sideways, the one panel that may (tests).
    pub range_stats_area: Option<egui::Rect>,
    /// The rest of the report, while it is still being read (the trace is
    /// then a snapshot of the tables read so far).
    pub(crate) loading: Option<Loading>,
}

impl Document {
    pub(crate) fn new(trace: Arc<Trace>, path: PathBuf) -> Self {
        let timeline = Timeline::new(&trace);
        let notes = crate::app::panels::annotations_panel::AnnotationsPanel::load(&path, &trace);
        Document {
            path,
            notes,
            findings: FindingsPanel::start(&trace),
            metric_sets: crate::app::panels::kernel_metrics::MetricSets::start(&trace),
            trace,
            selection: Selection::default(),
            timeline,
            stats: RangeStats::default(),
            cpu_profile: CpuProfilePanel::default(),
            search: Search::default(),
            kernel: KernelPanel::default(),
            nvtx_gpu: crate::app::panels::nvtx_gpu::NvtxGpu::default(),
            live: None,
            kernel_pending: None,
            export_area: None,
            range_stats_area: None,
            loading: None,
        }
    }

    /// Whether the report is still being read (the trace is a snapshot).
    pub fn is_loading(&self) -> bool {
        self.loading.is_some()
    }

    /// A tab for a capture that has recorded nothing yet.
    pub(crate) fn capture(job: CaptureJob) -> Self {
        let empty = Trace {
            strings: crate::model::Strings::new(),
            ..Trace::default()
        };
        let mut doc = Document::new(Arc::new(empty), PathBuf::from(&job.label));
        // No report file yet to keep notes beside (the label may even name
        // the replayed report, whose notes are not this tab's).
        doc.notes = Default::default();
        doc.live = Some(Live::new(job));
        doc
    }

    /// Takes a newer state of this report (a snapshot of a report being
    /// opened, or of a capture that grew) and keeps what the user did: the
    /// view, the selected event, the selected range (its summaries are taken
    /// again), the search (run again), the kernel panel (computed again), the
    /// findings (shown until the new trace's are in) and the notes. Where
    /// `ids_kept`, every event keeps its index (snapshots of one load);
    /// otherwise the selection and the notes' events are found again by
    /// kind, times and name, and the kernel by its name.
    pub fn grow(&mut self, trace: Arc<Trace>, ids_kept: bool) {
        let selected = self.selection.event.and_then(|ev| {
            if ids_kept {
                return Some(ev);
            }
            crate::annotations::carry(&self.trace, &trace, ev.into()).map(EventRef::from)
        });
        let kernel = self
            .kernel
            .name
            .map(|n| self.trace.name(n).to_string())
            .and_then(|name| trace.strings.find(&name));
        // The findings' marks are carried over; the others' views set theirs again.
        let marks = self
            .timeline
            .take_marks(crate::app::panels::findings_panel::OVERLAY_SOURCE);
        self.timeline.adopt(&trace);
        self.selection.set_event(&trace, selected);
        self.findings
            .grow(&self.trace, &trace, marks, &mut self.timeline);
        self.search.refresh(&self.trace, &trace, None);
        // A capture's snapshots share nothing: the old one may be the last
        // reference to millions of events.
        crate::app::job::drop_off_thread(std::mem::replace(&mut self.trace, trace));
        self.stats.refresh(self.trace.clone(), self.selection.range);
        // The samples may have come with this state of the report.
        self.cpu_profile
            .range_changed(&self.trace, self.selection.range);
        match kernel {
            Some(name) => self.kernel.refresh(&self.trace, name, self.selection.range),
            None => self.kernel.close(),
        }
        self.kernel_pending = None;
        self.nvtx_gpu = crate::app::panels::nvtx_gpu::NvtxGpu::default();
        self.notes.trace_grew(ids_kept);
        // The strip shown comes back once the grown report's sets are in.
        let strip = self.metric_sets.choice();
        self.metric_sets = crate::app::panels::kernel_metrics::MetricSets::start(&self.trace);
        self.metric_sets.wanted = strip;
        self.timeline.metrics_strip = self.metric_sets.restore_strip(&self.trace);
    }

    /// Takes a live capture's messages; true when the trace changed.
    pub(crate) fn poll_live(&mut self, window: Option<&egui::Context>) -> bool {
        let Some(live) = self.live.as_mut() else {
            return false;
        };
        let first = self.trace.event_count() == 0;
        match live.poll(window) {
            LiveUpdate::Nothing => false,
            LiveUpdate::Trace(trace) => {
                let follow = live.follow || first;
                let finished = !live.is_running();
                // Each snapshot is read afresh: events are numbered anew.
                self.grow(trace, false);
                if finished {
                    self.findings.stopped_growing();
                }
                if follow {
                    self.timeline.show_all();
                }
                true
            }
        }
    }

    /// The selection: the selected event, its linked events, the selected range.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// Selects `[start, end)`; its summaries start at once.
    pub fn select_range(&mut self, start: i64, end: i64) {
        self.change(Command::SelectRange(TimeRange { start, end }), None);
    }

    /// No range selected any more: its tables go with it.
    pub fn clear_range(&mut self) {
        self.change(Command::ClearRange, None);
    }

    /// Selects `ev` (or nothing) without moving the view.
    pub fn select_event(&mut self, ev: Option<EventRef>) {
        self.change(Command::Select(ev), None);
    }

    /// Shows finding `i` of the findings panel, with the events that prove it (as its click does).
    pub fn show_finding(&mut self, i: usize) {
        self.change(Command::ShowFinding(i), None);
    }

    /// Selects `ev` and keeps its row on screen: the one place the selected event is written.
    fn set_event(&mut self, ev: Option<EventRef>) {
        self.selection.set_event(&self.trace, ev);
        self.timeline.reveal_selection();
    }

    /// Tells every view that follows the selected range that it changed, once: the range
    /// tables are taken for the new range (or dropped with it), and a kernel panel scoped to
    /// the selection is computed over the new one. This list is the only place that knows
    /// who follows the range.
    fn range_changed(&mut self) {
        let range = self.selection.range;
        let followers: [&mut dyn FollowsRange; 3] =
            [&mut self.stats, &mut self.kernel, &mut self.cpu_profile];
        for follower in followers {
            follower.range_changed(&self.trace, range);
        }
    }

    /// A stats row was clicked: the first time, highlight every instance of
    /// `name` that the range counts (by its rule) and show the first; again, the next.
    /// The instances are looked for on a worker; [`Document::take_search`]
    /// shows the first when they are in.
    pub fn step_instances(&mut self, name: &str, repaint: Option<egui::Context>) {
        let (range, rule) = (self.selection.range, self.stats.rule);
        let same = range.is_some()
            && self.search.query == name
            && !self.search.regex
            && self.search.has_instances_of(name, range, rule)
            && !self.search.matches.is_empty()
            && !self.search.is_searching();
        if same {
            if let Some(ev) = self.search.step(true) {
                self.show_event(ev);
            }
            return;
        }
        self.search
            .start_exact(&self.trace, repaint, name, range, rule);
    }

    /// Takes a finished search and shows the match it asked for.
    pub fn take_search(&mut self) {
        match self.search.poll() {
            Some((ev, crate::app::panels::search::Then::Show)) => self.show_event(ev),
            Some((ev, _)) => self.reveal_event(ev),
            None => {}
        }
    }

    /// Selects a search match and shows it with its context: the match fills
    /// a third of the width at most and starts a third of the way in (a
    /// launch call alone filling the screen tells nothing).
    pub fn reveal_event(&mut self, ev: EventRef) {
        self.set_event(Some(ev));
        let (s, e) = (ev.start(&self.trace) as f64, ev.end(&self.trace) as f64);
        let span = ((e - s) * 3.0).max(20_000.0);
        self.timeline
            .zoom_to_span(s - span / 3.0, s - span / 3.0 + span);
    }

    /// Opens the kernel panel for kernel `name` over the selected range (the
    /// whole report without one); it follows the selection from then on.
    pub fn open_kernel(&mut self, name: crate::model::StrId) {
        self.kernel.open(&self.trace, name, self.selection.range);
    }

    /// Does what a panel or the timeline asked for; `ctx` repaints the window when work the
    /// command started on a worker is done.
    pub fn apply(&mut self, command: Command, ctx: &egui::Context) {
        self.change(command, Some(ctx));
        ctx.request_repaint();
    }

    /// The one writer of the selection: does `command`, then tells the range's followers if
    /// the range changed. `window` repaints the window when work started on a worker is done.
    fn change(&mut self, command: Command, window: Option<&egui::Context>) {
        let range_before = self.selection.range;
        match command {
            Command::Select(ev) => self.set_event(ev),
            Command::ShowEvent(ev) => self.show_event(ev),
            Command::ShowTime(t) => self.show_time(t),
            Command::SelectRange(r) => {
                let end = r.end.max(r.start + 1);
                self.selection.range = Some(TimeRange {
                    start: r.start,
                    end,
                });
            }
            Command::ClearRange => self.selection.range = None,
            Command::ClearSelection => {
                self.set_event(None);
                self.selection.range = None;
            }
            Command::StepInstances(row) => {
                self.step_instances(&row.name, window.cloned());
                if row.kernel
                    && let Some(id) = self.trace.strings.find(&row.name)
                {
                    self.open_kernel(id);
                }
            }
            Command::ShowFinding(i) => {
                if let Some(ev) = self.findings.show(i, &self.trace, &mut self.timeline) {
                    self.set_event(ev);
                }
            }
        }
        if self.selection.range != range_before {
            self.range_changed();
        }
    }

    /// Brings time `t` into view with some context: the view keeps its zoom
    /// when it is close already, else shows a twentieth of the report.
    pub fn show_time(&mut self, t: crate::model::Ns) {
        let (lo, hi) = self.timeline.limits();
        let span = self
            .timeline
            .view
            .span()
            .min((hi - lo) / 20.0)
            .max(10_000.0);
        let t = t as f64;
        self.timeline.zoom_to_span(t - span / 2.0, t + span / 2.0);
    }

    /// Selects an event and brings it into view.
    pub fn show_event(&mut self, ev: EventRef) {
        self.set_event(Some(ev));
        let (s, e) = (ev.start(&self.trace) as f64, ev.end(&self.trace) as f64);
        self.timeline.zoom_to(s, e);
    }
}

/// A report being read in the background.
pub(crate) struct Loading {
    pub(crate) job: LoadJob,
    pub(crate) progress: Progress,
    /// When the load began: its snapshots are shown from
    /// [`SHOW_SNAPSHOTS_AFTER`] on.
    pub(crate) began: std::time::Instant,
    /// The newest snapshot not shown yet, and its load attempt.
    pub(crate) latest: Option<(Arc<Trace>, usize)>,
    /// The load attempt of the snapshot shown (see [`crate::loader::Loaded`]).
    pub(crate) shown_attempt: usize,
}
