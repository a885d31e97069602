//! The view state (one serde struct, puffin style) and the ns ↔ x mapping.

use std::collections::BTreeSet;

use eframe::egui::Rect;
use serde::{Deserialize, Serialize};

use crate::model::Ns;

/// Everything about how the timeline is looked at; saved between sessions.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ViewState {
    /// Visible time span, in session ns. f64 keeps sub-ns zoom smooth.
    pub start: f64,
    pub end: f64,
    /// Vertical scroll of the rows, in points.
    pub scroll_y: f32,
    /// Keys of collapsed group rows and of hidden rows.
    pub collapsed: BTreeSet<String>,
    pub hidden: BTreeSet<String>,
    pub show_names: bool,
    /// Rows under each NVTX row with its ranges projected onto the GPU.
    pub show_projection: bool,
    /// A row under each GPU with its idle gaps coloured by cause.
    pub show_idle_why: bool,
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            start: 0.0,
            end: 1.0,
            scroll_y: 0.0,
            collapsed: BTreeSet::new(),
            hidden: BTreeSet::new(),
            show_names: true,
            show_projection: false,
            show_idle_why: false,
        }
    }
}

impl ViewState {
    pub fn span(&self) -> f64 {
        self.end - self.start
    }

    /// Zooms by `factor` (> 1 zooms in) keeping time `at` under the same pixel.
    pub fn zoom_at(&mut self, at: f64, factor: f64, limits: (f64, f64)) {
        let span =
            (self.span() / factor).clamp(MIN_SPAN_NS, (limits.1 - limits.0).max(MIN_SPAN_NS) * 1.5);
        let frac = if self.span() > 0.0 {
            (at - self.start) / self.span()
        } else {
            0.5
        };
        self.start = at - frac * span;
        self.end = self.start + span;
        self.clamp(limits);
    }

    pub fn pan_ns(&mut self, dt: f64, limits: (f64, f64)) {
        self.start += dt;
        self.end += dt;
        self.clamp(limits);
    }

    /// Keeps at least part of the trace on screen.
    pub fn clamp(&mut self, (lo, hi): (f64, f64)) {
        let span = self.span().max(MIN_SPAN_NS);
        let margin = span * 0.5;
        if self.start < lo - margin {
            self.start = lo - margin;
        }
        if self.start > hi - margin {
            self.start = hi - margin;
        }
        self.end = self.start + span;
    }

    pub fn set(&mut self, start: f64, end: f64) {
        self.start = start;
        self.end = end.max(start + MIN_SPAN_NS);
    }
}

/// Deepest zoom: 10 ns across the canvas.
pub const MIN_SPAN_NS: f64 = 10.0;

/// ns → x for one frame: one multiply-add (puffin style).
#[derive(Copy, Clone, Debug)]
pub struct Mapping {
    pub left: f32,
    pub width: f32,
    pub start: f64,
    pub px_per_ns: f64,
}

impl Mapping {
    pub fn new(canvas: Rect, view: &ViewState) -> Self {
        Mapping {
            left: canvas.left(),
            width: canvas.width(),
            start: view.start,
            px_per_ns: canvas.width() as f64 / view.span().max(1e-9),
        }
    }

    #[inline]
    pub fn x(&self, t: Ns) -> f32 {
        self.xf(t as f64)
    }

    #[inline]
    pub fn xf(&self, t: f64) -> f32 {
        // Clamped so that far-off events do not produce huge coordinates.
        (self.left as f64 + (t - self.start) * self.px_per_ns).clamp(-1e7, 1e7) as f32
    }

    #[inline]
    pub fn t(&self, x: f32) -> f64 {
        self.start + (x - self.left) as f64 / self.px_per_ns
    }

    pub fn visible(&self) -> (f64, f64) {
        (self.start, self.t(self.left + self.width))
    }
}
