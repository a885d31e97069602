//! Tables of a report that only grows (a capture's working file), extended
//! from one load to the next instead of built again.
//!
//! A load reads the rows added since the last one, groups them by track,
//! appends them to the table as last published (its columns are shared
//! [`crate::model::Column`]s, so the snapshot the window shows is not
//! copied), and gives each track that gained rows one more run. Rows
//! already shown keep their index. When a track's new rows start before its
//! last row (rows not added in time order), the table is read and built
//! whole once more: a track's runs must read in start order. The NVTX
//! table, whose ranges come as they end, is built again at every load from
//! rows kept resolved (`super::nvtx::KeptNvtx`): only the rows added since
//! are read.

use std::collections::HashMap;
use std::hash::Hash;

use super::builder::Builder;
use super::carry::Carry;
use super::error::not_a_report;
use super::group::Grouping;
use super::parallel::{RowSink, read_table_from};
use crate::model::{EventKind, Ns, Run, SpanColumns, Track};

/// A table as last built, with what its next extension needs.
pub(super) struct Grown<T, K> {
    pub table: T,
    /// Each track's runs, by the key that names its thread or stream, in
    /// the order the tracks first came (as one read of the table numbers
    /// them).
    pub tracks: Vec<(K, Track)>,
    /// The first rowid not read yet; `None` before the first read.
    next_rowid: Option<i64>,
    /// Rows ending before they start, and rows without times, so far.
    pub bad: u64,
    pub missing: u64,
    /// The last read began the table afresh: every row's index may have
    /// changed, and what was built on the rows before must be built again.
    restarted: bool,
}

impl<T: Default, K> Default for Grown<T, K> {
    fn default() -> Self {
        Grown {
            table: T::default(),
            tracks: Vec::new(),
            next_rowid: None,
            bad: 0,
            missing: 0,
            restarted: false,
        }
    }
}

/// In a growing load (the builder has a carry), the growing table `slot`
/// picks from the carry, taken out of it; `None` in an ordinary load, or
/// when `table` (of events of `kind`) is read whole (it has a rowid column
/// of its own: its rows may come below the last rowid read), which also
/// drops the correlation links made on the table's rows and says that its
/// events are numbered anew.
pub(super) fn take<T: Default, K>(
    b: &mut Builder,
    table: &str,
    kind: EventKind,
    slot: fn(&mut Carry) -> &mut Grown<T, K>,
) -> Option<Grown<T, K>> {
    let whole = b.report.has_rowid_alias(table);
    let carry = b.carry.as_deref_mut()?;
    if whole {
        carry.links = Default::default();
        carry.numbered_anew(kind);
        return None;
    }
    Some(std::mem::take(slot(carry)))
}

/// Puts `grown` back in the carry's `slot` for the next load; when the
/// table (of events of `kind`) began afresh, drops the correlation links and
/// says its events were numbered anew.
pub(super) fn keep<T: Default, K>(
    b: &mut Builder,
    grown: Grown<T, K>,
    kind: EventKind,
    slot: fn(&mut Carry) -> &mut Grown<T, K>,
) {
    let Some(carry) = b.carry.as_deref_mut() else {
        return;
    };
    if grown.restarted {
        carry.links = Default::default();
        carry.numbered_anew(kind);
    }
    *slot(carry) = grown;
}

/// A track's new rows start before its last one.
pub(super) struct OutOfOrder;

impl<T: Default, K> Grown<T, K> {
    /// `grown` with the rows of `table` (read by `sql`) added since its last
    /// read, appended by `append`, which leaves `grown` as it was when it
    /// answers [`OutOfOrder`]: then the table is read whole into a new one.
    pub(super) fn grow<S: RowSink>(
        mut self,
        b: &mut Builder,
        table: &str,
        sql: &str,
        mut append: impl FnMut(&mut Builder, &mut Self, S) -> Result<(), OutOfOrder>,
    ) -> rusqlite::Result<Self> {
        // Rows read before, but nothing to go on from (their last rowid was
        // the largest there is): read again from the first, renumbered. A
        // table with no rows before renumbers nothing, whenever its first
        // rows come: it must not make what is built on the other tables
        // start over. (A capture's OS runtime table stays empty, and its
        // first copy may come long after its kernels began: either made
        // every load, or that one, link all the API calls and kernels again.)
        self.restarted = self.next_rowid.is_none() && !self.tracks.is_empty();
        if self.restarted {
            self = Grown {
                restarted: true,
                ..Grown::default()
            };
        }
        let (rows, last_rowid) = read_table_from::<S>(b, table, sql, self.next_rowid)?;
        if append(b, &mut self, rows).is_err() {
            self = Grown::default();
            self.restarted = true;
            let (rows, _) = read_table_from::<S>(b, table, sql, None)?;
            append(b, &mut self, rows)
                .map_err(|OutOfOrder| not_a_report("rows out of order in one read"))?;
        }
        // Without rowids (or past the last one) nothing later can be told
        // from what was read.
        self.next_rowid = last_rowid.and_then(|last| last.checked_add(1));
        Ok(self)
    }
}

impl<T, K: Copy + Eq + Hash> Grown<T, K> {
    /// Whether each track's new rows (`g`'s group `i` of track `key_of(i)`,
    /// whose starts are `start`) start no earlier than its last row
    /// (`spans`: the table's).
    pub(super) fn in_time_order(
        &self,
        keys: impl Iterator<Item = K>,
        g: &Grouping,
        start: &[Ns],
        spans: &SpanColumns,
    ) -> bool {
        let previous: HashMap<K, &Track> = self.tracks.iter().map(|(k, t)| (*k, t)).collect();
        keys.zip(&g.tracks).all(|(key, new)| {
            let last = previous
                .get(&key)
                .and_then(|old| old.last())
                .and_then(|r| spans.start.get(r as usize));
            let first = start.get(new.start as usize);
            match (last, first) {
                (Some(last), Some(first)) if !new.is_empty() => first >= last,
                _ => true,
            }
        })
    }
}

/// Gives each track (`tracks`: every track of the trace with its key, in
/// the grouping's order) its runs so far (`tracks_kept`) and a run of its new
/// rows, which `g` grouped and the table (`spans`) holds from row `base` on;
/// keeps them in `tracks_kept`, in that order.
pub(super) fn add_runs<'a, K: Copy + Eq + Hash + 'a>(
    tracks_kept: &mut Vec<(K, Track)>,
    tracks: impl Iterator<Item = (K, &'a mut Track)>,
    g: &Grouping,
    base: u32,
    spans: &SpanColumns,
) {
    {
        let mut kept: HashMap<K, Track> = std::mem::take(tracks_kept).into_iter().collect();
        for (i, (key, slot)) in tracks.enumerate() {
            let mut track = kept.remove(&key).unwrap_or_default();
            if let Some(new) = g.tracks.get(i).filter(|r| !r.is_empty()) {
                track.depth = 1;
                track.push(Run::of(base + new.start..base + new.end, spans));
            }
            if !track.is_empty() {
                tracks_kept.push((key, track.clone()));
            }
            *slot = track;
        }
    }
}

/// Rows of a table read row by row (NVTX ranges, CUDA event records) as a
/// growing report's loads keep them, with the last rowid read.
pub(super) struct KeptRows<R> {
    pub rows: Vec<R>,
    read_to: Option<i64>,
}

impl<R> Default for KeptRows<R> {
    fn default() -> Self {
        KeptRows {
            rows: Vec::new(),
            read_to: None,
        }
    }
}

/// Adds to `kept` what `read` makes of each row `sql` (a `SELECT` of
/// `table` with no `WHERE`) selects, in rowid order: in a growing load only
/// the rows added since the last (up to the last rowid of this load's
/// commit), else every row, `kept` emptied first. A table with a rowid
/// column of its own is read whole (its rows may come below the last rowid
/// read), and so is one without rowids. Answers whether `kept` was emptied
/// (all that was made of rows read before must be made again).
pub(super) fn read_new_rows<R>(
    b: &mut Builder,
    table: &str,
    sql: &str,
    kept: &mut KeptRows<R>,
    mut read: impl FnMut(&mut Builder, &rusqlite::Row) -> rusqlite::Result<Option<R>>,
) -> rusqlite::Result<bool> {
    let report = b.report.clone();
    let last = if b.carry.is_some() && !report.has_rowid_alias(table) {
        report
            .conn
            .query_row(&format!("SELECT max(rowid) FROM \"{table}\""), [], |r| {
                r.get::<_, Option<i64>>(0)
            })
            .ok()
    } else {
        None
    };
    let afresh = last.is_none();
    let (sql, params) = match (last, kept.read_to) {
        // Not growing, or a table without rowids: every row.
        (None, _) => {
            *kept = KeptRows::default();
            (sql.to_string(), Vec::new())
        }
        // No rows yet, or none added since.
        (Some(None), _) => return Ok(false),
        (Some(Some(last)), Some(read)) if last <= read => return Ok(false),
        (Some(Some(last)), Some(read)) => (
            format!("{sql} WHERE rowid > ?1 AND rowid <= ?2"),
            vec![read, last],
        ),
        (Some(Some(last)), None) => (format!("{sql} WHERE rowid <= ?1"), vec![last]),
    };
    let mut stmt = report.conn.prepare(&sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
    while let Some(row) = rows.next()? {
        if let Some(r) = read(b, row)? {
            kept.rows.push(r);
        }
    }
    kept.read_to = last.flatten();
    Ok(afresh)
}
