//! The "CPU samples" panel: what the CPU ran in the selected range, from
//! nsys's samples: a flat profile (functions by samples, self and total) and
//! a flame graph (the samples' call stacks merged by function, callers above
//! callees), Python frames marked as Python. Both are
//! `analysis::cpu_profile`'s, computed on a worker for each new range (a
//! range of millions of samples must not stall a frame). A click on a flame
//! node shows its whole stack and its counts.

use std::sync::Arc;

use eframe::egui::{
    self, Align2, Color32, FontId, Rect, RichText, Sense, Ui, WidgetInfo, pos2, vec2,
};

use crate::analysis::cpu_profile::{
    FlameTree, FlatProfile, FunctionKey, SampleScope, flame_tree, flat_profile, function_label,
    samples_by_thread,
};
use crate::app::job::Job;
use crate::app::state::events::thread_label;
use crate::app::state::selection::FollowsRange;
use crate::app::widgets::format;
use crate::loader::{READING_CPU_SAMPLES, cpu_samples_to_come};
use crate::model::{FrameKind, ThreadIdx, TimeRange, Trace};

/// The panel's heading, also its accessible name.
pub const TITLE: &str = "CPU samples";

/// Rows of the flat profile shown (the rest are counted).
const FLAT_ROWS: usize = 300;
/// A flame node's height.
const NODE_H: f32 = 17.0;
/// Nodes narrower than this are not drawn (their callers hold their samples).
const MIN_NODE_W: f32 = 1.0;

/// A range's profile, as the worker made it.
pub struct CpuProfile {
    pub range: TimeRange,
    /// The thread it is of (None: every thread).
    pub thread: Option<ThreadIdx>,
    /// Every thread's samples in the range, most first (what the thread menu offers).
    pub threads: Vec<(ThreadIdx, u64)>,
    pub flat: FlatProfile,
    pub flame: FlameTree,
    /// The report it was made of (its names).
    pub trace: Arc<Trace>,
}

#[derive(Default)]
pub struct CpuProfilePanel {
    /// The selected range's profile, once in.
    pub profile: Option<CpuProfile>,
    job: Job<CpuProfile>,
    /// The range asked for last (None: no range, or a report without samples).
    asked: Option<TimeRange>,
    /// The flame node clicked last (its stack is shown).
    pub selected_node: Option<u32>,
    /// The report's samples are still being read: the range asked waits for them.
    pub reading_samples: bool,
    /// The thread the profile is narrowed to (None: every thread); kept from range to range.
    pub thread: Option<ThreadIdx>,
}

/// The panel follows the document's selected range: each new range's profile is taken on a
/// worker (the one before cancelled); no range, or a report without samples, drops it.
impl FollowsRange for CpuProfilePanel {
    fn range_changed(&mut self, trace: &Arc<Trace>, range: Option<TimeRange>) {
        let reading = cpu_samples_to_come(trace);
        self.clear();
        self.reading_samples = reading && range.is_some();
        match range.filter(|_| trace.cpu.sample_count() > 0) {
            Some(r) if !reading => self.request(trace.clone(), r),
            // Asked again once the samples are in (the document passes the trace with them).
            _ if self.reading_samples => self.asked = range,
            _ => {}
        }
    }
}

/// A function as the panel writes it: `build_batch (train.py:14)`.
pub fn plain_label(trace: &Trace, key: FunctionKey, line: u32) -> String {
    function_label(trace, key, line).replace('`', "")
}

/// A flame node's colour: Python frames blue-green, native ones warm, varied
/// by name so that neighbours differ.
fn node_color(trace: &Trace, key: FunctionKey) -> Color32 {
    let name = trace.name(key.function);
    let h = name
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
    let v = (h % 40) as u8;
    match key.kind {
        FrameKind::Python => Color32::from_rgb(60 + v, 140 + v, 190 + v / 2),
        FrameKind::Native => Color32::from_rgb(200 + v, 110 + v * 2, 50 + v),
    }
}

impl CpuProfilePanel {
    /// Takes `range`'s profile of `trace` on a worker.
    pub fn request(&mut self, trace: Arc<Trace>, range: TimeRange) {
        self.asked = Some(range);
        self.selected_node = None;
        let thread = self.thread;
        self.job.start("sightline-cpu-profile", None, move |_| {
            let every_thread = SampleScope::range(range.start, range.end);
            let threads = samples_by_thread(&trace.cpu, &every_thread);
            let scope = match thread {
                Some(t) => every_thread.threads(vec![t]),
                None => every_thread,
            };
            let flat = flat_profile(&trace, &scope);
            let flame = flame_tree(&trace, &scope);
            Some(CpuProfile {
                range,
                thread,
                threads,
                flat,
                flame,
                trace,
            })
        });
    }

    /// Narrows the profile to `thread` (None: every thread), taken again for the same range.
    pub fn show_thread(&mut self, thread: Option<ThreadIdx>) {
        self.thread = thread;
        if let (Some(range), Some(p)) = (self.asked, self.profile.as_ref()) {
            let trace = p.trace.clone();
            self.request(trace, range);
        }
    }

    pub fn clear(&mut self) {
        self.job.cancel();
        self.asked = None;
        self.selected_node = None;
        if let Some(old) = self.profile.take() {
            crate::app::job::drop_off_thread(old);
        }
    }

    /// Whether the panel has a range to show.
    pub fn is_shown(&self) -> bool {
        self.asked.is_some()
    }

    pub fn is_pending(&self) -> bool {
        self.job.is_running()
    }

    /// Takes the worker's profile; true when one arrived.
    pub fn poll(&mut self) -> bool {
        match self.job.take() {
            Some(p) => {
                self.adopt(p);
                true
            }
            None => false,
        }
    }

    /// Blocks until the profile asked for is in (tests).
    pub fn wait(&mut self) {
        if let Some(p) = self.job.wait() {
            self.adopt(p);
        }
    }

    fn adopt(&mut self, profile: CpuProfile) {
        if Some(profile.range) == self.asked
            && profile.thread == self.thread
            && let Some(old) = self.profile.replace(profile)
        {
            crate::app::job::drop_off_thread(old);
        }
    }

    /// The flame node whose function is `name` on the path with the most
    /// samples (tests, screenshots: the node a user would click).
    pub fn node_named(&self, name: &str) -> Option<u32> {
        let p = self.profile.as_ref()?;
        (0..p.flame.nodes.len() as u32)
            .filter(|&i| {
                p.flame.nodes[i as usize]
                    .function
                    .is_some_and(|k| p.trace.name(k.function) == name)
            })
            .max_by_key(|&i| p.flame.nodes[i as usize].total)
    }

    /// The panel: a heading, the flat profile on the left, the flame graph on the right and a
    /// clicked node's stack under it.
    pub fn ui(&mut self, ui: &mut Ui) {
        if self.poll() {
            ui.ctx().request_repaint();
        }
        if self.is_pending() {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
        }
        if self.reading_samples {
            ui.horizontal(|ui| {
                ui.strong(TITLE);
                ui.spinner();
                ui.weak(READING_CPU_SAMPLES);
            });
            ui.allocate_space(ui.available_size());
            return;
        }
        let Some(p) = self
            .profile
            .as_ref()
            .filter(|p| Some(p.range) == self.asked && p.thread == self.thread)
        else {
            ui.horizontal(|ui| {
                ui.strong(TITLE);
                ui.spinner();
                ui.weak("profiling the range's samples…");
            });
            ui.allocate_space(ui.available_size());
            return;
        };
        let mut pick = None;
        ui.horizontal_wrapped(|ui| {
            ui.strong(TITLE);
            ui.label(format!(
                "{} samples in the range ({}) of",
                format::grouped(p.flat.samples as i64),
                format::duration(p.range.end - p.range.start)
            ));
            pick = thread_menu(ui, p);
            ui.label("Python frames where a thread has them");
        });
        if let Some(thread) = pick {
            self.show_thread(thread);
            return;
        }
        if p.flat.samples == 0 {
            ui.weak("No samples were taken in this range.");
            ui.allocate_space(ui.available_size());
            return;
        }
        let mut clicked = None;
        egui::Panel::left("cpu_flat_profile")
            .resizable(true)
            .default_size((ui.available_width() * 0.38).max(200.0))
            .show(ui, |ui| flat_ui(ui, p));
        egui::CentralPanel::default().show(ui, |ui| {
            // Always two lines, so that a click does not move the graph under the pointer.
            match self.selected_node {
                Some(node) => node_details(ui, p, node),
                None => {
                    ui.label("Python frames blue, native frames orange; callers above callees.");
                    ui.weak("Click a node for its whole stack and counts.");
                }
            }
            ui.separator();
            egui::ScrollArea::vertical()
                .id_salt("cpu_flame_scroll")
                .auto_shrink([false, false])
                .show(ui, |ui| clicked = flame_ui(ui, p, self.selected_node));
        });
        if let Some(node) = clicked {
            self.selected_node = (self.selected_node != Some(node)).then_some(node);
        }
    }
}

/// The menu of threads whose samples the profile counts: every thread, or one of those
/// sampled in the range (with its count). What was picked, if anything was.
fn thread_menu(ui: &mut Ui, p: &CpuProfile) -> Option<Option<ThreadIdx>> {
    let name = |t: ThreadIdx| match p.trace.threads.get(t as usize) {
        Some(_) => thread_label(&p.trace, t as usize),
        None => format!("thread #{t}"),
    };
    let shown = p.thread.map_or_else(|| "every thread".to_string(), name);
    let mut picked = None;
    egui::ComboBox::from_id_salt("cpu_profile_thread")
        .selected_text(shown)
        .show_ui(ui, |ui| {
            if ui
                .selectable_label(p.thread.is_none(), "every thread")
                .clicked()
            {
                picked = Some(None);
            }
            for &(t, n) in &p.threads {
                let text = format!("{} · {}", name(t), format::grouped(n as i64));
                if ui.selectable_label(p.thread == Some(t), text).clicked() {
                    picked = Some(Some(t));
                }
            }
        });
    picked.filter(|&t| t != p.thread)
}

/// The flat profile: functions by self samples, with their total.
fn flat_ui(ui: &mut Ui, p: &CpuProfile) {
    let flat = &p.flat;
    egui::ScrollArea::vertical()
        .id_salt("cpu_flat_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            egui::Grid::new("cpu_flat")
                .striped(true)
                .num_columns(4)
                .show(ui, |ui| {
                    for h in ["Function", "Self", "Total", ""] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for row in flat.rows.iter().take(FLAT_ROWS) {
                        let label = plain_label(&p.trace, row.key, row.line);
                        ui.label(format::clip(&label, 120).as_ref())
                            .on_hover_text(label.as_str());
                        ui.label(format!(
                            "{} ({:.1} %)",
                            row.self_samples,
                            flat.percent(row.self_samples)
                        ));
                        ui.label(format!(
                            "{} ({:.1} %)",
                            row.total_samples,
                            flat.percent(row.total_samples)
                        ));
                        ui.weak(match row.key.kind {
                            FrameKind::Python => "Python",
                            FrameKind::Native => "native",
                        });
                        ui.end_row();
                    }
                });
            if flat.rows.len() > FLAT_ROWS {
                ui.weak(format!("… {} more functions", flat.rows.len() - FLAT_ROWS));
            }
        });
}

/// The flame graph: the root ("all samples") on top, each node's callees
/// under it, widths by samples. Every node drawn is a widget (hover, click,
/// and a name for assistive technology and tests). Returns the node clicked.
fn flame_ui(ui: &mut Ui, p: &CpuProfile, selected: Option<u32>) -> Option<u32> {
    let flame = &p.flame;
    let root_total = flame.root().total.max(1) as f32;
    let width = ui.available_width().max(50.0);
    // Depth of the deepest node drawn, for the height to allocate.
    let mut stack: Vec<(u32, f32, f32, usize)> = vec![(FlameTree::ROOT, 0.0, width, 0)];
    let mut placed: Vec<(u32, f32, f32, usize)> = Vec::new();
    while let Some((id, x, w, depth)) = stack.pop() {
        let Some(node) = flame.node(id) else {
            continue;
        };
        placed.push((id, x, w, depth));
        let mut cx = x;
        for &c in &node.children {
            let Some(child) = flame.node(c) else {
                continue;
            };
            let cw = width * child.total as f32 / root_total;
            if cw >= MIN_NODE_W {
                stack.push((c, cx, cw, depth + 1));
            }
            cx += cw;
        }
    }
    let depth = placed.iter().map(|n| n.3).max().unwrap_or(0) + 1;
    let (area, _) = ui.allocate_exact_size(vec2(width, depth as f32 * NODE_H), Sense::hover());
    let painter = ui.painter_at(area);
    let mut clicked = None;
    for (id, x, w, d) in placed {
        let Some(node) = flame.node(id) else {
            continue;
        };
        let rect = Rect::from_min_size(
            pos2(area.left() + x, area.top() + d as f32 * NODE_H),
            vec2(w, NODE_H - 1.0),
        );
        let label = match node.function {
            Some(key) => plain_label(&p.trace, key, node.line),
            None => "all samples".to_string(),
        };
        let fill = match node.function {
            Some(key) => node_color(&p.trace, key),
            None => Color32::from_gray(110),
        };
        painter.rect_filled(rect.shrink2(vec2(0.5, 0.0)), 2.0, fill);
        if selected == Some(id) {
            painter.rect_stroke(
                rect,
                2.0,
                egui::Stroke::new(2.0, Color32::WHITE),
                egui::StrokeKind::Inside,
            );
        }
        if w > 30.0 {
            let fit = ((w - 6.0) / 6.2) as usize;
            let text: String = if label.chars().count() > fit {
                let mut t: String = label.chars().take(fit.saturating_sub(1)).collect();
                t.push('…');
                t
            } else {
                label.clone()
            };
            painter.with_clip_rect(rect).text(
                pos2(rect.left() + 3.0, rect.center().y),
                Align2::LEFT_CENTER,
                text,
                FontId::proportional(11.0),
                Color32::BLACK,
            );
        }
        let counts = format!(
            "{label}: {} of {} samples ({:.1} %), {} self",
            node.total,
            flame.root().total,
            node.total as f32 * 100.0 / root_total,
            node.self_samples
        );
        let resp = ui.interact(rect, ui.scope_id().with(("flame", id)), Sense::click());
        resp.widget_info(|| WidgetInfo::labeled(egui::Role::Button, true, &counts));
        if resp.clicked() {
            clicked = Some(id);
        }
        resp.on_hover_text(counts);
    }
    clicked
}

/// A clicked flame node: its counts and its whole stack, outermost first.
fn node_details(ui: &mut Ui, p: &CpuProfile, id: u32) {
    let flame = &p.flame;
    let Some(node) = flame.node(id) else {
        return;
    };
    let mut path = Vec::new();
    let mut at = id;
    while at != FlameTree::ROOT {
        let Some(n) = flame.node(at) else {
            break;
        };
        if let Some(key) = n.function {
            path.push(plain_label(&p.trace, key, n.line));
        }
        at = n.parent;
    }
    path.reverse();
    let root = flame.root().total.max(1) as f64;
    ui.label(
        RichText::new(format!(
            "{} samples through this call path ({:.1} %), {} with it innermost ({:.1} %)",
            node.total,
            node.total as f64 * 100.0 / root,
            node.self_samples,
            node.self_samples as f64 * 100.0 / root
        ))
        .strong(),
    );
    // One line (cut, whole on hover): the graph under it stays where it was.
    let stack = format!("stack (outermost first): {}", path.join(" > "));
    ui.add(egui::Label::new(stack.as_str()).truncate())
        .on_hover_text(stack.as_str());
}
