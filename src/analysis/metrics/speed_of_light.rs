//! Speed of light, as Nsight Compute's first section: how close a kernel came
//! to the SM's and the memory system's peak throughput, and a one-line
//! verdict from the two numbers.

use crate::model::{KernelMetrics, MetricSource};

/// The SM (compute) throughput metric of ncu and our counters.
pub const SM_THROUGHPUT: &str = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
/// The memory throughput metric of ncu and our counters (the busiest of
/// DRAM, L2 and L1 against their peaks).
pub const MEMORY_THROUGHPUT: &str =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
/// DRAM alone, used when the memory throughput metric was not collected.
pub const DRAM_THROUGHPUT: &str = "dram__throughput.avg.pct_of_peak_sustained_elapsed";

/// nsys's sampled metrics that stand for the same two numbers: SM issue
/// (the share of cycles the SMs issued an instruction) and tensor activity
/// for compute, DRAM read + write bandwidth for memory.
const SAMPLED_SM: [&str; 2] = ["SM Issue [Throughput %]", "Tensor Active [Throughput %]"];
const SAMPLED_DRAM: [&str; 2] = [
    "DRAM Read Bandwidth [Throughput %]",
    "DRAM Write Bandwidth [Throughput %]",
];

/// Below this share of peak on both sides, neither unit limits the kernel:
/// it waits (latency, too little parallelism, launch overhead). ncu's rule
/// of thumb is 60 %.
pub const LATENCY_BELOW: f64 = 60.0;
/// Within this many points of each other, compute and memory are balanced.
pub const BALANCED_WITHIN: f64 = 10.0;

/// What limits a kernel, by its speed-of-light numbers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    Compute,
    Memory,
    Latency,
    Balanced,
}

impl Bound {
    pub fn label(self) -> &'static str {
        match self {
            Bound::Compute => "Compute-bound",
            Bound::Memory => "Memory-bound",
            Bound::Latency => "Latency-bound",
            Bound::Balanced => "Balanced",
        }
    }
}

/// A kernel's two speed-of-light numbers, in percent of peak.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SpeedOfLight {
    pub sm_percent: f64,
    pub memory_percent: f64,
}

impl SpeedOfLight {
    pub fn bound(&self) -> Bound {
        let (sm, mem) = (self.sm_percent, self.memory_percent);
        if sm.max(mem) < LATENCY_BELOW {
            Bound::Latency
        } else if (sm - mem).abs() <= BALANCED_WITHIN {
            Bound::Balanced
        } else if sm > mem {
            Bound::Compute
        } else {
            Bound::Memory
        }
    }

    /// The verdict in one line, with its numbers.
    pub fn verdict(&self) -> String {
        let (sm, mem) = (self.sm_percent, self.memory_percent);
        let numbers = format!("SM {sm:.1} % of peak, memory {mem:.1} % of peak");
        match self.bound() {
            Bound::Compute => format!("Compute-bound: {numbers}"),
            Bound::Memory => format!("Memory-bound: {numbers}"),
            Bound::Balanced => format!("Balanced (both near their peaks): {numbers}"),
            Bound::Latency => format!(
                "Latency-bound (both below {LATENCY_BELOW:.0} %, the kernel mostly waits): {numbers}"
            ),
        }
    }
}

/// A per-metric value lookup: the median over a kernel's instances, say.
pub type Lookup<'a> = dyn Fn(&str) -> Option<f64> + 'a;

/// The speed-of-light numbers a metric set can give, through `value` (a
/// metric's value by name); `None` when it lacks them.
pub fn from_metrics(source: MetricSource, value: &Lookup) -> Option<SpeedOfLight> {
    match source {
        MetricSource::Counters | MetricSource::Ncu => {
            let sm = value(SM_THROUGHPUT)?;
            let memory = value(MEMORY_THROUGHPUT).or_else(|| value(DRAM_THROUGHPUT))?;
            Some(SpeedOfLight {
                sm_percent: sm,
                memory_percent: memory,
            })
        }
        MetricSource::NsysSampling => {
            let sm = SAMPLED_SM
                .iter()
                .filter_map(|m| value(m))
                .reduce(f64::max)?;
            let dram: Vec<f64> = SAMPLED_DRAM.iter().filter_map(|m| value(m)).collect();
            if dram.is_empty() {
                return None;
            }
            Some(SpeedOfLight {
                sm_percent: sm,
                memory_percent: dram.iter().sum::<f64>().min(100.0),
            })
        }
    }
}

/// Speed of light of a set's median values for some kernels.
pub fn of_kernels(set: &KernelMetrics, kernels: &[u32]) -> Option<SpeedOfLight> {
    of_stats(set, &super::instance_stats::stats_over(set, kernels))
}

/// The speed of light from statistics already taken over a kernel's
/// instances ([`super::instance_stats::stats_over`]).
pub fn of_stats(
    set: &KernelMetrics,
    stats: &[super::instance_stats::MetricStats],
) -> Option<SpeedOfLight> {
    let value = |name: &str| {
        let m = set.metric_index(name)?;
        stats
            .iter()
            .find(|s| s.metric as usize == m)
            .map(|s| s.median)
    };
    from_metrics(set.source, &value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sol(sm: f64, memory: f64) -> SpeedOfLight {
        SpeedOfLight {
            sm_percent: sm,
            memory_percent: memory,
        }
    }

    #[test]
    fn verdicts_follow_the_two_numbers() {
        assert_eq!(sol(90.0, 30.0).bound(), Bound::Compute);
        assert_eq!(sol(20.0, 85.0).bound(), Bound::Memory);
        assert_eq!(sol(20.0, 30.0).bound(), Bound::Latency);
        assert_eq!(sol(75.0, 80.0).bound(), Bound::Balanced);
        assert_eq!(sol(59.9, 0.0).bound(), Bound::Latency);
        let line = sol(20.0, 85.25).verdict();
        assert!(line.starts_with("Memory-bound"), "{line}");
        assert!(line.contains("85.2") || line.contains("85.3"), "{line}");
    }

    #[test]
    fn numbers_come_from_the_source_own_metrics() {
        let ncu = |name: &str| match name {
            SM_THROUGHPUT => Some(40.0),
            DRAM_THROUGHPUT => Some(91.0),
            _ => None,
        };
        let s = from_metrics(MetricSource::Ncu, &ncu).expect("dram stands in for memory");
        assert_eq!((s.sm_percent, s.memory_percent), (40.0, 91.0));
        let sampled = |name: &str| match name {
            "SM Issue [Throughput %]" => Some(30.0),
            "Tensor Active [Throughput %]" => Some(70.0),
            "DRAM Read Bandwidth [Throughput %]" => Some(20.0),
            "DRAM Write Bandwidth [Throughput %]" => Some(5.0),
            _ => None,
        };
        let s = from_metrics(MetricSource::NsysSampling, &sampled).expect("sampled");
        assert_eq!((s.sm_percent, s.memory_percent), (70.0, 25.0));
        assert!(from_metrics(MetricSource::Counters, &|_| None).is_none());
    }
}
