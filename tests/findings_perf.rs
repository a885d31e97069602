//! Timing of the findings engine and the rules on a ≥10-million-event report
//! (many_kernels × 17, written by the synthetic writer). Ignored by default
//! and needs `../shared/fixtures`; run with
//! `cargo test --release --test findings_perf -- --ignored --nocapture`
//! (`SCALE=N` for another number of copies, `SOURCE=PATH` for another report
//! to copy, `BIG_REPORT=PATH` for a report already written).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use sightline::analysis::findings::{
    Thresholds, analyze, analyze_grown, analyze_with_range_work, entries, entries_in,
    range_gpu_spans,
};
use sightline::analysis::idle::{Lanes, attribute};
use sightline::analysis::rules::{Rule, RuleOptions, run};

#[test]
#[ignore]
fn findings_on_ten_million_events() {
    // SOURCE=PATH copies another report (the binary run on another machine).
    let source = std::env::var_os("SOURCE").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/fixtures/nsys-2025.3/many_kernels.sqlite")
        },
        std::path::PathBuf::from,
    );
    let cancel = AtomicBool::new(false);
    let dir = tempfile::tempdir().expect("temp dir");
    // BIG_REPORT=PATH times a report already written (`sightline synth`,
    // or a capture on another machine), saving the minutes the writer takes.
    let big = match std::env::var_os("BIG_REPORT") {
        Some(p) => p.into(),
        None if !source.is_file() => {
            eprintln!("skipped: {} is not there", source.display());
            return;
        }
        None => {
            let small = sightline::loader::load(&source, &mut |_| {}, &cancel).expect("load");
            let big = dir.path().join("many_kernels_x17.sqlite");
            sightline::synth::write_report(
                &small,
                std::env::var("SCALE")
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(17),
                &big,
                &mut |_| {},
                &cancel,
            )
            .expect("write");
            big
        }
    };
    let trace = sightline::loader::load(&big, &mut |_| {}, &cancel).expect("load");
    println!("{} events", trace.event_count());
    // The idle-gap attribution alone (the engine runs it too, and the
    // timeline's "GPU idle — why" row on its own worker).
    let t = Instant::now();
    let idle = attribute(&trace, Lanes::Device, &cancel).expect("not cancelled");
    println!(
        "idle attribution: {} gaps in {:.3} s",
        idle.gap_count(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let found = analyze(&trace, None, &Thresholds::default(), &cancel).expect("not cancelled");
    println!(
        "findings (attribution included): {} in {:.3} s, {} entries",
        found.len(),
        t.elapsed().as_secs_f64(),
        entries(&found).len()
    );
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for f in &found {
        match kinds.iter_mut().find(|(k, _)| *k == f.kind.name()) {
            Some((_, n)) => *n += 1,
            None => kinds.push((f.kind.name(), 1)),
        }
    }
    println!("by kind: {kinds:?}");
    // The entries as `analyze` and the panel make them: each loop's
    // iterations counted in the report.
    let t = Instant::now();
    let grouped = entries_in(&trace, &found);
    println!(
        "entries with their loops' iterations: {} in {:.3} s",
        grouped.len(),
        t.elapsed().as_secs_f64()
    );
    // The viewer's findings job also computes every range's GPU-work span.
    let t = Instant::now();
    let spans = range_gpu_spans(&trace, &cancel).expect("not cancelled");
    println!(
        "range GPU spans: {} in {:.3} s",
        spans.len(),
        t.elapsed().as_secs_f64()
    );
    // What the viewer's job asks for, in one pass, beside the two apart
    // (timed just above), alternated three times.
    for _ in 0..3 {
        let t = Instant::now();
        analyze(&trace, None, &Thresholds::default(), &cancel).expect("not cancelled");
        range_gpu_spans(&trace, &cancel).expect("not cancelled");
        let apart = t.elapsed().as_secs_f64();
        let t = Instant::now();
        analyze_with_range_work(&trace, None, &Thresholds::default(), &cancel)
            .expect("not cancelled");
        println!(
            "findings and range GPU spans: apart {apart:.3} s, in one pass {:.3} s",
            t.elapsed().as_secs_f64()
        );
    }
    // A growing report's runs: what the last run carried (idle attribution,
    // sorted operations) extended, here over the same state (nothing new),
    // the rest run again.
    let trace = sightline::loader::load_growing(&big, &mut Default::default()).expect("load");
    let t = Instant::now();
    let (first, _, carried) =
        analyze_grown(&trace, None, None, &Thresholds::default(), &cancel).expect("not cancelled");
    println!(
        "findings of a growing report's first state: {} in {:.3} s",
        first.len(),
        t.elapsed().as_secs_f64()
    );
    let mut earlier = Some(carried);
    for _ in 0..3 {
        let t = Instant::now();
        let (found_again, _, carried) = analyze_grown(
            &trace,
            earlier.take(),
            None,
            &Thresholds::default(),
            &cancel,
        )
        .expect("not cancelled");
        println!(
            "findings with what the last run carried extended: {} in {:.3} s ({} operations merged)",
            found_again.len(),
            t.elapsed().as_secs_f64(),
            carried.idle().merged()
        );
        assert_eq!(found_again, found);
        earlier = Some(carried);
    }
    for rule in Rule::ALL {
        let t = Instant::now();
        let rows = run(&trace, rule, &RuleOptions::default()).rows.len();
        println!(
            "{}: {rows} rows in {:.3} s",
            rule.name(),
            t.elapsed().as_secs_f64()
        );
    }
}
