//! A thread's "CPU state" row: when it ran and when it was off the CPU
//! (preempted, sleeping, in an uninterruptible wait), from nsys's scheduling
//! records; an off-CPU stretch inside an OS runtime call is named after the
//! call (`analysis::cpu_profile::thread_states`).
//!
//! Where the view holds few state changes the stretches are drawn exactly;
//! where it holds more than a few a pixel, each pixel column is drawn once:
//! in the state in force there, or as "mixed" where the state changed inside
//! it (a search per pixel, not a box per change).

use eframe::egui::{Color32, Painter, Pos2, Rect, Ui, pos2};

use crate::analysis::cpu_profile::{self, StateStretch};
use crate::app::timeline::view::Mapping;
use crate::app::widgets::format;
use crate::model::{Ns, SchedState, ThreadIdx, ThreadSched, Trace};

/// Changes per pixel above which the row is drawn a pixel column at a time.
const EXACT_CHANGES_PER_PX: f64 = 2.0;

/// The colour of a state; an off-CPU stretch in an OS call is tinted.
pub fn state_color(state: SchedState, in_os_call: bool) -> Color32 {
    let c = match state {
        SchedState::Running => Color32::from_rgb(90, 180, 100),
        SchedState::Preempted => Color32::from_rgb(220, 190, 70),
        SchedState::Sleeping => Color32::from_rgb(95, 110, 150),
        SchedState::Uninterruptible => Color32::from_rgb(210, 80, 70),
        SchedState::OffCpu => Color32::from_gray(105),
    };
    if in_os_call {
        c.lerp_to_gamma(Color32::from_rgb(150, 90, 190), 0.45)
    } else {
        c
    }
}

/// Pixels where the state changed more often than a pixel shows.
const MIXED: Color32 = Color32::from_rgb(150, 160, 120);

/// The name of OS runtime call `row`.
pub fn os_call_name(trace: &Trace, row: u32) -> &str {
    trace
        .osrt
        .spans
        .name
        .get(row as usize)
        .map_or("", |&n| trace.name(n))
}

/// Paints `thread`'s states in view; returns the boxes drawn.
pub fn paint(
    painter: &Painter,
    trace: &Trace,
    thread: ThreadIdx,
    rect: Rect,
    map: &Mapping,
) -> usize {
    let Some(sched) = trace.cpu.sched_of(thread) else {
        return 0;
    };
    let (v0, v1) = (map.t(rect.left()), map.t(rect.right()));
    let (from, to) = (v0.floor() as Ns, v1.ceil() as Ns + 1);
    let changes = sched.at.partition_point(|&t| t < to) - sched.at.partition_point(|&t| t < from);
    let inner = rect.shrink2(eframe::egui::vec2(0.0, 3.0));
    if changes as f64 > EXACT_CHANGES_PER_PX * rect.width().max(1.0) as f64 {
        return paint_by_pixel(painter, sched, inner, map);
    }
    let mut drawn = 0;
    for s in cpu_profile::thread_states(trace, thread, from, to) {
        let x0 = map.x(s.start).max(rect.left() - 1.0);
        let x1 = map.x(s.end).min(rect.right() + 1.0).max(x0 + 1.0);
        let r = Rect::from_min_max(pos2(x0, inner.top()), pos2(x1, inner.bottom()));
        painter.rect_filled(r, 0.0, state_color(s.state, s.os_call.is_some()));
        drawn += 1;
        let name = || match s.os_call {
            Some(call) => os_call_name(trace, call),
            None => s.state.label(),
        };
        super::paint::name_in_box(painter, rect, r, name);
    }
    drawn
}

/// One box per run of pixel columns of one colour: the state in force at
/// the column, or [`MIXED`] where it changed inside it.
fn paint_by_pixel(painter: &Painter, sched: &ThreadSched, inner: Rect, map: &Mapping) -> usize {
    let (Some(&first), Some(&last)) = (sched.at.first(), sched.at.last()) else {
        return 0;
    };
    let mut drawn = 0;
    let mut run: Option<(f32, Color32)> = None;
    let mut flush = |run: &mut Option<(f32, Color32)>, x_end: f32| {
        if let Some((x0, color)) = run.take() {
            painter.rect_filled(
                Rect::from_min_max(pos2(x0, inner.top()), pos2(x_end, inner.bottom())),
                0.0,
                color,
            );
            drawn += 1;
        }
    };
    let mut x = inner.left().floor();
    while x < inner.right() {
        let (t0, t1) = (map.t(x), map.t(x + 1.0));
        // Outside the recorded changes the state is not known.
        let color = if t1 <= first as f64 || t0 >= last as f64 {
            None
        } else {
            let lo = sched.at.partition_point(|&t| (t as f64) <= t0);
            let hi = sched.at.partition_point(|&t| (t as f64) < t1);
            if hi > lo {
                Some(MIXED)
            } else {
                lo.checked_sub(1)
                    .and_then(|i| sched.state.get(i))
                    .map(|&s| state_color(s, false))
            }
        };
        match (color, run) {
            (Some(c), Some((_, rc))) if c == rc => {}
            (c, _) => {
                flush(&mut run, x);
                run = c.map(|c| (x, c));
            }
        }
        x += 1.0;
    }
    flush(&mut run, x);
    drawn
}

/// The state of `thread` under `pos` (its whole stretch, split by OS call as
/// [`cpu_profile::thread_states`] splits it).
pub fn state_at(
    trace: &Trace,
    thread: ThreadIdx,
    map: &Mapping,
    pos: Pos2,
) -> Option<StateStretch> {
    let sched = trace.cpu.sched_of(thread)?;
    let t = map.t(pos.x);
    let i = sched
        .at
        .partition_point(|&c| (c as f64) <= t)
        .checked_sub(1)?;
    let (start, end) = (*sched.at.get(i)?, *sched.at.get(i + 1)?);
    cpu_profile::thread_states(trace, thread, start, end)
        .into_iter()
        .find(|s| (s.start as f64) <= t && t < s.end as f64)
}

/// The tooltip of a state stretch: the state, how long, and the OS call.
pub fn tooltip(ui: &mut Ui, trace: &Trace, s: &StateStretch) {
    ui.strong(format!(
        "{} {}",
        s.state.label(),
        format::duration(s.end.saturating_sub(s.start))
    ));
    if let Some(call) = s.os_call {
        ui.label(format!("in {}", os_call_name(trace, call)));
    }
    ui.weak(format!(
        "{} – {}",
        format::exact(s.start),
        format::exact(s.end)
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CpuSampling;
    use eframe::egui::{self, pos2};

    /// A million state changes across a 1000-point row draw at most a box per
    /// pixel column, and the same picture for what is not dense.
    #[test]
    fn dense_states_draw_at_most_a_box_per_pixel() {
        let n = 1_000_000;
        let sched = ThreadSched {
            thread: 0,
            at: (0..n as Ns).map(|i| i * 10).collect(),
            state: (0..n)
                .map(|i| {
                    if i % 2 == 0 {
                        SchedState::Running
                    } else {
                        SchedState::Sleeping
                    }
                })
                .collect(),
        };
        let trace = Trace {
            cpu: std::sync::Arc::new(CpuSampling {
                sched: vec![sched],
                ..CpuSampling::default()
            }),
            ..Trace::default()
        };
        let rect = Rect::from_min_max(pos2(0.0, 0.0), pos2(1000.0, 20.0));
        let map_of = |from: f64, to: f64| {
            let mut view = crate::app::timeline::view::ViewState::default();
            view.set(from, to);
            Mapping::new(rect, &view)
        };
        let ctx = egui::Context::default();
        let (mut dense, mut close) = (0, 0);
        let mut out = ctx.run_pass(egui::RawInput::default(), |ctx| {
            let painter = ctx.layer_painter(egui::LayerId::background());
            dense = paint(&painter, &trace, 0, rect, &map_of(0.0, (n * 10) as f64));
            // 100 changes in view: each its own box.
            close = paint(&painter, &trace, 0, rect, &map_of(5_000.0, 6_000.0));
        });
        // Nothing is drawn to a screen: the fonts' upload is dropped.
        out.textures_delta.clear();
        assert!(dense >= 1, "the row is drawn");
        assert!(dense <= 1001, "at most a box a pixel: {dense}");
        assert!((99..=101).contains(&close), "one box per stretch: {close}");
    }
}
