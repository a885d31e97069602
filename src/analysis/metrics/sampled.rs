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
use super::units;
use crate::analysis::scope::Scope;
use crate::analysis::table::{Cell, Table};
use crate::model::{KernelMetrics, MetricDef, MetricSeries, MetricSource, Ns, Trace};

/// Fewer samples than this inside a kernel instance: too short to be sampled.
pub const MIN_SAMPLES: u32 = 2;

/// What the panel says of an instance with fewer than [`MIN_SAMPLES`].
pub const TOO_SHORT: &str = "shorter than the sampling period";

/// The sums of one series' values in its shown unit ([`units::sampled_unit`]),
/// so that the mean over any index range costs two lookups (a long kernel
/// spans thousands of samples). A sample its unit cannot have (a negative
/// count or clock, a share above 100 %: nsys writes such values) is left out
/// of the sums and counted apart.
struct Prefix<'a> {
    series: &'a MetricSeries,
    sums: Vec<f64>,
    /// Possible samples up to each index.
    counts: Vec<u32>,
}

impl<'a> Prefix<'a> {
    fn new(series: &'a MetricSeries, unit: &str, scale: f64) -> Self {
        let mut sums = Vec::with_capacity(series.value.len() + 1);
        let mut counts = Vec::with_capacity(series.value.len() + 1);
        let (mut total, mut count) = (0.0, 0u32);
        sums.push(0.0);
        counts.push(0);
        for &v in &series.value {
            let v = v as f64 * scale;
            if units::impossible(unit, v).is_none() {
                total += v;
                count += 1;
            }
            sums.push(total);
            counts.push(count);
        }
        Prefix {
            series,
            sums,
            counts,
        }
    }

    /// (sum, possible samples, impossible samples) of the samples with
    /// timestamp in `[start, end]`.
    fn over(&self, start: Ns, end: Ns) -> (f64, u32, u32) {
        let ts = &self.series.timestamp;
        let lo = ts.partition_point(|&t| t < start);
        let hi = ts.partition_point(|&t| t <= end);
        if hi <= lo {
            return (0.0, 0, 0);
        }
        let possible = self.counts[hi] - self.counts[lo];
        (
            self.sums[hi] - self.sums[lo],
            possible,
            (hi - lo) as u32 - possible,
        )
    }
}

/// Every kernel instance's sampled means, in each metric's shown unit (clocks
/// in MHz). Rows exist for instances with at least one possible sample;
/// `samples` says how many (check it against [`MIN_SAMPLES`]); impossible
/// samples are left out and said in the set's notes, per metric. Metrics are named as `TARGET_INFO_GPU_METRICS` names
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
                unit: units::sampled_unit(name).0.to_string(),
            });
        }
    }
    let mut out = KernelMetrics::new(MetricSource::NsysSampling, defs);
    // Series of each device, each with its metric's index.
    let mut by_device: HashMap<u32, Vec<(u16, Prefix)>> = HashMap::new();
    for s in trace.metrics.iter() {
        let metric = index_of[trace.name(s.name)];
        let (unit, scale) = units::sampled_unit(trace.name(s.name));
        by_device
            .entry(s.device_id)
            .or_default()
            .push((metric, Prefix::new(s, unit, scale)));
    }
    for series in by_device.values_mut() {
        series.sort_by_key(|(m, _)| *m);
    }
    let spans = &trace.kernels.spans;
    let devices = kernel_devices(trace);
    let mut impossible = vec![0u64; out.metrics.len()];
    for (k, device) in devices.iter().enumerate() {
        let Some(series) = device.and_then(|d| by_device.get(&d)) else {
            continue;
        };
        for (metric, prefix) in series {
            let (sum, count, bad) = prefix.over(spans.start[k], spans.end(k));
            impossible[*metric as usize] += u64::from(bad);
            if count == 0 {
                continue;
            }
            out.push(k as u32, *metric, sum / count as f64);
            out.samples.push(count);
        }
    }
    // Instances shorter than the sampling period are not noted here: the
    // kernel panel says it of the kernel shown, gpu_metrics_kern_sum counts
    // the instances sampled.
    for (m, &n) in impossible.iter().enumerate().filter(|(_, n)| **n > 0) {
        let def = &out.metrics[m];
        let why = if def.unit == "%" {
            "below 0 or above 100 %"
        } else {
            "negative"
        };
        out.notes.push(format!(
            "{}: {n} sample(s) inside kernels {why}, impossible for {}: left out of the means",
            def.name,
            if def.unit.is_empty() {
                "this metric"
            } else {
                &def.unit
            }
        ));
    }
    Some(out)
}

/// nsys's sampling period in ns: the median step between a series' samples
/// (the first series of the report); `None` without samples.
pub fn sampling_period(trace: &Trace) -> Option<f64> {
    let series = trace.metrics.iter().max_by_key(|s| s.timestamp.len())?;
    let mut steps: Vec<i64> = series
        .timestamp
        .windows(2)
        .take(10_000)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0)
        .collect();
    if steps.is_empty() {
        return None;
    }
    let mid = steps.len() / 2;
    let (_, &mut median, _) = steps.select_nth_unstable(mid);
    Some(median as f64)
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
    let rows = summaries(trace, &metrics, scope)
        .into_iter()
        .map(|s| {
            // Rounded as its unit is read (clocks in whole MHz, shares to 0.1 %).
            let unit = metrics.metrics[s.metric as usize].unit.as_str();
            let opt =
                |v: Option<f64>| v.map_or(Cell::Empty, |v| Cell::Float(units::rounded(unit, v)));
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
