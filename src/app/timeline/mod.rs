//! The timeline: row labels on the left, a ruler on top, lanes of events.
//! Input (zoom, pan, select) changes [`ViewState`]; painting reads it.

pub mod band;
pub mod busy;
pub mod cpu_state_row;
pub mod idle_row;
pub mod lane_bars;
pub mod mark;
pub mod marks;
pub mod metrics_strip;
pub mod overlay;
pub mod paint;
pub mod projection;
pub mod rows;
pub mod sample_row;
pub mod view;

use eframe::egui::{
    self, Color32, CursorIcon, Key, Pos2, Rect, Sense, Stroke, Ui, WidgetInfo, pos2, vec2,
};

use crate::analysis::metrics::units;
use crate::app::state::command::Command;
use crate::app::state::events::{EventRef, Table};
use crate::app::state::selection::Selection;
use crate::app::widgets::colors;
use crate::app::widgets::format;
use crate::model::{Ns, TimeRange, Trace};
pub use mark::{Anchor, Overlay};
pub use marks::Marks;
use rows::{LANE_H, Row, RowKind};
use view::{Mapping, ViewState};

/// The widest the row-label column gets; it takes a fifth of the timeline's
/// width at most, so a small window (or a projector at a large UI zoom) keeps
/// most of its width for the events; long labels are truncated, whole on hover.
const LABEL_W_MAX: f32 = 240.0;
const LABEL_W_MIN: f32 = 72.0;

/// The span of the report's GPU and NVTX work with a margin of 2% each side.
fn activity_view(trace: &Trace) -> Option<(f64, f64)> {
    let (a, b) = trace.activity_span()?;
    // In f64: a report's timestamps can span more than i64 holds (a corrupt or synthetic one).
    let (a, b) = (a as f64, b as f64);
    let pad = (b - a) * 0.02;
    Some((a - pad, b + pad))
}

/// The label column's width for a timeline `width` points wide.
pub fn label_width(width: f32) -> f32 {
    (width * 0.2).clamp(LABEL_W_MIN, LABEL_W_MAX)
}
const RULER_H: f32 = 24.0;
/// Wheel and key steps closer together than this are one undo entry.
const BURST_GAP_S: f64 = 0.6;
/// For how many frames after a selection or a change of the canvas the
/// selected row is scrolled back into view (panels open a frame later).
const KEEP_SELECTION_FRAMES: u8 = 3;

/// What happened this frame that the app must react to.
#[derive(Default)]
pub struct Output {
    /// The rows' response, for views that add to its context menu (see
    /// [`Timeline::context_at`] for where it was opened).
    pub canvas: Option<egui::Response>,
    /// The event a single click landed on (selected or not before it): a
    /// click on the selected kernel reopens its closed panel.
    pub clicked: Option<EventRef>,
    /// What the user asked of the selection this frame (a click, a range dragged out,
    /// Escape), for the document to apply: the timeline only draws the selection.
    pub commands: Vec<Command>,
}

enum Drag {
    None,
    Pan,
    /// A range being dragged out: where it began, and the range so far
    /// (shown, but not selected until the drag ends: every panel follows the
    /// selection, and one frame's range is not worth their work).
    Range(f64, Option<TimeRange>),
}

/// What a lane's activity columns depend on besides its events: the view's mapping and the
/// strip's horizontal extent, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ActivityKey([u64; 4], [u32; 2]);

impl ActivityKey {
    fn of(map: &view::Mapping, strip: Rect) -> ActivityKey {
        ActivityKey(
            [
                map.start.to_bits(),
                map.px_per_ns.to_bits(),
                u64::from(map.left.to_bits()),
                u64::from(map.width.to_bits()),
            ],
            [strip.left().to_bits(), strip.right().to_bits()],
        )
    }
}

pub struct Timeline {
    pub rows: Vec<Row>,
    pub view: ViewState,
    /// Two rows only (a rank of a job, collapsed): the busiest NVTX lane (its iterations and
    /// phases) and each GPU as one lane of activity. Not the user's collapsed rows: theirs come
    /// back when it is expanded.
    pub compact: bool,
    /// Each collapsed lane's activity columns for the view they were made for (by row).
    activity_cache: std::collections::HashMap<usize, (ActivityKey, Vec<(f32, f32)>)>,
    /// Each collapsed lane's busy intervals at every zoom (by row), made the first time it is
    /// drawn collapsed: a view that moves finds its columns without a search per column.
    busy: std::collections::HashMap<usize, busy::BusySummary>,
    history: Vec<(f64, f64)>,
    /// The view the report opened on, to tell whether the user has moved it yet.
    opened_on: (f64, f64),
    /// Input time of the last wheel/W/S/A/D step: a burst of them is one
    /// history entry.
    last_step: f64,
    name_colors: Vec<Color32>,
    /// By `StrId`: names to outline.
    pub highlight: Vec<bool>,
    drag: Drag,
    /// Lane rects of the last frame, by row index, for hit tests and tests.
    pub layout: Vec<(usize, Rect)>,
    pub canvas: Rect,
    /// The whole widget (labels, ruler and rows) in the last frame.
    pub area: Rect,
    /// The bottom of the last row drawn in the last frame (at most the
    /// canvas's): what an image of the timeline shows ends there.
    pub rows_bottom: f32,
    /// Where the rows were last right-clicked: the time under the pointer
    /// and the event there, if any (the context menu acts on them).
    pub context_at: Option<(Ns, Option<EventRef>)>,
    limits: (f64, f64),
    /// Frames left in which the selected row is scrolled back into view.
    keep_selection_frames: u8,
    /// Boxes and busy marks painted in the last frame.
    pub painted: usize,
    /// Every NVTX range's GPU span, computed the first time projection rows
    /// are shown.
    pub projection: Option<projection::Projection>,
    /// Projected ranges drawn in the last frame (NVTX index, overhangs?).
    pub projected_drawn: Vec<(u32, bool)>,
    /// A projection being computed on a worker (big reports).
    projection_job: crate::app::job::Job<projection::Projection>,
    /// The "GPU idle — why" rows' data, computed the first time they are shown.
    pub idle_rows: idle_row::IdleRows,
    /// Marks other views put over the events (see [`overlay`]).
    marks: Vec<Marks>,
    /// Kernels coloured by a chosen metric, under each kernels row (View menu).
    pub metrics_strip: Option<std::sync::Arc<metrics_strip::MetricsStrip>>,
    /// Overlay marks painted in the last frame.
    pub overlays_painted: usize,
    /// The NVTX ranges without an end ([`paint::open_ranges`]), drawn on to
    /// the report's end.
    open_ranges: Vec<u32>,
    /// Where the ruler counts from when no range is selected (session ns;
    /// 0 for `None`): a compare view counts both reports from their
    /// alignment point, so equal labels mean equal positions.
    pub ruler_origin: Option<f64>,
}

/// An arrow from one event box to another: edge to edge (not centre to
/// centre, which would hide under the boxes), with a fixed-size filled head.
fn arrow(painter: &egui::Painter, from: Pos2, to: Pos2, color: Color32) {
    let half = LANE_H / 2.0 - 1.0;
    let dy = if to.y >= from.y { half } else { -half };
    let (a, b) = (from + vec2(0.0, dy), to - vec2(0.0, dy));
    let d = b - a;
    let len = d.length();
    if len < 1.0 {
        return;
    }
    let dir = d / len;
    let normal = vec2(-dir.y, dir.x);
    let head = 9.0f32.min(len);
    let base = b - dir * head;
    painter.line_segment([a, base], Stroke::new(2.0, color));
    painter.add(egui::Shape::convex_polygon(
        vec![b, base + normal * 4.5, base - normal * 4.5],
        color,
        Stroke::NONE,
    ));
}

impl Timeline {
    pub fn new(trace: &Trace) -> Self {
        let (lo, hi) = trace.info.time_range;
        let (lo, hi) = (lo as f64, (hi.max(lo + 1)) as f64);
        let name_colors = trace
            .strings
            .iter()
            .map(|(_, s)| colors::for_name(s))
            .collect();
        let mut view = ViewState::default();
        // Opens on the GPU and NVTX work, not the whole session around it.
        let (start, end) = activity_view(trace).unwrap_or((lo, hi));
        view.set(start, end);
        Timeline {
            rows: rows::build(trace),
            opened_on: (view.start, view.end),
            view,
            history: Vec::new(),
            last_step: f64::NEG_INFINITY,
            name_colors,
            highlight: Vec::new(),
            drag: Drag::None,
            layout: Vec::new(),
            canvas: Rect::NOTHING,
            area: Rect::NOTHING,
            rows_bottom: 0.0,
            context_at: None,
            limits: (lo, hi),
            painted: 0,
            keep_selection_frames: 0,
            compact: false,
            activity_cache: Default::default(),
            busy: Default::default(),
            projection: None,
            projected_drawn: Vec::new(),
            projection_job: Default::default(),
            idle_rows: idle_row::IdleRows::default(),
            marks: Vec::new(),
            metrics_strip: None,
            overlays_painted: 0,
            ruler_origin: None,
            open_ranges: paint::open_ranges(trace),
        }
    }

    /// Takes a newer state of the same report (a capture that grew, a report
    /// being opened): rows, colours and time limits are rebuilt, the view
    /// (times, collapsed and hidden rows, scroll) is kept; the
    /// search's outlines come back with its matches.
    pub fn adopt(&mut self, trace: &Trace) {
        let (lo, hi) = trace.info.time_range;
        self.limits = (lo as f64, hi.max(lo + 1) as f64);
        self.rows = rows::build(trace);
        self.activity_cache.clear();
        self.busy.clear();
        self.open_ranges = paint::open_ranges(trace);
        self.name_colors = trace
            .strings
            .iter()
            .map(|(_, s)| colors::for_name(s))
            .collect();
        // A view nobody has moved opens on the GPU work, as a fresh open of
        // this trace would: a report being opened shows its work once read.
        if self.is_untouched() {
            let (start, end) = activity_view(trace).unwrap_or(self.limits);
            self.view.set(start, end);
            self.opened_on = (self.view.start, self.view.end);
        }
        self.layout.clear();
        self.projection = None;
        self.projection_job.cancel();
        self.idle_rows.grown(trace);
        // Marks name events by index too; their views set them again.
        self.marks.clear();
    }

    /// Makes sure the projection rows have their data when they are shown:
    /// small reports are projected here, big ones on a worker (the rows stay
    /// empty until it is done). True while a worker runs.
    pub fn prepare_projection(&mut self, trace: &std::sync::Arc<Trace>) -> bool {
        /// Below this many CUDA API calls projecting takes a few ms at most.
        const INLINE_CALLS: usize = 200_000;
        if !self.view.show_projection || self.projection.is_some() {
            return false;
        }
        if let Some(p) = self.projection_job.take() {
            self.projection = Some(p);
            return false;
        }
        if self.projection_job.is_running() {
            return true;
        }
        if trace.cuda_api.spans.len() < INLINE_CALLS {
            self.projection = Some(projection::Projection::compute(trace));
            return false;
        }
        let shared = trace.clone();
        let started = self
            .projection_job
            .start("sightline-projection", None, move |_| {
                Some(projection::Projection::compute(&shared))
            });
        if !started {
            // No worker: project here rather than never.
            self.projection = Some(projection::Projection::compute(trace));
        }
        started
    }

    /// The first and last timestamp of the report, the span Home shows.
    pub fn limits(&self) -> (f64, f64) {
        self.limits
    }

    /// Shows the whole report without adding to the Back history (follow
    /// mode calls it on every snapshot).
    pub fn show_all(&mut self) {
        self.view.set(self.limits.0, self.limits.1);
    }

    fn remember(&mut self) {
        let now = (self.view.start, self.view.end);
        if self.history.last() != Some(&now) {
            self.history.push(now);
            if self.history.len() > 100 {
                self.history.remove(0);
            }
        }
    }

    /// Before a step of a continuous zoom or pan: the view before the burst
    /// goes to the history once; steps less than `BURST_GAP_S` apart join it.
    fn remember_step(&mut self, now: f64) {
        if now - self.last_step > BURST_GAP_S {
            self.remember();
        }
        self.last_step = now;
    }

    /// The time at screen x `x` in the last frame's layout.
    pub fn time_at(&self, x: f32) -> f64 {
        Mapping::new(self.canvas, &self.view).t(x)
    }

    /// How many entries Backspace can go back through.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// True while the view is still the one the report opened on: nothing was zoomed,
    /// panned or undone to.
    pub fn is_untouched(&self) -> bool {
        self.history.is_empty() && (self.view.start, self.view.end) == self.opened_on
    }

    pub fn zoom_to(&mut self, start: f64, end: f64) {
        self.remember();
        let pad = ((end - start) * 0.1).max(50.0);
        self.view.set(start - pad, end + pad);
    }

    /// Shows exactly `[start, end)` (Backspace comes back).
    pub fn zoom_to_span(&mut self, start: f64, end: f64) {
        self.remember();
        self.view.set(start, end);
    }

    /// Zooms to the GPU and NVTX work (the whole report when there is none).
    pub fn fit_activity(&mut self, trace: &Trace) {
        self.remember();
        let (start, end) = activity_view(trace).unwrap_or(self.limits);
        self.view.set(start, end);
    }

    /// Centers the view on session time `t`, keeping the zoom.
    pub fn go_to(&mut self, t: f64) {
        self.remember();
        let half = self.view.span() / 2.0;
        self.view.set(t - half, t + half);
    }

    pub fn fit_all(&mut self) {
        self.remember();
        self.view.set(self.limits.0, self.limits.1);
    }

    pub fn back(&mut self) {
        if let Some((s, e)) = self.history.pop() {
            self.view.set(s, e);
        }
    }

    /// The document selected an event: its row is kept on screen for the next frames (the
    /// details panel opening with it may cover it).
    pub fn reveal_selection(&mut self) {
        self.keep_selection_frames = KEEP_SELECTION_FRAMES;
    }

    /// The range drawn: the one being dragged out, else the selected one.
    fn shown_range(&self, selection: &Selection) -> Option<TimeRange> {
        match self.drag {
            Drag::Range(_, Some(dragged)) => Some(dragged),
            _ => selection.range,
        }
    }

    /// Row index and lane rect holding `ev` in the last frame, if it is drawn.
    pub fn lane_of(&self, ev: EventRef) -> Option<(usize, Rect)> {
        self.layout
            .iter()
            .copied()
            .find(|&(r, _)| match &self.rows[r].kind {
                RowKind::Lane { table, track, .. } => {
                    *table == ev.table && track.contains(ev.index)
                }
                _ => false,
            })
    }

    /// Screen point at the middle of an event as last drawn (for tests and arrows).
    pub fn event_pos(&self, trace: &Trace, ev: EventRef) -> Option<Pos2> {
        let (_, rect) = self.lane_of(ev)?;
        let map = Mapping::new(self.canvas, &self.view);
        let l = if ev.table == crate::app::state::events::Table::Nvtx {
            trace
                .nvtx
                .depth
                .get(ev.index as usize)
                .copied()
                .unwrap_or(0)
        } else {
            0
        } as f32;
        let x0 = map.x(ev.start(trace)).max(self.canvas.left());
        let x1 = map.x(paint::drawn_end(trace, ev)).min(self.canvas.right());
        Some(pos2(
            (x0 + x1.max(x0)) / 2.0,
            rect.top() + 1.0 + (l + 0.5) * LANE_H,
        ))
    }

    /// The rows drawn, in order: the compact pair, or every row whose headers are open.
    pub fn visible_rows(&self) -> Vec<usize> {
        if self.compact {
            return self.compact_rows();
        }
        let mut shown = vec![false; self.rows.len()];
        let mut open = vec![false; self.rows.len()];
        let mut out = Vec::new();
        for (i, row) in self.rows.iter().enumerate() {
            let parent_open = row.parent.is_none_or(|p| shown[p] && open[p]);
            let wanted = (self.view.show_projection
                || !matches!(row.kind, RowKind::Projection { .. }))
                && (self.view.show_idle_why || !matches!(row.kind, RowKind::IdleWhy { .. }));
            shown[i] = parent_open && wanted && !self.view.hidden.contains(&row.key);
            open[i] = !self.view.collapsed.contains(&row.key);
            if shown[i] {
                out.push(i);
            }
        }
        out
    }

    /// The rows of [`Timeline::compact`]: the NVTX lane with the most ranges, then the GPUs'
    /// headers (drawn as one lane of activity each).
    fn compact_rows(&self) -> Vec<usize> {
        let nvtx = (self.rows.iter().enumerate())
            .filter_map(|(i, row)| match &row.kind {
                RowKind::Lane { table, track } if *table == Table::Nvtx => Some((i, track.len())),
                _ => None,
            })
            .max_by_key(|&(_, len)| len)
            .map(|(i, _)| i);
        let gpus = (self.rows.iter().enumerate())
            .filter(|(_, row)| row.parent.is_none() && row.key.starts_with('g') && row.is_header())
            .map(|(i, _)| i);
        nvtx.into_iter().chain(gpus).collect()
    }

    /// The height the timeline needs to show its visible rows whole, its ruler included.
    pub fn content_height(&self) -> f32 {
        RULER_H
            + (self.visible_rows().iter())
                .map(|&r| self.rows[r].height())
                .sum::<f32>()
            + 4.0
    }

    /// Whether header row `r` is drawn closed (its activity only).
    fn is_closed(&self, r: usize) -> bool {
        self.compact || self.view.collapsed.contains(&self.rows[r].key)
    }

    /// The lanes below header row `r`, at any depth.
    fn descendant_lanes(&self, r: usize) -> Vec<usize> {
        let under = |mut i: usize| {
            while let Some(p) = self.rows[i].parent {
                if p == r {
                    return true;
                }
                i = p;
            }
            false
        };
        (r + 1..self.rows.len())
            .filter(|&i| matches!(self.rows[i].kind, RowKind::Lane { .. }) && under(i))
            .collect()
    }

    /// The row under `pos` in the last frame's layout, with its rect.
    fn row_at(&self, pos: Pos2) -> Option<(usize, Rect)> {
        self.layout
            .iter()
            .copied()
            .find(|(_, rect)| rect.contains(pos))
    }

    fn hit(&self, trace: &Trace, pos: Pos2) -> Option<EventRef> {
        let map = Mapping::new(self.canvas, &self.view);
        let (r, rect) = self.row_at(pos)?;
        match &self.rows[r].kind {
            RowKind::Lane { table, track, .. } => paint::hit(trace, *table, track, rect, &map, pos)
                .or_else(|| {
                    let nvtx = *table == crate::app::state::events::Table::Nvtx;
                    nvtx.then(|| {
                        paint::hit_open_tail(trace, track, rect, &map, pos, &self.open_ranges)
                    })
                    .flatten()
                }),
            RowKind::Projection { track } => self
                .projection
                .as_ref()
                .and_then(|p| p.hit(trace, track, rect, &map, pos)),
            _ => None,
        }
    }

    /// The metric row under `pos` in the last frame, with its rect.
    fn metric_at(&self, pos: Pos2) -> Option<(rows::MetricRow, Rect)> {
        let (r, rect) = self.row_at(pos)?;
        match &self.rows[r].kind {
            RowKind::Metric(m) => Some((m.clone(), rect)),
            _ => None,
        }
    }

    pub fn ui(&mut self, ui: &mut Ui, trace: &Trace, selection: &Selection) -> Output {
        let mut out = Output::default();
        let full = ui.available_rect_before_wrap();
        let label_w = label_width(full.width());
        let (ruler_rect, canvas, labels) = areas(full, label_w);
        // Panels opening or closing (details, range statistics) change the
        // canvas: the selected row must not end up under them.
        if canvas != self.canvas {
            self.keep_selection_frames = KEEP_SELECTION_FRAMES;
        }
        self.canvas = canvas;
        self.area = full;
        self.projected_drawn.clear();
        self.idle_rows.painted = 0;
        ui.allocate_rect(full, Sense::hover());
        let id = ui.scope_id().with("timeline");
        let ruler_resp = ui.interact(ruler_rect, id.with("ruler"), Sense::click_and_drag());
        let resp = ui.interact(canvas, id.with("canvas"), Sense::click_and_drag());
        let span_text = format::duration(self.view.span() as Ns);
        resp.widget_info(|| {
            WidgetInfo::labeled(
                egui::Role::Canvas,
                true,
                format!("Timeline, {span_text} visible"),
            )
        });

        self.handle_input(ui, (trace, selection), (&resp, &ruler_resp), &mut out);
        out.canvas = Some(resp.clone());

        let visuals = ui.visuals().clone();
        let painter = ui.painter_at(full);
        painter.rect_filled(full, 0.0, visuals.extreme_bg_color);
        let map = Mapping::new(canvas, &self.view);
        // With a range selected, the ruler counts from its start.
        let shown_range = self.shown_range(selection);
        self.paint_ruler(&painter, ruler_rect, &map, shown_range, &visuals);

        // Rows: lay out the visible ones, paint those on screen.
        let order = self.visible_rows();
        let total_h: f32 = order.iter().map(|&r| self.rows[r].height()).sum();
        self.view.scroll_y = self
            .view
            .scroll_y
            .clamp(0.0, (total_h - canvas.height() + 40.0).max(0.0));
        let mut y = canvas.top() - self.view.scroll_y;
        self.layout.clear();
        // Taken for the rows' loop, which lays rows out on `self` as it paints them; put back
        // after it.
        let style_highlight = std::mem::take(&mut self.highlight);
        let name_colors = std::mem::take(&mut self.name_colors);
        let style = paint::LaneStyle {
            name_colors: &name_colors,
            highlight: &style_highlight,
            selected: selection.event,
            related: &selection.related,
            show_names: self.view.show_names,
        };
        let lane_painter = painter.with_clip_rect(canvas);
        // (start, end, device) of the selected kernel, for the metric rows.
        let selected_kernel = selected_kernel(trace, selection);
        let row_paint = RowPaint {
            trace,
            lanes: &lane_painter,
            labels: painter.with_clip_rect(labels),
            map: &map,
            style: &style,
            visuals: &visuals,
            selected_kernel,
        };
        let mut painted = 0;
        let mut toggles = Vec::new();
        let mut hide = None;
        let mut selected_row = None;
        for &r in &order {
            let row = &self.rows[r];
            let h = row.height();
            let row_rect = Rect::from_min_size(pos2(canvas.left(), y), vec2(canvas.width(), h));
            y += h;
            if let (Some(sel), RowKind::Lane { table, track, .. }) = (selection.event, &row.kind)
                && *table == sel.table
                && track.contains(sel.index)
            {
                selected_row = Some(row_rect);
            }
            if row_rect.bottom() < canvas.top() || row_rect.top() > canvas.bottom() {
                continue;
            }
            let label_rect =
                Rect::from_min_size(pos2(labels.left(), row_rect.top()), vec2(label_w, h));
            painter.with_clip_rect(canvas).line_segment(
                [row_rect.left_bottom(), row_rect.right_bottom()],
                Stroke::new(1.0, visuals.faint_bg_color),
            );
            painted += self.paint_row(r, (row_rect, label_rect), &row_paint);
            // The label is a real widget, so AccessKit (and tests) see the row.
            if label_rect.top() >= labels.top() - 1.0 {
                let (toggle, hide_it) = self.row_label(ui, r, label_rect);
                if toggle {
                    toggles.push(self.rows[r].key.clone());
                }
                if hide_it {
                    hide = Some(self.rows[r].key.clone());
                }
            }
        }
        self.highlight = style_highlight;
        self.name_colors = name_colors;
        self.painted = painted;
        if let Some(strip) = &self.metrics_strip {
            strip.legend(
                &lane_painter,
                canvas,
                visuals.text_color(),
                visuals.extreme_bg_color,
            );
        }
        // Where the last row ends on screen: an exported image stops there
        // rather than carrying the empty canvas below the rows.
        // (A window too small for the ruler leaves the canvas upside down: no panic.)
        self.rows_bottom = y.clamp(canvas.top(), canvas.bottom().max(canvas.top()));
        for k in toggles {
            if !self.view.collapsed.remove(&k) {
                self.view.collapsed.insert(k);
            }
        }
        if let Some(k) = hide {
            self.view.hidden.insert(k);
        }
        self.keep_selection_in_view(ui, selected_row);

        // The selected range, shaded over rows and ruler.
        Self::shade_range(
            &painter,
            (full, ruler_rect, canvas),
            &map,
            shown_range,
            &visuals,
        );

        // Over the events, under the arrows and tooltips.
        self.group_bars(trace);
        let lanes = self.lane_rects();
        let slot = |ev: EventRef| self.slot(trace, ev, &map);
        self.overlays_painted = overlay::paint(
            (&self.marks, &lanes, &slot),
            &painter,
            ruler_rect,
            canvas,
            &map,
        );
        if matches!(self.drag, Drag::None)
            && let Some(pos) = ruler_resp.hover_pos()
        {
            let labels = overlay::ruler_labels(&self.marks, ruler_rect, &map, pos);
            overlay::ruler_tooltip(&ruler_resp, &labels);
        }

        // API call ⇄ GPU work: arrows from the call to what it launched.
        self.paint_related_arrows(trace, selection, &painter);

        self.tooltips(trace, &resp, &map, &painter, &visuals);
        out
    }

    /// The ruler, counting from the selected range's start when there is one (else from the
    /// origin the user set), and its ticks' lines down the canvas.
    fn paint_ruler(
        &self,
        painter: &egui::Painter,
        ruler_rect: Rect,
        map: &Mapping,
        shown_range: Option<TimeRange>,
        visuals: &egui::Visuals,
    ) {
        let canvas = self.canvas;
        let origin = shown_range.map_or(self.ruler_origin.unwrap_or(0.0), |r| r.start as f64);
        let ticks = paint::ruler(
            &painter.with_clip_rect(ruler_rect),
            ruler_rect,
            map,
            visuals.text_color(),
            origin,
        );
        for x in ticks {
            painter.with_clip_rect(canvas).line_segment(
                [pos2(x, canvas.top()), pos2(x, canvas.bottom())],
                Stroke::new(1.0, visuals.faint_bg_color),
            );
        }
    }

    /// The selected range, shaded over rows and ruler, with its length at the ruler's foot.
    fn shade_range(
        painter: &egui::Painter,
        (full, ruler_rect, canvas): (Rect, Rect, Rect),
        map: &Mapping,
        shown_range: Option<TimeRange>,
        visuals: &egui::Visuals,
    ) {
        if let Some(TimeRange { start: a, end: b }) = shown_range {
            let (x0, x1) = (map.x(a).max(canvas.left()), map.x(b).min(canvas.right()));
            if x1 > x0 {
                let r = Rect::from_min_max(pos2(x0, full.top()), pos2(x1, full.bottom()));
                painter.rect_filled(r, 0.0, Color32::from_rgba_unmultiplied(80, 140, 255, 40));
                painter.text(
                    pos2(x0 + 3.0, ruler_rect.bottom() + 2.0),
                    egui::Align2::LEFT_TOP,
                    format::duration(b - a),
                    egui::FontId::proportional(12.0),
                    visuals.strong_text_color(),
                );
            }
        }
    }

    /// For a few frames after a selection from elsewhere (a panel, a search), scrolls its row
    /// back into view should it lie under the canvas's edges.
    fn keep_selection_in_view(&mut self, ui: &Ui, selected_row: Option<Rect>) {
        let canvas = self.canvas;
        if self.keep_selection_frames > 0 {
            self.keep_selection_frames -= 1;
            if let Some(rect) = selected_row {
                let margin = 8.0;
                if rect.bottom() > canvas.bottom() - margin {
                    self.view.scroll_y += rect.bottom() - canvas.bottom() + margin;
                    ui.ctx().request_repaint();
                } else if rect.top() < canvas.top() + margin {
                    self.view.scroll_y -= canvas.top() + margin - rect.top();
                    ui.ctx().request_repaint();
                }
            }
        }
    }

    /// Arrows between the selected event and its linked events (an API call ⇄ its GPU work),
    /// from the call to what it launched.
    fn paint_related_arrows(&self, trace: &Trace, selection: &Selection, painter: &egui::Painter) {
        let canvas = self.canvas;
        if let Some(sel) = selection.event
            && let Some(p0) = self.event_pos(trace, sel)
        {
            for &rel in &selection.related {
                if let Some(p1) = self.event_pos(trace, rel) {
                    let (from, to) = if sel.table == crate::app::state::events::Table::Api {
                        (p0, p1)
                    } else {
                        (p1, p0)
                    };
                    arrow(&painter.with_clip_rect(canvas), from, to, colors::RELATED);
                }
            }
        }
    }

    /// Paints row `r`'s events at `row_rect` (and a metric row's scale in its label at
    /// `label_rect`), and lays it out for hit tests; returns the boxes it drew.
    fn paint_row(&mut self, r: usize, (row_rect, label_rect): (Rect, Rect), p: &RowPaint) -> usize {
        let row = &self.rows[r];
        let mut painted = 0;
        match &row.kind {
            RowKind::Header { .. } => {
                p.lanes
                    .rect_filled(row_rect, 0.0, p.visuals.faint_bg_color.gamma_multiply(0.6));
                // Collapsing hides detail, not activity: the header shows
                // where its rows have events.
                if self.is_closed(r) {
                    let strip = row_rect.shrink2(vec2(0.0, 3.0));
                    let color = p.visuals.text_color().gamma_multiply(0.45);
                    let key = ActivityKey::of(p.map, strip);
                    // The children's busy spans as one union, painted once: a GPU's streams
                    // each painting their own spans made thousands of overlapping rectangles
                    // a frame for every collapsed rank.
                    let mut busy: Vec<(f32, f32)> = Vec::new();
                    for child in self.descendant_lanes(r) {
                        if let RowKind::Lane { table, track, .. } = &self.rows[child].kind {
                            // The same view makes the same columns: a frame that only
                            // repaints (a hover, the job's other ranks) reuses them.
                            let spans = match self.activity_cache.get(&child) {
                                Some((k, spans)) if *k == key => spans,
                                _ => {
                                    let summary = (self.busy.entry(child)).or_insert_with(|| {
                                        busy::BusySummary::of(table.spans(p.trace), track)
                                    });
                                    let columns = (strip.left(), strip.right());
                                    let spans = summary
                                        .columns(table.spans(p.trace), track, columns, p.map)
                                        .unwrap_or_else(|| {
                                            paint::activity_spans(
                                                p.trace, *table, track, columns, p.map,
                                            )
                                        });
                                    let entry = self.activity_cache.entry(child);
                                    &entry.insert_entry((key, spans)).into_mut().1
                                }
                            };
                            busy.extend_from_slice(spans);
                        }
                    }
                    painted += paint::activity(p.lanes, &busy::union_of(busy), strip, color);
                }
            }
            RowKind::Lane { table, track } => {
                self.layout.push((r, row_rect));
                painted += paint::lane(p.lanes, p.trace, *table, track, row_rect, p.map, p.style);
                if *table == crate::app::state::events::Table::Nvtx && !self.open_ranges.is_empty()
                {
                    painted += paint::open_tails(
                        p.lanes,
                        p.trace,
                        track,
                        row_rect,
                        p.map,
                        &self.open_ranges,
                        p.style,
                    );
                }
                if *table == crate::app::state::events::Table::Kernel
                    && let Some(strip) = &self.metrics_strip
                {
                    painted += strip.paint(p.lanes, p.trace, track, row_rect, p.map);
                }
            }
            RowKind::IdleWhy { device } => {
                self.layout.push((r, row_rect));
                self.idle_rows.paint(p.lanes, *device, row_rect, p.map);
                // What its colours mean, on the row itself.
                let visuals = p.visuals;
                idle_row::paint_legend(
                    p.lanes,
                    row_rect,
                    visuals.strong_text_color(),
                    visuals.extreme_bg_color.gamma_multiply(0.9),
                );
            }
            RowKind::CpuState { thread } => {
                self.layout.push((r, row_rect));
                painted += cpu_state_row::paint(p.lanes, p.trace, *thread, row_rect, p.map);
            }
            RowKind::Samples { thread } => {
                self.layout.push((r, row_rect));
                painted += sample_row::paint(p.lanes, p.trace, *thread, row_rect, p.map);
            }
            RowKind::Projection { track } => {
                self.layout.push((r, row_rect));
                if let Some(projection) = &self.projection {
                    let drawn = projection.paint(
                        p.lanes,
                        p.trace,
                        track,
                        row_rect,
                        p.map,
                        p.style.name_colors,
                    );
                    self.projected_drawn.extend(drawn);
                }
            }
            RowKind::Metric(m) => {
                self.layout.push((r, row_rect));
                if let Some(s) = p.trace.metrics.get(m.series as usize) {
                    // The selected kernel's span, on its own GPU's samples: what
                    // the kernel panel's sampled averages are taken over.
                    if let Some((start, end)) = p
                        .selected_kernel
                        .filter(|k| k.2 == s.device_id)
                        .map(|k| (k.0, k.1))
                    {
                        let shade = Rect::from_min_max(
                            pos2(p.map.x(start), row_rect.top()),
                            pos2(p.map.x(end).max(p.map.x(start) + 1.0), row_rect.bottom()),
                        );
                        p.lanes
                            .rect_filled(shade, 0.0, colors::SELECTED.gamma_multiply(0.25));
                    }
                    paint::metric(p.lanes, s, m, row_rect, p.map, colors::METRIC);
                    let scale = m.scale_label();
                    // The value scale sits under the name, clear of the chart.
                    p.labels.text(
                        pos2(
                            label_rect.left() + row.indent as f32 * 12.0 + 6.0,
                            label_rect.top() + 19.0,
                        ),
                        egui::Align2::LEFT_TOP,
                        scale,
                        egui::FontId::proportional(10.5),
                        p.visuals.weak_text_color(),
                    );
                }
            }
        }
        painted
    }

    /// Row `r`'s label at `label_rect`: a button (a header's toggles it open or closed) with the
    /// whole name on hover and a context menu to hide the row. Returns (toggle it, hide it).
    fn row_label(&self, ui: &mut Ui, r: usize, label_rect: Rect) -> (bool, bool) {
        let row = &self.rows[r];
        let h = row.height();
        let indent = row.indent as f32 * 12.0;
        let text = match &row.kind {
            RowKind::Header { .. } => {
                let arrow = if self.is_closed(r) { "+" } else { "-" };
                format!("{arrow} {}", row.label)
            }
            _ => row.label.clone(),
        };
        let rect = label_rect.with_min_x(label_rect.left() + indent + 2.0);
        // Clipped: thread/process names come from the report, any length.
        let shown = format::clip(&text, 300);
        let button = egui::Button::new(egui::RichText::new(shown.as_ref()).size(12.0))
            .frame(false)
            .truncate();
        let slot = Rect::from_min_size(rect.min, vec2(rect.width(), h.min(20.0)));
        let builder = egui::UiBuilder::new()
            .max_rect(slot)
            .layout(egui::Layout::left_to_right(egui::Align::Center));
        let long = text.chars().count() > 28;
        // Clipped to the timeline: a row half under the canvas's bottom shows no label below it.
        let area = self.area;
        let mut lr = ui
            .scope_builder(builder, |ui| {
                ui.shrink_clip_rect(area);
                ui.add(button)
            })
            .inner;
        if long {
            lr = lr.on_hover_text(format::clip(&row.label, format::MAX_LABEL_CHARS));
        }
        let mut hide = false;
        lr.context_menu(|ui| hide = ui.button("Hide row").clicked());
        (lr.clicked() && row.is_header(), hide)
    }

    /// The tooltip for what is under the pointer, unless a drag is under way: a metric's value
    /// (with a line at its sample), an idle gap's causes, an event's fields.
    fn tooltips(
        &self,
        trace: &Trace,
        resp: &egui::Response,
        map: &Mapping,
        painter: &egui::Painter,
        visuals: &egui::Visuals,
    ) {
        let canvas = self.canvas;
        // Tooltip for the metric value under the pointer.
        if matches!(self.drag, Drag::None)
            && let Some(pos) = resp.hover_pos()
            && let Some((m, row_rect)) = self.metric_at(pos)
            && let Some(series) = trace.metrics.get(m.series as usize)
        {
            let t = map.t(pos.x);
            if let Some((at, v)) = paint::metric_at(series, t) {
                let x = map.x(at).max(canvas.left());
                painter.with_clip_rect(canvas).line_segment(
                    [pos2(x, row_rect.top()), pos2(x, row_rect.bottom())],
                    Stroke::new(1.0, visuals.strong_text_color()),
                );
                let name = format::clip(trace.name(series.name), 200).into_owned();
                let value = units::shown(&m.unit, f64::from(v) * m.scale);
                let unit = if m.unit == "avg" || value.starts_with("impossible") {
                    String::new()
                } else {
                    m.unit.clone()
                };
                resp.clone().on_hover_ui_at_pointer(|ui| {
                    ui.strong(name);
                    ui.label(format!("{value} {unit}"));
                    ui.weak(format!("sample at {}", format::exact(at)));
                });
            }
        }
        // Tooltip for the idle gap under the pointer.
        if matches!(self.drag, Drag::None)
            && let Some(pos) = resp.hover_pos()
            && let Some((r, _)) = self.row_at(pos)
            && let RowKind::IdleWhy { device } = self.rows[r].kind
            && let Some(gap) = self.idle_rows.gap_at(device, map, pos)
        {
            resp.clone()
                .on_hover_ui_at_pointer(|ui| idle_row::tooltip(ui, trace, &gap));
        }
        if matches!(self.drag, Drag::None)
            && let Some(pos) = resp.hover_pos()
        {
            self.cpu_tooltips(trace, resp, map, pos);
        }
        // Tooltip for the event under the pointer.
        if matches!(self.drag, Drag::None)
            && let Some(pos) = resp.hover_pos()
            && let Some(ev) = self.hit(trace, pos)
        {
            resp.clone().on_hover_ui_at_pointer(|ui| {
                egui::Grid::new("tip").num_columns(2).show(ui, |ui| {
                    for (k, v) in ev.fields(trace) {
                        ui.label(k);
                        // Clipped: a megabyte name would be laid out every frame.
                        ui.label(format::clip(&v, 200));
                        ui.end_row();
                    }
                });
            });
        }
    }

    /// The tooltip of a thread's CPU rows under `pos`: the state there, or
    /// the sample nearest it with its stack.
    fn cpu_tooltips(&self, trace: &Trace, resp: &egui::Response, map: &Mapping, pos: Pos2) {
        let Some((r, rect)) = self.row_at(pos) else {
            return;
        };
        match self.rows[r].kind {
            RowKind::CpuState { thread } => {
                if let Some(s) = cpu_state_row::state_at(trace, thread, map, pos) {
                    resp.clone()
                        .on_hover_ui_at_pointer(|ui| cpu_state_row::tooltip(ui, trace, &s));
                }
            }
            RowKind::Samples { thread } => {
                if let Some(tick) = sample_row::sample_at(trace, thread, rect, map, pos) {
                    resp.clone()
                        .on_hover_ui_at_pointer(|ui| sample_row::tooltip(ui, trace, &tick));
                }
            }
            _ => {}
        }
    }

    /// Zoom, pan, drags, clicks and keys. What the user selected (an event, a range dragged
    /// out, Escape) is returned as commands in `out`: the document owns the selection.
    fn handle_input(
        &mut self,
        ui: &Ui,
        (trace, selection): (&Trace, &Selection),
        (resp, ruler): (&egui::Response, &egui::Response),
        out: &mut Output,
    ) {
        let map = Mapping::new(self.canvas, &self.view);
        let limits = self.limits;
        let hovering = resp.hovered() || ruler.hovered();
        let (zoom, scroll, shift, pointer, now) = ui.input(|i| {
            (
                i.zoom_delta() as f64,
                i.smooth_scroll_delta,
                i.modifiers.shift,
                i.pointer.hover_pos(),
                i.time,
            )
        });
        let at = pointer
            .filter(|_| hovering)
            .map_or((self.view.start + self.view.end) / 2.0, |p| map.t(p.x));
        if hovering {
            if zoom != 1.0 {
                self.remember_step(now);
                self.view.zoom_at(at, zoom, limits);
            }
            let mut dx = scroll.x;
            let mut dy = scroll.y;
            if shift && dx == 0.0 {
                (dx, dy) = (dy, 0.0);
            }
            if dx != 0.0 {
                self.remember_step(now);
                self.view.pan_ns(-dx as f64 / map.px_per_ns, limits);
            }
            self.view.scroll_y -= dy;
        }

        // Drags: shift or ruler → range, otherwise pan.
        if resp.drag_started() || ruler.drag_started() {
            let origin = ui.input(|i| i.pointer.press_origin()).unwrap_or_default();
            self.drag = if ruler.drag_started() || shift {
                Drag::Range(map.t(origin.x), None)
            } else {
                self.remember();
                Drag::Pan
            };
        }
        match self.drag {
            Drag::Pan if resp.dragged() => {
                let d = resp.drag_delta();
                self.view.pan_ns(-d.x as f64 / map.px_per_ns, limits);
                self.view.scroll_y -= d.y;
                ui.ctx().set_cursor_icon(CursorIcon::Grabbing);
            }
            Drag::Range(t0, ref mut so_far) if resp.dragged() || ruler.dragged() => {
                if let Some(p) = pointer {
                    let t1 = map.t(p.x);
                    *so_far = Some(TimeRange {
                        start: t0.min(t1) as Ns,
                        end: t0.max(t1) as Ns,
                    });
                }
            }
            _ => {}
        }
        if resp.drag_stopped() || ruler.drag_stopped() {
            if let Drag::Range(_, Some(range)) = self.drag
                && range.end > range.start
            {
                out.commands.push(Command::SelectRange(range));
            }
            self.drag = Drag::None;
        }

        if resp.double_clicked() {
            if let Some(ev) = pointer.and_then(|p| self.hit(trace, p)) {
                out.commands.push(Command::Select(Some(ev)));
                self.zoom_to(ev.start(trace) as f64, ev.end(trace) as f64);
            }
        } else if resp.clicked() {
            let ev = pointer.and_then(|p| self.hit(trace, p));
            out.commands.push(Command::Select(ev));
            out.clicked = ev;
        }
        if resp.secondary_clicked()
            && let Some(p) = pointer
        {
            self.context_at = Some((map.t(p.x) as Ns, self.hit(trace, p)));
        }

        // Keys (Perfetto's W/S/A/D), unless a text field has focus.
        if ui.ctx().egui_wants_keyboard_input() {
            return;
        }
        let keys = ui.input(|i| {
            [
                Key::W,
                Key::S,
                Key::A,
                Key::D,
                Key::F,
                Key::Home,
                Key::Num0,
                Key::Escape,
                Key::Backspace,
                Key::G,
            ]
            .map(|k| i.key_pressed(k))
        });
        let [w, s, a, d, f, home, zero, esc, back, g] = keys;
        // Ctrl+0 is the UI zoom's reset, not "fit all".
        let zero = zero && !ui.input(|i| i.modifiers.command);
        if w || s || a || d {
            self.remember_step(now);
        }
        if w {
            self.view.zoom_at(at, 1.3, limits);
        }
        if s {
            self.view.zoom_at(at, 1.0 / 1.3, limits);
        }
        if a {
            self.view.pan_ns(-self.view.span() * 0.15, limits);
        }
        if d {
            self.view.pan_ns(self.view.span() * 0.15, limits);
        }
        if f {
            if let Some(ev) = selection.event {
                self.zoom_to(ev.start(trace) as f64, ev.end(trace) as f64);
            } else if let Some(r) = selection.range {
                self.zoom_to(r.start as f64, r.end as f64);
            }
        }
        if home || zero {
            self.fit_all();
        }
        if g {
            self.fit_activity(trace);
        }
        if esc {
            out.commands.push(Command::ClearSelection);
        }
        if back {
            self.back();
            self.last_step = f64::NEG_INFINITY;
        }
    }
}

impl Timeline {
    /// Replaces the marks of `source` (other views' marks stay).
    pub fn set_overlays(&mut self, source: &'static str, marks: Vec<Overlay>) {
        self.set_marks(Marks::new(source, marks));
    }

    /// Replaces the marks of their source (other views' marks stay).
    pub fn set_marks(&mut self, marks: Marks) {
        match self.marks.iter_mut().find(|m| m.source == marks.source) {
            Some(old) => *old = marks,
            None => self.marks.push(marks),
        }
    }

    /// Takes the marks of `source` off the timeline (other views' marks stay).
    pub fn take_marks(&mut self, source: &'static str) -> Marks {
        match self.marks.iter().position(|m| m.source == source) {
            Some(i) => self.marks.remove(i),
            None => Marks::new(source, Vec::new()),
        }
    }

    /// The marks of `source`.
    pub fn overlays_of(&self, source: &'static str) -> impl Iterator<Item = &Overlay> {
        (self.marks.iter())
            .filter(move |m| m.source == source)
            .flat_map(|m| m.iter())
    }

    /// Every view's marks.
    pub fn overlays(&self) -> impl Iterator<Item = &Overlay> {
        self.marks.iter().flat_map(|m| m.iter())
    }

    /// Each row's rect as the last frame laid it out (`None`: not on screen).
    fn lane_rects(&self) -> Vec<Option<Rect>> {
        let mut rects = vec![None; self.rows.len()];
        for &(r, rect) in &self.layout {
            if let Some(slot) = rects.get_mut(r) {
                *slot = Some(rect);
            }
        }
        rects
    }

    /// Groups every view's bars by lane level, where not done yet (once per
    /// change of marks, before a frame paints them).
    pub(super) fn group_bars(&mut self, trace: &Trace) {
        for marks in &mut self.marks {
            marks.group_bars(&self.rows, trace);
        }
    }

    /// The box of `ev` as the last frame laid it out, or `None` when its lane
    /// is not on screen (collapsed, hidden, scrolled away) or it does not exist.
    fn slot(&self, trace: &Trace, ev: EventRef, map: &Mapping) -> Option<Rect> {
        let spans = ev.table.spans(trace);
        let i = ev.index as usize;
        let (s, e) = spans.get(i)?;
        let (_, lane) = self.lane_of(ev)?;
        let level = if ev.table == Table::Nvtx {
            trace.nvtx.depth.get(i).copied().unwrap_or(0)
        } else {
            0
        } as f32;
        let y0 = lane.top() + 1.0 + level * LANE_H;
        let x0 = map.x(s);
        Some(Rect::from_min_max(
            pos2(x0, y0),
            pos2(map.x(e).max(x0 + 1.0), y0 + LANE_H - 2.0),
        ))
    }
}

/// (start, end, device) of the selected event when it is a kernel, for the metric rows.
fn selected_kernel(trace: &Trace, selection: &Selection) -> Option<(Ns, Ns, u32)> {
    selection
        .event
        .filter(|ev| ev.table == crate::app::state::events::Table::Kernel)
        .and_then(|ev| {
            let i = ev.index as usize;
            let spans = &trace.kernels.spans;
            let device = trace
                .streams
                .iter()
                .find(|s| s.kernels.contains(ev.index))?
                .device_id;
            let (start, end) = spans.get(i)?;
            Some((start, end, device))
        })
}

/// The timeline's three areas in `full` with a label column `label_w` wide: the ruler over
/// the canvas, the canvas where rows are drawn, and the labels left of it.
fn areas(full: Rect, label_w: f32) -> (Rect, Rect, Rect) {
    let ruler = Rect::from_min_max(
        pos2(full.left() + label_w, full.top()),
        pos2(full.right(), full.top() + RULER_H),
    );
    let canvas = Rect::from_min_max(pos2(full.left() + label_w, full.top() + RULER_H), full.max);
    let labels = Rect::from_min_max(
        pos2(full.left(), full.top() + RULER_H),
        pos2(full.left() + label_w, full.bottom()),
    );
    (ruler, canvas, labels)
}

/// What painting one row needs of the frame (see [`Timeline::paint_row`]).
struct RowPaint<'a> {
    trace: &'a Trace,
    /// Clipped to the canvas.
    lanes: &'a egui::Painter,
    /// Clipped to the label column.
    labels: egui::Painter,
    map: &'a Mapping,
    style: &'a paint::LaneStyle<'a>,
    visuals: &'a egui::Visuals,
    /// (start, end, device) of the selected kernel, shaded on its GPU's metric rows.
    selected_kernel: Option<(Ns, Ns, u32)>,
}
