//! Rows of the nsys export schema (2025.3, export schema 3.20.3), one function
//! per table. This is the only place that spells the tables' column lists for
//! writing: `synth` feeds it a loaded [`Trace`](crate::model::Trace), live
//! capture feeds it CUPTI records, so both produce the same files, and what the
//! loader reads back from a capture is what it reads from any other report.
//!
//! Statements are cached per connection (`prepare_cached`), so a caller just
//! calls the function for each row; kernels and API calls, the most rows of a
//! capture, may also come many at a time ([`kernels`], [`apis`]).

use rusqlite::{Connection, params};

use crate::model::Ns;
use crate::model::nsys::event_type::{NVTX_CATEGORY, NVTX_DOMAIN_CREATE};

/// nsys 2025.3's definitions of the tables we write, and the rows of the enum
/// tables, taken verbatim from a real export.
pub const SCHEMA: &str = include_str!("nsys_2025_3.sql");

/// The export schema version [`SCHEMA`] follows.
pub const SCHEMA_VERSION: (u32, u32, u32) = (3, 20, 3);

/// Creates every table of [`SCHEMA`] in an empty database.
pub fn create_schema(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)
}

/// `META_DATA_EXPORT`: who wrote the file (`EXPORT_PRODUCT_NAME` = Sightline),
/// the schema version it follows, and a free-form line about its origin.
pub fn metadata(conn: &Connection, product_version: &str, origin: &str) -> rusqlite::Result<()> {
    let (major, minor, micro) = SCHEMA_VERSION;
    let rows = [
        ("EXPORT_PRODUCT_NAME", "Sightline".to_string()),
        ("EXPORT_PRODUCT_VERSION", product_version.to_string()),
        ("EXPORT_SCHEMA_VERSION", format!("{major}.{minor}.{micro}")),
        ("EXPORT_SCHEMA_VERSION_MAJOR", major.to_string()),
        ("EXPORT_SCHEMA_VERSION_MINOR", minor.to_string()),
        ("EXPORT_SCHEMA_VERSION_MICRO", micro.to_string()),
        ("SIGHTLINE_WRITER", origin.to_string()),
    ];
    let mut stmt =
        conn.prepare_cached("INSERT INTO META_DATA_EXPORT (name, value) VALUES (?1, ?2)")?;
    for (name, value) in rows {
        stmt.execute(params![name, value])?;
    }
    Ok(())
}

/// `TARGET_INFO_SESSION_START_TIME`: the session's start on the UTC clock (its time 0), as
/// nsys defines the table (made here: only a job's synthetic ranks write it).
pub fn session_start(conn: &Connection, utc_ns: i64) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS TARGET_INFO_SESSION_START_TIME (
             utcEpochNs INTEGER, utcTime TEXT, localTime TEXT)",
    )?;
    conn.prepare_cached("INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs) VALUES (?1)")?
        .execute(params![utc_ns])?;
    Ok(())
}

pub fn string(conn: &Connection, id: i64, value: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO StringIds (id, value) VALUES (?1, ?2)")?
        .execute(params![id, value])?;
    Ok(())
}

pub fn process(conn: &Connection, global_pid: i64, pid: u32, name: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?1, ?2, ?3)")?
        .execute(params![global_pid, pid, name])?;
    Ok(())
}

pub fn thread_name(conn: &Connection, global_tid: i64, name_id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?1, NULL, ?2)",
    )?
    .execute(params![name_id, global_tid])?;
    Ok(())
}

/// A `TARGET_INFO_GPU` row: the device facts the loader and `nsys stats` use.
#[derive(Debug, Clone, Default)]
pub struct GpuRow<'a> {
    pub device_id: u32,
    pub name: &'a str,
    pub bus_location: &'a str,
    pub l2_cache_bytes: u64,
    pub memory_bytes: u64,
    pub memory_bandwidth: u64,
    pub clock_rate_hz: u64,
    pub sm_count: u32,
    pub compute_capability: (u32, u32),
}

pub fn gpu(conn: &Connection, g: &GpuRow) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, l2CacheSize, totalMemory,
            memoryBandwidth, clockRate, smCount, computeMajor, computeMinor)
         VALUES (0, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        g.device_id,
        g.name,
        g.bus_location,
        g.l2_cache_bytes as i64,
        g.memory_bytes as i64,
        g.memory_bandwidth as i64,
        g.clock_rate_hz as i64,
        g.sm_count,
        g.compute_capability.0,
        g.compute_capability.1,
    ])?;
    Ok(())
}

pub fn stream(
    conn: &Connection,
    stream_id: u32,
    pid: u32,
    context_id: u32,
    priority: i32,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, processId, contextId, priority, flag)
         VALUES (?1, 0, 0, ?2, ?3, ?4, 0)",
    )?
    // nsys stores the priority as an unsigned 32-bit value.
    .execute(params![stream_id, pid, context_id, priority as u32])?;
    Ok(())
}

/// Gives an enum value a label (`ENUM_CUDA_MEMCPY_OPER`, `ENUM_CUPTI_SYNC_TYPE`
/// …), replacing the standard one.
pub fn enum_label(conn: &Connection, table: &str, id: u8, label: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO {table} (id, name, label) VALUES (?1, NULL, ?2)
         ON CONFLICT(id) DO UPDATE SET label = excluded.label"
    ))?
    .execute(params![id, label])?;
    Ok(())
}

/// A CUDA runtime or driver API call (`CUPTI_ACTIVITY_KIND_RUNTIME`).
#[derive(Debug, Clone, Copy)]
pub struct ApiRow {
    pub start: Ns,
    pub end: Ns,
    pub event_class: i64,
    pub global_tid: i64,
    pub correlation: i64,
    pub name_id: i64,
    pub return_value: i32,
}

pub fn api(conn: &Connection, r: &ApiRow) -> rusqlite::Result<()> {
    apis(conn, std::slice::from_ref(r))
}

/// API calls, in order, many a statement (see [`write_many`]): a capture
/// writes about as many of them as kernels.
pub fn apis(conn: &Connection, rows: &[ApiRow]) -> rusqlite::Result<()> {
    static TABLE: ManyRows = ManyRows::new("CUPTI_ACTIVITY_KIND_RUNTIME", &API_COLUMNS);
    write_many(conn, &TABLE, rows, |bind, r| {
        bind.next(r.start)?;
        bind.next(r.end)?;
        bind.next(r.event_class)?;
        bind.next(r.global_tid)?;
        bind.next(r.correlation)?;
        bind.next(r.name_id)?;
        bind.next(r.return_value)?;
        bind.next(rusqlite::types::Null)
    })
}

/// The API table's columns, as [`apis`] binds them.
const API_COLUMNS: [&str; 8] = [
    "start",
    "end",
    "eventClass",
    "globalTid",
    "correlationId",
    "nameId",
    "returnValue",
    "callchainId",
];

/// An OS runtime call (`OSRT_API`).
#[derive(Debug, Clone, Copy)]
pub struct OsRow {
    pub start: Ns,
    pub end: Ns,
    pub event_class: u8,
    pub global_tid: i64,
    pub name_id: i64,
    pub return_value: i64,
}

pub fn osrt(conn: &Connection, r: &OsRow) -> rusqlite::Result<()> {
    // callchainId is NOT NULL in nsys's schema; 0 is what nsys writes for
    // calls whose backtrace was not kept.
    conn.prepare_cached(
        "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, returnValue,
            nestingLevel, callchainId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, 0)",
    )?
    .execute(params![
        r.start,
        r.end,
        r.event_class,
        r.global_tid,
        r.name_id,
        r.return_value
    ])?;
    Ok(())
}

/// Declares an NVTX domain (its name) in one process; ids are per process and
/// 0 is the default, unnamed domain.
pub fn nvtx_domain(
    conn: &Connection,
    at: Ns,
    global_tid: i64,
    domain_id: i64,
    name: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
         VALUES (?1, NULL, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![at, NVTX_DOMAIN_CREATE, name, global_tid, domain_id])?;
    Ok(())
}

/// Names an NVTX category of a domain.
pub fn nvtx_category(
    conn: &Connection,
    at: Ns,
    global_tid: i64,
    domain_id: i64,
    category: u32,
    name: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, category, text, globalTid, domainId)
         VALUES (?1, NULL, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        at,
        NVTX_CATEGORY,
        category,
        name,
        global_tid,
        domain_id
    ])?;
    Ok(())
}

/// An NVTX payload as the schema stores it: one of four columns.
#[derive(Debug, Clone, Copy, Default)]
pub struct PayloadCells<'a> {
    pub int: Option<i64>,
    pub uint: Option<i64>,
    pub float: Option<f64>,
    pub json: Option<&'a str>,
}

/// An NVTX range or mark (`NVTX_EVENTS`). `end` is `None` for marks and for
/// ranges that never ended.
#[derive(Debug, Clone, Copy)]
pub struct NvtxRow<'a> {
    pub start: Ns,
    pub end: Option<Ns>,
    pub event_type: i64,
    pub category: u32,
    /// ARGB, 0 for none.
    pub color: u32,
    pub global_tid: i64,
    pub end_global_tid: Option<i64>,
    pub text_id: i64,
    pub domain_id: i64,
    pub payload: PayloadCells<'a>,
}

/// Writes `r`; answers its rowid (the range id nsys reports), for
/// [`nvtx_ended`].
pub fn nvtx(conn: &Connection, r: &NvtxRow) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, category, color, globalTid, endGlobalTid,
            textId, domainId, int64Value, uint64Value, doubleValue, jsonText)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        r.start,
        r.end,
        r.event_type,
        (r.category != 0).then_some(r.category),
        (r.color != 0).then_some(r.color),
        r.global_tid,
        r.end_global_tid,
        r.text_id,
        r.domain_id,
        r.payload.int,
        r.payload.uint,
        r.payload.float,
        r.payload.json,
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Fills in what a range written when it started ([`nvtx`], `row_id`) knows
/// once it ends: its end, its type, its colour, category and payload, and
/// the thread that ended it. Its start, thread, text and domain stay.
pub fn nvtx_ended(conn: &Connection, row_id: i64, r: &NvtxRow) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE NVTX_EVENTS SET end = ?2, eventType = ?3, category = ?4, color = ?5,
            endGlobalTid = ?6, int64Value = ?7, uint64Value = ?8, doubleValue = ?9, jsonText = ?10
         WHERE rowid = ?1",
    )?
    .execute(params![
        row_id,
        r.end,
        r.event_type,
        (r.category != 0).then_some(r.category),
        (r.color != 0).then_some(r.color),
        r.end_global_tid,
        r.payload.int,
        r.payload.uint,
        r.payload.float,
        r.payload.json,
    ])?;
    Ok(())
}

/// Where a GPU operation ran: the columns every `CUPTI_ACTIVITY_KIND_*` GPU
/// table shares.
#[derive(Debug, Clone, Copy)]
pub struct GpuOpKey {
    pub start: Ns,
    pub end: Ns,
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub correlation: i64,
    pub global_pid: i64,
}

/// A kernel (`CUPTI_ACTIVITY_KIND_KERNEL`). Names are `StringIds` ids.
#[derive(Debug, Clone, Copy)]
pub struct KernelRow {
    pub op: GpuOpKey,
    pub demangled_name: i64,
    pub short_name: i64,
    pub mangled_name: Option<i64>,
    pub launch_type: u8,
    pub cache_config: u8,
    pub registers_per_thread: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub static_shared_memory: u32,
    pub dynamic_shared_memory: u32,
    pub local_memory_per_thread: u32,
    pub local_memory_total: u64,
    pub grid_id: u64,
    pub shared_memory_executed: u32,
    pub graph_node_id: Option<u64>,
    pub shared_memory_limit_config: u8,
}

pub fn kernel(conn: &Connection, r: &KernelRow) -> rusqlite::Result<()> {
    kernels(conn, std::slice::from_ref(r))
}

/// Rows one multi-row insert writes.
const ROWS_A_STATEMENT: usize = 32;

/// A table written [`ROWS_A_STATEMENT`] rows a statement: its name, its
/// columns in binding order, and its two inserts, made once (a synthetic
/// report writes millions of kernels one at a time).
struct ManyRows {
    table: &'static str,
    columns: &'static [&'static str],
    one: std::sync::OnceLock<String>,
    many: std::sync::OnceLock<String>,
}

impl ManyRows {
    const fn new(table: &'static str, columns: &'static [&'static str]) -> Self {
        ManyRows {
            table,
            columns,
            one: std::sync::OnceLock::new(),
            many: std::sync::OnceLock::new(),
        }
    }

    /// `INSERT` of one row, or of [`ROWS_A_STATEMENT`].
    fn insert(&self, many: bool) -> &str {
        let build = |n: usize| {
            let one = format!("({})", vec!["?"; self.columns.len()].join(", "));
            format!(
                "INSERT INTO {} ({}) VALUES {}",
                self.table,
                self.columns.join(", "),
                vec![one; n].join(", ")
            )
        };
        if many {
            self.many.get_or_init(|| build(ROWS_A_STATEMENT))
        } else {
            self.one.get_or_init(|| build(1))
        }
    }
}

/// A value one parameter of the writer's inserts takes: an integer, or
/// NULL (every column [`write_many`] writes is one or the other).
trait Cell: Copy {
    fn cell(self) -> Option<i64>;
}

macro_rules! int_cells {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            #[inline]
            fn cell(self) -> Option<i64> {
                Some(self as i64)
            }
        }
    )*};
}
int_cells!(u8, i32, u32, i64);

impl<T: Cell> Cell for Option<T> {
    #[inline]
    fn cell(self) -> Option<i64> {
        self.and_then(Cell::cell)
    }
}

impl Cell for rusqlite::types::Null {
    #[inline]
    fn cell(self) -> Option<i64> {
        None
    }
}

/// Binds values to a statement's parameters, one after the other, each only
/// where it differs from what that parameter holds from the statement's
/// last run (SQLite keeps a statement's bindings from one run to the next).
/// Most of a capture's kernel columns repeat 32 rows apart (the same kernel
/// on the same stream): on the development VM a kernel row took about 1 µs,
/// a sixth of it binding.
struct Bind<'s, 'c> {
    stmt: &'s mut rusqlite::CachedStatement<'c>,
    at: usize,
    /// What each parameter holds (index `at - 1`); `None` for a parameter
    /// not bound yet in this statement's use (the cache clears them).
    bound: Vec<Option<Option<i64>>>,
}

impl Bind<'_, '_> {
    /// Binds `value` to the next parameter, unless it holds it already.
    #[inline]
    fn next<T: Cell>(&mut self, value: T) -> rusqlite::Result<()> {
        let value = value.cell();
        let slot = self.at;
        self.at += 1;
        if slot >= self.bound.len() {
            self.bound.resize(slot + 1, None);
        }
        if self.bound[slot] == Some(value) {
            return Ok(());
        }
        self.bound[slot] = Some(value);
        match value {
            Some(v) => self.stmt.raw_bind_parameter(self.at, v),
            None => self.stmt.raw_bind_parameter(self.at, rusqlite::types::Null),
        }
    }
}

/// Writes `rows`, in order: [`ROWS_A_STATEMENT`] (32) a statement while that
/// many are left, then one a statement. A live capture's writer is bound by
/// the statements it runs: one per 32 kernels was ~1.45× the rows a second
/// of one a row on the development VM. `bind` binds one row's values in
/// `table.columns`' order.
fn write_many<R>(
    conn: &Connection,
    table: &ManyRows,
    rows: &[R],
    bind: impl Fn(&mut Bind, &R) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let run = |next: &mut Bind, rows: &[R]| {
        next.at = 0;
        for r in rows {
            bind(next, r)?;
        }
        next.stmt.raw_execute().map(drop)
    };
    let mut chunks = rows.chunks_exact(ROWS_A_STATEMENT);
    if chunks.len() > 0 {
        let mut stmt = conn.prepare_cached(table.insert(true))?;
        let mut next = Bind {
            stmt: &mut stmt,
            at: 0,
            bound: Vec::new(),
        };
        for chunk in chunks.by_ref() {
            run(&mut next, chunk)?;
        }
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut stmt = conn.prepare_cached(table.insert(false))?;
        let mut next = Bind {
            stmt: &mut stmt,
            at: 0,
            bound: Vec::new(),
        };
        for r in rest {
            run(&mut next, std::slice::from_ref(r))?;
        }
    }
    Ok(())
}

/// Kernels, in order, many a statement (see [`write_many`]).
pub fn kernels(conn: &Connection, rows: &[KernelRow]) -> rusqlite::Result<()> {
    static TABLE: ManyRows = ManyRows::new("CUPTI_ACTIVITY_KIND_KERNEL", &KERNEL_COLUMNS);
    write_many(conn, &TABLE, rows, |bind, r| {
        let o = &r.op;
        bind.next(o.start)?;
        bind.next(o.end)?;
        bind.next(o.device_id)?;
        bind.next(o.context_id)?;
        bind.next(o.stream_id)?;
        bind.next(o.correlation)?;
        bind.next(o.global_pid)?;
        bind.next(r.demangled_name)?;
        bind.next(r.short_name)?;
        bind.next(r.mangled_name)?;
        bind.next(r.launch_type)?;
        bind.next(r.cache_config)?;
        bind.next(r.registers_per_thread)?;
        bind.next(r.grid[0])?;
        bind.next(r.grid[1])?;
        bind.next(r.grid[2])?;
        bind.next(r.block[0])?;
        bind.next(r.block[1])?;
        bind.next(r.block[2])?;
        bind.next(r.static_shared_memory)?;
        bind.next(r.dynamic_shared_memory)?;
        bind.next(r.local_memory_per_thread)?;
        bind.next(r.local_memory_total as i64)?;
        bind.next(r.grid_id as i64)?;
        bind.next(r.shared_memory_executed)?;
        bind.next(r.graph_node_id.map(|n| n as i64))?;
        bind.next(r.shared_memory_limit_config)
    })
}

/// The kernel table's columns, as [`kernels`] binds them.
const KERNEL_COLUMNS: [&str; 27] = [
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId",
    "globalPid",
    "demangledName",
    "shortName",
    "mangledName",
    "launchType",
    "cacheConfig",
    "registersPerThread",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "staticSharedMemory",
    "dynamicSharedMemory",
    "localMemoryPerThread",
    "localMemoryTotal",
    "gridId",
    "sharedMemoryExecuted",
    "graphNodeId",
    "sharedMemoryLimitConfig",
];

/// A memory copy (`CUPTI_ACTIVITY_KIND_MEMCPY`). Memory kinds are `None`
/// when unknown.
#[derive(Debug, Clone, Copy)]
pub struct MemcpyRow {
    pub op: GpuOpKey,
    pub bytes: u64,
    pub copy_kind: u8,
    pub src_kind: Option<u8>,
    pub dst_kind: Option<u8>,
    /// Peer copies: the devices on each side (NULL otherwise).
    pub src_device: Option<i32>,
    pub dst_device: Option<i32>,
    /// The green context the copy ran in (NULL when none).
    pub green_context: Option<u32>,
}

pub fn memcpy(conn: &Connection, r: &MemcpyRow) -> rusqlite::Result<()> {
    let o = &r.op;
    conn.prepare_cached(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId,
            correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId,
            dstDeviceId, greenContextId)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        o.start,
        o.end,
        o.device_id,
        o.context_id,
        o.stream_id,
        o.correlation,
        o.global_pid,
        r.bytes as i64,
        r.copy_kind,
        r.src_kind,
        r.dst_kind,
        r.src_device,
        r.dst_device,
        r.green_context,
    ])?;
    Ok(())
}

/// A memset (`CUPTI_ACTIVITY_KIND_MEMSET`).
#[derive(Debug, Clone, Copy)]
pub struct MemsetRow {
    pub op: GpuOpKey,
    pub value: u32,
    pub bytes: u64,
    pub mem_kind: Option<u8>,
    pub green_context: Option<u32>,
}

pub fn memset(conn: &Connection, r: &MemsetRow) -> rusqlite::Result<()> {
    let o = &r.op;
    conn.prepare_cached(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId,
            correlationId, globalPid, value, bytes, memKind, greenContextId)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        o.start,
        o.end,
        o.device_id,
        o.context_id,
        o.stream_id,
        o.correlation,
        o.global_pid,
        r.value,
        r.bytes as i64,
        r.mem_kind,
        r.green_context,
    ])?;
    Ok(())
}

/// A synchronization (`CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`).
#[derive(Debug, Clone, Copy)]
pub struct SyncRow {
    pub op: GpuOpKey,
    pub sync_type: u8,
    pub event_id: u32,
}

pub fn sync(conn: &Connection, r: &SyncRow) -> rusqlite::Result<()> {
    let o = &r.op;
    conn.prepare_cached(
        "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId,
            streamId, correlationId, globalPid, syncType, eventId)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        o.start,
        o.end,
        o.device_id,
        o.context_id,
        o.stream_id,
        o.correlation,
        o.global_pid,
        r.sync_type,
        r.event_id,
    ])?;
    Ok(())
}

/// A CUDA event record (`CUPTI_ACTIVITY_KIND_CUDA_EVENT`): no times of its own.
#[derive(Debug, Clone, Copy)]
pub struct CudaEventRow {
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub correlation: i64,
    pub global_pid: i64,
    pub event_id: u32,
}

pub fn cuda_event(conn: &Connection, r: &CudaEventRow) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT (deviceId, contextId, streamId,
            correlationId, globalPid, eventId) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        r.device_id,
        r.context_id,
        r.stream_id,
        r.correlation,
        r.global_pid,
        r.event_id,
    ])?;
    Ok(())
}

/// A CUDA graph node record (`CUDA_GRAPH_NODE_EVENTS`).
#[derive(Debug, Clone, Copy)]
pub struct GraphNodeRow {
    pub start: Ns,
    pub end: Ns,
    pub event_class: i64,
    pub global_tid: i64,
    pub name_id: i64,
    pub node_id: u64,
    pub original_node_id: Option<u64>,
}

pub fn graph_node(conn: &Connection, r: &GraphNodeRow) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO CUDA_GRAPH_NODE_EVENTS (start, end, eventClass, globalTid, nameId,
            graphNodeId, originalGraphNodeId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        r.start,
        r.end,
        r.event_class,
        r.global_tid,
        r.name_id,
        r.node_id as i64,
        r.original_node_id.map(|o| o as i64),
    ])?;
    Ok(())
}

/// Sightline's own tables for per-kernel metrics (a capture's counters). nsys
/// knows no table of these names, so `nsys stats` and `nsys analyze` pass them
/// by; the loader reads them back into `Trace::kernel_metrics`. A kernel is
/// keyed as its `CUPTI_ACTIVITY_KIND_KERNEL` row is: `correlationId` and
/// `start` (one process per capture).
pub const KERNEL_METRICS_SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS SIGHTLINE_METRICS (\
 id INTEGER PRIMARY KEY, name TEXT NOT NULL, unit TEXT NOT NULL, source TEXT NOT NULL);\
CREATE TABLE IF NOT EXISTS SIGHTLINE_KERNEL_METRICS (\
 correlationId INTEGER NOT NULL, start INTEGER NOT NULL,\
 metricId INTEGER NOT NULL REFERENCES SIGHTLINE_METRICS(id), value REAL NOT NULL);\
CREATE TABLE IF NOT EXISTS SIGHTLINE_METRIC_NOTES (source TEXT NOT NULL, note TEXT NOT NULL);";

/// Names of the table rows above, shared with the loader.
pub mod kernel_metrics_tables {
    pub const METRICS: &str = "SIGHTLINE_METRICS";
    pub const VALUES: &str = "SIGHTLINE_KERNEL_METRICS";
    pub const NOTES: &str = "SIGHTLINE_METRIC_NOTES";
    /// How `source` spells [`crate::model::MetricSource::Counters`].
    pub const SOURCE_COUNTERS: &str = "cupti_counters";
}

/// A metric's definition row; `id` is what value rows refer to.
pub fn kernel_metric_def(
    conn: &Connection,
    id: i64,
    name: &str,
    unit: &str,
    source: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO SIGHTLINE_METRICS (id, name, unit, source) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![id, name, unit, source])?;
    Ok(())
}

/// One metric value of one kernel instance.
pub fn kernel_metric_value(
    conn: &Connection,
    correlation: i64,
    start: Ns,
    metric_id: i64,
    value: f64,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO SIGHTLINE_KERNEL_METRICS (correlationId, start, metricId, value) \
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![correlation, start, metric_id, value])?;
    Ok(())
}

pub fn kernel_metric_note(conn: &Connection, source: &str, note: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO SIGHTLINE_METRIC_NOTES (source, note) VALUES (?1, ?2)")?
        .execute(params![source, note])?;
    Ok(())
}

/// Writes a capture's counters (metrics, values keyed to the kernels of
/// `trace`, notes) in one transaction. Metric ids continue after any already
/// in the file.
pub fn kernel_metrics(
    conn: &Connection,
    trace: &crate::model::Trace,
    set: &crate::model::KernelMetrics,
) -> rusqlite::Result<()> {
    use kernel_metrics_tables::SOURCE_COUNTERS;
    conn.execute_batch(KERNEL_METRICS_SCHEMA)?;
    conn.execute_batch("BEGIN")?;
    let first: i64 = conn.query_row(
        "SELECT coalesce(max(id), -1) + 1 FROM SIGHTLINE_METRICS",
        [],
        |r| r.get(0),
    )?;
    let written = (|| -> rusqlite::Result<()> {
        for (i, m) in set.metrics.iter().enumerate() {
            kernel_metric_def(conn, first + i as i64, &m.name, &m.unit, SOURCE_COUNTERS)?;
        }
        for ((&k, &m), &v) in set.kernel.iter().zip(&set.metric).zip(&set.value) {
            let k = k as usize;
            let (Some(&correlation), Some(&start)) = (
                trace.kernels.correlation.get(k),
                trace.kernels.spans.start.get(k),
            ) else {
                continue;
            };
            kernel_metric_value(conn, i64::from(correlation), start, first + i64::from(m), v)?;
        }
        for note in &set.notes {
            kernel_metric_note(conn, SOURCE_COUNTERS, note)?;
        }
        Ok(())
    })();
    match written {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel_row(i: u32) -> KernelRow {
        let n = i as i64;
        KernelRow {
            op: GpuOpKey {
                start: 1000 * n,
                end: 1000 * n + 1 + n,
                device_id: i % 2,
                context_id: 3 + i,
                stream_id: 7 + i,
                correlation: 100 + n,
                global_pid: (1 << 24) + n,
            },
            demangled_name: 200 + n,
            short_name: 300 + n,
            mangled_name: i.is_multiple_of(3).then_some(400 + n),
            launch_type: (i % 4) as u8,
            cache_config: (i % 5) as u8,
            registers_per_thread: 16 + i,
            grid: [1 + i, 2 + i, 3 + i],
            block: [32 + i, 4 + i, 5 + i],
            static_shared_memory: 6 + i,
            dynamic_shared_memory: 7 + i,
            local_memory_per_thread: 8 + i,
            local_memory_total: 9 + n as u64,
            grid_id: 10 + n as u64,
            shared_memory_executed: 11 + i,
            graph_node_id: (i % 2 == 1).then_some(12 + n as u64),
            shared_memory_limit_config: (i % 3) as u8,
        }
    }

    /// `table`'s rows in rowid order, each its `columns` in order.
    fn read_back(conn: &Connection, table: &str, columns: &[&str]) -> Vec<Vec<Option<i64>>> {
        let sql = format!("SELECT {} FROM {table} ORDER BY rowid", columns.join(", "));
        let mut stmt = conn.prepare(&sql).expect("select");
        stmt.query_map([], |r| (0..columns.len()).map(|c| r.get(c)).collect())
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    }

    /// A kernel row's cells, in `KERNEL_COLUMNS`' order, as written.
    fn kernel_cells(r: &KernelRow) -> Vec<Option<i64>> {
        let o = &r.op;
        let v = |x: i64| Some(x);
        vec![
            v(o.start),
            v(o.end),
            v(o.device_id.into()),
            v(o.context_id.into()),
            v(o.stream_id.into()),
            v(o.correlation),
            v(o.global_pid),
            v(r.demangled_name),
            v(r.short_name),
            r.mangled_name,
            v(r.launch_type.into()),
            v(r.cache_config.into()),
            v(r.registers_per_thread.into()),
            v(r.grid[0].into()),
            v(r.grid[1].into()),
            v(r.grid[2].into()),
            v(r.block[0].into()),
            v(r.block[1].into()),
            v(r.block[2].into()),
            v(r.static_shared_memory.into()),
            v(r.dynamic_shared_memory.into()),
            v(r.local_memory_per_thread.into()),
            v(r.local_memory_total as i64),
            v(r.grid_id as i64),
            v(r.shared_memory_executed.into()),
            r.graph_node_id.map(|n| n as i64),
            v(r.shared_memory_limit_config.into()),
        ]
    }

    /// Kernels written many a statement read back, row by row and column by
    /// column, as they were given (a chunk of 32, another, and the rest one
    /// by one): no value in another's column, no row out of order.
    #[test]
    fn kernels_written_many_a_statement_read_back_as_given() {
        let conn = Connection::open_in_memory().expect("db");
        create_schema(&conn).expect("schema");
        let given: Vec<KernelRow> = (0..70).map(kernel_row).collect();
        kernels(&conn, &given).expect("write");
        let read = read_back(&conn, "CUPTI_ACTIVITY_KIND_KERNEL", &KERNEL_COLUMNS);
        let expected: Vec<Vec<Option<i64>>> = given.iter().map(kernel_cells).collect();
        assert_eq!(read, expected);
    }

    /// Values that repeat from one statement's run to the next (the writer
    /// binds only the parameters that change), that go NULL and come back,
    /// written by two calls (the statement cache clears bindings between
    /// them): read back as given.
    #[test]
    fn kernels_whose_values_repeat_read_back_as_given() {
        let conn = Connection::open_in_memory().expect("db");
        create_schema(&conn).expect("schema");
        let given: Vec<KernelRow> = (0..150u32)
            .map(|i| {
                // Four launch sites: each place of a 32-row statement has
                // the same site from one run to the next, so most of its
                // parameters repeat; times and ids are each row's own.
                let mut r = kernel_row(i % 4);
                r.op.start = 1000 * i as i64;
                r.op.end = r.op.start + 10;
                r.op.correlation = i as i64;
                r.mangled_name = (i / 40 % 2 == 0).then_some(7);
                r
            })
            .collect();
        kernels(&conn, &given[..100]).expect("write");
        kernels(&conn, &given[100..]).expect("write again");
        let read = read_back(&conn, "CUPTI_ACTIVITY_KIND_KERNEL", &KERNEL_COLUMNS);
        let expected: Vec<Vec<Option<i64>>> = given.iter().map(kernel_cells).collect();
        assert_eq!(read, expected);
    }

    /// API calls likewise (two chunks of 32 and five one by one), the
    /// callchain left NULL as nsys leaves it without backtraces.
    #[test]
    fn api_calls_written_many_a_statement_read_back_as_given() {
        let conn = Connection::open_in_memory().expect("db");
        create_schema(&conn).expect("schema");
        let given: Vec<ApiRow> = (0..69i64)
            .map(|n| ApiRow {
                start: 1000 * n,
                end: 1000 * n + 1 + n,
                event_class: 1 + n % 2,
                global_tid: (1 << 24) + n,
                correlation: 100 + n,
                name_id: 200 + n,
                return_value: (n % 7) as i32,
            })
            .collect();
        apis(&conn, &given).expect("write");
        let read = read_back(&conn, "CUPTI_ACTIVITY_KIND_RUNTIME", &API_COLUMNS);
        let expected: Vec<Vec<Option<i64>>> = given
            .iter()
            .map(|r| {
                vec![
                    Some(r.start),
                    Some(r.end),
                    Some(r.event_class),
                    Some(r.global_tid),
                    Some(r.correlation),
                    Some(r.name_id),
                    Some(r.return_value.into()),
                    None,
                ]
            })
            .collect();
        assert_eq!(read, expected);
    }
}
