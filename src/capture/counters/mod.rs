//! Hardware counters per kernel instance in a Sightline capture, with CUPTI's
//! Range Profiler (target side, [`target`]) and Profiler Host API (metric
//! names, configuration, evaluation, [`host`]).
//!
//! Why separate counter runs: collecting counters serialises kernels and
//! synchronises after each, and a metric set needs several passes, so kernels
//! timed while counters are collected are not the kernels of a plain run. The
//! capture therefore records the timeline first, exactly as a plain capture
//! does, then runs the benchmark's work again under the range profiler, once
//! per pass (auto range: one range per kernel; user replay: no memory saved
//! and restored around each kernel, whose write-backs kernel replay added to
//! the DRAM counts), and joins the counter ranges to the timeline's kernels by
//! launch order ([`matching`]). The capture says so in its output and in the
//! saved report (a note stored with the counters).
//!
//! Everything that can fail here fails into a [`CounterError`] whose
//! `Display` is one line for the user; the capture then goes on without
//! counters. Only a misspelt metric name stops a capture, before it starts.

pub mod flush;
pub mod host;
pub mod matching;
pub mod names;
pub mod pass;
pub mod target;

use std::fmt;

pub use target::Replay;

use crate::model::{KernelMetrics, MetricDef, MetricSource};

/// The metrics `--metrics` (or `--metrics default`) collects: seed 000's set
/// plus the speed-of-light pair, occupancy and L2 hit rate.
pub const DEFAULT_METRICS: [&str; 9] = [
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "lts__t_sector_hit_rate.pct",
    "gpu__time_duration.sum",
];

/// The most passes a metric set may need: the benchmark runs once per pass,
/// so the counters cost about this many runs of it; beyond it the capture
/// goes on without counters.
pub const MAX_PASSES: usize = 16;

/// What counters a capture collects, and at what grain.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CounterRequest {
    /// Metric names as CUPTI spells them, in the user's order, no duplicates.
    pub metrics: Vec<String>,
    /// NVTX range names: report counters summed over each instance of these
    /// ranges (the kernels launched inside them) as well as per kernel.
    pub ranges: Vec<String>,
    /// Keep the caches as the benchmark leaves them (no flush before each
    /// kernel of the counter runs; ncu's `--cache-control none`).
    pub warm_caches: bool,
}

impl CounterRequest {
    /// `--metrics [LIST|default]` and `--metrics-ranges NAME[,NAME]`.
    /// `metrics`: None = not asked; Some("") or Some("default") = the default
    /// set. Ranges without metrics collect the default set.
    pub fn from_args(
        metrics: Option<&str>,
        ranges: Option<&str>,
    ) -> Result<Option<CounterRequest>, String> {
        if metrics.is_none() && ranges.is_none() {
            return Ok(None);
        }
        let metrics = parse_metric_list(metrics.unwrap_or("default"))?;
        let ranges = match ranges {
            Some(list) => {
                let names = split_list(list);
                if names.is_empty() {
                    return Err("--metrics-ranges needs at least one NVTX range name".into());
                }
                names
            }
            None => Vec::new(),
        };
        Ok(Some(CounterRequest {
            metrics,
            ranges,
            warm_caches: false,
        }))
    }

    /// The empty model set these counters fill.
    pub fn empty_metrics(&self) -> KernelMetrics {
        KernelMetrics::new(
            MetricSource::Counters,
            self.metrics
                .iter()
                .map(|name| MetricDef {
                    name: name.clone(),
                    unit: unit_of(name).to_string(),
                })
                .collect(),
        )
    }
}

/// A comma-separated metric list; `default` (alone or as an item) stands for
/// [`DEFAULT_METRICS`]. Names are checked for shape here and against the
/// chip's list in [`names::SupportedMetrics::check`].
pub fn parse_metric_list(list: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    let items = split_list(list);
    if items.is_empty() {
        out.extend(DEFAULT_METRICS.iter().map(|m| m.to_string()));
    }
    for item in items {
        if item == "default" {
            for m in DEFAULT_METRICS {
                if !out.iter().any(|o| o == m) {
                    out.push(m.to_string());
                }
            }
            continue;
        }
        if !item
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(format!(
                "'{item}' is not a metric name (names are like dram__bytes_read.sum)"
            ));
        }
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(out)
}

fn split_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The unit Nsight Compute prints for a metric, from its name: the name's
/// rollup and suffix say it (`.pct…` is `%`, `bytes` is `byte`, …).
pub fn unit_of(name: &str) -> &'static str {
    let (base, sub) = name.split_once('.').unwrap_or((name, ""));
    if sub.contains("pct") {
        "%"
    } else if sub.ends_with("per_second") {
        if base.contains("bytes") {
            "byte/second"
        } else {
            "/second"
        }
    } else if sub.contains("ratio") {
        ""
    } else if base.ends_with("time_duration") {
        "nsecond"
    } else if base.contains("bytes") {
        "byte"
    } else if base.contains("inst_executed") {
        "inst"
    } else if base.contains("cycles") {
        "cycle"
    } else if base.contains("sectors") {
        "sector"
    } else if base.contains("warps") {
        "warp"
    } else {
        ""
    }
}

/// Why counters were not collected: one line each, the capture goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CounterError {
    /// libnvperf_host.so / libnvperf_target.so cannot be loaded.
    LibraryMissing(String),
    /// The driver restricts GPU performance counters to admin users.
    NotPermitted,
    /// Another profiler (Nsight Compute, Nsight Systems, …) holds the counters.
    OtherProfiler(String),
    /// CUPTI's host API does not know this chip.
    UnknownChip(String),
    /// The metric set needs more passes than [`MAX_PASSES`].
    TooManyPasses(usize),
    /// A name that is no metric of this chip (refused before the run).
    UnknownMetric(String),
    /// Any other CUPTI failure.
    Cupti(String),
}

impl fmt::Display for CounterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CounterError::LibraryMissing(which) => write!(
                f,
                "{which} not found: CUPTI needs it to collect counters; it ships beside \
                 libcupti.so in the CUDA toolkit (…/targets/x86_64-linux/lib): add that folder \
                 to LD_LIBRARY_PATH"
            ),
            CounterError::NotPermitted => f.write_str(
                "the driver restricts GPU performance counters to admin users: run as root, or \
                 load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 (e.g. \
                 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in \
                 /etc/modprobe.d/, then reboot)",
            ),
            CounterError::OtherProfiler(who) => write!(
                f,
                "{who} holds the GPU's counters: profile without it, or use its own metrics"
            ),
            CounterError::UnknownChip(chip) => write!(
                f,
                "this CUPTI's profiler host API does not know the chip '{chip}' (a newer CUDA \
                 toolkit may)"
            ),
            CounterError::TooManyPasses(n) => write!(
                f,
                "the metric set needs {n} passes (at most {MAX_PASSES}): the benchmark would run \
                 {n} more times; name fewer metrics"
            ),
            CounterError::UnknownMetric(why) => f.write_str(why),
            CounterError::Cupti(why) => write!(f, "CUPTI: {why}"),
        }
    }
}

impl std::error::Error for CounterError {}

/// The line a capture prints (and the report keeps) about how its counters
/// were collected.
pub fn pass_note(matched: usize, kernels: usize, passes: usize, replay: Replay) -> String {
    let plural = if passes == 1 { "" } else { "es" };
    let how = match replay {
        Replay::User => format!(
            "counters from separate counter runs: the benchmark ran again under CUPTI's range \
             profiler, once per pass ({passes} pass{plural}, one range per kernel); compare \
             with `ncu --replay-mode application --clock-control none`, which runs it so \
             (ncu's default kernel replay restores memory between passes, which adds DRAM \
             writes)"
        ),
        Replay::Kernel => format!(
            "counters from a separate counter run with kernel replay: the benchmark launches \
             CUDA graphs, which CUPTI profiles per kernel only by replaying each kernel alone \
             ({passes} pass{plural}, one range per kernel); CUPTI saves and restores the memory \
             a replayed kernel touches, so its DRAM writes may include that restore"
        ),
    };
    format!(
        "{how}, so the timeline's timings are those of the plain run; {matched} of {kernels} \
         kernel instances matched by launch order"
    )
}

/// How the counter runs treated the caches.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Caches {
    /// Flushed before every kernel ([`flush`]): `flushes` reads of `bytes`
    /// each, `failures` that failed.
    Flushed {
        flushes: usize,
        failures: usize,
        bytes: usize,
    },
    /// Left warm, as asked (`--metrics-warm-caches`).
    #[default]
    Warm,
    /// Left warm because the flush could not be set up (why).
    NotFlushed(String),
}

/// What the counter runs did and could not control, said with their
/// counters. Nsight Compute by default flushes the caches before each kernel
/// and locks the clocks at base; CUPTI 13.0's range profiler does neither,
/// so the flush is ours ([`flush`]) and the clocks run free
/// (BENCHMARKS.md compares the two).
pub fn conditions_note(caches: &Caches) -> String {
    let caches = match caches {
        Caches::Flushed {
            flushes,
            failures: 0,
            bytes,
        } => format!(
            "caches flushed before each kernel, as ncu's defaults do ({flushes} flushes, each \
             reading {} MB through the L2)",
            bytes / 1_000_000
        ),
        Caches::Flushed {
            flushes, failures, ..
        } => format!(
            "caches flushed before {flushes} kernels; {failures} flushes failed and those \
             kernels ran with a warm L2"
        ),
        Caches::Warm => "caches not flushed (--metrics-warm-caches): DRAM bytes are those of the \
                         benchmark's own warm L2, where ncu's defaults flush the caches before \
                         each kernel"
            .to_string(),
        Caches::NotFlushed(why) => format!(
            "caches not flushed ({why}): DRAM bytes are those of the benchmark's own warm L2, \
             where ncu's defaults flush the caches before each kernel"
        ),
    };
    format!(
        "{caches}; clocks not locked (CUPTI 13.0 offers no clock control): SM and memory \
         throughput follow the boost clock where ncu's defaults lock the base clock; a ratio \
         built from counters of different passes (e.g. the L2 hit rate) can exceed 100 %"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_expands_in_place_without_duplicates() {
        let list = parse_metric_list("dram__bytes_read.sum,default,sm__cycles_elapsed.max")
            .expect("parses");
        assert_eq!(list[0], "dram__bytes_read.sum");
        assert_eq!(list.len(), DEFAULT_METRICS.len() + 1);
        assert_eq!(
            list.last().map(String::as_str),
            Some("sm__cycles_elapsed.max")
        );
        assert_eq!(parse_metric_list("").expect("empty"), DEFAULT_METRICS);
        assert!(parse_metric_list("dram bytes").is_err());
    }

    #[test]
    fn ranges_alone_collect_the_default_set() {
        let r = CounterRequest::from_args(None, Some("MYPerf, gemm"))
            .expect("ok")
            .expect("some");
        assert_eq!(r.metrics, DEFAULT_METRICS);
        assert_eq!(r.ranges, ["MYPerf", "gemm"]);
        assert_eq!(CounterRequest::from_args(None, None), Ok(None));
        assert!(CounterRequest::from_args(None, Some(" , ")).is_err());
    }

    #[test]
    fn units_as_ncu_prints_them() {
        let units: Vec<&str> = DEFAULT_METRICS.iter().map(|m| unit_of(m)).collect();
        assert_eq!(
            units,
            ["%", "%", "%", "byte", "byte", "%", "%", "%", "nsecond"]
        );
    }
}
