//! Work that ran on the UI thread before and runs on a worker now, timed on
//! the ≥10-million-event report (many_kernels × 17), to show why: a search
//! over every event, and the idle time of a range over the whole report.
//! Ignored by default; run with
//! `BIG_REPORT=PATH cargo test --release --test ui_work_perf -- --ignored --nocapture`.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use sightline::analysis::idle::{Classifier, Lanes, attribute, summarize};
use sightline::app::panels::search::{Search, Then};

#[test]
#[ignore]
fn search_and_range_idle_on_ten_million_events() {
    let Some(path) = std::env::var_os("BIG_REPORT") else {
        eprintln!("skipped: set BIG_REPORT to a report written by `sightline synth`");
        return;
    };
    let cancel = AtomicBool::new(false);
    let trace = Arc::new(
        sightline::loader::load(std::path::Path::new(&path), &mut |_| {}, &cancel).expect("load"),
    );
    println!("{} events", trace.event_count());
    for query in ["cudaLaunchKernel", "zzz-no-such-name"] {
        let mut search = Search::default();
        search.query = query.into();
        let t = Instant::now();
        search.run(&trace);
        let in_place = t.elapsed();
        // The window's way: the frame that starts it only spawns the worker.
        let t = Instant::now();
        search.start(&trace, None, Then::Outline);
        let frame = t.elapsed();
        search.wait();
        println!(
            "search {query:?}: {} matches; in place {:.1} ms, starting it on a worker {:.3} ms",
            search.matches.len(),
            in_place.as_secs_f64() * 1e3,
            frame.as_secs_f64() * 1e3
        );
    }
    let attribution = attribute(&trace, Lanes::Device, &cancel).expect("not cancelled");
    let whole = attribution.spans().fold((i64::MAX, i64::MIN), |(a, b), s| {
        (a.min(s.start), b.max(s.end))
    });
    let t = Instant::now();
    let summaries = summarize(&Classifier::new(&trace), &attribution, Some(&[whole][..]));
    println!(
        "idle time of a range over the whole report ({} GPUs): {:.1} ms (once per frame before)",
        summaries.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
}
