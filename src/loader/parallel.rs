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

use super::db::open_read_only;
use super::{Builder, IdMap, Progress};

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

/// Runs `sql` (a `SELECT ... FROM table` without WHERE) over `table` on all
/// cores and returns the rows in table order.
pub(super) fn read_table<S: RowSink>(
    b: &mut Builder,
    table: &str,
    sql: &str,
) -> rusqlite::Result<S> {
    let (lo, hi): (i64, i64) = b.report.conn.query_row(
        &format!(
            "SELECT coalesce((SELECT min(rowid) FROM \"{table}\"), 0), \
             coalesce((SELECT max(rowid) FROM \"{table}\"), -1)"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let rows = (hi - lo + 1).max(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8) as i64;
    // Small tables are not worth a second connection.
    let pieces = if rows < 200_000 { 1 } else { workers };
    let step = rows / pieces + 1;
    let ranges: Vec<(i64, i64)> = (0..pieces)
        .map(|i| (lo + i * step, (lo + (i + 1) * step).min(hi + 1)))
        .collect();

    let done = AtomicU64::new(0);
    let path = b.path.clone();
    // Disjoint borrows of the builder: the workers read the string map while
    // this thread reports progress.
    let strings = &b.string_ids;
    let cancel = b.cancel;
    let on_progress = &mut b.on_progress;
    let (base, total, phase) = (b.rows_done, b.rows_total, b.phase);
    let piece_sql = format!("{sql} WHERE rowid >= ?1 AND rowid < ?2");
    let results: Vec<rusqlite::Result<S>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .iter()
            .map(|&(from, to)| {
                let (path, piece_sql, done) = (&path, &piece_sql, &done);
                scope.spawn(move || -> rusqlite::Result<S> {
                    let conn = open_read_only(path).map_err(|e| {
                        rusqlite::Error::SqliteFailure(
                            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                            Some(e.to_string()),
                        )
                    })?;
                    let mut rows = RawRows::new(&conn, piece_sql, &[from, to])?;
                    let mut sink = S::default();
                    sink.reserve((to - from).max(0) as usize);
                    let mut n = 0u64;
                    while rows.step()? {
                        sink.push(&rows, strings);
                        n += 1;
                        if n.is_multiple_of(BATCH) {
                            done.fetch_add(BATCH, Ordering::Relaxed);
                            if cancel.load(Ordering::Relaxed) {
                                return Err(super::cancelled());
                            }
                        }
                    }
                    done.fetch_add(n % BATCH, Ordering::Relaxed);
                    Ok(sink)
                })
            })
            .collect();
        // The calling thread reports progress while the workers read.
        while handles.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(Duration::from_millis(25));
            let rows = base + done.load(Ordering::Relaxed);
            on_progress(Progress {
                phase,
                fraction: (rows as f64 / total as f64).min(1.0) as f32,
            });
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
    Ok(whole)
}
