//! The Findings panel: the timing and sync mistakes the engine finds in a
//! report, grouped by kind, each with its message and fix; a click zooms the
//! timeline to it and highlights the events that prove it. The engine runs on
//! a worker thread as soon as a report opens (a 10M-event report must not
//! stall a frame), and its findings are also drawn on the timeline as
//! overlay marks, so the mistakes show before anyone reads the panel.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, RichText, Ui};

use crate::analysis::findings::{
    Cancelled, Carried, Entry, Finding, FindingKind, RangeTiming, Severity, Thresholds,
    analyze_grown_telling, entries_in, human_ns, range_timing,
};
use crate::analysis::idle::Attribution;
use crate::annotations::Footprint;
use crate::app::job::Job;
use crate::app::state::command::Command;
use crate::app::state::events::{EventRef, Table};
use crate::app::timeline::{Anchor, Marks, Overlay, Timeline};
use crate::app::widgets::format;
use crate::model::{EventKind, Ns, Trace};

/// The overlay source name of this panel's marks.
pub const OVERLAY_SOURCE: &str = "findings";
/// A finding with more events than this outlines only the first ones: tens
/// of thousands of outlines would cost more than they show.
pub(crate) const MAX_OUTLINES: usize = 2_000;
/// GPU-work bars under ranges beyond this many are left out: each is looked
/// at every frame.
pub(crate) const MAX_WORK_BARS: usize = 100_000;
/// Entries listed per kind; the rest are counted (a 10M-event report has
/// ~1,700 findings, and wrapped entries are laid out every frame). Every one
/// of them is still marked on the timeline.
pub(crate) const MAX_LISTED: usize = 200;

pub(crate) struct Done {
    pub(crate) result: Result<Arrival, Cancelled>,
    pub(crate) range_work: Vec<(u32, Ns, Ns)>,
    /// What the engine keeps of a growing report's trace, which the next
    /// run extends.
    pub(crate) carried: Option<Carried>,
    /// The run's idle attribution, offered to the timeline's "GPU idle —
    /// why" row (which takes it where it wants one).
    pub(crate) idle: Option<Arc<Attribution>>,
    pub(crate) took: Duration,
    /// The trace analysed: where the report grew meanwhile, the findings are
    /// carried over to the newer trace.
    pub(crate) trace: Arc<Trace>,
}

/// What the engine's job hands the window, all made on the job's thread:
/// a hundred thousand findings' marks, labels and groups took the window's
/// thread 10-20 ms each time a capture's findings came in.
pub(crate) struct Arrival {
    pub(crate) findings: Vec<Finding>,
    /// By finding: its events' footprint.
    pub(crate) footprints: Vec<Footprint>,
    pub(crate) entries: Vec<Entry>,
    /// Every mark but the clicked finding's outlines ([`base_marks`]).
    pub(crate) marks: Marks,
}

/// One report's findings and the job computing them.
pub struct FindingsPanel {
    /// The findings of the report's current trace, sorted by start.
    pub findings: Vec<Finding>,
    /// By finding: the footprint of its events, so that a snapshot looks
    /// only at the findings whose events may have moved (a capture full of
    /// mistakes has a hundred thousand findings; NVTX ranges are the one
    /// kind a growing report numbers anew, and most keep their index).
    pub(crate) footprints: Vec<Footprint>,
    /// The findings grouped: one entry per kind, severity and NVTX range (or
    /// loop), what the badge counts and the panel lists.
    pub entries: Vec<Entry>,
    /// Whether the side panel is shown (the badge toggles it).
    pub open: bool,
    /// The finding last clicked.
    pub active: Option<usize>,
    /// When the findings arrive and nobody has moved the view yet, zoom to
    /// where the mistakes are ([`FindingsPanel::focus`]): the whole-report
    /// view of a short CUDA run is a sliver at its end. Set for reports the
    /// user opens; views built for tests and benchmarks stay put.
    pub focus_on_arrival: bool,
    /// How long the engine took.
    pub took: Option<Duration>,
    /// How many events the trace had whose findings these are: a growing
    /// report's are an older snapshot's (the live bench measures how much
    /// older).
    pub analysed_events: usize,
    /// Per NVTX range that launched GPU work: its row and that work's span
    /// (drawn under every range, flagged or not).
    pub range_work: Vec<(u32, Ns, Ns)>,
    /// The engine's run (dropped, and so cancelled, with the report).
    pub(crate) job: Job<Done>,
    /// A newer trace that arrived while a job ran or the engine rested:
    /// analysed after, so a growing capture runs one job at a time, not one
    /// per snapshot.
    pub(crate) queued: Option<Arc<Trace>>,
    /// While a report grows, the next run waits until then (see
    /// [`rest_after`]). Run back to back after every snapshot the engine
    /// took a whole core, beside the loads and the window's own thread (on
    /// two cores a findings-heavy capture's frames went past 16 ms).
    pub(crate) rest_until: Option<Instant>,
    /// The selected NVTX range: its row, its timing facts and its name,
    /// computed once per selection: why it has a finding, or why not.
    pub(crate) explained: Option<(EventRef, Option<RangeTiming>, String)>,
    /// Set when a lesson step opens the panel: the list is scrolled, once,
    /// to the group of this kind (`Some(None)`: to the top), whatever
    /// scroll position another step or tab left behind.
    pub reveal: Option<Option<FindingKind>>,
    /// The trace is a report still being opened: its findings would miss
    /// what is not read yet, so the engine waits for the whole report.
    pub(crate) awaiting_whole_report: bool,
    /// What the last run on a growing report carried (its idle attribution,
    /// its sorted operations), which the next run extends instead of making
    /// it again.
    pub(crate) carried: Option<Carried>,
    /// The report will not grow again (its capture finished): nothing is
    /// carried, since tens of bytes a GPU operation would stay for nothing.
    pub(crate) grown_for_good: bool,
    /// How many GPU operations the last run's idle attribution merged, on
    /// a growing report (see [`FindingsPanel::idle_merged`]).
    pub(crate) last_merged: Option<usize>,
    /// The running job's idle attribution, and the trace it is of, put
    /// here as soon as it is made, for the timeline's "GPU idle — why" row
    /// (see [`FindingsPanel::poll`]), which would otherwise make it again on
    /// a worker of its own: the engine's longest pass, and twice the gaps
    /// in memory. The run's end offers it again, for a row wanted since.
    pub(crate) early_idle: Arc<std::sync::Mutex<Option<SharedIdle>>>,
}

/// An idle attribution and the state of the report it is of.
pub(crate) type SharedIdle = (Arc<Attribution>, Arc<Trace>);

impl FindingsPanel {
    /// Starts the engine on `trace`.
    pub fn start(trace: &Arc<Trace>) -> Self {
        let mut panel = FindingsPanel {
            findings: Vec::new(),
            footprints: Vec::new(),
            entries: Vec::new(),
            open: false,
            active: None,
            focus_on_arrival: false,
            took: None,
            analysed_events: 0,
            range_work: Vec::new(),
            reveal: None,
            job: Job::default(),
            queued: None,
            rest_until: None,
            explained: None,
            awaiting_whole_report: false,
            carried: None,
            grown_for_good: false,
            last_merged: None,
            early_idle: Arc::default(),
        };
        panel.request(trace);
        panel
    }

    /// Findings of `trace` from nothing: none shown until the engine's are in.
    pub fn request(&mut self, trace: &Arc<Trace>) {
        self.findings.clear();
        self.footprints.clear();
        self.entries.clear();
        self.range_work.clear();
        self.active = None;
        self.took = None;
        self.rest_until = None;
        self.carried = None;
        self.grown_for_good = false;
        self.last_merged = None;
        self.schedule(trace);
    }

    /// The report grew from `old` to `new` (a capture's snapshot): the
    /// findings shown stay, their events found again in `new`, until the
    /// engine's findings of `new` replace them. A capture's findings would
    /// otherwise blink out at every snapshot, and a big trace's could be
    /// gone most of the time its capture runs. `marks`: the timeline's marks
    /// on `old`; this panel's are kept, on the events found again.
    pub fn grow(
        &mut self,
        old: &Trace,
        new: &Arc<Trace>,
        mut marks: Marks,
        timeline: &mut Timeline,
    ) {
        let mut carrier = crate::annotations::Carrier::new(old, new);
        carry_over(
            &mut carrier,
            &mut self.findings,
            &mut self.footprints,
            &mut self.range_work,
        );
        // The marks stay: their times are the findings', which growing does
        // not change; only the events they hang on are found again. Built
        // anew they took 12-20 ms of the window's thread at each snapshot of
        // a report with 43k findings.
        carry_marks(&mut carrier, &mut marks);
        timeline.set_marks(marks);
        self.schedule(new);
    }

    /// Runs the engine on `trace` now, or after the job running and its rest.
    pub(crate) fn schedule(&mut self, trace: &Arc<Trace>) {
        self.explained = None;
        self.awaiting_whole_report = !trace.is_complete();
        if self.awaiting_whole_report {
            self.job.cancel();
            self.queued = None;
        } else {
            self.queued = Some(trace.clone());
            self.start_queued();
        }
    }

    pub(crate) fn spawn(&mut self, trace: Arc<Trace>) {
        let earlier = self.carried.take();
        let early = self.early_idle.clone();
        // Without a thread there are no findings to show; the viewer works on.
        self.job.start("sightline-findings", None, move |cancel| {
            let t0 = Instant::now();
            // The row's gaps as soon as they are made: the detectors that
            // judge them take about as long again.
            let attributed = |idle: &Arc<Attribution>| {
                if let Ok(mut slot) = early.lock() {
                    *slot = Some((idle.clone(), trace.clone()));
                }
            };
            let thresholds = Thresholds::default();
            let result =
                analyze_grown_telling(&trace, earlier, None, &thresholds, cancel, &attributed);
            let took = t0.elapsed();
            let (result, range_work, carried, idle) = match result {
                // Kept only where the report grows: a whole report's is
                // not needed again (and is tens of bytes a gap), unless
                // the idle row takes its attribution.
                Ok((findings, range_work, carried)) => {
                    let growing = trace.lineage.report != 0;
                    let idle = Some(carried.idle().clone());
                    (Ok(findings), range_work, growing.then_some(carried), idle)
                }
                Err(cancelled) => (Err(cancelled), Vec::new(), None, None),
            };
            let result = result.map(|findings| Arrival {
                footprints: (findings.iter())
                    .map(|f| Footprint::of(&f.events))
                    .collect(),
                entries: entries_in(&trace, &findings),
                marks: Marks::new(OVERLAY_SOURCE, base_marks(&findings, &range_work, &trace)),
                findings,
            });
            Some(Done {
                result,
                range_work,
                carried,
                idle,
                took,
                trace,
            })
        });
    }

    /// The running job's cancel flag (tests check that closing sets it).
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.job.cancel_flag()
    }

    /// The report grew for the last time (its capture finished): the run
    /// for its last state extends what is carried, and what that run
    /// carries is not kept.
    pub fn stopped_growing(&mut self) {
        // A run still to come for the last state takes what is carried
        // (its extension is the cheap one); only its own is not kept.
        self.grown_for_good = true;
    }

    /// How many GPU operations the last run's idle attribution merged (all
    /// of the trace's, or, extended, those since its checkpoint): None for
    /// a report loaded whole.
    pub fn idle_merged(&self) -> Option<usize> {
        self.last_merged
    }

    /// Whether the panel keeps what its last run carried for a next run.
    pub fn carries(&self) -> bool {
        self.carried.is_some()
    }

    /// The idle attribution the last run carried, if kept (tests: the
    /// timeline's row shows this one, not a copy).
    pub fn carried_idle(&self) -> Option<&Arc<Attribution>> {
        self.carried.as_ref().map(|c| c.idle())
    }

    pub fn is_pending(&self) -> bool {
        self.job.is_running() || self.queued.is_some()
    }

    /// Whether the engine's findings are in, for this trace or, carried
    /// over, an older state of it. A growing report's are shown, counted
    /// and listed while they are brought up to date: a capture runs the
    /// engine after every snapshot, so nearly all the time.
    pub(crate) fn has_findings(&self) -> bool {
        self.took.is_some()
    }

    /// Takes the finished job's findings and puts their marks on the
    /// timeline; true when something changed.
    pub fn poll(&mut self, trace: &Trace, timeline: &mut Timeline) -> bool {
        let early = self.early_idle.lock().ok().and_then(|mut slot| slot.take());
        if let Some((idle, of)) = early {
            timeline.idle_rows.offer(idle, &of, trace);
            crate::app::job::drop_off_thread(of);
        }
        if let Some(done) = self.job.take() {
            self.accept(done, trace, timeline);
            return true;
        }
        // A queued trace whose rest is over, or whose job ended without a
        // result (cancelled, or its thread died).
        self.start_queued()
    }

    /// Blocks until the findings of the current trace are in (tests), with
    /// no rest between runs.
    pub fn wait(&mut self, trace: &Trace, timeline: &mut Timeline) {
        while self.job.is_running() || self.queued.is_some() {
            self.rest_until = None;
            match self.job.wait() {
                Some(done) => self.accept(done, trace, timeline),
                None => {
                    self.start_queued();
                }
            }
        }
    }

    pub(crate) fn accept(&mut self, done: Done, trace: &Trace, timeline: &mut Timeline) {
        let Done {
            result,
            mut range_work,
            carried,
            idle,
            took,
            trace: analysed,
        } = done;
        // The run's attribution, if not taken from the slot yet (or
        // declined there, before the row wanted it).
        let early = self.early_idle.lock().ok().and_then(|mut slot| slot.take());
        crate::app::job::drop_off_thread(early);
        if let Some(idle) = idle {
            timeline.idle_rows.offer(idle, &analysed, trace);
        }
        // Before the next run may start: it extends this one's.
        self.last_merged = carried.as_ref().map(|c| c.idle().merged());
        // Kept while a run is to come (the last state's, after the capture
        // finished, too), not after.
        self.carried = carried.filter(|_| !self.grown_for_good || self.queued.is_some());
        // The report may have grown while the engine ran: then these are an
        // older trace's findings, shown (carried over) while the newest
        // trace's are computed, after a rest.
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let cores =
            *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        self.rest_until = Some(Instant::now() + rest_after(took, cores));
        let analysed_events = analysed.event_count();
        self.start_queued();
        let mut arrival = result.ok();
        if let Some(a) = arrival.as_mut()
            && !std::ptr::eq(&*analysed, trace)
        {
            let mut carrier = crate::annotations::Carrier::new(&analysed, trace);
            carry_over(
                &mut carrier,
                &mut a.findings,
                &mut a.footprints,
                &mut range_work,
            );
            carry_marks(&mut carrier, &mut a.marks);
        }
        // It may be the last reference to an older snapshot.
        crate::app::job::drop_off_thread(analysed);
        // Cancelled: what is shown stays.
        let Some(Arrival {
            findings,
            footprints,
            entries,
            mut marks,
        }) = arrival
        else {
            return;
        };
        // The finding clicked stays clicked where the new list has it (a
        // capture's findings come again after every snapshot).
        let active = self
            .active
            .and_then(|i| self.findings.get(i))
            .map(same_finding);
        let older = std::mem::replace(&mut self.findings, findings);
        self.footprints = footprints;
        self.entries = entries;
        self.range_work = range_work;
        self.took = Some(took);
        self.analysed_events = analysed_events;
        self.active = active.and_then(|was| self.findings.iter().position(was));
        marks.extend(self.outlines(trace));
        // The older findings and marks may be many: freed off this thread.
        crate::app::job::drop_off_thread((older, timeline.take_marks(OVERLAY_SOURCE)));
        timeline.set_marks(marks);
        if self.focus_on_arrival
            && timeline.is_untouched()
            && let Some((s, e)) = self.focus()
        {
            // Through the history, so Backspace shows the whole report again.
            timeline.zoom_to(s as f64, e as f64);
        }
    }

    /// Where the mistakes are: the span of the timing findings (a range that
    /// ends before its work, waits on earlier work, or carries the warm-up),
    /// else of every warning and error; `None` when there are only notes.
    pub fn focus(&self) -> Option<(Ns, Ns)> {
        let span = |keep: &dyn Fn(&Finding) -> bool| {
            self.findings
                .iter()
                .filter(|f| keep(f))
                .fold(None, |acc: Option<(Ns, Ns)>, f| {
                    Some(acc.map_or((f.start, f.end), |(a, b)| (a.min(f.start), b.max(f.end))))
                })
        };
        span(&|f| {
            matches!(
                f.kind,
                FindingKind::RangeEndsBeforeGpuWork
                    | FindingKind::RangeWaitsOnEarlierWork
                    | FindingKind::WarmUpIncluded
            )
        })
        .or_else(|| span(&|f| f.severity >= Severity::Warning))
    }

    /// Starts the engine on the queued trace unless a run is under way or
    /// the engine rests; true when it started.
    pub(crate) fn start_queued(&mut self) -> bool {
        let resting = self.rest_until.is_some_and(|t| Instant::now() < t);
        if self.job.is_running() || resting {
            return false;
        }
        match self.queued.take() {
            Some(t) => {
                self.spawn(t);
                true
            }
            None => false,
        }
    }

    /// The clicked finding's events but the first (which is selected),
    /// outlined.
    pub(crate) fn outlines(&self, trace: &Trace) -> Vec<Overlay> {
        let Some(f) = self.active.and_then(|i| self.findings.get(i)) else {
            return Vec::new();
        };
        let events = f.events.iter().skip(1).take(MAX_OUTLINES);
        (events.map(|&id| EventRef::from(id)))
            .filter_map(|ev| {
                let (start, end) = span_of(trace, ev)?;
                Some(Overlay {
                    start,
                    end,
                    anchor: Anchor::Outline(ev),
                    color: OUTLINE,
                    label: String::new(),
                    source: OVERLAY_SOURCE,
                })
            })
            .collect()
    }

    /// Carries out a click: outlines the finding's events but the first, and zooms to the
    /// finding with the events that prove it. Returns the event to select (the first; `None`
    /// inside when none of them is in the report), or `None` for no such finding.
    pub fn show(
        &mut self,
        i: usize,
        trace: &Trace,
        timeline: &mut Timeline,
    ) -> Option<Option<EventRef>> {
        let f = self.findings.get(i)?;
        let (mut lo, mut hi) = (f.start, f.end);
        let mut first = None;
        for &id in f.events.iter().take(MAX_OUTLINES) {
            let ev = EventRef::from(id);
            let Some((s, e)) = span_of(trace, ev) else {
                continue;
            };
            first.get_or_insert(ev);
            // The proof may reach past the finding's own span (GPU work that
            // outlasts its range): the view shows both.
            (lo, hi) = (lo.min(s), hi.max(e));
        }
        timeline.zoom_to(lo as f64, hi.max(lo.saturating_add(1)) as f64);
        self.active = Some(i);
        // The others stay: built anew they took the window's thread
        // O(findings) at each click.
        let mut marks = timeline.take_marks(OVERLAY_SOURCE);
        marks.retain_mut(|m| !matches!(m.anchor, Anchor::Outline(_)));
        marks.extend(self.outlines(trace));
        timeline.set_marks(marks);
        Some(first)
    }

    /// The toolbar badge: "3 findings" (a spinner while the engine runs);
    /// a click shows or hides the panel.
    pub fn badge(&mut self, ui: &mut Ui) {
        if self.awaiting_whole_report {
            ui.weak("findings after loading").on_hover_text(
                "timing and sync mistakes are looked for once the whole report is read",
            );
            return;
        }
        if self.is_pending() {
            ui.spinner();
            if !self.has_findings() {
                ui.weak("finding mistakes…");
                return;
            }
        }
        // Entries, not instances: 2,456 tiny copies of one loop are one finding.
        let n = self.entries.len();
        let text = format!("{n} finding{}", if n == 1 { "" } else { "s" });
        // Every finding is in one entry, of its severity: the entries are
        // few where a capture's findings are a hundred thousand.
        let worst = self.entries.iter().map(|e| e.severity).max();
        let rt = match worst {
            Some(s) => RichText::new(&text).color(severity_color(s)).strong(),
            None => RichText::new(&text).weak(),
        };
        let r = ui
            .selectable_label(self.open, rt)
            .on_hover_text("timing and sync mistakes in this report (click to list them)");
        if r.clicked() {
            self.open = !self.open;
        }
    }

    /// The panel's contents; returns what a click asked for.
    pub fn ui(&mut self, ui: &mut Ui) -> Option<Command> {
        let mut cmd = None;
        ui.horizontal(|ui| {
            ui.heading("Findings");
            if self.is_pending() {
                ui.spinner();
            } else if let Some(t) = self.took {
                ui.weak(format!("in {:.0} ms", t.as_secs_f64() * 1e3));
            }
        });
        if let Some((ev, Some(t), name)) = &self.explained {
            let ev = *ev;
            let t = t.clone();
            let kinds = self.findings_of(ev, name, &t);
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.strong("Selected range");
                for line in explain(&t, kinds) {
                    ui.add(egui::Label::new(line).wrap());
                }
            });
        }
        if self.awaiting_whole_report {
            ui.label("Findings come when the whole report is read.");
            return None;
        }
        if !self.has_findings() {
            ui.label("Looking for timing and sync mistakes…");
            return None;
        }
        if self.findings.is_empty() {
            ui.label("No timing or sync mistakes found in this report.");
            return None;
        }
        ui.weak("Click one to zoom to it and outline the events that prove it.");
        ui.separator();
        let reveal = self.reveal.take();
        egui::ScrollArea::vertical()
            .auto_shrink(false)
            .show(ui, |ui| {
                if reveal == Some(None) {
                    ui.scroll_to_cursor(Some(egui::Align::TOP));
                }
                for kind in FindingKind::ALL {
                    let of_kind: Vec<usize> = (0..self.entries.len())
                        .filter(|&e| self.entries[e].kind == kind)
                        .collect();
                    let Some(&first) = of_kind.first() else {
                        continue;
                    };
                    let fix = self.findings[self.entries[first].worst].fix;
                    let group = egui::CollapsingHeader::new(
                        RichText::new(format!("{} ({})", kind.name(), of_kind.len())).strong(),
                    )
                    .id_salt(kind.name())
                    .default_open(true)
                    .show(ui, |ui| {
                        ui.add(
                            egui::Label::new(
                                RichText::new(format!("Why / how to fix: {fix}")).italics(),
                            )
                            .wrap(),
                        );
                        for &e in of_kind.iter().take(MAX_LISTED) {
                            if let Some(i) = self.group(ui, e, fix) {
                                cmd = Some(Command::ShowFinding(i));
                            }
                        }
                        if of_kind.len() > MAX_LISTED {
                            ui.weak(format!(
                                "…and {} more (all marked on the timeline)",
                                of_kind.len() - MAX_LISTED
                            ));
                        }
                    });
                    if reveal == Some(Some(kind)) {
                        group.header_response.scroll_to_me(Some(egui::Align::TOP));
                    }
                }
            });
        cmd
    }

    /// One entry: a single finding as itself; several as a line with their
    /// count, total and worst instance, ‹ › to step through them, and the
    /// instances underneath, folded. Returns the finding a click asked for.
    pub(crate) fn group(&self, ui: &mut Ui, e: usize, group_fix: &str) -> Option<usize> {
        let entry = &self.entries[e];
        if entry.count() == 1 {
            let i = entry.instances[0];
            return self.entry(ui, i, group_fix).then_some(i);
        }
        let mut clicked = None;
        let at = self
            .active
            .and_then(|a| entry.instances.iter().position(|&i| i == a));
        let text = RichText::new(format!(
            "{} · {}\n{}",
            entry.range.as_deref().unwrap_or("no range"),
            match at {
                Some(p) => format!("{} of {}", p + 1, entry.count()),
                None => format!("{}×", entry.count()),
            },
            entry.message(&self.findings)
        ))
        .size(12.5);
        let r = ui
            .add(
                egui::Button::selectable(at.is_some(), text)
                    .wrap()
                    .min_size(egui::vec2(ui.available_width(), 0.0)),
            )
            .on_hover_text("click: the worst instance; ‹ › step through them all");
        // A loop's entry says in how many of its iterations.
        let iterations = entry.iterations.as_ref().map_or(String::new(), |it| {
            let of = it.of.map_or(String::new(), |n| format!(" of {n}"));
            format!(" ({}{of} iterations)", it.with)
        });
        let label = format!(
            "Entry {}: {} instances in {}{iterations}",
            entry.kind.name(),
            entry.count(),
            entry.range.as_deref().unwrap_or("no range")
        );
        r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &label));
        if r.clicked() {
            clicked = Some(entry.worst);
        }
        ui.horizontal(|ui| {
            let n = entry.count();
            if ui
                .small_button("‹")
                .on_hover_text("previous instance")
                .clicked()
            {
                let p = at.map_or(n - 1, |p| (p + n - 1) % n);
                clicked = Some(entry.instances[p]);
            }
            if ui
                .small_button("›")
                .on_hover_text("next instance")
                .clicked()
            {
                let p = at.map_or(0, |p| (p + 1) % n);
                clicked = Some(entry.instances[p]);
            }
        });
        let n = entry.count();
        egui::CollapsingHeader::new(format!(
            "{n} × {} in {}",
            entry.kind.name(),
            entry.range.as_deref().unwrap_or("no range")
        ))
        .id_salt(("finding-entry", e))
        .show(ui, |ui| {
            for &i in entry.instances.iter().take(MAX_LISTED) {
                if self.entry(ui, i, group_fix) {
                    clicked = Some(i);
                }
            }
            if n > MAX_LISTED {
                ui.weak(format!("…and {} more (‹ › reach them)", n - MAX_LISTED));
            }
        });
        clicked
    }

    /// The kinds of the findings whose first event is `ev`.
    pub(crate) fn findings_of(
        &self,
        ev: EventRef,
        name: &str,
        t: &RangeTiming,
    ) -> Vec<FindingKind> {
        range_finding_kinds(&self.findings, ev, name, t)
    }

    /// Keeps the explanation of the selected NVTX range current.
    pub(crate) fn explain_selection(&mut self, trace: &Trace, selected: Option<EventRef>) {
        let sel = selected.filter(|e| e.table == Table::Nvtx);
        if self.explained.as_ref().map(|(e, _, _)| *e) == sel {
            return;
        }
        self.explained = sel.map(|e| {
            let name = trace
                .nvtx
                .spans
                .name
                .get(e.index as usize)
                .map(|&n| trace.name(n).to_string())
                .unwrap_or_default();
            (e, range_timing(trace, e.index), name)
        });
    }

    /// One finding: when, where, the message; true when clicked.
    pub(crate) fn entry(&self, ui: &mut Ui, i: usize, group_fix: &str) -> bool {
        let f = &self.findings[i];
        let when = format!(
            "{} · {}{}",
            format::duration(f.start),
            f.range.as_deref().unwrap_or("no range"),
            if f.fix != group_fix { " · *" } else { "" }
        );
        // A size smaller than the body: twenty findings of a kind should fit
        // in a few screens, not a dozen.
        let text = RichText::new(format!("{when}\n{}", f.message)).size(12.5);
        let r = ui
            .add(
                egui::Button::selectable(self.active == Some(i), text)
                    .wrap()
                    .min_size(egui::vec2(ui.available_width(), 0.0)),
            )
            .on_hover_text(f.fix);
        // Tests (and screen readers) find an entry by its kind and message.
        let label = format!("Finding {}: {}", f.kind.name(), f.message);
        r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &label));
        r.clicked()
    }
}

/// The kinds of finding about the NVTX range `ev` named `name`: proved by the
/// range itself (timing kinds), or placed in it (loop kinds, whose first
/// proof is one of the loop's calls and whose range is the one around the
/// loop), each kind once.
pub fn range_finding_kinds(
    findings: &[Finding],
    ev: EventRef,
    name: &str,
    t: &RangeTiming,
) -> Vec<FindingKind> {
    let mut kinds: Vec<FindingKind> = Vec::new();
    for f in findings {
        let proved_by_it = f.events.first().map(|&e| EventRef::from(e)) == Some(ev);
        let placed_in_it = f
            .range
            .as_deref()
            .is_some_and(|r| r.rsplit('/').next() == Some(name))
            && t.start <= f.start
            && f.end <= t.end;
        if (proved_by_it || placed_in_it) && !kinds.contains(&f.kind) {
            kinds.push(f.kind);
        }
    }
    kinds
}

/// Sentences saying what a range's timing facts mean: whether it measured its
/// GPU work, and whether its sync waited for work queued before it.
pub(crate) fn explain(t: &RangeTiming, kinds: Vec<FindingKind>) -> Vec<String> {
    let mut lines = vec![format!(
        "Lasts {}.",
        human_ns(t.end.saturating_sub(t.start))
    )];
    match t.gpu_work {
        None => lines.push("It launches no GPU work that the report links to it.".into()),
        Some((_, ge)) if ge > t.end => lines.push(format!(
            "Its GPU work ends {} after the range: read as a timer, the range measured the \
             launch, not the work (a phase of an asynchronous loop may well end so).",
            human_ns(ge - t.end)
        )),
        Some((_, ge)) => lines.push(format!(
            "Its GPU work ends {} before the range does: the range covers its own work.",
            human_ns(t.end - ge)
        )),
    }
    match (t.sync_after_launch, t.earlier_work_end) {
        (Some((ss, _)), Some(w)) if w <= ss => lines.push(format!(
            "Work queued before the range had finished {} before its sync began, so the sync \
             waited only for the range's own work. Had it still been running, the measured time \
             would include it (range-waits-on-earlier-work): sync before the first launch.",
            human_ns(ss - w)
        )),
        (Some((ss, _)), Some(w)) => lines.push(format!(
            "Its sync also waited {} for work queued before the range began.",
            human_ns(w - ss)
        )),
        (Some(_), None) => lines.push(
            "Its sync waited only for the range's own work: nothing earlier was queued.".into(),
        ),
        (None, _) => {}
    }
    if kinds.is_empty() {
        lines.push("No finding for this range.".into());
    } else {
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        lines.push(format!("Findings: {}.", names.join(", ")));
    }
    lines
}

/// Whether another finding is `f` found again (in a newer trace's list): the
/// same kind over the same span in the same range. Its words may differ (a
/// count that grew).
pub(crate) fn same_finding(f: &Finding) -> impl Fn(&Finding) -> bool + use<> {
    let (kind, start, end, range) = (f.kind, f.start, f.end, f.range.clone());
    move |g: &Finding| g.kind == kind && g.start == start && g.end == end && g.range == range
}

/// Findings of the carrier's older trace made to name its newer one's events
/// (a later state of the same report): each event found again, dropped where
/// the newer lacks it; each range's GPU work likewise by its NVTX row. The
/// findings themselves stay, in order: their times and words do not depend
/// on event indexes.
/// The marks of `findings` but the clicked one's outlines: every finding in
/// the ruler; under each range that ended before its GPU work, that work's
/// span (the part past the range's end in the warning colour); under every
/// other range, its GPU work (`range_work`).
pub(crate) fn base_marks(
    findings: &[Finding],
    range_work: &[(u32, Ns, Ns)],
    trace: &Trace,
) -> Vec<Overlay> {
    let mut marks = Vec::with_capacity(findings.len() * 2 + range_work.len());
    // Every range's GPU work, under it; the flagged ones get the
    // two-colour bar below instead.
    let flagged: std::collections::HashSet<u32> = findings
        .iter()
        .filter(|f| f.kind == FindingKind::RangeEndsBeforeGpuWork)
        .filter_map(|f| f.events.first())
        .filter(|e| e.kind == EventKind::Nvtx)
        .map(|e| e.index)
        .collect();
    for &(row, s, e) in range_work.iter().take(MAX_WORK_BARS) {
        if !flagged.contains(&row) {
            marks.push(Overlay {
                start: s,
                end: e,
                anchor: Anchor::Under(EventRef::new(Table::Nvtx, row)),
                color: GPU_IN_RANGE,
                label: String::new(),
                source: OVERLAY_SOURCE,
            });
        }
    }
    // Marks share the ruler's band and later ones cover earlier ones: long,
    // mild ones first, so a short warning inside a long info span shows.
    let mut order: Vec<&Finding> = findings.iter().collect();
    order.sort_by_key(|f| (f.severity, std::cmp::Reverse(f.end.saturating_sub(f.start))));
    // The lanes' marks after the ruler's (they never cover each other): a
    // frame's painter then meets the ruler's band in one stretch.
    let mut in_lanes = Vec::new();
    for f in order {
        marks.push(Overlay {
            start: f.start,
            end: f.end,
            anchor: Anchor::Ruler,
            color: severity_color(f.severity),
            label: format!("{}: {}", f.kind.name(), f.message),
            source: OVERLAY_SOURCE,
        });
        if f.kind == FindingKind::RangeEndsBeforeGpuWork {
            in_lanes.extend(gpu_work_bars(trace, f));
        }
        if f.kind == FindingKind::RangeWaitsOnEarlierWork {
            in_lanes.extend(wait_hatch(trace, f));
        }
    }
    marks.append(&mut in_lanes);
    marks
}

/// Carries a mark into a later state of the report; false when the later
/// state does not hold its event (the mark goes).
/// Carries `marks` into the carrier's newer state: each hangs on its event
/// found again there, or goes. Where no kind of event moved (a capture's
/// tables grow at their ends, and one thread's NVTX ranges written by start
/// keep their indexes too), every event is where it was: no mark is looked
/// at (a findings-heavy capture has hundreds of thousands).
pub(crate) fn carry_marks(carrier: &mut crate::annotations::Carrier, marks: &mut Marks) {
    if carrier.moving().is_empty() {
        return;
    }
    marks.retain_mut(|mark| {
        (mark.anchor).find_again(|ev| carrier.carry(ev.into()).map(EventRef::from))
    });
}

/// Carries findings (with `footprints`, their events') and the ranges' GPU
/// work into a later state of the report; only the findings whose events
/// may have moved are looked at.
pub(crate) fn carry_over(
    carrier: &mut crate::annotations::Carrier,
    findings: &mut [Finding],
    footprints: &mut [Footprint],
    range_work: &mut Vec<(u32, Ns, Ns)>,
) {
    for (f, footprint) in findings.iter_mut().zip(footprints.iter_mut()) {
        if !carrier.may_move(*footprint) {
            continue;
        }
        f.events.retain_mut(|ev| match carrier.carry(*ev) {
            Some(found) => {
                *ev = found;
                true
            }
            None => false,
        });
        *footprint = Footprint::of(&f.events);
    }
    carrier.carry_ranges(range_work);
}

/// A bar under the range for its GPU work: the part inside the range muted,
/// the part after its end in the warning colour, so the overhang is what
/// catches the eye.
pub(crate) fn gpu_work_bars(trace: &Trace, f: &Finding) -> Vec<Overlay> {
    let Some(range) = f
        .events
        .iter()
        .find(|e| e.kind == EventKind::Nvtx)
        .map(|&e| EventRef::from(e))
    else {
        return Vec::new();
    };
    let gpu = f
        .events
        .iter()
        .map(|&e| EventRef::from(e))
        .filter(|e| matches!(e.table, Table::Kernel | Table::Memcpy | Table::Memset))
        .filter_map(|e| span_of(trace, e))
        .fold(None, |acc: Option<(Ns, Ns)>, (s, e)| {
            Some(acc.map_or((s, e), |(a, b)| (a.min(s), b.max(e))))
        });
    let Some((gs, ge)) = gpu else {
        return Vec::new();
    };
    let mut bars = Vec::with_capacity(2);
    if gs < f.end {
        bars.push(Overlay {
            start: gs,
            end: ge.min(f.end),
            anchor: Anchor::Under(range),
            color: GPU_IN_RANGE,
            label: String::new(),
            source: OVERLAY_SOURCE,
        });
    }
    bars.push(Overlay {
        start: gs.max(f.end),
        end: ge,
        anchor: Anchor::Under(range),
        color: WARNING,
        label: format!(
            "GPU work runs {} past the range's end",
            format::duration(ge.saturating_sub(f.end))
        ),
        source: OVERLAY_SOURCE,
    });
    bars
}

/// For a sync that also waited for earlier work: its time waiting for that
/// work hatched on the thread that waited, linked to the work it waited for.
pub(crate) fn wait_hatch(trace: &Trace, f: &Finding) -> Option<Overlay> {
    let sync = f
        .events
        .iter()
        .map(|&e| EventRef::from(e))
        .find(|e| e.table == Table::Api)?;
    let earlier = f
        .events
        .iter()
        .map(|&e| EventRef::from(e))
        .find(|e| matches!(e.table, Table::Kernel | Table::Memcpy | Table::Memset));
    let (ss, se) = span_of(trace, sync)?;
    // The engine's finding is about the wait up to the earlier work's end.
    let until = earlier
        .and_then(|e| span_of(trace, e))
        .map_or(se, |(_, e)| e.clamp(ss, se));
    Some(Overlay {
        start: ss,
        end: until.max(ss.saturating_add(1)),
        anchor: Anchor::Hatch {
            on: sync,
            link: earlier,
        },
        color: WARNING,
        label: format!("waiting {} for earlier work", format::duration(until - ss)),
        source: OVERLAY_SOURCE,
    })
}

/// An event's span, or `None` for an index the trace does not hold.
pub(crate) fn span_of(trace: &Trace, ev: EventRef) -> Option<(Ns, Ns)> {
    let spans = ev.table.spans(trace);
    let i = ev.index as usize;
    spans.get(i)
}

pub(crate) const WARNING: Color32 = Color32::from_rgb(255, 150, 30);
pub(crate) const ERROR: Color32 = Color32::from_rgb(240, 70, 60);
pub(crate) const INFO: Color32 = Color32::from_rgb(110, 160, 235);
// Light and neutral: GPU work is not a mistake; only an overhang past a
// range's end (orange) is.
pub(crate) const GPU_IN_RANGE: Color32 = Color32::from_rgba_premultiplied(150, 150, 154, 170);
pub(crate) const OUTLINE: Color32 = Color32::from_rgb(255, 110, 210);

pub(crate) fn severity_color(s: Severity) -> Color32 {
    match s {
        Severity::Error => ERROR,
        Severity::Warning => WARNING,
        Severity::Info => INFO,
    }
}

/// How long the findings engine rests after a run of `took` while a report
/// grows, on a machine of `cores`: `took · 2 / cores`. On two cores that is
/// a rest as long as the run, which left the loads and the window the time
/// they were measured to need; on sixteen an eighth of it, so that a
/// capture's findings are about a run behind it, not two or three (a run's
/// range pass uses every core for a while; the rest of it a thread or two).
pub(crate) fn rest_after(took: Duration, cores: usize) -> Duration {
    took.mul_f64(2.0 / cores.max(2) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_rests_less_on_a_bigger_machine() {
        let run = Duration::from_millis(800);
        assert_eq!(rest_after(run, 1), run, "one core rests as two do");
        assert_eq!(rest_after(run, 2), run);
        assert_eq!(rest_after(run, 16), Duration::from_millis(100));
    }

    fn load(name: &str) -> Arc<Trace> {
        Arc::new(crate::loader::load_fixture(name))
    }

    /// While a report grows, a run waits out the rest its last one earned;
    /// the first frame after the rest starts it.
    #[test]
    fn a_growing_reports_engine_rests_after_its_last_run() {
        let trace = load("timing_cases.sqlite");
        let mut timeline = Timeline::new(&trace);
        let mut panel = FindingsPanel::start(&trace);
        panel.wait(&trace, &mut timeline);
        let rest = panel.rest_until.expect("a run earns a rest");
        let took = panel.took.expect("the run's time");
        assert!(rest <= Instant::now() + took, "no longer than the run took");
        // As after a run of an hour (a huge capture's): a snapshot waits.
        panel.rest_until = Some(Instant::now() + Duration::from_secs(3600));
        let newer = load("timing_cases.sqlite");
        let marks = timeline.take_marks(OVERLAY_SOURCE);
        panel.grow(&trace, &newer, marks, &mut timeline);
        assert!(!panel.job.is_running(), "no run while resting");
        assert!(panel.is_pending(), "the newer trace waits its turn");
        assert!(!panel.poll(&newer, &mut timeline));
        assert!(!panel.job.is_running());
        // Rested: the next frame starts it.
        panel.rest_until = Some(Instant::now());
        assert!(panel.poll(&newer, &mut timeline), "started");
        assert!(panel.job.is_running());
        panel.wait(&newer, &mut timeline);
        assert!(!panel.findings.is_empty());
    }
}
