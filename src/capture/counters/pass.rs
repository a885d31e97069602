//! The counter pass: checks made before the capture starts ([`prepare`]), the
//! second run of the benchmark under the range profiler ([`run_pass`]), and
//! the join of its ranges to the timeline's kernels ([`to_kernel_metrics`]).

use std::path::Path;

use super::flush::CacheFlush;
use super::host::{self, Host};
use super::matching::{self, TimelineKernel};
use super::names::SupportedMetrics;
use super::target::{self, PrimaryContext, RangeProfiler, Replay};
use super::{Caches, CounterError, CounterRequest, MAX_PASSES};
use crate::model::{KernelMetrics, Trace};

/// Everything the counter pass needs, found before the capture starts: the
/// names are checked, the configuration built, the passes counted.
pub struct Prepared {
    pub request: CounterRequest,
    pub chip: String,
    pub availability: Vec<u8>,
    pub config: Vec<u8>,
    pub passes: usize,
    pub supported: SupportedMetrics,
}

/// Checks the machine and the metric names. A misspelt name is
/// [`CounterError::UnknownMetric`] (the capture is refused); any other error
/// means the capture goes on without counters.
pub fn prepare(request: &CounterRequest) -> Result<Prepared, CounterError> {
    if let Some(who) = crate::capture::environment::external_profiler() {
        return Err(CounterError::OtherProfiler(who));
    }
    target::libraries_present()?;
    // The profiler initialises only once the driver has (cuInit, which
    // retaining the context does): before it, cuptiProfilerInitialize fails
    // with CUPTI_ERROR_UNKNOWN (seen on the H100). The context is released
    // again before the capture starts, so the timeline's context creation is
    // the same as in a plain capture.
    let (chip, availability) = {
        let ctx = PrimaryContext::retain()?;
        target::initialise_profiler()?;
        (target::chip_name(0)?, ctx.counter_availability()?)
    };
    let host = Host::new(&chip, Some(&availability))?;
    let supported = host.supported_metrics()?;
    supported
        .check(&request.metrics)
        .map_err(CounterError::UnknownMetric)?;
    let (config, passes) = host.config_image(&request.metrics)?;
    if passes > MAX_PASSES {
        return Err(CounterError::TooManyPasses(passes));
    }
    Ok(Prepared {
        request: request.clone(),
        chip,
        availability,
        config,
        passes,
        supported,
    })
}

/// The counters of every range of the counter pass.
#[derive(Debug, Clone, Default)]
pub struct CounterRanges {
    pub chip: String,
    pub metrics: Vec<String>,
    pub names: Vec<String>,
    /// `values[range][metric]`.
    pub values: Vec<Vec<f64>>,
    /// Ranges CUPTI had no room for.
    pub dropped: usize,
    /// The decoded counter-data image (kept for a dump).
    pub image: Vec<u8>,
    /// Whether the caches were flushed before each kernel.
    pub caches: Caches,
    /// How the passes ran.
    pub replay: Replay,
}

/// How the counter pass must replay a benchmark whose plain run gave `trace`:
/// kernel replay where a CUDA graph launched kernels (CUPTI profiles those
/// per kernel with nothing else), user replay otherwise.
pub fn replay_for(trace: &Trace) -> Replay {
    if trace.kernels.graph_node_id.iter().any(|node| node != 0) {
        Replay::Kernel
    } else {
        Replay::User
    }
}

/// What kernel replay costs, per kernel and pass: 150 kernels of
/// launch-overhead took 30 s for the default set's 9 passes (H200). The cost
/// follows every kernel the benchmark launches, not the ranges asked for:
/// with room for 256 ranges, launch-overhead's 120,000 kernels had not
/// finished after 200 s; with room for all of them, CUPTI spent 77 s
/// preparing, then failed to start (CUPTI_ERROR_UNKNOWN).
pub const KERNEL_REPLAY_SECONDS_PER_KERNEL_PASS: f64 = 0.022;

/// The longest counter pass with kernel replay taken on; a longer one is
/// refused with the estimate (at 9 passes: 303 kernels).
pub const MAX_KERNEL_REPLAY_SECONDS: f64 = 60.0;

/// How many ranges a counter pass of `passes` passes makes room for, when
/// the plain run gave `trace` (every kernel and some more), or why it is not
/// run.
pub fn range_room(trace: &Trace, replay: Replay, passes: usize) -> Result<usize, String> {
    let kernels = trace.kernels.spans.len();
    let seconds = (kernels * passes.max(1)) as f64 * KERNEL_REPLAY_SECONDS_PER_KERNEL_PASS;
    if replay == Replay::Kernel && seconds > MAX_KERNEL_REPLAY_SECONDS {
        let most = (MAX_KERNEL_REPLAY_SECONDS
            / (passes.max(1) as f64 * KERNEL_REPLAY_SECONDS_PER_KERNEL_PASS))
            as usize;
        return Err(format!(
            "the benchmark launches CUDA graphs, whose kernels CUPTI counts only by replaying \
             each kernel alone, once per pass: its {kernels} kernels × {passes} passes would \
             take about {} min; for counters, run it with at most {most} kernels (e.g. \
             launch-overhead --launches 50 --iterations 1 --warmup 0), or name fewer metrics",
            (seconds / 60.0).ceil()
        ));
    }
    Ok(kernels + 64)
}

/// Runs `work` (the benchmark, on this thread) under the range profiler,
/// once per pass with user replay or once with kernel replay, room for
/// `max_ranges` kernels, and evaluates every range.
pub fn run_pass(
    prepared: &Prepared,
    max_ranges: usize,
    replay: Replay,
    mut work: impl FnMut() -> Result<(), String>,
) -> Result<CounterRanges, CounterError> {
    let max_ranges = max_ranges.max(1);
    let image = {
        let ctx = PrimaryContext::retain()?;
        // Installed before the profiler so that its first launch is already
        // flushed; dropped (unsubscribed, buffers freed) after the last run.
        let flush = if prepared.request.warm_caches {
            Err(Caches::Warm)
        } else if replay == Replay::Kernel {
            // A flush runs before a launch call; a graph's kernels are all
            // launched by one call, so there is no place between them.
            Err(Caches::NotFlushed(
                "CUDA graph launches: no launch call between a graph's kernels to flush at".into(),
            ))
        } else {
            CacheFlush::install(&ctx).map_err(|e| Caches::NotFlushed(e.to_string()))
        };
        // Each kernel's flush gets a range of its own.
        let room = if flush.is_ok() {
            max_ranges * 2
        } else {
            max_ranges
        };
        let mut profiler = RangeProfiler::enable(
            &ctx,
            &prepared.config,
            &prepared.request.metrics,
            room,
            replay,
        )?;
        // CUPTI says when it has every pass; the bound only guards against a
        // profiler that never does.
        let mut runs = 0;
        loop {
            profiler.start()?;
            let ran = work();
            let all_submitted = profiler.stop()?;
            if let Ok(f) = &flush {
                f.end_run();
            }
            ran.map_err(|e| CounterError::Cupti(format!("the counter pass failed: {e}")))?;
            runs += 1;
            if all_submitted {
                break;
            }
            if replay == Replay::Kernel {
                return Err(CounterError::Cupti(
                    "kernel replay left passes unsubmitted after the run".into(),
                ));
            }
            if runs > prepared.passes.max(1) * 2 {
                return Err(CounterError::Cupti(format!(
                    "the range profiler still wanted passes after {runs} runs"
                )));
            }
        }
        let dropped = profiler.decode()?;
        let caches = match &flush {
            Ok(f) => {
                let (flushes, failures) = f.counts();
                let is_flush = f.flush_ranges().map_err(CounterError::Cupti)?;
                let caches = Caches::Flushed {
                    flushes,
                    failures,
                    bytes: f.bytes(),
                };
                (caches, Some(is_flush))
            }
            Err(caches) => (caches.clone(), None),
        };
        (std::mem::take(&mut profiler.image), dropped, caches)
    };
    let (image, dropped, (caches, is_flush)) = image;
    let mut ranges = evaluate_image(prepared, image)?;
    if let Some(is_flush) = is_flush {
        // A range CUPTI had no room for was a kernel's or a flush's: the
        // record of launches covers them all, the image only the kept ones.
        let recorded = &is_flush[..ranges.names.len().min(is_flush.len())];
        let all: Vec<(String, Vec<f64>)> = std::mem::take(&mut ranges.names)
            .into_iter()
            .zip(std::mem::take(&mut ranges.values))
            .collect();
        let kept = super::flush::keep_kernels(all, recorded).map_err(CounterError::Cupti)?;
        (ranges.names, ranges.values) = kept.into_iter().unzip();
    }
    ranges.dropped = dropped;
    ranges.caches = caches;
    ranges.replay = replay;
    Ok(ranges)
}

/// Evaluates every range of a decoded counter-data image.
pub fn evaluate_image(prepared: &Prepared, image: Vec<u8>) -> Result<CounterRanges, CounterError> {
    let host = Host::new(&prepared.chip, Some(&prepared.availability))?;
    // The host object must know the metrics' configuration to evaluate them.
    host.config_image(&prepared.request.metrics)?;
    evaluate_with(&host, &prepared.request.metrics, image)
}

/// Evaluates a recorded image with a host object for its chip.
pub fn evaluate_with(
    host: &Host,
    metrics: &[String],
    image: Vec<u8>,
) -> Result<CounterRanges, CounterError> {
    let count = host::range_count(&image)?;
    let mut out = CounterRanges {
        chip: host.chip().to_string(),
        metrics: metrics.to_vec(),
        ..CounterRanges::default()
    };
    for r in 0..count {
        out.names.push(host::range_name(&image, r)?);
        out.values.push(host.evaluate(&image, r, metrics)?);
    }
    out.image = image;
    Ok(out)
}

/// The timeline's kernels, as the join wants them.
pub fn timeline_kernels(trace: &Trace) -> Vec<TimelineKernel> {
    let k = &trace.kernels;
    (0..k.spans.len())
        .map(|i| {
            let mut names = vec![trace.name(k.spans.name[i]).to_string()];
            for id in [k.short_name(i), k.mangled_name(i)].into_iter().flatten() {
                let n = trace.name(id);
                if !n.is_empty() && !names.iter().any(|x| x == n) {
                    names.push(n.to_string());
                }
            }
            TimelineKernel {
                index: i as u32,
                names,
                correlation: k.correlation[i],
                start: k.spans.start[i],
            }
        })
        .collect()
}

/// Joins the counter ranges to `trace`'s kernels: the model set, with a note
/// saying how the counters were collected and what did not match.
pub fn to_kernel_metrics(
    request: &CounterRequest,
    ranges: &CounterRanges,
    passes: usize,
    trace: &Trace,
) -> KernelMetrics {
    let kernels = timeline_kernels(trace);
    let join = matching::join(&ranges.names, &kernels);
    let mut set = request.empty_metrics();
    for &(r, k) in &join.pairs {
        for (m, &v) in ranges.values[r].iter().enumerate() {
            if v.is_finite() {
                set.push(k, m as u16, v);
            }
        }
    }
    set.notes.push(super::pass_note(
        join.pairs.len(),
        kernels.len(),
        passes,
        ranges.replay,
    ));
    set.notes.push(super::conditions_note(&ranges.caches));
    if join.by_order_only && !join.pairs.is_empty() {
        set.notes
            .push("the counter ranges carry no kernel names: joined by launch order alone".into());
    }
    if ranges.dropped > 0 {
        set.notes.push(format!(
            "{} kernels of the counter pass had no room in the counter data (not profiled)",
            ranges.dropped
        ));
    }
    if !join.unmatched_ranges.is_empty() {
        let names: Vec<&str> = join
            .unmatched_ranges
            .iter()
            .take(5)
            .map(|&r| ranges.names[r].as_str())
            .collect();
        set.notes.push(format!(
            "{} counter ranges matched no kernel of the timeline (first: {})",
            join.unmatched_ranges.len(),
            names.join(", ")
        ));
    }
    if !join.unmatched_kernels.is_empty() {
        set.notes.push(format!(
            "{} kernel instances of the timeline have no counters",
            join.unmatched_kernels.len()
        ));
    }
    set
}

/// Writes a recorded counter pass to `dir` (test material): the decoded
/// image, the chip and metric names, the evaluated values and the chip's
/// metric list.
pub fn dump(dir: &Path, prepared: &Prepared, ranges: &CounterRanges) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("counterdata.bin"), &ranges.image)?;
    let mut about = format!(
        "chip {}\npasses {}\ncaches {:?}\n",
        ranges.chip, prepared.passes, ranges.caches
    );
    for m in &ranges.metrics {
        about.push_str(&format!("metric {m}\n"));
    }
    std::fs::write(dir.join("counters.txt"), about)?;
    let mut csv = String::from("range,name,metric,value\n");
    for (r, name) in ranges.names.iter().enumerate() {
        for (m, v) in ranges.metrics.iter().zip(&ranges.values[r]) {
            csv.push_str(&format!(
                "{r},\"{}\",{m},{v:e}\n",
                name.replace('"', "\"\"")
            ));
        }
    }
    std::fs::write(dir.join("values.csv"), csv)?;
    std::fs::write(dir.join("supported.txt"), prepared.supported.to_text())
}
