//! Reading one big table on every core.
//!
//! SQLite decodes rows on the thread that steps the statement, so a single
//! query is bound to one core: on big reports that decoding *is* the load time.
//! We cut the table into rowid ranges (a range scan on a rowid table costs
//! nothing extra), read each on its own connection and thread, and append the
//! pieces in rowid order, so the result is exactly what one query would give.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::cells::RawRows;

use super::builder::{Builder, IdMap, Progress};
use super::db::{open_live, open_read_only};
use super::error::cancelled;

/// Rows of one table read into columns. `push` sees every row of a piece in
/// order; `append` joins pieces in rowid order.
pub(super) trait RowSink: Default + Send {
    /// Makes room for about `rows` more rows: growing ten-million-row columns
    /// by doubling would copy them and fault in their pages again and again.
    fn reserve(&mut self, rows: usize);
    fn push(&mut self, row: &RawRows, strings: &IdMap);
    fn append(&mut self, later: Self);
}

/// How often workers publish their row counts (and look at the cancel flag).
const BATCH: u64 = 4096;

/// Rowid bounds `[from, to)` of the pieces a table is read in; `None` is
/// open-ended. One open piece when the table has no rowid (a view, a
/// WITHOUT ROWID table: then it is read by one query). The last piece ends
/// at the last rowid the report's own connection sees: a growing report's
/// pieces, read on connections opened later, see rows committed since, which
/// belong to the next load.
#[derive(Clone, Copy)]
struct Piece {
    from: Option<i64>,
    to: Option<i64>,
    /// Rows to make room for up front (the rowid span, capped: a damaged
    /// table's rowids may be far apart).
    expected_rows: usize,
}

/// The fewest rows worth a piece (a connection and a thread) of their own.
const MIN_PIECE_ROWS: i128 = 50_000;

/// The most rows a piece reserves room for before it sees them.
const MAX_RESERVED_ROWS: i128 = 1 << 24;

/// The pieces of `table` from rowid `from` on (the whole table without
/// one), and the table's last rowid (`None` when it has no rows or no rowids).
fn split_by_rowid(b: &Builder, table: &str, from: Option<i64>) -> (Vec<Piece>, Option<i64>) {
    let bounds = b.report.conn.query_row(
        &format!(
            "SELECT (SELECT min(rowid) FROM \"{table}\"), (SELECT max(rowid) FROM \"{table}\")"
        ),
        [],
        |r| Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?)),
    );
    let whole = |expected_rows| {
        vec![Piece {
            from,
            to: None,
            expected_rows,
        }]
    };
    let (lo, hi) = match bounds {
        Ok((Some(lo), Some(hi))) => (lo, hi),
        // No rows (as of the report's connection): nothing to read.
        Ok(_) => return (Vec::new(), None),
        Err(_) => return (whole(0), None),
    };
    // Past the last rowid (damaged rowids at i64::MAX): open-ended.
    let end = hi.checked_add(1);
    let lo = from.map_or(lo, |from| from.max(lo));
    if lo > hi {
        return (Vec::new(), Some(hi));
    }
    // In i128: a damaged table may use the whole i64 range of rowids.
    let span = (hi as i128 - lo as i128 + 1).max(0);
    let cores = super::share::table_cores().clamp(1, 8) as i128;
    // A piece per `MIN_PIECE_ROWS` at least: fewer rows are not worth a
    // connection of their own. (A growing report's loads read a few hundred
    // thousand rows each: one core for them was most of a snapshot.)
    // A live report's table whose rows may come with any rowid is read on
    // the report's connection alone: a piece on another would see rows
    // committed since among those it reads.
    let alone = b.report.live && b.report.has_rowid_alias(table);
    let workers = if alone {
        1
    } else {
        cores.min(span / MIN_PIECE_ROWS).max(1)
    };
    if workers == 1 {
        return (
            vec![Piece {
                from,
                to: end,
                expected_rows: span.min(MAX_RESERVED_ROWS) as usize,
            }],
            Some(hi),
        );
    }
    let step = span / workers + 1;
    let expected_rows = step.min(MAX_RESERVED_ROWS) as usize;
    let cuts: Vec<i64> = (1..workers)
        .map(|k| (lo as i128 + k * step) as i64)
        .collect();
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    let mut from = from;
    for cut in cuts {
        pieces.push(Piece {
            from,
            to: Some(cut),
            expected_rows,
        });
        from = Some(cut);
    }
    pieces.push(Piece {
        from,
        to: end,
        expected_rows,
    });
    (pieces, Some(hi))
}

/// Runs `sql` (a `SELECT ... FROM table` without WHERE) over `table` on all
/// cores and returns the rows in table order.
pub(super) fn read_table<S: RowSink>(
    b: &mut Builder,
    table: &str,
    sql: &str,
) -> rusqlite::Result<S> {
    read_table_from(b, table, sql, None).map(|(rows, _)| rows)
}

/// [`read_table`] of the rows from rowid `from` on (all without one), and
/// the table's last rowid when it has rowids.
pub(super) fn read_table_from<S: RowSink>(
    b: &mut Builder,
    table: &str,
    sql: &str,
    from: Option<i64>,
) -> rusqlite::Result<(S, Option<i64>)> {
    let (pieces, last_rowid) = split_by_rowid(b, table, from);
    let done = AtomicU64::new(0);
    // A live report's one piece is read on the report's connection, in the
    // load's read transaction (and without opening another).
    if let ([piece], true) = (&pieces[..], b.report.live) {
        let report = b.report.clone();
        let rows = read_piece(&report.conn, sql, piece, &b.string_ids, &done, b.cancel)?;
        b.tick(done.load(Ordering::Relaxed))?;
        return Ok((rows, last_rowid));
    }
    let path = b.source.clone();
    let live = b.report.live;
    // Disjoint borrows of the builder: the workers read the string map while
    // this thread reports progress.
    let strings = &b.string_ids;
    let cancel = b.cancel;
    let on_progress = &mut b.on_progress;
    let (base, total, phase) = (b.rows_done, b.rows_total, b.phase);
    // Each worker says when it ends (its guard sends on drop, whatever the
    // outcome), so a small table is not held up by the progress interval.
    let (ended_tx, ended) = crossbeam_channel::unbounded::<()>();
    let results: Vec<rusqlite::Result<S>> = std::thread::scope(|scope| {
        let handles: Vec<_> = pieces
            .iter()
            .map(|piece| {
                let (path, done) = (&path, &done);
                let ended = EndSignal(ended_tx.clone());
                scope.spawn(move || -> rusqlite::Result<S> {
                    let _ended = ended;
                    let open = if live { open_live } else { open_read_only };
                    let conn = open(path).map_err(|e| {
                        rusqlite::Error::SqliteFailure(
                            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                            Some(e.to_string()),
                        )
                    })?;
                    read_piece(&conn, sql, piece, strings, done, cancel)
                })
            })
            .collect();
        // The calling thread reports progress while the workers read.
        let mut running = handles.len();
        while running > 0 {
            match ended.recv_timeout(Duration::from_millis(25)) {
                Ok(()) => running -= 1,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    let rows = base + done.load(Ordering::Relaxed);
                    on_progress(Progress {
                        phase,
                        fraction: (rows as f64 / total as f64).min(1.0) as f32,
                    });
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(rusqlite::Error::SqliteFailure(
                        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_INTERNAL),
                        Some("a reader thread failed".into()),
                    ))
                })
            })
            .collect()
    });
    let mut pieces = results.into_iter();
    let mut whole = match pieces.next() {
        Some(first) => first?,
        None => S::default(),
    };
    for piece in pieces {
        whole.append(piece?);
    }
    b.tick(done.load(Ordering::Relaxed))?;
    Ok((whole, last_rowid))
}

/// Reads the rows of `piece` by `sql` on `conn`, counting them in `done`.
fn read_piece<S: RowSink>(
    conn: &rusqlite::Connection,
    sql: &str,
    piece: &Piece,
    strings: &IdMap,
    done: &AtomicU64,
    cancel: &std::sync::atomic::AtomicBool,
) -> rusqlite::Result<S> {
    let (piece_sql, params): (String, Vec<i64>) = match (piece.from, piece.to) {
        (None, None) => (sql.to_string(), vec![]),
        (None, Some(to)) => (format!("{sql} WHERE rowid < ?1"), vec![to]),
        (Some(from), None) => (format!("{sql} WHERE rowid >= ?1"), vec![from]),
        (Some(from), Some(to)) => (
            format!("{sql} WHERE rowid >= ?1 AND rowid < ?2"),
            vec![from, to],
        ),
    };
    let mut rows = RawRows::new(conn, &piece_sql, &params)?;
    let mut sink = S::default();
    sink.reserve(piece.expected_rows);
    let mut n = 0u64;
    while rows.step()? {
        sink.push(&rows, strings);
        n += 1;
        if n.is_multiple_of(BATCH) {
            done.fetch_add(BATCH, Ordering::Relaxed);
            if cancel.load(Ordering::Relaxed) {
                return Err(cancelled());
            }
        }
    }
    done.fetch_add(n % BATCH, Ordering::Relaxed);
    Ok(sink)
}

/// Reads `table` (by `sql`) and builds from its rows with `build`.
pub(super) fn read_rows<S: RowSink>(
    b: &mut Builder,
    table: &str,
    sql: &str,
    build: impl FnOnce(&mut Builder, Rows<S>),
) -> rusqlite::Result<()> {
    let rows = read_table::<S>(b, table, sql)?;
    build(b, Rows(rows));
    Ok(())
}

/// The rows a table's reader builds its part of the trace from: each
/// column is moved out as it is grouped, which frees it at once (the rows
/// and the trace are never both whole in memory).
pub(super) struct Rows<S>(pub(super) S);

impl<S> Rows<S> {
    pub(super) fn get(&self) -> &S {
        &self.0
    }
}

/// Column `field` of a [`Rows`], moved out (a `Cow<[T]>`, owned).
macro_rules! column {
    ($rows:expr, $($field:ident).+) => {
        std::borrow::Cow::Owned(std::mem::take(&mut $rows.0.$($field).+))
    };
}
pub(super) use column;

/// Tells the loading thread that a reader thread ended, when dropped (so also
/// when the reader fails or unwinds).
struct EndSignal(crossbeam_channel::Sender<()>);

impl Drop for EndSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}
