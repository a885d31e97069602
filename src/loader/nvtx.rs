//! NVTX ranges and marks: read, resolved, grouped by thread and domain,
//! stacked in levels.
//!
//! A capture writes a range when it starts, without an end, and fills the
//! end in when it ends (so its snapshots show ranges while they last). A
//! growing report's load therefore reads its new rows, and again the rows of
//! the ranges still open at the last load. Each row is read and resolved
//! once (its track, its text, its kind, what it names) into [`KeptNvtx`]'s
//! columns, in the order rows came.
//!
//! Where the new ranges all come after the last of the table's last track
//! (one thread's ranges written as they start: a capture's), the last load's
//! table is extended ([`extended`]): the new rows appended to the columns it
//! shares with the last snapshot, their levels placed on the lanes it left,
//! only the ends that moved copied (ranges ended since, ranges still open
//! drawn to the later latest time). A load then costs what it adds and what
//! is open, not every range. Otherwise (a range that holds ranges shown
//! before, as when ranges are written as they end; new ranges on a track
//! followed by others') the table is built again from the columns, its
//! ranges numbered anew where they moved; the new rows are merged into the
//! last load's track order instead of sorting every track again.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::builder::Builder;
use super::carry::Carry;
use super::cells::{Cells, Time};
use super::cpu::warn_bad;
use super::db::Col::{Optional as Opt, Required as Req};
use super::group::{Grouping, LaneStack};
use super::grow::{self, KeptRows};
use super::rows::{checked_end, int, opt_int, pid_of, text};
use crate::model::nsys::event_type::*;
use crate::model::{
    EventKind, Ns, NvtxKind, NvtxRanges, NvtxTrack, PYTHON_SAMPLING_DOMAIN, Payload, Payloads,
    SpanColumns, StrId,
};

/// An NVTX table row as read.
pub(super) struct NvtxRow {
    /// nsys's range id (the table's rowid; 0 where it has none).
    row_id: i64,
    start: Option<Ns>,
    end: Option<Ns>,
    event_type: i64,
    text: Option<String>,
    text_id: Option<i64>,
    global_tid: i64,
    end_tid: Option<i64>,
    domain: i64,
    color: u32,
    category: u32,
    payload: Option<Payload>,
}

impl NvtxRow {
    /// The cells `read_nvtx`'s query selects.
    fn read(row: &rusqlite::Row) -> NvtxRow {
        let payload = if let Some(v) = opt_int(row, 10) {
            Some(Payload::Int(v))
        } else if let Some(v) = opt_int(row, 11) {
            Some(Payload::Uint(v as u64))
        } else if let Ok(Some(v)) = row.get::<_, Option<f64>>(12) {
            Some(Payload::Float(v))
        } else if let Some(v) = opt_int(row, 13) {
            Some(Payload::Int(v))
        } else if let Some(v) = opt_int(row, 14) {
            Some(Payload::Uint(v as u64))
        } else if let Ok(Some(v)) = row.get::<_, Option<f64>>(15) {
            Some(Payload::Float(v))
        } else {
            text(row, 16).map(Payload::Json)
        };
        // A start or end that is not a time (text, a blob, a real past the
        // clock) drops the row: it is counted with those without a start. A
        // NULL end is a range still open.
        let (start, end) = match (row.time(0), row.time(1)) {
            (Time::At(start), Time::At(end)) => (Some(start), Some(end)),
            (Time::At(start), Time::Null) => (Some(start), None),
            _ => (None, None),
        };
        NvtxRow {
            row_id: int(row, 17),
            start,
            end,
            event_type: int(row, 2),
            text: text(row, 3),
            text_id: opt_int(row, 4),
            global_tid: int(row, 5),
            end_tid: opt_int(row, 6),
            domain: int(row, 7),
            color: opt_int(row, 8).map_or(0, |c| c as u32),
            category: opt_int(row, 9).map_or(0, |c| c as u32),
            payload,
        }
    }

    /// Its text: a registered string when its id resolves, else the inline
    /// text (as nsys stats does: coalesce(StringIds.value, text)).
    fn message(&self, b: &Builder) -> String {
        match self.text_id.and_then(|id| b.string_ids.get(id)) {
            Some(id) => b.trace.strings.get(id).to_string(),
            None => self.text.clone().unwrap_or_default(),
        }
    }
}

/// A range's text as kept: its registered string's nsys id, resolved at
/// each load (`StringIds` is read anew), and its own text, one of
/// [`KeptNvtx::texts`], for when that id does not resolve.
#[derive(Clone, Copy)]
struct Text {
    registered: Option<i64>,
    inline: u32,
}

/// The NVTX rows a report's loads have read, resolved once: its ranges and
/// marks in columns, in the order the rows came; the rows that name things
/// (domains, categories, threads), as read (few, and looked at again at each
/// load: what they name may be registered later); and the last load's track
/// order. A whole load fills one and builds from it; a growing report's
/// carry keeps it from one load to the next.
#[derive(Default)]
pub(super) struct KeptNvtx {
    read: KeptRows<NvtxRow>,
    row_id: Vec<i64>,
    start: Vec<Ns>,
    end: Vec<Option<Ns>>,
    kind: Vec<NvtxKind>,
    text: Vec<Text>,
    /// Index into `tracks`.
    track: Vec<u32>,
    color: Vec<u32>,
    category: Vec<u32>,
    /// Sparse: (range, value).
    payload: Vec<(u32, Payload)>,
    /// Start/end ranges ended on another thread: (range, its globalTid).
    end_tid: Vec<(u32, i64)>,
    /// The distinct inline texts, and where each is in `texts`.
    texts: Vec<Box<str>>,
    text_index: HashMap<Box<str>, u32>,
    /// (globalTid, domainId) of each track, in the order they first came.
    tracks: Vec<(i64, i64)>,
    track_of: HashMap<(i64, i64), u32>,
    /// Domain creations, thread names and category names.
    naming: Vec<NvtxRow>,
    unknown_types: BTreeMap<i64, u64>,
    /// Rows without a start.
    missing: u64,
    /// Ranges read without an end, with their rowids (a capture writes a
    /// range when it starts and fills its end in when it ends): a growing
    /// report's next load reads their rows again. The flags say whether the
    /// range has a payload or an end thread already.
    open: Vec<OpenRange>,
    /// The ranges that were open at the last load: their ends, as drawn,
    /// may have moved since.
    moved: Vec<u32>,
    /// The latest NVTX timestamp: where an unended range ends.
    last_ts: Option<Ns>,
    /// The last load's track order, for the next to extend.
    sorted: Option<(Vec<u32>, Vec<crate::model::Span>)>,
    /// What the last load's table was made of (see [`extended`]).
    built: Option<Built>,
    /// Loads whose table extended the last one's rather than being built
    /// whole (tests, benchmarks: that the way is taken).
    pub(super) extended_loads: u64,
}

impl Carry {
    /// How many loads extended the last load's NVTX table rather than
    /// building it whole (each range's levels and name made again).
    pub fn nvtx_tables_extended(&self) -> u64 {
        self.part_ref::<KeptNvtx>().map_or(0, |n| n.extended_loads)
    }
}

impl KeptNvtx {
    fn len(&self) -> usize {
        self.start.len()
    }

    /// Resolves `row` into the columns (a range or mark), `naming`, or the
    /// counts of rows skipped.
    fn add(&mut self, row: NvtxRow) {
        let Some(start) = row.start else {
            self.missing += 1;
            return;
        };
        let latest = start.max(row.end.unwrap_or(Ns::MIN));
        self.last_ts = Some(self.last_ts.map_or(latest, |t| t.max(latest)));
        let kind = match row.event_type {
            NVTX_PUSHPOP | NVTXT_PUSHPOP => NvtxKind::PushPop,
            NVTX_STARTEND | NVTXT_STARTEND => NvtxKind::StartEnd,
            NVTX_MARK | NVTXT_MARK => NvtxKind::Mark,
            NVTX_DOMAIN_CREATE | NVTX_THREAD_NAME | NVTX_CATEGORY => {
                self.naming.push(row);
                return;
            }
            other => {
                *self.unknown_types.entry(other).or_insert(0) += 1;
                return;
            }
        };
        let inline = row.text.as_deref().unwrap_or_default();
        let inline = match self.text_index.get(inline) {
            Some(&k) => k,
            None => {
                let k = self.texts.len() as u32;
                self.texts.push(inline.into());
                self.text_index.insert(inline.into(), k);
                k
            }
        };
        let key = (row.global_tid, row.domain);
        let track = match self.track_of.get(&key) {
            Some(&k) => k,
            None => {
                let k = self.tracks.len() as u32;
                self.tracks.push(key);
                self.track_of.insert(key, k);
                k
            }
        };
        let i = self.len() as u32;
        let end_tid = row.end_tid.filter(|&t| t != row.global_tid && t != 0);
        if unended(kind, row.end) && row.row_id != 0 {
            self.open.push(OpenRange {
                range: i,
                row_id: row.row_id,
                has_payload: row.payload.is_some(),
                has_end_thread: end_tid.is_some(),
            });
        }
        self.row_id.push(row.row_id);
        self.start.push(start);
        self.end.push(row.end);
        self.kind.push(kind);
        self.text.push(Text {
            registered: row.text_id,
            inline,
        });
        self.track.push(track);
        self.color.push(row.color);
        self.category.push(row.category);
        if let Some(p) = row.payload {
            self.payload.push((i, p));
        }
        if let Some(end_tid) = end_tid {
            self.end_tid.push((i, end_tid));
        }
    }

    /// Takes in a later read of open range `open`'s row: its end, when it
    /// has one now, and what its writer may fill in meanwhile (its type,
    /// colour, category, payload, end thread: a capture writes them when the
    /// range ends, or when it closes a range that never did). Answers whether
    /// it is still open.
    fn reread(&mut self, open: &mut OpenRange, row: NvtxRow) -> bool {
        let i = open.range as usize;
        if let Some(end) = row.end {
            self.last_ts = Some(self.last_ts.map_or(end, |t| t.max(end)));
            self.end[i] = Some(end);
        }
        self.kind[i] = match row.event_type {
            NVTX_PUSHPOP | NVTXT_PUSHPOP => NvtxKind::PushPop,
            NVTX_STARTEND | NVTXT_STARTEND => NvtxKind::StartEnd,
            _ => self.kind[i],
        };
        self.color[i] = row.color;
        self.category[i] = row.category;
        let has_payload = row.payload.is_some();
        match (
            entry_of(&self.payload, open.range, open.has_payload),
            row.payload,
        ) {
            (Some(at), Some(p)) => self.payload[at].1 = p,
            (Some(at), None) => {
                self.payload.remove(at);
            }
            (None, Some(p)) => self.payload.push((open.range, p)),
            (None, None) => {}
        }
        open.has_payload = has_payload;
        let end_tid = row.end_tid.filter(|&t| t != row.global_tid && t != 0);
        match (
            entry_of(&self.end_tid, open.range, open.has_end_thread),
            end_tid,
        ) {
            (Some(at), Some(t)) => self.end_tid[at].1 = t,
            (Some(at), None) => {
                self.end_tid.remove(at);
            }
            (None, Some(t)) => self.end_tid.push((open.range, t)),
            (None, None) => {}
        }
        open.has_end_thread = end_tid.is_some();
        row.end.is_none()
    }

    /// Reads again (through `sql`, the table's `SELECT` with its rowid) the
    /// rows of the ranges open at the last load, and takes in what their
    /// writer filled in since (see [`KeptNvtx::reread`]).
    fn reread_open(&mut self, b: &Builder, sql: &str) -> rusqlite::Result<()> {
        let mut open = std::mem::take(&mut self.open);
        self.moved = open.iter().map(|o| o.range).collect();
        if open.is_empty() {
            return Ok(());
        }
        let by_row: HashMap<i64, usize> = (open.iter().enumerate())
            .map(|(k, o)| (o.row_id, k))
            .collect();
        let ids: Vec<String> = open.iter().map(|o| o.row_id.to_string()).collect();
        let mut still_open = vec![true; open.len()];
        {
            let report = b.report.clone();
            let mut stmt =
                (report.conn).prepare(&format!("{sql} WHERE rowid IN ({})", ids.join(",")))?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let row = NvtxRow::read(row);
                if let Some(&k) = by_row.get(&row.row_id) {
                    still_open[k] = self.reread(&mut open[k], row);
                }
            }
        }
        self.open = (open.into_iter().zip(still_open))
            .filter_map(|(o, open)| open.then_some(o))
            .collect();
        Ok(())
    }

    /// Each range's end as drawn and counted (see [`drawn_end`]).
    fn ends(&self, bad: &mut u64) -> Vec<Ns> {
        (0..self.len()).map(|r| drawn_end(self, r, bad)).collect()
    }

    /// The ranges grouped by track, each track in start order (ties: longer
    /// first, then in the order they came). The last load's order extended
    /// by the ranges read since, when it holds: no range whose end may have
    /// moved (one open at the last load: it ended since, or it ends at the
    /// last timestamp, which moves) starts with another of its track, the
    /// only place where an end orders ranges.
    fn grouping(&self, ends: &[Ns]) -> Grouping {
        let tracks = self.tracks.len();
        match &self.sorted {
            Some((order, spans))
                if order.len() <= self.len()
                    && spans.len() <= tracks
                    && !self.moved.iter().any(|&r| self.ties(order, spans, r)) =>
            {
                Grouping::extended(order, spans, &self.track, &self.start, ends, tracks)
            }
            _ => Grouping::new(&self.track, &self.start, Some(ends), tracks),
        }
    }

    /// Range `r`'s payload now. `seen`: how many of the payloads were there
    /// at the last load, in the order their ranges came (a range that gained
    /// one since has it after them).
    fn payload_of(&self, r: u32, seen: usize) -> Option<&Payload> {
        let (before, since) = self.payload.split_at(seen.min(self.payload.len()));
        let found = match before.binary_search_by_key(&r, |e| e.0) {
            Ok(at) => Some(&before[at].1),
            Err(_) => None,
        };
        found.or_else(|| since.iter().find(|e| e.0 == r).map(|e| &e.1))
    }

    /// Whether range `r` starts with another of its track in the last
    /// load's order (`order`, each track's place in it `spans`; each track's
    /// slice is sorted by start).
    fn ties(&self, order: &[u32], spans: &[crate::model::Span], r: u32) -> bool {
        let track = spans.get(self.track[r as usize] as usize);
        let Some(places) = track.and_then(|s| order.get(s.start as usize..s.end as usize)) else {
            return false;
        };
        let start = self.start[r as usize];
        let first = places.partition_point(|&x| self.start[x as usize] < start);
        let after = places.partition_point(|&x| self.start[x as usize] <= start);
        after - first > 1
    }
}

/// Where range `range`'s entry is in a sparse column, if `has` says it has
/// one: the column is looked through only then (an open range seldom has
/// one).
fn entry_of<T>(column: &[(u32, T)], range: u32, has: bool) -> Option<usize> {
    has.then(|| column.iter().rposition(|(r, _)| *r == range))
        .flatten()
}

/// A range read without an end, in a growing report (see [`KeptNvtx::open`]).
struct OpenRange {
    /// Its index in the kept columns.
    range: u32,
    row_id: i64,
    has_payload: bool,
    has_end_thread: bool,
}

/// The NVTX domains nsys's Python sampler created (by process), as their creations come:
/// nsys creates the domain before its first sample, so each sample's domain is known by then
/// (a mark of a domain not yet seen is kept).
#[derive(Default)]
struct SamplerMarks {
    domains: std::collections::HashSet<(u32, i64)>,
}

impl SamplerMarks {
    /// Whether `row` (of `read_nvtx`'s query) is one of the sampler's marks: a sample. Reads
    /// only the type, thread and domain of the others (and a creation's name).
    fn is_sample(&mut self, b: &Builder, row: &rusqlite::Row) -> bool {
        // The type first: a range (most rows) costs one cell read more, not three.
        let event_type = int(row, 2);
        if !matches!(event_type, NVTX_MARK | NVTX_DOMAIN_CREATE) {
            return false;
        }
        let key = (pid_of(int(row, 5)), int(row, 7));
        match event_type {
            NVTX_MARK => self.domains.contains(&key),
            NVTX_DOMAIN_CREATE => {
                let named = match opt_int(row, 4).and_then(|id| b.string_ids.get(id)) {
                    Some(id) => b.trace.strings.get(id) == PYTHON_SAMPLING_DOMAIN,
                    None => text(row, 3).is_some_and(|t| t == PYTHON_SAMPLING_DOMAIN),
                };
                if named {
                    self.domains.insert(key);
                }
                false
            }
            _ => false,
        }
    }
}

/// A range recorded without an end (a mark has none to record).
fn unended(kind: NvtxKind, end: Option<Ns>) -> bool {
    kind != NvtxKind::Mark && end.is_none()
}

pub(super) fn read_nvtx(b: &mut Builder) -> rusqlite::Result<()> {
    let Some(sql) = b.select(
        "NVTX_EVENTS",
        &[
            Req("start"),
            Opt("end", "NULL"),
            Req("eventType"),
            Opt("text", "NULL"),
            Opt("textId", "NULL"),
            Opt("globalTid", "0"),
            Opt("endGlobalTid", "NULL"),
            Opt("domainId", "0"),
            Opt("color", "NULL"),
            Opt("category", "NULL"),
            Opt("int64Value", "NULL"),
            Opt("uint64Value", "NULL"),
            Opt("doubleValue", "NULL"),
            Opt("int32Value", "NULL"),
            Opt("uint32Value", "NULL"),
            Opt("floatValue", "NULL"),
            Opt("jsonText", "NULL"),
        ],
        "",
    ) else {
        return Ok(());
    };
    // The rowid is nsys's range id; it is not a declared column, so it is
    // appended here rather than asked of `select`. A damaged report whose
    // NVTX_EVENTS has no rowid (a view, a WITHOUT ROWID table) still loads,
    // with every range id 0.
    let with_rowid = sql.replacen(" FROM ", ", rowid FROM ", 1);
    let sql = if b.report.conn.prepare(&with_rowid).is_ok() {
        with_rowid
    } else {
        sql.replacen(" FROM ", ", NULL FROM ", 1)
    };

    // A growing report's rows read by earlier loads are kept, resolved: only
    // the rows added since are read and resolved.
    let mut kept = match b.carry.as_deref_mut() {
        Some(carry) => std::mem::take(carry.part::<KeptNvtx>()),
        None => KeptNvtx::default(),
    };
    // The Python sampler's marks are its samples (`python_samples` reads them, with the
    // CPU samples, or later): not NVTX ranges or marks of the program. Left out here, a
    // load that leaves the samples for later does not decode them (one per sample, each
    // with a half-kilobyte payload). A growing report's loads keep every row: a later load
    // does not see the domain's creation again.
    let mut samples = b.carry.is_none().then(SamplerMarks::default);
    let afresh = grow::read_new_rows(b, "NVTX_EVENTS", &sql, &mut kept.read, |b, row| {
        b.tick(1)?;
        if samples.as_mut().is_some_and(|s| s.is_sample(b, row)) {
            return Ok(None);
        }
        Ok(Some(NvtxRow::read(row)))
    })?;
    let rows = std::mem::take(&mut kept.read.rows);
    if afresh {
        kept = KeptNvtx {
            read: std::mem::take(&mut kept.read),
            extended_loads: kept.extended_loads,
            ..KeptNvtx::default()
        };
    } else {
        kept.reread_open(b, &sql)?;
    }
    for row in rows {
        kept.add(row);
    }
    let places_kept = build(b, &mut kept);
    if let Some(carry) = b.carry.as_deref_mut() {
        *carry.part::<KeptNvtx>() = kept;
        // Every range shown before is at its index still when the new ones
        // all came after the last of their tracks, and those tracks come
        // last in the table: one thread's ranges written as they start (a
        // capture's). Otherwise (a range that holds ranges shown before, as
        // when ranges are written as they end; a new range on a thread
        // whose track is followed by others'), the table is numbered anew.
        if !places_kept {
            carry.numbered_anew(EventKind::Nvtx);
        }
    }
    Ok(())
}

/// The trace's NVTX table, tracks, thread names and categories, from `kept`;
/// keeps the track order in it when the report grows. Answers whether every
/// range of the last load's table is at the same index in this one.
fn build(b: &mut Builder, kept: &mut KeptNvtx) -> bool {
    // Domain names are per process: (pid, domainId) → name.
    let mut domains: HashMap<(u32, i64), String> = HashMap::new();
    let mut categories: Vec<((u32, i64, u32), String)> = Vec::new();
    for row in &kept.naming {
        let global_tid = row.global_tid;
        match row.event_type {
            NVTX_DOMAIN_CREATE => {
                let key = (pid_of(global_tid), row.domain);
                domains.entry(key).or_insert_with(|| row.message(b));
            }
            NVTX_THREAD_NAME => {
                let name = row.message(b);
                b.thread_names.entry(global_tid).or_insert(name);
            }
            _ => {
                // Resolved to the domain's name once all domains are known.
                let key = (pid_of(global_tid), row.domain, row.category);
                categories.push((key, row.message(b)));
            }
        }
    }
    let strings_before = b.trace.strings.len();
    let (mut nvtx, tracks, bad) = match extended(b, kept, strings_before) {
        Some(grown) => {
            kept.extended_loads += 1;
            grown
        }
        None => built_whole(b, kept, strings_before),
    };
    // One track per (thread, domain), made in the order the tracks came.
    for (&(global_tid, domain), track) in kept.tracks.iter().zip(tracks) {
        let thread = b.thread(global_tid);
        let domain = domains
            .get(&(pid_of(global_tid), domain))
            .cloned()
            .unwrap_or_default();
        b.trace.threads[thread as usize]
            .nvtx
            .push(NvtxTrack { domain, track });
    }
    // Threads are made in the order of the ranges' places in the table, as
    // the load before this module made them.
    if let Some(built) = &kept.built {
        let mut ended_elsewhere: Vec<(u32, i64)> = (kept.end_tid.iter())
            .map(|&(r, tid)| (built.place[r as usize], tid))
            .collect();
        ended_elsewhere.sort_unstable_by_key(|&(at, _)| at);
        for (at, end_tid) in ended_elsewhere {
            let thread = b.thread(end_tid);
            nvtx.end_thread.insert(at, thread);
        }
    }
    for thread in &mut b.trace.threads {
        thread.nvtx.sort_by(|a, c| a.domain.cmp(&c.domain));
    }
    // Names given through nvtxNameOsThread fill threads the report left unnamed.
    for thread in &mut b.trace.threads {
        if let (true, Some(name)) = (
            thread.name.is_empty(),
            b.thread_names.get(&thread.global_tid),
        ) {
            thread.name = name.clone();
        }
    }
    for ((pid, domain, category), name) in categories {
        let domain = domains.get(&(pid, domain)).cloned().unwrap_or_default();
        nvtx.category_names.insert((domain, category), name);
    }
    let nvtx = Arc::new(nvtx);
    b.trace.nvtx = nvtx.clone();
    let places_kept = match &mut kept.built {
        Some(built) => {
            let kept_places = built.kept_places;
            if b.carry.is_some() {
                built.table = Some(nvtx);
            } else {
                kept.built = None;
            }
            kept_places
        }
        None => false,
    };
    warn_bad(b, bad, kept.missing, "NVTX events");
    for (event_type, count) in &kept.unknown_types {
        b.warn(format!(
            "{count} NVTX events of unknown type {event_type} were skipped"
        ));
    }
    places_kept
}

/// What a growing report's last load made its NVTX table of, for the next
/// load to extend it (see [`extended`]).
struct Built {
    /// The table published (shared with the last snapshot).
    table: Option<Arc<NvtxRanges>>,
    /// Per track (as [`KeptNvtx::tracks`] numbers them): its rows, levels.
    tracks: Vec<BuiltTrack>,
    /// Each kept range's row in the table.
    place: Vec<u32>,
    /// The table's rows that have no end (drawn to the latest time, which
    /// moves), with their tracks.
    unended: Vec<(u32, u32)>,
    /// The strings the trace held before NVTX's names were interned.
    strings_before: usize,
    /// The inline texts interned for names, in the order they were.
    interned: Vec<u32>,
    /// A range's registered text did not resolve: a later load may resolve it.
    unresolved: bool,
    /// The latest NVTX time then.
    last_ts: Option<Ns>,
    /// Ranges ending before they start, counted.
    bad: u64,
    /// This load kept every range of the last at its index.
    kept_places: bool,
    /// The payloads [`KeptNvtx::payload`] held then: those after came since.
    payloads_seen: usize,
}

/// One track of a [`Built`] table.
#[derive(Clone)]
struct BuiltTrack {
    /// Its rows in the table.
    rows: crate::model::Span,
    track: crate::model::Track,
    /// Lanes of its push/pop ranges, then of the others (start/end ranges and
    /// marks, below the push/pop levels), as placed so far: the holders are
    /// rows of the table.
    pushpop: LaneStack,
    other: LaneStack,
}

/// Where range `r` of `kept` is drawn to: a mark's end is its start, a
/// range ending before it starts ends at its start (counted in `bad`), and an
/// unended one ends at the latest NVTX time, as `nsys stats` counts it.
fn drawn_end(kept: &KeptNvtx, r: usize, bad: &mut u64) -> Ns {
    let start = kept.start[r];
    match (kept.kind[r], kept.end[r]) {
        (NvtxKind::Mark, _) => start,
        (_, Some(e)) => checked_end(start, e, bad),
        (_, None) => kept.last_ts.map_or(start, |t| t.max(start)),
    }
}

/// Where a range holds its lane to: a range without an end holds it for
/// good (it is still open: what starts later on its thread is inside it).
fn lane_end(unended: bool, drawn: Ns) -> Ns {
    if unended { Ns::MAX } else { drawn }
}

/// The table built from every kept range (see [`build`]); remembered in
/// `kept` for the next load of a growing report to extend.
fn built_whole(
    b: &mut Builder,
    kept: &mut KeptNvtx,
    strings_before: usize,
) -> (NvtxRanges, Vec<crate::model::Track>, u64) {
    // Each range's name, interned in the order the ranges came (the order a
    // load that read them all at once interns them in).
    let mut inline_ids: Vec<Option<StrId>> = vec![None; kept.texts.len()];
    let mut interned = Vec::new();
    let mut unresolved = false;
    let names: Vec<StrId> = (kept.text.iter())
        .map(|t| match t.registered.and_then(|id| b.string_ids.get(id)) {
            Some(id) => id,
            None => {
                unresolved |= t.registered.is_some();
                *inline_ids[t.inline as usize].get_or_insert_with(|| {
                    interned.push(t.inline);
                    b.trace.strings.intern(&kept.texts[t.inline as usize])
                })
            }
        })
        .collect();
    let mut bad = 0;
    let ends = kept.ends(&mut bad);
    let g = kept.grouping(&ends);
    let unended: Vec<bool> = (kept.end.iter().zip(&kept.kind))
        .map(|(&end, &kind)| unended(kind, end))
        .collect();
    let order = g.order().into_owned();
    let mut place = vec![0u32; order.len()];
    for (at, &r) in order.iter().enumerate() {
        place[r as usize] = at as u32;
    }
    let mut payloads: Vec<(u32, Payload)> = (kept.payload.iter())
        .map(|(r, p)| (place[*r as usize], p.clone()))
        .collect();
    payloads.sort_unstable_by_key(|e| e.0);
    let mut nvtx = NvtxRanges {
        spans: SpanColumns::from_columns(g.take(&kept.start[..]), &g.view(&ends), g.take(names)),
        payload: Payloads::from_sorted(payloads),
        unended: g.take(&unended[..]).into(),
        row_id: g.take(&kept.row_id[..]).into(),
        kind: g.take(&kept.kind[..]).into(),
        color: g.take(&kept.color[..]).into(),
        category: g.take(&kept.category[..]).into(),
        ..NvtxRanges::default()
    };
    let mut depth = vec![0u8; kept.len()];
    let mut tracks = Vec::with_capacity(kept.tracks.len());
    let mut built_tracks = Vec::with_capacity(kept.tracks.len());
    for i in 0..kept.tracks.len() {
        let mut track = g.track(i, &nvtx.spans);
        let rows = g.tracks[i].clone();
        let (pushpop, other, used) = assign_levels(&nvtx, &mut depth, rows.clone());
        track.depth = used;
        if b.carry.is_some() {
            built_tracks.push(BuiltTrack {
                rows,
                track: track.clone(),
                pushpop,
                other,
            });
        }
        tracks.push(track);
    }
    nvtx.depth = depth.into();
    // The table holds the ranges in `g`'s order, the last load's in its own.
    let kept_places = (kept.sorted.as_ref()).is_some_and(|(last, _)| order.starts_with(last));
    // A growing report's next load extends this table: what it needs.
    let carried = b.carry.is_some();
    let unended_rows = (0..kept.len())
        .filter(|&r| carried && unended[r])
        .map(|r| (place[r], kept.track[r]))
        .collect();
    if carried {
        kept.sorted = Some((order, g.tracks.clone()));
    }
    kept.built = Some(Built {
        table: None,
        tracks: built_tracks,
        place,
        unended: unended_rows,
        strings_before,
        interned,
        unresolved,
        last_ts: kept.last_ts,
        bad,
        kept_places,
        payloads_seen: kept.payload.len(),
    });
    (nvtx, tracks, bad)
}

/// The last load's table (see [`Built`]) with what came since: the ranges
/// added, all on the table's last track and starting after its last; the
/// ends of the ranges that had none then moved (ended since, or drawn to the
/// later latest time). Its rows keep their indexes, levels and names; the
/// columns the last table shares are appended to, only the ends copied.
/// None (the table is built whole) where the result could differ from a
/// table built whole: a new track, or new ranges on another track or before
/// the last; a range that ended before a range after it on its thread
/// started (the levels after it move) or drawn shorter than before; a range
/// whose type, colour or category changed, or that ties in start with
/// another (its end orders them); push/pop levels that grow on a track with
/// other ranges below them; strings or names that may resolve otherwise.
fn extended(
    b: &mut Builder,
    kept: &mut KeptNvtx,
    strings_before: usize,
) -> Option<(NvtxRanges, Vec<crate::model::Track>, u64)> {
    b.carry.as_ref()?;
    let plan = plan_extension(kept, strings_before)?;
    // Every check passed: the table is the last one extended. The built
    // table is out of `kept` while it is extended, and put back with it.
    let mut built = kept.built.take()?;
    let Some(table) = built.table.take() else {
        kept.built = Some(built);
        return None;
    };
    let names = names_of_new(b, kept, &mut built, &plan.new);
    let (moved_ends, longest_moved) = moved_ends(kept, &mut built, &table, &plan.closed);
    let nvtx = extended_columns(kept, &built, &table, &plan, &names, &moved_ends);
    let Extension {
        new,
        grown,
        mut bad,
        fresh_bad,
        order,
        row_of,
        lanes,
        first_row,
        ..
    } = plan;
    bad += fresh_bad;
    built.payloads_seen = kept.payload.len();
    built.place.extend_from_slice(&row_of);
    for (j, &r) in new.iter().enumerate() {
        if unended(kept.kind[r], kept.end[r]) {
            built.unended.push((row_of[j], kept.track[r]));
        }
    }
    let span = ExtendedSpan {
        grown,
        first_row,
        added: new.len() as u32,
    };
    let tracks = extended_tracks(&mut built, lanes, &longest_moved, span, &nvtx);
    if let Some((order_kept, track_spans)) = &mut kept.sorted {
        order_kept.extend(order.iter().map(|&j| new[j] as u32));
        if let Some(k) = grown
            && let Some(span) = track_spans.get_mut(k)
        {
            span.end += new.len() as u32;
        }
    }
    built.last_ts = kept.last_ts;
    built.bad = bad;
    built.kept_places = true;
    built.strings_before = strings_before;
    kept.built = Some(built);
    Some((nvtx, tracks, bad))
}

/// How the last load's table extends, once every check passed: what
/// [`plan_extension`] worked out and [`extended`] writes.
struct Extension {
    /// The new ranges (kept indexes), as they came.
    new: Vec<usize>,
    /// The track they are on (none without new ranges).
    grown: Option<usize>,
    /// The ranges open at the last load that ended since: (row, end, track).
    closed: Vec<(u32, Ns, u32)>,
    /// Ranges ending before they start: the last table's, and the new ones'.
    bad: u64,
    fresh_bad: u64,
    /// Where each new range is drawn to.
    drawn: Vec<Ns>,
    /// The new ranges in track order (indexes into `new`), and each one's row.
    order: Vec<usize>,
    row_of: Vec<u32>,
    /// The tracks whose lanes changed, as they are now.
    lanes: Vec<(usize, BuiltTrack)>,
    /// Each new range's level.
    levels: Vec<u8>,
    /// The first new row, and the rows of the last table.
    first_row: u32,
    old_rows: usize,
}

/// The checks of [`extended`], and where the new ranges go; None where the
/// table is to be built whole.
fn plan_extension(kept: &KeptNvtx, strings_before: usize) -> Option<Extension> {
    let built = kept.built.as_ref()?;
    let table = built.table.as_ref()?;
    // Names interned from the ranges' own texts come after the report's
    // strings: more of those give them other ids.
    let strings_moved = built.strings_before != strings_before && !built.interned.is_empty();
    if strings_moved
        || built.unresolved
        || built.tracks.len() != kept.tracks.len()
        || kept.len() < built.place.len()
    {
        return None;
    }
    let first_row = table.spans.len() as u32;
    let old_rows = built.place.len();
    // The new ranges (kept indexes): on one track, the table's last, after
    // its last start.
    let new: Vec<usize> = (built.place.len()..kept.len()).collect();
    let grown = match new.first() {
        Some(&first) => {
            let k = kept.track[first] as usize;
            let t = &built.tracks[k];
            let after = last_start(table, t);
            let fits = t.rows.end == first_row
                && new.iter().all(|&r| {
                    kept.track[r] as usize == k && after.is_none_or(|a| kept.start[r] > a)
                });
            if !fits {
                return None;
            }
            Some(k)
        }
        None => None,
    };
    let mut bad = built.bad;
    let closed = closed_since(kept, built, table, &mut bad)?;
    // The new ranges in track order: by start, longer first, then as they came.
    let mut fresh_bad = 0;
    let drawn: Vec<Ns> = (new.iter())
        .map(|&r| drawn_end(kept, r, &mut fresh_bad))
        .collect();
    let mut order: Vec<usize> = (0..new.len()).collect();
    order.sort_by_key(|&j| (kept.start[new[j]], std::cmp::Reverse(drawn[j]), j));
    let mut row_of = vec![0u32; new.len()];
    for (at, &j) in order.iter().enumerate() {
        row_of[j] = first_row + at as u32;
    }
    let mut lanes = lanes_of_closed(built, table, &closed);
    let levels = place_new(
        kept, built, &mut lanes, grown, &new, &order, &row_of, &drawn,
    )?;
    Some(Extension {
        new,
        grown,
        closed,
        bad,
        fresh_bad,
        drawn,
        order,
        row_of,
        lanes,
        levels,
        first_row,
        old_rows,
    })
}

/// The start of a built track's last range.
fn last_start(table: &NvtxRanges, t: &BuiltTrack) -> Option<Ns> {
    (!t.rows.is_empty()).then(|| table.spans.start[t.rows.end as usize - 1])
}

/// The ranges open at the last load, read again: (row, end, track) of
/// those that ended since; None when one changed in a way the table's
/// extension would not show.
fn closed_since(
    kept: &KeptNvtx,
    built: &Built,
    table: &NvtxRanges,
    bad: &mut u64,
) -> Option<Vec<(u32, Ns, u32)>> {
    let mut closed: Vec<(u32, Ns, u32)> = Vec::new();
    for &m in &kept.moved {
        let m = m as usize;
        let row = built.place[m] as usize;
        if kept.kind[m] != table.kind[row]
            || kept.color[m] != table.color[row]
            || kept.category[m] != table.category[row]
        {
            return None;
        }
        if let Some((order, spans)) = &kept.sorted
            && kept.ties(order, spans, m as u32)
        {
            return None;
        }
        if kept.payload_of(m as u32, built.payloads_seen) != table.payload.get(&(row as u32)) {
            return None;
        }
        if kept.end[m].is_none() {
            continue;
        }
        let end = drawn_end(kept, m, bad);
        let t = &built.tracks[kept.track[m] as usize];
        // Its lane held past every start after it, then and now; drawn no
        // shorter (its run's longest stays a bound).
        let held = last_start(table, t).is_none_or(|a| end.max(kept.start[m] + 1) > a);
        if !held || end < table.spans.end(row) {
            return None;
        }
        closed.push((row as u32, end, kept.track[m]));
    }
    Some(closed)
}

/// The lanes of the tracks whose holders ended since, holding them to their
/// ends now.
fn lanes_of_closed(
    built: &Built,
    table: &NvtxRanges,
    closed: &[(u32, Ns, u32)],
) -> Vec<(usize, BuiltTrack)> {
    // The lanes of the tracks whose holders ended since hold them to their
    // ends now; the new ranges are placed after the last load's.
    let mut lanes: Vec<(usize, BuiltTrack)> = Vec::new();
    for &(row, end, k) in closed {
        let k = k as usize;
        let at = match lanes.iter().position(|(t, _)| *t == k) {
            Some(at) => at,
            None => {
                lanes.push((k, built.tracks[k].clone()));
                lanes.len() - 1
            }
        };
        let t = &mut lanes[at].1;
        for stack in [&mut t.pushpop, &mut t.other] {
            let holders: Vec<u32> = stack.holders().to_vec();
            for (lane, h) in holders.into_iter().enumerate() {
                if h == row {
                    stack.set_end(lane, table.spans.start[row as usize], end);
                }
            }
        }
    }
    lanes
}

/// The new ranges placed on the lanes of their track (`grown`), after the
/// last load's: each one's level; None when the push/pop levels grow under
/// other ranges (the others' levels would move).
#[allow(clippy::too_many_arguments)]
fn place_new(
    kept: &KeptNvtx,
    built: &Built,
    lanes: &mut Vec<(usize, BuiltTrack)>,
    grown: Option<usize>,
    new: &[usize],
    order: &[usize],
    row_of: &[u32],
    drawn: &[Ns],
) -> Option<Vec<u8>> {
    let mut levels = vec![0u8; new.len()];
    if let Some(k) = grown {
        if !lanes.iter().any(|(t, _)| *t == k) {
            lanes.push((k, built.tracks[k].clone()));
        }
        let t = &mut lanes.iter_mut().find(|(t, _)| *t == k)?.1;
        let offset = |t: &BuiltTrack| {
            if t.pushpop.len() > 0 {
                t.pushpop.used()
            } else {
                0
            }
        };
        let before = offset(t);
        let mut other_rows = t.other.len() > 0;
        let mut own = vec![0u8; new.len()];
        // Push/pop ranges first, then the others, each in track order.
        for pushpop in [true, false] {
            for &j in order {
                let r = new[j];
                if (kept.kind[r] == NvtxKind::PushPop) != pushpop {
                    continue;
                }
                let held_to = lane_end(unended(kept.kind[r], kept.end[r]), drawn[j]);
                let stack = if pushpop {
                    &mut t.pushpop
                } else {
                    &mut t.other
                };
                own[j] = stack.place(row_of[j], kept.start[r], held_to);
                other_rows |= !pushpop;
            }
        }
        if offset(t) != before && other_rows {
            return None;
        }
        for (j, &r) in new.iter().enumerate() {
            levels[j] = match kept.kind[r] {
                NvtxKind::PushPop => own[j],
                _ => own[j].saturating_add(before),
            };
        }
    }

    Some(levels)
}

/// The new ranges' names: the inline texts interned again in the order they
/// were, so that they keep their ids; the new ranges' after them, as they
/// came.
fn names_of_new(b: &mut Builder, kept: &KeptNvtx, built: &mut Built, new: &[usize]) -> Vec<StrId> {
    let mut inline_ids: Vec<Option<StrId>> = vec![None; kept.texts.len()];
    for &t in &built.interned {
        inline_ids[t as usize] = Some(b.trace.strings.intern(&kept.texts[t as usize]));
    }
    let mut names = Vec::with_capacity(new.len());
    for &r in new {
        let t = kept.text[r];
        names.push(match t.registered.and_then(|id| b.string_ids.get(id)) {
            Some(id) => id,
            None => {
                built.unresolved |= t.registered.is_some();
                *inline_ids[t.inline as usize].get_or_insert_with(|| {
                    built.interned.push(t.inline);
                    b.trace.strings.intern(&kept.texts[t.inline as usize])
                })
            }
        });
    }
    names
}

/// A track, and the duration of one of its ranges whose end moved.
type LongestMoved = (u32, Ns);

/// Ends that moved: ranges ended since, and ranges still without one (drawn
/// to the latest time, which moved); with each, its track's run's longest.
fn moved_ends(
    kept: &KeptNvtx,
    built: &mut Built,
    table: &NvtxRanges,
    closed: &[(u32, Ns, u32)],
) -> (Vec<(usize, Ns)>, Vec<LongestMoved>) {
    let mut moved_ends: Vec<(usize, Ns)> = Vec::new();
    let mut longest_moved: Vec<(u32, Ns)> = Vec::new();
    for &(row, end, k) in closed {
        moved_ends.push((row as usize, end));
        longest_moved.push((k, end - table.spans.start[row as usize]));
    }
    built
        .unended
        .retain(|&(row, _)| !closed.iter().any(|c| c.0 == row));
    if kept.last_ts != built.last_ts {
        for &(row, k) in &built.unended {
            let start = table.spans.start[row as usize];
            let end = kept.last_ts.map_or(start, |t| t.max(start));
            moved_ends.push((row as usize, end));
            longest_moved.push((k, end - start));
        }
    }
    (moved_ends, longest_moved)
}

/// The last table's columns with the new ranges appended, in track order,
/// and the ends that moved moved.
fn extended_columns(
    kept: &KeptNvtx,
    built: &Built,
    table: &NvtxRanges,
    plan: &Extension,
    names: &[StrId],
    moved_ends: &[(usize, Ns)],
) -> NvtxRanges {
    let Extension {
        new,
        closed,
        drawn,
        order,
        row_of,
        levels,
        old_rows,
        ..
    } = plan;
    let old_rows = *old_rows;
    let mut spans = table.spans.clone();
    spans.move_ends(moved_ends);
    let mut unended_column = table.unended.clone();
    if !closed.is_empty() {
        let mut copy = unended_column.to_vec();
        for &(row, _, _) in closed {
            copy[row as usize] = false;
        }
        unended_column = copy.into();
    }
    let in_order =
        |column: &dyn Fn(usize) -> Ns| -> Vec<Ns> { order.iter().map(|&j| column(j)).collect() };
    let starts = in_order(&|j| kept.start[new[j]]);
    let ends = in_order(&|j| drawn[j]);
    let names: Vec<StrId> = order.iter().map(|&j| names[j]).collect();
    spans.append(&starts, &ends, &names);
    let mut nvtx = NvtxRanges {
        spans,
        kind: table.kind.clone(),
        depth: table.depth.clone(),
        color: table.color.clone(),
        category: table.category.clone(),
        unended: unended_column,
        row_id: table.row_id.clone(),
        ..NvtxRanges::default()
    };
    let pick =
        |f: &dyn Fn(usize) -> u32| -> Vec<u32> { order.iter().map(|&j| f(new[j])).collect() };
    nvtx.color.extend_from_slice(&pick(&|r| kept.color[r]));
    nvtx.category
        .extend_from_slice(&pick(&|r| kept.category[r]));
    let kinds: Vec<NvtxKind> = order.iter().map(|&j| kept.kind[new[j]]).collect();
    nvtx.kind.extend_from_slice(&kinds);
    let row_ids: Vec<i64> = order.iter().map(|&j| kept.row_id[new[j]]).collect();
    nvtx.row_id.extend_from_slice(&row_ids);
    let open: Vec<bool> = (order.iter())
        .map(|&j| unended(kept.kind[new[j]], kept.end[new[j]]))
        .collect();
    nvtx.unended.extend_from_slice(&open);
    let depth: Vec<u8> = order.iter().map(|&j| levels[j]).collect();
    nvtx.depth.extend_from_slice(&depth);
    // The new ranges' payloads (a range that had one, or none, has it
    // still: checked above).
    let mut payloads: Vec<(u32, Payload)> = (kept.payload[built.payloads_seen..].iter())
        .filter(|(r, _)| *r as usize >= old_rows)
        .map(|(r, p)| (row_of[*r as usize - old_rows], p.clone()))
        .collect();
    payloads.sort_unstable_by_key(|e| e.0);
    nvtx.payload = table.payload.clone();
    for (row, p) in payloads {
        nvtx.payload.push(row, p);
    }
    nvtx
}

/// Where the new rows went: the track that grew, its first new row and how
/// many were added.
#[derive(Clone, Copy)]
struct ExtendedSpan {
    grown: Option<usize>,
    first_row: u32,
    added: u32,
}

/// The tracks: the lanes placed, the grown one's run extended, and a run
/// whose ranges' ends moved given its longest again.
fn extended_tracks(
    built: &mut Built,
    lanes: Vec<(usize, BuiltTrack)>,
    longest_moved: &[LongestMoved],
    span: ExtendedSpan,
    nvtx: &NvtxRanges,
) -> Vec<crate::model::Track> {
    let ExtendedSpan {
        grown,
        first_row,
        added,
    } = span;
    for (k, t) in lanes {
        built.tracks[k] = t;
    }
    let mut tracks = Vec::with_capacity(built.tracks.len());
    for (k, t) in built.tracks.iter_mut().enumerate() {
        let moved = (longest_moved.iter())
            .filter(|&&(c, _)| c as usize == k)
            .map(|&(_, d)| d)
            .max();
        let grows = grown == Some(k);
        if grows || moved.is_some() {
            let mut run = t.track.runs().first().cloned().unwrap_or_default();
            let old_len = run.events.len();
            let first = t.rows.start as usize;
            let end = if grows { first_row + added } else { t.rows.end };
            run.events = t.rows.start..end;
            let fresh = (old_len..run.events.len()).map(|p| nvtx.spans.duration(first + p));
            run.max_duration = fresh.chain(moved).fold(run.max_duration, Ns::max);
            if grows {
                let mut samples = run.sampled_starts.to_vec();
                samples.extend(
                    (old_len..run.events.len())
                        .filter(|p| p % crate::model::SAMPLED_STARTS_STRIDE == 0)
                        .map(|p| nvtx.spans.start[first + p]),
                );
                run.sampled_starts = samples.into();
            }
            t.rows = run.events.clone();
            t.track = crate::model::Track::whole(run, track_depth(&t.pushpop, &t.other));
        }
        tracks.push(t.track.clone());
    }
    tracks
}

/// The levels a track's lanes use: its push/pop levels, then the others'.
fn track_depth(pushpop: &LaneStack, other: &LaneStack) -> u8 {
    let offset = if pushpop.len() > 0 { pushpop.used() } else { 0 };
    let used = offset.saturating_add(if other.len() > 0 { other.used() } else { 0 });
    used.max(1)
}

/// Levels within one NVTX track (rows `rows` of the table `nvtx`, written to
/// `depth`): push/pop ranges take their nesting depth (the level nsys
/// reports); start/end ranges and marks, which need not nest, take lanes
/// below the deepest push/pop level. A range without an end holds its lane
/// for good (it is open still: what starts after it on its thread is in it).
/// Returns the lanes of both kinds and the levels used.
fn assign_levels(
    nvtx: &NvtxRanges,
    depth: &mut [u8],
    rows: crate::model::Span,
) -> (LaneStack, LaneStack, u8) {
    let mut pushpop = LaneStack::default();
    let mut other = LaneStack::default();
    let held_to = |i: usize| lane_end(nvtx.is_unended(i), nvtx.spans.end(i));
    for i in rows.clone().map(|i| i as usize) {
        if nvtx.kind[i] == NvtxKind::PushPop {
            depth[i] = pushpop.place(i as u32, nvtx.spans.start[i], held_to(i));
        }
    }
    let offset = if pushpop.len() > 0 { pushpop.used() } else { 0 };
    for i in rows.map(|i| i as usize) {
        if nvtx.kind[i] != NvtxKind::PushPop {
            let level = other.place(i as u32, nvtx.spans.start[i], held_to(i));
            depth[i] = level.saturating_add(offset);
        }
    }
    let used = track_depth(&pushpop, &other);
    (pushpop, other, used)
}
