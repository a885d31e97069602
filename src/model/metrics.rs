//! Hardware metrics per kernel instance, whatever measured them.
//!
//! Three sources fill the same shape, so the kernel panel, the speed-of-light
//! verdict, the roofline and the timeline strip read one type:
//! - [`MetricSource::Counters`]: CUPTI counters recorded by a Sightline capture
//!   (stored in the saved report in a table of our own, read back by the loader);
//! - [`MetricSource::NsysSampling`]: nsys's device-wide `GPU_METRICS` samples,
//!   averaged over each kernel instance (computed in analysis);
//! - [`MetricSource::Ncu`]: Nsight Compute results joined to the report's kernels.
//!
//! Values are columnar: one row per (kernel instance, metric) that has a value.

use std::collections::HashMap;

/// Who measured a set of kernel metrics.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricSource {
    /// CUPTI range-profiler counters from a Sightline capture.
    Counters,
    /// nsys `GPU_METRICS` samples, averaged per kernel instance.
    NsysSampling,
    /// Nsight Compute results (`ncu --csv --page raw`) joined to the kernels.
    Ncu,
}

impl MetricSource {
    /// How the panel names the source.
    pub fn label(self) -> &'static str {
        match self {
            MetricSource::Counters => "CUPTI counters (Sightline capture)",
            MetricSource::NsysSampling => "nsys GPU metrics sampling",
            MetricSource::Ncu => "Nsight Compute",
        }
    }

    /// The source in a verdict's line: "by …".
    pub fn short_label(self) -> &'static str {
        match self {
            MetricSource::Counters => "By CUPTI counters",
            MetricSource::NsysSampling => "By nsys sampling",
            MetricSource::Ncu => "By Nsight Compute",
        }
    }
}

/// One metric: its name as the source spells it, and its unit as ncu prints it
/// (`%`, `byte`, `nsecond`, `inst`, ...; empty when unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricDef {
    pub name: String,
    pub unit: String,
}

/// Metric values per kernel instance from one source.
#[derive(Clone, Debug)]
pub struct KernelMetrics {
    pub source: MetricSource,
    /// The metrics, in the order the source lists them.
    pub metrics: Vec<MetricDef>,
    /// Row `i` says: kernel `kernel[i]` (an index into `Trace::kernels`) had
    /// value `value[i]` for metric `metric[i]` (an index into `metrics`).
    pub kernel: Vec<u32>,
    pub metric: Vec<u16>,
    pub value: Vec<f64>,
    /// For sampled sources: how many samples each row's value averages (empty
    /// for sources that measure each instance whole).
    pub samples: Vec<u32>,
    /// Facts the user should see about this set (unmatched rows, instances
    /// too short to be sampled, a separate counter pass, ...).
    pub notes: Vec<String>,
}

impl KernelMetrics {
    pub fn new(source: MetricSource, metrics: Vec<MetricDef>) -> Self {
        KernelMetrics {
            source,
            metrics,
            kernel: Vec::new(),
            metric: Vec::new(),
            value: Vec::new(),
            samples: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.kernel.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kernel.is_empty()
    }

    /// The index of a metric by name.
    pub fn metric_index(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m.name == name)
    }

    pub fn push(&mut self, kernel: u32, metric: u16, value: f64) {
        self.kernel.push(kernel);
        self.metric.push(metric);
        self.value.push(value);
    }

    /// Every value of one kernel instance, by metric index.
    pub fn of_kernel(&self, kernel: u32) -> HashMap<u16, f64> {
        self.kernel
            .iter()
            .zip(&self.metric)
            .zip(&self.value)
            .filter(|((k, _), _)| **k == kernel)
            .map(|((_, m), v)| (*m, *v))
            .collect()
    }
}
