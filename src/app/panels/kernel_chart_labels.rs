//! What the kernel panel's charts say in words: the latency header, the
//! duration axes' labels and the duration-over-time readout. One place per
//! number, so a header and a legend never round one value two ways.

use crate::analysis::kernels::DurationStats;
use crate::app::widgets::format;
use crate::model::Ns;

/// A median (or any percentile that may fall between two nanoseconds) as the
/// header and the legend both say it.
pub fn duration_of(ns: f64) -> String {
    format::duration(ns.round() as Ns)
}

/// The launch latency's header line.
pub fn latency_header(l: &DurationStats) -> String {
    format!(
        "Launch latency (API call start to kernel start): median {}, p90 {}, max {}",
        duration_of(l.median),
        format::duration(l.p90),
        format::duration(l.max)
    )
}

/// The label of a duration axis' mark at `value` (the chart's x), `step`
/// apart from the next mark, where `ns` turns the chart's x into
/// nanoseconds (log bins plot log10 ns): with the decimals that step needs,
/// so that marks of a narrow spread read apart (`15.21 ms`, `15.22 ms`, not
/// `15.2 ms` five times).
pub fn axis_label(ns: impl Fn(f64) -> f64, value: f64, step: f64) -> String {
    let at = ns(value);
    let step_ns = (ns(value + step) - at).abs().max(1.0);
    format::tick(at, step_ns)
}

/// What hovering the duration-over-time plot at `(x_seconds, _y_us)` says:
/// the instance nearest in time to the cursor (its duration and start), never
/// the cursor's own position, which no instance may have. `points` are the
/// instances `(start, duration, row)`, by start.
pub fn scatter_readout(points: &[(Ns, Ns, u32)], x_seconds: f64, _y_us: f64) -> Option<String> {
    let at = (x_seconds * 1e9).round() as Ns;
    let after = points.partition_point(|p| p.0 < at);
    let nearest = [after.checked_sub(1), Some(after)]
        .into_iter()
        .flatten()
        .filter_map(|i| points.get(i))
        .min_by_key(|p| (p.0 - at).unsigned_abs())?;
    Some(format!(
        "{}\nat {}",
        format::duration(nearest.1),
        format::duration(nearest.0)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_legend_say_one_median() {
        let mut d = vec![10_337, 10_338];
        let l = DurationStats::of(&mut d).expect("stats");
        assert_eq!(l.median, 10_337.5);
        let legend = crate::app::panels::kernel_panel::percentile_label("P50", l.median);
        let value = legend.trim_start_matches("P50 ");
        assert!(
            latency_header(&l).contains(&format!("median {value},")),
            "{} vs {legend}",
            latency_header(&l)
        );
    }

    #[test]
    fn histogram_axis_labels_have_the_decimals_to_differ() {
        for (lo, spread) in [
            (15_200_000i64, 60_000i64),
            (10_000, 400),
            (2_000_000_000, 3_000_000),
        ] {
            let values: Vec<i64> = (0..100).map(|i| lo + spread * i / 99).collect();
            let h = crate::app::panels::kernel_panel::Histogram::of(&values);
            let (x0, x1) = (h.x(lo as f64), h.x((lo + spread) as f64));
            let step = (x1 - x0) / 5.0;
            let labels: Vec<String> = (0..=5)
                .map(|i| axis_label(|x| h.ns(x), x0 + step * i as f64, step))
                .collect();
            let mut distinct = labels.clone();
            distinct.dedup();
            assert_eq!(distinct.len(), labels.len(), "{labels:?}");
        }
    }

    #[test]
    fn the_readout_is_the_nearest_instance_not_the_cursor() {
        let points = [(1_000_000_000, 12_000, 7), (1_000_500_000, 15_000, 8)];
        // Between the two, nearer the second, at a y no instance has.
        let text = scatter_readout(&points, 1.000_4, 99.0).expect("a readout");
        assert!(text.contains(&format::duration(15_000)), "{text}");
        assert!(text.contains(&format::duration(1_000_500_000)), "{text}");
        assert!(!text.contains(&format::duration(99_000)), "{text}");
    }
}
