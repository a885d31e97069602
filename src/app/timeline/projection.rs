//! NVTX ranges projected onto the GPU ("NVTX on GPU" in Nsight Systems): a
//! row under each NVTX row draws every range over the span of the GPU work
//! its CUDA calls launched. A range whose GPU work ends after the range
//! itself — a timing range that does not wait for its work — is drawn in a
//! warning colour, with a tick where the CPU range ended.

use eframe::egui::{Align2, Color32, FontId, Painter, Pos2, Rect, Stroke, pos2};

use crate::analysis::projection::project_nvtx;
use crate::app::state::events::{EventRef, Table};
use crate::app::timeline::rows::LANE_H;
use crate::app::timeline::view::Mapping;
use crate::app::widgets::format;
use crate::model::{Ns, Trace, Track};

/// Fill of a range whose GPU work outlives it.
pub const OVERHANG: Color32 = Color32::from_rgb(235, 95, 55);

/// One projected range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Projected {
    /// Index into `Trace::nvtx`.
    pub nvtx: u32,
    pub gpu_start: Ns,
    pub gpu_end: Ns,
}

impl Projected {
    /// How far the GPU work ends after the CPU range (negative: before it);
    /// `None` for a range without an end (a capture's range still open: the
    /// report's last NVTX time it is counted to is not its end).
    pub fn overhang(&self, trace: &Trace) -> Option<Ns> {
        let i = self.nvtx as usize;
        if trace.nvtx.is_unended(i) {
            return None;
        }
        let end = trace.nvtx.spans.get(i).map_or(self.gpu_end, |(_, end)| end);
        Some(self.gpu_end - end)
    }
}

/// Every projected range of the trace, by NVTX index (so a track's ranges,
/// which are a contiguous index span, are a contiguous slice).
#[derive(Default)]
pub struct Projection {
    pub ranges: Vec<Projected>,
}

impl Projection {
    /// Projects every NVTX range once (the analysis layer's rules, the same as
    /// `nvtx_gpu_proj_trace`).
    pub fn compute(trace: &Trace) -> Projection {
        let mut ranges: Vec<Projected> = project_nvtx(trace, None)
            .into_iter()
            .map(|p| Projected {
                nvtx: p.nvtx,
                gpu_start: p.gpu_start,
                gpu_end: p.gpu_end,
            })
            .collect();
        ranges.sort_unstable_by_key(|p| p.nvtx);
        Projection { ranges }
    }

    /// The projection of NVTX range `nvtx`, if it launched GPU work.
    pub fn of(&self, nvtx: u32) -> Option<&Projected> {
        self.ranges
            .binary_search_by_key(&nvtx, |p| p.nvtx)
            .ok()
            .and_then(|i| self.ranges.get(i))
    }

    /// The projected ranges of one NVTX track, run after run.
    fn of_track<'a>(&'a self, track: &'a Track) -> impl Iterator<Item = &'a Projected> + 'a {
        track.runs().iter().flat_map(|run| {
            let lo = self.ranges.partition_point(|p| p.nvtx < run.events.start);
            let hi = self.ranges.partition_point(|p| p.nvtx < run.events.end);
            &self.ranges[lo..hi.max(lo)]
        })
    }

    /// Paints the ranges of `track` into `rect`; returns the ranges drawn,
    /// with whether each overhangs. Cost: O(ranges of the track) per frame.
    pub fn paint(
        &self,
        painter: &Painter,
        trace: &Trace,
        track: &Track,
        rect: Rect,
        map: &Mapping,
        name_colors: &[Color32],
    ) -> Vec<(u32, bool)> {
        let (v0, v1) = (map.t(rect.left()), map.t(rect.right()));
        let mut drawn = Vec::new();
        for p in self.of_track(track) {
            if (p.gpu_end as f64) < v0 || (p.gpu_start as f64) > v1 {
                continue;
            }
            let level = trace.nvtx.depth.get(p.nvtx as usize).copied().unwrap_or(0) as f32;
            let top = rect.top() + 1.0 + level * LANE_H;
            let x0 = map.x(p.gpu_start).max(rect.left() - 1.0);
            let x1 = map.x(p.gpu_end).min(rect.right() + 1.0).max(x0 + 1.0);
            let boxed = Rect::from_min_max(pos2(x0, top), pos2(x1, top + LANE_H - 1.0));
            let overhang = p.overhang(trace);
            let late = overhang.is_some_and(|o| o > 0);
            let ev = EventRef::new(Table::Nvtx, p.nvtx);
            let fill = if late {
                OVERHANG
            } else {
                crate::app::timeline::paint::event_color(trace, ev, name_colors).gamma_multiply(0.8)
            };
            painter.rect_filled(boxed, 1.0, fill);
            if late {
                // Where the CPU range ended: the GPU work to the right of this
                // tick was not waited for.
                let end = trace.nvtx.spans.end(p.nvtx as usize);
                let x = map.x(end);
                // Only where the overhang is wide enough to see: on tiny
                // boxes a tick per range would hide the colour.
                if x >= rect.left() && x <= rect.right() && boxed.right() - x >= 3.0 {
                    painter.line_segment(
                        [pos2(x, boxed.top() - 1.0), pos2(x, boxed.bottom() + 1.0)],
                        Stroke::new(1.5, Color32::WHITE),
                    );
                }
            }
            if boxed.width() > 60.0 {
                let name = trace.name(trace.nvtx.spans.name[p.nvtx as usize]);
                let text = match overhang.filter(|&o| o > 0) {
                    Some(o) => format!("{name}  (GPU +{})", format::duration(o)),
                    None => name.to_string(),
                };
                painter.with_clip_rect(boxed.intersect(rect)).text(
                    pos2(boxed.left().max(rect.left()) + 3.0, boxed.center().y),
                    Align2::LEFT_CENTER,
                    format::clip(&text, 200),
                    FontId::proportional(11.0),
                    Color32::WHITE,
                );
            }
            drawn.push((p.nvtx, late));
        }
        drawn
    }

    /// The projected range under `pos` in a projection row, as its NVTX event.
    pub fn hit(
        &self,
        trace: &Trace,
        track: &Track,
        rect: Rect,
        map: &Mapping,
        pos: Pos2,
    ) -> Option<EventRef> {
        let t = map.t(pos.x);
        let tol = 3.0 / map.px_per_ns;
        let level = ((pos.y - rect.top()) / LANE_H).floor().max(0.0) as u8;
        let ranges: Vec<&Projected> = self.of_track(track).collect();
        ranges
            .into_iter()
            .rev()
            .find(|p| {
                trace.nvtx.depth.get(p.nvtx as usize).copied().unwrap_or(0) == level
                    && p.gpu_start as f64 - tol <= t
                    && t <= p.gpu_end as f64 + tol
            })
            .map(|p| EventRef::new(Table::Nvtx, p.nvtx))
    }
}
