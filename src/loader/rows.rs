//! Reading one cell or one event row of a report: integers, text, times,
//! process and thread ids, and the repair of an event that ends before it
//! starts. The helpers every table reader reads rows with.

use rusqlite::types::ValueRef;

use super::cells::{Cells, Time};

/// An integer cell (see [`Cells::int`]).
pub(super) fn int(row: &(impl Cells + ?Sized), i: usize) -> i64 {
    row.int(i)
}

/// An integer cell that may be NULL.
pub(super) fn opt_int(row: &(impl Cells + ?Sized), i: usize) -> Option<i64> {
    row.opt_int(i)
}

/// A text cell (NULL reads as `None`; invalid UTF-8 is replaced, not refused).
pub(super) fn text(row: &rusqlite::Row, i: usize) -> Option<String> {
    match row.get_ref(i) {
        Ok(ValueRef::Text(t)) => Some(String::from_utf8_lossy(t).into_owned()),
        Ok(ValueRef::Integer(v)) => Some(v.to_string()),
        Ok(ValueRef::Real(v)) => Some(v.to_string()),
        _ => None,
    }
}

/// `globalTid`/`globalPid` → process id (see the nsys schema notes).
pub(super) fn pid_of(global_id: i64) -> u32 {
    ((global_id >> 24) & 0xFF_FFFF) as u32
}

/// `globalTid` → thread id.
pub(super) fn tid_of(global_tid: i64) -> u32 {
    (global_tid & 0xFF_FFFF) as u32
}

/// Start and end of an event row (columns 0 and 1). A row missing either, or
/// holding something that is not a time (text, a blob, a real past the clock:
/// [`Time`]), is skipped, and counted in `missing` for a warning:
/// reading it as time 0 would stretch the trace back to the clock's origin,
/// and a coerced number would be an event that never happened.
pub(super) fn row_times(row: &(impl Cells + ?Sized), missing: &mut u64) -> Option<(i64, i64)> {
    match (row.time(0), row.time(1)) {
        (Time::At(start), Time::At(end)) => Some((start, end)),
        _ => {
            *missing += 1;
            None
        }
    }
}

/// Repairs an event whose end precedes its start (seen in damaged or hand-made
/// reports): it becomes an instant, and the caller counts it for a warning.
pub(super) fn checked_end(start: i64, end: i64, bad: &mut u64) -> i64 {
    if end < start {
        *bad += 1;
        start
    } else {
        end
    }
}
