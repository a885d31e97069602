//! Replay: a saved report fed through the live path at its recorded pace (or
//! faster), as if it were being captured now.
//!
//! The report's own tables are copied into a working file ([`LiveReport`]):
//! tables without a `start` column (strings, devices, enums, metadata) at
//! once, event tables in time slices, each event when it ends (a capture
//! learns of work when it completes), but NVTX ranges when they start, their
//! ends when they end (as a capture writes them). Snapshots and the end
//! arrive as the same [`CaptureMessage`]s a capture sends, so the window's
//! growing timeline, follow mode and Stop are tested in CI without a GPU,
//! and a class can watch a recorded run unfold (`sightline replay FILE`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rusqlite::Connection;

use super::environment::CaptureError;
use super::live::{LiveCounts, LiveReport};
use super::messages::{CaptureMessage, CaptureResult, Outbox};
use super::publisher::{MIN_SNAPSHOT_INTERVAL, Publisher};
use super::session::CaptureJob;

/// An event table of the report. Its rows' times are in `temp."when_NAME"`
/// (see [`copy_schema`]).
struct EventTable {
    name: String,
    /// For the NVTX table, its columns: a capture writes a range when it
    /// starts and its end when it ends ([`super::live`]), and so does a
    /// replay. The rows' ends are in `temp."ended_NAME"`, and where each row
    /// was copied to in `temp."placed_NAME"`.
    ended_later: Option<Vec<String>>,
}

/// The table whose rows a replay copies when they start, their ends later.
const RANGES: &str = "NVTX_EVENTS";

impl CaptureJob {
    /// Replays the report at `path`, `speed` times faster than it was
    /// recorded (1.0: its own pace).
    pub fn replay(path: PathBuf, speed: f64) -> CaptureJob {
        let name = path.file_name().map_or_else(
            || "report".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        CaptureJob::spawn_with(&format!("replay {name}"), move |stop, tx| {
            replay(&path, speed, &stop, &tx)
        })
    }
}

/// Runs a whole replay on this thread.
pub fn replay(
    path: &Path,
    speed: f64,
    stop: &Arc<AtomicBool>,
    messages: &Outbox,
) -> Result<CaptureResult, CaptureError> {
    let fail = |why: String| CaptureError::Save(format!("replaying {}: {why}", path.display()));
    let mut replaying = Replaying::open(path, &mut |what| {
        let going_on = !stop.load(Ordering::Relaxed);
        if going_on {
            messages.send(CaptureMessage::Preparing(what));
        }
        going_on
    })?;
    let (first, last) = (replaying.first, replaying.last);
    let speed = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    };
    let started = Instant::now();
    let mut publisher = Publisher::replaying(started, first, speed, &mut replaying.live, messages);
    let mut stopped_early = false;
    loop {
        let elapsed_ns = started.elapsed().as_nanos() as f64 * speed;
        let cutoff = first.saturating_add(elapsed_ns.min(i64::MAX as f64) as i64);
        let done = cutoff > last;
        replaying
            .copy_until(if done { i64::MAX } else { cutoff })
            .map_err(fail)?;
        publisher.written(&replaying.live, 0);
        if done {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            stopped_early = true;
            break;
        }
        std::thread::sleep(MIN_SNAPSHOT_INTERVAL / 2);
    }
    let mut live = replaying.live;
    publisher.finish(&mut live);
    let conn = live.connection().map_err(fail)?;
    conn.execute_batch("DETACH DATABASE src")
        .map_err(|e| fail(e.to_string()))?;
    let mut trace = live.snapshot().map_err(fail)?;
    // A replay is watched live: one that could not be says so.
    trace.warnings.extend(live.not_shown_live());
    let trace = Arc::new(trace);
    let status = publisher.status(&live);
    Ok(CaptureResult {
        trace,
        live,
        status,
        dropped_records: 0,
        stopped_early,
        benchmark_error: None,
        counters: None,
    })
}

/// A replay's working file (the report's schema and event-less tables, the
/// events copied so far), its event tables, and the report's first and last
/// event times.
struct Replaying {
    live: LiveReport,
    tables: Vec<EventTable>,
    first: i64,
    last: i64,
    /// The events known before this instant of the report are copied.
    copied_until: i64,
}

impl Replaying {
    /// The working file of a replay of `path`, its schema and event-less
    /// tables copied and its event tables indexed by time. Each step is told
    /// to `going_on` first, which answers whether to go on (a replay of 10M
    /// events takes seconds to get here: it says what it does, and stops
    /// when asked).
    fn open(path: &Path, going_on: Going<'_>) -> Result<Replaying, CaptureError> {
        let fail = |why: String| CaptureError::Save(format!("replaying {}: {why}", path.display()));
        if !going_on("checking the report".into()) {
            return Err(CaptureError::Cancelled);
        }
        // Checked by the loader first: a file that is no report gets the
        // loader's clear message, not an SQL error halfway through.
        crate::loader::check_report(path).map_err(|e| CaptureError::Benchmark(e.to_string()))?;
        let live = LiveReport::blank(std::process::id()).map_err(fail)?;
        let tables = copy_schema(live.connection().map_err(fail)?, path, going_on)
            .map_err(|e| fail(e.to_string()))?
            .ok_or(CaptureError::Cancelled)?;
        let conn = live.connection().map_err(fail)?;
        let (first, last) = time_span(conn, &tables).map_err(|e| fail(e.to_string()))?;
        Ok(Replaying {
            live,
            tables,
            first,
            last,
            copied_until: i64::MIN,
        })
    }

    /// Copies the events known before `until` (each when it ends) that are
    /// not copied yet, and tells the working file so.
    fn copy_until(&mut self, until: i64) -> Result<(), String> {
        let conn = self.live.connection()?;
        let counts =
            copy_slice(conn, &self.tables, self.copied_until, until).map_err(|e| e.to_string())?;
        self.live.add_counts(counts);
        // Every event known before this instant of the report is in.
        self.live.saw_until(until.min(self.last));
        self.copied_until = until;
        Ok(())
    }
}

/// The replay's states without its clock: the report's time cut into
/// `steps` equal slices, each copied as a replay copies it and loaded as a
/// snapshot (a growing load), handed to `each` in order; the last holds
/// every event. What a replay shows, but the same states on any machine
/// however busy (tests of what carries over from snapshot to snapshot).
pub fn replay_in_steps(
    path: &Path,
    steps: u32,
    mut each: impl FnMut(crate::model::Trace),
) -> Result<(), CaptureError> {
    let fail = |why: String| CaptureError::Save(format!("replaying {}: {why}", path.display()));
    let mut replaying = Replaying::open(path, &mut |_| true)?;
    let (first, last) = (replaying.first as i128, replaying.last as i128);
    let steps = steps.max(1);
    for k in 1..=steps {
        let until = if k == steps {
            i64::MAX
        } else {
            (first + (last - first) * i128::from(k) / i128::from(steps)) as i64
        };
        replaying.copy_until(until).map_err(fail)?;
        each(replaying.live.snapshot().map_err(fail)?);
    }
    Ok(())
}

/// Told what a replay's preparation does next; answers whether to go on.
type Going<'a> = &'a mut dyn FnMut(String) -> bool;

/// Creates the report's tables in the working file, copies the tables that
/// hold no events, and returns the event tables; `None` when `going_on`
/// (told of each event table before it is indexed) said to stop.
fn copy_schema(
    conn: &Connection,
    source: &Path,
    going_on: Going<'_>,
) -> rusqlite::Result<Option<Vec<EventTable>>> {
    // Read-only and immutable, like the loader: the report is never touched.
    let uri = crate::loader::read_only_uri(source);
    conn.execute("ATTACH DATABASE ?1 AS src", [&uri])?;
    let mut stmt = conn.prepare(
        "SELECT name, sql FROM src.sqlite_master WHERE type = 'table' AND sql IS NOT NULL
         AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
    )?;
    let tables: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    drop(stmt);
    let mut events = Vec::new();
    conn.execute_batch("BEGIN")?;
    for (name, sql) in tables {
        conn.execute_batch(&sql)?;
        let columns: Vec<String> = conn
            .prepare(&format!("PRAGMA src.table_info(\"{name}\")"))?
            .query_map([], |r| r.get::<_, String>(1))?
            .collect::<Result<_, _>>()?;
        let has = |c: &str| columns.iter().any(|x| x == c);
        if has("start") {
            if !going_on(format!("indexing {name} by time")) {
                conn.execute_batch("ROLLBACK")?;
                return Ok(None);
            }
            let ended_later = if name == RANGES && has("end") {
                Some(columns_but_the_rowid(conn, &name, &columns)?)
            } else {
                None
            };
            // The time an event is known: its end, or its start if it has
            // none (marks, unended ranges); a range's start.
            let known_at = if ended_later.is_some() {
                "COALESCE(start, \"end\")"
            } else if has("end") {
                "COALESCE(\"end\", start)"
            } else {
                "start"
            };
            // Each source row's time, indexed: a slice is then a range of
            // the index, not a scan of the whole table (a replay of 10M
            // events fell behind its clock, scanning them every slice).
            conn.execute_batch(&format!(
                "CREATE TEMP TABLE \"when_{name}\" AS
                   SELECT rowid AS src_row, {known_at} AS known_at FROM src.\"{name}\";
                 CREATE INDEX temp.\"when_{name}_at\" ON \"when_{name}\"(known_at, src_row);"
            ))?;
            if ended_later.is_some() {
                conn.execute_batch(&format!(
                    "CREATE TEMP TABLE \"ended_{name}\" AS
                       SELECT rowid AS src_row, MAX(start, \"end\") AS ended_at,
                         \"end\" AS end_value FROM src.\"{name}\"
                       WHERE start IS NOT NULL AND \"end\" IS NOT NULL;
                     CREATE INDEX temp.\"ended_{name}_at\" ON \"ended_{name}\"(ended_at, src_row);
                     CREATE TEMP TABLE \"placed_{name}\" (src_row INTEGER PRIMARY KEY, row INTEGER);"
                ))?;
            }
            events.push(EventTable { name, ended_later });
        } else {
            conn.execute_batch(&format!(
                "INSERT INTO main.\"{name}\" SELECT * FROM src.\"{name}\""
            ))?;
        }
    }
    conn.execute_batch("COMMIT")?;
    Ok(Some(events))
}

/// `columns` of `table` less the one that is its rowid (an `INTEGER
/// PRIMARY KEY`, which nsys's schema has not): the copied rows are numbered
/// on from the working file's last, in the order copied.
fn columns_but_the_rowid(
    conn: &Connection,
    table: &str,
    columns: &[String],
) -> rusqlite::Result<Vec<String>> {
    let keys: Vec<(String, String)> = conn
        .prepare(&format!("PRAGMA src.table_info(\"{table}\")"))?
        .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get::<_, i64>(5)?)))?
        .filter_map(|c| match c {
            Ok((name, kind, pk)) if pk > 0 => Some(Ok((name, kind))),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<_, _>>()?;
    let rowid = match keys.as_slice() {
        [(name, kind)] if kind.eq_ignore_ascii_case("INTEGER") => Some(name.as_str()),
        _ => None,
    };
    Ok(columns
        .iter()
        .filter(|c| Some(c.as_str()) != rowid)
        .cloned()
        .collect())
}

/// Copies the NVTX rows (`table`, its `columns`) starting in `[from,
/// until)` without their ends, and fills in the ends that come in it.
/// Answers the rows copied.
fn copy_ranges(
    conn: &Connection,
    table: &str,
    columns: &[String],
    from: i64,
    until: i64,
) -> rusqlite::Result<u64> {
    let quoted: Vec<String> = columns.iter().map(|c| format!("s.\"{c}\"")).collect();
    let open: Vec<String> = (columns.iter().zip(&quoted))
        .map(|(c, q)| match c.as_str() {
            // A row without a start is copied when it ends, whole.
            "end" => "CASE WHEN s.start IS NULL THEN s.\"end\" END".to_string(),
            _ => q.clone(),
        })
        .collect();
    let names: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
    let last_row = || {
        conn.query_row(
            &format!("SELECT COALESCE(MAX(rowid), 0) FROM main.\"{table}\""),
            [],
            |r| r.get::<_, i64>(0),
        )
    };
    let before = last_row()?;
    let n = conn.execute(
        &format!(
            "INSERT INTO main.\"{table}\" ({}) SELECT {} FROM temp.\"when_{table}\" w
               JOIN src.\"{table}\" s ON s.rowid = w.src_row
             WHERE w.known_at >= ?1 AND w.known_at < ?2 ORDER BY w.src_row",
            names.join(", "),
            open.join(", ")
        ),
        [from, until],
    )?;
    // Appended rows are numbered on from the last, in the order inserted:
    // where each went is the source's order from there.
    if last_row()? != before + n as i64 {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_MISMATCH),
            Some(format!(
                "{table}: the rows copied were not numbered in order"
            )),
        ));
    }
    conn.execute(
        &format!(
            "INSERT INTO temp.\"placed_{table}\" (src_row, row)
               SELECT src_row, ?3 + ROW_NUMBER() OVER (ORDER BY src_row)
               FROM temp.\"when_{table}\" WHERE known_at >= ?1 AND known_at < ?2"
        ),
        [from, until, before],
    )?;
    conn.execute(
        &format!(
            "UPDATE main.\"{table}\" SET \"end\" = ended.value FROM (
                 SELECT p.row AS row, e.end_value AS value FROM temp.\"ended_{table}\" e
                 JOIN temp.\"placed_{table}\" p ON p.src_row = e.src_row
                 WHERE e.ended_at >= ?1 AND e.ended_at < ?2) AS ended
             WHERE main.\"{table}\".rowid = ended.row"
        ),
        [from, until],
    )?;
    Ok(n as u64)
}

/// The first and last time any event is known.
fn time_span(conn: &Connection, tables: &[EventTable]) -> rusqlite::Result<(i64, i64)> {
    let mut first = i64::MAX;
    let mut last = i64::MIN;
    for t in tables {
        let (lo, hi): (Option<i64>, Option<i64>) = conn.query_row(
            &format!(
                "SELECT MIN(known_at), MAX(known_at) FROM temp.\"when_{0}\"",
                t.name
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        first = first.min(lo.unwrap_or(i64::MAX));
        last = last.max(hi.unwrap_or(i64::MIN));
        if t.ended_later.is_some() {
            let ended: Option<i64> = conn.query_row(
                &format!("SELECT MAX(ended_at) FROM temp.\"ended_{0}\"", t.name),
                [],
                |r| r.get(0),
            )?;
            last = last.max(ended.unwrap_or(i64::MIN));
        }
    }
    Ok(if first <= last { (first, last) } else { (0, 0) })
}

/// Copies the events known in `[from, until)`, in one transaction.
fn copy_slice(
    conn: &Connection,
    tables: &[EventTable],
    from: i64,
    until: i64,
) -> rusqlite::Result<LiveCounts> {
    conn.execute_batch("BEGIN")?;
    match copy_tables(conn, tables, from, until) {
        Ok(counts) => {
            conn.execute_batch("COMMIT")?;
            Ok(counts)
        }
        Err(e) => {
            // The working file keeps its last slice whole.
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// [`copy_slice`]'s copies, in its transaction.
fn copy_tables(
    conn: &Connection,
    tables: &[EventTable],
    from: i64,
    until: i64,
) -> rusqlite::Result<LiveCounts> {
    let mut counts = LiveCounts::default();
    for t in tables {
        if let Some(columns) = &t.ended_later {
            counts.nvtx += copy_ranges(conn, &t.name, columns, from, until)?;
            continue;
        }
        // In the source's row order within the slice, as a scan gave them.
        let n = conn.execute(
            &format!(
                "INSERT INTO main.\"{0}\" SELECT s.* FROM temp.\"when_{0}\" w
                   JOIN src.\"{0}\" s ON s.rowid = w.src_row
                 WHERE w.known_at >= ?1 AND w.known_at < ?2 ORDER BY w.src_row",
                t.name
            ),
            [from, until],
        )? as u64;
        match t.name.as_str() {
            "CUPTI_ACTIVITY_KIND_KERNEL" => counts.kernels += n,
            "CUPTI_ACTIVITY_KIND_MEMCPY" => counts.copies += n,
            "CUPTI_ACTIVITY_KIND_RUNTIME" => counts.api_calls += n,
            "NVTX_EVENTS" => counts.nvtx += n,
            _ => counts.other += n,
        }
    }
    Ok(counts)
}
