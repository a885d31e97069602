//! A hardware metric's unit as people read it: nsys's sampled metrics in the
//! unit their name gives (`GPC Clock Frequency [MHz]` in MHz, though nsys
//! stores Hz), every value rounded to the places its unit and size call for,
//! and values no unit allows (a negative count, rate or clock; a share above
//! 100 %) recognised, so that they are flagged rather than printed.

use crate::analysis::format::with_separators;

/// The unit an nsys sampled metric is shown in, from the bracket that ends
/// its name (`SMs Active [Throughput %]` → `%`), and the factor from its
/// stored values to that unit: clocks are named `[MHz]` but stored in Hz
/// (nsys 2025.3 writes 1995651108 for 1,996 MHz).
pub fn sampled_unit(name: &str) -> (&'static str, f64) {
    let Some(open) = name.rfind('[') else {
        return ("", 1.0);
    };
    let inside = name[open + 1..].trim_end_matches(']').trim();
    if inside.ends_with('%') {
        ("%", 1.0)
    } else if inside == "MHz" {
        ("MHz", 1e-6)
    } else if inside.contains("Warps per Cycle") {
        ("warps/cycle", 1.0)
    } else if inside == "Avg" {
        // An average count of warps, as nsys's bracket names it.
        ("avg", 1.0)
    } else {
        ("", 1.0)
    }
}

/// Why `value` cannot be a value of a metric in `unit`, if it cannot: a
/// percentage outside 0–100 (a share of peak; ncu's `pct` metrics and nsys's
/// `[Throughput %]`), a negative count, rate, size, time or clock. A unit we
/// do not know allows anything.
pub fn impossible(unit: &str, value: f64) -> Option<&'static str> {
    if !value.is_finite() {
        return Some("not a number");
    }
    let unit = unit.trim();
    if unit == "%" {
        if value < 0.0 {
            return Some("a negative percentage");
        }
        if value > 100.0 + 1e-9 {
            return Some("above 100 %");
        }
        return None;
    }
    let never_negative = [
        "MHz",
        "Hz",
        "avg",
        "warps",
        "warps/cycle",
        "warp/cycle",
        "byte",
        "bytes",
        "cycle",
        "cycles",
        "inst",
        "instructions",
        "warp",
        "block",
        "register/thread",
        "nsecond",
        "usecond",
        "msecond",
        "second",
        "byte/second",
        "Kbyte/second",
        "Mbyte/second",
        "Gbyte/second",
        "Tbyte/second",
        "cycle/nsecond",
        "inst/cycle",
        "sector",
        "request",
    ];
    (value < 0.0 && never_negative.contains(&unit)).then_some("negative, which this unit cannot be")
}

/// How many decimals a value of `unit` is read with: clocks in whole MHz,
/// percentages with one, whole numbers (counts of bytes, instructions,
/// cycles) whole, other values by size (whole from 100, one from 10, else
/// two).
pub fn places(unit: &str, value: f64) -> usize {
    match unit.trim() {
        "MHz" => 0,
        "%" => 1,
        _ if value.fract() == 0.0 => 0,
        _ if value.abs() >= 100.0 => 0,
        _ if value.abs() >= 10.0 => 1,
        _ => 2,
    }
}

/// `value` rounded to its [`places`]: the number a table cell holds (its
/// shortest text is then the rounded decimal).
pub fn rounded(unit: &str, value: f64) -> f64 {
    let scale = 10f64.powi(places(unit, value) as i32);
    let r = (value * scale).round() / scale;
    if r == 0.0 { 0.0 } else { r }
}

/// `value` as the panel shows it: rounded to its [`places`], thousands
/// grouped; a flag instead of the number when the unit cannot have it.
pub fn shown(unit: &str, value: f64) -> String {
    if let Some(why) = impossible(unit, value) {
        return format!("impossible ({why})");
    }
    let text = format!("{:.*}", places(unit, value), rounded(unit, value));
    with_separators(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_from_nsys_metric_names() {
        assert_eq!(sampled_unit("SMs Active [Throughput %]"), ("%", 1.0));
        assert_eq!(sampled_unit("GPC Clock Frequency [MHz]"), ("MHz", 1e-6));
        assert_eq!(
            sampled_unit("Compute Warps in Flight [Avg Warps per Cycle]").0,
            "warps/cycle"
        );
        assert_eq!(sampled_unit("Compute Warps in Flight [Avg]").0, "avg");
        assert_eq!(sampled_unit("no bracket"), ("", 1.0));
    }

    #[test]
    fn values_read_as_people_read_them_and_impossible_ones_are_flagged() {
        assert_eq!(shown("MHz", 1995.651108), "1,996");
        assert_eq!(shown("%", 10.694444444444445), "10.7");
        assert_eq!(shown("warps/cycle", 9.47517730496454), "9.48");
        assert_eq!(shown("", 1576064.7203555555), "1,576,065");
        assert_eq!(shown("byte", 0.0), "0");
        assert_eq!(shown("%", 0.0), "0.0");
        assert_eq!(rounded("%", 97.38888888888889).to_string(), "97.4");
        assert!(shown("warps/cycle", -124.0).starts_with("impossible ("));
        assert!(shown("%", 100.5).starts_with("impossible ("));
        assert!(impossible("%", 100.0).is_none());
        assert!(impossible("", -3.0).is_none(), "a unit we do not know");
    }
}
