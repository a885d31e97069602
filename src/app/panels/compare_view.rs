//! Two reports compared in the window: one above the other, each in its own
//! timeline but on one time axis, and under them the diff table.
//!
//! The axis is "nanoseconds from the alignment point": each report has an
//! offset (the session time that sits at axis 0) — its first event, or the
//! Nth instance of an NVTX range both reports have. Zooming or panning either
//! timeline moves the axis, and the other follows through its own offset.
//!
//! The table is `analysis::compare`, the computation `sightline diff` prints,
//! run on a worker; its cells are the CLI's cells with thousands separators.
//! A row's instances come from `compare::instances`, which counts exactly what
//! the row's numbers count.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use eframe::egui::{self, Color32, Key, Rect, RichText, Ui, vec2};

use crate::analysis::compare::{self, COLUMNS, Diff, DiffKey, DiffReport, NvtxAnchor};
use crate::analysis::stats::{Cell, Table};
use crate::app::job::Job;
use crate::app::state::command::Command;
use crate::app::state::events::EventRef;
use crate::app::state::selection::Selection;
use crate::app::timeline::Timeline;
use crate::app::timeline::{Anchor, Overlay};
use crate::app::widgets::cells;
use crate::app::widgets::format::{self, file_name};
use crate::loader::{LoadJob, LoadMessage, Progress};
use crate::model::Trace;

/// Which of the two reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::A, Side::B];

    pub fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }

    pub fn letter(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }

    pub(crate) fn color(self) -> Color32 {
        match self {
            Side::A => Color32::from_rgb(110, 170, 255),
            Side::B => Color32::from_rgb(255, 170, 90),
        }
    }
}

/// An event of one of the two reports: an `EventRef` alone would not say
/// whose table its index is in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SideEvent {
    pub side: Side,
    pub event: EventRef,
}

/// What lines the two reports up on the axis.
#[derive(Clone, Debug, PartialEq)]
pub enum Alignment {
    /// Each report's first event at axis 0.
    Starts,
    /// The `instance`-th (0-based, by start) NVTX range of this name (in
    /// any domain) at axis 0 in both reports.
    Nvtx { name: String, instance: usize },
}

/// Where a report comes from: a tab already open, or a file read for the view.
pub enum Source {
    Open(PathBuf, Arc<Trace>),
    File(PathBuf),
}

/// One report in the view.
pub struct Half {
    pub path: PathBuf,
    pub trace: Arc<Trace>,
    pub timeline: Timeline,
    /// This report's selection: a compared half is its own small document.
    pub selection: Selection,
    /// The session time of this report at axis 0.
    pub offset: f64,
    /// The instances of the diff row clicked last, by start.
    pub instances: Vec<EventRef>,
    /// Position in `instances` of the one shown.
    pub current: Option<usize>,
    /// Where the timeline was drawn in the last frame.
    pub rect: Rect,
}

impl Half {
    pub(crate) fn new(path: PathBuf, trace: Arc<Trace>) -> Self {
        let timeline = Timeline::new(&trace);
        let offset = trace.info.time_range.0 as f64;
        Half {
            path,
            trace,
            timeline,
            selection: Selection::default(),
            offset,
            instances: Vec::new(),
            current: None,
            rect: Rect::NOTHING,
        }
    }

    pub fn file_name(&self) -> String {
        file_name(&self.path)
    }

    /// Selects `ev` (or nothing) and keeps its row on screen.
    pub(crate) fn select(&mut self, ev: Option<EventRef>) {
        self.selection.set_event(&self.trace, ev);
        self.timeline.reveal_selection();
    }

    /// Does what this half's timeline asked of its selection.
    fn apply(&mut self, command: Command) {
        match command {
            Command::Select(ev) => self.select(ev),
            Command::SelectRange(r) => self.selection.range = Some(r),
            Command::ClearRange => self.selection.range = None,
            Command::ClearSelection => {
                self.select(None);
                self.selection.range = None;
            }
            // The timeline asks nothing else.
            _ => {}
        }
    }

    /// The report's own span on the axis.
    pub(crate) fn axis_limits(&self) -> (f64, f64) {
        let (lo, hi) = self.timeline.limits();
        (lo - self.offset, hi - self.offset)
    }

    /// Shows axis span `(start, end)` in this report's clock.
    pub(crate) fn set_axis(&mut self, (start, end): (f64, f64)) {
        self.timeline
            .view
            .set(start + self.offset, end + self.offset);
        self.timeline.ruler_origin = Some(self.offset);
    }

    /// The axis span the timeline shows now.
    pub(crate) fn axis(&self) -> (f64, f64) {
        let v = &self.timeline.view;
        (v.start - self.offset, v.end - self.offset)
    }
}

pub(crate) enum Slot {
    Loading { job: LoadJob, progress: Progress },
    Ready(Box<Half>),
    Failed(String),
}

impl Slot {
    pub(crate) fn from_source(source: Source) -> Slot {
        match source {
            Source::Open(path, trace) => Slot::Ready(Box::new(Half::new(path, trace))),
            Source::File(path) => Slot::Loading {
                job: LoadJob::spawn(path, crate::loader::LoadOptions::WITHOUT_CPU_SAMPLING),
                progress: Progress {
                    phase: "opening",
                    fraction: 0.0,
                },
            },
        }
    }

    pub(crate) fn path(&self) -> Option<&Path> {
        match self {
            Slot::Loading { job, .. } => Some(&job.path),
            Slot::Ready(h) => Some(&h.path),
            Slot::Failed(_) => None,
        }
    }

    /// Takes loader messages; true when it finished (either way).
    pub(crate) fn poll(&mut self) -> bool {
        let Slot::Loading { job, progress } = self else {
            return false;
        };
        let mut done = None;
        while let Some(message) = job.take_next() {
            match message {
                LoadMessage::Progress(p) => *progress = p,
                LoadMessage::Done { result, .. } => done = Some(*result),
                // A comparison needs both reports whole.
                LoadMessage::Partial { .. } => {}
            }
        }
        // The loader ended without a result (it panicked).
        let gone = done.is_none() && !job.job.is_running();
        if done.is_none() && gone {
            *self = Slot::Failed(format!("reading {} stopped", job.path.display()));
            return true;
        }
        match done {
            None => false,
            Some(Ok(trace)) => {
                let path = job.path.clone();
                *self = Slot::Ready(Box::new(Half::new(path, Arc::new(trace))));
                true
            }
            Some(Err(e)) => {
                *self = Slot::Failed(e.to_string());
                true
            }
        }
    }
}

/// A diff section as the table shows it: the computation, and its cells as
/// `sightline diff` prints them.
pub(crate) struct Section {
    pub(crate) diff: Diff,
    pub(crate) table: Table,
    /// The table's cells as shown (see [`shown`]), made once.
    pub(crate) cells: Vec<Vec<String>>,
}

/// The short tab names of the table's sections (each followed by its row
/// count in the tab: "Kernels (12)").
pub fn section_label(report: DiffReport) -> &'static str {
    match report {
        DiffReport::Kernels => "Kernels",
        DiffReport::Api => "CUDA API",
        DiffReport::Nvtx => "NVTX",
        DiffReport::Memcpy => "Copies & sets",
    }
}

/// Two reports on one axis, and their diff.
pub struct CompareView {
    pub(crate) slots: [Slot; 2],
    pub align: Alignment,
    /// The visible span of the axis, ns from the alignment point.
    pub axis: (f64, f64),
    /// The axis was fitted once both reports arrived.
    pub(crate) fitted: bool,
    pub(crate) sections: Vec<Section>,
    /// The NVTX range names both reports have (what they can be aligned on).
    pub anchors: Vec<NvtxAnchor>,
    /// The diff, one section at a time.
    pub(crate) job: Job<Computed>,
    /// The section shown.
    pub section: DiffReport,
    /// Column and descending; `None` keeps the CLI's order.
    pub(crate) sort: Option<(usize, bool)>,
    /// The row clicked last.
    pub active: Option<(DiffReport, DiffKey)>,
    /// The event shown in the details panel.
    pub selected: Option<SideEvent>,
    /// The rows of the section drawn in the last frame, cell texts as shown.
    pub drawn_rows: Vec<Vec<String>>,
    /// How many of the diff table's rows were on screen in the last frame.
    pub rows_visible: usize,
    /// A report that could not be read, or the diff worker not starting.
    pub error: Option<String>,
    /// The last alignment asked for could not be made.
    pub(crate) align_error: Option<String>,
}

impl Drop for CompareView {
    fn drop(&mut self) {
        for slot in &self.slots {
            if let Slot::Loading { job, .. } = slot {
                job.cancel();
            }
        }
    }
}

impl CompareView {
    /// Takes the view apart as its tab closes: its jobs are cancelled as
    /// the rest drops here; returned are what its two reports hold (their
    /// events and timelines), which a caller frees elsewhere.
    pub fn into_reports(mut self) -> Vec<(Arc<Trace>, Timeline)> {
        self.slots
            .iter_mut()
            .map(|slot| std::mem::replace(slot, Slot::Failed(String::new())))
            .filter_map(|slot| match slot {
                Slot::Ready(half) => {
                    let Half {
                        trace, timeline, ..
                    } = *half;
                    Some((trace, timeline))
                }
                Slot::Loading { job, .. } => {
                    job.cancel();
                    None
                }
                Slot::Failed(_) => None,
            })
            .collect()
    }
}

impl CompareView {
    pub fn new(a: Source, b: Source) -> Self {
        let mut view = CompareView {
            slots: [Slot::from_source(a), Slot::from_source(b)],
            align: Alignment::Starts,
            axis: (0.0, 1.0),
            fitted: false,
            sections: Vec::new(),
            anchors: Vec::new(),
            job: Job::default(),
            section: DiffReport::Kernels,
            sort: None,
            active: None,
            selected: None,
            drawn_rows: Vec::new(),
            rows_visible: 0,
            error: None,
            align_error: None,
        };
        view.poll();
        view
    }

    /// "a.sqlite vs b.sqlite", for the tab.
    pub fn title(&self) -> String {
        let name = |s: &Slot| s.path().map_or_else(|| "?".into(), file_name);
        let mut title = format!("{} vs {}", name(&self.slots[0]), name(&self.slots[1]));
        let loading: Vec<f32> = self
            .slots
            .iter()
            .filter_map(|s| match s {
                Slot::Loading { progress, .. } => Some(progress.fraction),
                _ => None,
            })
            .collect();
        if !loading.is_empty() {
            let f = loading.iter().sum::<f32>() / loading.len() as f32;
            title.push_str(&format!(" ({:.0}%)", f * 100.0));
        }
        title
    }

    /// Report A's path (what the tab says on hover).
    pub fn path(&self) -> &Path {
        self.slots[0].path().unwrap_or(Path::new(""))
    }

    pub fn half(&self, side: Side) -> Option<&Half> {
        match &self.slots[side.index()] {
            Slot::Ready(h) => Some(h),
            _ => None,
        }
    }

    pub fn half_mut(&mut self, side: Side) -> Option<&mut Half> {
        match &mut self.slots[side.index()] {
            Slot::Ready(h) => Some(h),
            _ => None,
        }
    }

    pub(crate) fn halves_mut(&mut self) -> Option<(&mut Half, &mut Half)> {
        match &mut self.slots {
            [Slot::Ready(a), Slot::Ready(b)] => Some((a, b)),
            _ => None,
        }
    }

    /// The computed diff of `report`, once the worker has sent it.
    pub fn diff(&self, report: DiffReport) -> Option<&Diff> {
        self.sections
            .iter()
            .find(|s| s.diff.report == report)
            .map(|s| &s.diff)
    }

    /// True while a report is being read or the diff computed.
    pub fn is_pending(&self) -> bool {
        self.job.is_running() || self.slots.iter().any(|s| matches!(s, Slot::Loading { .. }))
    }

    /// Takes loads and diff sections that finished; true when something changed.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        for slot in &mut self.slots {
            changed |= slot.poll();
        }
        for slot in &self.slots {
            if let Slot::Failed(e) = slot
                && self.error.is_none()
            {
                self.error = Some(e.clone());
            }
        }
        if !self.job.is_running()
            && self.sections.is_empty()
            && self.error.is_none()
            && let [Slot::Ready(a), Slot::Ready(b)] = &self.slots
        {
            let (a, b) = (a.trace.clone(), b.trace.clone());
            if !self
                .job
                .start_stream("sightline-diff", None, move |_, emit| {
                    diff_sections(&a, &b, &|c| emit.send(c))
                })
            {
                self.error = Some("cannot start the diff worker".into());
            }
        }
        while let Some(computed) = self.job.take_next() {
            match computed {
                Computed::Anchors(anchors) => self.anchors = anchors,
                Computed::Section(diff) => {
                    let table = diff.to_table();
                    let cells = table
                        .rows
                        .iter()
                        .map(|row| row.iter().map(shown).collect())
                        .collect();
                    self.sections.push(Section { diff, table, cells });
                }
            }
            changed = true;
        }
        if !self.fitted && self.halves_mut().is_some() {
            self.fitted = true;
            self.fit();
        }
        changed
    }

    /// Blocks until both reports are read and the diff is computed (tests).
    pub fn wait(&mut self) {
        while self.is_pending() && self.error.is_none() {
            self.poll();
            std::thread::sleep(Duration::from_millis(5));
        }
        self.poll();
    }

    /// Shows both reports whole on the axis.
    pub fn fit(&mut self) {
        let Some((a, b)) = self.halves_mut() else {
            return;
        };
        let (la, lb) = (a.axis_limits(), b.axis_limits());
        let (lo, hi) = (la.0.min(lb.0), la.1.max(lb.1));
        self.set_axis((lo, hi));
    }

    /// Shows axis span `(start, end)` in both timelines.
    pub fn set_axis(&mut self, (start, end): (f64, f64)) {
        self.axis = (
            start,
            end.max(start + crate::app::timeline::view::MIN_SPAN_NS),
        );
        let axis = self.axis;
        if let Some((a, b)) = self.halves_mut() {
            a.set_axis(axis);
            b.set_axis(axis);
        }
    }

    /// Lines the reports up; an NVTX instance missing on a side is an error
    /// (shown), and the alignment stays as it was.
    pub fn align_on(&mut self, align: Alignment) -> Result<(), String> {
        let Some((a, b)) = self.halves_mut() else {
            return Err("the reports are still being read".into());
        };
        let offsets = match &align {
            Alignment::Starts => (
                a.trace.info.time_range.0 as f64,
                b.trace.info.time_range.0 as f64,
            ),
            Alignment::Nvtx { name, instance } => {
                match (
                    nth_range(&a.trace, name, *instance),
                    nth_range(&b.trace, name, *instance),
                ) {
                    (Some(x), Some(y)) => (x.start(&a.trace) as f64, y.start(&b.trace) as f64),
                    _ => {
                        return Err(format!(
                            "{name} has no instance #{} in both reports",
                            instance + 1
                        ));
                    }
                }
            }
        };
        a.offset = offsets.0;
        b.offset = offsets.1;
        // The aligned range (or the first event) is marked on both rulers.
        for (h, at) in [(a, offsets.0), (b, offsets.1)] {
            let marks = match &align {
                Alignment::Starts => Vec::new(),
                Alignment::Nvtx { name, instance } => nth_range(&h.trace, name, *instance)
                    .map(|ev| {
                        vec![Overlay {
                            start: at as i64,
                            end: ev.end(&h.trace),
                            anchor: Anchor::Ruler,
                            color: Color32::from_rgb(120, 220, 140),
                            label: format!("aligned: {name} #{}", instance + 1),
                            source: "compare",
                        }]
                    })
                    .unwrap_or_default(),
            };
            h.timeline.set_overlays("compare", marks);
        }
        let keep_zoom = self.align == align;
        self.align = align;
        match &self.align {
            Alignment::Starts if !keep_zoom => self.fit(),
            Alignment::Nvtx { name, instance } if !keep_zoom => {
                // Show the aligned range of both, with room around it.
                let mut longest = 0.0f64;
                for side in Side::BOTH {
                    if let Some(h) = self.half(side)
                        && let Some(ev) = nth_range(&h.trace, name, *instance)
                    {
                        longest = longest.max((ev.end(&h.trace) - ev.start(&h.trace)) as f64);
                    }
                }
                let span = (longest * 1.5).max(20_000.0);
                self.set_axis((-span * 0.15, span * 0.85));
            }
            _ => {
                let axis = self.axis;
                self.set_axis(axis);
            }
        }
        Ok(())
    }

    /// A diff row was clicked: the first time, outline every instance of it in
    /// both reports and show the first of each; again, the next of each.
    pub fn show_row(&mut self, report: DiffReport, key: &DiffKey) {
        let same = self
            .active
            .as_ref()
            .is_some_and(|(r, k)| *r == report && k == key);
        if !same {
            self.active = Some((report, key.clone()));
            for side in Side::BOTH {
                if let Some(h) = self.half_mut(side) {
                    let found = compare::instances(&h.trace, report, key, None);
                    h.instances = found.events.into_iter().map(EventRef::from).collect();
                    h.current = None;
                    h.timeline.highlight = found.names;
                }
            }
        }
        let mut span: Option<(f64, f64)> = None;
        let mut first_selected = None;
        for side in Side::BOTH {
            let Some(h) = self.half_mut(side) else {
                continue;
            };
            let n = h.instances.len();
            if n == 0 {
                h.select(None);
                continue;
            }
            let next = h.current.map_or(0, |c| (c + 1) % n);
            h.current = Some(next);
            let ev = h.instances[next];
            h.select(Some(ev));
            let (s, e) = (
                ev.start(&h.trace) as f64 - h.offset,
                ev.end(&h.trace) as f64 - h.offset,
            );
            span = Some(span.map_or((s, e), |(lo, hi)| (lo.min(s), hi.max(e))));
            first_selected.get_or_insert(SideEvent { side, event: ev });
        }
        self.selected = first_selected;
        if let Some((lo, hi)) = span {
            // The instances fill a third of the width, a third of the way in:
            // context on both sides, as search shows its matches.
            let width = ((hi - lo) * 3.0).max(20_000.0);
            self.set_axis((lo - width / 3.0, lo - width / 3.0 + width));
        }
    }

    /// Selects `ev` of `side` and brings it to the middle of the axis.
    pub fn show_event(&mut self, side: Side, ev: EventRef) {
        let Some(h) = self.half_mut(side) else { return };
        h.select(Some(ev));
        let (s, e) = (
            ev.start(&h.trace) as f64 - h.offset,
            ev.end(&h.trace) as f64 - h.offset,
        );
        self.selected = Some(SideEvent { side, event: ev });
        let pad = ((e - s) * 0.1).max(50.0);
        self.set_axis((s - pad, e + pad));
    }

    /// The whole view, in the app's central area.
    pub fn ui(&mut self, ui: &mut Ui) {
        if self.poll() {
            ui.ctx().request_repaint();
        }
        if self.is_pending() {
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        egui::Panel::top("compare_bar").show(ui, |ui| self.bar(ui));
        if self.halves_mut().is_none() {
            egui::CentralPanel::default().show(ui, |ui| self.loading_ui(ui));
            return;
        }
        // A share of the window, not a fixed height: the diff is what a
        // comparison is read for; the divider moves it.
        let height = ui.available_height();
        egui::Panel::bottom("compare_diff")
            .default_size(height * 0.45)
            .min_size(120.0)
            .max_size(height * 0.8)
            .resizable(true)
            .show(ui, |ui| self.table_ui(ui));
        if let Some(sel) = self.selected {
            egui::Panel::right("compare_details")
                .default_size(380.0)
                .min_size(300.0)
                .resizable(true)
                .show(ui, |ui| self.details_ui(ui, sel));
        }
        egui::CentralPanel::default().show(ui, |ui| self.halves_ui(ui));
    }

    pub(crate) fn loading_ui(&mut self, ui: &mut Ui) {
        for (side, slot) in Side::BOTH.iter().zip(&self.slots) {
            ui.horizontal(|ui| {
                ui.label(RichText::new(side.letter()).strong().color(side.color()));
                match slot {
                    Slot::Loading { job, progress } => {
                        ui.label(format!("Reading {}", job.path.display()));
                        ui.add(
                            egui::ProgressBar::new(progress.fraction)
                                .text(format!(
                                    "{} {:.0}%",
                                    progress.phase,
                                    progress.fraction * 100.0
                                ))
                                .desired_width(300.0),
                        );
                    }
                    Slot::Ready(h) => {
                        ui.label(format!("{} read", h.file_name()));
                    }
                    Slot::Failed(e) => {
                        ui.colored_label(Color32::from_rgb(255, 110, 90), e);
                    }
                }
            });
        }
    }

    /// Names of both reports, the alignment, and the diff's progress.
    pub(crate) fn bar(&mut self, ui: &mut Ui) {
        let mut align = None;
        let mut fit = false;
        ui.horizontal(|ui| {
            ui.strong("Compare");
            for side in Side::BOTH {
                let name = self.slots[side.index()]
                    .path()
                    .map_or_else(|| "?".into(), file_name);
                ui.label(RichText::new(side.letter()).strong().color(side.color()));
                ui.label(name);
            }
            ui.separator();
            let current = match &self.align {
                Alignment::Starts => "first events".to_string(),
                Alignment::Nvtx { name, .. } => name.clone(),
            };
            let label = ui.label("Align on");
            egui::ComboBox::from_id_salt("compare_align")
                .selected_text(format::clip(&current, 60))
                .width(260.0)
                .show_ui(ui, |ui| {
                    if ui
                        .selectable_label(self.align == Alignment::Starts, "first events")
                        .on_hover_text("each report's first event at 0")
                        .clicked()
                    {
                        align = Some(Alignment::Starts);
                    }
                    if self.anchors.is_empty() {
                        ui.weak("no NVTX range name is in both reports");
                    }
                    for anchor in &self.anchors {
                        let name = &anchor.name;
                        let chosen =
                            matches!(&self.align, Alignment::Nvtx { name: n, .. } if n == name);
                        if ui
                            .selectable_label(chosen, format::clip(name, 80))
                            .on_hover_text(format!(
                                "NVTX range {name}: {} in A, {} in B",
                                format::grouped(anchor.count_a as i64),
                                format::grouped(anchor.count_b as i64)
                            ))
                            .clicked()
                        {
                            align = Some(Alignment::Nvtx {
                                name: name.clone(),
                                instance: 0,
                            });
                        }
                    }
                })
                .response
                .labelled_by(label.id);
            if let Alignment::Nvtx { name, instance } = &self.align {
                let most = self
                    .anchors
                    .iter()
                    .find(|c| &c.name == name)
                    .map_or(1, |c| c.count_a.min(c.count_b).max(1))
                    as usize;
                let mut nth = instance + 1;
                let label = ui.label("instance");
                let r = ui
                    .add(egui::DragValue::new(&mut nth).range(1..=most))
                    .labelled_by(label.id)
                    .on_hover_text(format!("which instance of the range (1 to {most})"));
                if r.changed() && nth != instance + 1 {
                    align = Some(Alignment::Nvtx {
                        name: name.clone(),
                        instance: nth - 1,
                    });
                }
            }
            if ui.button("Fit both (Home)").clicked() {
                fit = true;
            }
            ui.separator();
            if self.is_pending() {
                ui.spinner();
                ui.label(if self.halves_mut().is_none() {
                    "reading…"
                } else {
                    "computing the diff…"
                });
            }
            for e in self.error.iter().chain(&self.align_error) {
                ui.colored_label(Color32::from_rgb(255, 110, 90), e);
            }
        });
        if let Some(a) = align {
            self.align_error = self.align_on(a).err();
        }
        if fit {
            self.fit();
        }
    }

    /// Both timelines, one above the other, on the axis.
    pub(crate) fn halves_ui(&mut self, ui: &mut Ui) {
        let axis = self.axis;
        let full = ui.available_rect_before_wrap();
        ui.allocate_rect(full, egui::Sense::hover());
        let header_h = 22.0;
        let half_h = (full.height() / 2.0).floor();
        let pointer = ui.input(|i| i.pointer.hover_pos());
        let mut selected_changed = None;
        let mut changed: [Option<(f64, f64)>; 2] = [None, None];
        for side in Side::BOTH {
            let Some(h) = self.half_mut(side) else {
                continue;
            };
            let top = full.top() + half_h * side.index() as f32;
            let header =
                Rect::from_min_size(egui::pos2(full.left(), top), vec2(full.width(), header_h));
            let body = Rect::from_min_max(
                egui::pos2(full.left(), top + header_h),
                egui::pos2(full.right(), top + half_h - 2.0),
            );
            let builder = egui::UiBuilder::new()
                .max_rect(header)
                .layout(egui::Layout::left_to_right(egui::Align::Center));
            ui.scope_builder(builder, |ui| {
                ui.label(
                    RichText::new(format!(" {} ", side.letter()))
                        .strong()
                        .background_color(side.color())
                        .color(Color32::BLACK),
                );
                ui.strong(h.file_name())
                    .on_hover_text(h.path.display().to_string());
                ui.weak(format!(
                    "{} events · 0 on the axis is {} of its session clock",
                    format::grouped(h.trace.event_count() as i64),
                    format::exact(h.offset.round() as i64)
                ));
                if !h.instances.is_empty()
                    && let Some(c) = h.current
                {
                    ui.label(format!(
                        "· instance {}/{}",
                        format::grouped(c as i64 + 1),
                        format::grouped(h.instances.len() as i64)
                    ));
                }
            });
            h.set_axis(axis);
            let before = h.selection.event;
            let builder = egui::UiBuilder::new()
                .max_rect(body)
                .id_salt(("compare_half", side.index()));
            let out = ui.scope_builder(builder, |ui| h.timeline.ui(ui, &h.trace, &h.selection));
            for command in out.inner.commands {
                h.apply(command);
            }
            h.rect = body;
            if h.axis() != axis {
                changed[side.index()] = Some(h.axis());
            }
            if h.selection.event != before {
                selected_changed = Some(h.selection.event.map(|event| SideEvent { side, event }));
            }
        }
        // Zoom and pan: the half under the pointer leads (keys reach both
        // timelines, and each zooms about its own point), else whichever moved.
        let hovered = Side::BOTH.into_iter().find(|s| {
            self.half(*s)
                .is_some_and(|h| pointer.is_some_and(|p| h.rect.contains(p)))
        });
        let lead = hovered
            .and_then(|s| changed[s.index()])
            .or(changed[0])
            .or(changed[1]);
        let typing = ui.ctx().egui_wants_keyboard_input();
        let home = !typing && ui.input(|i| i.key_pressed(Key::Home) || i.key_pressed(Key::Num0));
        if home {
            self.fit();
            ui.ctx().request_repaint();
        } else if let Some(axis) = lead {
            self.set_axis(axis);
            // The other half was drawn with the old span: draw again.
            ui.ctx().request_repaint();
        }
        if let Some(sel) = selected_changed {
            self.selected = sel;
        }
    }

    pub(crate) fn details_ui(&mut self, ui: &mut Ui, sel: SideEvent) {
        let mut jump = None;
        if let Some(h) = self.half(sel.side) {
            ui.horizontal(|ui| {
                ui.label(
                    RichText::new(format!(" {} ", sel.side.letter()))
                        .strong()
                        .background_color(sel.side.color())
                        .color(Color32::BLACK),
                );
                ui.strong(h.file_name());
            });
            egui::ScrollArea::vertical().show(ui, |ui| {
                jump =
                    crate::app::panels::details::ui(ui, &h.trace, sel.event, &h.selection.related);
            });
        }
        if let Some(ev) = jump {
            self.show_event(sel.side, ev);
        }
    }

    /// The diff: a tab per section, rows in the CLI's order (or sorted by a
    /// column), numbers with separators, the change coloured.
    pub(crate) fn table_ui(&mut self, ui: &mut Ui) {
        self.section_tabs_ui(ui);
        ui.separator();
        self.drawn_rows.clear();
        let report = self.section;
        let Some(section) = self.sections.iter().find(|s| s.diff.report == report) else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("computing the diff…");
            });
            return;
        };
        if section.diff.rows.is_empty() {
            ui.label("Neither report has rows of this kind.");
            return;
        }
        let table = &section.table;
        let mut order: Vec<usize> = (0..table.rows.len()).collect();
        if let Some((c, desc)) = self.sort {
            order.sort_by(|&x, &y| {
                let (p, q) = (&table.rows[x][c], &table.rows[y][c]);
                let ord = match (p.as_f64(), q.as_f64()) {
                    (Some(p), Some(q)) => p.total_cmp(&q),
                    // Empty cells (a side missing) after numbers either way.
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => cell_text(p).cmp(cell_text(q)),
                };
                if desc && (p.as_f64().is_some() == q.as_f64().is_some()) {
                    ord.reverse()
                } else {
                    ord
                }
            });
        }
        let right = egui::Layout::right_to_left(egui::Align::Center);
        let mut clicked = None;
        let mut new_sort = None;
        let active = self.active.clone();
        let mut drawn = Vec::with_capacity(order.len());
        let mut visible = 0;
        // Fixed column widths, measured from the header and every cell, so
        // the header row can stay outside the rows' vertical scroll (sticky)
        // and still line up with them.
        let gap = ui.spacing().item_spacing.x;
        let widths = Self::column_widths(ui, section);
        let row_h = ui.spacing().interact_size.y;
        let mut header_row = |ui: &mut Ui| {
            ui.horizontal(|ui| {
                for (c, name) in COLUMNS.iter().enumerate() {
                    let arrow = match self.sort {
                        Some((sc, true)) if sc == c => " v",
                        Some((sc, false)) if sc == c => " ^",
                        _ => "",
                    };
                    let layout = if c == 0 {
                        egui::Layout::left_to_right(egui::Align::Center)
                    } else {
                        right
                    };
                    let r = ui
                        .allocate_ui_with_layout(vec2(widths[c], row_h), layout, |ui| {
                            // The whole column's width, as the cells below
                            // take it (else the header shrinks to its text
                            // and stands off its column).
                            ui.set_width(widths[c]);
                            ui.add(
                                egui::Button::new(RichText::new(format!("{name}{arrow}")).strong())
                                    .frame(false),
                            )
                            .on_hover_text("sort by this column")
                        })
                        .inner;
                    if r.clicked() {
                        let desc = !matches!(self.sort, Some((sc, true)) if sc == c);
                        new_sort = Some((c, desc));
                    }
                }
            });
        };
        egui::ScrollArea::horizontal()
            .id_salt(("compare_table_x", report.name()))
            .auto_shrink(false)
            .show(ui, |ui| {
                header_row(ui);
                ui.separator();
                egui::ScrollArea::vertical()
                    .id_salt(("compare_table_y", report.name()))
                    .auto_shrink(false)
                    .show(ui, |ui| {
                        for (i, &r) in order.iter().enumerate() {
                            let row = &section.diff.rows[r];
                            let row_cells = &section.cells[r];
                            let is_active = active
                                .as_ref()
                                .is_some_and(|(ar, k)| *ar == report && *k == row.key);
                            let change = row.avg_change_percent();
                            let response = ui.horizontal(|ui| {
                                if i % 2 == 1 {
                                    let width = widths.iter().sum::<f32>()
                                        + gap * (widths.len() - 1) as f32;
                                    let stripe = Rect::from_min_size(
                                        ui.cursor().min,
                                        vec2(width, row_h),
                                    );
                                    ui.painter()
                                        .rect_filled(stripe, 0.0, ui.visuals().faint_bg_color);
                                }
                                let style = |t: &str| {
                                    if is_active {
                                        RichText::new(t)
                                            .color(Color32::from_rgb(255, 200, 0))
                                            .strong()
                                    } else {
                                        RichText::new(t)
                                    }
                                };
                                let link = cells::styled_name(ui, widths[0], &row_cells[0], style, true).on_hover_text(
                                    "click: outline its instances in both reports and show the first of each; again: the next",
                                );
                                if link.clicked() {
                                    clicked = Some(row.key.clone());
                                }
                                for (c, text) in row_cells.iter().enumerate().skip(1) {
                                    let mut rt = RichText::new(text).monospace();
                                    if c == 7
                                        && let Some(color) = change.and_then(change_color)
                                    {
                                        rt = rt.color(color);
                                    }
                                    cells::number(ui, widths[c], rt);
                                }
                            });
                            if ui.is_rect_visible(response.response.rect) {
                                visible += 1;
                            }
                            drawn.push(row_cells.clone());
                        }
                    });
            });
        self.rows_visible = visible;
        self.drawn_rows = drawn;
        if new_sort.is_some() {
            self.sort = new_sort;
        }
        if let Some(key) = clicked {
            self.show_row(report, &key);
        }
    }

    /// Fixed column widths, measured from the header and every cell, so the header row can stay
    /// outside the rows' vertical scroll (sticky) and still line up with them; the name column takes
    /// what the numbers leave.
    fn column_widths(ui: &Ui, section: &Section) -> Vec<f32> {
        let gap = ui.spacing().item_spacing.x;
        let widths: Vec<f32> = (0..COLUMNS.len())
            .map(|c| {
                let header = cells::text_width(ui, COLUMNS[c], egui::TextStyle::Button) + 14.0;
                if c == 0 {
                    // The name takes what the numbers leave, cut with "…".
                    return header.max(220.0);
                }
                let numbers = section
                    .cells
                    .iter()
                    .map(|r| cells::text_width(ui, &r[c], egui::TextStyle::Monospace))
                    .fold(0.0_f32, f32::max);
                header.max(numbers).max(60.0)
            })
            .collect();
        let mut widths = widths;
        let numbers: f32 = widths[1..].iter().sum::<f32>() + gap * (widths.len() + 1) as f32;
        widths[0] = widths[0].max(ui.available_width() - numbers);
        widths
    }

    /// The diff's heading and a tab per section with its row count (and a way back to the CLI's
    /// order once sorted).
    fn section_tabs_ui(&mut self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.strong("Diff");
            ui.weak("B against A; the numbers `sightline diff A B` prints");
            ui.weak(format!(
                "Avg Change coloured past ±{SIGNIFICANT_CHANGE_PERCENT} % (red slower, green faster; full colour from ×2)"
            ));
            ui.separator();
            for report in DiffReport::ALL {
                let n = self.diff(report).map(|d| d.rows.len());
                let text = match n {
                    Some(n) => format!("{} ({n})", section_label(report)),
                    None => section_label(report).to_string(),
                };
                let text = if n == Some(0) {
                    RichText::new(text).weak()
                } else {
                    RichText::new(text)
                };
                if ui
                    .selectable_label(self.section == report, text)
                    .on_hover_text(format!("{} ({})", report.title(), report.source().name()))
                    .clicked()
                {
                    self.section = report;
                    self.sort = None;
                }
            }
            if self.sort.is_some() && ui.small_button("CLI order").clicked() {
                self.sort = None;
            }
        });
    }
}

/// B slower than A on average.
pub(crate) const SLOWER: Color32 = Color32::from_rgb(255, 110, 90);
/// B faster than A on average.
pub(crate) const FASTER: Color32 = Color32::from_rgb(110, 210, 120);

/// Below this change of the average (either way), the two runs are within
/// run-to-run noise for kernels and API calls on one machine: left uncoloured.
pub const SIGNIFICANT_CHANGE_PERCENT: f64 = 5.0;

/// The colour of an Avg Change of `percent`: none within
/// ±[`SIGNIFICANT_CHANGE_PERCENT`]; past it red (slower) or green (faster),
/// fainter near the threshold and full from a doubling (+100 %) or halving
/// (−50 %) on, scaled by the logarithm of the ratio B/A.
pub fn change_color(percent: f64) -> Option<Color32> {
    if !percent.is_finite() || percent.abs() < SIGNIFICANT_CHANGE_PERCENT {
        return None;
    }
    let ratio = 1.0 + percent / 100.0;
    let threshold = (1.0 + SIGNIFICANT_CHANGE_PERCENT / 100.0_f64).ln();
    let magnitude = if ratio > 0.0 {
        ratio.ln().abs()
    } else {
        f64::INFINITY
    };
    // 0 at the threshold, 1 at a factor of two.
    let strength = ((magnitude - threshold) / (2.0_f64.ln() - threshold)).clamp(0.0, 1.0);
    let base = if percent > 0.0 { SLOWER } else { FASTER };
    Some(base.gamma_multiply((0.4 + 0.6 * strength) as f32))
}

/// A cell as the table shows it: the CLI's text, numbers with thousands separators.
pub(crate) fn shown(cell: &Cell) -> String {
    match cell {
        Cell::Int(_) | Cell::Round1(_) => crate::analysis::with_separators(&cell.to_string()),
        other => other.to_string(),
    }
}

pub(crate) fn cell_text(cell: &Cell) -> &str {
    match cell {
        Cell::Text(t) => t,
        _ => "",
    }
}

/// The `instance`-th NVTX range named `name` of `trace`, by start.
pub(crate) fn nth_range(trace: &Trace, name: &str, instance: usize) -> Option<EventRef> {
    compare::nvtx_ranges_named(trace, name)
        .get(instance)
        .map(|&ev| EventRef::from(ev))
}

/// What the worker sends.
pub(crate) enum Computed {
    Anchors(Vec<NvtxAnchor>),
    Section(Diff),
}

/// Computes the alignment names, then every diff section (the CLI's
/// computation: `compare::diff` over the whole of both reports), sending
/// each as it is done.
pub(crate) fn diff_sections(a: &Trace, b: &Trace, emit: &dyn Fn(Computed) -> bool) {
    if !emit(Computed::Anchors(compare::common_nvtx_names(a, b))) {
        return;
    }
    for report in DiffReport::ALL {
        if !emit(Computed::Section(compare::diff(a, b, report))) {
            return;
        }
    }
}
