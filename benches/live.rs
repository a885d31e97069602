//! Live benchmark (issue 17): a saved report fed through the live capture
//! path (`sightline replay`, the CI-side version of a long capture), with the
//! window's frames run meanwhile at 60 per second and no renderer (see
//! `support::frame`). Prints each snapshot the window took in (its events,
//! what loading it cost the capture's thread, how old its newest event was,
//! and the frame that took it in), then the frames' times over the whole
//! capture.
//!
//! `cargo bench --bench live` ; report from `SIGHTLINE_BENCH_FILE`, else the
//! 10M-event scaled report if present, else `many_kernels.sqlite`; replayed
//! in about `SIGHTLINE_REPLAY_SECONDS` (20) of its own time, however long
//! the report ran.

// A benchmark is a script read top to bottom, as the tests are: the function-length limit is
// for `src/` (Cargo.toml's lints), not for it.
#![allow(clippy::too_many_lines)]

mod support;
use support::{frame, report, views, warmed_window};

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The window's pace while a capture runs (it asks for a repaint each frame).
const FRAME_GAP: Duration = Duration::from_millis(16);

/// What the window shows live: a report replayed, or (`SIGHTLINE_LIVE_CAPTURE`
/// = a benchmark and its arguments, as `sightline capture` takes them) a real
/// capture on this machine's GPU.
enum Source {
    Replay(std::path::PathBuf),
    Capture(String),
}

fn main() {
    // As `sightline capture` does before any thread starts: without it, a
    // capture here recorded no NVTX range.
    if std::env::var_os("SIGHTLINE_LIVE_CAPTURE").is_some() {
        let _ = sightline::capture::environment::prepare_nvtx_injection();
    }
    let source = match std::env::var("SIGHTLINE_LIVE_CAPTURE") {
        Ok(command) => Source::Capture(command),
        Err(_) => Source::Replay(report()),
    };
    let (ctx, mut app, mut t) = warmed_window();
    let began = Instant::now();
    let described = match &source {
        Source::Replay(path) => {
            let seconds: f64 = std::env::var("SIGHTLINE_REPLAY_SECONDS")
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|s: &f64| *s > 0.0)
                .unwrap_or(20.0);
            // The report's span, for the replay's speed.
            let span = match sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false)) {
                Ok(t) => {
                    let (lo, hi) = t.info.time_range;
                    (hi - lo).max(1) as f64
                }
                Err(e) => {
                    eprintln!("live bench: {e}");
                    std::process::exit(1);
                }
            };
            let speed = span / (seconds * 1e9);
            app.start_replay(path.clone(), speed);
            format!(
                "report {} replayed at {speed:.0}x (about {seconds} s of its time)",
                path.display()
            )
        }
        Source::Capture(command) => {
            use sightline::capture::benchmarks;
            let words: Vec<String> = command.split_whitespace().map(String::from).collect();
            let started = words
                .split_first()
                .ok_or("no benchmark named".to_string())
                .and_then(|(name, args)| {
                    let spec = benchmarks::find(name).map_err(|e| e.to_string())?;
                    let params = benchmarks::parse_args(spec, args).map_err(|e| e.to_string())?;
                    Ok(app.start_capture(spec, params, None))
                });
            if let Err(e) = started {
                eprintln!("live bench: SIGHTLINE_LIVE_CAPTURE={command:?}: {e}");
                std::process::exit(1);
            }
            format!("capture {command:?}")
        }
    };
    let mut frames = Vec::new();
    let mut shown_events = 0;
    let mut snapshots = Vec::new();
    let mut slowest = (Duration::ZERO, Duration::ZERO);
    // Frames over 16 ms: how long, whether a snapshot or findings came in.
    let mut over: Vec<(Duration, bool, bool)> = Vec::new();
    let mut findings_took = None;
    // Each findings arrival: when, and how many events its trace had.
    let mut findings_in: Vec<(Duration, usize)> = Vec::new();
    // Each run of the findings engine: how long it took, and how many GPU
    // operations its idle attribution merged (extended: those since its
    // checkpoint).
    let mut engine_runs: Vec<(Option<Duration>, Option<usize>)> = Vec::new();
    // SIGHTLINE_SHOW_IDLE_ROW=1: the "GPU idle — why" row shown all along.
    let show_idle_row = std::env::var_os("SIGHTLINE_SHOW_IDLE_ROW").is_some();
    loop {
        t += 0.016;
        if show_idle_row && let Some(doc) = app.doc_mut() {
            doc.timeline.view.show_idle_why = true;
        }
        let taken = Instant::now();
        let running = app.poll_captures(None);
        let take_in = taken.elapsed();
        let d = take_in + frame(&ctx, &mut app, t);
        frames.push(d);
        let now = began.elapsed();
        if d > slowest.0 {
            slowest = (d, now);
        }
        if let Some(doc) = app.doc() {
            let events = doc.trace.event_count();
            let snapshot = events != shown_events;
            if snapshot {
                shown_events = events;
                let status = doc.live.as_ref().map(|l| l.status.clone());
                snapshots.push((now, events, status, take_in, d));
            }
            let arrived = doc.findings.took != findings_took;
            findings_took = doc.findings.took;
            if arrived {
                findings_in.push((now, doc.findings.analysed_events));
                engine_runs.push((doc.findings.took, doc.findings.idle_merged()));
            }
            if d > FRAME_GAP {
                over.push((d, snapshot, arrived));
            }
        }
        if !running {
            break;
        }
        std::thread::sleep(FRAME_GAP.saturating_sub(d));
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("{described} in {:.1} s", began.elapsed().as_secs_f64());
    if let Some(problem) = app.doc().and_then(|d| d.live.as_ref()?.problem.clone()) {
        println!("the capture's problem: {problem}");
    }
    for (k, (at, events, status, take_in, d)) in snapshots.iter().enumerate() {
        let (cost, age) = status.as_ref().map_or((0.0, 0.0), |s| {
            (ms(s.snapshot_cost), ms(s.newest_event_age))
        });
        // The load's NVTX phase: its table is built again at every load.
        let nvtx = status.as_ref().map_or(0.0, |s| {
            let phases = s.snapshot_phases.0.iter();
            phases.filter(|p| p.0 == "NVTX").map(|p| ms(p.1)).sum()
        });
        println!(
            "snapshot {:>3} at {:7.2} s: {events:>10} events, load {cost:7.1} ms (NVTX {nvtx:5.1}), newest event {age:7.1} ms old, taken in {:5.1} ms, that frame {:5.1} ms",
            k + 1,
            at.as_secs_f64(),
            ms(*take_in),
            ms(*d)
        );
    }
    frames.sort();
    let pick = |q: f64| frames[((frames.len() - 1) as f64 * q) as usize];
    println!(
        "frames while live: {}, median {:.2} ms, p95 {:.2} ms, slowest {:.1} ms at {:.2} s",
        frames.len(),
        ms(pick(0.5)),
        ms(pick(0.95)),
        ms(slowest.0),
        slowest.1.as_secs_f64()
    );
    println!(
        "frames over {} ms: {}, p99 {:.1} ms; {} took in a snapshot, {} took in findings",
        FRAME_GAP.as_millis(),
        over.len(),
        ms(pick(0.99)),
        over.iter().filter(|o| o.1).count(),
        over.iter().filter(|o| o.2).count()
    );
    // How long a snapshot's mistakes took to be diagnosed: from its arrival
    // to the first findings of it or of a later snapshot.
    let mut diagnosed: Vec<Duration> = (snapshots.iter())
        .filter_map(|&(at, events, ..)| {
            let (arrival, _) = findings_in.iter().find(|f| f.0 >= at && f.1 >= events)?;
            Some(*arrival - at)
        })
        .collect();
    diagnosed.sort();
    if let (Some(median), Some(p95), Some(max)) = (
        diagnosed.get(diagnosed.len() / 2),
        diagnosed.get((diagnosed.len().saturating_sub(1) as f64 * 0.95) as usize),
        diagnosed.last(),
    ) {
        println!(
            "findings: {} runs in; a snapshot's findings came {:.0} ms after it (median), p95 {:.0} ms, max {:.0} ms ({} of {} snapshots diagnosed before the end)",
            findings_in.len(),
            ms(*median),
            ms(*p95),
            ms(*max),
            diagnosed.len(),
            snapshots.len()
        );
    }
    // The engine's runs over the capture's second half, when the trace is
    // big: what each cost, and how much of the trace its attribution merged.
    let late = &engine_runs[engine_runs.len() / 2..];
    let late_events = &findings_in[findings_in.len() / 2..];
    let mut took: Vec<Duration> = late.iter().filter_map(|r| r.0).collect();
    took.sort();
    let mut share: Vec<f64> = (late.iter().zip(late_events))
        .filter_map(|(r, f)| Some(r.1? as f64 / (f.1.max(1)) as f64))
        .collect();
    share.sort_by(f64::total_cmp);
    if let (Some(median), Some(max)) = (took.get(took.len() / 2), took.last()) {
        println!(
            "engine runs in the second half: {}, each {:.0} ms (median), max {:.0} ms; operations merged per event of the trace: median {}",
            took.len(),
            ms(*median),
            ms(*max),
            share
                .get(share.len() / 2)
                .map_or("(not kept)".to_string(), |s| format!("{s:.4}"))
        );
    }
    // The whole process: what the window's background work cost while live.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status.lines().find(|l| l.starts_with("VmHWM:"));
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // utime and stime, the 14th and 15th fields, in clock ticks (100 a second
    // on Linux), after the command's name in parentheses.
    let ticks: u64 = (stat.rsplit_once(')').map_or("", |(_, rest)| rest))
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse::<u64>().ok())
        .sum();
    println!(
        "process while live: CPU {:.1} s, peak resident {}",
        ticks as f64 / 100.0,
        peak.map_or("?", |l| l.trim_start_matches("VmHWM:").trim())
    );
    let replayed = match &source {
        Source::Replay(path) => Some(path.as_path()),
        Source::Capture(_) => None,
    };
    after_the_capture(&ctx, &mut app, &mut t, replayed);
}

/// Frames of the capture's last state (a model grown by hundreds of
/// snapshots: its tracks are made of that many runs) against the report
/// `replayed` loaded whole, at three zooms, once the background work is done.
fn after_the_capture(
    ctx: &eframe::egui::Context,
    app: &mut sightline::app::SightlineApp,
    t: &mut f64,
    replayed: Option<&std::path::Path>,
) {
    let Some(d) = app.doc_mut() else {
        return;
    };
    d.wait_for_background_work();
    let trace = d.trace.clone();
    println!(
        "after the capture: {} events, {} findings, the engine's last run {:.2} s",
        trace.event_count(),
        d.findings.findings.len(),
        d.findings.took.map_or(0.0, |t| t.as_secs_f64())
    );
    let runs = (trace.threads.iter().map(|th| th.cuda_api.runs().len()))
        .chain(trace.streams.iter().map(|s| s.kernels.runs().len()))
        .max()
        .unwrap_or(0);
    let (lo, hi) = trace.info.time_range;
    let (mid, full) = ((lo + hi) as f64 / 2.0, (hi - lo) as f64);
    let cases: [(&str, f64); 3] = [
        ("whole trace", full),
        ("mid zoom (1/1000)", full / 1000.0),
        ("deepest (10 µs)", 10_000.0),
    ];
    println!("after the capture: {runs} runs in its most cut track");
    views(ctx, app, t, mid, &cases, 60, ", grown");
    let Some(path) = replayed else {
        return;
    };
    let whole = match sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("live bench: {e}");
            return;
        }
    };
    let mut loaded = sightline::app::SightlineApp::with_trace(whole);
    for _ in 0..5 {
        *t += 0.016;
        frame(ctx, &mut loaded, *t);
    }
    if let Some(d) = loaded.doc_mut() {
        d.wait_for_background_work();
    }
    views(ctx, &mut loaded, t, mid, &cases, 60, ", loaded whole");
}
