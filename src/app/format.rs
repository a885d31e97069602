//! Numbers for people: durations with adaptive units, byte sizes, bandwidth.

use crate::model::Ns;

/// A duration or offset in the largest unit that keeps it ≥ 1 (ns, µs, ms, s).
pub fn duration(ns: Ns) -> String {
    let a = ns.unsigned_abs() as f64;
    let sign = if ns < 0 { "-" } else { "" };
    if a < 1e3 {
        format!("{sign}{a} ns")
    } else if a < 1e6 {
        format!("{sign}{:.3} µs", a / 1e3)
    } else if a < 1e9 {
        format!("{sign}{:.3} ms", a / 1e6)
    } else {
        format!("{sign}{:.3} s", a / 1e9)
    }
}

/// A tick label: `value` (ns from the session start) with as many decimals as
/// the tick `step` needs, so neighbouring labels differ.
pub fn tick(value: f64, step: f64) -> String {
    // The unit follows the step, one notch coarser than the step itself, so
    // labels stay short (444.2 ms, not 444200 µs) yet still differ.
    let (div, unit) = if step >= 1e8 {
        (1e9, "s")
    } else if step >= 1e3 {
        (1e6, "ms")
    } else {
        (1e3, "µs")
    };
    let decimals = ((div / step).log10().ceil().max(0.0)) as usize;
    format!("{:.*} {unit}", decimals, value / div)
}

pub fn bytes(b: u64) -> String {
    let f = b as f64;
    if b < 1024 {
        format!("{b} B")
    } else if f < 1024.0 * 1024.0 {
        format!("{:.2} KiB", f / 1024.0)
    } else if f < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} MiB", f / (1024.0 * 1024.0))
    } else {
        format!("{:.2} GiB", f / (1024.0 * 1024.0 * 1024.0))
    }
}

/// Bytes per nanosecond is GB/s (10^9 bytes per second).
pub fn bandwidth(bytes: u64, ns: Ns) -> String {
    if ns <= 0 {
        return "—".into();
    }
    format!("{:.3} GB/s", bytes as f64 / ns as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_adapt() {
        assert_eq!(duration(999), "999 ns");
        assert_eq!(duration(1_500), "1.500 µs");
        assert_eq!(duration(2_000_000), "2.000 ms");
        assert_eq!(duration(3_000_000_000), "3.000 s");
        assert_eq!(tick(2_500_000.0, 500_000.0), "2.5 ms");
        assert_eq!(tick(2_000_000.0, 1_000_000.0), "2 ms");
        assert_eq!(tick(444_200_000.0, 200_000.0), "444.2 ms");
        assert_eq!(tick(1_500.0, 500.0), "1.5 µs");
        assert_eq!(bandwidth(1_000, 1_000), "1.000 GB/s");
    }
}
