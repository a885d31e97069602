//! Numbers and durations as text: how `nsys stats` prints numbers (rounding,
//! separators, CSV quoting) and how Sightline says sizes and durations to
//! people. A leaf: the tables (`table.rs`) and every analysis print through it.

use crate::model::Ns;

/// SQLite `round(x, 1)` printed with one decimal: the exact binary value rounded,
/// ties away from zero. Rust's `{:.1}` is correctly rounded but ties to even, and
/// a tie at one decimal is a double of the form `k.25` / `k.75` (`x * 4` odd).
pub(crate) fn round1_text(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    // `+ 0.0` turns -0.0 into 0.0, as SQLite prints it.
    let x = x + 0.0;
    let quarters = x * 4.0;
    // Beyond 2^52 a double has no fraction, so no tie; below it `quarters` is exact.
    let is_tie =
        x.abs() < (1u64 << 52) as f64 && quarters.fract() == 0.0 && (quarters as i64) % 2 != 0;
    if !is_tie {
        return format!("{x:.1}");
    }
    // k.25 and k.75 print exactly with two decimals; away from zero gives k.3 / k.8.
    let mut text = format!("{x:.2}");
    let rounded = if text.ends_with("25") { '3' } else { '8' };
    text.truncate(text.len() - 2);
    text.push(rounded);
    text
}

/// The value `round1_text` prints, as a number (what SQLite's `round` returns),
/// for sorting by rounded values as nsys does.
pub(crate) fn round1_value(x: f64) -> f64 {
    round1_text(x).parse().unwrap_or(f64::NAN)
}

/// A number as Nsight Compute prints it: two decimals, none when whole
/// (`6.25`, `66.67`, `100`).
pub(crate) fn two_decimals_text(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    let x = x + 0.0;
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// Bytes as nsys's `:mem_B` columns print them: decimal megabytes, 3 decimals.
pub(crate) fn megabytes_text(bytes: f64) -> String {
    if !bytes.is_finite() {
        return String::new();
    }
    format!("{:.3}", bytes / 1e6 + 0.0)
}

/// A field, quoted only when it must be (Python's `csv.QUOTE_MINIMAL`):
/// when it holds the delimiter, a quote or a line break.
fn push_field(out: &mut String, field: &str, delimiter: char) {
    if field.contains([delimiter, '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

pub(crate) fn push_line<'a>(
    out: &mut String,
    fields: impl Iterator<Item = &'a str>,
    delimiter: char,
) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(delimiter);
        }
        push_field(out, field, delimiter);
    }
    out.push('\n');
}

/// One CSV line of `fields` (a header's names or a row's cells' text), as
/// `Table::to_csv` writes it: for writers that stream rows one at a time.
pub fn csv_line<'a>(fields: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    push_line(&mut out, fields, ',');
    out
}

/// Inserts thousands separators into the integer part of a plain number
/// (`-1234567.5` → `-1,234,567.5`).
pub fn with_separators(text: &str) -> String {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let (int_part, fraction) = match rest.find('.') {
        Some(dot) => rest.split_at(dot),
        None => (rest, ""),
    };
    let mut out = String::with_capacity(text.len() + int_part.len() / 3);
    out.push_str(sign);
    for (i, digit) in int_part.chars().enumerate() {
        if i > 0 && (int_part.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out.push_str(fraction);
    out
}

/// A size for people, outside nsys's tables (which print decimal MB, as
/// `Bytes (MB)`): binary units, labelled as such — `512 B`, `4.00 KiB`,
/// `16.00 MiB`, `1.50 GiB`. The details, the panels and the findings all
/// say sizes this one way.
pub fn binary_size(b: u64) -> String {
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

/// A duration for people: `812 ns`, `5.1 µs`, `1.23 ms`, `2.50 s`. The one
/// duration formatter of the analyses (findings, idle summaries, the viewer's
/// idle row), so they all say a time the same way.
pub fn human_ns(ns: Ns) -> String {
    duration_places(ns, [1, 2, 2])
}

/// A duration in its largest unit under 1000 (ns, µs, ms, s), with `places` decimals for µs,
/// ms and s: the one way durations are worded (the window says them to 3 places, findings'
/// messages to 1–2).
pub fn duration_places(ns: Ns, [us, ms, s]: [usize; 3]) -> String {
    let a = ns.unsigned_abs() as f64;
    let sign = if ns < 0 { "-" } else { "" };
    if a < 1e3 {
        format!("{ns} ns")
    } else if a < 1e6 {
        format!("{sign}{:.us$} µs", a / 1e3)
    } else if a < 1e9 {
        format!("{sign}{:.ms$} ms", a / 1e6)
    } else {
        format!("{sign}{:.s$} s", a / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_exact_ties_away_from_zero() {
        assert_eq!(round1_text(21708.25), "21708.3");
        assert_eq!(round1_text(493.75), "493.8");
        assert_eq!(round1_text(-2.25), "-2.3");
        assert_eq!(round1_text(0.05), "0.1"); // 0.05 is slightly above .05 in binary
        assert_eq!(round1_text(0.15), "0.1"); // and 0.15 slightly below
        assert_eq!(round1_text(452273.0), "452273.0");
        assert_eq!(round1_text(-0.0), "0.0");
        assert_eq!(round1_text(1e300), format!("{:.1}", 1e300));
        assert_eq!(round1_text(f64::NAN), "");
        assert_eq!(round1_value(2.25), 2.3);
    }

    #[test]
    fn two_decimals_as_nsight_compute_prints_them() {
        // Theoretical occupancies as ncu prints them (tests/fixtures/ncu/*.csv print 100, 50).
        assert_eq!(two_decimals_text(100.0), "100");
        assert_eq!(two_decimals_text(50.0), "50");
        assert_eq!(two_decimals_text(6.25), "6.25");
        assert_eq!(two_decimals_text(200.0 / 3.0), "66.67");
        assert_eq!(two_decimals_text(48.6), "48.60");
        assert_eq!(two_decimals_text(0.000237), "0.00");
        assert_eq!(two_decimals_text(f64::NAN), "");
    }

    #[test]
    fn megabytes_are_decimal() {
        assert_eq!(megabytes_text(4194304.0), "4.194");
        assert_eq!(megabytes_text(0.0), "0.000");
        assert_eq!(megabytes_text(25356.0), "0.025");
    }

    #[test]
    fn separators_and_quoting() {
        assert_eq!(with_separators("1234567.5"), "1,234,567.5");
        assert_eq!(with_separators("-123"), "-123");
        assert_eq!(with_separators("1234"), "1,234");
        let mut out = String::new();
        push_line(&mut out, ["a,b", "say \"hi\"", "plain"].into_iter(), ',');
        assert_eq!(out, "\"a,b\",\"say \"\"hi\"\"\",plain\n");
        // Tab-separated: commas need no quotes, tabs do.
        let mut out = String::new();
        push_line(&mut out, ["a,b", "c\td", "e"].into_iter(), '\t');
        assert_eq!(out, "a,b\t\"c\td\"\te\n");
    }
}
