//! Hardware metrics per kernel: nsys's sampled GPU metrics averaged per kernel
//! instance ([`sampled`]), Nsight Compute results joined to a report's kernels
//! ([`ncu`]), and what the kernel panel derives from any source: statistics
//! over a kernel's instances, the speed-of-light verdict ([`speed_of_light`])
//! and the roofline ([`roofline`]). No egui here.

mod instance_stats;
pub mod ncu;
pub mod roofline;
pub mod sampled;
mod selection;
pub mod speed_of_light;
pub mod units;

use crate::model::{KernelMetrics, Trace};

pub use instance_stats::{MetricStats, stats_over, too_short};
pub use selection::kernel_devices;

/// Everything the kernel panel shows of one metric set for one kernel's
/// instances.
#[derive(Clone, Debug)]
pub struct SetSummary {
    pub set: std::sync::Arc<KernelMetrics>,
    pub stats: Vec<MetricStats>,
    /// Instances a sampled set could not average.
    pub too_short: usize,
    pub speed_of_light: Option<speed_of_light::SpeedOfLight>,
    pub roofline: Result<roofline::Point, roofline::NotPlotted>,
}

/// The summaries of every set that has values for `kernels`; the roofline's
/// FLOPs from counters, else from the gemm benchmark's recorded work
/// (computed only when a set has DRAM bytes, counted or sampled, but no FLOP
/// counters).
pub fn summarise(
    trace: &Trace,
    sets: &[std::sync::Arc<KernelMetrics>],
    kernels: &[u32],
) -> Vec<SetSummary> {
    let mut work = None;
    let mut out = Vec::new();
    for set in sets {
        let stats = stats_over(set, kernels);
        let too_short = too_short(set, kernels);
        if stats.is_empty() && too_short == 0 {
            continue;
        }
        let sampled = set.source == crate::model::MetricSource::NsysSampling;
        let needs_work = (set.metric_index(roofline::DRAM_READ).is_some()
            && set.metric_index(roofline::FFMA).is_none())
            || (sampled && set.metric_index(roofline::SAMPLED_DRAM_READ).is_some());
        let empty = std::collections::HashMap::new();
        let work_ref = if needs_work {
            &*work.get_or_insert_with(|| roofline::benchmark_flops(trace))
        } else {
            &empty
        };
        out.push(SetSummary {
            speed_of_light: speed_of_light::of_stats(set, &stats),
            roofline: if sampled {
                roofline::sampled_point(trace, set, kernels, work_ref)
            } else {
                roofline::point(trace, set, kernels, work_ref)
            },
            set: set.clone(),
            stats,
            too_short,
        });
    }
    out
}
