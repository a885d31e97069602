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
