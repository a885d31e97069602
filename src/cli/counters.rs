//! What `sightline capture --metrics` prints: the counters per kernel name
//! (mean over its instances) and, with `--metrics-ranges`, per range instance.

use std::fmt::Write;

use crate::analysis::counter_ranges;
use crate::model::{KernelMetrics, Trace};

/// The counters as text: a block per kernel name, then one per range instance.
pub fn summary(trace: &Trace, set: &KernelMetrics, ranges: &[String]) -> String {
    let mut out = String::new();
    let mut names: Vec<(String, Vec<u32>)> = Vec::new();
    let mut seen: std::collections::HashSet<u32> = Default::default();
    for &k in &set.kernel {
        if seen.insert(k) {
            let name = trace.name(trace.kernels.spans.name[k as usize]).to_string();
            match names.iter_mut().find(|(n, _)| *n == name) {
                Some((_, ks)) => ks.push(k),
                None => names.push((name, vec![k])),
            }
        }
    }
    let _ = writeln!(out, "\nCounters per kernel (mean over its instances):");
    for (name, kernels) in &names {
        let _ = writeln!(out, "  {name}  ({} instances)", kernels.len());
        for (m, def) in set.metrics.iter().enumerate() {
            let values: Vec<f64> = kernels
                .iter()
                .filter_map(|&k| set.of_kernel(k).get(&(m as u16)).copied())
                .collect();
            if values.is_empty() {
                continue;
            }
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let _ = writeln!(
                out,
                "    {:<72} {:>16} {}",
                def.name,
                format_value(mean),
                def.unit
            );
        }
    }
    if ranges.is_empty() {
        return out;
    }
    let per_range = counter_ranges::range_counters(trace, set, ranges);
    let _ = writeln!(
        out,
        "\nCounters per NVTX range instance ({}; counts summed, rates weighted by duration):",
        ranges.join(", ")
    );
    if per_range.is_empty() {
        let _ = writeln!(out, "  no instance of these ranges launched a kernel");
    }
    for r in &per_range {
        let _ = writeln!(
            out,
            "  {} #{}  ({} kernels, {} with counters)",
            r.name, r.nvtx, r.kernels, r.with_counters
        );
        for (def, v) in set.metrics.iter().zip(&r.values) {
            if let Some(v) = v {
                let _ = writeln!(
                    out,
                    "    {:<72} {:>16} {}",
                    def.name,
                    format_value(*v),
                    def.unit
                );
            }
        }
    }
    out
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        crate::analysis::with_separators(&format!("{v:.0}"))
    } else {
        format!("{v:.2}")
    }
}
