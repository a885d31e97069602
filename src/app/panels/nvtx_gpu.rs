//! The GPU work of a selected NVTX range (the "layer view"): its kernels and
//! copies grouped by name and launching thread with count, time and share,
//! and how the end of that work compares with the end of the range — a
//! timing range that ends before its GPU work measured the launches, not the
//! work. The work is the range's by [`crate::analysis::range_work`]'s rule:
//! its own thread's launches, and those another thread of its process made
//! while its thread waited in it (PyTorch's autograd thread during
//! `loss.backward()`), each row labelled with the thread that launched it.

use eframe::egui::{self, Color32, RichText, Ui};

use crate::analysis::range_work::{other_threads_launches, range_ops, range_thread};
use crate::app::state::events::thread_label;
use crate::app::widgets::{cells, format};
use crate::model::{GpuOpKind, Ns, StrId, ThreadIdx, Trace};

/// One row of the summary: operations of one kind and name launched by one thread.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkRow {
    pub kind: GpuOpKind,
    pub name: StrId,
    /// The thread that launched them.
    pub thread: ThreadIdx,
    pub count: u64,
    pub total: Ns,
}

/// Work another thread launched for the range while its thread waited.
#[derive(Clone, Debug, PartialEq)]
pub struct HandedOff {
    pub thread: ThreadIdx,
    pub ops: u64,
    pub total: Ns,
    /// The OS runtime calls the range's thread waited in, by name.
    pub waits: Vec<StrId>,
}

/// The summary of one range's GPU work, computed once per selection.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeWork {
    pub nvtx: u32,
    /// The range's own thread (None for a range ended on another thread).
    pub thread: Option<ThreadIdx>,
    /// By total time, longest first.
    pub rows: Vec<WorkRow>,
    pub total: Ns,
    pub gpu_start: Option<Ns>,
    pub gpu_end: Option<Ns>,
    /// Per other thread, what it launched for the range while its thread waited.
    pub handed_off: Vec<HandedOff>,
    /// Per other thread of the process, the ops it launched inside the range
    /// but not while the range's thread waited: not counted (see the rule).
    pub left_out: Vec<(ThreadIdx, usize)>,
}

impl RangeWork {
    pub fn compute(trace: &Trace, nvtx: u32) -> RangeWork {
        let mut rows: Vec<WorkRow> = Vec::new();
        let mut span: Option<(Ns, Ns)> = None;
        let mut handed_off: Vec<HandedOff> = Vec::new();
        for owned in range_ops(trace, nvtx) {
            let (op, thread) = (owned.op, owned.thread);
            let spans = trace.gpu_spans(op.kind);
            let i = op.index as usize;
            let (Some((s, e)), Some(&name)) = (spans.get(i), spans.name.get(i)) else {
                continue;
            };
            span = Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
            if let Some(wait) = owned.wait {
                let h = match handed_off.iter().position(|h| h.thread == thread) {
                    Some(at) => &mut handed_off[at],
                    None => {
                        handed_off.push(HandedOff {
                            thread,
                            ops: 0,
                            total: 0,
                            waits: Vec::new(),
                        });
                        handed_off.last_mut().expect("just pushed")
                    }
                };
                h.ops += 1;
                h.total += e - s;
                let wait_name = trace.osrt.spans.name[wait as usize];
                if !h.waits.contains(&wait_name) {
                    h.waits.push(wait_name);
                }
            }
            // Linear search: a range's distinct names are few.
            match rows
                .iter_mut()
                .find(|r| r.kind == op.kind && r.name == name && r.thread == thread)
            {
                Some(r) => {
                    r.count += 1;
                    r.total += e - s;
                }
                None => rows.push(WorkRow {
                    kind: op.kind,
                    name,
                    thread,
                    count: 1,
                    total: e - s,
                }),
            }
        }
        rows.sort_by(|a, b| {
            (b.total.cmp(&a.total))
                .then(b.count.cmp(&a.count))
                .then(a.thread.cmp(&b.thread))
        });
        RangeWork {
            nvtx,
            thread: range_thread(trace, nvtx),
            total: rows.iter().map(|r| r.total).sum(),
            rows,
            gpu_start: span.map(|s| s.0),
            gpu_end: span.map(|s| s.1),
            handed_off,
            left_out: other_threads_launches(trace, nvtx),
        }
    }

    /// Row `row`'s part of the range's GPU time, in percent.
    pub fn share(&self, row: &WorkRow) -> f64 {
        if self.total > 0 {
            row.total as f64 * 100.0 / self.total as f64
        } else {
            0.0
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

/// The sentence about work another thread launched for the range: whose,
/// how much, while the range's thread waited in what.
pub fn handed_off_text(trace: &Trace, h: &HandedOff) -> String {
    let waits: Vec<&str> = h.waits.iter().map(|&w| trace.name(w)).collect();
    format!(
        "Includes {} op{} ({}) launched by {} while this range's thread waited in {}",
        format::grouped(h.ops as i64),
        if h.ops == 1 { "" } else { "s" },
        format::duration(h.total),
        thread_label(trace, h.thread as usize),
        waits.join(", "),
    )
}

/// The sentence about another thread's work inside the range left uncounted.
pub fn left_out_text(trace: &Trace, thread: ThreadIdx, ops: usize) -> String {
    format!(
        "Not counted: {} op{} {} launched inside this range while its thread was not waiting \
         for another thread (no pthread_cond_wait, sem_wait or join recorded{})",
        format::grouped(ops as i64),
        if ops == 1 { "" } else { "s" },
        thread_label(trace, thread as usize),
        if trace.osrt.spans.is_empty() {
            "; this report has no OS runtime calls: nsys --trace=osrt"
        } else {
            ""
        },
    )
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
            threads_note(ui, trace, work);
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
        threads_note(ui, trace, work);
        work_table(ui, trace, work);
    }
}

/// What other threads launched for the range (counted) or beside it (not).
fn threads_note(ui: &mut Ui, trace: &Trace, work: &RangeWork) {
    for h in &work.handed_off {
        ui.label(handed_off_text(trace, h)).on_hover_text(
            "work another thread of this process launched while this range's thread was \
             blocked waiting for a thread inside the range counts as the range's (shares and \
             totals below); nsys's NVTX projection (nvtx_gpu_proj_sum, nvtx_kern_sum) counts \
             only the range's own thread's launches",
        );
    }
    for &(thread, ops) in &work.left_out {
        ui.weak(left_out_text(trace, thread, ops));
    }
}

/// The table of the range's work, a section per launching thread (the
/// range's own first), each headed by the thread: operation, count, time and
/// share of the whole range's GPU time (the shares of all sections add up).
fn work_table(ui: &mut Ui, trace: &Trace, work: &RangeWork) {
    let shown = &work.rows[..work.rows.len().min(50)];
    // The numbers keep their columns whatever the panel's width; the
    // name takes what is left, cut in the middle (whole on hover): the
    // kernel's own name and the end tell a library's kernels apart.
    let numbers = |r: &WorkRow| {
        [
            format::grouped(r.count as i64),
            format::duration(r.total),
            format!("{:.1} %", work.share(r)),
        ]
    };
    let headers = ["count", "time", "share"];
    let gap = ui.spacing().item_spacing.x;
    let widths: Vec<f32> = (0..headers.len())
        .map(|c| {
            shown
                .iter()
                .map(|r| cells::text_width(ui, &numbers(r)[c], egui::TextStyle::Monospace))
                .fold(
                    cells::text_width(ui, headers[c], egui::TextStyle::Body),
                    f32::max,
                )
        })
        .collect();
    let total_w: f32 = widths.iter().sum::<f32>() + gap * headers.len() as f32;
    // The panel's visible width, not the widest line above (a long
    // value may have widened the scrolled content past it).
    let visible = ui.clip_rect().right().min(ui.max_rect().right()) - ui.cursor().min.x;
    let name_w = (visible - total_w).max(60.0);
    ui.horizontal(|ui| {
        cells::styled_name(ui, name_w, "operation", |t| RichText::new(t).weak(), false);
        for (h, w) in headers.iter().zip(&widths) {
            cells::number(ui, *w, RichText::new(*h).weak());
        }
    });
    for thread in section_order(work) {
        thread_heading(ui, trace, work, thread);
        for r in shown.iter().filter(|r| r.thread == thread) {
            ui.horizontal(|ui| {
                cells::name(ui, name_w, trace.name(r.name), false);
                for (text, w) in numbers(r).iter().zip(&widths) {
                    cells::number(ui, *w, RichText::new(text).monospace());
                }
            });
        }
    }
    if work.rows.len() > 50 {
        ui.weak(format!("… and {} more", work.rows.len() - 50));
    }
}

/// The launching threads of the range's work: its own first, then the
/// others by their GPU time, most first.
fn section_order(work: &RangeWork) -> Vec<ThreadIdx> {
    let mut threads: Vec<(ThreadIdx, Ns)> = Vec::new();
    for r in &work.rows {
        match threads.iter_mut().find(|(t, _)| *t == r.thread) {
            Some((_, total)) => *total += r.total,
            None => threads.push((r.thread, r.total)),
        }
    }
    threads.sort_by_key(|&(t, total)| (Some(t) != work.thread, std::cmp::Reverse(total), t));
    threads.into_iter().map(|(t, _)| t).collect()
}

/// The heading of one thread's section: which thread launched the rows
/// under it, and whether it is the range's own.
fn thread_heading(ui: &mut Ui, trace: &Trace, work: &RangeWork, thread: ThreadIdx) {
    let label = thread_label(trace, thread as usize);
    if Some(thread) == work.thread {
        ui.label(RichText::new(thread_heading_text(&label, true)).strong());
    } else {
        ui.label(
            RichText::new(thread_heading_text(&label, false))
                .strong()
                .color(Color32::from_rgb(95, 160, 235)),
        )
        .on_hover_text(
            "launched by another thread of the process while this range's thread was blocked \
             waiting for a thread inside the range: the range's work too",
        );
    }
}

/// "launched by python3 [1710] (this range's thread)".
pub fn thread_heading_text(label: &str, own: bool) -> String {
    if own {
        format!("launched by {label} (this range's thread)")
    } else {
        format!("launched by {label} (while this range's thread waited)")
    }
}
