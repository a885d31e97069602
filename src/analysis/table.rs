//! A report's table: its cells ([`Cell`], each printed exactly as nsys prints
//! it) and rows ([`Table`]), and the table's renderings (CSV, TSV, aligned
//! text). The vocabulary every report, rule and finding list is written in;
//! the numbers' own text comes from `format.rs`.

use super::format::{megabytes_text, push_line, round1_text, two_decimals_text, with_separators};

/// One cell of a report, printed exactly as nsys prints it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// SQL NULL: prints nothing.
    Empty,
    Int(i64),
    Text(String),
    /// A value nsys rounds with SQLite `round(x, 1)`: prints one decimal, exact
    /// binary ties away from zero (`21708.25` → `21708.3`).
    Round1(f64),
    /// A byte quantity in a `(MB)` column: prints bytes / 1e6 with 3 decimals.
    Megabytes(f64),
    /// A value Nsight Compute prints with two decimals (`6.25`, `66.67`), and
    /// without any when it is whole (`100`), as ncu prints occupancy.
    TwoDecimals(f64),
    /// A measured value (a hardware metric), printed raw: the shortest text
    /// that reads back as the same double.
    Float(f64),
}

impl Cell {
    /// The cell as `nsys stats` prints it in its aligned tables (and the
    /// viewer in its grids): numbers with thousands separators, text as is.
    pub fn grouped(&self) -> String {
        grouped_text(self)
    }

    /// The numeric value, for sorting (text and empty cells have none).
    /// `Round1` gives the unrounded value: it sorts the same, and costs nothing.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Int(v) => Some(*v as f64),
            Cell::Round1(v) => Some(*v),
            Cell::Megabytes(bytes) => Some(bytes / 1e6),
            Cell::Float(v) | Cell::TwoDecimals(v) => Some(*v),
            Cell::Empty | Cell::Text(_) => None,
        }
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Empty => Ok(()),
            Cell::Int(v) => write!(f, "{v}"),
            Cell::Text(t) => f.write_str(t),
            Cell::Round1(v) => f.write_str(&round1_text(*v)),
            Cell::Megabytes(bytes) => f.write_str(&megabytes_text(*bytes)),
            Cell::TwoDecimals(v) => f.write_str(&two_decimals_text(*v)),
            Cell::Float(v) if v.is_finite() => write!(f, "{}", v + 0.0),
            Cell::Float(_) => Ok(()),
        }
    }
}

/// A computed report: column names exactly as nsys's CSV header, rows in nsys's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// The table as nsys writes it with `--format csv`: a header line, then one
    /// line per row, fields quoted only when needed, LF line ends. A table with no
    /// rows is the empty string, as nsys writes an empty file then.
    pub fn to_csv(&self) -> String {
        to_delimited(self, ',')
    }

    /// The same lines as [`Table::to_csv`], tab-separated: what a
    /// spreadsheet pastes into cells (fields with a tab, a quote or a line
    /// break are quoted as in CSV).
    pub fn to_tsv(&self) -> String {
        to_delimited(self, '\t')
    }

    /// An aligned table for people, like `nsys stats`'s default output.
    pub fn to_text(&self) -> String {
        to_text(self)
    }

    /// Whether column `c` holds numbers (and maybe empty cells), to be
    /// right-aligned so digits line up.
    pub fn is_numeric_column(&self, c: usize) -> bool {
        let cells = || self.rows.iter().filter_map(|row| row.get(c));
        cells().all(|v| !matches!(v, Cell::Text(_))) && cells().any(|v| v.as_f64().is_some())
    }
}

/// The one table emitter for delimited text: the CLI's CSV files and stdout,
/// the viewer's Save CSV (`,`) and Copy (tab, which spreadsheets paste into
/// cells). Numbers as nsys prints them in CSV: no separators, no exponent.
fn to_delimited(table: &Table, delimiter: char) -> String {
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

/// A cell as `nsys stats` prints it in its aligned tables: numbers with
/// thousands separators (`1,234,567.5`), text as it is.
fn grouped_text(cell: &Cell) -> String {
    match cell {
        Cell::Text(_) | Cell::Empty => cell.to_string(),
        _ => with_separators(&cell.to_string()),
    }
}

/// An aligned table like `nsys stats`'s default (column) output: numbers right
/// aligned with thousands separators, text left aligned, a dashed rule under
/// the header.
fn to_text(table: &Table) -> String {
    let cells: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|row| row.iter().map(grouped_text).collect())
        .collect();
    let numeric: Vec<bool> = (0..table.columns.len())
        .map(|c| table.is_numeric_column(c))
        .collect();
    let widths: Vec<usize> = table
        .columns
        .iter()
        .enumerate()
        .map(|(c, name)| {
            cells
                .iter()
                .filter_map(|row| row.get(c))
                .map(|s| s.chars().count())
                .chain([name.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let mut line = |fields: &mut dyn Iterator<Item = (usize, &str)>| {
        let mut text = String::new();
        for (c, field) in fields {
            let pad = widths[c].saturating_sub(field.chars().count());
            text.push(' ');
            let last = c + 1 == widths.len();
            if numeric[c] {
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
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut table.columns.iter().map(String::as_str).enumerate());
    let rules: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(&mut rules.iter().map(String::as_str).enumerate());
    for row in &cells {
        line(&mut row.iter().map(String::as_str).enumerate());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_print_as_nsight_prints_them() {
        // Metric values print raw (the shortest text that reads back the same).
        assert_eq!(
            Cell::Float(37.45454545454545).to_string(),
            "37.45454545454545"
        );
        assert_eq!(Cell::Float(-0.0).to_string(), "0");
        assert_eq!(Cell::TwoDecimals(6.25).to_string(), "6.25");
    }
}
