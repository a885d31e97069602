//! CPU side: strings, processes and threads, CUDA API calls, OS runtime calls,
//! CUDA graph records (NVTX ranges: [`super::nvtx`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::builder::{Builder, IdMap};
use super::carry::Carry;
use super::cells::RawRows;
use super::db::Col::{Optional as Opt, Required as Req};
use super::error::{cancelled, not_a_report};
use super::group::{Grouping, Runs};
use super::grow::{self, Grown, OutOfOrder, add_runs};
use super::parallel::{RowSink, Rows, column, read_rows};
use super::rows::{checked_end, int, opt_int, pid_of, row_times, text, tid_of};
use crate::model::{
    ApiCalls, EncodedEnds, EventKind, GraphRecord, Ns, OsCalls, Process, SpanColumns, SparseColumn,
    StrId, Thread, Track,
};
use crate::threads::joined;

pub(super) fn read_names(b: &mut Builder) -> rusqlite::Result<()> {
    let report = b.report.clone();
    if !report.has_column("StringIds", "id") || !report.has_column("StringIds", "value") {
        return Err(not_a_report(
            "its StringIds table lacks the id or value column",
        ));
    }
    let mut stmt = report.conn.prepare("SELECT id, value FROM StringIds")?;
    let mut rows = stmt.query([])?;
    let mut read = 0u64;
    while let Some(row) = rows.next()? {
        // A report's names may be millions: a cancel is not kept waiting.
        read += 1;
        if read.is_multiple_of(1 << 13) && b.cancel.load(Ordering::Relaxed) {
            return Err(cancelled());
        }
        let id = int(row, 0);
        let value = text(row, 1).unwrap_or_default();
        let ours = b.trace.strings.intern(&value);
        b.string_ids.insert(id, ours);
    }
    drop(rows);
    drop(stmt);

    if let Some(sql) = b.select(
        "PROCESSES",
        &[Req("pid"), Opt("name", "NULL"), Opt("globalPid", "NULL")],
        "",
    ) {
        let report = b.report.clone();
        let mut stmt = report.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let pid = opt_int(row, 2).map_or(int(row, 0) as u32, pid_of);
            if let Some(name) = text(row, 1) {
                b.process_names.insert(pid, name);
            }
        }
    }
    if let Some(sql) = b.select(
        "ThreadNames",
        &[Req("nameId"), Req("globalTid"), Opt("priority", "NULL")],
        "",
    ) {
        let report = b.report.clone();
        let mut stmt = report.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let name = b.trace.strings.get(b.string(int(row, 0))).to_string();
            b.thread_names.insert(int(row, 1), name);
            if let Some(priority) = opt_int(row, 2) {
                b.thread_priorities.insert(int(row, 1), priority as i32);
            }
        }
    }
    Ok(())
}

impl Builder<'_> {
    /// The thread with this `globalTid`, created on first sight.
    pub(super) fn thread(&mut self, global_tid: i64) -> u32 {
        if let Some(&t) = self.threads_by_tid.get(&global_tid) {
            return t;
        }
        let pid = pid_of(global_tid);
        let tid = tid_of(global_tid);
        let process = match self.processes_by_pid.get(&pid) {
            Some(&p) => p,
            None => {
                let name = self.process_names.get(&pid).cloned().unwrap_or_default();
                self.trace.processes.push(Process {
                    pid,
                    name,
                    threads: Vec::new(),
                });
                let p = self.trace.processes.len() - 1;
                self.processes_by_pid.insert(pid, p);
                p
            }
        };
        let index = self.trace.threads.len() as u32;
        let name = self
            .thread_names
            .get(&global_tid)
            .cloned()
            .unwrap_or_default();
        self.trace.threads.push(Thread {
            global_tid,
            pid,
            tid,
            name,
            priority: self.thread_priorities.get(&global_tid).copied(),
            process: process as u32,
            cuda_api: Track::default(),
            osrt: Track::default(),
            nvtx: Vec::new(),
        });
        self.trace.processes[process].threads.push(index);
        self.threads_by_tid.insert(global_tid, index);
        index
    }

    /// The thread number of each run of rows of one `globalTid`, with its
    /// length, in row order.
    fn threads_of(&mut self, global_tids: &Runs<i64>) -> Vec<(u32, u32)> {
        global_tids.tracks(|g| self.thread(g))
    }
}

/// Rows of a span table before grouping.
#[derive(Default)]
struct RawSpans {
    start: Vec<Ns>,
    end: Vec<Ns>,
    name: Vec<StrId>,
    /// Each run of rows of one thread (its `globalTid`, and how many).
    global_tid: Runs<i64>,
    bad: u64,
    /// Rows skipped for a NULL start or end.
    missing: u64,
}

impl RawSpans {
    fn push(&mut self, start: Ns, end: Ns, name: StrId, global_tid: i64) {
        let end = checked_end(start, end, &mut self.bad);
        self.start.push(start);
        self.end.push(end);
        self.name.push(name);
        self.global_tid.push(global_tid);
    }

    /// A table row's span: start, end, name (a StringIds id) and
    /// `globalTid` at columns 0 to 3. False, and counted, for a row without
    /// times (its other columns are then not kept either).
    fn push_row(&mut self, row: &RawRows, strings: &IdMap) -> bool {
        let Some((start, end)) = row_times(row, &mut self.missing) else {
            return false;
        };
        // A NULL name reads as no name (not as StringIds id 0).
        let name = opt_int(row, 2)
            .and_then(|id| strings.get(id))
            .unwrap_or_default();
        self.push(start, end, name, int(row, 3));
        true
    }

    fn reserve(&mut self, rows: usize) {
        self.start.reserve(rows);
        self.end.reserve(rows);
        self.name.reserve(rows);
    }

    fn append(&mut self, later: RawSpans) {
        self.start.extend(later.start);
        self.end.extend(later.end);
        self.name.extend(later.name);
        self.global_tid.append(later.global_tid);
        self.bad += later.bad;
        self.missing += later.missing;
    }
}

// Threads that only had a name (ThreadNames lists every thread of the
// machine) are not created: a thread exists once it has events.

/// CUDA API calls, and the CUDA graphs those calls built.
pub(super) fn read_api_events(b: &mut Builder) -> rusqlite::Result<()> {
    read_cuda_api(b)?;
    read_graph_records(b)
}

fn read_cuda_api(b: &mut Builder) -> rusqlite::Result<()> {
    let Some(sql) = b.select(
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        &[
            Req("start"),
            Req("end"),
            Req("nameId"),
            Opt("globalTid", "0"),
            Opt("correlationId", "0"),
            Opt("returnValue", "0"),
        ],
        "",
    ) else {
        b.warn("no CUDA API trace in this report (CUPTI_ACTIVITY_KIND_RUNTIME)".into());
        return Ok(());
    };
    const TABLE: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
    let slot: fn(&mut Carry) -> &mut GrownApi = |carry| carry.part();
    let Some(grown) = grow::take(b, TABLE, EventKind::Api, slot) else {
        return read_rows(b, TABLE, &sql, api_calls_from);
    };
    let grown = grown.grow(b, TABLE, &sql, append_api_calls)?;
    b.trace.cuda_api = Arc::new(grown.table.clone());
    grow::keep(b, grown, EventKind::Api, slot);
    Ok(())
}

/// What the loads of a report that only grows keep of its CUDA API calls
/// (see [`super::grow`]): the table, and each thread's track by `globalTid`.
pub(super) type GrownApi = Grown<ApiCalls, i64>;

/// `rows` appended to `grown`'s CUDA API calls, grouped by thread (see
/// [`super::grow`]).
fn append_api_calls(
    b: &mut Builder,
    grown: &mut GrownApi,
    rows: ApiRows,
) -> Result<(), OutOfOrder> {
    let track: fn(&mut Thread) -> &mut Track = |t| &mut t.cuda_api;
    append_by_thread(b, grown, &rows.spans, "CUDA API calls", track, |t, g| {
        t.correlation
            .extend_from_slice(&g.take(&rows.correlation[..]));
        for value in g.take(&rows.return_value[..]) {
            t.return_value.push(value);
        }
    })
}

/// A table of events by thread (CUDA API calls, OS runtime calls).
trait ThreadTable {
    fn spans(&self) -> &SpanColumns;
    fn spans_mut(&mut self) -> &mut SpanColumns;
}

impl ThreadTable for ApiCalls {
    fn spans(&self) -> &SpanColumns {
        &self.spans
    }
    fn spans_mut(&mut self) -> &mut SpanColumns {
        &mut self.spans
    }
}

impl ThreadTable for OsCalls {
    fn spans(&self) -> &SpanColumns {
        &self.spans
    }
    fn spans_mut(&mut self) -> &mut SpanColumns {
        &mut self.spans
    }
}

/// New rows of a table of events by thread (`spans` as read, `what` they
/// are) appended to `grown`, grouped by thread (see [`super::grow`]): each
/// thread's `track` gains a run. `own` appends the table's own columns,
/// given the grouping; it is not called when a thread's new rows start
/// before its last one ([`OutOfOrder`]: the table is then read whole).
fn append_by_thread<T: ThreadTable>(
    b: &mut Builder,
    grown: &mut Grown<T, i64>,
    spans: &RawSpans,
    what: &str,
    track: fn(&mut Thread) -> &mut Track,
    own: impl FnOnce(&mut T, &Grouping),
) -> Result<(), OutOfOrder> {
    // The threads seen before keep their order (first come, as in one read).
    for &(global_tid, _) in &grown.tracks {
        b.thread(global_tid);
    }
    let threads = b.threads_of(&spans.global_tid);
    let g = Grouping::from_runs(&threads, &spans.start, b.trace.threads.len());
    let start = g.take(&spans.start[..]);
    let keys = b.trace.threads.iter().map(|t| t.global_tid);
    if !grown.in_time_order(keys, &g, &start, grown.table.spans()) {
        return Err(OutOfOrder);
    }
    grown.bad += spans.bad;
    grown.missing += spans.missing;
    warn_bad(b, grown.bad, grown.missing, what);
    let t = &mut grown.table;
    let base = t.spans().len() as u32;
    let name = g.take(&spans.name[..]);
    t.spans_mut().append(&start, &g.view(&spans.end[..]), &name);
    own(t, &g);
    let tracks = (b.trace.threads.iter_mut()).map(|t| (t.global_tid, track(t)));
    add_runs(&mut grown.tracks, tracks, &g, base, grown.table.spans());
    Ok(())
}

/// The CUDA API calls of `rows`, grouped by thread.
fn api_calls_from(b: &mut Builder, mut rows: Rows<ApiRows>) {
    let spans = &rows.get().spans;
    warn_bad(b, spans.bad, spans.missing, "CUDA API calls");
    let threads = b.threads_of(&spans.global_tid);
    let start = column!(rows, spans.start);
    let g = Grouping::from_runs(&threads, &start, b.trace.threads.len());
    let (end, name) = (column!(rows, spans.end), column!(rows, spans.name));
    let (correlation, return_value) = (column!(rows, correlation), column!(rows, return_value));
    // Each column reordered on its own thread (see `gpu::kernels_from`).
    let g = &g;
    let api = std::thread::scope(|scope| {
        let starts = scope.spawn(move || {
            let start = g.take(start);
            let ends = EncodedEnds::new(&start, &g.view(&end));
            (start, ends)
        });
        let name = scope.spawn(move || g.take(name));
        let correlation = scope.spawn(move || g.take(correlation));
        let return_value = SparseColumn::from_vec(g.take(return_value));
        let (start, ends) = joined(starts);
        ApiCalls {
            spans: SpanColumns::from_parts(start, ends, joined(name)),
            correlation: joined(correlation).into(),
            return_value,
        }
    });
    for (i, thread) in b.trace.threads.iter_mut().enumerate() {
        thread.cuda_api = g.track(i, &api.spans);
    }
    b.trace.cuda_api = Arc::new(api);
}

/// CUDA API rows as read, before grouping by thread.
#[derive(Default)]
pub(super) struct ApiRows {
    spans: RawSpans,
    correlation: Vec<u32>,
    return_value: Vec<i32>,
}

impl RowSink for ApiRows {
    fn reserve(&mut self, rows: usize) {
        self.spans.reserve(rows);
        self.correlation.reserve(rows);
        self.return_value.reserve(rows);
    }

    fn push(&mut self, row: &RawRows, strings: &IdMap) {
        if !self.spans.push_row(row, strings) {
            return;
        }
        self.correlation.push(int(row, 4) as u32);
        self.return_value.push(int(row, 5) as i32);
    }

    fn append(&mut self, later: Self) {
        self.spans.append(later.spans);
        self.correlation.extend(later.correlation);
        self.return_value.extend(later.return_value);
    }
}

pub(super) fn read_osrt(b: &mut Builder) -> rusqlite::Result<()> {
    let Some(sql) = b.select(
        "OSRT_API",
        &[
            Req("start"),
            Req("end"),
            Req("nameId"),
            Opt("globalTid", "0"),
            Opt("returnValue", "0"),
            Opt("eventClass", "27"),
        ],
        "",
    ) else {
        return Ok(());
    };
    const TABLE: &str = "OSRT_API";
    let slot: fn(&mut Carry) -> &mut GrownOsrt = |carry| carry.part();
    let Some(grown) = grow::take(b, TABLE, EventKind::Osrt, slot) else {
        return read_rows(b, TABLE, &sql, os_calls_from);
    };
    let grown = grown.grow(b, TABLE, &sql, append_os_calls)?;
    b.trace.osrt = Arc::new(grown.table.clone());
    grow::keep(b, grown, EventKind::Osrt, slot);
    Ok(())
}

/// What the loads of a report that only grows keep of its OS runtime calls
/// (see [`super::grow`]): the table, and each thread's track by `globalTid`.
pub(super) type GrownOsrt = Grown<OsCalls, i64>;

/// `rows` appended to `grown`'s OS runtime calls, grouped by thread (see
/// [`super::grow`]).
fn append_os_calls(b: &mut Builder, grown: &mut GrownOsrt, rows: OsRows) -> Result<(), OutOfOrder> {
    let track: fn(&mut Thread) -> &mut Track = |t| &mut t.osrt;
    append_by_thread(b, grown, &rows.spans, "OS runtime calls", track, |t, g| {
        t.return_value
            .extend_from_slice(&g.take(&rows.return_value[..]));
        t.event_class
            .extend_from_slice(&g.take(&rows.event_class[..]));
    })
}

/// The OS runtime calls of `rows`, grouped by thread.
fn os_calls_from(b: &mut Builder, mut rows: Rows<OsRows>) {
    let spans = &rows.get().spans;
    warn_bad(b, spans.bad, spans.missing, "OS runtime calls");
    let threads = b.threads_of(&spans.global_tid);
    let start = column!(rows, spans.start);
    let g = Grouping::from_runs(&threads, &start, b.trace.threads.len());
    let (end, name) = (column!(rows, spans.end), column!(rows, spans.name));
    let (return_value, event_class) = (column!(rows, return_value), column!(rows, event_class));
    let start = g.take(start);
    let ends = EncodedEnds::new(&start, &g.view(&end));
    let os = OsCalls {
        spans: SpanColumns::from_parts(start, ends, g.take(name)),
        return_value: g.take(return_value).into(),
        event_class: g.take(event_class).into(),
    };
    for (i, thread) in b.trace.threads.iter_mut().enumerate() {
        thread.osrt = g.track(i, &os.spans);
    }
    b.trace.osrt = Arc::new(os);
}

/// OS runtime rows as read, before grouping by thread.
#[derive(Default)]
pub(super) struct OsRows {
    spans: RawSpans,
    return_value: Vec<i64>,
    event_class: Vec<u8>,
}

impl RowSink for OsRows {
    fn reserve(&mut self, rows: usize) {
        self.spans.reserve(rows);
        self.return_value.reserve(rows);
        self.event_class.reserve(rows);
    }

    fn push(&mut self, row: &RawRows, strings: &IdMap) {
        if !self.spans.push_row(row, strings) {
            return;
        }
        self.return_value.push(int(row, 4));
        self.event_class.push(int(row, 5).clamp(0, 255) as u8);
    }

    fn append(&mut self, later: Self) {
        self.spans.append(later.spans);
        self.return_value.extend(later.return_value);
        self.event_class.extend(later.event_class);
    }
}

fn read_graph_records(b: &mut Builder) -> rusqlite::Result<()> {
    let mut graph_records = Vec::new();
    for (table, id_col, original_col, is_node) in [
        (
            "CUDA_GRAPH_NODE_EVENTS",
            "graphNodeId",
            "originalGraphNodeId",
            true,
        ),
        ("CUDA_GRAPH_EVENTS", "graphId", "originalGraphId", false),
    ] {
        let Some(sql) = b.select(
            table,
            &[
                Req("start"),
                Req("end"),
                Opt("globalTid", "0"),
                Opt("nameId", "NULL"),
                Opt(id_col, "0"),
                Opt(original_col, "NULL"),
            ],
            "",
        ) else {
            continue;
        };
        let mut records = Vec::new();
        {
            let report = b.report.clone();
            let mut stmt = report.conn.prepare(&sql)?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                records.push((
                    int(row, 0),
                    int(row, 1),
                    int(row, 2),
                    opt_int(row, 3),
                    int(row, 4),
                    opt_int(row, 5),
                ));
            }
        }
        for (start, end, tid, name, id, original) in records {
            let thread = b.thread(tid);
            let name = name.map(|n| b.string(n)).unwrap_or_default();
            graph_records.push(GraphRecord {
                start,
                end: end.max(start),
                thread,
                name,
                id: id as u64,
                original_id: original.map(|o| o as u64),
                is_node,
            });
        }
    }
    b.trace.graph_records = Arc::new(graph_records);
    Ok(())
}

/// Warns about repaired (`bad`: end before start) and skipped (`missing`: no
/// start or end) rows of one kind.
pub(super) fn warn_bad(b: &mut Builder, bad: u64, missing: u64, what: &str) {
    if bad > 0 {
        b.warn(format!(
            "{bad} {what} end before they start: shown as instants"
        ));
    }
    if missing > 0 {
        b.warn(format!(
            "{missing} {what} have no start or end time, or one that is not a time (text, a \
             blob, a number past the clock): not loaded"
        ));
    }
}
