//! Statistics of each metric over a kernel's instances (min, median, max,
//! mean), and how many instances a sampled set could not average: what the
//! kernel panel shows of any metric source, and what the speed-of-light
//! verdict reads.

use super::sampled;
use super::selection::Selection;
use crate::model::KernelMetrics;

/// One metric of one kernel name over its instances.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricStats {
    /// Index into the set's `metrics`.
    pub metric: u16,
    /// Instances with a value.
    pub instances: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub mean: f64,
}

/// Min, median, max and mean of each metric over `kernels` (indexes into
/// `Trace::kernels`), in the set's metric order. A sampled set counts only
/// instances with at least [`sampled::MIN_SAMPLES`] samples. The median of an
/// even count is the mean of the middle two.
pub fn stats_over(set: &KernelMetrics, kernels: &[u32]) -> Vec<MetricStats> {
    let wanted = Selection::new(kernels);
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); set.metrics.len()];
    for i in 0..set.len() {
        if wanted.slot(set.kernel[i]).is_none() {
            continue;
        }
        if set
            .samples
            .get(i)
            .is_some_and(|&n| n < sampled::MIN_SAMPLES)
        {
            continue;
        }
        let v = set.value[i];
        if let Some(column) = values.get_mut(set.metric[i] as usize)
            && v.is_finite()
        {
            column.push(v);
        }
    }
    values
        .into_iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(m, mut v)| {
            let n = v.len();
            let mean = v.iter().sum::<f64>() / n as f64;
            let (min, max) = v
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                    (lo.min(x), hi.max(x))
                });
            // A selection, not a sort: a kernel can have millions of instances.
            let (lower, &mut upper, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
            let median = if n % 2 == 1 {
                upper
            } else {
                let below = lower.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (below + upper) / 2.0
            };
            MetricStats {
                metric: m as u16,
                instances: n,
                min,
                median,
                max,
                mean,
            }
        })
        .collect()
}

/// How many of `kernels` a sampled set could not average (fewer than
/// [`sampled::MIN_SAMPLES`] samples, or none).
pub fn too_short(set: &KernelMetrics, kernels: &[u32]) -> usize {
    if set.samples.is_empty() {
        return 0;
    }
    // An instance counts once, however often it is named.
    let wanted = Selection::new(kernels);
    let mut sampled = vec![false; wanted.len];
    for i in 0..set.len() {
        if set.samples[i] >= sampled::MIN_SAMPLES
            && let Some(p) = wanted.slot(set.kernel[i])
        {
            sampled[p] = true;
        }
    }
    sampled.iter().filter(|s| !**s).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MetricDef, MetricSource};

    #[test]
    fn stats_leave_out_unsampled_instances() {
        let def = |n: &str| MetricDef {
            name: n.into(),
            unit: "%".into(),
        };
        let mut set = KernelMetrics::new(MetricSource::NsysSampling, vec![def("a"), def("b")]);
        for (k, v, n) in [(0, 10.0, 3), (1, 30.0, 2), (2, 99.0, 1), (3, 20.0, 5)] {
            set.push(k, 0, v);
            set.samples.push(n);
        }
        let s = stats_over(&set, &[0, 1, 2, 3]);
        assert_eq!(s.len(), 1, "metric b has no values");
        assert_eq!((s[0].min, s[0].median, s[0].max), (10.0, 20.0, 30.0));
        assert_eq!(s[0].instances, 3);
        assert_eq!(too_short(&set, &[0, 1, 2, 3, 4]), 2);
    }

    #[test]
    fn min_median_max_are_those_of_the_sorted_values_for_odd_and_even_counts() {
        let def = MetricDef {
            name: "m".into(),
            unit: "".into(),
        };
        for count in [1u32, 2, 7, 10, 1001] {
            let mut set = KernelMetrics::new(MetricSource::Counters, vec![def.clone()]);
            let mut seed = 11u64 + count as u64;
            let mut values = Vec::new();
            for k in 0..count {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                let v = ((seed >> 40) % 500) as f64 / 4.0;
                set.push(k, 0, v);
                values.push(v);
            }
            values.sort_by(f64::total_cmp);
            let n = values.len();
            let median = if n % 2 == 1 {
                values[n / 2]
            } else {
                (values[n / 2 - 1] + values[n / 2]) / 2.0
            };
            let all: Vec<u32> = (0..count).collect();
            let s = &stats_over(&set, &all)[0];
            assert_eq!((s.min, s.median, s.max), (values[0], median, values[n - 1]));
            let mean = values.iter().sum::<f64>() / n as f64;
            assert!(
                (s.mean - mean).abs() <= 1e-9 * mean.abs().max(1.0),
                "{count}"
            );
        }
    }
}
