//! Opening benchmark (issue 17, progressive opening): opens a report the way
//! File ▸ Open does — a loader thread, snapshots shown as they come — and runs
//! the window's frames meanwhile at the pace the window asks for while a load
//! runs (a repaint every 50 ms; `FRAME_GAP`), with no renderer (see
//! `support::frame`). Then loads the report again with no window, for the
//! cost of opening progressively, side by side.
//!
//! Prints when the first picture was drawn and what it held, when the GPU
//! rows and the whole report were in, and the frames' times while loading.
//!
//! `cargo bench --bench opening` ; report from `SIGHTLINE_BENCH_FILE`, else the
//! 10M-event scaled report if present, else `many_kernels.sqlite`.

mod support;
use support::{frame, report, warmed_window};

use std::time::{Duration, Instant};

/// The window repaints every 50 ms while a load runs (and at once on input).
const FRAME_GAP: Duration = Duration::from_millis(50);

fn main() {
    let path = report();
    // From the page cache, as `sightline bench` reads: the disk is not timed.
    if let Ok(mut f) = std::fs::File::open(&path) {
        let _ = std::io::copy(&mut f, &mut std::io::sink());
    }
    let (ctx, mut app, mut t) = warmed_window();
    let began = Instant::now();
    app.open(path.clone());
    let mut first_picture: Option<(Duration, usize, String)> = None;
    let mut gpu_rows: Option<(Duration, usize)> = None;
    let mut frames = Vec::new();
    let mut slowest: (Duration, Duration) = (Duration::ZERO, Duration::ZERO);
    let mut shown_events = 0;
    let mut growths = Vec::new();
    loop {
        t += 0.016;
        // The snapshot is taken in (Document::grow) apart from the frame
        // that draws it, to tell the two costs apart; the frame is timed
        // with both, as the window pays them.
        let taken = Instant::now();
        app.poll_loading();
        let grow = taken.elapsed();
        let d = grow + frame(&ctx, &mut app, t);
        frames.push(d);
        let now = began.elapsed();
        if d > slowest.0 {
            slowest = (d, now);
        }
        let Some(doc) = app.doc() else {
            std::thread::sleep(FRAME_GAP.saturating_sub(d));
            continue;
        };
        let events = doc.trace.event_count();
        if first_picture.is_none() {
            let what = if doc.is_loading() {
                format!("still to come: {}", doc.trace.info.still_loading.join(", "))
            } else {
                "the whole report".into()
            };
            first_picture = Some((now, events, what));
        }
        if events != shown_events {
            growths.push((now, events, d, grow));
            shown_events = events;
        }
        if gpu_rows.is_none() && !doc.trace.kernels.spans.is_empty() {
            gpu_rows = Some((now, events));
        }
        if !doc.is_loading() {
            break;
        }
        std::thread::sleep(FRAME_GAP.saturating_sub(d));
    }
    let whole = began.elapsed();
    // Closing the report's tab, once the work it started is done (as when a
    // user closes it later): what the window's thread pays for it.
    if let Some(d) = app.doc_mut() {
        d.wait_for_background_work();
    }
    let closing = Instant::now();
    app.close_tab(0);
    let closed = closing.elapsed();
    drop(app);
    let plain = Instant::now();
    let trace = sightline::loader::load(
        &path,
        &mut |_| {},
        &std::sync::atomic::AtomicBool::new(false),
    );
    let plain = plain.elapsed();
    drop(trace);
    let s = |d: Duration| d.as_secs_f64();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("report {}", path.display());
    println!(
        "closing its tab   {:7.1} ms on the window's thread",
        ms(closed)
    );
    if let Some((at, events, what)) = &first_picture {
        println!(
            "first picture     {:7.3} s  ({events} events; {what})",
            s(*at)
        );
    }
    if let Some((at, events)) = gpu_rows {
        println!("GPU rows drawn    {:7.3} s  ({events} events)", s(at));
    }
    for (at, events, d, grow) in &growths {
        println!(
            "  grew at {:7.3} s to {events:>10} events, that frame {:6.1} ms ({:.1} ms taking the snapshot in)",
            s(*at),
            ms(*d),
            ms(*grow)
        );
    }
    println!(
        "whole report      {:7.3} s  ({shown_events} events)",
        s(whole)
    );
    println!(
        "plain load        {:7.3} s  (no window, no snapshots; whole / plain = {:.2})",
        s(plain),
        s(whole) / s(plain)
    );
    frames.sort();
    let p95 = frames[(frames.len() * 95 / 100).min(frames.len() - 1)];
    println!(
        "frames while opening: {} , median {:.2} ms, p95 {:.2} ms, slowest {:.1} ms at {:.3} s",
        frames.len(),
        ms(frames[frames.len() / 2]),
        ms(p95),
        ms(slowest.0),
        s(slowest.1)
    );
}
