//! Opening a report read-only and asking it what it contains.
//!
//! Reports come from many nsys versions: tables are absent when a trace was
//! off, columns were added over the years. Every query is built from what the
//! file says it has, and what is missing becomes a warning, never an error.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::error::{LoadError, Problem};

/// An open report and its schema.
pub struct Report {
    pub conn: Connection,
    tables: HashMap<String, HashSet<String>>,
}

/// A column a reader wants, and what to use when the report lacks it.
#[derive(Clone, Copy)]
pub enum Col<'a> {
    /// The reader cannot work without it: the whole table is skipped.
    Required(&'a str),
    /// Read it if present, else this SQL expression (usually `NULL`).
    Optional(&'a str, &'a str),
}

impl Report {
    /// Opens `path` (see [`open_read_only`]) and reads its schema.
    pub fn open(path: &Path) -> Result<Report, LoadError> {
        let conn = open_read_only(path)?;
        let mut report = Report {
            conn,
            tables: HashMap::new(),
        };
        report
            .read_schema()
            .map_err(|e| LoadError::from_sqlite(path, &e))?;
        Ok(report)
    }

    fn read_schema(&mut self) -> rusqlite::Result<()> {
        let names: Vec<String> = self
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")?
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        for name in names {
            let columns: HashSet<String> = self
                .conn
                .prepare(&format!(
                    "PRAGMA table_info(\"{}\")",
                    name.replace('"', "\"\"")
                ))?
                .query_map([], |row| row.get::<_, String>(1))?
                .collect::<Result<_, _>>()?;
            self.tables.insert(name, columns);
        }
        Ok(())
    }

    pub fn has_table(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    pub fn has_column(&self, table: &str, column: &str) -> bool {
        self.tables.get(table).is_some_and(|c| c.contains(column))
    }

    /// Builds `SELECT cols FROM table [tail]` from what the table has.
    /// Returns `None` (with a warning pushed) when the table or a required column
    /// is missing; missing optional columns are warned about and defaulted.
    pub fn select(
        &self,
        table: &str,
        cols: &[Col],
        tail: &str,
        warnings: &mut Vec<String>,
    ) -> Option<String> {
        if !self.has_table(table) {
            return None;
        }
        let mut exprs = Vec::with_capacity(cols.len());
        let mut defaulted = Vec::new();
        for col in cols {
            match *col {
                Col::Required(name) => {
                    if !self.has_column(table, name) {
                        warnings.push(format!(
                            "{table} has no column `{name}`: its events are not loaded"
                        ));
                        return None;
                    }
                    exprs.push(format!("\"{name}\""));
                }
                Col::Optional(name, default) => {
                    if self.has_column(table, name) {
                        exprs.push(format!("\"{name}\""));
                    } else {
                        defaulted.push(name);
                        exprs.push(default.to_string());
                    }
                }
            }
        }
        if !defaulted.is_empty() {
            warnings.push(format!(
                "{table} lacks column(s) {} (older nsys?): shown as unknown",
                defaulted.join(", ")
            ));
        }
        Some(format!(
            "SELECT {} FROM \"{table}\" {tail}",
            exprs.join(", ")
        ))
    }

    /// About how many rows a table has, for progress: the rowid span, read
    /// from the b-tree's ends instead of counting every row.
    pub fn estimated_rows(&self, table: &str) -> u64 {
        if !self.has_table(table) {
            return 0;
        }
        self.conn
            .query_row(
                &format!(
                    "SELECT coalesce((SELECT max(rowid) FROM \"{table}\") \
                     - (SELECT min(rowid) FROM \"{table}\") + 1, 0)"
                ),
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_or(0, |n| n.max(0) as u64)
    }
}

/// Opens `path` read-only and immutable: SQLite writes no journal, no WAL and
/// takes no lock, so the report is never modified, even on a read-only disk.
pub fn open_read_only(path: &Path) -> Result<Connection, LoadError> {
    check_file(path)?;
    let uri = read_only_uri(path);
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(uri, flags).map_err(|e| LoadError::from_sqlite(path, &e))
}

/// The `file:` URI that opens `path` read-only and immutable (also for
/// `ATTACH`, which takes a URI on a connection opened with URIs enabled).
pub fn read_only_uri(path: &Path) -> String {
    format!("file:{}?mode=ro&immutable=1", uri_escape(&absolute(path)))
}

/// Turns the usual file-level mistakes into clear messages before SQLite sees them.
fn check_file(path: &Path) -> Result<(), LoadError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        let problem = if e.kind() == std::io::ErrorKind::NotFound {
            Problem::NotFound
        } else {
            Problem::Unreadable(e.to_string())
        };
        LoadError::new(path, problem)
    })?;
    if meta.is_dir() {
        return Err(LoadError::new(path, Problem::IsDirectory));
    }
    if meta.len() == 0 {
        return Err(LoadError::new(path, Problem::Empty));
    }
    let mut header = [0u8; 16];
    let mut file = std::fs::File::open(path)
        .map_err(|e| LoadError::new(path, Problem::Unreadable(e.to_string())))?;
    let read = file
        .read(&mut header)
        .map_err(|e| LoadError::new(path, Problem::Unreadable(e.to_string())))?;
    if read < 16 || &header != b"SQLite format 3\0" {
        return Err(LoadError::new(path, Problem::NotSqlite));
    }
    Ok(())
}

fn absolute(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// Escapes a path for an SQLite `file:` URI (`?`, `#`, `%` and spaces would
/// otherwise change its meaning).
fn uri_escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_escape_keeps_plain_paths_and_escapes_the_rest() {
        assert_eq!(uri_escape("/a/b_c-1.sqlite"), "/a/b_c-1.sqlite");
        assert_eq!(uri_escape("/a b/c?d#e%"), "/a%20b/c%3Fd%23e%25");
    }
}
