//! `sightline capture BENCH [--PARAM VALUE ...] --output FILE.sqlite`: runs a
//! benchmark under Sightline's own CUPTI capture and saves the recording as an
//! nsys report (`nsys stats` reads it). `sightline capture --list` lists the
//! benchmarks.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::benchmark_args::BenchmarkChoice;
use super::run::{fail, list_or_ask};
use super::usage_error;
use crate::capture::benchmarks;
use crate::capture::counters::CounterRequest;
use crate::capture::session::{self, CaptureMessage, CaptureOptions, CounterOutcome};

/// Arguments of `sightline capture`. Its own options may come before or after the benchmark
/// and its parameters (`capture gemm --size 1024 --output g.sqlite`).
#[derive(Debug, clap::Args)]
#[command(
    about = "Run a GPU benchmark under Sightline's CUPTI capture and save an nsys report",
    long_about = "Runs a benchmark on GPU 0 while recording it with CUPTI (kernels, copies, \
                  memsets, CUDA API, synchronization, NVTX), then saves the recording as an \
                  Nsight Systems SQLite report. `sightline capture BENCH --help` lists its \
                  parameters.",
    subcommand_value_name = "BENCH",
    disable_help_subcommand = true,
    subcommand_help_heading = "Benchmarks"
)]
pub struct CaptureArgs {
    /// List every benchmark with its parameters.
    #[arg(long, short = 'l')]
    list: bool,

    /// The report written (aside, then renamed); needed.
    #[arg(long, short = 'o', value_name = "FILE.sqlite", global = true)]
    output: Option<PathBuf>,

    /// Also keep CUPTI's raw records in FILE (test material).
    #[arg(long, value_name = "FILE", global = true)]
    dump_records: Option<PathBuf>,

    /// Also record hardware counters per kernel instance: a comma-separated list of metric
    /// names as CUPTI/ncu spell them, or `default` (SM, memory and DRAM throughput, DRAM bytes,
    /// tensor-pipe use, achieved occupancy, L2 hit rate, duration). They come from a separate
    /// counter pass: the benchmark runs a second time under CUPTI's range profiler, so the
    /// timeline keeps the timings of a plain run.
    #[arg(
        long,
        value_name = "LIST|default",
        num_args = 0..=1,
        default_missing_value = "default",
        require_equals = false,
        global = true
    )]
    metrics: Option<String>,

    /// Also sum the counters over each instance of these NVTX ranges (the kernels launched
    /// inside them), as `ncu --nvtx --nvtx-include NAME` selects kernels; implies `--metrics`.
    #[arg(long, value_name = "NAME[,NAME]", global = true)]
    metrics_ranges: Option<String>,

    /// Leave the caches warm in the counter runs (ncu's `--cache-control none`). By default
    /// the L2 is flushed before each kernel, as ncu's defaults do, so DRAM bytes are those of a
    /// cold cache.
    #[arg(long, global = true)]
    metrics_warm_caches: bool,

    /// Also keep the counter pass's raw counter data in DIR (test material).
    #[arg(long, value_name = "DIR", global = true, hide = true)]
    dump_counters: Option<PathBuf>,

    /// Publish snapshots as the window does and print how old the newest event of each was
    /// (the on-screen delay).
    #[arg(long, global = true)]
    live: bool,

    #[command(subcommand)]
    benchmark: Option<BenchmarkChoice>,
}

pub fn main(args: CaptureArgs) -> ExitCode {
    let Some(choice) = args.benchmark else {
        return list_or_ask("capture", args.list);
    };
    let params = match choice.params {
        Ok(params) => params,
        Err(e) => return usage_error(&format!("capture {}", choice.spec.name), &e.to_string()),
    };
    // Clap's global options cannot be required; checked here, before the GPU is touched.
    let Some(output) = args.output else {
        return usage_error("capture", "--output FILE.sqlite is needed");
    };
    let counters =
        match CounterRequest::from_args(args.metrics.as_deref(), args.metrics_ranges.as_deref()) {
            Ok(c) => c.map(|c| CounterRequest {
                warm_caches: args.metrics_warm_caches,
                ..c
            }),
            Err(e) => return usage_error("capture", &e),
        };
    if args.metrics_warm_caches && counters.is_none() {
        return usage_error("capture", "--metrics-warm-caches goes with --metrics");
    }
    let options = CaptureOptions {
        dump_records: args.dump_records,
        live_snapshots: args.live,
        counters,
        dump_counters: args.dump_counters,
    };
    run_capture(choice.spec, params, output, options)
}

fn run_capture(
    spec: &'static benchmarks::BenchmarkSpec,
    params: benchmarks::Params,
    output: PathBuf,
    options: CaptureOptions,
) -> ExitCode {
    let t0 = Instant::now();
    let (tx, rx) = crossbeam_channel::unbounded();
    let tx = session::Outbox::new(tx);
    let ranges = options
        .counters
        .as_ref()
        .map(|c| c.ranges.clone())
        .unwrap_or_default();
    let stop = Arc::new(AtomicBool::new(false));
    // The benchmark's lines are printed as they come, from this thread.
    let printer = std::thread::spawn(move || {
        let mut ages = Vec::new();
        let mut costs = Vec::new();
        // (age of the newest event when a snapshot came, how long it stayed
        // the newest on screen), in ms.
        let mut on_screen: Vec<(f64, f64)> = Vec::new();
        let mut last_came: Option<(Instant, f64)> = None;
        let mut delays = super::event_delays::EventDelays::default();
        let mut last_shown: Option<(Instant, i64)> = None;
        for message in rx {
            match message {
                CaptureMessage::Output(line) => println!("{line}"),
                CaptureMessage::Preparing(what) => eprintln!("{what}…"),
                CaptureMessage::Snapshot(trace, status) => {
                    let (age, cost) = (
                        status.newest_event_age.as_secs_f64() * 1e3,
                        status.snapshot_cost.as_secs_f64() * 1e3,
                    );
                    // Each snapshot's size beside its cost (and where it
                    // lies, the load's phases of a millisecond or more):
                    // how the cost grows.
                    let phases: Vec<String> = status
                        .snapshot_phases
                        .0
                        .iter()
                        .filter(|(_, d)| d.as_secs_f64() >= 1e-3)
                        .map(|(p, d)| format!("{p} {:.0}", d.as_secs_f64() * 1e3))
                        .collect();
                    let came = Instant::now();
                    // When it came, on the report's clock: its newest event's
                    // time plus that event's age.
                    let shown_at = status
                        .newest_event_at
                        .saturating_add(status.newest_event_age.as_nanos() as i64);
                    delays.add(&trace, shown_at);
                    last_shown = Some((came, shown_at));
                    if let Some((before, its_age)) = last_came.replace((came, age)) {
                        on_screen.push((its_age, (came - before).as_secs_f64() * 1e3));
                    }
                    eprintln!(
                        "live: snapshot {} at {:.2} s of {} events, load {cost:.1} ms, newest event {age:.1} ms old, {:.1} ms when written ({}); {} batches waiting, WAL {:.0} MB",
                        ages.len() + 1,
                        status.elapsed.as_secs_f64(),
                        trace.event_count(),
                        status.newest_event_age_written.as_secs_f64() * 1e3,
                        phases.join(", "),
                        status.batches_waiting,
                        status.wal_bytes as f64 / 1e6,
                    );
                    ages.push(age);
                    costs.push(cost);
                }
                CaptureMessage::Finished(_) => {}
            }
        }
        if !ages.is_empty() {
            eprintln!(
                "live: {} snapshots; newest event on screen after median {:.1} ms (max {:.1} ms); \
                 snapshot load median {:.1} ms (max {:.1} ms)",
                ages.len(),
                median(&mut ages),
                ages.iter().copied().fold(0.0, f64::max),
                median(&mut costs),
                costs.iter().copied().fold(0.0, f64::max),
            );
        }
        if !on_screen.is_empty() {
            eprintln!(
                "live: over the capture's time, the newest event on screen was at most {:.1} ms \
                 old half the time, {:.1} ms 95% of the time",
                time_quantile(&on_screen, 0.5),
                time_quantile(&on_screen, 0.95),
            );
        }
        last_shown.map(|last| (delays, last))
    });
    let result = session::capture(spec, &params, &options, &stop, &tx);
    let ended = Instant::now();
    drop(tx);
    let timing = printer.join().ok().flatten();
    let captured = match result {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    let captured_at = t0.elapsed();
    if let Some((mut delays, (came, shown_at))) = timing {
        // The events no snapshot showed reach the screen with the final
        // report, when the capture ends.
        let end_at = shown_at.saturating_add((ended - came).as_nanos() as i64);
        delays.add(&captured.trace, end_at);
        eprintln!(
            "live: from an event's end to the first snapshot holding it ({} kernels and API \
             calls{}): median {:.1} ms, p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            delays.count(),
            if delays.untimed > 0 {
                format!("; {} more in renumbered tables, not timed", delays.untimed)
            } else {
                String::new()
            },
            delays.quantile_ms(0.5),
            delays.quantile_ms(0.95),
            delays.quantile_ms(0.99),
            delays.max_ns as f64 / 1e6,
        );
    }
    match &captured.counters {
        Some(CounterOutcome::Skipped(why)) => {
            eprintln!("sightline: no counters (the capture goes on without them): {why}")
        }
        Some(CounterOutcome::Collected(set)) => {
            for note in &set.notes {
                eprintln!("counters: {note}");
            }
            print!(
                "{}",
                super::counters::summary(&captured.trace, set, &ranges)
            );
        }
        None => {}
    }
    if let Err(e) = captured.live.save(&output) {
        return fail(&format!("saving the capture failed: {e}"));
    }
    let c = captured.status.counts;
    eprintln!(
        "captured {}: {} kernels, {} copies, {} API calls, {} NVTX ranges, {} other \
         ({} events) in {:.2} s; saved {} in {:.2} s total{}",
        spec.name,
        c.kernels,
        c.copies,
        c.api_calls,
        c.nvtx,
        c.other,
        c.total(),
        captured_at.as_secs_f64(),
        output.display(),
        t0.elapsed().as_secs_f64(),
        if captured.dropped_records > 0 {
            format!(
                "; CUPTI dropped {} records (buffers full)",
                captured.dropped_records
            )
        } else {
            String::new()
        }
    );
    match captured.benchmark_error {
        // The recording up to the failure is saved: it shows where it failed.
        Some(e) => fail(&format!("the benchmark failed (recording saved): {e}")),
        None => ExitCode::SUCCESS,
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// The age `v` that the newest event on screen was at most for fraction `q`
/// of the time, given each snapshot's `(age when it came, how long it was
/// shown)`: while shown, its newest event ages from the first to the sum.
/// Counting snapshots instead would weigh a second of many quick snapshots
/// above a second of one slow one.
fn time_quantile(shown: &[(f64, f64)], q: f64) -> f64 {
    let total: f64 = shown.iter().map(|&(_, d)| d).sum();
    let time_within =
        |v: f64| -> f64 { shown.iter().map(|&(age, d)| (v - age).clamp(0.0, d)).sum() };
    let (mut lo, mut hi) = (0.0, shown.iter().map(|&(a, d)| a + d).fold(0.0, f64::max));
    for _ in 0..64 {
        let mid = (lo + hi) / 2.0;
        if time_within(mid) >= q * total {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::time_quantile;

    #[test]
    fn the_time_quantile_weighs_each_snapshot_by_how_long_it_was_shown() {
        // Nine quick snapshots 10 ms old, shown 10 ms each (90 ms in all),
        // then one 500 ms old shown 910 ms: the screen was stale most of the
        // time, though nine snapshots of ten were fresh.
        let mut shown = vec![(10.0, 10.0); 9];
        shown.push((500.0, 910.0));
        let median = time_quantile(&shown, 0.5);
        // Half the time (500 ms) is reached 410 ms into the slow one.
        assert!((median - 910.0).abs() < 1e-6, "{median}");
        // A uniform ramp: one snapshot 0 ms old shown 100 ms.
        assert!((time_quantile(&[(0.0, 100.0)], 0.95) - 95.0).abs() < 1e-6);
    }
}
