//! Frame benchmark: the real timeline drawing code, no window. Runs
//! `SightlineApp::ui` inside `egui::Context::run` on a 1600×1000 screen and
//! tessellates the result (what a frame costs the CPU before the GPU gets it).
//!
//! `cargo bench --bench frame` ; report from `SIGHTLINE_BENCH_FILE`, else the
//! 10M-event scaled report if present, else `many_kernels.sqlite`;
//! `SIGHTLINE_BENCH_FRAMES` frames per view (60).

mod support;
use support::{frame, report, stats, views};

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use eframe::egui;
use sightline::app::SightlineApp;

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
    // The findings engine and the idle rows start on workers when a report
    // opens; their end is awaited so that what is timed is the frame alone
    // (on this 2-core machine they would share its cores with the frames).
    if let Some(d) = app.doc_mut() {
        d.wait_for_background_work();
    }
    let n = support::frames_per_view();
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
    kernel_panel(&app);
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

/// The kernel panel's two computations for the report's most frequent
/// kernel, with counters for every kernel instance (the default set's 9
/// metrics, made-up values: what is timed does not depend on them). Both run
/// on workers in the window; this is how long the panel waits for them.
fn kernel_panel(app: &SightlineApp) {
    use sightline::analysis::metrics::summarise;
    use sightline::app::panels::kernel_panel::KernelView;
    use sightline::capture::counters::{DEFAULT_METRICS, unit_of};
    use sightline::model::{KernelMetrics, MetricDef, MetricSource};
    let Some(d) = app.doc() else {
        return;
    };
    let trace = &d.trace;
    let k = &trace.kernels;
    let mut counts = std::collections::HashMap::new();
    for &name in &k.spans.name {
        *counts.entry(name).or_insert(0usize) += 1;
    }
    let Some((&name, &instances)) = counts.iter().max_by_key(|&(_, &n)| n) else {
        return;
    };
    let metrics = DEFAULT_METRICS
        .iter()
        .map(|m| MetricDef {
            name: m.to_string(),
            unit: unit_of(m).to_string(),
        })
        .collect();
    let mut set = KernelMetrics::new(MetricSource::Counters, metrics);
    for i in 0..k.spans.len() as u32 {
        for m in 0..DEFAULT_METRICS.len() as u16 {
            set.push(i, m, f64::from((i + u32::from(m)) % 97));
        }
    }
    let sets = vec![std::sync::Arc::new(set)];
    let mut view_ms = Vec::new();
    let mut metrics_ms = Vec::new();
    for _ in 0..5 {
        let t0 = Instant::now();
        let view = KernelView::compute(trace, name, None);
        view_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        let kernels: Vec<u32> = (0..k.spans.len() as u32)
            .filter(|&i| k.spans.name[i as usize] == name)
            .collect();
        let t0 = Instant::now();
        let summaries = summarise(trace, &sets, &kernels);
        metrics_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        assert!(view.is_some() && !summaries.is_empty());
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "kernel panel ({instances} instances, 9 counters each): view median {:.1} ms, metrics \
         section median {:.1} ms (both on workers)",
        median(view_ms),
        median(metrics_ms)
    );
}
