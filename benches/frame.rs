//! Frame benchmark: the real timeline drawing code, no window. Runs
//! `SightlineApp::ui` inside `egui::Context::run` on a 1600×1000 screen and
//! tessellates the result (what a frame costs the CPU before the GPU gets it).
//!
//! `cargo bench --bench frame` ; report from `SIGHTLINE_BENCH_FILE`, else the
//! 10M-event scaled report if present, else `many_kernels.sqlite`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use eframe::egui;
use sightline::app::SightlineApp;

fn report() -> PathBuf {
    if let Ok(p) = std::env::var("SIGHTLINE_BENCH_FILE") {
        return p.into();
    }
    let big = PathBuf::from("/work/bench-data/many_kernels_x17.sqlite");
    if big.is_file() {
        return big;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/nsys-2025.3/many_kernels.sqlite")
}

fn frame(ctx: &egui::Context, app: &mut SightlineApp, t: f64) -> Duration {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1600.0, 1000.0),
        )),
        time: Some(t),
        ..Default::default()
    };
    let t0 = Instant::now();
    let mut out = ctx.run_ui(input, |ui| app.ui(ui));
    // No renderer takes the texture uploads (a debug build asserts on them).
    out.textures_delta.clear();
    let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
    std::hint::black_box(prims);
    t0.elapsed()
}

fn stats(name: &str, mut v: Vec<Duration>, painted: usize) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let med = v[v.len() / 2];
    let p95 = v[(v.len() * 95 / 100).min(v.len() - 1)];
    println!(
        "{name:<22} median {:7.3} ms   p95 {:7.3} ms   ({} frames, {painted} boxes/marks painted)",
        ms(med),
        ms(p95),
        v.len()
    );
}

/// `n` frames of each view `(name, span)` centred on `mid`, timed; `suffix`
/// goes after each name in the output.
fn views(
    ctx: &egui::Context,
    app: &mut SightlineApp,
    t: &mut f64,
    mid: f64,
    cases: &[(&str, f64)],
    n: usize,
    suffix: &str,
) {
    for &(name, span) in cases {
        let mut v = Vec::new();
        for _ in 0..n {
            if let Some(d) = app.doc_mut() {
                d.timeline.view.set(mid - span / 2.0, mid + span / 2.0);
            }
            *t += 0.016;
            v.push(frame(ctx, app, *t));
        }
        let painted = app.doc().map_or(0, |d| d.timeline.painted);
        stats(&format!("{name}{suffix}"), v, painted);
    }
}

fn main() {
    let path = report();
    let t0 = Instant::now();
    let trace = match sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("frame bench: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "report {} : {} events, loaded in {:.2} s",
        path.display(),
        trace.event_count(),
        t0.elapsed().as_secs_f64()
    );
    let (lo, hi) = trace.info.time_range;
    let mut app = SightlineApp::with_trace(trace);
    let ctx = egui::Context::default();
    let mut t = 0.0;
    // Warm up fonts and galley caches.
    for _ in 0..5 {
        t += 0.016;
        frame(&ctx, &mut app, t);
    }
    let n = 60;
    let mid = (lo + hi) as f64 / 2.0;
    let full = (hi - lo) as f64;
    let cases: [(&str, f64); 3] = [
        ("whole trace", full),
        ("mid zoom (1/1000)", full / 1000.0),
        ("deepest (10 µs)", 10_000.0),
    ];
    views(&ctx, &mut app, &mut t, mid, &cases, n, "");
    // The metrics strip under the kernels rows (issue 15): the report has no
    // counters, so every kernel gets a made-up SM throughput; what is timed
    // is the strip's painting, which does not depend on the values.
    if let Some(d) = app.doc_mut() {
        let kernels = d.trace.kernels.spans.len() as u32;
        let mut set = sightline::model::KernelMetrics::new(
            sightline::model::MetricSource::Counters,
            vec![sightline::model::MetricDef {
                name: "sm__throughput.avg.pct_of_peak_sustained_elapsed".into(),
                unit: "%".into(),
            }],
        );
        for k in 0..kernels {
            set.push(k, 0, f64::from(k % 101));
        }
        d.timeline.metrics_strip =
            sightline::app::timeline::metrics_strip::MetricsStrip::new(&d.trace, &set, 0)
                .map(std::sync::Arc::new);
    }
    views(&ctx, &mut app, &mut t, mid, &cases, n, ", strip");
    // Panning at mid zoom: 2% of the view per frame, like a held D key.
    let span = full / 100.0;
    let mut v = Vec::new();
    for k in 0..n {
        if let Some(d) = app.doc_mut() {
            let s = lo as f64 + span * 0.02 * k as f64 * 10.0;
            d.timeline.view.set(s, s + span);
        }
        t += 0.016;
        v.push(frame(&ctx, &mut app, t));
    }
    let painted = app.doc().map_or(0, |d| d.timeline.painted);
    stats("panning (1/100 view)", v, painted);
    // Search on Enter: names first, then every event whose name matches.
    for q in ["axpy", "cudaMalloc"] {
        let mut v = Vec::new();
        let mut found = 0;
        for _ in 0..5 {
            if let Some(d) = app.doc_mut() {
                let trace = d.trace.clone();
                d.search.query = q.into();
                let t0 = Instant::now();
                d.search.run(&trace);
                v.push(t0.elapsed());
                found = d.search.matches.len();
            }
        }
        v.sort();
        println!(
            "{:<22} median {:7.3} ms   max {:7.3} ms   ({} runs, {found} matches)",
            format!("search {q:?}"),
            v[v.len() / 2].as_secs_f64() * 1e3,
            v[v.len() - 1].as_secs_f64() * 1e3,
            v.len()
        );
    }
}
