//! NVTX ranges and marks: read, resolved, grouped by thread and domain,
//! stacked in levels.
//!
//! A capture writes a range when it starts, without an end, and fills the
//! end in when it ends (so its snapshots show ranges while they last). A
//! growing report's load therefore reads its new rows, and again the rows of
//! the ranges still open at the last load. The table is built again at every
//! load (an open range's end moves, and the model's columns only append);
//! its ranges keep their indexes when the new ones all come after the last
//! of their tracks, and are numbered anew otherwise (a report written by
//! others may bring a parent after the ranges it holds). What a load does
//! not do again is the work per row. Each row is read and resolved once (its
//! track, its text, its kind, what it names) into [`KeptNvtx`]'s columns, in
//! the order rows came; a load then merges the new rows into the last load's
//! track order instead of sorting every track again, and builds the table
//! from the columns.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::cpu::warn_bad;
use super::db::Col::{Optional as Opt, Required as Req};
use super::group::{Grouping, stack_levels};
use super::grow::{self, KeptRows};
use super::{Builder, checked_end, int, opt_int, pid_of, text};
use crate::model::nsys::event_type::*;
use crate::model::{EventKind, Ns, NvtxKind, NvtxRanges, NvtxTrack, Payload, SpanColumns, StrId};

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
        NvtxRow {
            row_id: int(row, 17),
            start: opt_int(row, 0),
            end: opt_int(row, 1),
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

    /// Each range's end as drawn and counted: a mark's is its start, a
    /// range ending before it starts ends at its start (counted in `bad`),
    /// and an unended one ends at the last NVTX timestamp, as `nsys stats`
    /// counts it.
    fn ends(&self, bad: &mut u64) -> Vec<Ns> {
        (self.start.iter().zip(&self.end).zip(&self.kind))
            .map(|((&start, &end), &kind)| match (kind, end) {
                (NvtxKind::Mark, _) => start,
                (_, Some(e)) => checked_end(start, e, bad),
                (_, None) => self.last_ts.map_or(start, |t| t.max(start)),
            })
            .collect()
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
        Some(carry) => std::mem::take(&mut carry.nvtx),
        None => KeptNvtx::default(),
    };
    let afresh = grow::read_new_rows(b, "NVTX_EVENTS", &sql, &mut kept.read, |b, row| {
        b.tick(1)?;
        Ok(Some(NvtxRow::read(row)))
    })?;
    let rows = std::mem::take(&mut kept.read.rows);
    if afresh {
        kept = KeptNvtx {
            read: std::mem::take(&mut kept.read),
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
        carry.nvtx = kept;
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

    // Each range's name, interned in the order the ranges came (the order a
    // load that read them all at once interns them in).
    let mut inline_ids: Vec<Option<StrId>> = vec![None; kept.texts.len()];
    let names: Vec<StrId> = (kept.text.iter())
        .map(|t| match t.registered.and_then(|id| b.string_ids.get(id)) {
            Some(id) => id,
            None => *inline_ids[t.inline as usize]
                .get_or_insert_with(|| b.trace.strings.intern(&kept.texts[t.inline as usize])),
        })
        .collect();

    // One track per (thread, domain).
    let track_keys: Vec<(u32, String)> = (kept.tracks.iter())
        .map(|&(global_tid, domain)| {
            let thread = b.thread(global_tid);
            let domain = domains
                .get(&(pid_of(global_tid), domain))
                .cloned()
                .unwrap_or_default();
            (thread, domain)
        })
        .collect();
    let mut bad = 0;
    let ends = kept.ends(&mut bad);
    let g = kept.grouping(&ends);
    let unended: Vec<bool> = (kept.end.iter().zip(&kept.kind))
        .map(|(&end, &kind)| unended(kind, end))
        .collect();
    let mut nvtx = NvtxRanges {
        spans: SpanColumns::from_columns(g.take(&kept.start[..]), &g.view(&ends), g.take(names)),
        unended: g.take(unended),
        row_id: g.take(&kept.row_id[..]),
        kind: g.take(&kept.kind[..]),
        color: g.take(&kept.color[..]),
        category: g.take(&kept.category[..]),
        depth: vec![0; kept.len()],
        ..NvtxRanges::default()
    };
    if !kept.payload.is_empty() || !kept.end_tid.is_empty() {
        let order = g.order();
        let mut place = vec![0u32; order.len()];
        for (at, &r) in order.iter().enumerate() {
            place[r as usize] = at as u32;
        }
        for (r, p) in &kept.payload {
            nvtx.payload.insert(place[*r as usize], p.clone());
        }
        // Threads are made in the order of the ranges' places in the
        // table, as the load before this module made them.
        let mut ended_elsewhere: Vec<(u32, i64)> = (kept.end_tid.iter())
            .map(|&(r, tid)| (place[r as usize], tid))
            .collect();
        ended_elsewhere.sort_unstable_by_key(|&(at, _)| at);
        for (at, end_tid) in ended_elsewhere {
            let thread = b.thread(end_tid);
            nvtx.end_thread.insert(at, thread);
        }
    }
    for (i, (thread, domain)) in track_keys.into_iter().enumerate() {
        let mut track = g.track(i, &nvtx.spans);
        track.depth = assign_levels(&mut nvtx, track.rows().map(|i| i as usize));
        b.trace.threads[thread as usize]
            .nvtx
            .push(NvtxTrack { domain, track });
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
    b.trace.nvtx = Arc::new(nvtx);
    // The table holds the ranges in `g`'s order, the last load's in its own.
    let places_kept = (kept.sorted.as_ref()).is_some_and(|(last, _)| g.order().starts_with(last));
    if b.carry.is_some() {
        kept.sorted = Some((g.order().into_owned(), g.tracks.clone()));
    }
    warn_bad(b, bad, kept.missing, "NVTX events");
    for (event_type, count) in &kept.unknown_types {
        b.warn(format!(
            "{count} NVTX events of unknown type {event_type} were skipped"
        ));
    }
    places_kept
}

/// Rows within one NVTX track: push/pop ranges take their nesting depth (the
/// level nsys reports); start/end ranges and marks, which need not nest, take
/// lanes below the deepest push/pop level. Returns the rows used.
fn assign_levels(nvtx: &mut NvtxRanges, rows: impl Iterator<Item = usize>) -> u8 {
    let (pushpop, other): (Vec<usize>, Vec<usize>) =
        rows.partition(|&i| nvtx.kind[i] == NvtxKind::PushPop);
    let mut used = 0u8;
    let mut offset = 0u8;
    for rows in [pushpop, other] {
        if rows.is_empty() {
            continue;
        }
        let starts: Vec<Ns> = rows.iter().map(|&i| nvtx.spans.start[i]).collect();
        let ends: Vec<Ns> = rows.iter().map(|&i| nvtx.spans.end(i)).collect();
        let (levels, count) = stack_levels(&starts, &ends);
        for (&i, level) in rows.iter().zip(levels) {
            nvtx.depth[i] = level.saturating_add(offset);
        }
        used = offset.saturating_add(count);
        offset = used;
    }
    used.max(1)
}
