//! The bottom panel: `nsys stats` summaries for exactly the selected time span,
//! computed on a worker thread (a 10M-event trace must not stall a frame).
//! Tables arrive one by one, in tab order, as the worker finishes them.
//!
//! The span counts its events by a [`RangeRule`] the user picks: those that
//! start in it (the default, `sightline stats --range`'s rule), or every event
//! that overlaps it with its duration clipped, so a range inside a long
//! `poll` shows that `poll`. Each table can be copied (tab-separated) or
//! saved as CSV with `sightline stats`'s headings and raw numbers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, RichText, Ui};

use crate::analysis::stats::{self, Cell, RangeRule, Report, Table, TimeRange};
use crate::app::job::Job;
use crate::app::state::command::{Command, RowClick};
use crate::app::state::selection::FollowsRange;
use crate::app::widgets::format;
use crate::app::widgets::table_export::TableExport;
use crate::model::Trace;

/// The summaries the panel shows, in tab order.
pub const REPORTS: [Report; 9] = [
    Report::CudaGpuKernSum,
    Report::CudaApiSum,
    Report::CudaGpuMemTimeSum,
    Report::CudaGpuMemSizeSum,
    Report::NvtxSum,
    Report::OsrtSum,
    Report::CudaApiGpuSum,
    Report::CudaKernExecSum,
    Report::GpuIdleSum,
];

/// Columns whose text names events: clicking one steps through its instances.
const NAME_COLUMNS: [&str; 5] = ["Name", "Range", "Operation", "API Name", "Kern Name"];

enum Msg {
    Table(Report, Table),
    Done(Duration),
}

#[derive(Default)]
pub struct RangeStats {
    /// Finished tables, in the order they arrived (tab order).
    pub tables: Vec<(Report, Table)>,
    /// The tables being computed, each sent as it is done (a newer range
    /// cancels them).
    job: Job<Msg>,
    pub tab: usize,
    /// Column and descending?
    sort: Option<(usize, bool)>,
    pub took: Option<Duration>,
    /// The row last clicked, drawn highlighted.
    pub active: Option<RowClick>,
    /// Which events of the range the tables count.
    pub rule: RangeRule,
    /// The report the tables are computed from, kept to recompute them
    /// when the rule changes.
    trace: Option<Arc<Trace>>,
    /// Copy and Save CSV of the table shown.
    pub export: TableExport,
    /// A newer state of the report that came while the tables were being
    /// taken from an older one, and the range: they are taken from it once
    /// those are in. A capture's snapshots may come faster than a big range's
    /// tables: starting again at each would never finish one.
    grown: Option<(Arc<Trace>, TimeRange)>,
}

/// The panel follows the document's selected range: each new range's tables are taken at
/// once (the older ones cancelled), and no range drops them.
impl FollowsRange for RangeStats {
    fn range_changed(&mut self, trace: &Arc<Trace>, range: Option<TimeRange>) {
        match range {
            Some(r) => self.request(trace.clone(), r),
            None => self.clear(),
        }
    }
}

impl RangeStats {
    pub fn request(&mut self, trace: Arc<Trace>, range: TimeRange) {
        self.grown = None;
        self.tables.clear();
        self.sort = None;
        self.active = None;
        self.export.forget();
        self.compute(trace, range);
    }

    /// The report grew (a capture, a report being opened): the same range's
    /// tables are taken again from `trace`, once those under way are in.
    /// The old tables stay on screen, sorted as they were, until each new
    /// one replaces its own.
    pub fn refresh(&mut self, trace: Arc<Trace>, range: Option<TimeRange>) {
        let Some(range) = range else {
            return;
        };
        if self.job.is_running() {
            self.trace = Some(trace.clone());
            self.grown = Some((trace, range));
        } else {
            self.compute(trace, range);
        }
    }

    fn compute(&mut self, trace: Arc<Trace>, range: TimeRange) {
        let rule = self.rule;
        self.trace = Some(trace.clone());
        self.took = None;
        self.job
            .start_stream("sightline-stats", None, move |cancel, emit| {
                let t0 = Instant::now();
                for r in REPORTS {
                    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                        return;
                    }
                    // Every report of the panel takes both rules (a test
                    // checks it); were one not to, it would show no rows
                    // rather than numbers by another rule.
                    let table = stats::compute_in(&trace, r, Some(range), rule).unwrap_or_default();
                    if !emit.send(Msg::Table(r, table)) {
                        return;
                    }
                }
                emit.send(Msg::Done(t0.elapsed()));
            });
    }

    pub fn is_pending(&self) -> bool {
        self.job.is_running()
    }

    /// Takes finished tables; true when something arrived.
    pub fn poll(&mut self) -> bool {
        let mut any = false;
        while let Some(msg) = self.job.take_next() {
            self.accept(msg);
            any = true;
        }
        any
    }

    /// Blocks until the current request is done (tests, benchmarks).
    pub fn wait(&mut self) {
        while let Some(msg) = self.job.wait_next() {
            self.accept(msg);
        }
    }

    fn accept(&mut self, msg: Msg) {
        match msg {
            Msg::Table(r, t) => match self.tables.iter_mut().find(|(old, _)| *old == r) {
                Some(slot) => slot.1 = t,
                None => self.tables.push((r, t)),
            },
            Msg::Done(took) => {
                self.took = Some(took);
                if let Some((trace, range)) = self.grown.take() {
                    self.compute(trace, range);
                }
            }
        }
    }

    pub fn clear(&mut self) {
        self.job.cancel();
        self.grown = None;
        self.trace = None;
        self.tables.clear();
        self.active = None;
    }

    /// Counts the selected `range`'s events by `rule` from now on, recomputing the
    /// tables (on the worker, as any request) when it changes.
    pub fn set_rule(&mut self, rule: RangeRule, range: Option<TimeRange>) {
        if self.rule == rule {
            return;
        }
        self.rule = rule;
        if let (Some(trace), Some(range)) = (self.trace.clone(), range) {
            self.request(trace, range);
        }
    }

    pub fn table(&self, report: Report) -> Option<&Table> {
        self.tables
            .iter()
            .find(|(r, _)| *r == report)
            .map(|(_, t)| t)
    }

    /// The `--range` argument (with `--overlapping` for that rule) that
    /// makes `sightline stats` compute these tables.
    pub fn cli_range(&self, range: Option<TimeRange>) -> Option<String> {
        let flag = match self.rule {
            RangeRule::StartsInside => "",
            RangeRule::Overlapping => " --overlapping",
        };
        range.map(|r| format!("--range {}:{}{flag}", r.start, r.end))
    }

    /// Draws the tabs and the chosen table of the selected `range`; returns what a click on a
    /// row asked.
    pub fn ui(&mut self, ui: &mut Ui, range: TimeRange) -> Option<Command> {
        let mut clicked = None;
        // Wrapped, not one line: a line that overflows widens the panel's ui, and everything
        // below it (the report tabs too) would then run under the details panel.
        self.range_header_ui(ui, range);
        self.rule_and_tabs_ui(ui, range);
        ui.separator();
        let report = REPORTS[self.tab.min(REPORTS.len() - 1)];
        // Borrowed from the field, not through `self.table`, so the export
        // state can be borrowed beside it.
        let Some(table) = self
            .tables
            .iter()
            .find(|(r, _)| *r == report)
            .map(|(_, t)| t)
        else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("computing…");
            });
            // Keep the panel's height while the tables are recomputed (a new
            // rule, a new range), so it does not shrink and jump back.
            ui.allocate_space(ui.available_size());
            return None;
        };
        let rows = table.rows.len();
        self.export.ui(ui, &report.file_stem(), rows, || {
            let shown = table.clone();
            Box::new(move || shown)
        });
        if table.rows.is_empty() {
            ui.label(match self.rule {
                RangeRule::StartsInside => "No events of this kind start in the range.",
                RangeRule::Overlapping => "No events of this kind overlap the range.",
            });
            ui.allocate_space(ui.available_size());
            return None;
        }
        let mut order: Vec<usize> = (0..table.rows.len()).collect();
        if let Some((c, desc)) = self.sort {
            order.sort_by(|&a, &b| {
                let (x, y) = (&table.rows[a].get(c), &table.rows[b].get(c));
                let ord = match (x.and_then(|v| v.as_f64()), y.and_then(|v| v.as_f64())) {
                    (Some(p), Some(q)) => p.total_cmp(&q),
                    // By reference: sorting runs every frame, and a name can be megabytes.
                    _ => text_of(x).cmp(text_of(y)),
                };
                if desc { ord.reverse() } else { ord }
            });
        }
        let kernel_col = report.kernel_name_column(table);
        let name_cols: Vec<bool> = table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| kernel_col == Some(i) || NAME_COLUMNS.contains(&c.as_str()))
            .collect();
        // Numbers are right-aligned, as in `nsys stats` tables, so digits line up.
        let numeric: Vec<bool> = (0..table.columns.len())
            .map(|c| table.is_numeric_column(c))
            .collect();
        let right = egui::Layout::right_to_left(egui::Align::Center);
        let active = self.active.clone();
        let mut new_sort = None;
        egui::ScrollArea::both().auto_shrink(false).show(ui, |ui| {
            egui::Grid::new(("stats", self.tab))
                .striped(true)
                .num_columns(table.columns.len())
                .min_col_width(40.0)
                .show(ui, |ui| {
                    for (c, name) in table.columns.iter().enumerate() {
                        let arrow = match self.sort {
                            Some((sc, true)) if sc == c => " v",
                            Some((sc, false)) if sc == c => " ^",
                            _ => "",
                        };
                        let header = |ui: &mut Ui| {
                            ui.add(
                                egui::Button::new(RichText::new(format!("{name}{arrow}")).strong())
                                    .frame(false),
                            )
                            .on_hover_text("sort")
                        };
                        let header = if numeric[c] {
                            ui.with_layout(right, header).inner
                        } else {
                            header(ui)
                        };
                        if header.clicked() {
                            let desc = !matches!(self.sort, Some((sc, true)) if sc == c);
                            new_sort = Some((c, desc));
                        }
                    }
                    ui.end_row();
                    for &r in &order {
                        for (c, cell) in table.rows[r].iter().enumerate() {
                            let text = cell.to_string();
                            if name_cols.get(c).copied().unwrap_or(false) {
                                let is_active = active.as_ref().is_some_and(|a| {
                                    a.report == report && a.name == text
                                });
                                // Shown clipped; the click carries the full name.
                                let shown = crate::app::widgets::format::clip(&text, crate::app::widgets::format::MAX_LABEL_CHARS);
                                let rt = if is_active {
                                    RichText::new(shown.as_ref()).color(Color32::from_rgb(255, 200, 0)).strong()
                                } else {
                                    RichText::new(shown.as_ref())
                                };
                                if ui
                                    .link(rt)
                                    .on_hover_text(
                                        "highlight its instances in the range; click again for the next one",
                                    )
                                    .clicked()
                                {
                                    clicked = Some(RowClick {
                                        report,
                                        name: text,
                                        kernel: kernel_col == Some(c),
                                    });
                                }
                            } else if cell.as_f64().is_some() {
                                // With thousands separators, as `sightline stats` prints tables.
                                ui.with_layout(right, |ui| ui.monospace(cell.grouped()));
                            } else {
                                // Text columns such as "Kernel Name" can hold megabyte names.
                                ui.monospace(crate::app::widgets::format::clip(&text, crate::app::widgets::format::MAX_LABEL_CHARS));
                            }
                        }
                        ui.end_row();
                    }
                });
        });
        if new_sort.is_some() {
            self.sort = new_sort;
        }
        if let Some(c) = &clicked {
            self.active = Some(c.clone());
        }
        clicked.map(Command::StepInstances)
    }

    /// The range's bounds (exact on hover), a button copying its `--range` argument, and
    /// whether its tables are still being computed.
    fn range_header_ui(&self, ui: &mut Ui, range: TimeRange) {
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!(
                "Range {} – {}  ({})",
                format::duration(range.start),
                format::duration(range.end),
                format::duration(range.end - range.start)
            ))
            .on_hover_text(format!(
                "start {} ns\nend {} ns (excluded)\nduration {} ns",
                format::grouped(range.start),
                format::grouped(range.end),
                format::grouped(range.end - range.start)
            ));
            ui.label("·");
            ui.label("session clock");
            if let Some(arg) = self.cli_range(Some(range))
                && ui
                    .button(RichText::new(format!("Copy {arg}")).monospace())
                    .on_hover_text(
                        "for `sightline stats FILE --report … --range`; gives the same numbers",
                    )
                    .clicked()
            {
                ui.ctx().copy_text(arg);
            }
            if self.is_pending() {
                ui.spinner();
                ui.label("computing…");
            } else if let Some(t) = self.took {
                ui.weak(format!("computed in {:.1} ms", t.as_secs_f64() * 1e3));
            }
        });
    }

    /// The counting rule's choice, and a tab per report with its row count.
    fn rule_and_tabs_ui(&mut self, ui: &mut Ui, range: TimeRange) {
        let mut rule = self.rule;
        ui.horizontal_wrapped(|ui| {
            ui.label("Count:");
            for choice in [RangeRule::StartsInside, RangeRule::Overlapping] {
                ui.selectable_value(&mut rule, choice, choice.label());
            }
            ui.label("·");
            ui.label(self.rule.explanation());
        });
        self.set_rule(rule, Some(range));
        ui.horizontal_wrapped(|ui| {
            for (i, r) in REPORTS.iter().enumerate() {
                let n = self.table(*r).map(|t| t.rows.len());
                let text = match n {
                    Some(n) => format!("{} ({n})", r.title()),
                    None => r.title().to_string(),
                };
                let text = if n == Some(0) {
                    RichText::new(text).weak()
                } else {
                    RichText::new(text)
                };
                if ui
                    .selectable_label(self.tab == i, text)
                    .on_hover_text(r.name())
                    .clicked()
                {
                    self.tab = i;
                    self.sort = None;
                    self.export.forget();
                }
            }
        });
    }
}

/// The text of a text cell ("" for any other), for sorting without copies.
fn text_of<'a>(cell: &Option<&'a Cell>) -> &'a str {
    match cell {
        Some(Cell::Text(t)) => t,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str) -> Arc<Trace> {
        Arc::new(crate::loader::load_fixture(name))
    }

    /// A snapshot that comes while a range's tables are taken does not
    /// start them again: those under way finish (a capture's snapshots may
    /// come faster than a big range's tables), then the tables are taken
    /// from the newest.
    #[test]
    fn tables_under_way_finish_before_a_grown_report_is_taken() {
        let (older, newer) = (load("streams.sqlite"), load("sync_timing.sqlite"));
        let range = TimeRange {
            start: 0,
            end: i64::MAX / 2,
        };
        let kernels = |t: &Trace| {
            stats::compute_in(t, Report::CudaGpuKernSum, Some(range), RangeRule::default())
                .expect("kernels")
        };
        let mut panel = RangeStats::default();
        panel.request(older.clone(), range);
        assert!(panel.is_pending());
        panel.refresh(newer.clone(), Some(range));
        panel.refresh(newer.clone(), Some(range));
        // Up to the end of the older report's tables (whose end starts the
        // newer's).
        loop {
            let msg = panel.job.wait_next().expect("the older report's tables");
            let done = matches!(msg, Msg::Done(_));
            panel.accept(msg);
            if done {
                break;
            }
        }
        assert_eq!(panel.table(Report::CudaGpuKernSum), Some(&kernels(&older)));
        assert!(panel.is_pending(), "the newer report's tables are taken");
        panel.wait();
        assert_eq!(panel.table(Report::CudaGpuKernSum), Some(&kernels(&newer)));
        assert!(!panel.is_pending());
    }
}
