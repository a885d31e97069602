//! The window: tabs of documents, menus, dialogs, the status bar, and what survives a restart.
//! It owns the documents and the background jobs that feed them; it draws the panels and the
//! timeline of the shown document and applies what they return.

pub mod compare;
mod dock;

pub(crate) use crate::files::same_file;
pub mod lesson;
mod quit;
pub mod ranks;
pub mod welcome;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use eframe::egui::{self, Color32, Key, RichText, Ui};
use serde::{Deserialize, Serialize};

use crate::app::document::Document;
use crate::app::document::Loading;
use crate::app::job::Job;
use crate::app::panels::capture_panel::{CaptureDialog, Live};
use crate::app::panels::compare_view::CompareView;
use crate::app::panels::job_view::JobView;
use crate::app::state::command::Command;
use crate::app::state::events::Table;
use crate::app::timeline::view::ViewState;
use crate::app::widgets::file_dialog::{Answer, Purpose};
use crate::app::widgets::help::Help;
use crate::app::widgets::prefs::Prefs;
use crate::capture::benchmarks::{BenchmarkSpec, Params};
use crate::capture::session::{CaptureJob, CaptureOptions};
use crate::loader::{LoadJob, LoadMessage, LoadOptions, Progress};
use crate::model::{TimeRange, Trace};

pub(crate) const STORAGE_KEY: &str = "sightline";
pub(crate) const MAX_RECENT: usize = 10;

/// What survives restarts.
#[derive(Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Saved {
    pub(crate) recent: Vec<PathBuf>,
    /// View options that apply to every report (names inside events).
    pub(crate) view: Option<ViewState>,
    /// Collapsed and hidden rows, by report (canonical path): row keys are
    /// thread and stream ids, which mean other rows in another report.
    pub(crate) rows: std::collections::BTreeMap<PathBuf, RowState>,
    /// Theme, UI zoom, presentation mode, details panel.
    pub(crate) prefs: Prefs,
    /// The reports open at the end of the last session, and the one shown.
    pub(crate) tabs: Vec<PathBuf>,
    pub(crate) shown: Option<PathBuf>,
    /// View ▸ Metrics strip: the metric shown, by name.
    pub(crate) strip: Option<crate::app::panels::kernel_metrics::StripChoice>,
    /// The first start's welcome was dismissed (it does not come back).
    pub(crate) welcomed: bool,
}

/// The rows a user collapsed or hid in one report.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct RowState {
    pub(crate) collapsed: std::collections::BTreeSet<String>,
    pub(crate) hidden: std::collections::BTreeSet<String>,
}

/// A report being opened shows its snapshots once its load has taken this
/// long: one read faster opens whole, as it always did, with no half-drawn
/// frame in between; a big one shows its time axis and GPUs in well under
/// a second, then each kind of row as it is read.
pub(crate) const SHOW_SNAPSHOTS_AFTER: Duration = Duration::from_millis(250);

/// One tab: a report being read, an open one, or two compared.
pub(crate) enum Tab {
    Loading(Loading),
    Ready(Box<Document>),
    Compare(Box<CompareView>),
    /// A job of several reports, one per rank, on one clock.
    Job(Box<JobView>),
}

impl Tab {
    /// The load of a report being read: before anything is shown, or while
    /// its snapshots are.
    pub(crate) fn loading(self) -> Option<Loading> {
        match self {
            Tab::Loading(l) => Some(l),
            Tab::Ready(d) => d.loading,
            Tab::Compare(_) | Tab::Job(_) => None,
        }
    }

    pub(crate) fn is_loading(&self) -> bool {
        match self {
            Tab::Loading(_) => true,
            Tab::Ready(d) => d.is_loading(),
            Tab::Compare(_) => false,
            Tab::Job(j) => j.is_loading(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        match self {
            Tab::Loading(l) => &l.job.path,
            Tab::Ready(d) => &d.path,
            Tab::Compare(c) => c.path(),
            Tab::Job(j) => j.path(),
        }
    }

    pub(crate) fn title(&self) -> String {
        let name = crate::app::widgets::format::file_name(self.path());
        let loading = match self {
            Tab::Loading(l) => Some(l),
            Tab::Ready(d) => d.loading.as_ref(),
            Tab::Compare(c) => return c.title(),
            Tab::Job(j) => return j.title(),
        };
        match loading {
            Some(l) => format!("{name} ({:.0}%)", l.progress.fraction * 100.0),
            None => name,
        }
    }
}

/// The saved Recent list with each file once, under its real path (a
/// symlinked path and its target are one file); a file that is gone keeps its
/// path, so the menu can still say it was there.
pub(crate) fn canonical_recent(saved: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut recent: Vec<PathBuf> = Vec::with_capacity(saved.len());
    for p in saved {
        let p = std::fs::canonicalize(&p).unwrap_or(p);
        if !recent.contains(&p) {
            recent.push(p);
        }
    }
    recent
}

#[derive(Default)]
pub struct SightlineApp {
    /// Open reports and reports being read, in the order they were opened.
    pub(crate) tabs: Vec<Tab>,
    /// Index in `tabs` of the one shown.
    pub(crate) active: usize,
    /// The last problem, shown in the window until dismissed.
    pub error: Option<String>,
    pub recent: Vec<PathBuf>,
    /// The desktop's file dialog, while one is up (every file the window asks for).
    pub(crate) dialog: crate::app::widgets::file_dialog::FileDialog,
    /// Several files dropped at once, until the user says whether they are one job.
    pub dropped: Vec<PathBuf>,
    /// File ▸ Browse…, and the fallback when there is no native dialog.
    pub browser: crate::app::widgets::file_browser::FileBrowser,
    /// View ▸ Go to time: what was typed, and why it was not a time.
    pub(crate) goto_text: String,
    pub(crate) goto_error: Option<String>,
    pub(crate) open_path: String,
    pub(crate) saved_view: Option<ViewState>,
    pub(crate) saved_strip: Option<crate::app::panels::kernel_metrics::StripChoice>,
    pub(crate) saved_rows: std::collections::BTreeMap<PathBuf, RowState>,
    pub capture_dialog: CaptureDialog,
    /// A save in progress: where, and its result when done.
    pub(crate) saving: Job<Result<PathBuf, String>>,
    pub(crate) save_path: String,
    /// The last save that worked, shown in the status bar.
    pub(crate) saved_to: Option<PathBuf>,
    /// File ▸ Export image / Copy image.
    pub(crate) image_export: crate::app::widgets::export_image::ImageExport,
    /// Theme, UI zoom, presentation mode, details panel (kept across restarts).
    pub prefs: Prefs,
    /// The theme and zoom are given to egui on the first frame (no context before).
    pub(crate) prefs_applied: bool,
    /// The last session's tabs, reopened when the window starts with no file.
    pub(crate) last_session: (Vec<PathBuf>, Option<PathBuf>),
    pub(crate) help: Help,
    /// The Lessons menu and the lesson being followed.
    pub lessons: crate::app::panels::lesson_panel::Lessons,
    /// A tab asked to close whose notes could not be saved: the report's
    /// path, until the user keeps it open or closes it anyway.
    pub(crate) confirm_close: Option<PathBuf>,
    /// A quit was asked with notes that could not be saved: until the user keeps the window
    /// open or quits anyway.
    pub(crate) confirm_quit: bool,
    /// The user chose to quit without them: the close goes ahead unasked.
    pub(crate) quit_anyway: bool,
    /// This frame's Enter went to no widget (see [`SightlineApp::ui`]).
    pub(crate) enter_unclaimed: bool,
    /// The first start's welcome is shown (`welcome.rs`).
    pub(crate) welcome: bool,
    /// Whether an NVIDIA driver is here (asked once, when the welcome is first drawn).
    pub(crate) gpu_present: Option<bool>,
}

/// The report opened when none is given: next to the executable or in the
/// current directory, else where the source tree had it at build time.
pub fn bundled_report() -> Option<PathBuf> {
    let name = "sync_timing.sqlite";
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        candidates.push(dir.join("assets").join(name));
        candidates.push(dir.join(name));
    }
    candidates.push(PathBuf::from("assets").join(name));
    candidates.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets")
            .join(name),
    );
    candidates.into_iter().find(|p| p.is_file())
}

impl SightlineApp {
    /// An app showing an already loaded trace (tests, benchmarks).
    pub fn with_trace(trace: Trace) -> Self {
        SightlineApp::with_shared_trace(Arc::new(trace))
    }

    /// [`SightlineApp::with_trace`] of a trace held elsewhere too (a
    /// capture's snapshot, in tests).
    pub fn with_shared_trace(trace: Arc<Trace>) -> Self {
        let path = PathBuf::from(&trace.info.path);
        SightlineApp {
            tabs: vec![Tab::Ready(Box::new(Document::new(trace, path)))],
            ..Default::default()
        }
    }

    /// An empty app with what the last session saved (recent files, view options).
    pub fn restore(storage: Option<&dyn eframe::Storage>) -> Self {
        let saved: Saved = storage
            .and_then(|s| eframe::get_value(s, STORAGE_KEY))
            .unwrap_or_default();
        SightlineApp {
            recent: canonical_recent(saved.recent),
            saved_view: saved.view,
            saved_strip: saved.strip,
            saved_rows: saved.rows,
            prefs: saved.prefs,
            last_session: (saved.tabs, saved.shown),
            // The first start (with somewhere to keep that it was seen).
            welcome: storage.is_some() && !saved.welcomed,
            ..Default::default()
        }
    }

    /// Reopens the reports of the last session that still exist, showing the
    /// one that was shown; false when there are none.
    pub fn reopen_last_session(&mut self) -> bool {
        let (paths, shown) = std::mem::take(&mut self.last_session);
        let mut any = false;
        for p in paths.into_iter().filter(|p| p.is_file()) {
            self.open(p);
            any = true;
        }
        if let Some(i) = shown.and_then(|s| self.tabs.iter().position(|t| t.path() == s)) {
            self.active = i;
        }
        any
    }

    /// The report shown (None while its tab is still loading, or none is open).
    pub fn doc(&self) -> Option<&Document> {
        match self.tabs.get(self.active)? {
            Tab::Ready(d) => Some(d),
            Tab::Loading(_) | Tab::Compare(_) | Tab::Job(_) => None,
        }
    }

    pub fn doc_mut(&mut self) -> Option<&mut Document> {
        match self.tabs.get_mut(self.active)? {
            Tab::Ready(d) => Some(d),
            Tab::Loading(_) | Tab::Compare(_) | Tab::Job(_) => None,
        }
    }

    /// Every open report, in tab order (loading tabs left out).
    pub fn docs(&self) -> impl Iterator<Item = &Document> {
        self.tabs.iter().filter_map(|t| match t {
            Tab::Ready(d) => Some(&**d),
            Tab::Loading(_) | Tab::Compare(_) | Tab::Job(_) => None,
        })
    }

    /// How many tabs there are (loading ones included).
    pub fn tab_count(&self) -> usize {
        self.tabs.len()
    }

    /// Index of the tab shown.
    pub fn active_tab(&self) -> usize {
        self.active
    }

    /// Shows tab `i` (nothing is reloaded).
    pub fn switch_to(&mut self, i: usize) {
        if i < self.tabs.len() {
            self.active = i;
        }
    }

    /// Closes tab `i` (cancelling its load if it is still reading). A report
    /// whose notes are not on disk (typed text not yet written is written
    /// now; a save that failed is tried again) is not closed: the window
    /// asks first, since closing would lose them.
    pub fn close_tab(&mut self, i: usize) {
        if let Some(Tab::Ready(doc)) = self.tabs.get_mut(i)
            && doc.notes.has_unsaved()
        {
            doc.notes.save();
            if doc.notes.has_unsaved() {
                self.confirm_close = Some(doc.path.clone());
                self.active = i;
                return;
            }
        }
        self.close_tab_now(i);
    }

    /// Shows how an image export ended in the status bar.
    pub fn export_outcome(&mut self, outcome: crate::app::widgets::export_image::ExportOutcome) {
        match outcome {
            crate::app::widgets::export_image::ExportOutcome::Saved(p) => self.saved_to = Some(p),
            crate::app::widgets::export_image::ExportOutcome::Failed(e) => {
                // An earlier "Saved …" or "Copied …" beside this error would
                // read as if this export had worked.
                self.saved_to = None;
                self.image_export.notice = None;
                self.error = Some(e);
            }
            copied => self.image_export.notice = Some(copied.to_string()),
        }
    }

    /// Whether a tab waits for the user to confirm closing it.
    pub fn is_confirming_close(&self) -> bool {
        self.confirm_close.is_some()
    }

    /// Asks whether to close a tab whose notes could not be saved.
    pub(crate) fn confirm_close_ui(&mut self, ctx: &egui::Context) {
        let Some(path) = self.confirm_close.clone() else {
            return;
        };
        let Some(i) = self
            .tabs
            .iter()
            .position(|t| matches!(t, Tab::Ready(_)) && t.path() == path.as_path())
        else {
            self.confirm_close = None;
            return;
        };
        let why = match &self.tabs[i] {
            Tab::Ready(doc) => doc.notes.error.clone().unwrap_or_default(),
            _ => String::new(),
        };
        let mut answer = None;
        egui::Modal::new(egui::Id::unique("confirm close")).show(ctx, |ui| {
            ui.heading("Notes not saved");
            ui.label(format!(
                "The notes on {} could not be saved:",
                crate::app::widgets::format::file_name(&path)
            ));
            ui.add(
                egui::Label::new(RichText::new(why).color(Color32::from_rgb(255, 110, 90))).wrap(),
            );
            ui.label("Closing the report now loses them.");
            ui.horizontal(|ui| {
                if ui.button("Keep it open").clicked() {
                    answer = Some(false);
                }
                if ui.button("Close and lose the notes").clicked() {
                    answer = Some(true);
                }
            });
        });
        match answer {
            Some(true) => {
                self.confirm_close = None;
                self.close_tab_now(i);
            }
            Some(false) => self.confirm_close = None,
            None => {}
        }
    }

    /// Closes tab `i` without asking.
    pub(crate) fn close_tab_now(&mut self, i: usize) {
        if i >= self.tabs.len() {
            return;
        }
        // The report's events and the timeline's rows and idle gaps (as many
        // as its kernels) are freed on another thread: the last reference to
        // a big report frees gigabytes. The rest of the tab here, which
        // cancels its panels' jobs as it goes.
        let heavy = match self.tabs.remove(i) {
            Tab::Ready(doc) => {
                let Document {
                    trace,
                    timeline,
                    loading,
                    ..
                } = *doc;
                if let Some(l) = loading {
                    l.job.cancel();
                }
                vec![(trace, timeline)]
            }
            Tab::Loading(l) => {
                l.job.cancel();
                Vec::new()
            }
            Tab::Compare(view) => view.into_reports(),
            Tab::Job(view) => view.into_reports(),
        };
        crate::app::job::drop_off_thread(heavy);
        if self.active > i || self.active >= self.tabs.len() {
            self.active = self.active.saturating_sub(1);
        }
    }

    pub fn is_loading(&self) -> bool {
        self.tabs.iter().any(Tab::is_loading)
    }

    /// Opens `path` in a new tab, read in the background; a report that is
    /// already open (or opening) is just shown.
    pub fn open(&mut self, path: PathBuf) {
        self.error = None;
        // A folder is a job: every report in it, one per rank.
        if path.is_dir() {
            self.open_ranks(vec![path], None);
            return;
        }
        if let Some(i) = self
            .tabs
            .iter()
            .position(|t| !matches!(t, Tab::Compare(_) | Tab::Job(_)) && same_file(t.path(), &path))
        {
            self.active = i;
            return;
        }
        // The CPU samples are read once the rest is in (`document::cpu_samples`).
        self.open_job(LoadJob::spawn(path, LoadOptions::WITHOUT_CPU_SAMPLING));
    }

    /// Shows a load's report in a new tab, as it comes in.
    pub fn open_job(&mut self, job: LoadJob) {
        self.tabs.push(Tab::Loading(Loading {
            job,
            progress: Progress {
                phase: "opening",
                fraction: 0.0,
            },
            began: std::time::Instant::now(),
            latest: None,
            shown_attempt: 0,
        }));
        self.active = self.tabs.len() - 1;
    }

    pub(crate) fn remember_recent(&mut self, path: &Path) {
        let p = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        // Compared as files: a list saved by an older version may hold a
        // symlinked path of the same report.
        self.recent.retain(|r| !same_file(r, &p));
        self.recent.insert(0, p);
        self.recent.truncate(MAX_RECENT);
    }

    /// Starts capturing a benchmark in a new tab; returns the tab's name (its document's
    /// path), unique among the open tabs.
    pub fn start_capture(
        &mut self,
        spec: &'static BenchmarkSpec,
        params: Params,
        counters: Option<crate::capture::counters::CounterRequest>,
    ) -> PathBuf {
        let options = CaptureOptions {
            live_snapshots: true,
            counters,
            ..CaptureOptions::default()
        };
        self.push_capture(CaptureJob::spawn(spec, params, options))
    }

    /// Replays a saved report in a new tab, `speed` times its recorded pace.
    pub fn start_replay(&mut self, path: PathBuf, speed: f64) {
        self.push_capture(CaptureJob::replay(path, speed));
    }

    pub(crate) fn push_capture(&mut self, mut job: CaptureJob) -> PathBuf {
        // A second capture of the same benchmark gets its own name, so that a tab (and a
        // lesson step waiting for it) is found by name.
        let base = job.label.clone();
        let mut n = 1;
        while self.tabs.iter().any(|t| t.path() == Path::new(&job.label)) {
            n += 1;
            job.label = format!("{base} ({n})");
        }
        let path = PathBuf::from(&job.label);
        self.error = None;
        self.tabs.push(Tab::Ready(Box::new(Document::capture(job))));
        self.active = self.tabs.len() - 1;
        path
    }

    /// Takes every live capture's messages; true while one runs. `window`,
    /// when given, is woken by their next messages.
    pub fn poll_captures(&mut self, window: Option<&egui::Context>) -> bool {
        let mut running = false;
        for tab in &mut self.tabs {
            if let Tab::Ready(doc) = tab {
                doc.poll_live(window);
                running |= doc.live.as_ref().is_some_and(Live::is_running);
            }
        }
        running
    }

    /// Saves the report shown to `path` on a worker thread: a capture's
    /// working file is copied as it is; any other report is written by the
    /// nsys-schema writer. Either way the file is built aside and renamed.
    pub fn save_as(&mut self, path: PathBuf) {
        let Some(doc) = self.doc() else { return };
        let trace = doc.trace.clone();
        let report = doc.live.as_ref().and_then(|l| l.report.clone());
        if doc.live.as_ref().is_some_and(Live::is_running) {
            self.error = Some("stop the capture before saving it".into());
            return;
        }
        // A snapshot lacks the tables still to come: saved, it would be a
        // report that silently misses them.
        if doc.is_loading() {
            self.error = Some("the report is still being read: save it once it is whole".into());
            return;
        }
        // Nor a report whose CPU samples could not be read (the copy would lack them).
        if doc.trace.cpu_sampling_not_read() {
            self.error = Some("the report's CPU samples could not be read: not saved".into());
            return;
        }
        let started = self.saving.start("sightline-save", None, move |_| {
            let result = match report {
                Some(live) => live
                    .lock()
                    .map_err(|_| "the capture is unavailable".to_string())
                    .and_then(|live| live.save(&path)),
                None => crate::synth::write_report(
                    &trace,
                    1,
                    &path,
                    &mut |_| {},
                    &std::sync::atomic::AtomicBool::new(false),
                )
                .map(|_| ())
                .map_err(|e| e.to_string()),
            };
            Some(result.map(|()| path))
        });
        if !started {
            self.error = Some("cannot start saving: no thread".into());
        }
    }

    /// Takes the result of a save; true while one runs.
    pub fn poll_saving(&mut self) -> bool {
        let was_running = self.saving.is_running();
        match self.saving.take() {
            Some(Ok(path)) => self.saved_to = Some(path),
            Some(Err(e)) => self.error = Some(e),
            None if was_running && !self.saving.is_running() => {
                self.error = Some("saving failed".into());
            }
            None => {}
        }
        self.saving.is_running()
    }

    /// Blocks until every capture and save has finished (tests).
    pub fn wait_for_captures(&mut self) {
        while self.poll_captures(None) || self.poll_saving() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Takes loader messages; true while a load is running.
    pub fn poll_loading(&mut self) -> bool {
        let mut running = false;
        let mut i = 0;
        while i < self.tabs.len() {
            let loading = match &mut self.tabs[i] {
                Tab::Loading(l) => l,
                Tab::Ready(doc) => match doc.loading.as_mut() {
                    Some(l) => l,
                    None => {
                        i += 1;
                        continue;
                    }
                },
                Tab::Compare(_) | Tab::Job(_) => {
                    i += 1;
                    continue;
                }
            };
            let mut done = None;
            while let Some(msg) = loading.job.take_next() {
                match msg {
                    LoadMessage::Progress(p) => loading.progress = p,
                    LoadMessage::Partial { trace, attempt } => {
                        loading.latest = Some((trace, attempt));
                    }
                    LoadMessage::Done { result, attempt } => done = Some((*result, attempt)),
                }
            }
            match done {
                None => {
                    running = true;
                    self.show_snapshot(i);
                    i += 1;
                }
                Some((Ok(trace), attempt)) => {
                    let trace = crate::app::document::cpu_samples::awaiting_cpu_samples(trace);
                    self.finish_load(i, Arc::new(trace), attempt);
                    // Its CPU samples may be read next.
                    running |= self.tabs[i].is_loading();
                    i += 1;
                }
                Some((Err(e), _)) if self.reads_cpu_samples(i) => {
                    // The report stays open without them.
                    if let Tab::Ready(doc) = &mut self.tabs[i]
                        && let Some(why) = doc.cpu_samples_not_read(e)
                    {
                        self.error = Some(why);
                    }
                    i += 1;
                }
                Some((Err(e), _)) => {
                    // Each failed report is named: opening fifteen files
                    // with five bad ones shows five messages, not the last.
                    self.error = Some(match self.error.take() {
                        Some(earlier) if !earlier.is_empty() => format!("{earlier}\n{e}"),
                        _ => e.to_string(),
                    });
                    self.close_tab_now(i);
                }
            }
        }
        running
    }

    /// Shows tab `i`'s newest snapshot, if its load has run long enough
    /// (see [`SHOW_SNAPSHOTS_AFTER`]).
    pub(crate) fn show_snapshot(&mut self, i: usize) {
        match &mut self.tabs[i] {
            Tab::Loading(l) => {
                if l.began.elapsed() < SHOW_SNAPSHOTS_AFTER {
                    return;
                }
                let Some((trace, attempt)) = l.latest.take() else {
                    return;
                };
                l.shown_attempt = attempt;
                let path = l.job.path.clone();
                let doc = self.new_document(path, trace);
                let old = std::mem::replace(&mut self.tabs[i], Tab::Ready(Box::new(doc)));
                if let (Tab::Ready(doc), Some(l)) = (&mut self.tabs[i], old.loading()) {
                    doc.loading = Some(l);
                }
            }
            Tab::Ready(doc) => {
                let Some((trace, attempt)) = doc.loading.as_mut().and_then(|l| l.latest.take())
                else {
                    return;
                };
                let ids_kept = doc
                    .loading
                    .as_ref()
                    .is_some_and(|l| l.shown_attempt == attempt);
                if let Some(l) = doc.loading.as_mut() {
                    l.shown_attempt = attempt;
                }
                doc.grow(trace, ids_kept);
            }
            Tab::Compare(_) | Tab::Job(_) => {}
        }
    }

    /// Whether tab `i` is reading its report's CPU samples (after its load).
    fn reads_cpu_samples(&self, i: usize) -> bool {
        matches!(&self.tabs[i], Tab::Ready(doc) if doc.reading_cpu_samples())
    }

    /// Tab `i`'s report is read: it opens, or its snapshot becomes the whole
    /// report, keeping what the user did meanwhile; then its CPU samples are
    /// read, where its load left them.
    pub(crate) fn finish_load(&mut self, i: usize, trace: Arc<Trace>, attempt: usize) {
        let path = self.tabs[i].path().to_path_buf();
        self.remember_recent(&path);
        match &mut self.tabs[i] {
            Tab::Ready(doc) => {
                let ids_kept = doc
                    .loading
                    .take()
                    .is_some_and(|l| l.shown_attempt == attempt);
                doc.grow(trace, ids_kept);
            }
            _ => {
                let doc = self.new_document(path, trace);
                self.tabs[i] = Tab::Ready(Box::new(doc));
            }
        }
        if let Tab::Ready(doc) = &mut self.tabs[i] {
            doc.read_cpu_samples_later(attempt);
        }
    }

    /// A tab for a report read from `path`, with the view options and the
    /// rows' state the last session kept for it.
    pub(crate) fn new_document(&self, path: PathBuf, trace: Arc<Trace>) -> Document {
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let mut doc = Document::new(trace, path);
        doc.findings.focus_on_arrival = true;
        // The view toggles apply to every report (rows and zoom do not).
        if let Some(v) = &self.saved_view {
            doc.timeline.view.show_names = v.show_names;
            doc.timeline.view.show_projection = v.show_projection;
            doc.timeline.view.show_idle_why = v.show_idle_why;
        }
        doc.metric_sets.wanted = self.saved_strip.clone();
        // A report's own sets (a capture's counters) are in already.
        if let Some(strip) = doc.metric_sets.restore_strip(&doc.trace) {
            doc.timeline.metrics_strip = Some(strip);
        }
        // Collapsed and hidden rows come back for this report only.
        if let Some(rows) = self.saved_rows.get(&canonical) {
            doc.timeline.view.collapsed = rows.collapsed.clone();
            doc.timeline.view.hidden = rows.hidden.clone();
        }
        doc
    }

    /// Blocks until the open report's search is in, and shows the match it
    /// asked for (tests).
    pub fn wait_for_search(&mut self) {
        if let Some(doc) = self.doc_mut() {
            match doc.search.wait() {
                Some((ev, crate::app::panels::search::Then::Show)) => doc.show_event(ev),
                Some((ev, _)) => doc.reveal_event(ev),
                None => {}
            }
        }
    }

    /// Blocks until the running load finishes (tests).
    pub fn wait_for_load(&mut self) {
        while self.poll_loading() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// File ▸ Open…: the desktop's dialog, or Sightline's browser where there is none.
    pub(crate) fn open_dialog(&mut self) {
        self.ask_file(Purpose::OpenReport);
    }

    /// Asks the desktop's dialog for a file for `purpose` (its answer comes in `poll_dialog`).
    pub(crate) fn ask_file(&mut self, purpose: Purpose) {
        if let Err(e) = self.dialog.ask(purpose) {
            self.error = Some(e);
        }
    }

    pub(crate) fn poll_dialog(&mut self) {
        if let Some(answer) = self.dialog.poll() {
            self.take_answer(answer);
        }
    }

    /// Does what a file dialog (or the browser standing in for it) was asked for.
    pub(crate) fn take_answer(&mut self, answer: Answer) {
        match answer {
            Answer::Chosen(Purpose::OpenReport, files) => {
                files.into_iter().for_each(|f| self.open(f));
            }
            Answer::Chosen(Purpose::OpenJob, files) => self.open_ranks(files, None),
            Answer::Chosen(Purpose::AttachNcu { report }, files) => {
                let doc = self.tabs.iter_mut().find_map(|t| match t {
                    Tab::Ready(d) if d.path == report => Some(d),
                    _ => None,
                });
                match (doc, files.into_iter().next()) {
                    (Some(doc), Some(file)) => {
                        let trace = doc.trace.clone();
                        doc.metric_sets.attach_chosen(&trace, file);
                    }
                    (None, _) => {
                        self.error = Some(format!(
                            "{} is no longer open: nothing to attach the results to",
                            report.display()
                        ));
                    }
                    (Some(_), None) => {}
                }
            }
            Answer::NoDialog(purpose) => self.browse_for(purpose),
            Answer::Cancelled => {}
        }
    }

    /// Sightline's own browser for `purpose`, in the folder of the report it
    /// concerns (or of the report shown, else the current folder).
    pub(crate) fn browse_for(&mut self, purpose: Purpose) {
        let here = match &purpose {
            Purpose::AttachNcu { report } => Some(report.clone()),
            Purpose::OpenReport | Purpose::OpenJob => None,
        }
        .or_else(|| self.doc().map(|d| d.path.clone()))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
        self.browser.show_for(&here, purpose);
    }

    /// The native dialog for a report gave no file after `waited`. Back at
    /// once, there was no dialog (no desktop portal): the in-app browser takes
    /// over. After a while, the user cancelled it, which needs no message.
    pub fn no_file_chosen(&mut self, waited: Duration) {
        let answer = crate::app::widgets::file_dialog::answer(Purpose::OpenReport, None, waited);
        self.take_answer(answer);
    }

    /// The whole window, given the root `Ui` (eframe and tests call this).
    pub fn ui(&mut self, ui: &mut Ui) {
        // Enter with no widget holding the keyboard since the last frame (a
        // text box that loses it to this Enter still held it): the search's
        // "next match", asked again right after a search.
        self.enter_unclaimed =
            ui.ctx().memory(|m| m.focused().is_none()) && ui.input(|i| i.key_pressed(Key::Enter));
        self.take_background_work(ui);
        if !self.prefs_applied {
            self.prefs.apply(ui.ctx());
            self.prefs_applied = true;
        }
        // The zoom in force belongs to the mode of the last pass: remembered
        // before F5 may change the mode (egui applies the new mode's zoom
        // from the next pass only).
        self.prefs.remember_zoom(ui.ctx());
        self.prefs.keys(ui.ctx());
        self.help.ui(ui.ctx());
        self.confirm_close_ui(ui.ctx());
        self.confirm_quit_ui(ui.ctx());
        self.welcome_ui(ui.ctx());
        let presenting = self.prefs.presentation;
        if presenting {
            egui::Panel::top("presentation").show(ui, |ui| self.presentation_bar(ui));
        } else {
            egui::Panel::top("menu").show(ui, |ui| self.menu_bar(ui));
            if !self.tabs.is_empty() {
                egui::Panel::top("tabs").show(ui, |ui| self.tab_bar(ui));
            }
        }
        if self.is_loading()
            || self.error.is_some()
            || self.saving.is_running()
            || self.saved_to.is_some()
            || self.image_export.notice.is_some()
        {
            egui::Panel::top("status").show(ui, |ui| self.status_bar(ui));
        }
        if let Some(view) = self.compare_view_mut() {
            view.ui(ui);
            return;
        }
        if let Some(Tab::Job(view)) = self.tabs.get_mut(self.active) {
            egui::CentralPanel::default().show(ui, |ui| view.ui(ui));
            return;
        }
        let loading_shown = matches!(self.tabs.get(self.active), Some(Tab::Loading(_)));
        if let Some(doc) = self.doc_mut()
            && let Some(live) = doc.live.as_mut()
        {
            let label = doc.path.display().to_string();
            egui::Panel::top("capture").show(ui, |ui| live.bar(ui, &label));
        }
        self.lesson_frame(ui);
        let lesson_open = self.lesson_is_on_shown_tab();
        let exporting = self.image_export.is_capturing();
        let details_panel = self.prefs.details_panel;
        let to_mode = ui.ctx().zoom_factor() / self.prefs.zoom_for(presenting);
        let Some(doc) = self.doc_mut() else {
            egui::CentralPanel::default().show(ui, |ui| {
                ui.centered_and_justified(|ui| {
                    if loading_shown {
                        ui.label("Reading the report…");
                    } else {
                        ui.label("Open an Nsight Systems report exported as SQLite (File > Open, or drop it here).");
                    }
                });
            });
            return;
        };
        doc.open_pending_kernel(ui.ctx());
        // On a projector the details go under the timeline, beside the kernel panel: a third
        // column beside the lesson and the timeline left each a strip (issue 45).
        if presenting {
            Self::dock(doc, ui, details_panel, presenting);
        }
        // The panel keeps its place with or without a selection: opening it
        // on a click would move the timeline under the pointer, and a
        // double-click's second click would land in the panel.
        if details_panel && !presenting {
            // At most 30% of the window: the events keep the most of a small
            // one.
            let share = 0.3;
            // In the pass where F5 toggles the mode, egui still lays out in
            // the old zoom's points (the new zoom applies from the next
            // pass): measure the window in the zoom of the mode now shown,
            // or leaving presentation clamps (and egui stores) the desk width
            // to presentation's narrower window.
            let window = ui.available_width() * to_mode;
            // One remembered width per layout: the cap of presentation mode
            // or of a lesson beside it narrows the panel there only, never
            // the width the user gave it in the ordinary window (egui keeps
            // a panel's clamped width, across restarts too).
            egui::Panel::right(("details", presenting, lesson_open))
                .default_size(380.0)
                .min_size(180.0)
                .max_size((window * share).max(180.0))
                .resizable(true)
                .show(ui, |ui| {
                    // Both ways: a long name scrolls instead of widening the
                    // panel, which would move the timeline under the pointer.
                    egui::ScrollArea::both()
                        .auto_shrink([false, false])
                        .show(ui, |ui| {
                            Self::details_contents(doc, ui);
                        });
                });
        }
        if !presenting {
            Self::dock(doc, ui, false, presenting);
        }
        doc.frame(ui, exporting, presenting);
    }

    /// What came in since the last frame: loads, captures, saves, dialogs, dropped files; a
    /// repaint asked for while any is under way; Ctrl+Q and the window's close button.
    fn take_background_work(&mut self, ui: &mut Ui) {
        let busy = self.poll_loading() | self.poll_captures(Some(ui.ctx())) | self.poll_saving();
        self.poll_dialog();
        let timeline_area = self.doc().and_then(|d| d.export_area);
        if let Some(outcome) = self.image_export.poll(ui.ctx(), timeline_area) {
            self.export_outcome(outcome);
        }
        if let Some(answer) = self.browser.ui(ui.ctx()) {
            self.take_answer(answer);
        }
        if let Some((spec, params, counters)) = self.capture_dialog.ui(ui.ctx()) {
            self.start_capture(spec, params, counters);
        }
        if let Some(doc) = self.doc_mut()
            && doc.stats.poll()
        {
            ui.ctx().request_repaint();
        }
        if busy || self.dialog.is_running() || self.doc().is_some_and(|d| d.stats.is_pending()) {
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        let dropped: Vec<PathBuf> = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .collect()
        });
        match dropped.len() {
            0 => {}
            1 => dropped.into_iter().for_each(|p| self.open(p)),
            _ => self.dropped = dropped,
        }
        self.dropped_ui(ui.ctx());

        if ui.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, Key::Q)) {
            self.quit(ui.ctx());
        }
        self.close_requested(ui.ctx());
    }

    /// The details panel's contents: the selected event (its fields, linked events, an NVTX
    /// range's GPU work and idle time), or the report's overview when nothing is selected.
    fn details_contents(doc: &mut Document, ui: &mut Ui) {
        let Some(sel) = doc.selection().event else {
            crate::app::panels::details::overview(ui, &doc.trace);
            return;
        };
        if let Some(ev) =
            crate::app::panels::details::ui(ui, &doc.trace, sel, &doc.selection().related)
        {
            doc.apply(Command::ShowEvent(ev), ui.ctx());
        }
        if sel.table == Table::Nvtx && ui.button("Aggregate this range").clicked() {
            let (start, end) = (sel.start(&doc.trace), sel.end(&doc.trace));
            doc.apply(Command::SelectRange(TimeRange { start, end }), ui.ctx());
        }
        if sel.table == Table::Nvtx {
            doc.nvtx_gpu.ui(ui, &doc.trace, sel.index);
            let (s, e) = (sel.start(&doc.trace), sel.end(&doc.trace));
            doc.timeline.idle_rows.range_details(ui, &doc.trace, (s, e));
        }
    }

    /// One tab per report: click to show it, "x" to close it.
    pub(crate) fn tab_bar(&mut self, ui: &mut Ui) {
        let mut show = None;
        let mut close = None;
        ui.horizontal_wrapped(|ui| {
            for (i, tab) in self.tabs.iter().enumerate() {
                let title = tab.title();
                // Title and close button are one group, so a wrap never
                // leaves a close button alone at the start of a line; a group
                // is laid out where the cursor is, so the wrap is decided here.
                let title_width = egui::WidgetText::from(title.as_str())
                    .into_galley(
                        ui,
                        Some(egui::TextWrapMode::Extend),
                        f32::INFINITY,
                        egui::TextStyle::Button,
                    )
                    .size()
                    .x;
                let group_width = title_width + 48.0;
                // (available_width() is the whole row's in a wrapping layout.)
                let room = ui.max_rect().right() - ui.cursor().left();
                if i > 0 && group_width > room {
                    ui.end_row();
                }
                ui.horizontal(|ui| {
                    let r = ui
                        .selectable_label(i == self.active, &title)
                        .on_hover_text(tab.path().display().to_string());
                    if r.clicked() {
                        show = Some(i);
                    }
                    let x = ui.small_button("x").on_hover_text("close");
                    let name = format!("Close {title}");
                    x.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &name));
                    if x.clicked() {
                        close = Some(i);
                    }
                    ui.separator();
                });
            }
        });
        if let Some(i) = show {
            self.switch_to(i);
        }
        if let Some(i) = close {
            self.close_tab(i);
        }
    }

    pub(crate) fn menu_bar(&mut self, ui: &mut Ui) {
        let enter_again = self.enter_unclaimed;
        egui::MenuBar::new().ui(ui, |ui| {
            // The path box needs clicks inside the menu: only a click outside
            // closes it (its buttons close it themselves).
            let file_menu = egui::containers::menu::MenuConfig::new()
                .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
            egui::containers::menu::MenuButton::new("File")
                .config(file_menu)
                .ui(ui, |ui| {
                    self.file_menu(ui);
                });
            ui.menu_button("Capture", |ui| {
                self.capture_menu(ui);
            });
            self.lessons.menu(ui);
            // Direct field access: the View menu edits the report shown and
            // the window settings at once.
            let mut doc = match self.tabs.get_mut(self.active) {
                Some(Tab::Ready(d)) => Some(&mut **d),
                _ => None,
            };
            let prefs = &mut self.prefs;
            let (goto_text, goto_error) = (&mut self.goto_text, &mut self.goto_error);
            // The go-to box needs clicks inside the menu (as File's path boxes).
            let view_menu = egui::containers::menu::MenuConfig::new()
                .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
            egui::containers::menu::MenuButton::new("View")
                .config(view_menu)
                .ui(ui, |ui| {
                    prefs.menu(ui);
                    let Some(doc) = doc.as_deref_mut() else {
                        return;
                    };
                    ui.separator();
                    if ui.button("Fit all (Home)").clicked() {
                        doc.timeline.fit_all();
                        ui.close();
                    }
                    if ui.button("Zoom to GPU and NVTX activity (G)").clicked() {
                        doc.timeline.fit_activity(&doc.trace);
                        ui.close();
                    }
                    ui.horizontal(|ui| {
                        let label = ui.label("Go to time:");
                        let r = ui
                            .add(
                                egui::TextEdit::singleline(goto_text)
                                    .hint_text("524.8 ms")
                                    .desired_width(120.0),
                            )
                            .labelled_by(label.id)
                            .on_hover_text(
                                "session time, as on the ruler; Enter centers the view there",
                            );
                        if r.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
                            match crate::app::widgets::format::parse_time(goto_text) {
                                Ok(t) => {
                                    *goto_error = None;
                                    doc.timeline.go_to(t);
                                }
                                Err(e) => *goto_error = Some(e),
                            }
                        }
                    });
                    if let Some(e) = goto_error {
                        ui.colored_label(Color32::LIGHT_RED, e.as_str());
                    }
                    if ui.button("Back (Backspace)").clicked() {
                        doc.timeline.back();
                        ui.close();
                    }
                    ui.checkbox(&mut doc.timeline.view.show_names, "Names inside events");
                    ui.checkbox(
                        &mut doc.timeline.view.show_projection,
                        "NVTX ranges on GPU (projection rows)",
                    );
                    doc.metric_sets
                        .strip_menu(ui, &doc.trace, &mut doc.timeline.metrics_strip);
                    ui.checkbox(
                        &mut doc.timeline.view.show_idle_why,
                        "GPU idle — why (a row under each GPU)",
                    );
                    if ui.button("Expand all rows").clicked() {
                        doc.timeline.view.collapsed.clear();
                        ui.close();
                    }
                    if ui
                        .button(format!(
                            "Show hidden rows ({})",
                            doc.timeline.view.hidden.len()
                        ))
                        .clicked()
                    {
                        doc.timeline.view.hidden.clear();
                        ui.close();
                    }
                    if ui.button("Clear range").clicked() {
                        doc.clear_range();
                        ui.close();
                    }
                });
            let help = &mut self.help;
            ui.menu_button("Help", |ui| {
                if ui.button("Keys and mouse (F1)").clicked() {
                    help.open = true;
                    ui.close();
                }
            });
            let Some(doc) = doc else { return };
            Self::search_bar(doc, ui, enter_again);
        });
    }

    /// The File menu: open (dialog, browser, path, recent), compare, attach metrics, save as,
    /// export an image, quit.
    fn file_menu(&mut self, ui: &mut Ui) {
        if ui.button("Open…").clicked() {
            self.open_dialog();
            ui.close();
        }
        if ui
            .button("Browse…")
            .on_hover_text("Sightline's own file browser (when the desktop has no file dialog)")
            .clicked()
        {
            self.browse_for(Purpose::OpenReport);
            ui.close();
        }
        ui.horizontal(|ui| {
            let label = ui.label("Open path:");
            let r = select_all_on_focus(ui, &mut self.open_path).labelled_by(label.id);
            if r.lost_focus()
                && ui.input(|i| i.key_pressed(Key::Enter))
                && !self.open_path.trim().is_empty()
            {
                // The box starts empty next time: a path typed then is
                // the whole path, not this one with letters added.
                let p = PathBuf::from(std::mem::take(&mut self.open_path).trim());
                self.open(p);
                ui.close();
            }
        });
        ui.separator();
        ui.label(RichText::new("Recent").weak());
        let mut chosen = None;
        for p in &self.recent {
            if ui.button(p.display().to_string()).clicked() {
                chosen = Some(p.clone());
            }
        }
        if let Some(p) = chosen {
            self.open(p);
            ui.close();
        }
        self.compare_menu(ui);
        self.ranks_menu(ui);
        ui.separator();
        let mut attach_to = None;
        if let Some(Tab::Ready(doc)) = self.tabs.get_mut(self.active) {
            // Joined to a snapshot, the results would go with
            // the next one: attached once the report is whole.
            let trace = doc.trace.clone();
            let asked = ui.add_enabled_ui(!doc.is_loading(), |ui| doc.metric_sets.menu(ui, &trace));
            asked
                .response
                .on_disabled_hover_text("the report is still being read");
            if asked.inner {
                attach_to = Some(doc.path.clone());
            }
            ui.separator();
        }
        if let Some(report) = attach_to {
            self.ask_file(Purpose::AttachNcu { report });
        }
        ui.horizontal(|ui| {
            let label = ui.label("Save as:");
            let r = ui
                .text_edit_singleline(&mut self.save_path)
                .labelled_by(label.id)
                .on_hover_text("an nsys SQLite report (Enter saves)");
            if r.lost_focus()
                && ui.input(|i| i.key_pressed(Key::Enter))
                && !self.save_path.trim().is_empty()
            {
                let p = PathBuf::from(self.save_path.trim());
                self.save_as(p);
                ui.close();
            }
        });
        let report = self.doc().map(|d| d.path.clone());
        self.image_export.menu(ui, report.as_deref());
        ui.separator();
        if ui.button("Quit (Ctrl+Q)").clicked() {
            self.quit(ui.ctx());
        }
    }

    /// The Capture menu: a new capture or replay, and stopping the one shown.
    fn capture_menu(&mut self, ui: &mut Ui) {
        if ui.button("New capture…").clicked() {
            self.capture_dialog.show();
            ui.close();
        }
        let replayable = self
            .doc()
            .filter(|d| d.live.is_none() && d.path.is_file())
            .map(|d| d.path.clone());
        for (label, speed) in [
            ("Replay this report", 1.0),
            ("Replay this report ×10", 10.0),
        ] {
            let button = ui.add_enabled(replayable.is_some(), egui::Button::new(label));
            if button.clicked()
                && let Some(path) = replayable.clone()
            {
                self.start_replay(path, speed);
                ui.close();
            }
        }
        let running = self
            .doc()
            .and_then(|d| d.live.as_ref())
            .is_some_and(Live::is_running);
        if ui
            .add_enabled(running, egui::Button::new("Stop capture"))
            .clicked()
        {
            if let Some(live) = self.doc().and_then(|d| d.live.as_ref()) {
                live.stop();
            }
            ui.close();
        }
    }

    /// The search box, its arrows and count, then the findings' and notes' badges and the
    /// loader's warnings, from the right edge (left out where the window is too narrow).
    /// `enter_again`: Enter was pressed with no widget holding the keyboard: after a search, the
    /// next match (Shift: the previous).
    fn search_bar(doc: &mut Document, ui: &mut Ui, enter_again: bool) {
        ui.separator();
        let search_label = ui.label("Search");
        // The box gives way first when the window is narrow.
        let box_width = (ui.available_width() * 0.3).clamp(90.0, 220.0);
        let search = ui
            .add(
                egui::TextEdit::singleline(&mut doc.search.query)
                    .hint_text("Search events (Ctrl+F or /)")
                    .desired_width(box_width),
            )
            .labelled_by(search_label.id);
        // Ctrl+F, or / when no text field has the keyboard, goes to the box.
        let typing = ui.ctx().egui_wants_keyboard_input();
        if ui.input_mut(|i| {
            i.consume_key(egui::Modifiers::COMMAND, Key::F)
                || (!typing && i.consume_key(egui::Modifiers::NONE, Key::Slash))
        }) {
            search.request_focus();
        }
        let enter = search.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
        // An error is about the query that was run: editing it (or
        // clearing the box) takes the error away.
        if search.changed() {
            doc.search.error = None;
        }
        ui.checkbox(&mut doc.search.regex, "regex");
        let mut step = None;
        // Enter leaves the keys to the timeline (W/A/S/D right after a
        // search must zoom and pan, not type); Ctrl+F comes back.
        if enter {
            step = Some(true);
        } else if enter_again && !doc.search.matches.is_empty() && !doc.search.is_stale() {
            step = Some(!ui.input(|i| i.modifiers.shift));
        }
        if ui.button("<").on_hover_text("previous match").clicked() {
            step = Some(false);
        }
        if ui.button(">").on_hover_text("next match").clicked() {
            step = Some(true);
        }
        // The matches are looked for on a worker (10M events take longer
        // than a frame); the step happens when they are in.
        if let Some(fwd) = step {
            let rerun = doc.search.is_stale()
                || (enter && doc.search.matches.is_empty())
                || doc.search.is_searching();
            if rerun {
                let repaint = Some(ui.ctx().clone());
                doc.search.start(
                    &doc.trace,
                    repaint,
                    crate::app::panels::search::Then::Reveal(fwd),
                );
            } else if let Some(ev) = doc.search.step(fwd) {
                doc.reveal_event(ev);
            }
        }
        doc.take_search();
        if doc.search.is_searching() {
            ui.spinner();
            ui.weak("searching…");
        } else if let Some(e) = &doc.search.error {
            // One short line in the bar (a regex error spans lines and
            // would spill into the tabs); the whole message on hover.
            let first = e.lines().next().unwrap_or_default();
            let short = if first.starts_with("bad regex") {
                "bad regex"
            } else {
                first
            };
            ui.colored_label(
                Color32::LIGHT_RED,
                crate::app::widgets::format::clip(short, 40),
            )
            .on_hover_text(e);
        } else if !doc.search.matches.is_empty() && !doc.search.is_stale() {
            let cur = doc.search.current.map_or(0, |c| c + 1);
            let more = if doc.search.truncated { "+" } else { "" };
            ui.label(format!("{cur}/{}{more} matches", doc.search.matches.len()));
        }
        // Laid out from the right edge: with too little room it would run
        // over the search arrows, so below that width it is left out
        // (the badge is in the Findings panel; counts in the details).
        if ui.available_width() < 150.0 {
            return;
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            doc.findings.badge(ui);
            doc.notes.badge(ui);
            crate::app::panels::warnings::badge(ui, &doc.trace);
        });
    }

    /// Presentation mode's only chrome: the report's name, the findings badge
    /// and the way out.
    pub(crate) fn presentation_bar(&mut self, ui: &mut Ui) {
        let title = self
            .tabs
            .get(self.active)
            .map(Tab::title)
            .unwrap_or_default();
        let mut exit = false;
        ui.horizontal(|ui| {
            ui.strong(title);
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                exit = ui.button("Exit presentation (F5)").clicked();
                if let Some(Tab::Ready(doc)) = self.tabs.get_mut(self.active) {
                    doc.findings.badge(ui);
                }
            });
        });
        if exit {
            self.prefs.set_presentation(ui.ctx(), false);
        }
    }

    pub(crate) fn status_bar(&mut self, ui: &mut Ui) {
        let mut cancel = None;
        for (i, tab) in self.tabs.iter().enumerate() {
            let (l, shown) = match tab {
                Tab::Loading(l) => (l, None),
                Tab::Ready(d) => match &d.loading {
                    Some(l) => (l, Some(&d.trace)),
                    None => continue,
                },
                Tab::Compare(_) | Tab::Job(_) => continue,
            };
            ui.horizontal(|ui| {
                ui.label(format!("Loading {}:", l.job.path.display()));
                ui.add(
                    egui::ProgressBar::new(l.progress.fraction)
                        .text(format!(
                            "{} {:.0}%",
                            l.progress.phase,
                            l.progress.fraction * 100.0
                        ))
                        .desired_width(400.0),
                );
                if ui.button("Cancel").clicked() {
                    cancel = Some(i);
                }
                // What the timeline and the summaries do not show yet.
                if let Some(trace) = shown {
                    ui.weak(format!(
                        "shown so far; still to come: {}",
                        trace.info.still_loading.join(", ")
                    ));
                }
            });
        }
        match cancel {
            // Only the samples' reading stops: the report stays open without them.
            Some(i) if self.reads_cpu_samples(i) => {
                if let Tab::Ready(doc) = &self.tabs[i]
                    && let Some(l) = &doc.loading
                {
                    l.job.cancel();
                }
            }
            Some(i) => self.close_tab(i),
            None => {}
        }
        if self.saving.is_running() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Saving…");
            });
        }
        let mut dismiss_saved = false;
        if let Some(p) = &self.saved_to {
            ui.horizontal(|ui| {
                ui.label(format!("Saved {}", p.display()));
                dismiss_saved = ui.button("OK").clicked();
            });
        }
        if dismiss_saved {
            self.saved_to = None;
        }
        self.image_export.status(ui);
        let mut dismiss = false;
        if let Some(e) = &self.error {
            ui.horizontal(|ui| {
                ui.colored_label(Color32::from_rgb(255, 110, 90), format!("Error: {e}"));
                dismiss = ui.button("Dismiss").clicked();
            });
        }
        if dismiss {
            self.error = None;
        }
    }
}

impl eframe::App for SightlineApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        SightlineApp::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        let mut rows = self.saved_rows.clone();
        for doc in self.docs().filter(|d| d.live.is_none()) {
            let path = std::fs::canonicalize(&doc.path).unwrap_or_else(|_| doc.path.clone());
            let view = &doc.timeline.view;
            rows.insert(
                path,
                RowState {
                    collapsed: view.collapsed.clone(),
                    hidden: view.hidden.clone(),
                },
            );
        }
        let saved = Saved {
            recent: self.recent.clone(),
            view: self
                .doc()
                .map(|d| d.timeline.view.clone())
                .or_else(|| self.saved_view.clone()),
            rows,
            // The shown report's strip, where it has metrics to choose from.
            strip: self
                .doc()
                .filter(|d| !d.metric_sets.sets.is_empty() || d.metric_sets.wanted.is_some())
                .map_or_else(|| self.saved_strip.clone(), |d| d.metric_sets.choice()),
            welcomed: !self.welcome,
            prefs: self.prefs.clone(),
            // Reports on disk only: a capture that was never saved has no
            // file to reopen.
            tabs: self
                .tabs
                .iter()
                .filter(|t| match t {
                    Tab::Ready(d) => d.live.is_none(),
                    Tab::Loading(_) => true,
                    Tab::Compare(_) | Tab::Job(_) => false,
                })
                .map(|t| std::fs::canonicalize(t.path()).unwrap_or_else(|_| t.path().to_path_buf()))
                .collect(),
            shown: self.tabs.get(self.active).map(|t| {
                std::fs::canonicalize(t.path()).unwrap_or_else(|_| t.path().to_path_buf())
            }),
        };
        eframe::set_value(storage, STORAGE_KEY, &saved);
    }

    /// The last chance to write notes, however the window ends (a quit asked in the window
    /// wrote them already, or asked).
    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.save_all_notes();
    }
}

/// A one-line text box whose text is selected whenever it gets the keyboard,
/// so that typing replaces what an earlier visit left there.
fn select_all_on_focus(ui: &mut Ui, text: &mut String) -> egui::Response {
    let mut out = egui::TextEdit::singleline(text).show(ui);
    if out.response.gained_focus() {
        let all = egui::text::CCursorRange::select_all(&out.galley);
        out.state.cursor.set_char_range(Some(all));
        out.state.store(ui.ctx(), out.response.id);
    }
    out.response.response
}

/// Opens the window with the app that `setup` prepares (tabs to open, a replay to start).
pub(crate) fn launch(setup: impl FnOnce(&mut SightlineApp) + 'static) -> Result<(), String> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("Sightline")
            .with_inner_size([1600.0, 1000.0])
            .with_min_inner_size([800.0, 500.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "Sightline",
        options,
        Box::new(move |cc| {
            let mut app = SightlineApp::restore(cc.storage);
            setup(&mut app);
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| e.to_string())
}
