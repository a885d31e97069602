//! The metrics strip (View ▸ Metrics strip): under the kernels of each
//! kernels row, a band coloured by one chosen metric of one source (SM
//! throughput, DRAM throughput, ...), with a legend, so the kernels that sit
//! at the roof show at a glance. Each pixel column takes the kernel under its
//! middle: a lookup per column, whatever the number of kernels. Where even
//! the longest kernel is under half a pixel, a column is coloured when a
//! kernel starts in it, as the lanes mark it busy, by one that does.

use eframe::egui::{self, Color32, Painter, Rect, Stroke, pos2, vec2};

use crate::app::timeline::rows::SPARSE_STRIDE;
use crate::app::timeline::view::Mapping;
use crate::model::{KernelMetrics, Ns, Run, Trace, Track};

/// The band's height, at the bottom of a kernels row.
pub const STRIP_H: f32 = 5.0;

/// One metric's value per kernel, ready to paint.
#[derive(Clone, Debug)]
pub struct MetricsStrip {
    /// "sm__throughput.avg.pct_of_peak_sustained_elapsed (Nsight Compute)".
    pub label: String,
    pub unit: String,
    /// By kernel row; NaN where the source has no value.
    values: Vec<f32>,
    /// Per run of a kernels track, the values of the kernels its sparse index of
    /// starts samples (every `SPARSE_STRIDE`-th from its first): at a zoom
    /// where a pixel column holds hundreds of kernels, the column takes a
    /// sampled kernel's value from here, in cache, where `values` would miss
    /// it at every column.
    sampled: Vec<SampledValues>,
    pub lo: f32,
    pub hi: f32,
}

/// The values of one run's sampled kernels, for the run they were taken
/// from (a run that has grown since gets none).
#[derive(Clone, Debug)]
struct SampledValues {
    events: crate::model::Span,
    values: Vec<f32>,
}

impl MetricsStrip {
    /// The strip of `metric` (an index into `set.metrics`); `None` when no
    /// kernel has a value. Percentages span 0–100; other units their range.
    pub fn new(trace: &Trace, set: &KernelMetrics, metric: usize) -> Option<MetricsStrip> {
        let def = set.metrics.get(metric)?;
        let mut values = vec![f32::NAN; trace.kernels.spans.len()];
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for i in 0..set.len() {
            if set.metric[i] as usize != metric || set.samples.get(i).is_some_and(|&n| n < 2) {
                continue;
            }
            let v = set.value[i] as f32;
            if let Some(slot) = values.get_mut(set.kernel[i] as usize)
                && v.is_finite()
            {
                *slot = v;
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        if !lo.is_finite() {
            return None;
        }
        if def.unit == "%" {
            (lo, hi) = (0.0, 100.0);
        }
        if hi <= lo {
            hi = lo + 1.0;
        }
        let mut sampled: Vec<SampledValues> = trace
            .streams
            .iter()
            .flat_map(|s| s.kernels.runs())
            .map(|run| &run.events)
            .map(|events| SampledValues {
                events: events.clone(),
                values: values
                    .get(events.start as usize..events.end as usize)
                    .unwrap_or_default()
                    .iter()
                    .step_by(SPARSE_STRIDE)
                    .copied()
                    .collect(),
            })
            .collect();
        sampled.sort_by_key(|s| s.events.start);
        Some(MetricsStrip {
            label: format!("{} ({})", def.name, set.source.label()),
            unit: def.unit.clone(),
            values,
            sampled,
            lo,
            hi,
        })
    }

    /// The sampled values of `run`, if taken from it as it is now.
    fn sampled_of(&self, run: &Run) -> Option<&[f32]> {
        let at = self
            .sampled
            .partition_point(|s| s.events.start < run.events.start);
        self.sampled
            .get(at)
            .filter(|s| s.events == run.events)
            .map(|s| s.values.as_slice())
    }

    /// The value of kernel row `k`, if the source has one.
    pub fn value(&self, k: usize) -> Option<f32> {
        self.values.get(k).copied().filter(|v| v.is_finite())
    }

    fn color(&self, v: f32) -> Color32 {
        ramp((v - self.lo) / (self.hi - self.lo))
    }

    /// Paints the band at the bottom of a kernels row, run after run of its
    /// track; returns the stretches of colour drawn.
    pub fn paint(
        &self,
        painter: &Painter,
        trace: &Trace,
        track: &Track,
        rect: Rect,
        map: &Mapping,
    ) -> usize {
        let (from, to) = map.visible();
        let (from_ns, to_ns) = (from.floor() as Ns, (to.ceil() as Ns).saturating_add(1));
        (track
            .runs_overlapping(&trace.kernels.spans, from_ns, to_ns)
            .iter())
        .map(|run| self.paint_run(painter, trace, run, rect, map))
        .sum()
    }

    /// The band of one run, in the pixel columns its kernels may cover.
    fn paint_run(
        &self,
        painter: &Painter,
        trace: &Trace,
        run: &Run,
        rect: Rect,
        map: &Mapping,
    ) -> usize {
        let spans = &trace.kernels.spans;
        let sparse: &[Ns] = &run.sampled_starts;
        let (from, to) = map.visible();
        let (from_ns, to_ns) = (from.floor() as Ns, (to.ceil() as Ns).saturating_add(1));
        let win = run.window(spans, from_ns, to_ns);
        let (lo, hi) = (win.start as usize, win.end as usize);
        if lo >= hi {
            return 0;
        }
        let band = Rect::from_min_max(pos2(rect.left(), rect.bottom() - STRIP_H), rect.max);
        let mut drawn = 0;
        let mut stretch: Option<(f32, Color32)> = None;
        // Only the columns the run's kernels may cover: a track of many runs
        // is not a walk of every column per run.
        let left = rect
            .left()
            .max(map.xf(from))
            .max(map.x(spans.start[lo]))
            .floor() as i32;
        let last_end = spans.start[hi - 1].saturating_add(run.max_duration);
        let right = rect.right().min(map.x(last_end) + 1.0).ceil() as i32;
        let mut flush = |stretch: &mut Option<(f32, Color32)>, x: f32| {
            if let Some((x0, c)) = stretch.take() {
                painter.rect_filled(
                    Rect::from_min_max(pos2(x0, band.top()), pos2(x, band.bottom())),
                    0.0,
                    c,
                );
                drawn += 1;
            }
        };
        let base = run.events.start as usize;
        let mut search =
            crate::app::timeline::paint::ForwardSearch::new(&spans.start, sparse, base, hi);
        // As the lanes: where even the longest kernel is under half a pixel,
        // a column is busy if a kernel starts in it, and takes the value of
        // one that does (a sampled one where the column holds one).
        let sub_pixel_only = (run.max_duration as f64) * map.px_per_ns
            < f64::from(crate::app::timeline::paint::MIN_BOX_PX) / 2.0;
        let sampled = self
            .sampled_of(run)
            .filter(|s| s.len() == sparse.len())
            .unwrap_or_default();
        let value_of = |k: usize| {
            let (b, off) = ((k - base) / SPARSE_STRIDE, (k - base) % SPARSE_STRIDE);
            match sampled.get(b) {
                Some(&v) if off == 0 => Some(v).filter(|v| v.is_finite()),
                _ => self.value(k),
            }
        };
        for px in left..right {
            let kernel = if sub_pixel_only {
                let (t0, t1) = (map.t(px as f32), map.t(px as f32 + 1.0));
                kernel_starting_in(spans, &mut search, base, lo, t0, t1)
            } else {
                kernel_at(spans, &mut search, lo, map.t(px as f32 + 0.5) as Ns)
            };
            let color = kernel.and_then(value_of).map(|v| self.color(v));
            match (stretch, color) {
                (Some((_, c)), Some(n)) if c == n => {}
                (_, Some(n)) => {
                    flush(&mut stretch, px as f32);
                    stretch = Some((px as f32, n));
                }
                (_, None) => flush(&mut stretch, px as f32),
            }
        }
        flush(&mut stretch, right as f32);
        drawn
    }

    /// The legend: the metric, and the colour ramp from `lo` to `hi`, at the
    /// top right of the canvas.
    pub fn legend(&self, painter: &Painter, canvas: Rect, text: Color32, background: Color32) {
        let font = egui::FontId::proportional(10.5);
        // As wide as the metric's name (ncu's names run to 70 characters),
        // so neither the name nor the bounds are cut.
        let name = painter.layout_no_wrap(self.label.clone(), font.clone(), text);
        let w = name.size().x.max(160.0);
        let at = pos2(canvas.right() - w - 12.0, canvas.top() + 6.0);
        let frame = Rect::from_min_size(at - vec2(6.0, 4.0), vec2(w + 12.0, 40.0));
        painter.rect_filled(frame, 3.0, background);
        painter.rect_stroke(
            frame,
            3.0,
            Stroke::new(1.0, text.gamma_multiply(0.3)),
            egui::StrokeKind::Inside,
        );
        let steps = 32;
        for s in 0..steps {
            let x0 = at.x + w * s as f32 / steps as f32;
            let x1 = at.x + w * (s + 1) as f32 / steps as f32;
            painter.rect_filled(
                Rect::from_min_max(pos2(x0, at.y + 16.0), pos2(x1, at.y + 24.0)),
                0.0,
                ramp(s as f32 / (steps - 1) as f32),
            );
        }
        painter.galley(at, name, text);
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        let bound = |v: f64| format!("{}{unit}", crate::app::widgets::format::metric_value(v));
        painter.text(
            pos2(at.x, at.y + 25.0),
            egui::Align2::LEFT_TOP,
            bound(f64::from(self.lo)),
            font.clone(),
            text,
        );
        painter.text(
            pos2(at.x + w, at.y + 25.0),
            egui::Align2::RIGHT_TOP,
            bound(f64::from(self.hi)),
            font,
            text,
        );
    }
}

/// The kernel running at `t` among rows `lo..` of `spans` (one track,
/// searched by `search`, as the lane's painter searches it: pixel columns
/// left to right): the last one starting at or before it, if it has not
/// ended.
fn kernel_at(
    spans: &crate::model::SpanColumns,
    search: &mut crate::app::timeline::paint::ForwardSearch,
    lo: usize,
    t: Ns,
) -> Option<usize> {
    let after = search.first_at_or_after(lo, t.saturating_add(1) as f64);
    (after > lo)
        .then(|| after - 1)
        .filter(|&k| spans.end(k) >= t)
}

/// A kernel starting in `[t0, t1)` among rows `lo..` of a track whose first
/// row is `base`: the first one its sparse index samples there, else the
/// first one there. Searched as [`kernel_at`] is, columns left to right.
fn kernel_starting_in(
    spans: &crate::model::SpanColumns,
    search: &mut crate::app::timeline::paint::ForwardSearch,
    base: usize,
    lo: usize,
    t0: f64,
    t1: f64,
) -> Option<usize> {
    let b = search.sample_at_or_after(t0);
    let sampled = base + b * SPARSE_STRIDE;
    if sampled >= lo && search.sample_start(b).is_some_and(|s| (s as f64) < t1) {
        return Some(sampled);
    }
    let k = search.first_at_or_after(lo, t0);
    spans
        .start
        .get(k)
        .filter(|&&s| (s as f64) < t1 && k < search.end())
        .map(|_| k)
}

/// Low values blue, middling green, high (at the roof) red.
pub fn ramp(f: f32) -> Color32 {
    let f = if f.is_finite() {
        f.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let stops = [
        (40.0, 70.0, 200.0),
        (40.0, 180.0, 200.0),
        (90.0, 200.0, 80.0),
        (240.0, 200.0, 40.0),
        (230.0, 50.0, 40.0),
    ];
    let x = f * (stops.len() - 1) as f32;
    let i = (x.floor() as usize).min(stops.len() - 2);
    let u = x - i as f32;
    let mix = |a: f32, b: f32| (a + (b - a) * u).round() as u8;
    let (a, b) = (stops[i], stops[i + 1]);
    Color32::from_rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ramp_runs_from_blue_to_red() {
        let (low, high) = (ramp(0.0), ramp(1.0));
        assert!(low.b() > low.r() && high.r() > high.b());
        assert_eq!(ramp(f32::NAN), low);
        assert_eq!(ramp(2.0), high);
    }

    use crate::app::timeline::paint::ForwardSearch;
    use crate::model::{SpanColumns, StrId};

    #[test]
    fn the_kernel_under_a_pixel_is_the_one_a_whole_row_search_finds() {
        // A row of 5,000 kernels of varied lengths and gaps after 37 rows of
        // another track: the strip's blocked search against a plain one.
        let (spans, track, sparse) = row_of(5_000, 7, 900, |r| {
            (1 + (r >> 33) as i64 % 900, (r >> 20) as i64 % 700)
        });
        let row = track.rows();
        let t = spans.end(row.end - 1);
        // Left to right, as the strip asks, then in an order that jumps back.
        let mut search = ForwardSearch::new(&spans.start, &sparse, row.start, row.end);
        let forward = (0..t + 2_000).step_by(37);
        let jumping = (0..t + 2_000).step_by(37).map(|p| (p * 7919) % (t + 2_000));
        for probe in forward.chain(jumping) {
            let starts = &spans.start[row.clone()];
            let plain = starts
                .partition_point(|&s| s <= probe)
                .checked_sub(1)
                .map(|j| row.start + j)
                .filter(|&k| spans.end(k) >= probe);
            assert_eq!(
                kernel_at(&spans, &mut search, row.start, probe),
                plain,
                "at {probe}"
            );
        }
    }

    /// `count` kernels after 37 rows of another track, from time 1,000 on,
    /// each one's length and the gap after it drawn by `shape` from a
    /// sequence seeded with `seed`; the track (its longest `longest`) and its
    /// sparse index of starts.
    fn row_of(
        count: usize,
        seed: u64,
        longest: Ns,
        shape: impl Fn(u64) -> (Ns, Ns),
    ) -> (SpanColumns, Run, Vec<Ns>) {
        let mut spans = SpanColumns::default();
        for i in 0..37 {
            spans.push(i, i + 1, StrId(0));
        }
        let (mut t, mut seed) = (1_000, seed);
        for _ in 0..count {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (length, gap) = shape(seed);
            spans.push(t, t + length, StrId(1));
            t += length + gap;
        }
        let run = Run {
            events: 37..spans.len() as u32,
            max_duration: longest,
            ..Run::default()
        };
        let sparse = spans.start[run.rows()]
            .iter()
            .step_by(SPARSE_STRIDE)
            .copied()
            .collect();
        (spans, run, sparse)
    }

    /// Kernels of 1–4 ns, mostly packed (gaps of 0–60 ns), now and then a
    /// gap wider than a column.
    fn dense_row() -> (SpanColumns, Run, Vec<Ns>) {
        row_of(20_000, 11, 4, |r| {
            let gap = if (r >> 20) % 97 == 0 {
                5_000
            } else {
                (r >> 24) as i64 % 60
            };
            (1 + (r >> 33) as i64 % 4, gap)
        })
    }

    #[test]
    fn a_column_of_many_kernels_takes_one_that_starts_in_it() {
        let (spans, track, sparse) = dense_row();
        let row = track.rows();
        let last = spans.start[row.end - 1];
        // Columns of 3, 700 and 9,000 ns: fewer, as many and more kernels
        // than a sparse block holds.
        for width in [3.0, 700.0, 9_000.0] {
            let mut search = ForwardSearch::new(&spans.start, &sparse, row.start, row.end);
            let mut t0 = 900.0;
            while t0 < last as f64 + width {
                let t1 = t0 + width;
                let starts = &spans.start[row.clone()];
                let first_in = row.start + starts.partition_point(|&s| (s as f64) < t0);
                let any = first_in < row.end && (spans.start[first_in] as f64) < t1;
                let got = kernel_starting_in(&spans, &mut search, row.start, row.start, t0, t1);
                assert_eq!(got.is_some(), any, "column [{t0}, {t1})");
                if let Some(k) = got {
                    let s = spans.start[k] as f64;
                    assert!(row.contains(&k) && s >= t0 && s < t1, "{k} in [{t0}, {t1})");
                    // The first sampled kernel where the column holds one,
                    // else the column's first kernel.
                    let sampled_in = sparse
                        .iter()
                        .position(|&s| (s as f64) >= t0 && (s as f64) < t1)
                        .map(|b| row.start + b * SPARSE_STRIDE);
                    assert_eq!(k, sampled_in.unwrap_or(first_in), "[{t0}, {t1})");
                }
                t0 = t1;
            }
        }
    }

    #[test]
    fn sampled_values_are_the_values_of_the_sampled_kernels() {
        let (spans, run, _) = dense_row();
        let kernels = spans.len() as u32;
        let trace = Trace {
            kernels: std::sync::Arc::new(crate::model::Kernels {
                spans,
                ..Default::default()
            }),
            streams: vec![crate::model::Stream {
                kernels: Track::whole(run.clone(), 1),
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut set = KernelMetrics::new(
            crate::model::MetricSource::Counters,
            vec![crate::model::MetricDef {
                name: "m".into(),
                unit: "%".into(),
            }],
        );
        // Every third kernel has no value.
        for k in (0..kernels).filter(|k| k % 3 != 0) {
            set.push(k, 0, f64::from(k % 100));
        }
        let strip = MetricsStrip::new(&trace, &set, 0).expect("values");
        let sampled = strip.sampled_of(&run).expect("the run's samples");
        let row = run.rows();
        assert_eq!(sampled.len(), row.len().div_ceil(SPARSE_STRIDE));
        for (b, &v) in sampled.iter().enumerate() {
            let k = row.start + b * SPARSE_STRIDE;
            assert_eq!(
                strip.value(k),
                Some(v).filter(|v| v.is_finite()),
                "kernel {k}"
            );
        }
        // A run that has grown since is not sampled from stale values.
        let grown = Run {
            events: run.events.start..run.events.end + 5,
            ..run
        };
        assert!(strip.sampled_of(&grown).is_none());
    }
}
