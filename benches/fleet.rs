//! Fleet benchmark (issue 46, "the window at fleet size"): a job of more ranks than the window
//! reads whole, opened as `sightline DIR` opens it, on its ranks' NVTX ranges. Measured: the
//! ranks panel's first answer and the open's end, what the process holds then (resident set,
//! live heap, events), frames with every rank collapsed (still, and while the view moves), one
//! rank's events read when it is expanded, and frames with it expanded. Side by side: that
//! rank's report loaded alone in the same process.
//!
//! `SIGHTLINE_BENCH_JOB=DIR cargo bench --bench fleet` (DIR: a folder of rank reports, e.g.
//! `sightline synth --from R.sqlite --ranks 256 --output DIR`, or their Parquet export, which
//! opens on the engine's summaries: `sightline-engine` beside the bench, built with
//! `cargo build --release -p sightline-engine`); `SIGHTLINE_BENCH_FRAMES` frames per view (60).

mod support;
use support::{children_peak_kb, frame, heap_in_use, moved_axis, stats, status_kb};

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use eframe::egui;
use sightline::app::SightlineApp;
use sightline::app::panels::job_view::RankEvents;

fn main() {
    sightline::loader::configure_sqlite();
    let Some(folder) = std::env::var_os("SIGHTLINE_BENCH_JOB").map(PathBuf::from) else {
        eprintln!("fleet bench: SIGHTLINE_BENCH_JOB=DIR, a folder of rank reports");
        std::process::exit(2)
    };
    let frames = support::frames_per_view();
    let ctx = egui::Context::default();
    let mut app = SightlineApp::default();
    let t0 = Instant::now();
    app.open(folder.clone());
    let mut t = 0.0;
    let mut ranks_panel = None;
    let opened = loop {
        t += 0.05;
        frame(&ctx, &mut app, t);
        let view = app.job_view().expect("a job tab");
        if ranks_panel.is_none() && view.analysis.is_some() {
            ranks_panel = Some(t0.elapsed());
        }
        if !view.is_loading() {
            break t0.elapsed();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let view = app.job_view().expect("job");
    if let Some(e) = &view.error {
        eprintln!("fleet bench: {e}");
        std::process::exit(1)
    }
    let events: usize = (view.ranks.iter())
        .map(|r| r.rank.trace.event_count())
        .sum();
    println!(
        "job {}: {} ranks, {} of them not read, {} cores",
        folder.display(),
        view.ranks.len(),
        view.unread(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let secs = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
    println!("ranks panel answered   {:8.3} s", secs(ranks_panel));
    println!("opened                 {:8.3} s", opened.as_secs_f64());
    println!(
        "held: {events} events, resident {} MB (peak {} MB), live heap {} MB",
        status_kb("VmRSS:") / 1024,
        status_kb("VmHWM:") / 1024,
        heap_in_use() / (1 << 20)
    );
    // A Parquet job folder is opened on the engine's summaries, computed in a child process.
    if view.parquet.is_some() {
        println!(
            "the engine (sightline-engine summaries, a child process): peak resident {} MB",
            children_peak_kb() / 1024
        );
    }

    let opened_on = app.job_view().expect("job").axis;
    collapsed_frames(&ctx, &mut app, &mut t, frames, opened_on);

    // One rank in the middle expanded: its events read off the window's thread, frames meanwhile.
    let view = app.job_view_mut().expect("job");
    let middle = view.ranks.len() / 2;
    let path = view.ranks[middle].rank.path.clone();
    let t1 = Instant::now();
    view.set_expanded(middle, true);
    let mut during = Vec::new();
    loop {
        t += 0.016;
        during.push(frame(&ctx, &mut app, t));
        let view = app.job_view().expect("job");
        if view.ranks[middle].events != RankEvents::Reading {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let read = t1.elapsed();
    stats("frames while it's read", during, 0);
    let mut times = Vec::with_capacity(frames);
    for _ in 0..frames {
        t += 0.016;
        times.push(frame(&ctx, &mut app, t));
    }
    stats("frames, one expanded", times, 0);
    let t2 = Instant::now();
    let alone = sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false));
    let alone_s = t2.elapsed().as_secs_f64();
    let alone_events = alone.map_or(0, |t| t.event_count());
    println!(
        "rank {middle} read on expand {:8.3} s; alone {alone_s:8.3} s ({alone_events} events); resident now {} MB",
        read.as_secs_f64(),
        status_kb("VmRSS:") / 1024
    );
}

/// Frames with every rank collapsed at the view opened on, then while the view moves (pan 2 %,
/// zoom 10 %, back, again).
fn collapsed_frames(
    ctx: &egui::Context,
    app: &mut SightlineApp,
    t: &mut f64,
    frames: usize,
    opened_on: (f64, f64),
) {
    for (name, moving) in [
        ("frames, all collapsed", false),
        ("collapsed, moving", true),
    ] {
        app.job_view_mut().expect("job").set_axis(opened_on);
        let mut times = Vec::with_capacity(frames);
        for k in 0..frames {
            if moving {
                let view = app.job_view_mut().expect("job");
                view.set_axis(moved_axis(view.axis, k));
            }
            *t += 0.016;
            times.push(frame(ctx, app, *t));
        }
        stats(name, times, 0);
    }
}
