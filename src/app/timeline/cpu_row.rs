//! A thread's CPU row: when it ran (nsys's scheduling, a band) and when it
//! was sampled (a tick per sample), from `analysis::cpu_profile`. What makes
//! a thread of a report without CUDA (only samples and scheduling) a row.

use eframe::egui::{Color32, Painter, Rect, Stroke, pos2};

use crate::analysis::cpu_profile::thread_states;
use crate::app::timeline::view::Mapping;
use crate::model::{SampleSource, Trace};

/// The row's label prefix, also its accessible name's.
pub const LABEL: &str = "CPU";

/// Whether `thread` has anything this row draws.
pub fn has_cpu_data(trace: &Trace, thread: u32) -> bool {
    let cpu = &trace.cpu;
    cpu.sched_of(thread).is_some_and(|s| !s.at.is_empty())
        || [SampleSource::Native, SampleSource::Python]
            .into_iter()
            .any(|s| cpu.samples_of(thread, s).is_some_and(|s| !s.is_empty()))
}

/// The row's label: "CPU (N samples)".
pub fn label(trace: &Trace, thread: u32) -> String {
    let n: usize = [SampleSource::Native, SampleSource::Python]
        .into_iter()
        .filter_map(|s| trace.cpu.samples_of(thread, s))
        .map(|s| s.len())
        .sum();
    format!("{LABEL} ({n} samples)")
}

const RUNNING: Color32 = Color32::from_rgb(90, 160, 90);
const IN_OS_CALL: Color32 = Color32::from_rgb(200, 150, 70);
const NATIVE_TICK: Color32 = Color32::from_rgb(70, 110, 200);
const PYTHON_TICK: Color32 = Color32::from_rgb(230, 190, 40);

/// Draws `thread`'s running stretches (green; off CPU inside an OS runtime
/// call amber) in the row's lower half and its samples as ticks above; at
/// most one mark per pixel of each kind. Returns how many it drew.
pub fn paint(painter: &Painter, trace: &Trace, thread: u32, rect: Rect, map: &Mapping) -> usize {
    let from = map.t(rect.left()).floor() as i64;
    let to = map.t(rect.right()).ceil() as i64 + 1;
    let mut drawn = 0;
    let band_top = rect.center().y;
    let mut last_x = f32::NEG_INFINITY;
    for s in thread_states(trace, thread, from, to) {
        let color = if s.state.is_running() {
            RUNNING
        } else if s.os_call.is_some() {
            IN_OS_CALL
        } else {
            continue;
        };
        let x0 = map.x(s.start).max(rect.left() - 1.0);
        let x1 = map.x(s.end).min(rect.right() + 1.0).max(x0 + 1.0);
        if x1 <= last_x {
            continue;
        }
        painter.rect_filled(
            Rect::from_min_max(
                pos2(x0.max(last_x), band_top),
                pos2(x1, rect.bottom() - 1.0),
            ),
            0.0,
            color,
        );
        last_x = x1;
        drawn += 1;
    }
    for (source, color) in [
        (SampleSource::Native, NATIVE_TICK),
        (SampleSource::Python, PYTHON_TICK),
    ] {
        let Some(samples) = trace.cpu.samples_of(thread, source) else {
            continue;
        };
        let mut at = samples.in_range(from, to).start;
        while let Some(&t) = samples.times.get(at).filter(|&&t| t < to) {
            let x = map.x(t).round();
            painter.line_segment(
                [pos2(x, rect.top() + 1.0), pos2(x, band_top - 1.0)],
                Stroke::new(1.0, color),
            );
            drawn += 1;
            // The next sample a pixel further on: a tick per pixel at most.
            let next = map.t(x + 1.0).ceil() as i64;
            at += 1 + samples.times[at + 1..].partition_point(|&u| u < next);
        }
    }
    drawn
}
