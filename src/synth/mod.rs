//! Writes a [`Trace`] as an Nsight Systems SQLite export (nsys 2025.3, export
//! schema 3.20.3): the tables Sightline's loader reads, with nsys's own table
//! definitions, so other tools that read nsys exports can read ours too.
//!
//! `sightline synth` uses it to scale a real report up for benchmarks (N
//! time-shifted copies); live capture uses it to save recordings (one copy).
//!
//! The output is built in a temporary file beside the destination and renamed
//! into place only once complete: a failed or cancelled write leaves no broken
//! report behind and never touches an existing file of that name.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::{Connection, params};

use crate::model::nsys::event_class::{
    CUDA_RUNTIME as CLASS_CUDA_RUNTIME, GRAPH_NODE as CLASS_GRAPH_NODE,
};
use crate::model::nsys::event_type::{
    NVTX_CATEGORY, NVTX_DOMAIN_CREATE, NVTX_MARK, NVTX_PUSHPOP, NVTX_STARTEND,
};
use crate::model::{Ns, NvtxKind, Payload, StrId, Trace};

/// nsys 2025.3's definitions of the tables we write, and the rows of the enum
/// tables, taken verbatim from a real export.
const SCHEMA: &str = include_str!("nsys_2025_3.sql");

/// Idle time between the end of one copy and the start of the next, so that
/// copies read as separate iterations on the timeline.
pub const COPY_GAP_NS: Ns = 1_000_000;

/// How often (in rows) progress is reported and cancellation checked.
const TICK_ROWS: u64 = 1 << 16;

#[derive(Debug)]
pub enum WriteError {
    /// The request itself cannot be done (e.g. the output is the source).
    Invalid(String),
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    Sqlite {
        path: PathBuf,
        error: rusqlite::Error,
    },
    Cancelled,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Invalid(why) => f.write_str(why),
            WriteError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            WriteError::Sqlite { path, error } => {
                write!(f, "{}: writing the report failed: {error}", path.display())
            }
            WriteError::Cancelled => f.write_str("writing the report was cancelled"),
        }
    }
}

impl std::error::Error for WriteError {}

/// What a write produced.
#[derive(Debug, Clone, Default)]
pub struct WriteSummary {
    pub copies: usize,
    /// Event rows written (all copies), the count `Trace::event_count` will see
    /// when the report is loaded back, less what `not_written` lists.
    pub events: u64,
    /// Time shift between consecutive copies.
    pub copy_shift: Ns,
    /// Correlation id offset between consecutive copies.
    pub correlation_shift: u32,
    /// Parts of the trace the writer does not save yet, for the caller to tell.
    pub not_written: Vec<String>,
}

/// Writes `trace` to `path` as an nsys export holding `copies` copies of it,
/// copy k shifted by k × (trace span + [`COPY_GAP_NS`]) and its correlation
/// ids by k × (largest id + 1), so each copy's API calls pair with its own GPU
/// work. Threads, processes and streams keep their ids: copies line up on the
/// same timeline rows. `progress` gets the fraction done now and then; setting
/// `cancel` stops the write with [`WriteError::Cancelled`].
pub fn write_report(
    trace: &Trace,
    copies: usize,
    path: &Path,
    progress: &mut dyn FnMut(f32),
    cancel: &AtomicBool,
) -> Result<WriteSummary, WriteError> {
    ReportWriter::new(trace, copies)?.write(path, progress, cancel)
}

/// The writer; [`write_report`] is the usual way in.
pub struct ReportWriter<'t> {
    trace: &'t Trace,
    copies: usize,
    time_shift: Ns,
    correlation_shift: u32,
    /// pid → the `globalPid` to write (the model keeps only the pid; the
    /// high bits come from any thread of the process).
    global_pids: HashMap<u32, i64>,
    /// Strings the trace holds outside its string table (thread names given
    /// through NVTX), given ids after it.
    extra_strings: Vec<String>,
    extra_ids: HashMap<String, i64>,
}

impl<'t> ReportWriter<'t> {
    pub fn new(trace: &'t Trace, copies: usize) -> Result<Self, WriteError> {
        if copies == 0 {
            return Err(WriteError::Invalid(
                "the number of copies must be at least 1".into(),
            ));
        }
        let (lo, hi) = trace.info.time_range;
        // In i128: a damaged report may span the whole i64 clock.
        let span = (hi as i128 - lo as i128).max(0);
        let time_shift = span + COPY_GAP_NS as i128;
        if (copies as i128 - 1) * time_shift + hi as i128 > i64::MAX as i128 {
            return Err(WriteError::Invalid(format!(
                "{copies} copies of a {span} ns trace do not fit the 64-bit nanosecond clock"
            )));
        }
        let time_shift = time_shift as Ns;
        let max_correlation = [
            &trace.cuda_api.correlation,
            &trace.kernels.correlation,
            &trace.memcpys.correlation,
            &trace.memsets.correlation,
            &trace.syncs.correlation,
        ]
        .iter()
        .flat_map(|c| c.iter().max())
        .chain(trace.cuda_events.iter().map(|e| &e.correlation))
        .copied()
        .max()
        .unwrap_or(0);
        // The loader keeps correlation ids in 32 bits: every copy's must fit.
        let correlation_shift = max_correlation as u64 + 1;
        if correlation_shift * copies as u64 > u32::MAX as u64 {
            return Err(WriteError::Invalid(format!(
                "{copies} copies need correlation ids up to {}, more than 32 bits hold",
                correlation_shift * copies as u64
            )));
        }
        let mut global_pids = HashMap::new();
        for t in &trace.threads {
            global_pids
                .entry(t.pid)
                .or_insert(t.global_tid & !0xFF_FFFF);
        }
        let mut writer = ReportWriter {
            trace,
            copies,
            time_shift,
            correlation_shift: correlation_shift as u32,
            global_pids,
            extra_strings: Vec::new(),
            extra_ids: HashMap::new(),
        };
        for t in &trace.threads {
            writer.string_id(&t.name);
        }
        for domain in trace
            .threads
            .iter()
            .flat_map(|t| &t.nvtx)
            .map(|n| &n.domain)
        {
            writer.string_id(domain);
        }
        Ok(writer)
    }

    fn global_pid(&self, pid: u32) -> i64 {
        self.global_pids
            .get(&pid)
            .copied()
            .unwrap_or((pid as i64) << 24)
    }

    /// The `StringIds.id` of `value`: its id in the trace's table, or a new one.
    fn string_id(&mut self, value: &str) -> i64 {
        if let Some(id) = self.trace.strings.find(value) {
            return id.0 as i64;
        }
        if let Some(&id) = self.extra_ids.get(value) {
            return id;
        }
        let id = (self.trace.strings.len() + self.extra_strings.len()) as i64;
        self.extra_strings.push(value.to_string());
        self.extra_ids.insert(value.to_string(), id);
        id
    }

    fn known_string_id(&self, value: &str) -> i64 {
        self.trace
            .strings
            .find(value)
            .map(|id| id.0 as i64)
            .or_else(|| self.extra_ids.get(value).copied())
            .unwrap_or(0)
    }

    /// Events written per copy.
    fn events_per_copy(&self) -> u64 {
        let t = self.trace;
        (t.cuda_api.spans.len()
            + t.osrt.spans.len()
            + t.nvtx.spans.len()
            + t.kernels.spans.len()
            + t.memcpys.spans.len()
            + t.memsets.spans.len()
            + t.syncs.spans.len()
            + t.cuda_events.len()
            + t.graph_records.iter().filter(|g| g.is_node).count()) as u64
    }

    pub fn write(
        &self,
        path: &Path,
        progress: &mut dyn FnMut(f32),
        cancel: &AtomicBool,
    ) -> Result<WriteSummary, WriteError> {
        check_destination(path, &self.trace.info.path)?;
        let temp = TempFile::beside(path)?;
        let sql_err = |error| WriteError::Sqlite {
            path: path.to_path_buf(),
            error,
        };
        let conn = Connection::open(&temp.path).map_err(sql_err)?;
        // A temporary file that is deleted on any failure needs no journal nor
        // syncing: the rename below is what makes the report appear.
        conn.execute_batch(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;
             PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;",
        )
        .map_err(sql_err)?;
        conn.execute_batch("BEGIN").map_err(sql_err)?;
        let mut ticker = Ticker {
            done: 0,
            total: (self.events_per_copy() * self.copies as u64).max(1),
            progress,
            cancel,
        };
        self.write_all(&conn, &mut ticker).map_err(|e| match e {
            Failure::Cancelled => WriteError::Cancelled,
            Failure::Sqlite(error) => sql_err(error),
        })?;
        conn.execute_batch("COMMIT").map_err(sql_err)?;
        conn.close().map_err(|(_, e)| sql_err(e))?;
        temp.persist(path)?;
        (ticker.progress)(1.0);
        Ok(WriteSummary {
            copies: self.copies,
            events: self.events_per_copy() * self.copies as u64,
            copy_shift: self.time_shift,
            correlation_shift: self.correlation_shift,
            not_written: self.not_written(),
        })
    }

    fn not_written(&self) -> Vec<String> {
        let t = self.trace;
        let mut out = Vec::new();
        if !t.graph_execs.spans.is_empty() {
            out.push(format!(
                "{} CUDA graph executions",
                t.graph_execs.spans.len()
            ));
        }
        let graphs = t.graph_records.iter().filter(|g| !g.is_node).count();
        if graphs > 0 {
            out.push(format!("{graphs} CUDA graph records (CUDA_GRAPH_EVENTS)"));
        }
        let samples: usize = t.metrics.iter().map(|m| m.timestamp.len()).sum();
        if samples > 0 {
            out.push(format!("{samples} GPU metric samples"));
        }
        out
    }

    fn write_all(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        conn.execute_batch(SCHEMA)?;
        self.write_metadata(conn)?;
        self.write_strings(conn)?;
        self.write_processes_threads(conn)?;
        self.write_devices_streams(conn)?;
        self.write_enum_labels(conn)?;
        let tables: [TableWriter<'t>; 9] = [
            Self::write_cuda_api,
            Self::write_osrt,
            Self::write_nvtx,
            Self::write_kernels,
            Self::write_memcpys,
            Self::write_memsets,
            Self::write_syncs,
            Self::write_cuda_events,
            Self::write_graph_nodes,
        ];
        for write_table in tables {
            // Checked per table too, so a small report still stops promptly.
            tick.check()?;
            write_table(self, conn, tick)?;
        }
        Ok(())
    }

    fn shifts(&self) -> impl Iterator<Item = (Ns, i64)> + use<> {
        let (dt, dc) = (self.time_shift, self.correlation_shift as i64);
        (0..self.copies as i64).map(move |k| (k * dt, k * dc))
    }

    fn write_metadata(&self, conn: &Connection) -> rusqlite::Result<()> {
        let mut stmt =
            conn.prepare("INSERT INTO META_DATA_EXPORT (name, value) VALUES (?1, ?2)")?;
        let source = &self.trace.info.path;
        let rows = [
            ("EXPORT_PRODUCT_NAME", "Sightline".to_string()),
            (
                "EXPORT_PRODUCT_VERSION",
                self.trace
                    .info
                    .nsys_version
                    .clone()
                    .unwrap_or_else(|| "2025.3".into()),
            ),
            ("EXPORT_SCHEMA_VERSION", "3.20.3".into()),
            ("EXPORT_SCHEMA_VERSION_MAJOR", "3".into()),
            ("EXPORT_SCHEMA_VERSION_MINOR", "20".into()),
            ("EXPORT_SCHEMA_VERSION_MICRO", "3".into()),
            (
                "SIGHTLINE_WRITER",
                format!(
                    "sightline {}: {} cop{} of {source}",
                    env!("CARGO_PKG_VERSION"),
                    self.copies,
                    if self.copies == 1 { "y" } else { "ies" }
                ),
            ),
        ];
        for (name, value) in rows {
            stmt.execute(params![name, value])?;
        }
        Ok(())
    }

    fn write_strings(&self, conn: &Connection) -> rusqlite::Result<()> {
        let mut stmt = conn.prepare("INSERT INTO StringIds (id, value) VALUES (?1, ?2)")?;
        for (id, value) in self.trace.strings.iter() {
            stmt.execute(params![id.0, value])?;
        }
        let base = self.trace.strings.len();
        for (i, value) in self.extra_strings.iter().enumerate() {
            stmt.execute(params![(base + i) as i64, value])?;
        }
        Ok(())
    }

    fn write_processes_threads(&self, conn: &Connection) -> rusqlite::Result<()> {
        let mut stmt =
            conn.prepare("INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?1, ?2, ?3)")?;
        for p in &self.trace.processes {
            stmt.execute(params![self.global_pid(p.pid), p.pid, p.name])?;
        }
        let mut stmt = conn.prepare(
            "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?1, NULL, ?2)",
        )?;
        for t in self.trace.threads.iter().filter(|t| !t.name.is_empty()) {
            stmt.execute(params![self.known_string_id(&t.name), t.global_tid])?;
        }
        Ok(())
    }

    fn write_devices_streams(&self, conn: &Connection) -> rusqlite::Result<()> {
        let mut stmt = conn.prepare(
            "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, l2CacheSize, totalMemory,
                memoryBandwidth, clockRate, smCount, computeMajor, computeMinor)
             VALUES (0, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for g in &self.trace.gpus {
            // The loader invents a bare row for devices that ran work but had
            // no TARGET_INFO_GPU row; writing it back would invent facts.
            let placeholder =
                g.sm_count == 0 && g.memory_bytes == 0 && g.name == format!("GPU {}", g.device_id);
            if placeholder {
                continue;
            }
            stmt.execute(params![
                g.device_id,
                g.name,
                g.bus_location,
                g.l2_cache_bytes as i64,
                g.memory_bytes as i64,
                g.memory_bandwidth as i64,
                g.clock_rate_khz as i64 * 1000,
                g.sm_count,
                g.compute_capability.0,
                g.compute_capability.1,
            ])?;
        }
        let mut stmt = conn.prepare(
            "INSERT INTO TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, processId, contextId, priority, flag)
             VALUES (?1, 0, 0, ?2, ?3, ?4, 0)",
        )?;
        for s in &self.trace.streams {
            // nsys stores the priority as an unsigned 32-bit value.
            stmt.execute(params![s.stream_id, s.pid, s.context_id, s.priority as u32])?;
        }
        Ok(())
    }

    /// Labels the trace gives to memcpy and sync kinds that the standard enum
    /// rows lack or name differently, so the names survive the round trip.
    fn write_enum_labels(&self, conn: &Connection) -> rusqlite::Result<()> {
        let t = self.trace;
        let mut copy_labels: HashMap<u8, &str> = HashMap::new();
        for (i, &kind) in t.memcpys.copy_kind.iter().enumerate() {
            copy_labels.entry(kind).or_insert_with(|| {
                let name = t.name(t.memcpys.spans.name[i]);
                name.strip_prefix("[CUDA memcpy ")
                    .and_then(|s| s.strip_suffix(']'))
                    .unwrap_or(name)
            });
        }
        let mut sync_labels: HashMap<u8, &str> = HashMap::new();
        for (i, &kind) in t.syncs.sync_type.iter().enumerate() {
            sync_labels
                .entry(kind)
                .or_insert_with(|| t.name(t.syncs.spans.name[i]));
        }
        for (table, labels) in [
            ("ENUM_CUDA_MEMCPY_OPER", copy_labels),
            ("ENUM_CUPTI_SYNC_TYPE", sync_labels),
        ] {
            let mut stmt = conn.prepare(&format!(
                "INSERT INTO {table} (id, name, label) VALUES (?1, NULL, ?2)
                 ON CONFLICT(id) DO UPDATE SET label = excluded.label"
            ))?;
            for (id, label) in labels {
                // The loader's own fallback for a value no enum row names:
                // leaving the row out reproduces it.
                if !label.starts_with("Unknown (") && !label.starts_with("Unknown sync (") {
                    stmt.execute(params![id, label])?;
                }
            }
        }
        Ok(())
    }

    fn write_cuda_api(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let api = &self.trace.cuda_api;
        let mut stmt = conn.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,
                nameId, returnValue, callchainId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL)",
        )?;
        for (dt, dc) in self.shifts() {
            for thread in &self.trace.threads {
                for i in thread.cuda_api.events.clone() {
                    let i = i as usize;
                    stmt.execute(params![
                        api.spans.start[i] + dt,
                        api.spans.end[i] + dt,
                        CLASS_CUDA_RUNTIME,
                        thread.global_tid,
                        api.correlation[i] as i64 + dc,
                        api.spans.name[i].0,
                        api.return_value[i],
                    ])?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_osrt(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let os = &self.trace.osrt;
        // callchainId is NOT NULL in nsys's schema; 0 is what nsys writes for
        // calls whose backtrace was not kept.
        let mut stmt = conn.prepare(
            "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, returnValue,
                nestingLevel, callchainId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, 0)",
        )?;
        for (dt, _) in self.shifts() {
            for thread in &self.trace.threads {
                for i in thread.osrt.events.clone() {
                    let i = i as usize;
                    stmt.execute(params![
                        os.spans.start[i] + dt,
                        os.spans.end[i] + dt,
                        os.event_class[i],
                        thread.global_tid,
                        os.spans.name[i].0,
                        os.return_value[i],
                    ])?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_nvtx(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let t = self.trace;
        let nvtx = &t.nvtx;
        // Domain ids are per process; 0 is the default (unnamed) domain.
        let mut domains: HashMap<(u32, &str), i64> = HashMap::new();
        let mut domain_stmt = conn.prepare(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
             VALUES (?1, NULL, ?2, ?3, ?4, ?5)",
        )?;
        for thread in &t.threads {
            for track in thread.nvtx.iter().filter(|n| !n.domain.is_empty()) {
                let next = 1 + domains.keys().filter(|(pid, _)| *pid == thread.pid).count() as i64;
                if let std::collections::hash_map::Entry::Vacant(e) =
                    domains.entry((thread.pid, track.domain.as_str()))
                {
                    e.insert(next);
                    domain_stmt.execute(params![
                        t.info.time_range.0,
                        NVTX_DOMAIN_CREATE,
                        track.domain,
                        thread.global_tid,
                        next
                    ])?;
                }
            }
        }
        // Category names, in each process that has the category's domain.
        let mut category_stmt = conn.prepare(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, category, text, globalTid, domainId)
             VALUES (?1, NULL, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for ((domain_name, category), name) in &t.nvtx.category_names {
            for process in &t.processes {
                let Some(thread) = process
                    .threads
                    .first()
                    .and_then(|&i| t.threads.get(i as usize))
                else {
                    continue;
                };
                let domain = if domain_name.is_empty() {
                    Some(0)
                } else {
                    domains.get(&(process.pid, domain_name.as_str())).copied()
                };
                if let Some(domain) = domain {
                    category_stmt.execute(params![
                        t.info.time_range.0,
                        NVTX_CATEGORY,
                        category,
                        name,
                        thread.global_tid,
                        domain
                    ])?;
                }
            }
        }
        let mut stmt = conn.prepare(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, category, color, globalTid, endGlobalTid,
                textId, domainId, int64Value, uint64Value, doubleValue, jsonText)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )?;
        for (dt, _) in self.shifts() {
            for thread in &t.threads {
                for track in &thread.nvtx {
                    let domain = if track.domain.is_empty() {
                        0
                    } else {
                        domains
                            .get(&(thread.pid, track.domain.as_str()))
                            .copied()
                            .unwrap_or(0)
                    };
                    for i in track.track.events.clone() {
                        let idx = i as usize;
                        let kind = nvtx.kind[idx];
                        let (event_type, end) = match kind {
                            NvtxKind::Mark => (NVTX_MARK, None),
                            NvtxKind::PushPop => (NVTX_PUSHPOP, Some(nvtx.spans.end[idx] + dt)),
                            NvtxKind::StartEnd => (NVTX_STARTEND, Some(nvtx.spans.end[idx] + dt)),
                        };
                        // A single copy keeps an unended range unended (the
                        // loader stretches it to the last NVTX timestamp again).
                        // With several copies that stretch would reach into the
                        // last copy, so each copy gets the end the range had.
                        let end = end.filter(|_| self.copies > 1 || !nvtx.unended[idx]);
                        let end_tid = nvtx
                            .end_thread
                            .get(&i)
                            .and_then(|&th| t.threads.get(th as usize))
                            .map(|th| th.global_tid);
                        let (mut int, mut uint, mut float, mut json) = (None, None, None, None);
                        match nvtx.payload.get(&i) {
                            Some(Payload::Int(v)) => int = Some(*v),
                            Some(Payload::Uint(v)) => uint = Some(*v as i64),
                            Some(Payload::Float(v)) => float = Some(*v),
                            Some(Payload::Json(v)) => json = Some(v.as_str()),
                            None => {}
                        }
                        let color = nvtx.color[idx];
                        let category = nvtx.category[idx];
                        stmt.execute(params![
                            nvtx.spans.start[idx] + dt,
                            end,
                            event_type,
                            (category != 0).then_some(category),
                            (color != 0).then_some(color),
                            thread.global_tid,
                            end_tid,
                            nvtx.spans.name[idx].0,
                            domain,
                            int,
                            uint,
                            float,
                            json,
                        ])?;
                        tick.row()?;
                    }
                }
            }
        }
        Ok(())
    }

    fn write_kernels(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let k = &self.trace.kernels;
        let mut stmt = conn.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,
                correlationId, globalPid, demangledName, shortName, mangledName, launchType,
                cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
                staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal,
                gridId, sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
        )?;
        let default_config = Default::default();
        for (dt, dc) in self.shifts() {
            for s in &self.trace.streams {
                let gpid = self.global_pid(s.pid);
                for i in s.kernels.events.clone() {
                    let i = i as usize;
                    let c = k
                        .configs
                        .get(k.config[i] as usize)
                        .unwrap_or(&default_config);
                    let mangled = k.mangled_name[i];
                    let node = k.graph_node_id[i];
                    stmt.execute(params![
                        k.spans.start[i] + dt,
                        k.spans.end[i] + dt,
                        s.device_id,
                        s.context_id,
                        s.stream_id,
                        k.correlation[i] as i64 + dc,
                        gpid,
                        k.spans.name[i].0,
                        k.short_name[i].0,
                        (mangled != StrId(0)).then_some(mangled.0),
                        c.launch_type,
                        c.cache_config,
                        c.registers_per_thread,
                        c.grid[0],
                        c.grid[1],
                        c.grid[2],
                        c.block[0],
                        c.block[1],
                        c.block[2],
                        c.static_shared_memory,
                        c.dynamic_shared_memory,
                        c.local_memory_per_thread,
                        c.local_memory_total as i64,
                        k.grid_id[i] as i64,
                        c.shared_memory_executed,
                        (node != 0).then_some(node as i64),
                        c.shared_memory_limit_config,
                    ])?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_memcpys(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let m = &self.trace.memcpys;
        let mut stmt = conn.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId,
                correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId,
                dstDeviceId, greenContextId)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        // 255 is the model's "the report did not say".
        let mem_kind = |k: u8| (k != 255).then_some(k);
        // -1 is the model's NULL device; a model built without the column has none.
        let device = |v: &[i32], i: usize| v.get(i).copied().filter(|&d| d >= 0);
        for (dt, dc) in self.shifts() {
            for s in &self.trace.streams {
                let gpid = self.global_pid(s.pid);
                for i in s.memcpys.events.clone() {
                    let i = i as usize;
                    stmt.execute(params![
                        m.spans.start[i] + dt,
                        m.spans.end[i] + dt,
                        s.device_id,
                        s.context_id,
                        s.stream_id,
                        m.correlation[i] as i64 + dc,
                        gpid,
                        m.bytes[i] as i64,
                        m.copy_kind[i],
                        mem_kind(m.src_kind[i]),
                        mem_kind(m.dst_kind[i]),
                        device(&m.src_device, i),
                        device(&m.dst_device, i),
                        green(&m.green_context, i),
                    ])?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_memsets(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let m = &self.trace.memsets;
        let mut stmt = conn.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId,
                correlationId, globalPid, value, bytes, memKind, greenContextId)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        for (dt, dc) in self.shifts() {
            for s in &self.trace.streams {
                let gpid = self.global_pid(s.pid);
                for i in s.memsets.events.clone() {
                    let i = i as usize;
                    let kind = m.mem_kind[i];
                    stmt.execute(params![
                        m.spans.start[i] + dt,
                        m.spans.end[i] + dt,
                        s.device_id,
                        s.context_id,
                        s.stream_id,
                        m.correlation[i] as i64 + dc,
                        gpid,
                        m.value[i],
                        m.bytes[i] as i64,
                        (kind != 255).then_some(kind),
                        green(&m.green_context, i),
                    ])?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_syncs(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let y = &self.trace.syncs;
        let mut stmt = conn.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId,
                streamId, correlationId, globalPid, syncType, eventId)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        for (dt, dc) in self.shifts() {
            for s in &self.trace.streams {
                let gpid = self.global_pid(s.pid);
                for i in s.syncs.events.clone() {
                    let i = i as usize;
                    stmt.execute(params![
                        y.spans.start[i] + dt,
                        y.spans.end[i] + dt,
                        s.device_id,
                        s.context_id,
                        s.stream_id,
                        y.correlation[i] as i64 + dc,
                        gpid,
                        y.sync_type[i],
                        y.event_id[i],
                    ])?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_cuda_events(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        if self.trace.cuda_events.is_empty() {
            return Ok(());
        }
        let mut stmt = conn.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT (deviceId, contextId, streamId,
                correlationId, globalPid, eventId) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (_, dc) in self.shifts() {
            for e in &self.trace.cuda_events {
                let Some(s) = self.trace.streams.get(e.stream as usize) else {
                    continue;
                };
                stmt.execute(params![
                    s.device_id,
                    s.context_id,
                    s.stream_id,
                    e.correlation as i64 + dc,
                    self.global_pid(s.pid),
                    e.event_id,
                ])?;
                tick.row()?;
            }
        }
        Ok(())
    }

    fn write_graph_nodes(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        if !self.trace.graph_records.iter().any(|g| g.is_node) {
            return Ok(());
        }
        let mut stmt = conn.prepare(
            "INSERT INTO CUDA_GRAPH_NODE_EVENTS (start, end, eventClass, globalTid, nameId,
                graphNodeId, originalGraphNodeId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (dt, _) in self.shifts() {
            for g in self.trace.graph_records.iter().filter(|g| g.is_node) {
                let tid = self
                    .trace
                    .threads
                    .get(g.thread as usize)
                    .map_or(0, |t| t.global_tid);
                stmt.execute(params![
                    g.start + dt,
                    g.end + dt,
                    CLASS_GRAPH_NODE,
                    tid,
                    g.name.0,
                    g.id as i64,
                    g.original_id.map(|o| o as i64),
                ])?;
                tick.row()?;
            }
        }
        Ok(())
    }
}

/// Writes one event table, every copy.
type TableWriter<'t> = fn(&ReportWriter<'t>, &Connection, &mut Ticker) -> Result<(), Failure>;

/// Why the table writers stopped.
enum Failure {
    Sqlite(rusqlite::Error),
    Cancelled,
}

impl From<rusqlite::Error> for Failure {
    fn from(e: rusqlite::Error) -> Self {
        Failure::Sqlite(e)
    }
}

struct Ticker<'a> {
    done: u64,
    total: u64,
    progress: &'a mut dyn FnMut(f32),
    cancel: &'a AtomicBool,
}

impl Ticker<'_> {
    fn row(&mut self) -> Result<(), Failure> {
        self.done += 1;
        if self.done.is_multiple_of(TICK_ROWS) {
            self.check()?;
            (self.progress)((self.done as f64 / self.total as f64).min(1.0) as f32);
        }
        Ok(())
    }

    fn check(&self) -> Result<(), Failure> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Failure::Cancelled);
        }
        Ok(())
    }
}

/// Refuses destinations that cannot work or would destroy the source.
fn check_destination(path: &Path, source: &str) -> Result<(), WriteError> {
    if path.is_dir() {
        return Err(WriteError::Invalid(format!(
            "{}: is a directory, not a file name for the report",
            path.display()
        )));
    }
    if !source.is_empty()
        && let (Ok(a), Ok(b)) = (std::fs::canonicalize(path), std::fs::canonicalize(source))
        && a == b
    {
        return Err(WriteError::Invalid(format!(
            "{}: is the source report; choose another output file",
            path.display()
        )));
    }
    Ok(())
}

/// The file the report is built in; deleted unless [`TempFile::persist`] moved it.
struct TempFile {
    path: PathBuf,
    done: bool,
}

impl TempFile {
    fn beside(dest: &Path) -> Result<TempFile, WriteError> {
        let name = dest
            .file_name()
            .ok_or_else(|| WriteError::Invalid(format!("{}: not a file name", dest.display())))?;
        let mut temp_name = name.to_os_string();
        // The pid keeps two writers of the same output from sharing a file.
        temp_name.push(format!(".tmp{}", std::process::id()));
        let path = dest.with_file_name(temp_name);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(WriteError::Io { path, error }),
        }
        Ok(TempFile { path, done: false })
    }

    fn persist(mut self, dest: &Path) -> Result<(), WriteError> {
        std::fs::rename(&self.path, dest).map_err(|error| WriteError::Io {
            path: dest.to_path_buf(),
            error,
        })?;
        self.done = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A green context id as the schema stores it: NULL for none (0) or when the
/// model has no such column.
fn green(v: &[u32], i: usize) -> Option<u32> {
    v.get(i).copied().filter(|&g| g != 0)
}
