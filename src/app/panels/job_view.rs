//! A job of many reports in one tab: the ranks of a distributed run one above the other on
//! one axis (the job clock, see [`crate::model::ranks`]), each collapsed to two lanes (its
//! iterations and phases, its GPU's activity) or expanded to its full tree; the alignment and
//! each rank's offset said; and a ranks × iterations heatmap of the loop's duration (or of a
//! phase's), the slowest rank of each iteration marked. A click on a cell zooms every rank to
//! that iteration and expands that rank and the fastest one.
//!
//! A job of more than [`FULL_LOAD_MAX_RANKS`] ranks opens on its ranks' NVTX ranges alone: the
//! ranks panel, the straggler and every rank's iterations lane come from them, and a rank's
//! events are read when it is expanded or clicked ([`RankLoads`]).
//!
//! A Parquet job folder opens on the engine's summaries ([`JobView::open_parquet`]: the
//! `sightline-engine` binary run as a child process): its ranks drawn from their iterations and
//! phases, the engine's analysis, a rank's source report read when it is expanded or clicked.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use eframe::egui::{self, Color32, Rect, Sense, Stroke, StrokeKind, Ui, pos2, vec2};

use crate::analysis::ranks::{
    JobAnalysis, JobSummaries, RankIterations, StragglerThresholds, align_on_kernel_end,
    align_on_range_end, analyze_job, straggler_message,
};
use crate::app::job::{Job, repaint};
use crate::app::panels::job_ranges::RankRanges;
use crate::app::panels::job_rank_loads::{RankLoads, RankRead};
use crate::app::panels::job_summary_ranks::{engine_summaries, report_path, summary_ranks};
use crate::app::state::command::Command;
use crate::app::state::events::EventRef;
use crate::app::state::selection::Selection;
use crate::app::timeline::{Anchor, Overlay, Timeline};
use crate::app::widgets::format;
use crate::loader::{LoadError, Progress};
use crate::model::{Alignment, Ns, Rank, Ranks};

/// What the job's load sends.
enum Loading {
    Progress(Progress),
    /// Report `index` of the job's paths is in: drawn at once, before the others.
    Arrived(usize, Arc<crate::model::Trace>),
    /// The ranks' iterations and straggler from their NVTX ranges alone, read before any
    /// rank's events: the ranks panel answers while the events are still read.
    Early(Box<JobAnalysis>),
    /// The job is too big to read whole: its ranks' NVTX ranges are all it opens with.
    RangesOnly(Ranks),
    /// A Parquet job folder's summaries, from the engine: all it opens with.
    Summaries(Box<JobSummaries>),
    Done(Result<Ranks, LoadError>),
    /// The job could not be opened: why, in one line.
    Failed(String),
}

/// The most ranks whose events a job's open reads: past it (hundreds of ranks, each report
/// holding up to a gigabyte), the job opens on its ranks' NVTX ranges and a rank's events are
/// read when it is expanded or clicked. At 64 ranks of 150k events a whole job is 2.4 GB of
/// model and opens in 2 s on two cores (BENCHMARKS.md, issue 42).
pub const FULL_LOAD_MAX_RANKS: usize = 64;

/// Whether a rank's events are in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankEvents {
    /// Its whole report is read.
    Read,
    /// Only its layout and NVTX ranges (a job too big to read whole).
    RangesOnly,
    /// Being read, asked for by an expand or a click.
    Reading,
    /// Its read failed: why.
    Failed(String),
    /// Known by the engine's summaries alone (a Parquet job folder): its iterations and phases.
    Summary,
    /// Known by the engine's summaries, and its source report is not there to read.
    Missing(PathBuf),
}

/// From the first iteration's start to the last one's end over every rank (the job clock).
fn loop_span(found: &[RankIterations]) -> Option<(Ns, Ns)> {
    (found.iter())
        .flat_map(|r| r.iterations.values())
        .map(|it| (it.start, it.end))
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
}

/// Where a straggler's marks come from (each view replaces only its own).
pub const OVERLAY_SOURCE: &str = "job";

/// One rank in the view.
pub struct RankView {
    pub rank: Rank,
    pub timeline: Timeline,
    pub selection: Selection,
    /// Its iterations and their phases on the job clock (the heatmap's row), found once.
    pub iterations: Option<RankIterations>,
    pub events: RankEvents,
}

impl RankView {
    fn new(rank: Rank, iterations: Option<RankIterations>) -> RankView {
        let mut timeline = Timeline::new(&rank.trace);
        timeline.compact = true;
        RankView {
            rank,
            timeline,
            selection: Selection::default(),
            iterations,
            events: RankEvents::Read,
        }
    }

    /// Phase `phase` of iteration `number`, on this rank's own clock.
    fn phase_span(&self, number: u64, phase: &str) -> Option<(Ns, Ns)> {
        let it = self.iterations.as_ref()?.iterations.get(&number)?;
        let p = it.phase(phase)?;
        Some((p.start - self.rank.offset_ns, p.end - self.rank.offset_ns))
    }
}

/// The job's tab.
pub struct JobView {
    /// The reports, as given.
    pub paths: Vec<PathBuf>,
    load: Job<Loading>,
    /// Woken when a rank's events come in.
    window: Option<egui::Context>,
    /// Where a rank's events are read on demand (a job opened on its NVTX ranges).
    rank_loads: Option<RankLoads>,
    /// The job opens on its ranks' NVTX ranges alone (more ranks than are read whole).
    pub ranges_only: bool,
    /// The Parquet job folder the job was opened from (on the engine's summaries).
    pub parquet: Option<PathBuf>,
    /// The rank to bring into view in the next frame (a heatmap cell was clicked).
    scroll_to: Option<usize>,
    pub progress: Progress,
    pub error: Option<String>,
    pub ranks: Vec<RankView>,
    pub alignment: Alignment,
    /// The span every rank shows, on the job clock (ns).
    pub axis: (f64, f64),
    /// The axis the ranks were last placed on (None before): while the axis is still that
    /// one, the user has not moved it and a new placing may.
    placed_axis: Option<(f64, f64)>,
    /// The event selected last, and its rank's index.
    pub selected: Option<(usize, EventRef)>,
    /// The phase the heatmap shows (`None`: the whole iteration).
    pub heatmap_phase: Option<String>,
    /// The cross-rank analysis: the iterations matched across ranks, and the straggler (or why
    /// there is none).
    pub analysis: Option<JobAnalysis>,
    /// The analysis is the ranks' NVTX ranges' alone (the job's events still being read): the
    /// phases' GPU work is not in it yet. The whole job's replaces it.
    pub analysis_early: bool,
    /// Each cell drawn in the last frame (rank index, iteration number) with its rect (tests).
    pub cells: Vec<(usize, u64, Rect)>,
    /// Where each rank's timeline was drawn in the last frame (tests).
    pub rank_rects: Vec<Rect>,
    /// A span selected on any rank, aggregated rank by rank.
    pub span: RankRanges,
    /// The shared event typed to align on: an NVTX range's name (or a kernel's, with
    /// `align_on_kernel`) and its instance (1-based), and why the last try failed.
    pub align_on: (String, usize),
    pub align_on_kernel: bool,
    pub align_error: Option<String>,
    /// The engine failed after its early summaries were shown: why (the ranks panel keeps
    /// their answer, without the phases' GPU work).
    pub engine_failed: Option<String>,
}

impl JobView {
    /// Starts loading the reports of `paths` as one job, one report per core (only their NVTX
    /// ranges past [`FULL_LOAD_MAX_RANKS`] ranks).
    pub fn open(paths: Vec<PathBuf>, window: Option<egui::Context>) -> JobView {
        JobView::open_reading_at_most(paths, window, FULL_LOAD_MAX_RANKS)
    }

    /// [`JobView::open`] reading every rank's events only for a job of at most `max_read`
    /// ranks (tests: the rule on a small job).
    pub fn open_reading_at_most(
        paths: Vec<PathBuf>,
        window: Option<egui::Context>,
        max_read: usize,
    ) -> JobView {
        let mut load = Job::default();
        let to_load = paths.clone();
        let ranges_only = paths.len() > max_read;
        let wake = window.clone().map(repaint);
        let started = load.start_stream("sightline-job", wake, move |cancel, emit| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let progress = |p: Progress| {
                emit.send(Loading::Progress(p));
            };
            let arrived = |i: usize, trace| {
                emit.send(Loading::Arrived(i, trace));
            };
            // The ranks' NVTX ranges first (a report's smallest table): the ranks panel
            // answers from them while the events are read. A report that fails here fails
            // the whole load below, which says why.
            // Past the limit it is the whole open: its progress is the bar's.
            let nvtx_progress = |p: Progress| {
                if ranges_only {
                    progress(p);
                }
            };
            let nvtx =
                crate::loader::ranks::load_nvtx_of_ranks(&to_load, cores, &nvtx_progress, cancel);
            if let Ok(nvtx) = &nvtx {
                let mut early = analyze_job(nvtx, &StragglerThresholds::default());
                // What the straggler does differently needs its calls and GPU work.
                early.difference = None;
                emit.send(Loading::Early(Box::new(early)));
            }
            if ranges_only {
                emit.send(match nvtx {
                    Ok(nvtx) => Loading::RangesOnly(nvtx),
                    Err(e) => Loading::Done(Err(e)),
                });
                return;
            }
            let result =
                crate::loader::ranks::load_ranks_each(&to_load, cores, &progress, &arrived, cancel);
            emit.send(Loading::Done(result));
        });
        let mut view = JobView::loading(paths, load, window, started);
        view.ranges_only = ranges_only;
        view
    }

    /// Opens the Parquet job folder `dir` (`sightline-engine export --format parquet`) on the
    /// engine's summaries, computed by the engine binary as a child process on a background
    /// job (cancel kills it): every rank's iterations and the straggler, no rank's events;
    /// a rank's source report is read when it is expanded or clicked.
    pub fn open_parquet(dir: PathBuf, window: Option<egui::Context>) -> JobView {
        let mut load = Job::default();
        let wake = window.clone().map(repaint);
        let folder = dir.clone();
        let started = load.start_stream("sightline-job-engine", wake, move |cancel, emit| {
            let progress = |fraction: f32| {
                emit.send(Loading::Progress(Progress {
                    phase: "the engine computes the summaries",
                    fraction,
                }));
            };
            progress(0.0);
            let early = |summaries: JobSummaries| {
                emit.send(Loading::Summaries(Box::new(summaries)));
            };
            emit.send(match engine_summaries(&folder, cancel, &progress, &early) {
                Ok(summaries) => Loading::Summaries(Box::new(summaries)),
                Err(why) => Loading::Failed(format!("{}: {why}", folder.display())),
            });
        });
        let mut view = JobView::loading(Vec::new(), load, window, started);
        view.parquet = Some(dir);
        view
    }

    /// A view whose job `load` is under way (`started`: whether it has a thread).
    fn loading(
        paths: Vec<PathBuf>,
        load: Job<Loading>,
        window: Option<egui::Context>,
        started: bool,
    ) -> JobView {
        JobView {
            paths,
            load,
            window,
            rank_loads: None,
            ranges_only: false,
            parquet: None,
            scroll_to: None,
            progress: Progress {
                phase: "opening",
                fraction: 0.0,
            },
            error: (!started).then(|| "no thread to load the job on".to_string()),
            ranks: Vec::new(),
            alignment: Alignment::None,
            axis: (0.0, 1.0),
            placed_axis: None,
            selected: None,
            heatmap_phase: None,
            analysis: None,
            analysis_early: false,
            cells: Vec::new(),
            rank_rects: Vec::new(),
            span: RankRanges::default(),
            align_on: (String::new(), 1),
            align_on_kernel: false,
            align_error: None,
            engine_failed: None,
        }
    }

    /// A job of reports already loaded (tests, benchmarks).
    pub fn from_ranks(ranks: Ranks) -> JobView {
        let mut view = JobView::open(Vec::new(), None);
        view.load.cancel();
        view.show(ranks);
        view
    }

    /// The whole job is in: its ranks on their final clock, analysed (iterations, straggler).
    fn show(&mut self, ranks: Ranks) {
        self.paths = ranks.ranks.iter().map(|r| r.path.clone()).collect();
        let mut analysis = analyze_job(&ranks, &StragglerThresholds::default());
        self.place(ranks, analysis.iterations.ranks.clone());
        // A rank known by its NVTX ranges alone has no calls or GPU work to compare.
        let unread = self.unread();
        if unread > 0 {
            analysis.difference = None;
        }
        self.analysis = Some(analysis);
        self.analysis_early = unread > 0;
        self.mark_straggler();
    }

    /// The job as its ranks' NVTX ranges give it (too many ranks to read every one's events):
    /// each rank drawn from them, on the job clock, with the early analysis; a rank's events
    /// are read when it is expanded or clicked.
    fn show_ranges_only(&mut self, ranks: Ranks) {
        let found = (self.analysis.as_ref())
            .map(|a| a.iterations.ranks.clone())
            .unwrap_or_default();
        self.show_unread(ranks, found, RankEvents::RangesOnly);
    }

    /// `ranks`, none of whose events are read (each rank `events`), placed with the
    /// iterations `found`: their events are read on demand, a rank when it is expanded or
    /// clicked.
    fn show_unread(&mut self, ranks: Ranks, found: Vec<RankIterations>, events: RankEvents) {
        self.paths = ranks.ranks.iter().map(|r| r.path.clone()).collect();
        self.place(ranks, found);
        for r in &mut self.ranks {
            r.events = events.clone();
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let wake = self.window.clone().map(repaint);
        self.rank_loads = Some(RankLoads::start(cores, wake));
        self.mark_straggler();
    }

    /// A Parquet job's summaries are in: each rank drawn from its iterations and phases, on the
    /// job clock, with the engine's analysis; a rank's source report is read when it is
    /// expanded or clicked. The whole summaries after the early ones (the NVTX ranges' alone)
    /// replace their analysis, the ranks staying as they are.
    fn show_summaries(&mut self, summaries: JobSummaries) {
        self.analysis_early = !summaries.complete;
        if !self.ranks.is_empty() {
            let found = summaries.analysis.iterations.ranks.clone();
            for r in &mut self.ranks {
                if let Some(own) = found.iter().find(|it| it.rank == r.rank.number) {
                    r.iterations = Some(own.clone());
                }
            }
            self.analysis = Some(summaries.analysis);
            // The early straggler's marks go, whether or not the whole analysis names one.
            for r in &mut self.ranks {
                r.timeline.set_overlays(OVERLAY_SOURCE, Vec::new());
            }
            self.mark_straggler();
            return;
        }
        let folder = self.parquet.clone().unwrap_or_default();
        let ranks = summary_ranks(&summaries, |r| report_path(r, &folder));
        let found = summaries.analysis.iterations.ranks.clone();
        self.analysis = Some(summaries.analysis);
        self.show_unread(ranks, found, RankEvents::Summary);
    }

    /// How many ranks are known by their NVTX ranges alone.
    pub fn unread(&self) -> usize {
        let read = |r: &&RankView| r.events == RankEvents::Read;
        self.ranks.len() - self.ranks.iter().filter(read).count()
    }

    /// Asks for rank `i`'s events if only its NVTX ranges are in (or its last read failed).
    fn read_events_of(&mut self, i: usize) {
        let (Some(loads), Some(r)) = (self.rank_loads.as_ref(), self.ranks.get_mut(i)) else {
            return;
        };
        let unread = matches!(
            r.events,
            RankEvents::RangesOnly
                | RankEvents::Failed(_)
                | RankEvents::Summary
                | RankEvents::Missing(_)
        );
        if !unread {
            return;
        }
        // A Parquet job's rank stays on its summary where its report is not there.
        if r.events != RankEvents::RangesOnly && !r.rank.path.is_file() {
            r.events = RankEvents::Missing(r.rank.path.clone());
            return;
        }
        r.events = RankEvents::Reading;
        loads.ask(r.rank.path.clone());
    }

    /// A rank's events are in: its timeline is made again from the whole report, where it
    /// was, open as it was; once every rank's are in, the job is analysed whole.
    fn rank_read(&mut self, (path, read): RankRead) {
        let Some(i) = self.ranks.iter().position(|r| r.rank.path == path) else {
            return;
        };
        let trace = match read {
            Ok(trace) => trace,
            Err(e) => {
                self.ranks[i].events = RankEvents::Failed(e.to_string());
                return;
            }
        };
        let old = &self.ranks[i];
        let rank = Rank {
            trace,
            ..old.rank.clone()
        };
        let mut view = RankView::new(rank, old.iterations.clone());
        view.timeline.compact = old.timeline.compact;
        // Its events are numbered afresh: a selection made on the NVTX ranges is dropped.
        if self.selected.is_some_and(|(r, _)| r == i) {
            self.selected = None;
        }
        let old = std::mem::replace(&mut self.ranks[i], view);
        crate::app::job::drop_off_thread(old.rank.trace);
        if self.unread() == 0 {
            self.show(self.job());
        } else {
            self.mark_straggler();
        }
    }

    /// Blocks until every rank asked for is read (tests, screenshots).
    pub fn wait_for_rank_reads(&mut self) {
        while self.ranks.iter().any(|r| r.events == RankEvents::Reading) {
            match self.rank_loads.as_mut().and_then(RankLoads::wait_next) {
                Some(read) => self.rank_read(read),
                None => return,
            }
        }
    }

    /// A report of the job is in while others are still read: the ranks so far are drawn on
    /// the clock they make (offsets from the earliest start so far; the whole job's replaces it).
    fn arrived(&mut self, index: usize, trace: Arc<crate::model::Trace>) {
        let Some(path) = self.paths.get(index).cloned() else {
            return;
        };
        let mut reports: Vec<(PathBuf, Arc<crate::model::Trace>)> = (self.ranks.iter())
            .map(|r| (r.rank.path.clone(), r.rank.trace.clone()))
            .collect();
        reports.push((path, trace));
        let all = self.paths.iter().map(PathBuf::as_path);
        let numbers = crate::model::ranks::rank_numbers(all);
        let mut ranks = Ranks::new(reports);
        // Numbered as the whole job will number them, not as the ranks so far would be.
        for r in &mut ranks.ranks {
            if let Some(i) = self.paths.iter().position(|p| *p == r.path) {
                r.number = numbers[i];
            }
        }
        ranks.ranks.sort_by_key(|r| r.number);
        self.place(ranks, Vec::new());
    }

    /// Shows `ranks`, keeping the timeline (view, rows opened) of a rank already shown; each
    /// rank's iterations those of `found` with its number (none where it has none).
    fn place(&mut self, ranks: Ranks, mut found: Vec<RankIterations>) {
        self.alignment = ranks.alignment;
        // Open on the job's loop where one is found, else on where its work is, not on the
        // start-up around it (as a report alone opens); a view the user moved to stays as
        // ranks come in.
        if self.placed_axis.is_none_or(|placed| placed == self.axis) {
            let (lo, hi) = (loop_span(&found).or_else(|| ranks.activity_range()))
                .unwrap_or_else(|| ranks.time_range());
            self.axis = (lo as f64, hi.max(lo + 1) as f64);
            self.placed_axis = Some(self.axis);
        }
        let mut shown: Vec<RankView> = std::mem::take(&mut self.ranks);
        self.ranks = (ranks.ranks.into_iter())
            .map(|rank| {
                let own = found.iter().position(|it| it.rank == rank.number);
                let found = own.map(|i| found.swap_remove(i));
                match shown.iter().position(|v| v.rank.path == rank.path) {
                    Some(i) => {
                        let mut view = shown.swap_remove(i);
                        view.rank = rank;
                        view.iterations = found;
                        view
                    }
                    None => RankView::new(rank, found),
                }
            })
            .collect();
    }

    /// Marks the straggler's excess phase on its timeline and the wait it causes on every
    /// other rank's, iteration by iteration (on the ruler: visible whichever rows are shown).
    fn mark_straggler(&mut self) {
        let Some(Ok(s)) = self.analysis.as_ref().map(|a| &a.straggler) else {
            return;
        };
        let (slow, wait) = (
            Color32::from_rgb(240, 150, 40),
            Color32::from_rgb(200, 80, 80),
        );
        for r in &mut self.ranks {
            let mut marks = Vec::new();
            if r.rank.number == s.rank {
                for &(n, late) in &s.excess {
                    if let Some((start, end)) = r.phase_span(n, &s.excess_phase) {
                        let label = format!(
                            "straggler: rank {} reaches '{}' of iteration {n} {} after the median rank; its '{}' is where the time goes",
                            s.rank,
                            s.sync_phase,
                            format::duration(late),
                            s.excess_phase
                        );
                        marks.push(ruler_mark(start, end, slow, label));
                    }
                }
            }
            for w in s.waits.iter().filter(|w| w.rank == r.rank.number) {
                for &(n, ns) in &w.per_iteration {
                    if let Some((start, end)) = r.phase_span(n, &s.sync_phase) {
                        let label = format!(
                            "waits {} in '{}' of iteration {n} for rank {}",
                            format::duration(ns),
                            s.sync_phase,
                            s.rank
                        );
                        marks.push(ruler_mark(start, end, wait, label));
                    }
                }
            }
            r.timeline.set_overlays(OVERLAY_SOURCE, marks);
        }
    }

    pub fn is_loading(&self) -> bool {
        self.load.is_running()
    }

    /// Takes the load's messages; true when something changed.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        while let Some(message) = self.load.take_next() {
            changed = true;
            self.take(message);
        }
        while let Some(read) = self.rank_loads.as_mut().and_then(RankLoads::take_next) {
            changed = true;
            self.rank_read(read);
        }
        changed
    }

    fn take(&mut self, message: Loading) {
        match message {
            Loading::Progress(p) => self.progress = p,
            Loading::Arrived(i, trace) => self.arrived(i, trace),
            Loading::Early(analysis) if self.analysis.is_none() => {
                self.analysis = Some(*analysis);
                self.analysis_early = true;
            }
            Loading::Early(_) => {}
            Loading::RangesOnly(ranks) => self.show_ranges_only(ranks),
            Loading::Summaries(summaries) => self.show_summaries(*summaries),
            // The early summaries stay shown: only the phases' work is missing.
            Loading::Failed(why) if !self.ranks.is_empty() => self.engine_failed = Some(why),
            Loading::Failed(why) => self.error = Some(why),
            Loading::Done(Ok(ranks)) => self.show(ranks),
            Loading::Done(Err(e)) => self.error = Some(e.to_string()),
        }
    }

    /// Blocks until the job is loaded (tests, screenshots).
    pub fn wait(&mut self) {
        while let Some(message) = self.load.wait_next() {
            self.take(message);
        }
    }

    /// Blocks until the ranks panel has an answer (the NVTX ranges' analysis, or the whole
    /// job's), or the load ends without one (tests).
    pub fn wait_for_analysis(&mut self) {
        while self.analysis.is_none() {
            match self.load.wait_next() {
                Some(message) => self.take(message),
                None => return,
            }
        }
    }

    /// What the tab stands for: the folder of the reports (or the first report).
    pub fn path(&self) -> &std::path::Path {
        if let Some(folder) = &self.parquet {
            return folder;
        }
        (self.paths.first())
            .map(|p| p.parent().unwrap_or(p.as_path()))
            .unwrap_or(std::path::Path::new(""))
    }

    /// The reports and timelines, to be freed off the window's thread when the tab closes.
    pub fn into_reports(self) -> Vec<(Arc<crate::model::Trace>, Timeline)> {
        self.ranks
            .into_iter()
            .map(|r| (r.rank.trace, r.timeline))
            .collect()
    }

    /// The tab's title.
    pub fn title(&self) -> String {
        if let Some(folder) = &self.parquet {
            return format!(
                "job {} ({} ranks, Parquet)",
                format::file_name(folder),
                self.paths.len()
            );
        }
        let folder = self
            .paths
            .first()
            .and_then(|p| p.parent())
            .map(format::file_name)
            .unwrap_or_default();
        format!("job {folder} ({} reports)", self.paths.len())
    }

    /// Expands rank `i` (its full tree) or collapses it (two lanes).
    pub fn set_expanded(&mut self, i: usize, expanded: bool) {
        if let Some(r) = self.ranks.get_mut(i) {
            r.timeline.compact = !expanded;
        }
        if expanded {
            self.read_events_of(i);
        }
    }

    /// The ranks as shown, as a job (cheap: each report is shared).
    fn job(&self) -> Ranks {
        Ranks {
            ranks: self.ranks.iter().map(|r| r.rank.clone()).collect(),
            alignment: self.alignment,
        }
    }

    /// Aligns the ranks on the end of instance `nth` (1-based) of the NVTX range `name`, or,
    /// with no name, on their session starts again; the analysis is made again on the new clock.
    pub fn align(&mut self, on: Option<(&str, usize)>) {
        match on {
            Some((name, nth)) => self.align_with(align_on_range_end, name, nth),
            None => {
                self.align_error = None;
                self.show(Ranks::new(
                    (self.ranks.iter())
                        .map(|r| (r.rank.path.clone(), r.rank.trace.clone()))
                        .collect(),
                ));
            }
        }
    }

    /// Aligns the ranks on the end of instance `nth` (1-based) of the kernel whose name
    /// contains `name` (a collective's); the analysis is made again on the new clock.
    pub fn align_on_kernel(&mut self, name: &str, nth: usize) {
        self.align_with(align_on_kernel_end, name, nth);
    }

    /// Aligns with `align` on instance `nth` (1-based) of `name`, or keeps the clock and
    /// says why not.
    fn align_with(
        &mut self,
        align: fn(&mut Ranks, &str, usize) -> Result<(), String>,
        name: &str,
        nth: usize,
    ) {
        let mut job = self.job();
        match align(&mut job, name, nth.max(1) - 1) {
            Ok(()) => {
                self.align_error = None;
                self.show(job);
            }
            Err(why) => self.align_error = Some(why),
        }
    }

    /// Moves rank `i` by `ns` on the job clock (a nudge by hand); the analysis follows.
    pub fn nudge(&mut self, i: usize, ns: Ns) {
        let mut job = self.job();
        if let Some(r) = job.ranks.get_mut(i) {
            r.offset_ns += ns;
        }
        self.show(job);
    }

    /// Selects `[start, end)` of the job clock on every rank (each shows it shaded on its own
    /// clock) and aggregates it rank by rank; `None` drops the span.
    pub fn select_span(&mut self, span: Option<(Ns, Ns)>) {
        for r in &mut self.ranks {
            let off = r.rank.offset_ns;
            r.selection.range = span.map(|(start, end)| crate::model::TimeRange {
                start: start - off,
                end: end - off,
            });
        }
        match span {
            Some(span) => {
                // A rank known by its NVTX ranges alone would count none of its calls or work.
                let ranks = (self.ranks.iter())
                    .filter(|r| r.events == RankEvents::Read)
                    .map(|r| (r.rank.number, r.rank.trace.clone(), r.rank.offset_ns))
                    .collect();
                self.span.request(span, ranks);
            }
            None => self.span.clear(),
        }
    }

    /// Shows `[start, end)` of the job clock on every rank.
    pub fn set_axis(&mut self, (start, end): (f64, f64)) {
        self.axis = (start, end.max(start + 1.0));
    }

    pub fn ui(&mut self, ui: &mut Ui) {
        if self.poll() {
            ui.ctx().request_repaint();
        }
        if let Some(e) = &self.error {
            ui.colored_label(Color32::from_rgb(230, 110, 90), e);
            return;
        }
        if self.is_loading() {
            // The load wakes the window when it was given one; the command line opens the
            // job before there is a window to wake.
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
            let mut cancel = false;
            ui.horizontal(|ui| {
                ui.spinner();
                ui.add(egui::ProgressBar::new(self.progress.fraction).desired_width(160.0));
                ui.label(if let Some(folder) = &self.parquet {
                    format!(
                        "The engine ({}) computes the summaries of {}: each rank's iterations and the straggler, no rank's events…",
                        crate::engine_process::ENGINE_BINARY,
                        folder.display()
                    )
                } else if self.ranges_only {
                    format!(
                        "Reading the NVTX ranges of {} reports (a job of more than {FULL_LOAD_MAX_RANKS} ranks is not read whole; a rank's events are read when you expand it)…",
                        self.paths.len()
                    )
                } else {
                    format!(
                        "Reading {} reports, one per core: {} in… {}",
                        self.paths.len(),
                        self.ranks.len(),
                        self.progress.phase,
                    )
                });
                cancel = ui.button("Cancel").clicked();
            });
            if cancel {
                // The loads stop at their next check; what they read is dropped.
                self.load.cancel();
                self.ranks.clear();
                self.error = Some("opening the job was cancelled".into());
                return;
            }
            // The ranks panel answers from the ranks' NVTX ranges, read first.
            if self.analysis.is_some() {
                self.finding_ui(ui);
                self.heatmap_panel(ui);
            }
            // The ranks in so far are drawn as they come.
            if self.ranks.is_empty() {
                return;
            }
            egui::CentralPanel::default().show(ui, |ui| self.ranks_ui(ui));
            return;
        }
        self.header_ui(ui);
        self.finding_ui(ui);
        self.heatmap_panel(ui);
        if let Some((r, ev)) = self.selected {
            egui::Panel::right("job_details")
                .default_size(320.0)
                .resizable(true)
                .show(ui, |ui| {
                    egui::ScrollArea::both().show(ui, |ui| {
                        let Some(rank) = self.ranks.get(r) else {
                            return;
                        };
                        ui.strong(rank.rank.label());
                        let related = &rank.selection.related;
                        crate::app::panels::details::ui(ui, &rank.rank.trace, ev, related);
                    });
                });
        }
        egui::CentralPanel::default().show(ui, |ui| self.ranks_ui(ui));
    }

    /// The ranks × iterations heatmap at the bottom, with the span's tables over it.
    fn heatmap_panel(&mut self, ui: &mut Ui) {
        // Tall enough for every rank's row at a readable height (a few pixels each past 16).
        let rows = self.heat_rows().len();
        let heatmap_h = 56.0
            + rows as f32 * cell_height(rows)
            + if self.span.span.is_some() { 200.0 } else { 0.0 };
        egui::Panel::bottom("job_heatmap")
            .resizable(true)
            .min_size(heatmap_h.min(320.0))
            .default_size(heatmap_h.min(320.0))
            .show(ui, |ui| {
                if self.span.poll() {
                    ui.ctx().request_repaint();
                }
                if self.span.is_pending() {
                    ui.ctx()
                        .request_repaint_after(std::time::Duration::from_millis(50));
                }
                let unread = self.unread();
                if self.span.span.is_some() && unread > 0 {
                    ui.weak(format!(
                        "Over the ranks whose events are read: {unread} are not (expand a rank to read it)."
                    ));
                }
                if self.span.ui(ui) {
                    let span = self.span.span;
                    self.select_span(span);
                }
                // Hundreds of ranks scroll inside the panel rather than push the ranks away.
                egui::ScrollArea::vertical()
                    .id_salt("job_heatmap_rows")
                    .auto_shrink([false, true])
                    .show(ui, |ui| self.heatmap_ui(ui));
            });
    }

    /// Aligning on a shared event, back on the session starts, and nudging a rank by hand.
    fn alignment_ui(&mut self, ui: &mut Ui) {
        let mut action = None;
        egui::CollapsingHeader::new("Alignment").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label("On the end of");
                ui.selectable_value(&mut self.align_on_kernel, false, "NVTX range");
                let kernel = ui
                    .selectable_value(&mut self.align_on_kernel, true, "kernel")
                    .on_hover_text("a kernel whose name contains the text: a collective's (ncclDevKernel_AllReduce…) ends together on every rank");
                if kernel.clicked() && self.align_on.0.is_empty() {
                    self.align_on.0 = (self.ranks.first())
                        .and_then(|r| crate::analysis::ranks::first_collective_kernel(&r.rank.trace))
                        .unwrap_or_default();
                }
                let label = ui.label("named");
                ui.add(egui::TextEdit::singleline(&mut self.align_on.0).desired_width(140.0))
                    .labelled_by(label.id);
                ui.label("instance");
                ui.add(egui::DragValue::new(&mut self.align_on.1).range(1..=1_000_000));
                if ui.button("Align").clicked() && !self.align_on.0.trim().is_empty() {
                    action = Some(Some(self.align_on.0.trim().to_string()));
                }
                if ui.button("Session starts").clicked() {
                    action = Some(None);
                }
                if let Some(why) = &self.align_error {
                    ui.colored_label(Color32::from_rgb(230, 110, 90), why);
                }
            });
            ui.horizontal_wrapped(|ui| {
                ui.label("Nudge:");
                for i in 0..self.ranks.len() {
                    let number = self.ranks[i].rank.number;
                    for (text, ns) in [("-1 ms", -1_000_000), ("+1 ms", 1_000_000)] {
                        let hover = format!("move rank {number} by {text} on the job clock");
                        if ui
                            .small_button(format!("rank {number} {text}"))
                            .on_hover_text(hover)
                            .clicked()
                        {
                            self.nudge(i, ns);
                        }
                    }
                }
            });
        });
        match action {
            Some(Some(name)) if self.align_on_kernel => {
                self.align_on_kernel(&name, self.align_on.1)
            }
            Some(Some(name)) => self.align(Some((&name, self.align_on.1))),
            Some(None) => self.align(None),
            None => {}
        }
    }

    /// The cross-rank finding's line: the straggler and the wait it causes, or why none.
    fn finding_ui(&self, ui: &mut Ui) {
        let Some(analysis) = &self.analysis else {
            return;
        };
        if let Some(why) = &self.engine_failed {
            ui.colored_label(
                Color32::from_rgb(230, 110, 90),
                format!(
                    "From the ranks' NVTX ranges only: the phases' GPU work was not computed: {why}"
                ),
            );
        } else if self.parquet.is_some() && self.analysis_early {
            ui.weak("From the ranks' NVTX ranges: the engine is still computing the phases' GPU work (what the straggler does differently comes with it).");
        } else if self.parquet.is_some() && self.unread() > 0 {
            ui.weak(format!(
                "From the engine's summaries: {} of {} ranks' events are not read (a Parquet job folder); a rank's report is read when you expand or click it.",
                self.unread(),
                self.ranks.len()
            ));
        } else if self.analysis_early && !self.is_loading() {
            ui.weak(format!(
                "From the ranks' NVTX ranges: {} of {} ranks' events are not read (a job this size is not read whole); a rank's are read when you expand or click it.",
                self.unread(),
                self.ranks.len()
            ));
        } else if self.analysis_early {
            ui.weak("From the ranks' NVTX ranges: their events are still being read (the phases' GPU work comes with them).");
        }
        match &analysis.straggler {
            Ok(s) => {
                // One line (the whole message on hover): the ranks keep the window's height.
                let text = straggler_message(s, analysis.difference.as_ref());
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(format!("Straggler: {text}"))
                            .color(Color32::from_rgb(240, 170, 70)),
                    )
                    .truncate(),
                )
                .on_hover_text(text);
            }
            Err(why) => {
                ui.weak(format!("No straggler: {why}"));
            }
        }
    }

    /// The job's line: how many ranks, how they are aligned, each rank's offset on hover.
    fn header_ui(&mut self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("{} ranks", self.ranks.len()));
            ui.label("·");
            let offsets: Vec<String> = (self.ranks.iter())
                .map(|r| {
                    format!(
                        "rank {}: +{} ({})",
                        r.rank.number,
                        format::duration(r.rank.offset_ns),
                        r.rank.path.display()
                    )
                })
                .collect();
            ui.label(self.alignment.describe())
                .on_hover_text(offsets.join("\n"));
            if ui.small_button("Collapse all").clicked() {
                (0..self.ranks.len()).for_each(|i| self.set_expanded(i, false));
            }
            if ui.small_button("Expand all").clicked() {
                (0..self.ranks.len()).for_each(|i| self.set_expanded(i, true));
            }
        });
        self.alignment_ui(ui);
    }

    /// Every rank's timeline, one above the other, on the job's axis.
    fn ranks_ui(&mut self, ui: &mut Ui) {
        let axis = self.axis;
        let mut moved = None;
        let mut selected = None;
        let mut span_asked = None;
        let mut toggled = None;
        let mut clicked = None;
        let scroll_to = self.scroll_to.take();
        self.rank_rects.clear();
        egui::ScrollArea::vertical()
            .auto_shrink([false, false])
            .show(ui, |ui| {
                for (i, r) in self.ranks.iter_mut().enumerate() {
                    let expanded = !r.timeline.compact;
                    let offset = r.rank.offset_ns as f64;
                    r.timeline.view.set(axis.0 - offset, axis.1 - offset);
                    r.timeline.ruler_origin = Some(axis.0.min(0.0) - offset);
                    let height =
                        r.timeline
                            .content_height()
                            .min(if expanded { 460.0 } else { 200.0 });
                    let body =
                        Rect::from_min_size(ui.cursor().min, vec2(ui.available_width(), height));
                    ui.allocate_rect(body, Sense::hover());
                    self.rank_rects.push(body);
                    if scroll_to == Some(i) {
                        ui.scroll_to_rect(body, Some(egui::Align::TOP));
                    }
                    // Hundreds of ranks: only those in sight are drawn.
                    if !ui.is_rect_visible(body) {
                        ui.add_space(1.0);
                        continue;
                    }
                    let builder = egui::UiBuilder::new()
                        .max_rect(body)
                        .id_salt(("job_rank", i));
                    let out = ui
                        .scope_builder(builder, |ui| r.timeline.ui(ui, &r.rank.trace, &r.selection))
                        .inner;
                    // The rank's name and its toggle sit left of its ruler, where the row
                    // labels' column leaves room: no line of its own, so eight ranks fit.
                    let corner =
                        Rect::from_min_size(body.min, vec2((body.width() / 5.0).min(240.0), 22.0));
                    let builder = egui::UiBuilder::new()
                        .max_rect(corner)
                        .id_salt(("job_rank_label", i))
                        .layout(egui::Layout::left_to_right(egui::Align::Center));
                    // A child that takes no room: the cursor stays below the rank's timeline.
                    let mut corner_ui = ui.new_child(builder);
                    {
                        let ui = &mut corner_ui;
                        let arrow = if expanded { "-" } else { "+" };
                        if ui
                            .small_button(arrow)
                            .on_hover_text("the rank's full tree, or two lanes")
                            .clicked()
                        {
                            toggled = Some((i, !expanded));
                        }
                        ui.add(
                            egui::Label::new(egui::RichText::new(r.rank.label()).strong())
                                .truncate(),
                        )
                        .on_hover_text(format!(
                            "{}\n+{} on the job clock",
                            r.rank.path.display(),
                            format::duration(r.rank.offset_ns)
                        ));
                        events_note(ui, &r.events);
                    }
                    for command in out.commands {
                        match command {
                            Command::Select(ev) => {
                                r.selection.set_event(&r.rank.trace, ev);
                                r.timeline.reveal_selection();
                                selected = Some(ev.map(|e| (i, e)));
                                clicked = Some(i);
                            }
                            Command::SelectRange(range) => {
                                let off = r.rank.offset_ns;
                                span_asked = Some(Some((range.start + off, range.end + off)));
                            }
                            Command::ClearRange => span_asked = Some(None),
                            Command::ClearSelection => {
                                r.selection = Selection::default();
                                selected = Some(None);
                                span_asked = Some(None);
                            }
                            _ => {}
                        }
                    }
                    let (s, e) = (r.timeline.view.start + offset, r.timeline.view.end + offset);
                    if (s, e) != axis {
                        moved = Some((s, e));
                    }
                    ui.add_space(1.0);
                }
            });
        if let Some((i, expand)) = toggled {
            self.set_expanded(i, expand);
        }
        // A click on a rank known by its NVTX ranges alone reads its events.
        if let Some(i) = clicked {
            self.read_events_of(i);
        }
        if let Some(chosen) = selected {
            self.selected = chosen;
        }
        if let Some(span) = span_asked {
            self.select_span(span);
        }
        if let Some(axis) = moved {
            self.set_axis(axis);
            ui.ctx().request_repaint();
        }
    }

    /// Each rank's iterations as the analysis found them (its NVTX ranges' while the job's
    /// events are read, the whole job's after), and the ranks without any.
    fn found_iterations(&self) -> (&[RankIterations], &[u32]) {
        (self.analysis.as_ref()).map_or((&[], &[]), |a| {
            (
                a.iterations.ranks.as_slice(),
                a.iterations.without.as_slice(),
            )
        })
    }

    /// The heatmap's rows: every rank's number, in order.
    fn heat_rows(&self) -> Vec<u32> {
        let (found, without) = self.found_iterations();
        let mut rows: Vec<u32> = (found.iter().map(|r| r.rank))
            .chain(without.iter().copied())
            .collect();
        rows.sort_unstable();
        rows
    }

    /// Rank `number`'s iterations, if found.
    fn iterations_of(&self, number: u32) -> Option<&RankIterations> {
        self.found_iterations().0.iter().find(|r| r.rank == number)
    }

    /// The iteration numbers the ranks have, in order.
    fn iteration_numbers(&self) -> Vec<u64> {
        let mut numbers: Vec<u64> = (self.found_iterations().0.iter())
            .flat_map(|it| it.iterations.keys().copied())
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        numbers
    }

    /// The phase names of the job's iterations (what the heatmap can show).
    fn phase_names(&self) -> Vec<String> {
        (self.analysis.as_ref()).map_or_else(Vec::new, |a| a.iterations.phase_names.clone())
    }

    /// The ranks × iterations heatmap.
    fn heatmap_ui(&mut self, ui: &mut Ui) {
        let numbers = self.iteration_numbers();
        let pattern = (self.found_iterations().0.first())
            .map(|l| l.pattern.clone())
            .unwrap_or_default();
        ui.horizontal(|ui| {
            ui.strong("Ranks × iterations");
            if numbers.is_empty() {
                ui.weak("no repeated top-level NVTX range (`step N`) in these reports");
                return;
            }
            ui.weak(format!(
                "of `{pattern}`: hotter the longer than the iteration's median rank (hottest at +10 %); the slowest rank of each is outlined"
            ));
            let shown = self
                .heatmap_phase
                .clone()
                .unwrap_or_else(|| "whole iteration".into());
            egui::ComboBox::from_label("shown")
                .selected_text(shown)
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.heatmap_phase, None, "whole iteration");
                    for name in self.phase_names() {
                        ui.selectable_value(&mut self.heatmap_phase, Some(name.clone()), name);
                    }
                });
        });
        if numbers.is_empty() {
            return;
        }
        let phase = self.heatmap_phase.clone();
        let rows = self.heat_rows();
        let grid: Vec<Vec<Option<Ns>>> = (rows.iter())
            .map(|&rank| {
                let found = self.iterations_of(rank);
                (numbers.iter())
                    .map(|n| {
                        let it = found?.iterations.get(n)?;
                        match phase.as_deref() {
                            None => Some(it.end - it.start),
                            Some(name) => it.phase(name).map(|p| p.duration()),
                        }
                    })
                    .collect()
            })
            .collect();
        if let Some((row, number)) = self.heatmap_grid(ui, &rows, &numbers, &grid) {
            self.zoom_to_iteration(&rows, row, number, &grid, &numbers);
        }
    }

    /// Draws the cells; returns the cell clicked (rank index, iteration number).
    fn heatmap_grid(
        &mut self,
        ui: &mut Ui,
        rows: &[u32],
        numbers: &[u64],
        grid: &[Vec<Option<Ns>>],
    ) -> Option<(usize, u64)> {
        let medians = column_medians(grid, numbers.len());
        let label_w = 70.0;
        let cell_w =
            ((ui.available_width() - label_w) / numbers.len().max(1) as f32).clamp(6.0, 48.0);
        let cell_h = cell_height(grid.len());
        let origin = ui.cursor().min;
        let size = vec2(
            label_w + cell_w * numbers.len() as f32,
            cell_h * grid.len() as f32 + 16.0,
        );
        // One response for every cell (hundreds of ranks × iterations would each be a widget):
        // the cell under the pointer is found from its position.
        let (area, response) = ui.allocate_exact_size(size, Sense::click());
        let painter = ui.painter_at(area);
        let visible = ui.clip_rect();
        let text = ui.visuals().text_color();
        self.cells.clear();
        let cells_origin = pos2(origin.x + label_w, origin.y);
        for (col, &n) in numbers.iter().enumerate() {
            let x = cells_origin.x + col as f32 * cell_w;
            if cell_w >= 18.0 || col % 5 == 0 {
                painter.text(
                    pos2(
                        x + cell_w / 2.0,
                        origin.y + cell_h * grid.len() as f32 + 8.0,
                    ),
                    egui::Align2::CENTER_CENTER,
                    n.to_string(),
                    egui::FontId::proportional(10.0),
                    text,
                );
            }
            let slowest = (0..grid.len()).max_by_key(|&r| grid[r][col].unwrap_or(Ns::MIN));
            for (row, durations) in grid.iter().enumerate() {
                let cell = Rect::from_min_size(
                    pos2(x, origin.y + row as f32 * cell_h),
                    vec2(cell_w - 1.0, cell_h - 1.0),
                );
                let Some(d) = durations[col] else { continue };
                self.cells.push((row, n, cell));
                if !visible.intersects(cell) {
                    continue;
                }
                painter.rect_filled(cell, 1.0, heat(heat_of(d, medians[col])));
                if slowest == Some(row) && grid.len() > 1 {
                    // Rows a few pixels high have no room for an outline: the cell is white.
                    if cell_h < 6.0 {
                        painter.rect_filled(cell, 0.0, Color32::WHITE);
                    } else {
                        painter.rect_stroke(
                            cell,
                            1.0,
                            Stroke::new(2.0, Color32::WHITE),
                            StrokeKind::Inside,
                        );
                    }
                }
            }
        }
        let cell_at = |at: egui::Pos2| -> Option<(usize, usize, Ns)> {
            let col = ((at.x - cells_origin.x) / cell_w).floor();
            let row = ((at.y - cells_origin.y) / cell_h).floor();
            if col < 0.0 || row < 0.0 {
                return None;
            }
            let (row, col) = (row as usize, col as usize);
            let d = (*grid.get(row)?.get(col)?)?;
            Some((row, col, d))
        };
        let hovered = response.hover_pos().and_then(cell_at);
        let clicked = (response.clicked())
            .then(|| response.interact_pointer_pos().and_then(cell_at))
            .flatten()
            .map(|(row, col, _)| (row, numbers[col]));
        if let Some((row, col, d)) = hovered {
            let name = (self.ranks.iter())
                .find(|r| r.rank.number == rows[row])
                .map_or_else(|| format!("rank {}", rows[row]), |r| r.rank.label());
            response.on_hover_text(format!(
                "{name}, iteration {}: {}",
                numbers[col],
                format::duration(d)
            ));
        }
        // A label every few rows where rows are thinner than its text; thin rows' labels hang
        // from their row's top, the first one inside the panel.
        let every = (10.0 / cell_h).ceil().max(1.0) as usize;
        for (row, number) in rows.iter().enumerate().step_by(every) {
            let (y, align) = if every > 1 {
                (row as f32 * cell_h, egui::Align2::LEFT_TOP)
            } else {
                (
                    row as f32 * cell_h + cell_h / 2.0,
                    egui::Align2::LEFT_CENTER,
                )
            };
            painter.text(
                pos2(origin.x, origin.y + y),
                align,
                format!("rank {number}"),
                egui::FontId::proportional(cell_h.clamp(8.0, 12.0)),
                text,
            );
        }
        clicked
    }

    /// Zooms every rank to iteration `number` (its span over all ranks), expands the rank of
    /// heatmap row `row` and the fastest rank of that iteration (`rows`: each row's rank
    /// number), and collapses the others (a rank whose events are not in yet has no view).
    fn zoom_to_iteration(
        &mut self,
        rows: &[u32],
        row: usize,
        number: u64,
        grid: &[Vec<Option<Ns>>],
        numbers: &[u64],
    ) {
        let Some(col) = numbers.iter().position(|&n| n == number) else {
            return;
        };
        let fastest = (0..grid.len())
            .filter(|&r| grid[r][col].is_some())
            .min_by_key(|&r| grid[r][col].unwrap_or(Ns::MAX));
        let expand = [Some(row), fastest].map(|r| r.and_then(|r| rows.get(r).copied()));
        let span = (self.found_iterations().0.iter())
            .filter_map(|r| r.iterations.get(&number).map(|it| (it.start, it.end)))
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
        for i in 0..self.ranks.len() {
            let number = Some(self.ranks[i].rank.number);
            self.set_expanded(i, expand.contains(&number));
        }
        // Among hundreds of ranks the one clicked is brought into view.
        self.scroll_to = (self.ranks.iter()).position(|r| Some(r.rank.number) == expand[0]);
        if let Some((start, end)) = span {
            let pad = (end - start) as f64 * 0.05;
            self.set_axis((start as f64 - pad, end as f64 + pad));
        }
    }

    /// The loaded ranks' reports, and the cancel flag of a load under way (tests).
    pub fn load_cancel_flag(&self) -> Arc<AtomicBool> {
        self.load.cancel_flag()
    }
}

/// Beside a rank's name: its events being read, or not read (and how to read them), or why
/// their read failed.
fn events_note(ui: &mut Ui, events: &RankEvents) {
    match events {
        RankEvents::Read => {}
        RankEvents::RangesOnly => {
            ui.weak("NVTX only")
                .on_hover_text("its events are not read: expand or click the rank to read them");
        }
        RankEvents::Reading => {
            ui.spinner().on_hover_text("reading its events");
        }
        RankEvents::Failed(why) => {
            ui.colored_label(Color32::from_rgb(230, 110, 90), "not read")
                .on_hover_text(why);
        }
        RankEvents::Summary => {
            ui.weak("summary").on_hover_text(
                "from the engine's summaries: expand or click the rank to read its report",
            );
        }
        RankEvents::Missing(path) => {
            ui.colored_label(Color32::from_rgb(230, 110, 90), missing_report_line(path));
        }
    }
}

/// What a rank of a Parquet job whose source report is gone says.
pub fn missing_report_line(path: &std::path::Path) -> String {
    format!(
        "its report is not at {}: the rank stays on its summary",
        path.display()
    )
}

/// How much longer than the median rank of its iteration a cell is, on the colour scale: none
/// (or faster) is 0, [`HOT_EXCESS`] of the median or more is 1. Against each iteration's median
/// rather than every cell's range: one slow iteration (the first, warming up) would wash out the
/// rest, and what the heatmap is for is the rank that is slow in its iteration.
fn heat_of(duration: Ns, median: Ns) -> f32 {
    if median <= 0 {
        return 0.0;
    }
    ((duration - median) as f64 / (HOT_EXCESS * median as f64)) as f32
}

/// The excess over the iteration's median rank drawn hottest: 10 %.
const HOT_EXCESS: f64 = 0.10;

/// Each column's median duration over the ranks that have it (0 where none has).
fn column_medians(grid: &[Vec<Option<Ns>>], columns: usize) -> Vec<Ns> {
    (0..columns)
        .map(|col| {
            let mut column: Vec<Ns> = grid.iter().filter_map(|row| row[col]).collect();
            column.sort_unstable();
            column.get(column.len() / 2).copied().unwrap_or(0)
        })
        .collect()
}

/// A cell's colour at `t` of the way from its iteration's median to 10 % over it: cool to hot,
/// so the slow ranks stand out.
fn heat(t: f32) -> Color32 {
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f32, b: f32| (a + (b - a) * t) as u8;
    Color32::from_rgb(lerp(40.0, 235.0), lerp(90.0, 80.0), lerp(160.0, 50.0))
}

/// A mark on the ruler over `[start, end)` of a rank's own clock.
fn ruler_mark(start: Ns, end: Ns, color: Color32, label: String) -> Overlay {
    Overlay {
        start,
        end,
        anchor: Anchor::Ruler,
        color,
        label,
        source: OVERLAY_SOURCE,
    }
}

/// A heatmap row's height for `ranks` ranks: 16 px for a few, 12 up to 16 ranks, then smaller,
/// 3 px at least.
fn cell_height(ranks: usize) -> f32 {
    match ranks {
        0..=4 => 16.0,
        5..=16 => 12.0,
        _ => (192.0 / ranks as f32).max(3.0),
    }
}
