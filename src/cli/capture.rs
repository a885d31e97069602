//! `sightline capture BENCH [--PARAM VALUE ...] --output FILE.sqlite`: runs a
//! benchmark under Sightline's own CUPTI capture and saves the recording as an
//! nsys report (`nsys stats` reads it). `sightline capture --list` lists the
//! benchmarks.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::run::{benchmark_of, describe, fail, print_or_fail};
use super::usage_error;
use crate::capture::benchmarks;
use crate::capture::session::{self, CaptureMessage, CaptureOptions};

const USAGE: &str =
    "usage: sightline capture BENCH [--PARAM VALUE ...] --output FILE.sqlite [--dump-records FILE]
       sightline capture --list

Runs a benchmark on GPU 0 while recording it with CUPTI (kernels, copies, memsets, CUDA API,
synchronization, NVTX), then saves the recording as an Nsight Systems SQLite report.
--dump-records also keeps the raw CUPTI records (test material). --live publishes snapshots as
the window does and prints how old the newest event of each was (the on-screen delay).";

pub fn main(args: &[String]) -> ExitCode {
    match benchmark_of("capture", args, USAGE) {
        Err(code) => code,
        Ok((spec, rest)) => {
            let mut output = None;
            let mut dump_records = None;
            let mut live = false;
            let mut bench_args = Vec::new();
            let mut rest = rest.iter();
            while let Some(arg) = rest.next() {
                let (key, inline) = match arg.split_once('=') {
                    Some((k, v)) => (k, Some(v.to_string())),
                    None => (arg.as_str(), None),
                };
                match key {
                    "--output" | "-o" | "--dump-records" => {
                        let Some(value) = inline.or_else(|| rest.next().cloned()) else {
                            return usage_error(&format!("{key} needs a file name"), USAGE);
                        };
                        if key == "--dump-records" {
                            dump_records = Some(PathBuf::from(value));
                        } else {
                            output = Some(PathBuf::from(value));
                        }
                    }
                    "--live" => live = true,
                    "-h" | "--help" => return print_or_fail(&describe(spec)),
                    _ => bench_args.push(arg.clone()),
                }
            }
            let Some(output) = output else {
                return usage_error("capture needs --output FILE.sqlite", USAGE);
            };
            let params = match benchmarks::parse_args(spec, &bench_args) {
                Ok(params) => params,
                Err(e) => return fail(&e.to_string()),
            };
            run_capture(spec, params, output, dump_records, live)
        }
    }
}

fn run_capture(
    spec: &'static benchmarks::BenchmarkSpec,
    params: benchmarks::Params,
    output: PathBuf,
    dump_records: Option<PathBuf>,
    live: bool,
) -> ExitCode {
    let t0 = Instant::now();
    let (tx, rx) = crossbeam_channel::unbounded();
    let options = CaptureOptions {
        dump_records,
        live_snapshots: live,
    };
    let stop = Arc::new(AtomicBool::new(false));
    // The benchmark's lines are printed as they come, from this thread.
    let printer = std::thread::spawn(move || {
        let mut ages = Vec::new();
        let mut costs = Vec::new();
        for message in rx {
            match message {
                CaptureMessage::Output(line) => println!("{line}"),
                CaptureMessage::Snapshot(_, status) => {
                    ages.push(status.newest_event_age.as_secs_f64() * 1e3);
                    costs.push(status.snapshot_cost.as_secs_f64() * 1e3);
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
    });
    let result = session::capture(spec, &params, &options, &stop, &tx);
    drop(tx);
    let _ = printer.join();
    let captured = match result {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    let captured_at = t0.elapsed();
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
