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
    /// Opened as a file another connection may be writing (see
    /// [`Report::open_live`]).
    pub live: bool,
    tables: HashMap<String, HashSet<String>>,
    /// Tables with a column of their own that is their rowid (an `INTEGER
    /// PRIMARY KEY`): rows may be inserted with any rowid.
    rowid_aliases: HashSet<String>,
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
        Report::with(path, open_read_only(path)?, false)
    }

    /// Opens `path` while another connection may be writing it (a capture's
    /// working file, in WAL mode; see [`open_live`]) and holds one read
    /// transaction until dropped: everything read through `conn` is of one
    /// committed state, whatever is committed meanwhile.
    pub fn open_live(path: &Path) -> Result<Report, LoadError> {
        let conn = open_live(path)?;
        conn.execute_batch("BEGIN")
            .map_err(|e| LoadError::from_sqlite(path, &e))?;
        // The transaction's state is fixed by its first read: the schema's.
        Report::with(path, conn, true)
    }

    /// The report (not a live one) on a connection of its own, its schema
    /// the one already read: for work of the load on another thread.
    pub(super) fn reopen(&self, path: &Path) -> Result<Report, LoadError> {
        Ok(Report {
            conn: open_read_only(path)?,
            live: false,
            tables: self.tables.clone(),
            rowid_aliases: self.rowid_aliases.clone(),
        })
    }

    fn with(path: &Path, conn: Connection, live: bool) -> Result<Report, LoadError> {
        let mut report = Report {
            conn,
            live,
            tables: HashMap::new(),
            rowid_aliases: HashSet::new(),
        };
        let views = report
            .read_schema()
            .map_err(|e| LoadError::from_sqlite(path, &e))?;
        if let Some(view) = views.iter().find(|v| is_nsys_table_name(v)) {
            return Err(LoadError::new(
                path,
                Problem::NotNsysReport(format!(
                    "{view} is a view, not a table (nsys writes its events as tables; a view \
                     may compute rows without end, so it is not read)"
                )),
            ));
        }
        Ok(report)
    }

    /// Reads the tables' columns. Views are not tables to the loader (it
    /// reads tables only: a view's rows are computed, possibly without end,
    /// as a recursive one's); their names are returned.
    fn read_schema(&mut self) -> rusqlite::Result<Vec<String>> {
        let mut views = Vec::new();
        let mut names = Vec::new();
        for entry in self
            .conn
            .prepare("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')")?
            .query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })?
        {
            let (name, kind) = entry?;
            if kind == "view" {
                views.push(name);
            } else {
                names.push(name);
            }
        }
        for name in names {
            // (name, declared type, place in the primary key)
            let columns: Vec<(String, String, i64)> = self
                .conn
                .prepare(&format!(
                    "PRAGMA table_info(\"{}\")",
                    name.replace('"', "\"\"")
                ))?
                .query_map([], |row| Ok((row.get(1)?, row.get(2)?, row.get(5)?)))?
                .collect::<Result<_, _>>()?;
            let keys: Vec<&(String, String, i64)> = columns.iter().filter(|c| c.2 > 0).collect();
            if let [(_, declared, _)] = keys[..]
                && declared.eq_ignore_ascii_case("INTEGER")
            {
                self.rowid_aliases.insert(name.clone());
            }
            self.tables
                .insert(name, columns.into_iter().map(|c| c.0).collect());
        }
        Ok(views)
    }

    /// Whether `table` has a column that is its rowid (an `INTEGER PRIMARY
    /// KEY`), so that its rows need not be numbered in the order they came.
    pub fn has_rowid_alias(&self, table: &str) -> bool {
        self.rowid_aliases.contains(table)
    }

    pub fn has_table(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    pub fn has_column(&self, table: &str, column: &str) -> bool {
        self.tables.get(table).is_some_and(|c| c.contains(column))
    }

    /// Builds `SELECT cols FROM table [tail]` from what the table has.
    /// Returns `None` when the table is missing (quietly: a report lacks the
    /// tables of what it did not trace) or lacks a required column (with a
    /// warning pushed); missing optional columns are warned about and
    /// defaulted.
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

    /// A first guess at the times a table of events spans, from its first
    /// and last rows by rowid (nsys writes rows about in time order): a few
    /// reads of the b-tree's ends, where the exact bounds need every row.
    /// None when the table is absent, empty or odd.
    pub fn time_hint(&self, table: &str) -> Option<(i64, i64)> {
        const ROWS: u32 = 1024;
        if !self.has_column(table, "start") {
            return None;
        }
        let end = if self.has_column(table, "end") {
            "coalesce(\"end\", start)"
        } else {
            "start"
        };
        let sql = format!(
            "SELECT min(s), max(e) FROM ( \
               SELECT * FROM (SELECT start AS s, {end} AS e FROM \"{table}\" ORDER BY rowid LIMIT {ROWS}) \
               UNION ALL \
               SELECT * FROM (SELECT start AS s, {end} AS e FROM \"{table}\" ORDER BY rowid DESC LIMIT {ROWS}))"
        );
        self.conn
            .query_row(&sql, [], |r| {
                Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?))
            })
            .ok()
            .and_then(|(lo, hi)| lo.zip(hi))
            .filter(|(lo, hi)| lo <= hi)
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

/// Whether nsys names a table so: a view of that name stands where the
/// loader expects the table (events, strings, threads, the GPU's
/// description). Other views (a user's own) are left alone, unread.
fn is_nsys_table_name(name: &str) -> bool {
    const PREFIXES: [&str; 6] = ["CUPTI_", "NVTX_", "OSRT_", "TARGET_INFO_", "CUDA_", "GPU_"];
    PREFIXES.iter().any(|p| name.starts_with(p))
        || matches!(name, "StringIds" | "ThreadNames" | "META_DATA_EXPORT")
}

/// Turns off SQLite's count of the memory it holds (`SQLITE_CONFIG_MEMSTATUS`), for which every
/// allocation of every connection takes one process-wide mutex: reports read on many threads at
/// once (a job's ranks, a report's big tables in pieces, its samples beside) queue on it, and
/// Sightline never asks SQLite for that count. SQLite takes its configuration only before its
/// first connection, so each binary calls this first thing in `main`, before any thread;
/// later it changes nothing (SQLite answers `SQLITE_MISUSE`). `SIGHTLINE_SQLITE_MEMSTATUS=1`
/// keeps SQLite's default, to measure the difference.
pub fn configure_sqlite() {
    if std::env::var_os("SIGHTLINE_SQLITE_MEMSTATUS").is_some() {
        return;
    }
    // SAFETY: a configuration call with an int argument, as SQLITE_CONFIG_MEMSTATUS takes; made
    // before any connection or thread (see above), else refused by SQLite without effect.
    unsafe {
        rusqlite::ffi::sqlite3_config(
            rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS,
            0 as std::os::raw::c_int,
        );
    }
}

/// Opens `path` read-only and immutable: SQLite writes no journal, no WAL and
/// takes no lock, so the report is never modified, even on a read-only disk.
pub fn open_read_only(path: &Path) -> Result<Connection, LoadError> {
    open_uri(path, &read_only_uri(path))
}

/// Opens `path` read-only but not immutable, for a file another connection
/// writes (a capture's working file): SQLite then takes the usual shared
/// locks and reads a WAL's committed frames. It waits a moment for a lock a
/// writer holds briefly (a WAL being reset) rather than failing.
pub fn open_live(path: &Path) -> Result<Connection, LoadError> {
    let conn = open_uri(
        path,
        &format!("file:{}?mode=ro", uri_escape(&absolute(path))),
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(2))
        .map_err(|e| LoadError::from_sqlite(path, &e))?;
    Ok(conn)
}

/// Opens `path` (checked first) by the read-only `uri` naming it.
fn open_uri(path: &Path, uri: &str) -> Result<Connection, LoadError> {
    check_file(path)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(uri, flags).map_err(|e| {
        // SQLite's Unix files take paths up to 512 bytes (its MAX_PATHNAME):
        // a longer one fails as "unable to open database file".
        const SQLITE_MAX_PATH: usize = 512;
        let length = absolute(path).len();
        if length > SQLITE_MAX_PATH {
            LoadError::new(
                path,
                Problem::Unreadable(format!(
                    "its path is too long for SQLite ({length} bytes, at most \
                     {SQLITE_MAX_PATH}): move the report to a shorter path"
                )),
            )
        } else {
            LoadError::from_sqlite(path, &e)
        }
    })
}

/// The `file:` URI that opens `path` read-only and immutable (also for
/// `ATTACH`, which takes a URI on a connection opened with URIs enabled).
pub fn read_only_uri(path: &Path) -> String {
    format!("file:{}?mode=ro&immutable=1", uri_escape(&absolute(path)))
}

/// Turns the usual file-level mistakes into clear messages before SQLite sees
/// them. The file type is looked at before the file is opened: opening a FIFO
/// blocks until a writer comes, and a device such as `/dev/zero` never ends.
pub(crate) fn check_file(path: &Path) -> Result<(), LoadError> {
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
    if !meta.is_file() {
        let kind = crate::files::file_kind(&meta.file_type());
        return Err(LoadError::new(path, Problem::NotRegular(kind)));
    }
    let mut header = [0u8; 100];
    let mut file = std::fs::File::open(path)
        .map_err(|e| LoadError::new(path, Problem::Unreadable(e.to_string())))?;
    let read = read_up_to(&mut file, &mut header)
        .map_err(|e| LoadError::new(path, Problem::Unreadable(e.to_string())))?;
    if meta.len() == 0 {
        // /proc and /sys files say size 0 and still have contents.
        let problem = if read > 0 {
            Problem::PseudoFile
        } else {
            Problem::Empty
        };
        return Err(LoadError::new(path, problem));
    }
    if read < 16 || &header[..16] != b"SQLite format 3\0" {
        return Err(LoadError::new(path, Problem::NotSqlite));
    }
    if read == header.len()
        && let Some(why) = bad_page_size(&header)
    {
        return Err(LoadError::new(path, Problem::Corrupt(why)));
    }
    Ok(())
}

/// Reads until `buf` is full or the file ends; the bytes read.
fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// What is wrong with the page size in an SQLite header (bytes 16-17, big
/// endian: a power of two from 512 to 32768, or 1 for 65536), if anything.
/// SQLite itself only says "file is not a database" for a damaged one.
fn bad_page_size(header: &[u8; 100]) -> Option<String> {
    let size = u16::from_be_bytes([header[16], header[17]]) as u32;
    let valid = size == 1 || ((512..=32768).contains(&size) && size.is_power_of_two());
    (!valid).then(|| {
        format!(
            "the header's page size ({size}) is not one SQLite writes: the file's first page \
             is damaged"
        )
    })
}

/// The path as a `file:` URI path: absolute, every byte of it kept (a name
/// that is not UTF-8 is escaped byte by byte, not replaced).
fn absolute(path: &Path) -> Vec<u8> {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        path.to_string_lossy().into_owned().into_bytes()
    }
}

/// Escapes a path for an SQLite `file:` URI (`?`, `#`, `%` and spaces would
/// otherwise change its meaning).
fn uri_escape(path: &[u8]) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path {
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
        assert_eq!(uri_escape(b"/a/b_c-1.sqlite"), "/a/b_c-1.sqlite");
        assert_eq!(uri_escape(b"/a b/c?d#e%"), "/a%20b/c%3Fd%23e%25");
        assert_eq!(uri_escape(b"/r\xff.sqlite"), "/r%FF.sqlite");
    }
}
