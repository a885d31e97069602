//! The optional "GPU idle — why" row under each GPU: every interval in which
//! the GPU ran nothing, coloured by what the thread that launched the next
//! work was doing meanwhile (`analysis::idle`), with the numbers in a tooltip.
//! The attribution is the findings engine's, offered as each of its runs
//! makes it and taken while the row is wanted (`IdleRows::offer`): the same
//! gaps as the findings', made once. Where the engine has none coming, the row makes
//! its own on a worker, and extends it on one as a capture's snapshots
//! come.

use std::sync::Arc;

use eframe::egui::{Color32, Painter, Pos2, Rect, Ui, pos2};

use crate::analysis::findings::human_ns;
use crate::analysis::idle::{self, Attribution, Cause, Classifier, Gap, IdleSummary, Lanes};
use crate::app::job::Job;
use crate::app::state::events::thread_label;
use crate::app::timeline::view::Mapping;
use crate::model::Trace;

/// The row's label, also its accessible name.
pub const LABEL: &str = "GPU idle — why";

/// The colour of each cause, the same in the row, its tooltip and the range panel.
pub fn cause_color(cause: Cause) -> Color32 {
    match cause {
        Cause::Sync => Color32::from_rgb(220, 70, 60),
        Cause::Alloc => Color32::from_rgb(230, 150, 40),
        Cause::PageableCopy => Color32::from_rgb(190, 90, 200),
        Cause::Launch => Color32::from_rgb(70, 140, 230),
        Cause::OtherCuda => Color32::from_rgb(120, 160, 170),
        Cause::Outside => Color32::from_rgb(110, 190, 90),
        Cause::OsWait => Color32::from_rgb(200, 185, 80),
        Cause::Unknown => Color32::from_gray(130),
    }
}

/// The legend's word for each cause (the tooltip and the range panel say it in full).
pub fn legend_word(cause: Cause) -> &'static str {
    match cause {
        Cause::Sync => "sync",
        Cause::Alloc => "alloc/free",
        Cause::PageableCopy => "pageable copy",
        Cause::Launch => "launch",
        Cause::OtherCuda => "other CUDA",
        Cause::Outside => "CPU work",
        Cause::OsWait => "OS wait",
        Cause::Unknown => "unknown",
    }
}

/// The row's legend, at the right end of `rect` over a background: a swatch and a word per
/// cause. Drawn where it takes at most 70 % of the row (the tooltip names a gap's cause
/// anywhere); returns where it was drawn.
pub fn paint_legend(
    painter: &Painter,
    rect: Rect,
    text: Color32,
    background: Color32,
) -> Option<Rect> {
    let font = eframe::egui::FontId::proportional(11.0);
    let swatch = 9.0;
    let gap = 8.0;
    let entries: Vec<_> = Cause::ALL
        .into_iter()
        .map(|c| {
            let galley = painter.layout_no_wrap(legend_word(c).to_string(), font.clone(), text);
            (c, galley)
        })
        .collect();
    let width: f32 = entries
        .iter()
        .map(|(_, g)| swatch + 3.0 + g.size().x + gap)
        .sum::<f32>()
        + 4.0;
    if width > rect.width() * 0.7 {
        return None;
    }
    let area = Rect::from_min_max(
        pos2(rect.right() - width, rect.top() + 1.0),
        pos2(rect.right(), rect.bottom() - 1.0),
    );
    painter.rect_filled(area, 2.0, background);
    let mut x = area.left() + 4.0;
    let y = area.center().y;
    for (cause, galley) in entries {
        let square = Rect::from_center_size(
            pos2(x + swatch / 2.0, y),
            eframe::egui::vec2(swatch, swatch),
        );
        painter.rect_filled(square, 1.0, cause_color(cause));
        x += swatch + 3.0;
        let size = galley.size();
        painter.galley(pos2(x, y - size.y / 2.0), galley, text);
        x += size.x + gap;
    }
    Some(area)
}

/// The attribution, once computed, and the job computing it; the selected
/// range's summary likewise.
#[derive(Default)]
pub struct IdleRows {
    pub attribution: Option<Arc<Attribution>>,
    /// The trace the attribution was made for: a range's summary walks its
    /// calls, so that gaps and calls are of one state of a growing report.
    attributed: Option<Arc<Trace>>,
    /// The attribution shown is of an earlier state of a growing report
    /// (a capture's snapshot came since): it stays on screen while a
    /// worker extends it to the newest.
    behind: bool,
    job: Job<(Attribution, Arc<Trace>)>,
    /// The selected NVTX range's idle time per GPU and cause, for the
    /// details panel: summing a range of millions of gaps takes longer than
    /// a frame, so it is worked out on a worker too.
    range_summary: Option<((i64, i64), Vec<IdleSummary>)>,
    range_job: Job<((i64, i64), Vec<IdleSummary>)>,
    range_asked: Option<(i64, i64)>,
    /// The row was wanted at the last frame (see [`IdleRows::prepare`]):
    /// the findings engine's attribution is taken when offered, declined
    /// otherwise (tens of bytes a gap, kept for a row nobody looks at).
    wanted: bool,
    /// Attributions the row made or extended on its own workers (tests:
    /// while the findings engine has one coming, it makes none).
    pub own_runs: usize,
    /// Gaps painted in the last frame.
    pub painted: usize,
}

impl IdleRows {
    /// Takes the attribution its worker finished, and starts one if the
    /// rows are `shown` and theirs is missing or behind `trace`, unless the
    /// findings engine has one coming (`engine_coming`: it runs on `trace`,
    /// or will, and offers its attribution, see [`IdleRows::offer`]). True
    /// while an attribution is awaited.
    pub fn prepare(&mut self, shown: bool, trace: &Arc<Trace>, engine_coming: bool) -> bool {
        self.wanted = shown;
        if !shown {
            return false;
        }
        if let Some((a, of)) = self.job.take() {
            self.adopt(Arc::new(a), of, trace);
        }
        if self.attribution.is_some() && !self.behind {
            return false;
        }
        if self.job.is_running() || engine_coming {
            return true;
        }
        let shared = trace.clone();
        let earlier = self.attribution.clone();
        self.own_runs += 1;
        self.job.start("sightline-idle", None, move |cancel| {
            // The shown attribution stays the window's: its full blocks of
            // gaps are shared, not copied.
            let attribution = match earlier {
                Some(earlier) => Arc::unwrap_or_clone(earlier).extended(&shared, cancel),
                None => idle::attribute(&shared, Lanes::Device, cancel),
            };
            Some((attribution.ok()?, shared))
        })
    }

    /// The findings engine's attribution of `of`, a state of the report
    /// whose newest is `trace`: shown if the row is wanted, `of` is newer
    /// than the state it shows, and the attribution's events are at their
    /// indexes in `trace` (`of` is `trace`, or `trace` grew from it).
    pub fn offer(&mut self, attribution: Arc<Attribution>, of: &Arc<Trace>, trace: &Trace) {
        let holds = std::ptr::eq(&**of, trace) || attribution.fits(trace);
        if self.wanted && holds {
            self.adopt(attribution, of.clone(), trace);
        } else {
            crate::app::job::drop_off_thread(attribution);
        }
    }

    /// Shows `attribution`, of `of`, unless the row shows one of a state as
    /// new already (a worker's and the engine's may come in either order).
    fn adopt(&mut self, attribution: Arc<Attribution>, of: Arc<Trace>, trace: &Trace) {
        let newer =
            (self.attributed.as_ref()).is_none_or(|shown| of.event_count() > shown.event_count());
        if !newer {
            crate::app::job::drop_off_thread((attribution, of));
            return;
        }
        let replaced = (
            self.attribution.replace(attribution),
            self.attributed.replace(of),
        );
        // The old state may be the last reference to a snapshot.
        crate::app::job::drop_off_thread(replaced);
        // The range's summary was of the old attribution.
        self.range_summary = None;
        self.range_job = Job::default();
        self.range_asked = None;
        // A snapshot may have come since: then it is behind still.
        self.behind = !self
            .attributed
            .as_ref()
            .is_some_and(|t| std::ptr::eq(&**t, trace));
    }

    /// Blocks until the attribution is in (tests, screenshots).
    pub fn wait(&mut self, trace: &Arc<Trace>) {
        while self.prepare(true, trace, false) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// A newer state of the report: the attribution shown stays until its
    /// extension to `trace` is in (the job extending it to an earlier state,
    /// if any, finishes first), where `trace` holds its events at the same
    /// indexes; else the row starts over (its gaps would name other threads
    /// and operations).
    pub fn grown(&mut self, trace: &Trace) {
        if self.attribution.as_ref().is_some_and(|a| !a.fits(trace)) {
            crate::app::job::drop_off_thread(std::mem::take(self));
            return;
        }
        self.behind = self.attribution.is_some() || self.job.is_running();
    }

    /// The idle time of `range` per GPU and cause, summed on a worker from
    /// the attribution shown and the trace it was made for: None until it is
    /// in (`repaint` is woken then).
    pub fn range_summary(
        &mut self,
        range: (i64, i64),
        repaint: Option<eframe::egui::Context>,
    ) -> Option<&[IdleSummary]> {
        let (a, of) = (self.attribution.clone()?, self.attributed.clone()?);
        if let Some(done) = self.range_job.take() {
            self.range_summary = Some(done);
        }
        if !matches!(&self.range_summary, Some((r, _)) if *r == range)
            && (self.range_asked != Some(range) || !self.range_job.is_running())
        {
            self.range_asked = Some(range);
            self.range_job.start(
                "sightline-idle-range",
                repaint.map(crate::app::job::repaint),
                move |_| {
                    let classifier = Classifier::new(&of);
                    let window = [range];
                    Some((range, idle::summarize(&classifier, &a, Some(&window[..]))))
                },
            );
        }
        match &self.range_summary {
            Some((r, s)) if *r == range => Some(s),
            _ => None,
        }
    }

    /// A selected NVTX range's idle time, per GPU and cause: what the details
    /// panel shows under the range (a spinner until the attribution, then
    /// the range's summary, is in).
    pub fn range_details(&mut self, ui: &mut Ui, trace: &Trace, range: (i64, i64)) {
        ui.separator();
        ui.strong(LABEL);
        let waiting = |ui: &mut Ui, what: &str| {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.weak(what);
            });
        };
        if self.attribution.is_none() {
            waiting(ui, "attributing idle time…");
            return;
        }
        let Some(summaries) = self.range_summary(range, Some(ui.ctx().clone())) else {
            waiting(ui, "summing the range's idle time…");
            return;
        };
        if summaries.iter().all(|s| s.idle == 0) {
            ui.weak("No GPU was idle during this range.");
            return;
        }
        for s in summaries.iter().filter(|s| s.idle > 0) {
            ui.label(format!("GPU {}: {}", s.lane, s.sentence()));
            for c in &s.causes {
                ui.colored_label(
                    cause_color(c.cause),
                    format!(
                        "  {:.0} % {} ({} in {} gaps)",
                        s.idle_percent(c),
                        c.cause.label(),
                        human_ns(c.time),
                        c.gaps
                    ),
                );
            }
            // Whose time it was, when more than one thread's: the range's
            // thread, and a thread it handed work to (or that handed it).
            if s.threads.len() > 1 {
                let parts: Vec<String> = (s.threads.iter())
                    .map(|&(t, ns)| format!("{} {}", thread_label(trace, t as usize), human_ns(ns)))
                    .collect();
                ui.weak(format!("  the time of: {}", parts.join(", ")))
                    .on_hover_text(
                        "each gap is the time of the thread that launched the work after it, \
                         or, until its wait began, of a thread that waited for that thread \
                         (work handed off, as loss.backward() to PyTorch's autograd thread)",
                    );
            }
        }
    }

    /// Blocks until the selected range's summary is in (tests).
    pub fn wait_range(&mut self) {
        if let Some(done) = self.range_job.wait() {
            self.range_summary = Some(done);
        }
    }

    /// Paints device `device`'s gaps that are in view: one box per gap, and
    /// per pixel at most one (the gap at that pixel), so a zoomed-out view of
    /// millions of gaps costs a search per pixel, not a box per gap.
    pub fn paint(&mut self, painter: &Painter, device: u32, rect: Rect, map: &Mapping) {
        let Some(a) = &self.attribution else {
            return;
        };
        let (v0, v1) = (map.t(rect.left()), map.t(rect.right()));
        let gaps = a.gaps_in(device, v0.floor() as i64, v1.ceil() as i64 + 1);
        let px_ns = (1.0 / map.px_per_ns).max(1.0);
        let mut at = 0;
        let top = rect.top() + 2.0;
        let bottom = rect.bottom() - 2.0;
        while let Some(g) = gaps.get(at) {
            let x0 = map.x(g.start).max(rect.left() - 1.0);
            let x1 = map.x(g.end).min(rect.right() + 1.0).max(x0 + 1.0);
            painter.rect_filled(
                Rect::from_min_max(pos2(x0, top), pos2(x1, bottom)),
                0.0,
                cause_color(g.dominant),
            );
            self.painted += 1;
            // Skip to the first gap that reaches the next pixel.
            let next_t = (g.end as f64).max(map.t(x1) + px_ns * 0.5);
            let skip = gaps.count_from(at + 1, |n| (n.end as f64) < next_t);
            at += 1 + skip;
        }
    }

    /// The gap of device `device` under `pos` in its row.
    pub fn gap_at(&self, device: u32, map: &Mapping, pos: Pos2) -> Option<Gap> {
        let a = self.attribution.as_ref()?;
        let t = map.t(pos.x);
        let tol = 2.0 / map.px_per_ns;
        let near = a.gaps_in(
            device,
            (t - tol).floor() as i64,
            (t + tol).ceil() as i64 + 1,
        );
        near.iter()
            .min_by(|a, b| {
                let d = |g: &Gap| {
                    if (g.start as f64) <= t && t <= g.end as f64 {
                        0.0
                    } else {
                        (g.start as f64 - t).abs().min((g.end as f64 - t).abs())
                    }
                };
                d(a).total_cmp(&d(b))
            })
            .copied()
    }
}

/// A cause as its functions' line words it: "4.2 ms outside CUDA: …".
fn functions_label(cause: Cause) -> &'static str {
    match cause {
        Cause::Outside => "outside CUDA",
        Cause::OsWait => "waiting in OS calls",
        Cause::Sync => "blocked in syncs",
        other => other.label(),
    }
}

/// The tooltip of a gap: its length, and the time per cause with the calls.
pub fn tooltip(ui: &mut Ui, trace: &Trace, gap: &Gap) {
    let classifier = Classifier::new(trace);
    let attribution = Attribution::of_gap(*gap);
    ui.strong(format!(
        "GPU {} idle {}",
        gap.lane,
        human_ns(gap.end.saturating_sub(gap.start))
    ));
    for s in idle::summarize(&classifier, &attribution, None) {
        for c in &s.causes {
            let names: Vec<String> = c
                .calls
                .iter()
                .take(3)
                .map(|(n, t)| format!("{n} {}", human_ns(*t)))
                .collect();
            ui.colored_label(
                cause_color(c.cause),
                format!(
                    "{:.0} % {} — {}{}",
                    s.idle_percent(c),
                    c.cause.label(),
                    human_ns(c.time),
                    if names.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", names.join(", "))
                    }
                ),
            );
            // Which code the thread ran (or waited in) meanwhile: the attribution names it
            // from the thread's samples.
            if let Some(top) = &c.functions {
                ui.label(format!(
                    "    {} {}: {} ({} samples)",
                    human_ns(c.time),
                    functions_label(c.cause),
                    top.phrase(),
                    top.samples
                ));
            }
        }
    }
    if let Some(thread) = gap.thread.and_then(|t| trace.threads.get(t as usize)) {
        ui.weak(format!(
            "the thread that launched the next work: tid {}",
            thread.tid
        ));
    }
    if let Some((by, waited_from)) = gap.handed_by
        && (by as usize) < trace.threads.len()
    {
        ui.weak(format!(
            "handed off by {}: the gap's first {}, until it began to wait, are its time",
            thread_label(trace, by as usize),
            human_ns(waited_from.min(gap.end).saturating_sub(gap.start).max(0)),
        ));
    }
}
