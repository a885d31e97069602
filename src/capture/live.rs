//! A report that grows while a capture runs.
//!
//! Captured records become rows of the nsys export schema, written through the
//! same row writer `synth` uses ([`crate::synth::rows`]), into a working file.
//! A snapshot is that file read by the ordinary loader, so a capture shows
//! exactly what the saved report will show when opened later, and a save is a
//! compacted copy of the file, written aside and renamed.
//!
//! Why not a second builder beside the loader: one conversion (CUPTI → nsys
//! rows) keeps the live view, the saved file and `nsys stats` on that file in
//! agreement by construction. A snapshot appends the kernels and API calls
//! added since the last one to that one's tables, and links them into the
//! correlation slots it shares with the last one
//! ([`crate::loader::load_growing`]); NVTX and the small GPU tables are still
//! read whole (BENCHMARKS.md has the costs). Snapshots are loaded on a
//! thread of their own ([`super::publisher`]) while this file is written.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::records::{
    ApiRecord, KernelRecord, MarkerDataRecord, MarkerPayload, MarkerRecord, MemcpyRecord,
    MemsetRecord, OpPlace, Record, SyncRecord, marker_flag,
};
use crate::model::nsys::event_class::CUDA_RUNTIME;
use crate::model::nsys::event_type::{NVTX_MARK, NVTX_PUSHPOP, NVTX_STARTEND};
use crate::model::{Ns, Trace};
use crate::synth::rows::{self, GpuOpKey, GpuRow};

/// An NVTX range whose end has not been seen yet.
#[derive(Clone, Copy)]
struct OpenRange {
    start: u64,
    global_tid: i64,
    text_id: i64,
    domain_id: i64,
    /// Its row, written when it started (none for a mark, or with no file).
    row_id: Option<i64>,
    /// Its type as written then: start/end when our NVTX wrapper started
    /// it, else push/pop (told for good at its end).
    event_type: i64,
}

/// An NVTX row of a batch, to be written at its end (see
/// [`LiveReport::nvtx_to_write`]).
enum NvtxToWrite {
    /// A domain's creation: (time, thread, id, name).
    Domain(u64, i64, i64, String),
    /// A range that started in the batch, as it started, and how it
    /// ended if it did in the batch.
    Range(u32, OpenRange, Option<EndedRange>),
    /// A mark, with its data as it was when the mark came.
    Mark(OpenRange, Option<MarkerDataRecord>),
}

/// How a range of the batch ended: its end time, type, the thread that
/// ended it where another, and its data as it was then.
#[derive(Clone, Copy)]
struct EndedRange {
    data: Option<MarkerDataRecord>,
    end: u64,
    event_type: i64,
    end_global_tid: Option<i64>,
}

/// Counts of what a capture recorded so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveCounts {
    pub kernels: u64,
    pub copies: u64,
    pub api_calls: u64,
    pub nvtx: u64,
    pub other: u64,
    /// GPU records CUPTI handed over without timestamps (work still running
    /// when a buffer was flushed); left out of the report.
    pub incomplete: u64,
}

impl LiveCounts {
    pub fn total(&self) -> u64 {
        self.kernels + self.copies + self.api_calls + self.nvtx + self.other
    }
}

pub struct LiveReport {
    path: PathBuf,
    conn: Option<Connection>,
    /// The file is in WAL mode: another connection may load it meanwhile.
    readable_while_written: bool,
    pid: u32,
    strings: HashMap<String, i64>,
    thread_names: HashMap<u32, String>,
    named_threads: std::collections::HashSet<u32>,
    streams: std::collections::HashSet<(u32, u32)>,
    /// Synchronization records carry no device; contexts seen on other
    /// records tell it.
    context_devices: HashMap<u32, u32>,
    domains: HashMap<String, i64>,
    open_ranges: HashMap<u32, OpenRange>,
    /// Open range ids per thread, innermost last. CUPTI's marker records do
    /// not say which API made a range: one our NVTX wrapper started is a
    /// start/end range; otherwise (a record dump, another emitter) an end that
    /// closes the innermost range of its thread is taken for a pop.
    thread_stacks: HashMap<u32, Vec<u32>>,
    marker_data: HashMap<u32, MarkerDataRecord>,
    /// Start/end range ids known from elsewhere than this process's NVTX
    /// wrapper (a record dump).
    started_ranges: std::collections::HashSet<u64>,
    counts: LiveCounts,
    first_timestamp: Option<u64>,
    last_timestamp: u64,
    /// CUPTI timestamp (CLOCK_REALTIME ns) of the session's start: reports
    /// store times from there, as nsys does, so the ruler reads 0.25 s rather
    /// than 1,795,440,416.25 s.
    origin: u64,
    /// What snapshots keep from one to the next: the rows read so far.
    carry: crate::loader::Carry,
    /// The kernels of the batch being appended, in order (the kernel table
    /// is written last in a batch, many rows a statement).
    kernels_to_write: Vec<rows::KernelRow>,
    /// The API calls of that batch, likewise.
    apis_to_write: Vec<rows::ApiRow>,
    /// The NVTX rows of the batch being appended, in the order they came:
    /// written at the batch's end, so that a range that ends in the batch it
    /// started in is written once, with its end and data (one statement, not
    /// an insert and two updates: ranges a few microseconds long, tens of
    /// thousands a second, held the writer back).
    nvtx_to_write: Vec<NvtxToWrite>,
    /// The ranges of `nvtx_to_write` still open, by id: where each is in it.
    started_in_batch: HashMap<u32, usize>,
}

fn sql(e: rusqlite::Error) -> String {
    format!("writing the capture: {e}")
}

impl LiveReport {
    /// A new working file in the system's temporary folder, with the nsys
    /// schema, process `pid` named `process_name`.
    pub fn create(pid: u32, process_name: &str, origin: &str) -> Result<LiveReport, String> {
        let mut live = LiveReport::blank(pid)?;
        let conn = live.conn()?;
        rows::create_schema(conn).map_err(sql)?;
        rows::metadata(conn, env!("CARGO_PKG_VERSION"), origin).map_err(sql)?;
        rows::process(conn, global_pid(pid), pid, process_name).map_err(sql)?;
        // nsys's string table starts with the empty string at id 0.
        live.string("").map_err(sql)?;
        Ok(live)
    }

    /// An empty working file with no tables: a replay copies a report's own
    /// schema and rows into it ([`super::replay`]).
    pub fn blank(pid: u32) -> Result<LiveReport, String> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "sightline-capture-{}-{n}.sqlite",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        let conn = Connection::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        // A working file, copied on save: no syncing. In WAL mode, so that
        // snapshots are loaded on another thread while this one writes: a
        // reader sees the last commit before its read began, and neither
        // waits for the other. A folder where SQLite cannot share the WAL's
        // index (some network file systems) keeps the old mode: then no
        // snapshot is loaded while the capture runs.
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(sql)?;
        let readable_while_written = mode.eq_ignore_ascii_case("wal");
        let journal = if readable_while_written {
            ""
        } else {
            "PRAGMA journal_mode=OFF;"
        };
        conn.execute_batch(&format!("{journal} PRAGMA synchronous=OFF;"))
            .map_err(sql)?;
        Ok(LiveReport {
            path,
            conn: Some(conn),
            readable_while_written,
            pid,
            strings: HashMap::new(),
            thread_names: HashMap::new(),
            named_threads: Default::default(),
            streams: Default::default(),
            context_devices: HashMap::new(),
            domains: HashMap::new(),
            open_ranges: HashMap::new(),
            thread_stacks: HashMap::new(),
            marker_data: HashMap::new(),
            started_ranges: Default::default(),
            counts: LiveCounts::default(),
            first_timestamp: None,
            last_timestamp: 0,
            origin: 0,
            carry: Default::default(),
            kernels_to_write: Vec::new(),
            apis_to_write: Vec::new(),
            nvtx_to_write: Vec::new(),
            started_in_batch: HashMap::new(),
        })
    }

    /// The working file's connection, for a source that writes rows itself.
    pub(crate) fn connection(&self) -> Result<&Connection, String> {
        self.conn()
    }

    /// Counts rows a source wrote itself.
    pub(crate) fn add_counts(&mut self, more: LiveCounts) {
        let c = &mut self.counts;
        c.kernels += more.kernels;
        c.copies += more.copies;
        c.api_calls += more.api_calls;
        c.nvtx += more.nvtx;
        c.other += more.other;
        c.incomplete += more.incomplete;
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn counts(&self) -> LiveCounts {
        self.counts
    }

    /// The newest timestamp recorded (CUPTI clock), 0 before any.
    pub fn last_timestamp(&self) -> u64 {
        self.last_timestamp
    }

    /// The newest timestamp recorded, on the report's clock.
    pub fn last_event_time(&self) -> Ns {
        self.session_time(self.last_timestamp)
    }

    /// Nanoseconds between the first and the last timestamp recorded.
    pub fn span_ns(&self) -> u64 {
        self.first_timestamp
            .map_or(0, |first| self.last_timestamp.saturating_sub(first))
    }

    fn conn(&self) -> Result<&Connection, String> {
        self.conn
            .as_ref()
            .ok_or_else(|| "the capture file is closed".to_string())
    }

    fn string(&mut self, value: &str) -> rusqlite::Result<i64> {
        if let Some(&id) = self.strings.get(value) {
            return Ok(id);
        }
        let id = self.strings.len() as i64;
        if let Some(conn) = self.conn.as_ref() {
            rows::string(conn, id, value)?;
        }
        self.strings.insert(value.to_string(), id);
        Ok(id)
    }

    /// Times are written relative to `origin` (a CUPTI timestamp): call
    /// before the first record.
    pub fn set_origin(&mut self, origin: u64) {
        self.origin = origin;
    }

    fn session_time(&self, t: u64) -> i64 {
        (t as i128 - self.origin as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// Tells which NVTX range ids were start/end ranges (from a record dump).
    pub fn mark_started_ranges(&mut self, ids: &[u64]) {
        self.started_ranges.extend(ids.iter().copied());
    }

    /// Names a thread of the captured process (written when it first shows).
    pub fn name_thread(&mut self, tid: u32, name: &str) {
        self.thread_names.insert(tid, name.to_string());
    }

    pub fn add_gpu(&mut self, gpu: &GpuRow) -> Result<(), String> {
        rows::gpu(self.conn()?, gpu).map_err(sql)
    }

    /// Adds a batch of records in one transaction.
    pub fn append(&mut self, records: &[Record]) -> Result<(), String> {
        self.kernels_to_write.clear();
        self.apis_to_write.clear();
        self.nvtx_to_write.clear();
        self.started_in_batch.clear();
        self.conn()?.execute_batch("BEGIN").map_err(sql)?;
        for record in records {
            self.ingest(record).map_err(sql)?;
        }
        self.write_nvtx_of_batch().map_err(sql)?;
        rows::kernels(self.conn()?, &self.kernels_to_write).map_err(sql)?;
        rows::apis(self.conn()?, &self.apis_to_write).map_err(sql)?;
        self.kernels_to_write.clear();
        self.apis_to_write.clear();
        self.conn()?.execute_batch("COMMIT").map_err(sql)
    }

    /// A replay copied every event known before `t` (the report's clock):
    /// the newest timestamp it holds, as far as snapshots' ages go.
    pub fn saw_until(&mut self, t: i64) {
        self.saw(u64::try_from(t).unwrap_or(0));
    }

    fn saw(&mut self, t: u64) {
        if t == 0 {
            return;
        }
        self.first_timestamp = Some(self.first_timestamp.map_or(t, |f| f.min(t)));
        self.last_timestamp = self.last_timestamp.max(t);
    }

    fn global_tid(&mut self, tid: u32) -> rusqlite::Result<i64> {
        let global = global_pid(self.pid) | (tid as i64 & 0xFF_FFFF);
        if self.named_threads.insert(tid)
            && let Some(name) = self.thread_names.get(&tid).cloned()
        {
            let id = self.string(&name)?;
            if let Some(conn) = self.conn.as_ref() {
                rows::thread_name(conn, global, id)?;
            }
        }
        Ok(global)
    }

    /// A GPU record without timestamps is of no use on a timeline and would
    /// stretch the report back to the clock's origin.
    fn incomplete(&mut self, p: &OpPlace) -> bool {
        let missing = p.start == 0 || p.end < p.start;
        if missing {
            self.counts.incomplete += 1;
        }
        missing
    }

    fn op_key(&mut self, p: &OpPlace) -> rusqlite::Result<GpuOpKey> {
        self.context_devices.insert(p.context_id, p.device_id);
        if self.streams.insert((p.context_id, p.stream_id))
            && let Some(conn) = self.conn.as_ref()
        {
            rows::stream(conn, p.stream_id, self.pid, p.context_id, 0)?;
        }
        self.saw(p.start);
        self.saw(p.end);
        Ok(GpuOpKey {
            start: self.session_time(p.start),
            end: self.session_time(p.end),
            device_id: p.device_id,
            context_id: p.context_id,
            stream_id: p.stream_id,
            correlation: p.correlation as i64,
            global_pid: global_pid(self.pid),
        })
    }

    fn ingest(&mut self, record: &Record) -> rusqlite::Result<()> {
        match record {
            Record::Kernel(k) => self.kernel(k),
            Record::Memcpy(m) => self.memcpy(m),
            Record::Memset(m) => self.memset(m),
            Record::Sync(s) => self.sync(s),
            Record::Api(a) => self.api(a),
            Record::Marker(m) => self.marker(m),
            Record::MarkerData(d) => {
                self.marker_data.insert(d.id, *d);
                // CUPTI hands a range's data over after its start: an open
                // range's row gets it now, so a snapshot shows its colour
                // and payload while it lasts.
                match self.open_ranges.get(&d.id).copied() {
                    Some(open) if open.row_id.is_some() => self
                        .write_range(d.id, &open, None, open.event_type, None)
                        .map(|_| ()),
                    _ => Ok(()),
                }
            }
        }
    }

    fn kernel(&mut self, k: &KernelRecord) -> rusqlite::Result<()> {
        if self.incomplete(&k.place) {
            return Ok(());
        }
        let op = self.op_key(&k.place)?;
        let name = self.string(&k.name)?;
        // C++ names arrive mangled; nsys keeps the mangled one beside a
        // demangled one. Benchmark kernels are extern "C": plain names.
        let mangled = k.name.starts_with("_Z").then_some(name);
        let u = |v: i32| v.max(0) as u32;
        if self.conn.is_some() {
            // Written at the end of the batch, many a statement.
            self.kernels_to_write.push(rows::KernelRow {
                op,
                demangled_name: name,
                short_name: name,
                mangled_name: mangled,
                // nsys's ENUM_CUDA_KERNEL_LAUNCH_TYPE is CUPTI's value + 1
                // (0 is "Unknown" there, "Regular" in CUPTI).
                launch_type: k.launch_type.saturating_add(1),
                cache_config: k.cache_config,
                registers_per_thread: k.registers_per_thread as u32,
                grid: k.grid.map(u),
                block: k.block.map(u),
                static_shared_memory: u(k.static_shared_memory),
                dynamic_shared_memory: u(k.dynamic_shared_memory),
                local_memory_per_thread: k.local_memory_per_thread,
                local_memory_total: k.local_memory_total as u64,
                grid_id: k.grid_id as u64,
                shared_memory_executed: k.shared_memory_executed,
                graph_node_id: (k.graph_node_id != 0).then_some(k.graph_node_id),
                shared_memory_limit_config: k.shared_memory_limit_config as u8,
            });
        }
        self.counts.kernels += 1;
        Ok(())
    }

    fn memcpy(&mut self, m: &MemcpyRecord) -> rusqlite::Result<()> {
        if self.incomplete(&m.place) {
            return Ok(());
        }
        let op = self.op_key(&m.place)?;
        if let Some(conn) = self.conn.as_ref() {
            rows::memcpy(
                conn,
                &rows::MemcpyRow {
                    op,
                    bytes: m.bytes,
                    copy_kind: m.copy_kind,
                    src_kind: Some(nsys_memory_kind(m.src_kind as u16)),
                    dst_kind: Some(nsys_memory_kind(m.dst_kind as u16)),
                    src_device: None,
                    dst_device: None,
                    green_context: None,
                },
            )?;
        }
        self.counts.copies += 1;
        Ok(())
    }

    fn memset(&mut self, m: &MemsetRecord) -> rusqlite::Result<()> {
        if self.incomplete(&m.place) {
            return Ok(());
        }
        let op = self.op_key(&m.place)?;
        if let Some(conn) = self.conn.as_ref() {
            rows::memset(
                conn,
                &rows::MemsetRow {
                    op,
                    value: m.value,
                    bytes: m.bytes,
                    mem_kind: Some(nsys_memory_kind(m.memory_kind)),
                    green_context: None,
                },
            )?;
        }
        self.counts.other += 1;
        Ok(())
    }

    fn sync(&mut self, s: &SyncRecord) -> rusqlite::Result<()> {
        let device_id = self
            .context_devices
            .get(&s.context_id)
            .copied()
            .unwrap_or(0);
        let op = self.op_key(&OpPlace {
            start: s.start,
            end: s.end,
            device_id,
            context_id: s.context_id,
            stream_id: s.stream_id,
            correlation: s.correlation,
        })?;
        if let Some(conn) = self.conn.as_ref() {
            rows::sync(
                conn,
                &rows::SyncRow {
                    op,
                    // CUPTI's and nsys's sync type values are the same.
                    sync_type: s.sync_type.min(u8::MAX as u32) as u8,
                    event_id: s.cuda_event_id,
                },
            )?;
        }
        self.counts.other += 1;
        Ok(())
    }

    fn api(&mut self, a: &ApiRecord) -> rusqlite::Result<()> {
        if super::records::untraced_by_nsys(&a.name) {
            return Ok(());
        }
        let global_tid = self.global_tid(a.thread_id)?;
        let name_id = self.string(&a.name)?;
        self.saw(a.start);
        self.saw(a.end);
        self.apis_to_write.push(rows::ApiRow {
            start: self.session_time(a.start),
            end: self.session_time(a.end),
            event_class: CUDA_RUNTIME,
            global_tid,
            correlation: a.correlation as i64,
            name_id,
            return_value: a.return_value as i32,
        });
        self.counts.api_calls += 1;
        Ok(())
    }

    fn domain_id(&mut self, name: &str, at: u64, global_tid: i64) -> rusqlite::Result<i64> {
        if name.is_empty() {
            return Ok(0);
        }
        if let Some(&id) = self.domains.get(name) {
            return Ok(id);
        }
        let id = self.domains.len() as i64 + 1;
        (self.nvtx_to_write).push(NvtxToWrite::Domain(at, global_tid, id, name.to_string()));
        self.domains.insert(name.to_string(), id);
        Ok(id)
    }

    fn marker(&mut self, m: &MarkerRecord) -> rusqlite::Result<()> {
        self.saw(m.timestamp);
        let global_tid = self.global_tid(m.thread_id)?;
        if m.flags & marker_flag::START != 0 {
            let text_id = self.string(&m.name)?;
            let domain_id = self.domain_id(&m.domain, m.timestamp, global_tid)?;
            // Written now, its end to come: a snapshot shows the range while
            // it lasts (counted to the last NVTX timestamp, as nsys counts an
            // unended one), and ranges are numbered by start, as nsys's are.
            // Its type is told at its end; until then a range our NVTX
            // wrapper started is start/end, any other push/pop.
            let event_type = if self.was_started(m.id) {
                NVTX_STARTEND
            } else {
                NVTX_PUSHPOP
            };
            let open = OpenRange {
                start: m.timestamp,
                global_tid,
                text_id,
                domain_id,
                row_id: None,
                event_type,
            };
            (self.started_in_batch).insert(m.id, self.nvtx_to_write.len());
            self.nvtx_to_write
                .push(NvtxToWrite::Range(m.id, open, None));
            self.open_ranges.insert(m.id, open);
            self.thread_stacks
                .entry(m.thread_id)
                .or_default()
                .push(m.id);
        } else if m.flags & marker_flag::END != 0 {
            let Some(open) = self.open_ranges.remove(&m.id) else {
                // An end whose start was never seen: its data goes too.
                self.marker_data.remove(&m.id);
                return Ok(());
            };
            let start_tid = (open.global_tid & 0xFF_FFFF) as u32;
            let stack = self.thread_stacks.entry(start_tid).or_default();
            let innermost = stack.last() == Some(&m.id) && start_tid == m.thread_id;
            stack.retain(|&id| id != m.id);
            let event_type = if innermost && !self.was_started(m.id) {
                NVTX_PUSHPOP
            } else {
                NVTX_STARTEND
            };
            let end_tid = (start_tid != m.thread_id).then_some(global_tid);
            if let Some(at) = self.started_in_batch.remove(&m.id) {
                // Started in this batch: written with its end at the batch's
                // end, with its data as it is now.
                let ended = EndedRange {
                    data: self.marker_data.remove(&m.id),
                    end: m.timestamp,
                    event_type,
                    end_global_tid: end_tid,
                };
                if let Some(NvtxToWrite::Range(_, _, how)) = self.nvtx_to_write.get_mut(at) {
                    *how = Some(ended);
                }
                return Ok(());
            }
            self.write_range(m.id, &open, Some(m.timestamp), event_type, end_tid)?;
            self.marker_data.remove(&m.id);
        } else if m.flags & marker_flag::INSTANTANEOUS != 0 {
            let text_id = self.string(&m.name)?;
            let domain_id = self.domain_id(&m.domain, m.timestamp, global_tid)?;
            let open = OpenRange {
                start: m.timestamp,
                global_tid,
                text_id,
                domain_id,
                row_id: None,
                event_type: NVTX_MARK,
            };
            let data = self.marker_data.get(&m.id).copied();
            self.nvtx_to_write.push(NvtxToWrite::Mark(open, data));
            self.marker_data.remove(&m.id);
        }
        Ok(())
    }

    /// Whether range `id` was opened as a start/end range (by our NVTX
    /// wrapper, or as a record dump says).
    fn was_started(&self, id: u32) -> bool {
        self.started_ranges.contains(&(id as u64))
            || crate::capture::nvtx::was_started_range(id as u64)
    }

    /// Writes the row of range or mark `open` (`id`, CUPTI's): a new one, or
    /// what a range written when it started knows now (its data; `end`, or
    /// `None` while it lasts or when it never ended). Answers the new row's
    /// rowid.
    fn write_range(
        &mut self,
        id: u32,
        open: &OpenRange,
        end: Option<u64>,
        event_type: i64,
        end_global_tid: Option<i64>,
    ) -> rusqlite::Result<Option<i64>> {
        // A range's data (colour, payload), as handed over so far: CUPTI
        // hands it after the start; it is dropped once the range is done.
        let data = self.marker_data.get(&id).copied();
        self.write_range_with(data, open, end, event_type, end_global_tid)
    }

    /// [`LiveReport::write_range`] with the range's data as it was when
    /// the range ended (or, for a mark, when it came), handed over.
    fn write_range_with(
        &mut self,
        data: Option<MarkerDataRecord>,
        open: &OpenRange,
        end: Option<u64>,
        event_type: i64,
        end_global_tid: Option<i64>,
    ) -> rusqlite::Result<Option<i64>> {
        let mut payload = rows::PayloadCells::default();
        match data.and_then(|d| d.payload) {
            Some(MarkerPayload::Int(v)) => payload.int = Some(v),
            // The schema's uint64Value column is a signed SQLite integer.
            Some(MarkerPayload::Uint(v)) => payload.uint = Some(v as i64),
            Some(MarkerPayload::Float(v)) => payload.float = Some(v),
            None => {}
        }
        let Some(conn) = self.conn.as_ref() else {
            return Ok(None);
        };
        let row = rows::NvtxRow {
            start: self.session_time(open.start),
            end: end.map(|e| self.session_time(e)),
            event_type,
            category: data.map_or(0, |d| d.category),
            color: data.map_or(0, |d| d.color),
            global_tid: open.global_tid,
            end_global_tid,
            text_id: open.text_id,
            domain_id: open.domain_id,
            payload,
        };
        if let Some(row_id) = open.row_id {
            rows::nvtx_ended(conn, row_id, &row)?;
            return Ok(None);
        }
        let row_id = rows::nvtx(conn, &row)?;
        self.counts.nvtx += 1;
        Ok(Some(row_id))
    }

    /// Writes the batch's NVTX rows in the order they came: a range that
    /// ended in the batch with its end, one still open without (its row id
    /// kept for its end to come).
    fn write_nvtx_of_batch(&mut self) -> rusqlite::Result<()> {
        self.started_in_batch.clear();
        for row in std::mem::take(&mut self.nvtx_to_write) {
            match row {
                NvtxToWrite::Domain(at, global_tid, id, name) => {
                    if let Some(conn) = self.conn.as_ref() {
                        rows::nvtx_domain(conn, self.session_time(at), global_tid, id, &name)?;
                    }
                }
                NvtxToWrite::Mark(open, data) => {
                    self.write_range_with(data, &open, None, NVTX_MARK, None)?;
                }
                NvtxToWrite::Range(_, open, Some(e)) => {
                    let (end, end_tid) = (Some(e.end), e.end_global_tid);
                    self.write_range_with(e.data, &open, end, e.event_type, end_tid)?;
                }
                NvtxToWrite::Range(id, open, None) => {
                    let row_id = self.write_range(id, &open, None, open.event_type, None)?;
                    // Still open: its end comes as an update of this row
                    // (unless the id started again since, a range of its own).
                    if let Some(o) = self.open_ranges.get_mut(&id)
                        && o.start == open.start
                        && o.row_id.is_none()
                    {
                        o.row_id = row_id;
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes what the ranges that never ended know (their rows are there,
    /// without an end: the loader reads them as nsys does, ending at the
    /// last NVTX timestamp). Call once, at the end.
    pub fn close_open_ranges(&mut self) -> Result<(), String> {
        let open: Vec<(u32, OpenRange)> = self.open_ranges.drain().collect();
        self.conn()?.execute_batch("BEGIN").map_err(sql)?;
        for (id, range) in open {
            self.write_range(id, &range, None, range.event_type, None)
                .map_err(sql)?;
            self.marker_data.remove(&id);
        }
        self.conn()?.execute_batch("COMMIT").map_err(sql)
    }

    /// Adds a capture's counters (per kernel instance of `trace`, this
    /// report's own snapshot) in Sightline's metric tables.
    pub fn write_kernel_metrics(
        &self,
        trace: &Trace,
        set: &crate::model::KernelMetrics,
    ) -> Result<(), String> {
        rows::kernel_metrics(self.conn()?, trace, set).map_err(sql)
    }

    /// Whether another thread may load the file while this one writes it.
    pub(crate) fn readable_while_written(&self) -> bool {
        self.readable_while_written
    }

    /// What a report shown live says when it could not be: `None` where
    /// snapshots could be loaded while the file was written.
    pub(crate) fn not_shown_live(&self) -> Option<String> {
        (!self.readable_while_written).then(|| {
            format!(
                "not shown while it ran: SQLite could not put the working file {} in WAL \
                 mode (is the temporary folder on a network file system?)",
                self.path.display()
            )
        })
    }

    /// Whether the writer leaves checkpoints to a loading thread's
    /// [`Checkpointer`] (true) or runs them itself at each commit past
    /// SQLite's 1,000 pages (false, as when nothing else reads the file).
    pub fn leave_checkpoints_to_loads(&self, leave: bool) -> Result<(), String> {
        let pages = if leave { 0 } else { 1000 };
        self.conn()?
            .query_row(
                &format!("PRAGMA wal_autocheckpoint={pages}"),
                [],
                |_| Ok(()),
            )
            .map_err(sql)
    }

    /// What the snapshots loaded so far keep for the next, taken out: a
    /// loading thread of its own grows it ([`super::publisher`]) and gives
    /// it back with [`LiveReport::give_carry`].
    pub(crate) fn take_carry(&mut self) -> crate::loader::Carry {
        std::mem::take(&mut self.carry)
    }

    pub(crate) fn give_carry(&mut self, carry: crate::loader::Carry) {
        self.carry = carry;
    }

    /// The report as it stands, read by the loader: of its big tables only
    /// the rows added since the last snapshot are read (see
    /// [`crate::loader::load_growing`]; this file only grows). Another
    /// thread may load while this one writes (the file is in WAL mode).
    pub fn snapshot(&mut self) -> Result<Trace, String> {
        self.snapshot_timed().map(|(trace, _)| trace)
    }

    /// [`LiveReport::snapshot`], also returning the time each phase took.
    pub fn snapshot_timed(&mut self) -> Result<(Trace, crate::loader::PhaseTimes), String> {
        crate::loader::load_growing_timed(&self.path, &mut self.carry).map_err(|e| e.to_string())
    }

    /// Saves a compact copy at `dest`: written beside it, then renamed, so a
    /// failure leaves no half file and never touches an existing one. Made
    /// as every output is ([`crate::files::Aside`]): a device or a FIFO at
    /// `dest` is refused, a replaced file's mode kept.
    pub fn save(&self, dest: &Path) -> Result<(), String> {
        let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", dest.display());
        crate::files::check_report_name(dest).map_err(|e| e.to_string())?;
        let temp = crate::files::Aside::beside(dest).map_err(|e| e.to_string())?;
        // VACUUM INTO fills an empty file, as the one just made is.
        let target = temp.path().to_string_lossy().into_owned();
        self.conn()?
            .execute("VACUUM INTO ?1", [&target])
            .map_err(|e| failed(&e))?;
        // The copy keeps the working file's WAL mode, in which a reader must
        // be able to write beside the report: a saved report is an ordinary
        // one, like nsys's.
        Connection::open(temp.path())
            .and_then(|c| c.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(())))
            .map_err(|e| failed(&e))?;
        temp.finish().map_err(|e| failed(&e))
    }
}

impl Drop for LiveReport {
    fn drop(&mut self) {
        // Close before deleting: the working file is ours alone. Its WAL and
        // shared-memory index go too: closing removes them only when the last
        // connection is ours, and a loading thread may still hold one.
        self.conn.take();
        let _ = std::fs::remove_file(&self.path);
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(crate::loader::companion(&self.path, suffix));
        }
    }
}

/// Copies what a capture committed from the working file's WAL into the file
/// itself, on a connection of its own, for a loading thread to run between
/// its loads ([`LiveReport::leave_checkpoints_to_loads`]).
///
/// Why not the writer, as SQLite does by default: a checkpoint copies only
/// pages no reader may still need, and a snapshot's load is reading most of
/// the time. The writer then checkpoints at every commit, a little each time,
/// and its WAL never starts over; it wrote 27 % fewer records a second with
/// loads beside it (`writer_throughput`, BENCHMARKS.md). Run by the loading
/// thread between two of its own reads, a checkpoint copies all committed.
pub struct Checkpointer(Connection);

impl Checkpointer {
    /// None when the file cannot be opened for writing: then the writer
    /// checkpoints, as SQLite does by default.
    pub fn open(path: &Path) -> Option<Checkpointer> {
        Connection::open(path).ok().map(Checkpointer)
    }

    /// Copies what no reader needs any more; a writer that holds the file
    /// meanwhile is not waited for.
    pub fn run(&self) {
        let _ = self
            .0
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    }
}

/// `globalPid` of a local process (no VM id in the high bits).
pub fn global_pid(pid: u32) -> i64 {
    (pid as i64 & 0xFF_FFFF) << 24
}

/// CUPTI's memory kinds (0 unknown, 1 pageable, 2 pinned, 3 device, …) →
/// nsys's `ENUM_CUDA_MEM_KIND` (0 pageable, 1 pinned, 2 device, …, 7 unknown).
fn nsys_memory_kind(cupti: u16) -> u8 {
    match cupti {
        1..=7 => (cupti - 1) as u8,
        _ => 7,
    }
}
