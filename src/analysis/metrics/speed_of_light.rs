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

/// What one source gives a kernel: its speed of light (none when it lacks
/// the metrics or every instance was too short to be sampled), and for
/// sampling how many instances it could not see.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SourceNumbers {
    pub source: MetricSource,
    pub speed_of_light: Option<SpeedOfLight>,
    /// Instances a sampled source could not average (shorter than its period).
    pub too_short: usize,
}

/// Each source's verdict, and the one the panel goes by, with why.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// Per source, in the order given: its label and its verdict line (or why
    /// it has none).
    pub lines: Vec<(MetricSource, String)>,
    /// The source trusted, if any has a verdict.
    pub trusted: Option<MetricSource>,
    /// Why that one, and why the others may say otherwise.
    pub why: String,
}

/// Counters (Nsight Compute's, or Sightline's own CUPTI counters) measure each
/// instance of the kernel alone, from its first cycle to its last; nsys's
/// sampling reads the whole GPU once per period, so a sample averages a period
/// the kernel fills only partly (idle time and other kernels in it), and an
/// instance shorter than the period is not seen at all. So counters are
/// trusted over sampling; sampling alone is trusted with that said.
/// `period_ns` is the sampling period, `median_ns` the kernel's median
/// duration (both for the words).
pub fn judge(
    sources: &[SourceNumbers],
    period_ns: Option<f64>,
    median_ns: Option<f64>,
) -> Judgement {
    let lines = sources
        .iter()
        .map(|s| {
            let line = match s.speed_of_light {
                Some(sol) => sol.verdict(),
                None if s.source == MetricSource::NsysSampling && s.too_short > 0 => format!(
                    "No verdict: none of its {} instance(s) got 2 samples",
                    s.too_short
                ),
                None => "No verdict: the SM and memory throughput were not collected".into(),
            };
            (s.source, line)
        })
        .collect();
    let with = |source: MetricSource| {
        sources
            .iter()
            .find(|s| s.source == source && s.speed_of_light.is_some())
    };
    let counted = with(MetricSource::Ncu).or_else(|| with(MetricSource::Counters));
    let sampled = sources
        .iter()
        .find(|s| s.source == MetricSource::NsysSampling);
    let period = period_ns.map_or("its period".to_string(), |p| {
        crate::analysis::format::duration_places(p.round() as i64, [0, 1, 1])
    });
    let short_kernel = match (period_ns, median_ns) {
        (Some(p), Some(m)) if m < 2.0 * p => format!(
            " This kernel's median instance ({}) is shorter than two sampling periods ({period} \
             each): its samples mostly average time it did not run.",
            crate::analysis::format::human_ns(m.round() as i64)
        ),
        _ => String::new(),
    };
    let (trusted, why) = match (counted, sampled) {
        (Some(c), sampled) => {
            let mut why = format!(
                "Trusted: {}. Counters measure each instance of this kernel alone, from its \
                 first cycle to its last.",
                c.source.label()
            );
            if let Some(s) = sampled {
                let differs = s
                    .speed_of_light
                    .zip(c.speed_of_light)
                    .is_some_and(|(a, b)| a.bound() != b.bound());
                why.push_str(&format!(
                    " nsys sampling reads the whole GPU once every {period}, so a sample averages \
                     idle time and other kernels with this one, and an instance shorter than the \
                     period is not seen at all{}.{short_kernel}",
                    if differs {
                        ": that is why its verdict differs"
                    } else {
                        ""
                    }
                ));
            }
            (Some(c.source), why)
        }
        (None, Some(s)) if s.speed_of_light.is_some() => (
            Some(s.source),
            format!(
                "From sampling only: nsys reads the whole GPU once every {period}, so these \
                 numbers average idle time and other kernels with this one{}.{short_kernel} \
                 Counters (File ▸ Attach Nsight Compute results…, or a Sightline capture with \
                 --metrics) measure the kernel itself.",
                if s.too_short > 0 {
                    format!(
                        "; {} instance(s) shorter than the period are not in them",
                        s.too_short
                    )
                } else {
                    String::new()
                }
            ),
        ),
        _ => (None, String::new()),
    };
    Judgement {
        lines,
        trusted,
        why,
    }
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
    fn counters_are_trusted_over_sampling_and_the_panel_says_why() {
        // sgemm_tiled in issue 45: latency-bound by sampling, compute-bound by ncu.
        let sampled = SourceNumbers {
            source: MetricSource::NsysSampling,
            speed_of_light: Some(sol(21.0, 9.0)),
            too_short: 3,
        };
        let ncu = SourceNumbers {
            source: MetricSource::Ncu,
            speed_of_light: Some(sol(75.3, 40.0)),
            too_short: 0,
        };
        let j = judge(&[sampled, ncu], Some(100_000.0), Some(30_000.0));
        assert_eq!(j.trusted, Some(MetricSource::Ncu));
        assert_eq!(j.lines.len(), 2);
        assert!(j.lines[0].1.starts_with("Latency-bound"), "{:?}", j.lines);
        assert!(j.lines[1].1.starts_with("Compute-bound"), "{:?}", j.lines);
        for words in [
            "Trusted: Nsight Compute",
            "why its verdict differs",
            "100 µs",
            "shorter",
        ] {
            assert!(j.why.contains(words), "{words}: {}", j.why);
        }
        // Sampling alone: trusted, with its limits said; all too short: no verdict.
        let j = judge(&[sampled], Some(100_000.0), None);
        assert_eq!(j.trusted, Some(MetricSource::NsysSampling));
        assert!(j.why.contains("3 instance(s) shorter"), "{}", j.why);
        let blind = SourceNumbers {
            speed_of_light: None,
            ..sampled
        };
        let j = judge(&[blind], Some(100_000.0), None);
        assert_eq!(j.trusted, None);
        assert!(
            j.lines[0]
                .1
                .contains("none of its 3 instance(s) got 2 samples")
        );
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
