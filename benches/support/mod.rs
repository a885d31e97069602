//! What the window benchmarks share: the report they open and one frame of
//! the real window with no renderer.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use eframe::egui;
use sightline::app::SightlineApp;

/// The report from `SIGHTLINE_BENCH_FILE`, else the 10M-event scaled report
/// if present, else `many_kernels.sqlite`.
#[allow(dead_code)]
pub fn report() -> PathBuf {
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

/// One frame on a 1600×1000 screen: `SightlineApp::ui` inside
/// `egui::Context::run`, then tessellation (what a frame costs the CPU
/// before the GPU gets it). Returns its wall time.
pub fn frame(ctx: &egui::Context, app: &mut SightlineApp, t: f64) -> Duration {
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

/// An empty window whose fonts and galleys are warmed by a few frames, and
/// the input time it has reached (what the opening and live benchmarks open
/// into; the frame benchmark warms a window holding its report instead).
#[allow(dead_code)]
pub fn warmed_window() -> (egui::Context, SightlineApp, f64) {
    let ctx = egui::Context::default();
    let mut app = SightlineApp::default();
    let mut t = 0.0;
    for _ in 0..3 {
        t += 0.016;
        frame(&ctx, &mut app, t);
    }
    (ctx, app, t)
}

/// Prints the median and p95 of frame times `v` under `name`.
#[allow(dead_code)]
pub fn stats(name: &str, mut v: Vec<Duration>, painted: usize) {
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
#[allow(dead_code)]
pub fn views(
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

/// A line of /proc/self/status in kB (`VmHWM:` the peak resident set, `VmRSS:` the current).
#[allow(dead_code)]
pub fn status_kb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The peak resident set of the largest child process waited for (KB): the engine, where the
/// window ran it (a Parquet job's summaries).
#[allow(dead_code)]
pub fn children_peak_kb() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; zeroed, it is valid whatever it does.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr());
        usage.assume_init()
    };
    u64::try_from(usage.ru_maxrss).unwrap_or(0)
}

/// The bytes the allocator has handed out and not had back (glibc's `mallinfo2`: in its arenas
/// and in mappings of their own): the live heap, whatever freed memory it keeps besides.
#[allow(dead_code)]
pub fn heap_in_use() -> u64 {
    // SAFETY: mallinfo2 takes no pointer and returns a plain struct.
    let info = unsafe { libc::mallinfo2() };
    (info.uordblks + info.hblkhd) as u64
}

/// Step `k` of a view moving about `(a, b)`: pan right 2 % of the span, zoom in 10 %, pan left,
/// zoom out, again and again (every collapsed lane's columns are made anew).
#[allow(dead_code)]
pub fn moved_axis((a, b): (f64, f64), k: usize) -> (f64, f64) {
    let (pan, zoom) = match k % 4 {
        0 => (0.02, 0.0),
        1 => (0.0, 0.05),
        2 => (-0.02, 0.0),
        _ => (0.0, -0.05 / 0.9),
    };
    let (pan, zoom) = (pan * (b - a), zoom * (b - a));
    (a + pan + zoom, b + pan - zoom)
}

/// Frames per view: `SIGHTLINE_BENCH_FRAMES` (more for a profiler to sample), else 60.
#[allow(dead_code)]
pub fn frames_per_view() -> usize {
    std::env::var("SIGHTLINE_BENCH_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60)
}
