//! The GPU work of a selected NVTX range (the "layer view"): its kernels and
//! copies grouped by name with count, time and share, and how the end of
//! that work compares with the end of the range — a timing range that ends
//! before its GPU work measured the launches, not the work.

use eframe::egui::{self, Color32, RichText, Ui};

use crate::analysis::projection::gpu_work;
use crate::app::widgets::{cells, format};
use crate::model::{GpuOpKind, Ns, StrId, Trace};

/// One row of the summary: operations of one kind and name.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkRow {
    pub kind: GpuOpKind,
    pub name: StrId,
    pub count: u64,
    pub total: Ns,
}

/// The summary of one range's GPU work, computed once per selection.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeWork {
    pub nvtx: u32,
    /// By total time, longest first.
    pub rows: Vec<WorkRow>,
    pub total: Ns,
    pub gpu_start: Option<Ns>,
    pub gpu_end: Option<Ns>,
}

impl RangeWork {
    pub fn compute(trace: &Trace, nvtx: u32) -> RangeWork {
        let mut rows: Vec<WorkRow> = Vec::new();
        let mut span: Option<(Ns, Ns)> = None;
        for op in gpu_work(trace, nvtx) {
            let spans = trace.gpu_spans(op.kind);
            let i = op.index as usize;
            let (Some((s, e)), Some(&name)) = (spans.get(i), spans.name.get(i)) else {
                continue;
            };
            span = Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
            // Linear search: a range's distinct names are few.
            match rows
                .iter_mut()
                .find(|r| r.kind == op.kind && r.name == name)
            {
                Some(r) => {
                    r.count += 1;
                    r.total += e - s;
                }
                None => rows.push(WorkRow {
                    kind: op.kind,
                    name,
                    count: 1,
                    total: e - s,
                }),
            }
        }
        rows.sort_by(|a, b| b.total.cmp(&a.total).then(b.count.cmp(&a.count)));
        RangeWork {
            nvtx,
            total: rows.iter().map(|r| r.total).sum(),
            rows,
            gpu_start: span.map(|s| s.0),
            gpu_end: span.map(|s| s.1),
        }
    }

    /// How far the GPU work ends after the range (negative: before); `None`
    /// for a range without an end (a capture's range still open: the end
    /// it is counted to, the report's last NVTX time, is not its end).
    pub fn overhang(&self, trace: &Trace) -> Option<Ns> {
        let i = self.nvtx as usize;
        if trace.nvtx.is_unended(i) {
            return None;
        }
        let (_, end) = trace.nvtx.spans.get(i)?;
        Some(self.gpu_end? - end)
    }
}

/// The sentence about the end of the range's GPU work.
pub fn overhang_text(overhang: Ns) -> String {
    if overhang > 0 {
        format!(
            "GPU work of this range ends {} after it",
            format::duration(overhang)
        )
    } else {
        format!(
            "GPU work of this range ends {} before it",
            format::duration(-overhang)
        )
    }
}

/// Caches the summary of the selected range between frames.
#[derive(Default)]
pub struct NvtxGpu {
    work: Option<RangeWork>,
}

impl NvtxGpu {
    /// Draws the GPU work of NVTX range `nvtx` (details panel).
    pub fn ui(&mut self, ui: &mut Ui, trace: &Trace, nvtx: u32) {
        if self.work.as_ref().is_none_or(|w| w.nvtx != nvtx) {
            self.work = Some(RangeWork::compute(trace, nvtx));
        }
        let Some(work) = &self.work else { return };
        ui.separator();
        ui.strong("GPU work of this range");
        if work.rows.is_empty() {
            ui.weak("No kernels or copies were launched inside this range on its thread.");
            return;
        }
        if let Some(o) = work.overhang(trace) {
            let text = RichText::new(overhang_text(o));
            let text = if o > 0 {
                text.color(Color32::from_rgb(235, 95, 55)).strong()
            } else {
                text
            };
            ui.label(text).on_hover_text(
                "the last kernel or copy launched inside the range, against the range's end; \
                 work that ends after the range was not waited for, so the range timed the launches",
            );
        }
        // The numbers keep their columns whatever the panel's width; the
        // name takes what is left, cut in the middle (whole on hover): the
        // kernel's own name and the end tell a library's kernels apart.
        let rows: Vec<(String, [String; 3])> = work
            .rows
            .iter()
            .take(50)
            .map(|r| {
                let share = if work.total > 0 {
                    r.total as f64 * 100.0 / work.total as f64
                } else {
                    0.0
                };
                // Copies and sets are named by nsys's labels ("[CUDA memcpy …]").
                (
                    trace.name(r.name).to_string(),
                    [
                        format::grouped(r.count as i64),
                        format::duration(r.total),
                        format!("{share:.1} %"),
                    ],
                )
            })
            .collect();
        let headers = ["count", "time", "share"];
        let gap = ui.spacing().item_spacing.x;
        let widths: Vec<f32> = (0..3)
            .map(|c| {
                rows.iter()
                    .map(|r| cells::text_width(ui, &r.1[c], egui::TextStyle::Monospace))
                    .fold(
                        cells::text_width(ui, headers[c], egui::TextStyle::Body),
                        f32::max,
                    )
            })
            .collect();
        let numbers: f32 = widths.iter().sum::<f32>() + gap * 3.0;
        // The panel's visible width, not the widest line above (a long
        // value may have widened the scrolled content past it).
        let visible = ui.clip_rect().right().min(ui.max_rect().right()) - ui.cursor().min.x;
        let name_w = (visible - numbers).max(60.0);
        ui.horizontal(|ui| {
            cells::styled_name(ui, name_w, "operation", |t| RichText::new(t).weak(), false);
            for (h, w) in headers.iter().zip(&widths) {
                cells::number(ui, *w, RichText::new(*h).weak());
            }
        });
        for (name, numbers) in &rows {
            ui.horizontal(|ui| {
                cells::name(ui, name_w, name.as_str(), false);
                for (text, w) in numbers.iter().zip(&widths) {
                    cells::number(ui, *w, RichText::new(text).monospace());
                }
            });
        }
        if work.rows.len() > 50 {
            ui.weak(format!("… and {} more", work.rows.len() - 50));
        }
    }
}
