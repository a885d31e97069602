//! nsys's device-wide GPU metrics sampling (`GPU_METRICS`), per kernel
//! instance: the mean of each metric over the samples of the kernel's GPU
//! whose timestamp lies in `[start, end]`, and how many samples that was.
//!
//! nsys samples a whole device at a fixed rate (10 kHz by default), so a
//! kernel shorter than about two sampling periods gets one sample or none: its
//! "mean" would be one arbitrary instant (or another kernel's). Such instances
//! ([`MIN_SAMPLES`]) are kept with their sample count, marked "shorter than the
//! sampling period", and left out of every average.

use std::collections::HashMap;

use super::selection::kernel_devices;
use crate::analysis::scope::Scope;
use crate::analysis::table::{Cell, Table};
use crate::model::{KernelMetrics, MetricDef, MetricSeries, MetricSource, Ns, Trace};

/// Fewer samples than this inside a kernel instance: too short to be sampled.
pub const MIN_SAMPLES: u32 = 2;

/// What the panel says of an instance with fewer than [`MIN_SAMPLES`].
pub const TOO_SHORT: &str = "shorter than the sampling period";

/// The unit of an nsys metric's stored values, from the bracket that ends its
/// name (`SMs Active [Throughput %]` → `%`). Clocks are named `[MHz]` but
/// stored in Hz (nsys 2025.3 writes 1995651108 for 1.996 GHz), so `Hz`.
pub fn unit_of(name: &str) -> String {
    let Some(open) = name.rfind('[') else {
        return String::new();
    };
    let inside = name[open + 1..].trim_end_matches(']').trim();
    if inside.ends_with('%') {
        "%".into()
    } else if inside == "MHz" {
        "Hz".into()
    } else if inside.contains("Warps per Cycle") {
        "warp/cycle".into()
    } else {
        String::new()
    }
}

/// The sums of one series' values, so that the mean over any index range
/// costs two lookups (a long kernel spans thousands of samples).
struct Prefix<'a> {
    series: &'a MetricSeries,
    sums: Vec<f64>,
}

impl<'a> Prefix<'a> {
    fn new(series: &'a MetricSeries) -> Self {
        let mut sums = Vec::with_capacity(series.value.len() + 1);
        let mut total = 0.0;
        sums.push(0.0);
        for &v in &series.value {
            total += v as f64;
            sums.push(total);
        }
        Prefix { series, sums }
    }

    /// (sum, count) of the samples with timestamp in `[start, end]`.
    fn over(&self, start: Ns, end: Ns) -> (f64, u32) {
        let ts = &self.series.timestamp;
        let lo = ts.partition_point(|&t| t < start);
        let hi = ts.partition_point(|&t| t <= end);
        if hi <= lo {
            return (0.0, 0);
        }
        (self.sums[hi] - self.sums[lo], (hi - lo) as u32)
    }
}

/// Every kernel instance's sampled means. Rows exist for instances with at
/// least one sample; `samples` says how many (check it against
/// [`MIN_SAMPLES`]). Metrics are named as `TARGET_INFO_GPU_METRICS` names
/// them, in its order; a report sampled on several GPUs lists each name once.
/// `None` when the report has no GPU metrics.
pub fn kernel_metrics(trace: &Trace) -> Option<KernelMetrics> {
    if trace.metrics.is_empty() {
        return None;
    }
    let mut order: Vec<&MetricSeries> = trace.metrics.iter().collect();
    order.sort_by_key(|s| s.order);
    let mut defs: Vec<MetricDef> = Vec::new();
    let mut index_of: HashMap<&str, u16> = HashMap::new();
    for s in order {
        let name = trace.name(s.name);
        if !index_of.contains_key(name) {
            index_of.insert(name, defs.len() as u16);
            defs.push(MetricDef {
                name: name.to_string(),
                unit: unit_of(name),
            });
        }
    }
    let mut out = KernelMetrics::new(MetricSource::NsysSampling, defs);
    // Series of each device, each with its metric's index.
    let mut by_device: HashMap<u32, Vec<(u16, Prefix)>> = HashMap::new();
    for s in trace.metrics.iter() {
        let metric = index_of[trace.name(s.name)];
        by_device
            .entry(s.device_id)
            .or_default()
            .push((metric, Prefix::new(s)));
    }
    for series in by_device.values_mut() {
        series.sort_by_key(|(m, _)| *m);
    }
    let spans = &trace.kernels.spans;
    let devices = kernel_devices(trace);
    let mut short = 0usize;
    for (k, device) in devices.iter().enumerate() {
        let Some(series) = device.and_then(|d| by_device.get(&d)) else {
            continue;
        };
        let mut fewest = u32::MAX;
        for (metric, prefix) in series {
            let (sum, count) = prefix.over(spans.start[k], spans.end(k));
            fewest = fewest.min(count);
            if count == 0 {
                continue;
            }
            out.push(k as u32, *metric, sum / count as f64);
            out.samples.push(count);
        }
        if fewest < MIN_SAMPLES {
            short += 1;
        }
    }
    if short > 0 {
        out.notes.push(format!(
            "{short} kernel instance(s) got fewer than {MIN_SAMPLES} samples ({TOO_SHORT}): \
             left out of the averages"
        ));
    }
    Some(out)
}

/// One kernel name × metric over a scope: the means of the instances that were
/// sampled (at least [`MIN_SAMPLES`] samples each).
#[derive(Clone, Debug, PartialEq)]
pub struct SampledSummary {
    pub name: String,
    pub metric: u16,
    /// Instances of the kernel in the scope (on a sampled GPU or not).
    pub instances: u64,
    /// Instances with at least [`MIN_SAMPLES`] samples of this metric.
    pub sampled: u64,
    /// Samples over the sampled instances.
    pub samples: u64,
    /// Mean, min and max of the sampled instances' means; `None` when no
    /// instance was sampled.
    pub mean: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// Per kernel name (as `cuda_gpu_kern_sum` names kernels) and metric, over the
/// kernels `scope` admits: ordered by name, then by the metric's order.
pub(crate) fn summaries(
    trace: &Trace,
    metrics: &KernelMetrics,
    scope: Scope,
) -> Vec<SampledSummary> {
    let spans = &trace.kernels.spans;
    let admitted = |k: usize| match scope.range {
        None => true,
        Some(range) => scope.rule.admits(range, spans.start[k], spans.end(k)),
    };
    let mut instances: HashMap<&str, u64> = HashMap::new();
    for k in 0..spans.len() {
        if admitted(k) {
            *instances.entry(trace.name(spans.name[k])).or_default() += 1;
        }
    }
    // (name, metric) → (sampled, samples, sum, min, max)
    type Acc = (u64, u64, f64, f64, f64);
    let mut acc: HashMap<(&str, u16), Acc> = HashMap::new();
    for i in 0..metrics.len() {
        let k = metrics.kernel[i] as usize;
        let count = metrics.samples.get(i).copied().unwrap_or(0);
        if count < MIN_SAMPLES || k >= spans.len() || !admitted(k) {
            continue;
        }
        let v = metrics.value[i];
        let e = acc
            .entry((trace.name(spans.name[k]), metrics.metric[i]))
            .or_insert((0, 0, 0.0, f64::INFINITY, f64::NEG_INFINITY));
        e.0 += 1;
        e.1 += count as u64;
        e.2 += v;
        e.3 = e.3.min(v);
        e.4 = e.4.max(v);
    }
    let mut names: Vec<(&str, u64)> = instances.into_iter().collect();
    names.sort();
    let mut out = Vec::new();
    for (name, n) in names {
        for metric in 0..metrics.metrics.len() as u16 {
            let a = acc.get(&(name, metric)).copied();
            let sampled = a.map_or(0, |a| a.0);
            out.push(SampledSummary {
                name: name.to_string(),
                metric,
                instances: n,
                sampled,
                samples: a.map_or(0, |a| a.1),
                mean: a.map(|a| a.2 / a.0 as f64),
                min: a.map(|a| a.3),
                max: a.map(|a| a.4),
            });
        }
    }
    out
}

/// `gpu_metrics_kern_sum` (ours): one row per kernel × sampled metric.
pub(crate) fn gpu_metrics_kern_sum(trace: &Trace, scope: Scope) -> Table {
    let Some(metrics) = kernel_metrics(trace) else {
        return Table::default();
    };
    let opt = |v: Option<f64>| v.map_or(Cell::Empty, Cell::Float);
    let rows = summaries(trace, &metrics, scope)
        .into_iter()
        .map(|s| {
            vec![
                Cell::Text(s.name),
                Cell::Text(metrics.metrics[s.metric as usize].name.clone()),
                Cell::Int(s.instances as i64),
                Cell::Int(s.sampled as i64),
                Cell::Int(s.samples as i64),
                opt(s.mean),
                opt(s.min),
                opt(s.max),
            ]
        })
        .collect();
    Table {
        columns: [
            "Name",
            "Metric",
            "Instances",
            "Instances Sampled",
            "Samples",
            "Mean",
            "Min",
            "Max",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_from_nsys_metric_names() {
        assert_eq!(unit_of("SMs Active [Throughput %]"), "%");
        assert_eq!(unit_of("GPC Clock Frequency [MHz]"), "Hz");
        assert_eq!(
            unit_of("Compute Warps in Flight [Avg Warps per Cycle]"),
            "warp/cycle"
        );
        assert_eq!(unit_of("Compute Warps in Flight [Avg]"), "");
        assert_eq!(unit_of("no bracket"), "");
    }
}
