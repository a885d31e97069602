//! Timing of the stats engine on a 10-million-kernel trace built in memory.
//! Ignored by default; run with
//! `cargo test --release --test stats_perf -- --ignored --nocapture`.
//! `SIGHTLINE_PERF_SHAPE=KERNELS,STREAMS,NAMES` changes the trace, e.g.
//! `34000000,2,2` for the kernels of the 100M-event report;
//! `SIGHTLINE_BENCH_FILE=REPORT` times a real report instead.

use std::time::Instant;

use sightline::analysis::{RangeRule, Report, compute, compute_in};
use sightline::model::{Run, Stream, Strings, TimeRange, Trace, Track};

/// Kernels, streams and names of the trace (see the file's doc).
fn shape() -> (usize, usize, usize) {
    let given: Vec<usize> = std::env::var("SIGHTLINE_PERF_SHAPE")
        .unwrap_or_default()
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    match given[..] {
        [k, s, n] if k > 0 && s > 0 && n > 0 => (k, s, n),
        _ => (10_000_000, 32, 500),
    }
}

fn synthetic_trace() -> Trace {
    let (kernels_wanted, streams, name_count) = shape();
    let mut trace = Trace {
        strings: Strings::new(),
        ..Trace::default()
    };
    let names: Vec<_> = (0..name_count)
        .map(|i| trace.strings.intern(&format!("kernel_{i}(float *, int)")))
        .collect();
    let per_stream = kernels_wanted / streams;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut kernels = sightline::model::Kernels::default();
    let spans = &mut kernels.spans;
    for s in 0..streams {
        let first = spans.start.len() as u32;
        let mut t = 1_000_000i64;
        let mut longest = 0;
        for _ in 0..per_stream {
            let r = random();
            let duration = 1_000 + (r % 50_000) as i64;
            // Skewed names: a few hot kernels, a long tail.
            let pick = ((r >> 20) % name_count as u64) as usize;
            spans.push(
                t,
                t + duration,
                names[if r & 1 == 0 { pick % 8 } else { pick }],
            );
            t += duration + (r >> 40) as i64 % 2_000;
            longest = longest.max(duration);
        }
        let end = spans.start.len() as u32;
        trace.streams.push(Stream {
            stream_id: s as u32,
            kernels: Track::whole(
                Run {
                    events: first..end,
                    max_duration: longest,
                    ..Run::default()
                },
                1,
            ),
            ..Stream::default()
        });
    }
    let last = spans.ends().max().unwrap_or(0);
    trace.info.time_range = (1_000_000, last);
    trace.kernels = std::sync::Arc::new(kernels);
    trace
}

fn best_of(runs: usize, mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut rows = 0;
    for _ in 0..runs {
        let start = Instant::now();
        rows = f();
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
    }
    (best, rows)
}

#[test]
#[ignore]
fn kern_sum_on_ten_million_kernels() {
    let trace = match std::env::var("SIGHTLINE_BENCH_FILE") {
        Ok(path) => {
            let cancel = std::sync::atomic::AtomicBool::new(false);
            sightline::loader::load(std::path::Path::new(&path), &mut |_| {}, &cancel)
                .expect("the report loads")
        }
        Err(_) => synthetic_trace(),
    };
    let (first, last) = trace.info.time_range;
    let (full_ms, rows) = best_of(5, || {
        compute(&trace, Report::CudaGpuKernSum, None).rows.len()
    });
    let kernels = trace.kernels.spans.len();
    println!("cuda_gpu_kern_sum, all {kernels} kernels: {full_ms:.1} ms ({rows} rows)");
    let width = (last - first) / 100;
    let middle = first + (last - first) / 2;
    let range = TimeRange {
        start: middle,
        end: middle + width,
    };
    let (part_ms, rows) = best_of(5, || {
        compute(&trace, Report::CudaGpuKernSum, Some(range))
            .rows
            .len()
    });
    println!("cuda_gpu_kern_sum, 1% range: {part_ms:.2} ms ({rows} rows)");
    // The same range counted by overlap (clipped): a window widened by the
    // longest kernel, then each candidate tested.
    let (clipped_ms, rows) = best_of(5, || {
        compute_in(
            &trace,
            Report::CudaGpuKernSum,
            Some(range),
            RangeRule::Overlapping,
        )
        .map_or(0, |t| t.rows.len())
    });
    println!("cuda_gpu_kern_sum, 1% range, overlapping: {clipped_ms:.2} ms ({rows} rows)");
    for report in [
        Report::CudaGpuMemTimeSum,
        Report::CudaApiGpuSum,
        Report::CudaKernExecSum,
    ] {
        let (ms, _) = best_of(3, || compute(&trace, report, None).rows.len());
        println!("{}: {ms:.1} ms", report.name());
    }
}
