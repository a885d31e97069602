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

use rusqlite::Connection;

use crate::model::nsys::event_class::{
    CUDA_RUNTIME as CLASS_CUDA_RUNTIME, GRAPH_NODE as CLASS_GRAPH_NODE,
};
use crate::model::nsys::event_type::{NVTX_MARK, NVTX_PUSHPOP, NVTX_STARTEND};
use crate::model::{Ns, NvtxKind, Payload, StrId, Trace};

pub mod job;
pub mod rows;
mod samples;
mod warp;

pub use warp::TimeWarp;

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
    /// Where each time of the trace lands (the identity but for a job's synthetic ranks).
    warp: TimeWarp,
    /// `TARGET_INFO_SESSION_START_TIME.utcEpochNs` to write, if any.
    session_start_utc_ns: Option<i64>,
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
            let of = if trace.info.path.is_empty() {
                String::new()
            } else {
                format!(" ({})", trace.info.path)
            };
            return Err(WriteError::Invalid(format!(
                "{copies} copies of a {span} ns trace{of} do not fit the 64-bit nanosecond clock"
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
            warp: TimeWarp::default(),
            session_start_utc_ns: None,
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

    /// Moves every time through `warp` (one copy: a job's rank).
    pub fn with_time_warp(mut self, warp: TimeWarp) -> Self {
        self.warp = warp;
        self
    }

    /// Records the session's UTC start (`TARGET_INFO_SESSION_START_TIME`).
    pub fn with_session_start(mut self, utc_ns: i64) -> Self {
        self.session_start_utc_ns = Some(utc_ns);
        self
    }

    pub fn write(
        &self,
        path: &Path,
        progress: &mut dyn FnMut(f32),
        cancel: &AtomicBool,
    ) -> Result<WriteSummary, WriteError> {
        check_destination(path, &self.trace.info.path)?;
        let io_err = |error| WriteError::Io {
            path: path.to_path_buf(),
            error,
        };
        let temp = crate::files::Aside::beside(path).map_err(io_err)?;
        let sql_err = |error| WriteError::Sqlite {
            path: path.to_path_buf(),
            error,
        };
        let conn = Connection::open(temp.path()).map_err(sql_err)?;
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
            total: ((self.events_per_copy() + self.cpu().sampling_rows_per_copy())
                * self.copies as u64)
                .max(1),
            progress,
            cancel,
        };
        self.write_all(&conn, &mut ticker).map_err(|e| match e {
            Failure::Cancelled => WriteError::Cancelled,
            Failure::Sqlite(error) => sql_err(error),
        })?;
        conn.execute_batch("COMMIT").map_err(sql_err)?;
        conn.close().map_err(|(_, e)| sql_err(e))?;
        temp.finish().map_err(io_err)?;
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
        let counters: usize = t.kernel_metrics.iter().map(|m| m.len()).sum();
        if counters > 0 {
            out.push(format!("{counters} kernel counter values"));
        }
        let samples: usize = t.metrics.iter().map(|m| m.timestamp.len()).sum();
        if samples > 0 {
            out.push(format!("{samples} GPU metric samples"));
        }
        out
    }

    fn write_all(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        rows::create_schema(conn)?;
        self.write_metadata(conn)?;
        if let Some(utc_ns) = self.session_start_utc_ns {
            rows::session_start(conn, utc_ns)?;
        }
        self.write_strings(conn)?;
        self.write_processes_threads(conn)?;
        self.write_devices_streams(conn)?;
        self.write_enum_labels(conn)?;
        let tables: [TableWriter<'t>; 11] = [
            Self::write_cuda_api,
            Self::write_osrt,
            Self::write_nvtx,
            Self::write_kernels,
            Self::write_memcpys,
            Self::write_memsets,
            Self::write_syncs,
            Self::write_cuda_events,
            Self::write_graph_nodes,
            |w, conn, tick| w.cpu().write_native_samples(conn, &mut || tick.row()),
            |w, conn, tick| w.cpu().write_sched(conn, &mut || tick.row()),
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
        let source = &self.trace.info.path;
        let version = self.trace.info.nsys_version.as_deref().unwrap_or("2025.3");
        let origin = format!(
            "sightline {}: {} cop{} of {source}",
            env!("CARGO_PKG_VERSION"),
            self.copies,
            if self.copies == 1 { "y" } else { "ies" }
        );
        rows::metadata(conn, version, &origin)
    }

    fn write_strings(&self, conn: &Connection) -> rusqlite::Result<()> {
        for (id, value) in self.trace.strings.iter() {
            rows::string(conn, id.0 as i64, value)?;
        }
        let base = self.trace.strings.len();
        for (i, value) in self.extra_strings.iter().enumerate() {
            rows::string(conn, (base + i) as i64, value)?;
        }
        Ok(())
    }

    fn write_processes_threads(&self, conn: &Connection) -> rusqlite::Result<()> {
        for p in &self.trace.processes {
            rows::process(conn, self.global_pid(p.pid), p.pid, &p.name)?;
        }
        for t in self.trace.threads.iter().filter(|t| !t.name.is_empty()) {
            rows::thread_name(conn, t.global_tid, self.known_string_id(&t.name))?;
        }
        Ok(())
    }

    fn write_devices_streams(&self, conn: &Connection) -> rusqlite::Result<()> {
        for g in &self.trace.gpus {
            // The loader invents a bare row for devices that ran work but had
            // no TARGET_INFO_GPU row; writing it back would invent facts.
            let placeholder =
                g.sm_count == 0 && g.memory_bytes == 0 && g.name == format!("GPU {}", g.device_id);
            if placeholder {
                continue;
            }
            rows::gpu(
                conn,
                &rows::GpuRow {
                    device_id: g.device_id,
                    name: &g.name,
                    bus_location: &g.bus_location,
                    l2_cache_bytes: g.l2_cache_bytes,
                    memory_bytes: g.memory_bytes,
                    memory_bandwidth: g.memory_bandwidth,
                    clock_rate_hz: g.clock_rate_khz * 1000,
                    sm_count: g.sm_count,
                    compute_capability: g.compute_capability,
                },
            )?;
        }
        for s in &self.trace.streams {
            rows::stream(conn, s.stream_id, s.pid, s.context_id, s.priority)?;
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
            for (id, label) in labels {
                // The loader's own fallback for a value no enum row names:
                // leaving the row out reproduces it.
                if !label.starts_with("Unknown (") && !label.starts_with("Unknown sync (") {
                    rows::enum_label(conn, table, id, label)?;
                }
            }
        }
        Ok(())
    }

    fn write_cuda_api(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let api = &self.trace.cuda_api;
        for (dt, dc) in self.shifts() {
            for thread in &self.trace.threads {
                for i in thread.cuda_api.rows() {
                    let i = i as usize;
                    rows::api(
                        conn,
                        &rows::ApiRow {
                            start: self.warp.at(api.spans.start[i]) + dt,
                            end: self.warp.at(api.spans.end(i)) + dt,
                            event_class: CLASS_CUDA_RUNTIME,
                            global_tid: thread.global_tid,
                            correlation: api.correlation[i] as i64 + dc,
                            name_id: api.spans.name[i].0 as i64,
                            return_value: api.return_value.at(i),
                        },
                    )?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_osrt(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let os = &self.trace.osrt;
        for (dt, _) in self.shifts() {
            for thread in &self.trace.threads {
                for i in thread.osrt.rows() {
                    let i = i as usize;
                    rows::osrt(
                        conn,
                        &rows::OsRow {
                            start: self.warp.at(os.spans.start[i]) + dt,
                            end: self.warp.at(os.spans.end(i)) + dt,
                            event_class: os.event_class[i],
                            global_tid: thread.global_tid,
                            name_id: os.spans.name[i].0 as i64,
                            return_value: os.return_value[i],
                        },
                    )?;
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
        let mut domains: samples::Domains = HashMap::new();
        for thread in &t.threads {
            for track in thread.nvtx.iter().filter(|n| !n.domain.is_empty()) {
                let next = 1 + domains.keys().filter(|(pid, _)| *pid == thread.pid).count() as i64;
                if let std::collections::hash_map::Entry::Vacant(e) =
                    domains.entry((thread.pid, track.domain.as_str()))
                {
                    e.insert(next);
                    rows::nvtx_domain(
                        conn,
                        t.info.time_range.0,
                        thread.global_tid,
                        next,
                        &track.domain,
                    )?;
                }
            }
        }
        // Category names, in each process that has the category's domain.
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
                    rows::nvtx_category(
                        conn,
                        t.info.time_range.0,
                        thread.global_tid,
                        domain,
                        *category,
                        name,
                    )?;
                }
            }
        }
        for (dt, _) in self.shifts() {
            for thread in &t.threads {
                // The Python samples' marks: written from the samples, below.
                let tracks =
                    (thread.nvtx.iter()).filter(|n| !self.cpu().is_python_sampling(&n.domain));
                for track in tracks {
                    let domain = if track.domain.is_empty() {
                        0
                    } else {
                        domains
                            .get(&(thread.pid, track.domain.as_str()))
                            .copied()
                            .unwrap_or(0)
                    };
                    for i in track.track.rows() {
                        let idx = i as usize;
                        let kind = nvtx.kind[idx];
                        let (event_type, end) = match kind {
                            NvtxKind::Mark => (NVTX_MARK, None),
                            NvtxKind::PushPop => {
                                (NVTX_PUSHPOP, Some(self.warp.at(nvtx.spans.end(idx)) + dt))
                            }
                            NvtxKind::StartEnd => {
                                (NVTX_STARTEND, Some(self.warp.at(nvtx.spans.end(idx)) + dt))
                            }
                        };
                        // A single copy keeps an unended range unended (the
                        // loader stretches it to the last NVTX timestamp again).
                        // With several copies that stretch would reach into the
                        // last copy, so each copy gets the end the range had.
                        let end = end.filter(|_| self.copies > 1 || !nvtx.unended[idx]);
                        let end_global_tid = nvtx
                            .end_thread
                            .get(&i)
                            .and_then(|&th| t.threads.get(th as usize))
                            .map(|th| th.global_tid);
                        let mut payload = rows::PayloadCells::default();
                        match nvtx.payload.get(&i) {
                            Some(Payload::Int(v)) => payload.int = Some(*v),
                            Some(Payload::Uint(v)) => payload.uint = Some(*v as i64),
                            Some(Payload::Float(v)) => payload.float = Some(*v),
                            Some(Payload::Json(v)) => payload.json = Some(v.as_str()),
                            None => {}
                        }
                        rows::nvtx(
                            conn,
                            &rows::NvtxRow {
                                start: self.warp.at(nvtx.spans.start[idx]) + dt,
                                end,
                                event_type,
                                category: nvtx.category[idx],
                                color: nvtx.color[idx],
                                global_tid: thread.global_tid,
                                end_global_tid,
                                text_id: nvtx.spans.name[idx].0 as i64,
                                domain_id: domain,
                                payload,
                            },
                        )?;
                        tick.row()?;
                    }
                }
            }
        }
        self.cpu()
            .write_python_samples(conn, &mut || tick.row(), &mut domains)
    }

    /// The writer of the CPU side (samples, switches).
    fn cpu(&self) -> samples::CpuWriter<'_> {
        samples::CpuWriter {
            trace: self.trace,
            warp: &self.warp,
            shifts: self.shifts().map(|(dt, _)| dt).collect(),
        }
    }

    /// The columns every GPU operation row shares, for event `i` of `spans`
    /// on stream `s`, shifted into copy (`dt`, `dc`).
    fn op_key(
        &self,
        s: &crate::model::Stream,
        spans: &crate::model::SpanColumns,
        correlation: &[u32],
        i: usize,
        (dt, dc): (Ns, i64),
    ) -> rows::GpuOpKey {
        rows::GpuOpKey {
            start: self.warp.at(spans.start[i]) + dt,
            end: self.warp.at(spans.end(i)) + dt,
            device_id: s.device_id,
            context_id: s.context_id,
            stream_id: s.stream_id,
            correlation: correlation[i] as i64 + dc,
            global_pid: self.global_pid(s.pid),
        }
    }

    fn write_kernels(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let k = &self.trace.kernels;
        let default_config = Default::default();
        for shift in self.shifts() {
            for s in &self.trace.streams {
                for i in s.kernels.rows() {
                    let i = i as usize;
                    let c = k
                        .configs
                        .get(k.config[i] as usize)
                        .unwrap_or(&default_config);
                    let mangled = k.mangled_name(i).unwrap_or_default();
                    let node = k.graph_node_id.at(i);
                    rows::kernel(
                        conn,
                        &rows::KernelRow {
                            op: self.op_key(s, &k.spans, &k.correlation, i, shift),
                            demangled_name: k.spans.name[i].0 as i64,
                            short_name: k.short_name(i).unwrap_or_default().0 as i64,
                            mangled_name: (mangled != StrId(0)).then_some(mangled.0 as i64),
                            launch_type: c.launch_type,
                            cache_config: c.cache_config,
                            registers_per_thread: c.registers_per_thread,
                            grid: c.grid,
                            block: c.block,
                            static_shared_memory: c.static_shared_memory,
                            dynamic_shared_memory: c.dynamic_shared_memory,
                            local_memory_per_thread: c.local_memory_per_thread,
                            local_memory_total: c.local_memory_total,
                            grid_id: k.grid_id.at(i),
                            shared_memory_executed: c.shared_memory_executed,
                            graph_node_id: (node != 0).then_some(node),
                            shared_memory_limit_config: c.shared_memory_limit_config,
                        },
                    )?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_memcpys(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let m = &self.trace.memcpys;
        // 255 is the model's "the report did not say".
        let mem_kind = |k: u8| (k != 255).then_some(k);
        // -1 is the model's NULL device; a model built without the column has none.
        let device = |v: &[i32], i: usize| v.get(i).copied().filter(|&d| d >= 0);
        for shift in self.shifts() {
            for s in &self.trace.streams {
                for i in s.memcpys.rows() {
                    let i = i as usize;
                    rows::memcpy(
                        conn,
                        &rows::MemcpyRow {
                            op: self.op_key(s, &m.spans, &m.correlation, i, shift),
                            bytes: m.bytes[i],
                            copy_kind: m.copy_kind[i],
                            src_kind: mem_kind(m.src_kind[i]),
                            dst_kind: mem_kind(m.dst_kind[i]),
                            src_device: device(&m.src_device, i),
                            dst_device: device(&m.dst_device, i),
                            green_context: green(&m.green_context, i),
                        },
                    )?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_memsets(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let m = &self.trace.memsets;
        for shift in self.shifts() {
            for s in &self.trace.streams {
                for i in s.memsets.rows() {
                    let i = i as usize;
                    let kind = m.mem_kind[i];
                    rows::memset(
                        conn,
                        &rows::MemsetRow {
                            op: self.op_key(s, &m.spans, &m.correlation, i, shift),
                            value: m.value[i],
                            bytes: m.bytes[i],
                            mem_kind: (kind != 255).then_some(kind),
                            green_context: green(&m.green_context, i),
                        },
                    )?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_syncs(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        let y = &self.trace.syncs;
        for shift in self.shifts() {
            for s in &self.trace.streams {
                for i in s.syncs.rows() {
                    let i = i as usize;
                    rows::sync(
                        conn,
                        &rows::SyncRow {
                            op: self.op_key(s, &y.spans, &y.correlation, i, shift),
                            sync_type: y.sync_type[i],
                            event_id: y.event_id[i],
                        },
                    )?;
                    tick.row()?;
                }
            }
        }
        Ok(())
    }

    fn write_cuda_events(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        for (_, dc) in self.shifts() {
            for e in self.trace.cuda_events.iter() {
                let Some(s) = self.trace.streams.get(e.stream as usize) else {
                    continue;
                };
                rows::cuda_event(
                    conn,
                    &rows::CudaEventRow {
                        device_id: s.device_id,
                        context_id: s.context_id,
                        stream_id: s.stream_id,
                        correlation: e.correlation as i64 + dc,
                        global_pid: self.global_pid(s.pid),
                        event_id: e.event_id,
                    },
                )?;
                tick.row()?;
            }
        }
        Ok(())
    }

    fn write_graph_nodes(&self, conn: &Connection, tick: &mut Ticker) -> Result<(), Failure> {
        for (dt, _) in self.shifts() {
            for g in self.trace.graph_records.iter().filter(|g| g.is_node) {
                let tid = self
                    .trace
                    .threads
                    .get(g.thread as usize)
                    .map_or(0, |t| t.global_tid);
                rows::graph_node(
                    conn,
                    &rows::GraphNodeRow {
                        start: self.warp.at(g.start) + dt,
                        end: self.warp.at(g.end) + dt,
                        event_class: CLASS_GRAPH_NODE,
                        global_tid: tid,
                        name_id: g.name.0 as i64,
                        node_id: g.id,
                        original_node_id: g.original_id,
                    },
                )?;
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
    crate::files::check_replaceable(path)
        .and_then(|()| crate::files::check_report_name(path))
        .map_err(|e| WriteError::Invalid(e.to_string()))?;
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

/// A green context id as the schema stores it: NULL for none (0) or when the
/// model has no such column.
fn green(v: &[u32], i: usize) -> Option<u32> {
    v.get(i).copied().filter(|&g| g != 0)
}
