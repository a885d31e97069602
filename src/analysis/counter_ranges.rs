//! Counters over NVTX ranges: for each instance of the named ranges, the
//! counters of the kernels it launched, combined as Nsight Compute's range
//! replay would report them: counts (bytes, instructions, cycles, the
//! duration) summed; rates and percentages averaged, weighted by each
//! kernel's `gpu__time_duration.sum` when collected (the elapsed time they
//! are a share of), plainly otherwise.

use crate::model::{GpuOpKind, KernelMetrics, NvtxKind, Trace};

/// One instance of a named range and its combined counters.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeCounters {
    /// Index into `Trace::nvtx`.
    pub nvtx: u32,
    pub name: String,
    /// Kernels launched inside the range, and how many of them have counters.
    pub kernels: usize,
    pub with_counters: usize,
    /// One value per metric of the set (None where no kernel had one).
    pub values: Vec<Option<f64>>,
}

/// Whether a metric adds up over kernels (a count) rather than averaging.
pub fn is_count(name: &str) -> bool {
    name.split_once('.').is_some_and(|(_, sub)| sub == "sum")
}

/// The named ranges' instances (push/pop or start/end, any domain) with the
/// counters of the kernels each launched.
pub fn range_counters(trace: &Trace, set: &KernelMetrics, names: &[String]) -> Vec<RangeCounters> {
    let duration = set.metric_index("gpu__time_duration.sum");
    let mut by_kernel: std::collections::HashMap<u32, Vec<(u16, f64)>> = Default::default();
    for ((&k, &m), &v) in set.kernel.iter().zip(&set.metric).zip(&set.value) {
        by_kernel.entry(k).or_default().push((m, v));
    }
    let mut out = Vec::new();
    for i in 0..trace.nvtx.spans.len() {
        let name = trace.name(trace.nvtx.spans.name[i]);
        if !names.iter().any(|n| n == name)
            || !matches!(trace.nvtx.kind[i], NvtxKind::PushPop | NvtxKind::StartEnd)
        {
            continue;
        }
        let kernels: Vec<u32> = crate::analysis::projection::gpu_work(trace, i as u32)
            .into_iter()
            .filter(|op| op.kind == GpuOpKind::Kernel)
            .map(|op| op.index)
            .collect();
        let mut sums = vec![0f64; set.metrics.len()];
        let mut weights = vec![0f64; set.metrics.len()];
        let mut with_counters = 0;
        for k in &kernels {
            let Some(values) = by_kernel.get(k) else {
                continue;
            };
            with_counters += 1;
            let w = duration
                .and_then(|d| values.iter().find(|(m, _)| *m as usize == d))
                .map_or(1.0, |(_, v)| *v);
            for &(m, v) in values {
                let m = m as usize;
                if is_count(&set.metrics[m].name) {
                    sums[m] += v;
                    weights[m] = 1.0;
                } else {
                    sums[m] += v * w;
                    weights[m] += w;
                }
            }
        }
        let values = (0..set.metrics.len())
            .map(|m| {
                if weights[m] == 0.0 {
                    None
                } else if is_count(&set.metrics[m].name) {
                    Some(sums[m])
                } else {
                    Some(sums[m] / weights[m])
                }
            })
            .collect();
        out.push(RangeCounters {
            nvtx: i as u32,
            name: name.to_string(),
            kernels: kernels.len(),
            with_counters,
            values,
        });
    }
    out.sort_by_key(|r| (trace.nvtx.spans.start[r.nvtx as usize], r.nvtx));
    out
}

#[cfg(test)]
mod tests {
    use super::is_count;

    #[test]
    fn sums_add_up_rates_do_not() {
        assert!(is_count("dram__bytes_read.sum"));
        assert!(is_count("gpu__time_duration.sum"));
        assert!(!is_count("dram__bytes_read.sum.per_second"));
        assert!(!is_count(
            "dram__bytes_read.sum.pct_of_peak_sustained_elapsed"
        ));
        assert!(!is_count(
            "sm__throughput.avg.pct_of_peak_sustained_elapsed"
        ));
        assert!(!is_count("lts__t_sector_hit_rate.pct"));
    }
}
