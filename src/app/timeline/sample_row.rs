//! A thread's "CPU samples" row: one tick per sample nsys took of it, native
//! samples in the upper half, Python samples in the lower half, and the
//! sample's call stack in a tooltip (`analysis::cpu_profile::stack_labels`).
//!
//! Painting costs a search per pixel, not a tick per sample: after a tick is
//! drawn the next one looked for is the first sample at least a pixel on,
//! so a zoomed-out view of millions of samples draws at most one tick per
//! pixel column and source.

use eframe::egui::{Color32, Painter, Pos2, Rect, Stroke, Ui, pos2};

use crate::analysis::cpu_profile::{self, SampleTick};
use crate::app::timeline::view::Mapping;
use crate::app::widgets::format;
use crate::model::{Ns, SampleSource, SampleState, ThreadIdx, Trace};

/// Frames the tooltip lists at most (innermost first); deeper ones are counted.
const TOOLTIP_FRAMES: usize = 24;

/// A tick's colour: by source, dimmed when the thread was not running.
pub fn tick_color(source: SampleSource, state: SampleState) -> Color32 {
    let base = match source {
        SampleSource::Native => Color32::from_rgb(230, 150, 60),
        SampleSource::Python => Color32::from_rgb(80, 170, 235),
    };
    if state == SampleState::Running {
        base
    } else {
        base.gamma_multiply(0.45)
    }
}

/// The half of `rect` a source's ticks take.
fn band(rect: Rect, source: SampleSource) -> (f32, f32) {
    let mid = rect.center().y;
    match source {
        SampleSource::Native => (rect.top() + 2.0, mid),
        SampleSource::Python => (mid, rect.bottom() - 2.0),
    }
}

/// Paints `thread`'s samples in view; returns the ticks drawn.
pub fn paint(
    painter: &Painter,
    trace: &Trace,
    thread: ThreadIdx,
    rect: Rect,
    map: &Mapping,
) -> usize {
    let (v0, v1) = (map.t(rect.left()), map.t(rect.right()));
    let px_ns = 1.0 / map.px_per_ns.max(f64::MIN_POSITIVE);
    let mut drawn = 0;
    for source in [SampleSource::Native, SampleSource::Python] {
        let Some(samples) = trace.cpu.samples_of(thread, source) else {
            continue;
        };
        let (top, bottom) = band(rect, source);
        let times = &samples.times;
        let range = samples.in_range(v0.floor() as Ns, v1.ceil() as Ns + 1);
        let mut at = range.start;
        while at < range.end {
            let x = map.x(times[at]);
            let state = (samples.stacks.get(at)).map_or(SampleState::Unknown, |s| s.state());
            painter.line_segment(
                [pos2(x, top), pos2(x, bottom)],
                Stroke::new(1.0, tick_color(source, state)),
            );
            drawn += 1;
            // The next tick worth drawing is a pixel on.
            let next_t = map.t(x + 1.0).max(times[at] as f64 + px_ns * 0.5);
            let skip = times[at + 1..range.end].partition_point(|&t| (t as f64) < next_t);
            at += 1 + skip;
        }
    }
    drawn
}

/// The sample of `thread` nearest `pos` within a few pixels, in its row at `rect`.
pub fn sample_at(
    trace: &Trace,
    thread: ThreadIdx,
    rect: Rect,
    map: &Mapping,
    pos: Pos2,
) -> Option<SampleTick> {
    let t = map.t(pos.x);
    let tol = 3.0 / map.px_per_ns.max(f64::MIN_POSITIVE);
    let from = (t - tol).floor() as Ns;
    let to = (t + tol).ceil() as Ns + 1;
    // The half under the pointer says which sampler; either when only one has samples.
    let wanted = if pos.y < rect.center().y {
        SampleSource::Native
    } else {
        SampleSource::Python
    };
    let ticks = cpu_profile::samples_in(trace, thread, from, to);
    let nearest = |only: Option<SampleSource>| {
        ticks
            .iter()
            .filter(|s| only.is_none_or(|o| s.source == o))
            .min_by(|a, b| {
                (a.time as f64 - t)
                    .abs()
                    .total_cmp(&(b.time as f64 - t).abs())
            })
            .copied()
    };
    nearest(Some(wanted)).or_else(|| nearest(None))
}

/// The tooltip of a sample: when, which sampler, the thread's state, and its
/// stack innermost frame first (Python frames as Python: `f` (file:line)).
pub fn tooltip(ui: &mut Ui, trace: &Trace, tick: &SampleTick) {
    let sampler = match tick.source {
        SampleSource::Native => "CPU sample",
        SampleSource::Python => "Python sample",
    };
    ui.strong(format!("{sampler} at {}", format::exact(tick.time)));
    ui.weak(format!("thread {}", tick.state.label()));
    let frames = cpu_profile::stack_labels(trace, tick.stack);
    if frames.is_empty() {
        ui.weak("no call stack recorded");
        return;
    }
    for (depth, label) in frames.iter().take(TOOLTIP_FRAMES).enumerate() {
        // The labels' backquotes are for sentences; a list reads better without them.
        let plain = label.replace('`', "");
        let text = format::clip(&plain, 160);
        if depth == 0 {
            ui.strong(text.as_ref());
        } else {
            ui.label(text.as_ref());
        }
    }
    if frames.len() > TOOLTIP_FRAMES {
        ui.weak(format!("… {} more callers", frames.len() - TOOLTIP_FRAMES));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CpuSampling, SampleStack, ThreadSamples};
    use eframe::egui::{self, pos2};

    /// A million samples across a 1000-point row draw at most a tick per
    /// pixel column and sampler, not a tick per sample.
    #[test]
    fn dense_samples_draw_at_most_a_tick_per_pixel() {
        let n = 1_000_000;
        let series = |source| ThreadSamples {
            thread: 0,
            source,
            times: (0..n as Ns).map(|i| i * 10).collect(),
            stacks: vec![SampleStack::new(0, SampleState::Running); n].into(),
        };
        let trace = Trace {
            cpu: std::sync::Arc::new(CpuSampling {
                threads: vec![series(SampleSource::Native), series(SampleSource::Python)],
                ..CpuSampling::default()
            }),
            ..Trace::default()
        };
        let rect = Rect::from_min_max(pos2(0.0, 0.0), pos2(1000.0, 20.0));
        let mut view = crate::app::timeline::view::ViewState::default();
        view.set(0.0, (n * 10) as f64);
        let map = Mapping::new(rect, &view);
        let ctx = egui::Context::default();
        let mut drawn = 0;
        let mut out = ctx.run_pass(egui::RawInput::default(), |ctx| {
            let painter = ctx.layer_painter(egui::LayerId::background());
            drawn = paint(&painter, &trace, 0, rect, &map);
        });
        // Nothing is drawn to a screen: the fonts' upload is dropped.
        out.textures_delta.clear();
        assert!(drawn > 1500, "both samplers' ticks cover the row: {drawn}");
        assert!(drawn <= 2 * 1002, "at most a tick a pixel each: {drawn}");
    }
}
