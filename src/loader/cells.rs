//! Reading integer cells, whatever the report put in them.
//!
//! Two kinds of rows implement [`Cells`]: rusqlite's `Row` (small tables), and
//! [`RawRows`], a thin cursor over SQLite's C API for the big tables. The big
//! tables are read at the speed of `sqlite3_step`: rusqlite's checked accessors
//! (bounds check, type dispatch, error plumbing) cost as much again as SQLite's
//! own decoding on a 27-column kernel row, and there are millions of rows.

use std::ffi::{CStr, CString, c_int};
use std::ptr;

use rusqlite::ffi;
use rusqlite::types::ValueRef;

/// Integer access to the cells of one row.
pub(super) trait Cells {
    /// The cell as an integer: NULL and non-numeric text read as 0, reals are
    /// truncated (saturating). Odd values never stop a load.
    fn int(&self, i: usize) -> i64;
    /// `None` when the cell is NULL.
    fn opt_int(&self, i: usize) -> Option<i64>;
    /// The cell as a time: only an integer is one (or a real that is a
    /// whole number in the clock's range). Text, a blob, a fraction, an
    /// infinity or a real past i64 would be a made-up time (0, the number a
    /// prefix spells, a clamped value): [`Time::Invalid`], for the caller
    /// to drop and count.
    fn time(&self, i: usize) -> Time;
}

/// What a time cell holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Time {
    Null,
    At(i64),
    Invalid,
}

impl Time {
    /// A real read as a time: whole and within i64 (2^63 itself is not).
    fn of_real(v: f64) -> Time {
        const LIMIT: f64 = 9_223_372_036_854_775_808.0;
        if v.is_finite() && v.fract() == 0.0 && (-LIMIT..LIMIT).contains(&v) {
            Time::At(v as i64)
        } else {
            Time::Invalid
        }
    }
}

impl Cells for rusqlite::Row<'_> {
    fn int(&self, i: usize) -> i64 {
        match self.get_ref(i) {
            Ok(ValueRef::Integer(v)) => v,
            Ok(ValueRef::Real(v)) => v as i64,
            Ok(ValueRef::Text(t)) => std::str::from_utf8(t)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0),
            _ => 0,
        }
    }

    fn opt_int(&self, i: usize) -> Option<i64> {
        match self.get_ref(i) {
            Ok(ValueRef::Null) | Err(_) => None,
            _ => Some(self.int(i)),
        }
    }

    fn time(&self, i: usize) -> Time {
        match self.get_ref(i) {
            Ok(ValueRef::Integer(v)) => Time::At(v),
            Ok(ValueRef::Real(v)) => Time::of_real(v),
            Ok(ValueRef::Null) | Err(_) => Time::Null,
            Ok(ValueRef::Text(_) | ValueRef::Blob(_)) => Time::Invalid,
        }
    }
}

/// A prepared statement stepped through SQLite's C API. Only integer cells
/// are read, only at column indexes below the statement's column count.
pub(super) struct RawRows {
    stmt: *mut ffi::sqlite3_stmt,
    db: *mut ffi::sqlite3,
    columns: usize,
}

impl RawRows {
    /// Prepares `sql` on `conn` and binds the integer `params` (?1, ?2, ...).
    pub(super) fn new(
        conn: &rusqlite::Connection,
        sql: &str,
        params: &[i64],
    ) -> rusqlite::Result<Self> {
        let text = CString::new(sql).map_err(|_| rusqlite::Error::InvalidQuery)?;
        // SAFETY: `conn` outlives the statement (the caller keeps it alive while
        // it reads; `RawRows` is dropped first), and prepare writes `stmt` only.
        let db = unsafe { conn.handle() };
        let mut stmt = ptr::null_mut();
        // SAFETY: `db` is the open connection's handle (see above), `text` a
        // NUL-terminated string that outlives the call (length -1: up to its
        // NUL), and `stmt` a valid place for the statement pointer.
        let rc =
            unsafe { ffi::sqlite3_prepare_v2(db, text.as_ptr(), -1, &mut stmt, ptr::null_mut()) };
        let mut rows = RawRows {
            stmt,
            db,
            columns: 0,
        };
        rows.check(rc)?;
        if stmt.is_null() {
            return Err(rusqlite::Error::InvalidQuery);
        }
        // SAFETY: `stmt` is a valid prepared statement from here on.
        rows.columns = unsafe { ffi::sqlite3_column_count(stmt) }.max(0) as usize;
        for (i, &value) in params.iter().enumerate() {
            // SAFETY: `stmt` is a valid prepared statement, not yet stepped;
            // an index past its parameters is an SQLite error, not UB.
            let rc = unsafe { ffi::sqlite3_bind_int64(stmt, i as c_int + 1, value) };
            rows.check(rc)?;
        }
        Ok(rows)
    }

    /// Steps to the next row: `Ok(true)` when there is one.
    pub(super) fn step(&mut self) -> rusqlite::Result<bool> {
        // SAFETY: a valid statement, stepped on one thread.
        match unsafe { ffi::sqlite3_step(self.stmt) } {
            ffi::SQLITE_ROW => Ok(true),
            ffi::SQLITE_DONE => Ok(false),
            rc => self.check(rc).map(|_| false),
        }
    }

    fn check(&self, rc: c_int) -> rusqlite::Result<()> {
        if rc == ffi::SQLITE_OK {
            return Ok(());
        }
        // SAFETY: `db` is the open connection; the message is copied at once.
        let message = unsafe {
            let m = ffi::sqlite3_errmsg(self.db);
            (!m.is_null()).then(|| CStr::from_ptr(m).to_string_lossy().into_owned())
        };
        Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), message))
    }
}

impl Cells for RawRows {
    fn int(&self, i: usize) -> i64 {
        if i >= self.columns {
            return 0;
        }
        // SAFETY: the statement is on a row (callers read after `step` returned
        // true) and `i` is a valid column. SQLite converts text and reals itself
        // (non-numeric text → 0, reals truncated and clamped).
        unsafe { ffi::sqlite3_column_int64(self.stmt, i as c_int) }
    }

    fn opt_int(&self, i: usize) -> Option<i64> {
        if i >= self.columns {
            return None;
        }
        // SAFETY: as in `int`.
        let kind = unsafe { ffi::sqlite3_column_type(self.stmt, i as c_int) };
        (kind != ffi::SQLITE_NULL).then(|| self.int(i))
    }

    fn time(&self, i: usize) -> Time {
        if i >= self.columns {
            return Time::Null;
        }
        // SAFETY: as in `int`; the type is asked before any conversion, so
        // it is the stored one.
        match unsafe { ffi::sqlite3_column_type(self.stmt, i as c_int) } {
            ffi::SQLITE_INTEGER => Time::At(self.int(i)),
            ffi::SQLITE_FLOAT => {
                // SAFETY: as in `int`, on a column just seen to hold a real.
                let value = unsafe { ffi::sqlite3_column_double(self.stmt, i as c_int) };
                Time::of_real(value)
            }
            ffi::SQLITE_NULL => Time::Null,
            _ => Time::Invalid,
        }
    }
}

impl Drop for RawRows {
    fn drop(&mut self) {
        // SAFETY: finalizing a statement we own (null is a no-op).
        unsafe {
            ffi::sqlite3_finalize(self.stmt);
        }
    }
}
