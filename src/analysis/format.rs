//! Number and table formatting, exactly as `nsys stats` prints.

use super::stats::{Cell, Table};

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

fn push_line<'a>(out: &mut String, fields: impl Iterator<Item = &'a str>, delimiter: char) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(delimiter);
        }
        push_field(out, field, delimiter);
    }
    out.push('\n');
}

/// The one table emitter for delimited text: the CLI's CSV files and stdout,
/// the viewer's Save CSV (`,`) and Copy (tab, which spreadsheets paste into
/// cells). Numbers as nsys prints them in CSV: no separators, no exponent.
pub(crate) fn to_delimited(table: &Table, delimiter: char) -> String {
    // nsys writes the header together with the first row: no rows, no output.
    if table.rows.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    push_line(
        &mut out,
        table.columns.iter().map(String::as_str),
        delimiter,
    );
    for row in &table.rows {
        let texts: Vec<String> = row.iter().map(Cell::to_string).collect();
        push_line(&mut out, texts.iter().map(String::as_str), delimiter);
    }
    out
}

/// One CSV line of `fields` (a header's names or a row's cells' text), as
/// [`to_csv`] writes it: for writers that stream rows one at a time.
pub fn csv_line<'a>(fields: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    push_line(&mut out, fields, ',');
    out
}

pub(crate) fn to_csv(table: &Table) -> String {
    to_delimited(table, ',')
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

/// A cell as `nsys stats` prints it in its aligned tables: numbers with
/// thousands separators (`1,234,567.5`), text as it is.
pub(crate) fn grouped_text(cell: &Cell) -> String {
    match cell {
        Cell::Text(_) | Cell::Empty => cell.to_string(),
        _ => with_separators(&cell.to_string()),
    }
}

/// An aligned table like `nsys stats`'s default (column) output: numbers right
/// aligned with thousands separators, text left aligned, a dashed rule under
/// the header.
pub(crate) fn to_text(table: &Table) -> String {
    let mut layout = TextLayout::new(&table.columns);
    let cells: Vec<Vec<String>> = table.rows.iter().map(|row| layout.measure(row)).collect();
    let mut out = layout.header();
    for row in &cells {
        out.push_str(&layout.line(row));
    }
    out
}

/// The widths and alignments of [`to_text`]'s columns, measured row by row:
/// a trace report's rows are measured as they are made, then made again to
/// be written, never all held at once.
pub(crate) struct TextLayout {
    columns: Vec<String>,
    widths: Vec<usize>,
    /// Per column: a text cell seen (left aligned), a number seen.
    has_text: Vec<bool>,
    has_number: Vec<bool>,
}

impl TextLayout {
    pub(crate) fn new(columns: &[String]) -> TextLayout {
        TextLayout {
            columns: columns.to_vec(),
            widths: columns.iter().map(|name| name.chars().count()).collect(),
            has_text: vec![false; columns.len()],
            has_number: vec![false; columns.len()],
        }
    }

    /// Widens the columns to hold `row`; returns its cells as printed.
    pub(crate) fn measure(&mut self, row: &[Cell]) -> Vec<String> {
        let texts: Vec<String> = row.iter().map(grouped_text).collect();
        for (c, (cell, text)) in row.iter().zip(&texts).enumerate().take(self.widths.len()) {
            self.widths[c] = self.widths[c].max(text.chars().count());
            self.has_text[c] |= matches!(cell, Cell::Text(_));
            self.has_number[c] |= cell.as_f64().is_some();
        }
        texts
    }

    /// Numbers right aligned (and their header), as
    /// [`Table::is_numeric_column`] says.
    fn numeric(&self, c: usize) -> bool {
        !self.has_text[c] && self.has_number[c]
    }

    /// The column names and the dashed rule under them.
    pub(crate) fn header(&self) -> String {
        let rules: Vec<String> = self.widths.iter().map(|&w| "-".repeat(w)).collect();
        let mut out = self.line(&self.columns);
        out.push_str(&self.line(&rules));
        out
    }

    /// The line of a row measured before.
    pub(crate) fn row_line(&self, row: &[Cell]) -> String {
        self.line(&row.iter().map(grouped_text).collect::<Vec<_>>())
    }

    /// One line of the table, ending in a newline.
    pub(crate) fn line(&self, fields: &[String]) -> String {
        let mut text = String::new();
        for (c, field) in fields.iter().enumerate().take(self.widths.len()) {
            let pad = self.widths[c].saturating_sub(field.chars().count());
            text.push(' ');
            let last = c + 1 == self.widths.len();
            if self.numeric(c) {
                text.extend(std::iter::repeat_n(' ', pad));
                text.push_str(field);
            } else {
                text.push_str(field);
                if !last {
                    text.extend(std::iter::repeat_n(' ', pad));
                }
            }
            if !last {
                text.push(' ');
            }
        }
        let mut line = text.trim_end().to_string();
        line.push('\n');
        line
    }
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
        // Metric values print raw (the shortest text that reads back the same).
        assert_eq!(
            Cell::Float(37.45454545454545).to_string(),
            "37.45454545454545"
        );
        assert_eq!(Cell::Float(-0.0).to_string(), "0");
        assert_eq!(Cell::TwoDecimals(6.25).to_string(), "6.25");
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
