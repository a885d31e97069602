//! Job benchmark (issue 42): a job of many reports opened as the window opens it (one report
//! per core, one progress), then its frames with every rank collapsed and with every rank
//! expanded, and the heatmap's first answer. Side by side: the slowest rank loaded alone, and
//! the process's peak memory against the ranks loaded alone one after another.
//!
//! `cargo bench --bench job` ; the job is the folder `SIGHTLINE_BENCH_JOB` (every `.sqlite` in
//! it), else 8 ranks made here with `sightline synth --ranks 8` from `SIGHTLINE_BENCH_FILE`
//! (else `tests/fixtures/jobs/balanced/rank0.sqlite`). `SIGHTLINE_BENCH_FRAMES` frames per
//! view (60).

mod support;
use support::{frame, stats};

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use eframe::egui;
use sightline::app::SightlineApp;

/// The job's folder: given, or made with `synth --ranks 8` (kept in the temporary folder).
fn job_folder() -> PathBuf {
    if let Ok(dir) = std::env::var("SIGHTLINE_BENCH_JOB") {
        return PathBuf::from(dir);
    }
    let from = std::env::var("SIGHTLINE_BENCH_FILE").map_or_else(
        |_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/jobs/balanced/rank0.sqlite")
        },
        PathBuf::from,
    );
    let out = std::env::temp_dir().join(format!("sightline-bench-job-{}", std::process::id()));
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["synth", "--ranks", "8", "--clock-offsets", "20", "--from"])
        .arg(&from)
        .arg("--output")
        .arg(&out)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("job bench: synth --ranks 8 from {} failed", from.display());
        std::process::exit(1);
    }
    out
}

/// The process's peak resident memory so far (kB), from /proc.
fn peak_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let folder = job_folder();
    let reports = sightline::loader::ranks::reports_in(&folder).unwrap_or_else(|e| {
        eprintln!("job bench: {e}");
        std::process::exit(1)
    });
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "job {} : {} ranks, {cores} cores",
        folder.display(),
        reports.len()
    );
    let frames: usize = std::env::var("SIGHTLINE_BENCH_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);

    // Opened as `sightline DIR` opens it, frames run meanwhile every 50 ms.
    let ctx = egui::Context::default();
    let mut app = SightlineApp::default();
    let t0 = Instant::now();
    app.open(folder.clone());
    let mut t = 0.0;
    let mut first_picture = None;
    let loaded = loop {
        t += 0.05;
        frame(&ctx, &mut app, t);
        let view = app.job_view().expect("a job tab");
        if first_picture.is_none() && !view.rank_rects.is_empty() {
            first_picture = Some((t0.elapsed(), view.rank_rects.len()));
        }
        if !view.is_loading() {
            break t0.elapsed();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    frame(&ctx, &mut app, t + 0.05);
    let events: usize = (app.job_view().expect("job").ranks.iter())
        .map(|r| r.rank.trace.event_count())
        .sum();
    let job_peak = peak_kb();
    if let Some((at, ranks)) = first_picture {
        println!(
            "first picture               {:.3} s  ({ranks} of {} ranks drawn, the rest still read)",
            at.as_secs_f64(),
            reports.len()
        );
    }
    println!(
        "whole job loaded            {:.3} s  ({events} events; every rank drawn collapsed)",
        loaded.as_secs_f64()
    );

    // Each rank alone, one after another: the slowest, and the memory each needs.
    let mut slowest = Duration::ZERO;
    for path in &reports {
        let t = Instant::now();
        let trace = sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false));
        slowest = slowest.max(t.elapsed());
        drop(trace);
    }
    let waves = reports.len().div_ceil(cores);
    println!(
        "slowest rank alone          {:.3} s  × ⌈{} / {cores}⌉ = {:.3} s; job / that = {:.2}",
        slowest.as_secs_f64(),
        reports.len(),
        slowest.as_secs_f64() * waves as f64,
        loaded.as_secs_f64() / (slowest.as_secs_f64() * waves as f64)
    );
    println!("peak resident with the job open: {} MB", job_peak / 1024);

    // Frames: every rank collapsed, then every rank expanded.
    for (name, expanded) in [("collapsed", false), ("expanded", true)] {
        let view = app.job_view_mut().expect("job");
        for i in 0..view.ranks.len() {
            view.set_expanded(i, expanded);
        }
        let mut times = Vec::with_capacity(frames);
        for _ in 0..frames {
            t += 0.016;
            times.push(frame(&ctx, &mut app, t));
        }
        stats(&format!("frames, all {name}"), times, 0);
    }
    // The heatmap's first answer: the ranks' iterations are found with the load, so a frame
    // that shows it is its cost.
    let view = app.job_view_mut().expect("job");
    view.heatmap_phase = view
        .analysis
        .as_ref()
        .and_then(|a| a.iterations.phase_names.first().cloned());
    t += 0.016;
    let heat = frame(&ctx, &mut app, t);
    println!(
        "heatmap of a phase, first frame {:.2} ms ({} cells)",
        heat.as_secs_f64() * 1e3,
        app.job_view().expect("job").cells.len()
    );
}
