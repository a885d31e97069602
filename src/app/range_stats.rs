//! The bottom panel: `nsys stats` summaries for exactly the selected time span,
//! computed on a worker thread (a 10M-event trace must not stall a frame).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use eframe::egui::{self, RichText, Ui};

use crate::analysis::stats::{self, Report, Table, TimeRange};
use crate::model::Trace;

/// The summaries the panel shows, in tab order.
pub const REPORTS: [Report; 6] = [
    Report::CudaApiSum,
    Report::CudaGpuKernSum,
    Report::CudaGpuMemTimeSum,
    Report::CudaGpuMemSizeSum,
    Report::NvtxSum,
    Report::OsrtSum,
];

type Done = (u64, Vec<(Report, Table)>, Duration);

#[derive(Default)]
pub struct RangeStats {
    pub range: Option<TimeRange>,
    pub tables: Vec<(Report, Table)>,
    pending: Option<Receiver<Done>>,
    generation: u64,
    pub tab: usize,
    /// Column and descending?
    sort: Option<(usize, bool)>,
    pub took: Option<Duration>,
}

impl RangeStats {
    pub fn request(&mut self, trace: Arc<Trace>, range: TimeRange) {
        self.generation += 1;
        let generation = self.generation;
        self.range = Some(range);
        self.tables.clear();
        self.sort = None;
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.pending = Some(rx);
        let spawned = std::thread::Builder::new()
            .name("sightline-stats".into())
            .spawn(move || {
                let t0 = Instant::now();
                let tables = REPORTS
                    .iter()
                    .map(|&r| (r, stats::compute(&trace, r, Some(range))))
                    .collect();
                let _ = tx.send((generation, tables, t0.elapsed()));
            });
        if spawned.is_err() {
            self.pending = None;
        }
    }

    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Takes a finished result; true when something arrived.
    pub fn poll(&mut self) -> bool {
        let Some(rx) = &self.pending else {
            return false;
        };
        match rx.try_recv() {
            Ok(done) => self.accept(done),
            Err(crossbeam_channel::TryRecvError::Empty) => false,
            Err(crossbeam_channel::TryRecvError::Disconnected) => {
                self.pending = None;
                false
            }
        }
    }

    /// Blocks until the current request is done (tests, benchmarks).
    pub fn wait(&mut self) {
        while let Some(rx) = &self.pending {
            match rx.recv() {
                Ok(done) => {
                    self.accept(done);
                }
                Err(_) => self.pending = None,
            }
        }
    }

    fn accept(&mut self, (generation, tables, took): Done) -> bool {
        if generation != self.generation {
            return false;
        }
        self.pending = None;
        self.tables = tables;
        self.took = Some(took);
        true
    }

    pub fn clear(&mut self) {
        self.generation += 1;
        self.pending = None;
        self.range = None;
        self.tables.clear();
    }

    /// Draws the tabs and the chosen table; returns the name of a clicked row.
    pub fn ui(&mut self, ui: &mut Ui) -> Option<String> {
        let range = self.range?;
        let mut clicked = None;
        ui.horizontal(|ui| {
            ui.strong(format!(
                "Range {} – {} ({})",
                range.start,
                range.end,
                super::format::duration(range.end - range.start)
            ));
            if self.is_pending() {
                ui.spinner();
                ui.label("computing…");
            } else if let Some(t) = self.took {
                ui.weak(format!("computed in {:.1} ms", t.as_secs_f64() * 1e3));
            }
        });
        ui.horizontal_wrapped(|ui| {
            for (i, r) in REPORTS.iter().enumerate() {
                if ui.selectable_label(self.tab == i, r.title()).clicked() {
                    self.tab = i;
                    self.sort = None;
                }
            }
        });
        ui.separator();
        let (_, table) = self.tables.get(self.tab)?;
        if table.rows.is_empty() {
            ui.label("No events of this kind start in the range.");
            return None;
        }
        let mut order: Vec<usize> = (0..table.rows.len()).collect();
        if let Some((c, desc)) = self.sort {
            order.sort_by(|&a, &b| {
                let (x, y) = (&table.rows[a].get(c), &table.rows[b].get(c));
                let ord = match (x.and_then(|v| v.as_f64()), y.and_then(|v| v.as_f64())) {
                    (Some(p), Some(q)) => p.total_cmp(&q),
                    _ => x.map(|v| v.to_string()).cmp(&y.map(|v| v.to_string())),
                };
                if desc { ord.reverse() } else { ord }
            });
        }
        let name_col = table.columns.iter().position(|c| c == "Name");
        let mut new_sort = None;
        egui::ScrollArea::both().auto_shrink(false).show(ui, |ui| {
            egui::Grid::new(("stats", self.tab))
                .striped(true)
                .num_columns(table.columns.len())
                .show(ui, |ui| {
                    for (c, name) in table.columns.iter().enumerate() {
                        let arrow = match self.sort {
                            Some((sc, true)) if sc == c => " v",
                            Some((sc, false)) if sc == c => " ^",
                            _ => "",
                        };
                        if ui
                            .button(RichText::new(format!("{name}{arrow}")).strong())
                            .clicked()
                        {
                            let desc = !matches!(self.sort, Some((sc, true)) if sc == c);
                            new_sort = Some((c, desc));
                        }
                    }
                    ui.end_row();
                    for &r in &order {
                        for (c, cell) in table.rows[r].iter().enumerate() {
                            let text = cell.to_string();
                            if Some(c) == name_col {
                                if ui
                                    .link(&text)
                                    .on_hover_text("highlight its instances")
                                    .clicked()
                                {
                                    clicked = Some(text);
                                }
                            } else {
                                ui.label(text);
                            }
                        }
                        ui.end_row();
                    }
                });
        });
        if new_sort.is_some() {
            self.sort = new_sort;
        }
        clicked
    }
}
