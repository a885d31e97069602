//! A span of a job aggregated rank by rank: the `nsys stats` tables of every rank over the same
//! span of the job clock (each rank's own span is the job's less its offset), with a `Rank`
//! column, and the spread per name: the shortest, median and longest total over the ranks and
//! which rank had the longest. Computed on a worker; a newer span cancels the older.

use std::sync::Arc;

use eframe::egui::{self, Ui};

use crate::analysis::ranks::RANK_COLUMN;
use crate::analysis::stats::{self, Cell, RangeRule, Report, Table};
use crate::app::job::Job;
use crate::app::widgets::format;
use crate::model::{Ns, TimeRange, Trace};

/// The reports a span is aggregated over, as tabs.
pub const REPORTS: [Report; 3] = [Report::NvtxSum, Report::CudaGpuKernSum, Report::CudaApiSum];

/// The rows of every rank drawn at most; a span over a big job has many more.
const MAX_ROWS_SHOWN: usize = 300;

/// One name's total over the ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    pub name: String,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// The rank with the longest total.
    pub max_rank: u32,
}

/// The per-rank tables of one span.
#[derive(Default)]
pub struct RankRanges {
    /// The span on the job clock.
    pub span: Option<(Ns, Ns)>,
    pub tab: usize,
    /// Each rank's table of the report shown, in rank order, once in.
    pub tables: Vec<(u32, Table)>,
    job: Job<Vec<(u32, Table)>>,
}

impl RankRanges {
    /// Aggregates `[start, end)` of the job clock over `ranks` (number, report, offset), for the
    /// report of the tab shown.
    pub fn request(&mut self, span: (Ns, Ns), ranks: Vec<(u32, Arc<Trace>, Ns)>) {
        self.span = Some(span);
        self.tables.clear();
        let report = REPORTS[self.tab.min(REPORTS.len() - 1)];
        self.job.start("sightline-job-range", None, move |cancel| {
            let mut out = Vec::with_capacity(ranks.len());
            for (number, trace, offset) in ranks {
                if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                    return None;
                }
                let own = TimeRange {
                    start: span.0 - offset,
                    end: span.1 - offset,
                };
                let table = stats::compute_in(&trace, report, Some(own), RangeRule::StartsInside)
                    .unwrap_or_default();
                out.push((number, table));
            }
            Some(out)
        });
    }

    /// No span any more.
    pub fn clear(&mut self) {
        self.job.cancel();
        self.span = None;
        self.tables.clear();
    }

    /// Takes the tables when they are in; true then.
    pub fn poll(&mut self) -> bool {
        match self.job.take() {
            Some(tables) => {
                self.tables = tables;
                true
            }
            None => false,
        }
    }

    /// Blocks until the tables are in (tests).
    pub fn wait(&mut self) {
        if let Some(tables) = self.job.wait() {
            self.tables = tables;
        }
    }

    pub fn is_pending(&self) -> bool {
        self.job.is_running()
    }

    /// Every rank's rows in one table, a first column `Rank`.
    pub fn joined(&self) -> Table {
        let Some((_, first)) = self.tables.first() else {
            return Table::default();
        };
        let mut columns = vec![RANK_COLUMN.to_string()];
        columns.extend(first.columns.iter().cloned());
        let rows = (self.tables.iter())
            .flat_map(|(rank, t)| {
                t.rows.iter().map(move |row| {
                    std::iter::once(Cell::Int(i64::from(*rank)))
                        .chain(row.iter().cloned())
                        .collect()
                })
            })
            .collect();
        Table { columns, rows }
    }

    /// Per name (the table's `Name` column, `Range` in NVTX reports), its total time over the ranks: shortest, median,
    /// longest and the rank of the longest, longest first. A rank without the name counts 0.
    pub fn spread(&self) -> Vec<Spread> {
        let Some((_, first)) = self.tables.first() else {
            return Vec::new();
        };
        let column = |name: &str| first.columns.iter().position(|c| c == name);
        let name_at = column("Name").or_else(|| column("Range"));
        let (Some(name_at), Some(total_at)) = (name_at, column("Total Time (ns)")) else {
            return Vec::new();
        };
        let mut names: Vec<String> = Vec::new();
        for (_, t) in &self.tables {
            for row in &t.rows {
                let name = row
                    .get(name_at)
                    .map(ToString::to_string)
                    .unwrap_or_default();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        let mut out: Vec<Spread> = names
            .into_iter()
            .map(|name| {
                let mut totals: Vec<(f64, u32)> = (self.tables.iter())
                    .map(|(rank, t)| {
                        let row = t
                            .rows
                            .iter()
                            .find(|r| r.get(name_at).is_some_and(|c| c.to_string() == name));
                        let total = row.and_then(|r| r.get(total_at)).and_then(Cell::as_f64);
                        (total.unwrap_or(0.0), *rank)
                    })
                    .collect();
                totals.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (min, (max, max_rank)) = (totals[0].0, totals[totals.len() - 1]);
                let median = totals[totals.len() / 2].0;
                Spread {
                    name,
                    min,
                    median,
                    max,
                    max_rank,
                }
            })
            .collect();
        out.sort_by(|a, b| b.max.total_cmp(&a.max));
        out
    }

    /// The tabs and the spread, with every rank's rows below; true when a tab was chosen (the
    /// caller asks again for the span).
    pub fn ui(&mut self, ui: &mut Ui) -> bool {
        let Some((start, end)) = self.span else {
            return false;
        };
        let mut chosen = false;
        ui.horizontal(|ui| {
            ui.strong("The span, rank by rank");
            ui.weak(format!(
                "{} – {} on the job clock ({})",
                format::duration(start),
                format::duration(end),
                format::duration(end - start)
            ));
            for (i, r) in REPORTS.iter().enumerate() {
                if ui.selectable_label(self.tab == i, r.title()).clicked() && self.tab != i {
                    self.tab = i;
                    chosen = true;
                }
            }
            if self.is_pending() {
                ui.spinner();
            }
        });
        egui::ScrollArea::vertical()
            .max_height(160.0)
            .show(ui, |ui| {
                egui::Grid::new("job_spread").striped(true).show(ui, |ui| {
                    for title in ["Name", "Shortest", "Median", "Longest", "Longest on"] {
                        ui.strong(title);
                    }
                    ui.end_row();
                    for s in self.spread() {
                        ui.label(format::clip(&s.name, 60));
                        for v in [s.min, s.median, s.max] {
                            ui.label(format::duration(v.round() as Ns));
                        }
                        ui.label(format!("rank {}", s.max_rank));
                        ui.end_row();
                    }
                });
                egui::CollapsingHeader::new(
                    "Every rank's rows (as `sightline stats` prints a job)",
                )
                .show(ui, |ui| {
                    let joined = self.joined();
                    egui::Grid::new("job_span_rows")
                        .striped(true)
                        .show(ui, |ui| {
                            for c in &joined.columns {
                                ui.strong(c.as_str());
                            }
                            ui.end_row();
                            // A few hundred rows here; the command line gives them all.
                            for row in joined.rows.iter().take(MAX_ROWS_SHOWN) {
                                for cell in row {
                                    ui.label(format::clip(&cell.to_string(), 60));
                                }
                                ui.end_row();
                            }
                        });
                });
            });
        chosen
    }
}
