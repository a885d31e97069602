//! Numbers for people: durations with adaptive units, exact session times,
//! byte sizes, bandwidth, and the display form of API names.

use crate::model::Ns;

/// A duration or offset in the largest unit that keeps it ≥ 1 (ns, µs, ms, s).
pub fn duration(ns: Ns) -> String {
    crate::analysis::duration_places(ns, [3, 3, 3])
}

/// [`duration`] of a sum, which may pass i64 (extreme timestamps): never
/// wrapped to a negative time nor clamped.
pub fn duration_wide(ns: i128) -> String {
    match Ns::try_from(ns) {
        Ok(ns) => duration(ns),
        Err(_) => {
            let sign = if ns < 0 { "-" } else { "" };
            format!("{sign}{:.3} s", ns.unsigned_abs() as f64 / 1e9)
        }
    }
}

/// [`grouped`] of a sum wider than i64, every digit kept.
pub fn grouped_wide(v: i128) -> String {
    crate::analysis::with_separators(&v.to_string())
}

/// An integer with `,` between thousands: `523124266` → `523,124,266`.
pub fn grouped(v: i64) -> String {
    crate::analysis::with_separators(&v.to_string())
}

#[cfg(test)]
mod wide_tests {
    use super::*;

    #[test]
    fn sums_past_i64_are_neither_wrapped_nor_clamped() {
        // What the kernel panel showed as "-90 ns (9,223,372,036,854,775,807 ns)".
        let sum = i64::MAX as i128 * 90;
        assert_eq!(duration_wide(sum), "830103483316.930 s");
        assert_eq!(grouped_wide(sum), "830,103,483,316,929,822,630");
        assert_eq!(duration_wide(1_500), duration(1_500));
    }
}

/// An exact nanosecond value with a readable form beside it:
/// `523,124,266 ns (523.124 ms)`; below 1 µs just `999 ns`.
pub fn exact(ns: Ns) -> String {
    if ns.unsigned_abs() < 1_000 {
        format!("{ns} ns")
    } else {
        format!("{} ns ({})", grouped(ns), duration(ns))
    }
}

/// A tick label on the session clock: `value` in session ns, with the unit
/// and the decimals that the tick `step` needs so neighbouring labels differ
/// (`523.90 ms` for 100 µs ticks, `1.2 s` for 100 ms ticks).
pub fn tick(value: f64, step: f64) -> String {
    // The unit is the one a step of 1–999 of it would be read in, raised
    // when the value itself would need too many digits in it.
    let (div, unit) = if step >= 1e8 {
        (1e9, "s")
    } else if step >= 1e5 || value.abs() >= 1e10 {
        if value.abs() >= 1e10 {
            (1e9, "s")
        } else {
            (1e6, "ms")
        }
    } else if step >= 100.0 || value.abs() >= 1e7 {
        if value.abs() >= 1e7 {
            (1e6, "ms")
        } else {
            (1e3, "µs")
        }
    } else {
        (1e3, "µs")
    };
    let decimals = ((div / step).log10() + 1e-9).floor().max(-1.0) as i32 + 1;
    let decimals = decimals.max(0) as usize;
    format!("{:.*} {unit}", decimals, value / div)
}

/// A duration short enough for an axis: three significant digits, no
/// trailing zeros ("10 µs", "2.5 ms", "130 ns"), the units of the ruler.
pub fn short_duration(ns: f64) -> String {
    let a = ns.abs();
    let (v, unit) = if a < 1e3 {
        (ns, "ns")
    } else if a < 1e6 {
        (ns / 1e3, "µs")
    } else if a < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let decimals = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text} {unit}")
}

/// A size in binary units (the one convention outside nsys's tables).
pub fn bytes(b: u64) -> String {
    crate::analysis::binary_size(b)
}

/// Bytes per nanosecond is GB/s (10^9 bytes per second).
pub fn bandwidth(bytes: u64, ns: Ns) -> String {
    if ns <= 0 {
        return "—".into();
    }
    format!("{:.3} GB/s", bytes as f64 / ns as f64)
}

/// A name as nsys's GUI and `nsys stats` show it (without a CUDA API
/// version suffix).
pub fn display_name(name: &str) -> &str {
    crate::model::nsys::strip_version_suffix(name)
}

/// Longest text (in chars) a label shows; names can be megabytes long (a
/// 5 MB kernel name took seconds per frame to lay out). Copy keeps the full text.
pub const MAX_LABEL_CHARS: usize = 2000;

/// `s` cut to `max` chars ([`elide`]); borrowed (no copy) when it fits.
pub fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    elide(s, max)
}

/// Where a C++ function name's own name lies: after its return type and
/// namespaces, before its template arguments and parameters
/// (`void at::native::<unnamed>::vectorized_elementwise_kernel<4, …>(int, …)`
/// → `vectorized_elementwise_kernel`). The whole name when it has no such parts.
fn own_name(s: &str) -> (usize, usize) {
    let mut depth = 0i32;
    let mut start = 0;
    let mut i = 0;
    let bytes = s.as_bytes();
    while i < bytes.len() {
        let rest = s.get(i..).unwrap_or("");
        // `<unnamed>` and `(anonymous namespace)` are namespaces, not arguments.
        if let Some(skip) = ["<unnamed>", "(anonymous namespace)"]
            .iter()
            .find(|ns| rest.starts_with(**ns))
        {
            i += skip.len();
            continue;
        }
        match bytes[i] {
            b'<' | b'(' if depth == 0 && i > start => return (start, i),
            b'<' | b'(' | b'[' => depth += 1,
            b'>' | b')' | b']' => depth -= 1,
            b' ' if depth == 0 => start = i + 1,
            b':' if depth == 0 && rest.starts_with("::") => {
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    (start, s.len())
}

/// The one way a name too long for its place is cut: in the middle, keeping
/// what tells it apart. Kernels of one library share a long start
/// (`void at::native::<unnamed>::…`), so the start is what goes: the result
/// keeps the kernel's own name with what follows it and the name's end
/// (`…::vectorized_elementwise_kernel<4, at::…(int, T2, T3)`); a name without
/// that shape keeps its start and its end. At most `max` chars (at least 3);
/// borrowed when it fits. Show the whole name on hover where it was cut.
pub fn elide(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    // Bytes >= chars, so a short byte length needs no char walk; a long name
    // (megabytes) is never walked past what the cut keeps.
    if s.len() <= max || s.chars().nth(max).is_none() {
        return s.into();
    }
    let max = max.max(3);
    // The own name lies near the start: look for it in the first few KiB.
    let scan = s.floor_char_boundary(OWN_NAME_SCAN.min(s.len()));
    let (own_start, own_end) = own_name(&s[..scan]);
    let shaped = own_start > 0 || own_end < scan;
    let has_own = shaped && s[own_start..own_end].chars().nth(3).is_some();
    // From the own name, after "…" when the start goes (else from the start):
    // two thirds of the room (else half); the name's end the rest. The name
    // is longer than `max`, so both parts fit in it without overlapping
    // unless the own name sits near its end (then the head is cut shorter).
    let head_from = if has_own { own_start } else { 0 };
    let lead = usize::from(head_from > 0);
    let room = max - 1 - lead;
    let share = if has_own {
        (room * 2).div_ceil(3)
    } else {
        room.div_ceil(2)
    };
    let tail = room - share;
    let tail_from = match tail.checked_sub(1) {
        None => s.len(),
        Some(n) => s.char_indices().rev().nth(n).map_or(0, |(i, _)| i),
    }
    .max(head_from);
    let rest = &s[head_from..tail_from];
    let head_end = head_from
        + rest
            .char_indices()
            .nth(share)
            .map_or(rest.len(), |(i, _)| i);
    let mut out = String::with_capacity(max * 4);
    if lead == 1 {
        out.push('…');
    }
    out.push_str(&s[head_from..head_end]);
    out.push('…');
    out.push_str(&s[tail_from..]);
    out.into()
}

/// How far into a name [`elide`] looks for the kernel's own name.
const OWN_NAME_SCAN: usize = 4096;

/// A file's name without its folder, as tabs and panels title it (the whole path when it has
/// no file name).
pub fn file_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// A metric value: integers grouped, fractions with up to 2 decimals.
pub fn metric_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9e15 {
        grouped(v as i64)
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A time typed by a user: a number with a unit (`ns`, `us`/`µs`, `ms`, `s`),
/// nanoseconds without one; `,` and `_` group digits. Session time, as the
/// ruler shows it.
pub fn parse_time(text: &str) -> Result<f64, String> {
    let t: String = text
        .trim()
        .chars()
        .filter(|c| *c != ',' && *c != '_' && !c.is_whitespace())
        .collect();
    let units = [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ];
    let (number, scale) = units
        .iter()
        .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k)))
        .unwrap_or((t.as_str(), 1.0));
    match number.parse::<f64>() {
        // Whole nanoseconds: the session clock has no finer tick.
        Ok(v) if v.is_finite() => Ok((v * scale).round()),
        _ => Err(format!(
            "{text:?} is not a time (e.g. 524.8 ms, 3 s, 524800000)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_in_the_middle_keeping_their_own_name_and_end() {
        let a = "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4, \
                 void at::native::<unnamed>::normal_kernel(at::TensorIteratorBase &)>(long, T3)";
        let b = "void at::native::<unnamed>::vectorized_elementwise_kernel<4, \
                 at::native::FillFunctor<long>, std::array<char *, 1>>(int, T2, T3)";
        for max in [20, 40, 60, 90] {
            let (ea, eb) = (elide(a, max), elide(b, max));
            assert!(
                ea.chars().count() <= max && eb.chars().count() <= max,
                "{ea} {eb}"
            );
            assert_ne!(ea, eb, "cut names still differ at {max}");
            assert!(ea.starts_with("…distribution"), "{ea}");
            assert!(eb.starts_with("…vectorized"), "{eb}");
        }
        let e = elide(a, 90);
        assert!(
            e.contains("distribution_elementwise_grid_stride_kernel"),
            "{e}"
        );
        assert!(e.ends_with("(long, T3)"), "the end stays: {e}");
        // No own name: the start and the end.
        let plain = "x".repeat(30) + &"y".repeat(30);
        let e = elide(&plain, 21);
        assert!(
            e.starts_with("xxxxxxxxxx…") && e.ends_with("yyyyyyyyyy"),
            "{e}"
        );
        assert_eq!(elide("short", 10), "short");
        assert_eq!(elide("ünïcödé name", 5).chars().count(), 5);
        for max in 0..8 {
            assert!(elide(a, max).chars().count() <= max.max(3), "{max}");
        }
    }

    #[test]
    fn units_adapt() {
        assert_eq!(duration(999), "999 ns");
        assert_eq!(duration(1_500), "1.500 µs");
        assert_eq!(duration(2_000_000), "2.000 ms");
        assert_eq!(duration(3_000_000_000), "3.000 s");
        assert_eq!(bandwidth(1_000, 1_000), "1.000 GB/s");
    }

    #[test]
    fn exact_times_are_grouped_with_a_readable_form() {
        assert_eq!(grouped(523_124_266), "523,124,266");
        assert_eq!(grouped(-1_000), "-1,000");
        assert_eq!(grouped(999), "999");
        assert_eq!(exact(523_124_266), "523,124,266 ns (523.124 ms)");
        assert_eq!(exact(289_250), "289,250 ns (289.250 µs)");
        assert_eq!(exact(640), "640 ns");
    }

    #[test]
    fn ticks_follow_the_step_on_the_session_clock() {
        assert_eq!(tick(523_900_000.0, 100_000.0), "523.90 ms");
        assert_eq!(tick(524_000_000.0, 100_000.0), "524.00 ms");
        assert_eq!(tick(523_900_000.0, 50_000.0), "523.90 ms");
        assert_eq!(tick(523_950_000.0, 50_000.0), "523.95 ms");
        assert_eq!(tick(523_901_000.0, 1_000.0), "523.9010 ms");
        assert_eq!(tick(523_901_200.0, 200.0), "523.9012 ms");
        assert_eq!(tick(1_200_000_000.0, 100_000_000.0), "1.20 s");
        assert_eq!(tick(500_000_000.0, 200_000_000.0), "0.5 s");
        assert_eq!(tick(444_200_000.0, 200_000.0), "444.2 ms");
        assert_eq!(tick(2_000_000.0, 1_000_000.0), "2.0 ms");
        assert_eq!(tick(520_000_000.0, 10_000_000.0), "520 ms");
        assert_eq!(tick(1_500.0, 500.0), "1.5 µs");
        assert_eq!(tick(1_510.0, 10.0), "1.510 µs");
        assert_eq!(tick(5_051_200_000.0, 200_000.0), "5051.2 ms");
        assert_eq!(tick(15_051_200_000.0, 2_000_000.0), "15.051 s");
    }
}
