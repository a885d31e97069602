//! GPU side: devices and streams, kernels, copies, sets, syncs, graph
//! executions, CUDA event records, metric samples, and the correlation index.

use std::collections::HashMap;
use std::sync::Arc;

use super::builder::{Builder, IdMap};
use super::carry::{Carry, GrownLinks};
use super::cells::{Cells, RawRows};
use super::cpu::warn_bad;
use super::db::Col::{Optional as Opt, Required as Req};
use super::error::not_a_report;
use super::group::{Grouping, Runs};
use super::grow::{self, Grown, KeptRows, OutOfOrder, add_runs};
use super::parallel::{RowSink, Rows, column, read_rows, read_table};
use super::rows::{checked_end, int, opt_int, pid_of, row_times, text};
use crate::model::{
    CorrelationIndex, CudaEventRecord, EncodedEnds, EventKind, Gpu, GpuLimits, GpuOpKind,
    GraphExecs, IdColumn, KernelNames, Kernels, LaunchConfig, Memcpys, Memsets, MetricSeries, Ns,
    SpanColumns, SparseColumn, StrId, Stream, Syncs, Trace, Track, TrackIds,
};
use crate::threads::joined;

/// (pid, device, context, stream) → stream number.
pub(super) type StreamKey = (u32, u32, u32, u32);

/// A growing report's CUDA event records read before, by stream key (kept
/// in the [`Carry`]).
type CudaEventRows = KeptRows<(StreamKey, u32, u32)>;

struct Streams {
    by_key: HashMap<StreamKey, u32>,
}

impl Streams {
    /// The stream number of each run of rows whose keys are `keys`, with
    /// its length, in row order.
    fn resolve(&mut self, b: &mut Builder, keys: &Runs<StreamKey>) -> Vec<(u32, u32)> {
        keys.tracks(|key| self.get(b, key))
    }

    fn get(&mut self, b: &mut Builder, key: StreamKey) -> u32 {
        *self.by_key.entry(key).or_insert_with(|| {
            let (pid, device_id, context_id, stream_id) = key;
            b.trace.streams.push(Stream {
                device_id,
                context_id,
                stream_id,
                pid,
                ..Stream::default()
            });
            b.trace.streams.len() as u32 - 1
        })
    }
}

/// Columns every GPU operation table starts with.
#[derive(Default)]
struct RawOps {
    start: Vec<Ns>,
    end: Vec<Ns>,
    name: Vec<StrId>,
    correlation: Vec<u32>,
    bad: u64,
    /// Rows skipped for a NULL start or end.
    missing: u64,
}

impl RawOps {
    /// A row; its stream is kept by the reader (as runs of stream keys).
    fn push(&mut self, start: Ns, end: Ns, name: StrId, correlation: u32) {
        self.start.push(start);
        self.end.push(checked_end(start, end, &mut self.bad));
        self.name.push(name);
        self.correlation.push(correlation);
    }

    fn reserve(&mut self, rows: usize) {
        self.start.reserve(rows);
        self.end.reserve(rows);
        self.name.reserve(rows);
        self.correlation.reserve(rows);
    }

    fn append(&mut self, later: RawOps) {
        self.start.extend(later.start);
        self.end.extend(later.end);
        self.name.extend(later.name);
        self.correlation.extend(later.correlation);
        self.bad += later.bad;
        self.missing += later.missing;
    }
}

/// The leading columns of every GPU op query: start, end, globalPid, deviceId,
/// contextId, streamId, correlationId (indexes 0..7).
const OP_COLUMNS: usize = 7;

fn op_columns<'a>() -> Vec<super::db::Col<'a>> {
    vec![
        Req("start"),
        Req("end"),
        Opt("globalPid", "0"),
        Opt("deviceId", "0"),
        Opt("contextId", "0"),
        Req("streamId"),
        Opt("correlationId", "0"),
    ]
}

fn stream_key(row: &(impl Cells + ?Sized)) -> StreamKey {
    (
        pid_of(int(row, 2)),
        int(row, 3) as u32,
        int(row, 4) as u32,
        int(row, 5) as u32,
    )
}

pub(super) fn read_gpu_events(b: &mut Builder) -> rusqlite::Result<()> {
    let mut streams = Streams {
        by_key: HashMap::new(),
    };
    read_kernels(b, &mut streams)?;
    read_op_table::<Memcpys>(b, &mut streams)?;
    read_op_table::<Memsets>(b, &mut streams)?;
    read_op_table::<Syncs>(b, &mut streams)?;
    read_op_table::<GraphExecs>(b, &mut streams)?;
    read_cuda_events(b, &mut streams)?;
    read_stream_info(b)?;
    read_metrics(b)?;
    // GPUs that ran work but are missing from TARGET_INFO_GPU still get a row.
    let mut by_device: HashMap<u32, usize> = b
        .trace
        .gpus
        .iter()
        .enumerate()
        .map(|(i, g)| (g.device_id, i))
        .collect();
    let mut order: Vec<u32> = (0..b.trace.streams.len() as u32).collect();
    order.sort_by_key(|&s| {
        let s = &b.trace.streams[s as usize];
        (s.device_id, s.pid, s.context_id, s.stream_id)
    });
    for s in order {
        let device = b.trace.streams[s as usize].device_id;
        let gpu = *by_device.entry(device).or_insert_with(|| {
            b.trace.gpus.push(Gpu {
                device_id: device,
                name: format!("GPU {device}"),
                ..Gpu::default()
            });
            b.trace.gpus.len() - 1
        });
        b.trace.gpus[gpu].streams.push(s);
    }
    Ok(())
}

/// The GPUs of `TARGET_INFO_GPU` (read before any event: a report being
/// opened shows them first).
pub(super) fn read_devices(b: &mut Builder) -> rusqlite::Result<()> {
    let Some(sql) = b.select(
        "TARGET_INFO_GPU",
        &[
            Req("id"),
            Opt("name", "NULL"),
            Opt("smCount", "0"),
            Opt("computeMajor", "0"),
            Opt("computeMinor", "0"),
            Opt("totalMemory", "0"),
            Opt("memoryBandwidth", "0"),
            Opt("clockRate", "0"),
            Opt("l2CacheSize", "0"),
            Opt("busLocation", "NULL"),
            Opt("threadsPerWarp", "0"),
            Opt("maxWarpsPerSm", "0"),
            Opt("maxBlocksPerSm", "0"),
            Opt("maxThreadsPerBlock", "0"),
            Opt("maxRegistersPerSm", "0"),
            Opt("maxRegistersPerBlock", "0"),
            Opt("maxShmemPerSm", "0"),
            Opt("maxShmemPerBlockOptin", "0"),
        ],
        "ORDER BY id",
    ) else {
        return Ok(());
    };
    let report = b.report.clone();
    let mut stmt = report.conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let device_id = int(row, 0) as u32;
        if b.trace.gpus.iter().any(|g| g.device_id == device_id) {
            continue;
        }
        b.trace.gpus.push(Gpu {
            device_id,
            name: text(row, 1).unwrap_or_else(|| format!("GPU {device_id}")),
            sm_count: int(row, 2) as u32,
            compute_capability: (int(row, 3) as u32, int(row, 4) as u32),
            memory_bytes: int(row, 5) as u64,
            memory_bandwidth: int(row, 6) as u64,
            clock_rate_khz: (int(row, 7) / 1000) as u64,
            l2_cache_bytes: int(row, 8) as u64,
            bus_location: text(row, 9).unwrap_or_default(),
            limits: GpuLimits {
                warp_size: limit(row, 10),
                max_warps_per_sm: limit(row, 11),
                max_blocks_per_sm: limit(row, 12),
                max_threads_per_block: limit(row, 13),
                registers_per_sm: limit(row, 14),
                registers_per_block: limit(row, 15),
                shared_memory_per_sm: limit(row, 16),
                shared_memory_per_block_optin: limit(row, 17),
            },
            streams: Vec::new(),
            metrics: Vec::new(),
        });
    }
    Ok(())
}

/// A device limit: a damaged or negative value reads as unknown (0).
fn limit(row: &impl super::cells::Cells, i: usize) -> u32 {
    u32::try_from(int(row, i)).unwrap_or(0)
}

/// Labels of an nsys enum table (`id → label`), empty when the table is absent.
fn enum_labels(b: &Builder, table: &str) -> rusqlite::Result<HashMap<i64, String>> {
    if !b.report.has_column(table, "label") {
        return Ok(HashMap::new());
    }
    let report = b.report.clone();
    let mut stmt = report
        .conn
        .prepare(&format!("SELECT id, label FROM \"{table}\""))?;
    let mut rows = stmt.query([])?;
    let mut labels = HashMap::new();
    while let Some(row) = rows.next()? {
        labels.insert(int(row, 0), text(row, 1).unwrap_or_default());
    }
    Ok(labels)
}

fn set_tracks(
    b: &mut Builder,
    g: &Grouping,
    spans: &SpanColumns,
    pick: fn(&mut Stream) -> &mut Track,
) {
    for (i, stream) in b.trace.streams.iter_mut().enumerate() {
        if i < g.tracks.len() {
            *pick(stream) = g.track(i, spans);
        }
    }
}

fn read_kernels(b: &mut Builder, streams: &mut Streams) -> rusqlite::Result<()> {
    let mut cols = op_columns();
    cols.extend([
        Req("demangledName"),
        Opt("shortName", "NULL"),
        Opt("mangledName", "NULL"),
        Opt("gridX", "0"),
        Opt("gridY", "0"),
        Opt("gridZ", "0"),
        Opt("blockX", "0"),
        Opt("blockY", "0"),
        Opt("blockZ", "0"),
        Opt("registersPerThread", "0"),
        Opt("staticSharedMemory", "0"),
        Opt("dynamicSharedMemory", "0"),
        Opt("localMemoryPerThread", "0"),
        Opt("localMemoryTotal", "0"),
        Opt("sharedMemoryExecuted", "0"),
        Opt("launchType", "0"),
        Opt("cacheConfig", "0"),
        Opt("sharedMemoryLimitConfig", "0"),
        Opt("gridId", "0"),
        Opt("graphNodeId", "0"),
    ]);
    let Some(sql) = b.select("CUPTI_ACTIVITY_KIND_KERNEL", &cols, "") else {
        // A CUDA trace without kernels is unusual enough to point out.
        if !b.report.has_table("CUPTI_ACTIVITY_KIND_KERNEL")
            && b.report.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")
        {
            b.warn("no kernels in this report (no CUPTI_ACTIVITY_KIND_KERNEL table)".into());
        }
        return Ok(());
    };
    const TABLE: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
    let slot: fn(&mut Carry) -> &mut GrownKernels = |carry| carry.part();
    let Some(grown) = grow::take(b, TABLE, EventKind::Kernel, slot) else {
        return read_rows(b, TABLE, &sql, |b, rows| kernels_from(b, streams, rows));
    };
    let grown = grown.grow(b, TABLE, &sql, |b, grown, rows| {
        append_kernels(b, streams, grown, rows)
    })?;
    b.trace.kernels = Arc::new(grown.table.0.clone());
    grow::keep(b, grown, EventKind::Kernel, slot);
    Ok(())
}

/// A stream's key, as its rows name it.
fn key_of_stream(s: &Stream) -> StreamKey {
    (s.pid, s.device_id, s.context_id, s.stream_id)
}

/// What appending a GPU table's new rows (`ops`, their streams `keys`) to
/// `grown` starts with: the streams seen before numbered first (first come,
/// as in one read), the rows grouped by stream, their starts in track order;
/// [`OutOfOrder`] when a stream's new rows start before its last one (of
/// the table's spans, `spans`); rows repaired or skipped (`what`) counted
/// and warned of.
fn group_new_rows<T>(
    b: &mut Builder,
    streams: &mut Streams,
    grown: &mut Grown<T, StreamKey>,
    spans: fn(&T) -> &SpanColumns,
    keys: &Runs<StreamKey>,
    ops: &RawOps,
    what: &str,
) -> Result<(Grouping, Vec<Ns>), OutOfOrder> {
    for &(key, _) in &grown.tracks {
        streams.get(b, key);
    }
    let stream = streams.resolve(b, keys);
    let g = Grouping::from_runs(&stream, &ops.start, b.trace.streams.len());
    let start = g.take(&ops.start[..]);
    let keys = b.trace.streams.iter().map(key_of_stream);
    if !grown.in_time_order(keys, &g, &start, spans(&grown.table)) {
        return Err(OutOfOrder);
    }
    grown.bad += ops.bad;
    grown.missing += ops.missing;
    warn_bad(b, grown.bad, grown.missing, what);
    Ok((g, start))
}

/// What the loads of a report that only grows keep of its kernels (see
/// [`super::grow`]): the table, with the numbers it gave launch
/// configurations, and each stream's track by stream key.
pub(super) type GrownKernels = Grown<(Kernels, HashMap<LaunchConfig, u32>), StreamKey>;

/// `rows` appended to `grown`'s kernels, grouped by stream (see
/// [`super::grow`]).
fn append_kernels(
    b: &mut Builder,
    streams: &mut Streams,
    grown: &mut GrownKernels,
    rows: KernelRows,
) -> Result<(), OutOfOrder> {
    let spans: fn(&_) -> &SpanColumns = |t: &(Kernels, _)| &t.0.spans;
    let (g, start) = group_new_rows(
        b,
        streams,
        grown,
        spans,
        &rows.stream_keys,
        &rows.ops,
        "kernels",
    )?;
    let (t, numbers) = &mut grown.table;
    // The read's launch configurations, numbered as the table numbers them.
    let mut number = vec![0u32; rows.configs.len()];
    for (config, &local) in &rows.configs {
        let next = t.configs.len() as u32;
        number[local as usize] = *numbers.entry(*config).or_insert_with(|| {
            t.configs.push(*config);
            next
        });
    }
    let config: Vec<u32> = (g.view(&rows.config[..]).iter())
        .map(|&c| number.get(c as usize).copied().unwrap_or(0))
        .collect();
    let base = t.spans.len() as u32;
    let name = g.take(&rows.ops.name[..]);
    t.spans.append(&start, &g.view(&rows.ops.end[..]), &name);
    let (short, mangled) = (g.view(&rows.short_name[..]), g.view(&rows.mangled_name[..]));
    for ((&name, &short), &mangled) in name.iter().zip(short.iter()).zip(mangled.iter()) {
        t.names.push(name, short, mangled);
    }
    t.correlation
        .extend_from_slice(&g.take(&rows.ops.correlation[..]));
    t.config.extend_from_slice(&config);
    for id in g.take(&rows.grid_id[..]) {
        t.grid_id.push(id);
    }
    for id in g.take(&rows.graph_node_id[..]) {
        t.graph_node_id.push(id);
    }
    let tracks = (b.trace.streams.iter_mut()).map(|s| (key_of_stream(s), &mut s.kernels));
    add_runs(&mut grown.tracks, tracks, &g, base, &t.spans);
    Ok(())
}

/// The kernels of `rows`, grouped by stream.
fn kernels_from(b: &mut Builder, streams: &mut Streams, mut rows: Rows<KernelRows>) {
    let stream = streams.resolve(b, &rows.get().stream_keys);
    let ops = &rows.get().ops;
    warn_bad(b, ops.bad, ops.missing, "kernels");
    let start = column!(rows, ops.start);
    let g = Grouping::from_runs(&stream, &start, b.trace.streams.len());
    let (end, name, correlation) = (
        column!(rows, ops.end),
        column!(rows, ops.name),
        column!(rows, ops.correlation),
    );
    let (short, mangled, config) = (
        column!(rows, short_name),
        column!(rows, mangled_name),
        column!(rows, config),
    );
    let (grid_id, graph_node_id) = (column!(rows, grid_id), column!(rows, graph_node_id));
    // Each column is reordered (or, rows in order, copied from a growing
    // report's carry) on its own thread: the reads are scattered, so a column
    // takes one core's worth of memory bandwidth at most. The starts with
    // the ends, the names with what is kept of the short and mangled ones.
    let g = &g;
    let ((start, ends), (name, names), (correlation, config), (grid_id, graph_node_id)) =
        std::thread::scope(|scope| {
            let starts = scope.spawn(move || {
                let start = g.take(start);
                let ends = EncodedEnds::new(&start, &g.view(&end));
                (start, ends)
            });
            let names = scope.spawn(move || {
                let name = g.take(name);
                let names = KernelNames::from_columns(&name, &g.view(&short), &g.view(&mangled));
                (name, names)
            });
            let ids = scope.spawn(move || (g.take(correlation), g.take(config)));
            let graph = (
                IdColumn::from_vec(g.take(grid_id)),
                SparseColumn::from_vec(g.take(graph_node_id)),
            );
            (joined(starts), joined(names), joined(ids), graph)
        });
    let spans = SpanColumns::from_parts(start, ends, name);
    set_tracks(b, g, &spans, |s| &mut s.kernels);
    let configs = &rows.get().configs;
    let mut configs_by_id = vec![LaunchConfig::default(); configs.len()];
    for (cfg, &i) in configs {
        configs_by_id[i as usize] = *cfg;
    }
    b.trace.kernels = Arc::new(Kernels {
        names,
        config: config.into(),
        grid_id,
        graph_node_id,
        configs: configs_by_id,
        spans,
        correlation: correlation.into(),
    });
}

/// Kernel rows as read, before grouping by stream.
#[derive(Default)]
pub(super) struct KernelRows {
    ops: RawOps,
    stream_keys: Runs<StreamKey>,
    short_name: Vec<StrId>,
    mangled_name: Vec<StrId>,
    config: Vec<u32>,
    grid_id: Vec<u64>,
    graph_node_id: Vec<u64>,
    /// Launch configurations seen so far, each stored once.
    configs: HashMap<LaunchConfig, u32>,
    /// The last few configurations looked up: kernels come in runs of a few
    /// launch sites, and comparing is far cheaper than hashing 50 bytes.
    recent: Vec<(LaunchConfig, u32)>,
}

impl KernelRows {
    fn config_number(&mut self, launch: LaunchConfig) -> u32 {
        if let Some(&(_, n)) = self.recent.iter().find(|(c, _)| *c == launch) {
            return n;
        }
        let next = self.configs.len() as u32;
        let n = *self.configs.entry(launch).or_insert(next);
        if self.recent.len() == 4 {
            self.recent.remove(0);
        }
        self.recent.push((launch, n));
        n
    }
}

impl RowSink for KernelRows {
    fn reserve(&mut self, rows: usize) {
        self.ops.reserve(rows);
        self.short_name.reserve(rows);
        self.mangled_name.reserve(rows);
        self.config.reserve(rows);
        self.grid_id.reserve(rows);
        self.graph_node_id.reserve(rows);
    }

    fn push(&mut self, row: &RawRows, strings: &IdMap) {
        let Some((start, end)) = row_times(row, &mut self.ops.missing) else {
            return;
        };
        let c = OP_COLUMNS;
        let u = |i: usize| int(row, i).clamp(0, u32::MAX as i64) as u32;
        let small = |i: usize| int(row, i).clamp(0, 255) as u8;
        let name = opt_int(row, c)
            .and_then(|id| strings.get(id))
            .unwrap_or_default();
        self.stream_keys.push(stream_key(row));
        // The stream is resolved after reading (from `stream_keys`).
        self.ops.push(start, end, name, int(row, 6) as u32);
        self.short_name.push(
            opt_int(row, c + 1)
                .and_then(|n| strings.get(n))
                .unwrap_or(name),
        );
        self.mangled_name.push(
            opt_int(row, c + 2)
                .and_then(|n| strings.get(n))
                .unwrap_or_default(),
        );
        let launch = LaunchConfig {
            grid: [u(c + 3), u(c + 4), u(c + 5)],
            block: [u(c + 6), u(c + 7), u(c + 8)],
            registers_per_thread: u(c + 9),
            static_shared_memory: u(c + 10),
            dynamic_shared_memory: u(c + 11),
            local_memory_per_thread: u(c + 12),
            local_memory_total: int(row, c + 13).max(0) as u64,
            shared_memory_executed: u(c + 14),
            launch_type: small(c + 15),
            cache_config: small(c + 16),
            shared_memory_limit_config: small(c + 17),
        };
        let config = self.config_number(launch);
        self.config.push(config);
        self.grid_id.push(int(row, c + 18) as u64);
        self.graph_node_id.push(int(row, c + 19) as u64);
    }

    fn append(&mut self, later: Self) {
        // Config numbers are per piece: renumber the later piece's into ours.
        let mut remap = vec![0u32; later.configs.len()];
        for (cfg, i) in later.configs {
            let next = self.configs.len() as u32;
            remap[i as usize] = *self.configs.entry(cfg).or_insert(next);
        }
        self.config
            .extend(later.config.iter().map(|&i| remap[i as usize]));
        self.ops.append(later.ops);
        self.stream_keys.append(later.stream_keys);
        self.short_name.extend(later.short_name);
        self.mangled_name.extend(later.mangled_name);
        self.grid_id.extend(later.grid_id);
        self.graph_node_id.extend(later.graph_node_id);
    }
}

/// Built-in labels for `ENUM_CUDA_MEMCPY_OPER`, used when a report lacks the table.
fn default_copy_label(kind: i64) -> String {
    match kind {
        1 => "Host-to-Device",
        2 => "Device-to-Host",
        3 => "Host-to-Array",
        4 => "Array-to-Host",
        5 => "Array-to-Array",
        6 => "Array-to-Device",
        7 => "Device-to-Array",
        8 => "Device-to-Device",
        9 => "Host-to-Host",
        10 => "Peer-to-Peer",
        11 => "Unified Host-to-Device",
        12 => "Unified Device-to-Host",
        13 => "Unified Device-to-Device",
        0 => "Unknown",
        _ => return format!("Unknown ({kind})"),
    }
    .to_string()
}

/// The own columns of one GPU operation table (those after the common ones,
/// from [`OP_COLUMNS`] on), kept row by row as read.
trait OwnColumns: Default + Send {
    /// The table, and what its rows are called in warnings.
    const TABLE: &'static str;
    const WHAT: &'static str;
    /// The nsys enum table that labels the rows' names, if any.
    const LABELS: Option<&'static str>;
    /// The columns selected after the common ones.
    fn columns() -> Vec<super::db::Col<'static>>;
    /// Keeps the row's own cells; returns the key its name is made from
    /// (the copy kind, the sync type, the graph id).
    fn push(&mut self, row: &RawRows) -> i64;
    fn reserve(&mut self, rows: usize);
    fn append(&mut self, later: Self);
    /// The name of the rows whose key is `key` (`labels`: the enum table's).
    fn label(key: i64, labels: &HashMap<i64, String>) -> String;
}

/// `reserve` and `append` of a kind's own columns, column by column.
macro_rules! row_columns {
    ($($column:ident),+) => {
        fn reserve(&mut self, rows: usize) {
            $(self.$column.reserve(rows);)+
        }

        fn append(&mut self, later: Self) {
            $(self.$column.extend(later.$column);)+
        }
    };
}

/// The model's table of one kind of GPU operation, extended read by read.
trait OpTable: Default + Clone {
    type Own: OwnColumns;
    const KIND: EventKind;
    fn spans(&self) -> &SpanColumns;
    fn spans_mut(&mut self) -> &mut SpanColumns;
    fn correlation(&mut self) -> &mut crate::model::Column<u32>;
    /// Appends the own columns of `rows` in track order (`g`).
    fn append_own(&mut self, g: &Grouping, rows: &OpRows<Self::Own>, labels: &HashMap<i64, String>);
    fn track(stream: &mut Stream) -> &mut Track;
    fn slot(carry: &mut Carry) -> &mut GrownOps<Self>;
    fn publish(self, trace: &mut Trace);
}

/// What every GPU operation table answers alike: its common columns, its
/// track on a stream (`track`), its place in the carry and in the trace
/// (`field`).
macro_rules! table_parts {
    ($track:ident, $field:ident) => {
        fn spans(&self) -> &SpanColumns {
            &self.spans
        }

        fn spans_mut(&mut self) -> &mut SpanColumns {
            &mut self.spans
        }

        fn correlation(&mut self) -> &mut crate::model::Column<u32> {
            &mut self.correlation
        }

        fn track(stream: &mut Stream) -> &mut Track {
            &mut stream.$track
        }

        fn slot(carry: &mut Carry) -> &mut GrownOps<Self> {
            carry.part()
        }

        fn publish(self, trace: &mut Trace) {
            trace.$field = Arc::new(self);
        }
    };
}

/// Rows of a GPU operation table as read, before grouping by stream.
#[derive(Default)]
struct OpRows<E> {
    ops: RawOps,
    stream_keys: Runs<StreamKey>,
    /// What each row's name is made from ([`OwnColumns::label`]).
    name_key: Vec<i64>,
    own: E,
}

impl<E: OwnColumns> RowSink for OpRows<E> {
    fn reserve(&mut self, rows: usize) {
        self.ops.reserve(rows);
        self.name_key.reserve(rows);
        self.own.reserve(rows);
    }

    fn push(&mut self, row: &RawRows, _: &IdMap) {
        let Some((start, end)) = row_times(row, &mut self.ops.missing) else {
            return;
        };
        self.stream_keys.push(stream_key(row));
        // Named once the whole read is in (see `append_ops`).
        self.ops
            .push(start, end, StrId::default(), int(row, 6) as u32);
        let key = self.own.push(row);
        self.name_key.push(key);
    }

    fn append(&mut self, later: Self) {
        self.ops.append(later.ops);
        self.stream_keys.append(later.stream_keys);
        self.name_key.extend(later.name_key);
        self.own.append(later.own);
    }
}

/// A GPU operation table as the loads of a report that only grows keep it
/// (see [`super::grow`]): the table, the names its rows were given by key
/// (in the order a read of the table first meets them), and each stream's
/// track by stream key.
pub(super) type GrownOps<T> = Grown<(T, Vec<(i64, StrId)>), StreamKey>;

/// Reads GPU operation table `T` (none when the report has no such table):
/// in a growing load, only the rows added since the last, appended.
fn read_op_table<T: OpTable>(b: &mut Builder, streams: &mut Streams) -> rusqlite::Result<()> {
    let table = T::Own::TABLE;
    let mut cols = op_columns();
    cols.extend(T::Own::columns());
    let Some(sql) = b.select(table, &cols, "") else {
        return Ok(());
    };
    let labels = match T::Own::LABELS {
        Some(labels) => enum_labels(b, labels)?,
        None => HashMap::new(),
    };
    let mut append = |b: &mut Builder, grown: &mut GrownOps<T>, rows: OpRows<T::Own>| {
        append_ops(b, streams, grown, rows, &labels)
    };
    let grown = match grow::take(b, table, T::KIND, T::slot) {
        Some(grown) => grown.grow(b, table, &sql, append)?,
        None => {
            let mut whole = GrownOps::<T>::default();
            let rows = read_table(b, table, &sql)?;
            append(b, &mut whole, rows)
                .map_err(|OutOfOrder| not_a_report("rows out of order in one read"))?;
            whole
        }
    };
    grown.table.0.clone().publish(&mut b.trace);
    grow::keep(b, grown, T::KIND, T::slot);
    Ok(())
}

/// `rows` appended to `grown`'s table, grouped by stream (see
/// [`super::grow`]); a whole load appends all its rows to an empty one.
fn append_ops<T: OpTable>(
    b: &mut Builder,
    streams: &mut Streams,
    grown: &mut GrownOps<T>,
    rows: OpRows<T::Own>,
    labels: &HashMap<i64, String>,
) -> Result<(), OutOfOrder> {
    let spans: fn(&_) -> &SpanColumns = |t: &(T, _)| t.0.spans();
    let (g, start) = group_new_rows(
        b,
        streams,
        grown,
        spans,
        &rows.stream_keys,
        &rows.ops,
        T::Own::WHAT,
    )?;
    let (table, names) = &mut grown.table;
    // Names are interned in the order one read of the table meets them (the
    // keys seen before first), so that a growing load's strings are a whole
    // load's. Other strings may have come in between since the last load:
    // then the rows already named are named again.
    let mut renamed = HashMap::new();
    for (key, id) in names.iter_mut() {
        let now = b.trace.strings.intern(&T::Own::label(*key, labels));
        if now != *id {
            renamed.insert(*id, now);
            *id = now;
        }
    }
    if !renamed.is_empty() {
        let spans = table.spans_mut();
        spans.name = (spans.name.iter())
            .map(|n| renamed.get(n).copied().unwrap_or(*n))
            .collect();
    }
    // In row order, as one read meets them.
    let mut by_key: HashMap<i64, StrId> = names.iter().copied().collect();
    let name: Vec<StrId> = (rows.name_key.iter())
        .map(|&key| {
            *by_key.entry(key).or_insert_with(|| {
                let id = b.trace.strings.intern(&T::Own::label(key, labels));
                names.push((key, id));
                id
            })
        })
        .collect();
    let name = g.take(name);
    let base = table.spans().len() as u32;
    table
        .spans_mut()
        .append(&start, &g.view(&rows.ops.end[..]), &name);
    table
        .correlation()
        .extend_from_slice(&g.take(&rows.ops.correlation[..]));
    table.append_own(&g, &rows, labels);
    let tracks = (b.trace.streams.iter_mut()).map(|s| (key_of_stream(s), T::track(s)));
    add_runs(&mut grown.tracks, tracks, &g, base, table.spans());
    Ok(())
}

/// A device id column; -1 marks one the report left NULL.
fn device_id(row: &dyn Cells, i: usize) -> i32 {
    opt_int(row, i).map_or(-1, |d| d.clamp(0, i32::MAX as i64) as i32)
}

/// A memory kind column; 255 marks one the report did not give.
fn mem_kind(row: &dyn Cells, i: usize) -> u8 {
    opt_int(row, i).map_or(255, |k| k.clamp(0, 254) as u8)
}

/// A green context id column, 0 when none.
fn green_context(row: &dyn Cells, i: usize) -> u32 {
    int(row, i).clamp(0, u32::MAX as i64) as u32
}

/// `column` in track order, appended to `to`.
fn append_grouped<T: Copy>(to: &mut crate::model::Column<T>, g: &Grouping, column: &[T]) {
    to.extend_from_slice(&g.view(column));
}

#[derive(Default)]
struct MemcpyColumns {
    bytes: Vec<u64>,
    copy_kind: Vec<u8>,
    src_kind: Vec<u8>,
    dst_kind: Vec<u8>,
    src_device: Vec<i32>,
    dst_device: Vec<i32>,
    green_context: Vec<u32>,
}

impl OwnColumns for MemcpyColumns {
    const TABLE: &'static str = "CUPTI_ACTIVITY_KIND_MEMCPY";
    const WHAT: &'static str = "memory copies";
    const LABELS: Option<&'static str> = Some("ENUM_CUDA_MEMCPY_OPER");

    fn columns() -> Vec<super::db::Col<'static>> {
        vec![
            Req("bytes"),
            Req("copyKind"),
            Opt("srcKind", "NULL"),
            Opt("dstKind", "NULL"),
            Opt("srcDeviceId", "NULL"),
            Opt("dstDeviceId", "NULL"),
            Opt("greenContextId", "0"),
        ]
    }

    fn push(&mut self, row: &RawRows) -> i64 {
        let c = OP_COLUMNS;
        let copy = int(row, c + 1);
        self.bytes.push(int(row, c).max(0) as u64);
        self.copy_kind.push(copy.clamp(0, 255) as u8);
        self.src_kind.push(mem_kind(row, c + 2));
        self.dst_kind.push(mem_kind(row, c + 3));
        self.src_device.push(device_id(row, c + 4));
        self.dst_device.push(device_id(row, c + 5));
        self.green_context.push(green_context(row, c + 6));
        copy
    }

    row_columns!(
        bytes,
        copy_kind,
        src_kind,
        dst_kind,
        src_device,
        dst_device,
        green_context
    );

    fn label(copy: i64, labels: &HashMap<i64, String>) -> String {
        let label = labels
            .get(&copy)
            .cloned()
            .unwrap_or_else(|| default_copy_label(copy));
        format!("[CUDA memcpy {label}]")
    }
}

impl OpTable for Memcpys {
    type Own = MemcpyColumns;
    const KIND: EventKind = EventKind::Memcpy;
    table_parts!(memcpys, memcpys);

    fn append_own(
        &mut self,
        g: &Grouping,
        rows: &OpRows<MemcpyColumns>,
        labels: &HashMap<i64, String>,
    ) {
        let own = &rows.own;
        append_grouped(&mut self.bytes, g, &own.bytes);
        append_grouped(&mut self.copy_kind, g, &own.copy_kind);
        append_grouped(&mut self.src_kind, g, &own.src_kind);
        append_grouped(&mut self.dst_kind, g, &own.dst_kind);
        append_grouped(&mut self.src_device, g, &own.src_device);
        append_grouped(&mut self.dst_device, g, &own.dst_device);
        append_grouped(&mut self.green_context, g, &own.green_context);
        // Without the enum table at all, the built-in labels stand in.
        let known: Vec<bool> = (rows.name_key.iter())
            .map(|copy| {
                if labels.is_empty() {
                    (0..=13).contains(copy)
                } else {
                    labels.contains_key(copy)
                }
            })
            .collect();
        append_grouped(&mut self.kind_known, g, &known);
    }
}

#[derive(Default)]
struct MemsetColumns {
    bytes: Vec<u64>,
    value: Vec<u32>,
    mem_kind: Vec<u8>,
    green_context: Vec<u32>,
}

impl OwnColumns for MemsetColumns {
    const TABLE: &'static str = "CUPTI_ACTIVITY_KIND_MEMSET";
    const WHAT: &'static str = "memory sets";
    const LABELS: Option<&'static str> = None;

    fn columns() -> Vec<super::db::Col<'static>> {
        vec![
            Req("bytes"),
            Opt("value", "0"),
            Opt("memKind", "NULL"),
            Opt("greenContextId", "0"),
        ]
    }

    fn push(&mut self, row: &RawRows) -> i64 {
        let c = OP_COLUMNS;
        self.bytes.push(int(row, c).max(0) as u64);
        self.value.push(int(row, c + 1) as u32);
        self.mem_kind.push(mem_kind(row, c + 2));
        self.green_context.push(green_context(row, c + 3));
        0
    }

    row_columns!(bytes, value, mem_kind, green_context);

    fn label(_: i64, _: &HashMap<i64, String>) -> String {
        "[CUDA memset]".into()
    }
}

impl OpTable for Memsets {
    type Own = MemsetColumns;
    const KIND: EventKind = EventKind::Memset;
    table_parts!(memsets, memsets);

    fn append_own(&mut self, g: &Grouping, rows: &OpRows<MemsetColumns>, _: &HashMap<i64, String>) {
        let own = &rows.own;
        append_grouped(&mut self.bytes, g, &own.bytes);
        append_grouped(&mut self.value, g, &own.value);
        append_grouped(&mut self.mem_kind, g, &own.mem_kind);
        append_grouped(&mut self.green_context, g, &own.green_context);
    }
}

#[derive(Default)]
struct SyncColumns {
    sync_type: Vec<u8>,
    event_id: Vec<u32>,
}

impl OwnColumns for SyncColumns {
    const TABLE: &'static str = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    const WHAT: &'static str = "synchronizations";
    const LABELS: Option<&'static str> = Some("ENUM_CUPTI_SYNC_TYPE");

    fn columns() -> Vec<super::db::Col<'static>> {
        vec![Opt("syncType", "0"), Opt("eventId", "0")]
    }

    fn push(&mut self, row: &RawRows) -> i64 {
        let kind = int(row, OP_COLUMNS);
        self.sync_type.push(kind.clamp(0, 255) as u8);
        self.event_id.push(int(row, OP_COLUMNS + 1) as u32);
        kind
    }

    row_columns!(sync_type, event_id);

    fn label(kind: i64, labels: &HashMap<i64, String>) -> String {
        labels.get(&kind).cloned().unwrap_or_else(|| match kind {
            1 => "Event sync".into(),
            2 => "Stream wait sync".into(),
            3 => "Stream sync".into(),
            4 => "Context sync".into(),
            _ => format!("Unknown sync ({kind})"),
        })
    }
}

impl OpTable for Syncs {
    type Own = SyncColumns;
    const KIND: EventKind = EventKind::Sync;
    table_parts!(syncs, syncs);

    fn append_own(&mut self, g: &Grouping, rows: &OpRows<SyncColumns>, _: &HashMap<i64, String>) {
        append_grouped(&mut self.sync_type, g, &rows.own.sync_type);
        append_grouped(&mut self.event_id, g, &rows.own.event_id);
    }
}

#[derive(Default)]
struct GraphColumns {
    graph_id: Vec<u32>,
    graph_exec_id: Vec<u32>,
}

impl OwnColumns for GraphColumns {
    const TABLE: &'static str = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
    const WHAT: &'static str = "CUDA graph executions";
    const LABELS: Option<&'static str> = None;

    fn columns() -> Vec<super::db::Col<'static>> {
        vec![Opt("graphId", "0"), Opt("graphExecId", "0")]
    }

    fn push(&mut self, row: &RawRows) -> i64 {
        let id = int(row, OP_COLUMNS) as u32;
        self.graph_id.push(id);
        self.graph_exec_id.push(int(row, OP_COLUMNS + 1) as u32);
        id.into()
    }

    row_columns!(graph_id, graph_exec_id);

    fn label(id: i64, _: &HashMap<i64, String>) -> String {
        format!("CUDA graph {id}")
    }
}

impl OpTable for GraphExecs {
    type Own = GraphColumns;
    const KIND: EventKind = EventKind::Graph;
    table_parts!(graphs, graph_execs);

    fn append_own(&mut self, g: &Grouping, rows: &OpRows<GraphColumns>, _: &HashMap<i64, String>) {
        append_grouped(&mut self.graph_id, g, &rows.own.graph_id);
        append_grouped(&mut self.graph_exec_id, g, &rows.own.graph_exec_id);
    }
}

fn read_cuda_events(b: &mut Builder, streams: &mut Streams) -> rusqlite::Result<()> {
    const TABLE: &str = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
    let Some(sql) = b.select(
        TABLE,
        &[
            Opt("globalPid", "0"),
            Opt("deviceId", "0"),
            Opt("contextId", "0"),
            Req("streamId"),
            Opt("correlationId", "0"),
            Opt("eventId", "0"),
        ],
        "",
    ) else {
        return Ok(());
    };
    // A growing report's records read before are kept by stream key:
    // streams are numbered as the tables first name them, which a later
    // load may do in another order.
    let mut kept = match b.carry.as_deref_mut() {
        Some(carry) => std::mem::take(carry.part::<CudaEventRows>()),
        None => CudaEventRows::default(),
    };
    grow::read_new_rows(b, TABLE, &sql, &mut kept, |_, row| {
        let key = (
            pid_of(int(row, 0)),
            int(row, 1) as u32,
            int(row, 2) as u32,
            int(row, 3) as u32,
        );
        Ok(Some((key, int(row, 4) as u32, int(row, 5) as u32)))
    })?;
    // Records come in runs of one stream: its number is looked up once a
    // run (a hash per record at every load was an eighth of a live
    // snapshot on an NVTX-heavy report).
    let mut last: Option<(StreamKey, u32)> = None;
    let records = (kept.rows.iter())
        .map(|&(key, correlation, event_id)| {
            let stream = match last {
                Some((k, stream)) if k == key => stream,
                _ => {
                    let stream = streams.get(b, key);
                    last = Some((key, stream));
                    stream
                }
            };
            CudaEventRecord {
                stream,
                correlation,
                event_id,
            }
        })
        .collect();
    b.trace.cuda_events = Arc::new(records);
    if let Some(carry) = b.carry.as_deref_mut() {
        *carry.part::<CudaEventRows>() = kept;
    }
    Ok(())
}

/// Stream priorities from `TARGET_INFO_CUDA_STREAM` (streams without work are not added).
fn read_stream_info(b: &mut Builder) -> rusqlite::Result<()> {
    let Some(sql) = b.select(
        "TARGET_INFO_CUDA_STREAM",
        &[
            Req("streamId"),
            Opt("processId", "0"),
            Opt("contextId", "0"),
            Opt("priority", "0"),
        ],
        "",
    ) else {
        return Ok(());
    };
    let report = b.report.clone();
    let mut stmt = report.conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let (stream_id, pid, context) =
            (int(row, 0) as u32, int(row, 1) as u32, int(row, 2) as u32);
        for s in &mut b.trace.streams {
            if s.stream_id == stream_id && s.pid == pid && s.context_id == context {
                // Stored as an unsigned 32-bit value: 4294967291 is priority -5.
                s.priority = int(row, 3) as u32 as i32;
            }
        }
    }
    Ok(())
}

fn read_metrics(b: &mut Builder) -> rusqlite::Result<()> {
    let names_sql = b.select(
        "TARGET_INFO_GPU_METRICS",
        &[Req("typeId"), Req("metricId"), Opt("metricName", "NULL")],
        "",
    );
    let samples_sql = b.select(
        "GPU_METRICS",
        &[
            Req("timestamp"),
            Req("typeId"),
            Req("metricId"),
            Req("value"),
        ],
        "",
    );
    let (Some(names_sql), Some(samples_sql)) = (names_sql, samples_sql) else {
        return Ok(());
    };
    // (typeId, metricId) → (name, position in TARGET_INFO_GPU_METRICS): the
    // ids are not stable across nsys versions, the names and their order are.
    let mut names: HashMap<(i64, i64), (StrId, usize)> = HashMap::new();
    {
        let report = b.report.clone();
        let mut stmt = report.conn.prepare(&names_sql)?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let name = b.trace.strings.intern(&text(row, 2).unwrap_or_default());
            let position = names.len();
            names.insert((int(row, 0), int(row, 1)), (name, position));
        }
    }
    let mut series_of: HashMap<(i64, i64), usize> = HashMap::new();
    let mut series: Vec<MetricSeries> = Vec::new();
    {
        let report = b.report.clone();
        let mut stmt = report.conn.prepare(&samples_sql)?;
        let mut rows = stmt.query([])?;
        let mut last: Option<((i64, i64), usize)> = None;
        while let Some(row) = rows.next()? {
            let key = (int(row, 1), int(row, 2));
            let index = match last {
                Some((k, i)) if k == key => i,
                _ => {
                    let i = *series_of.entry(key).or_insert_with(|| {
                        let device_id = metrics_device(key.0);
                        let gpu = b
                            .trace
                            .gpus
                            .iter()
                            .position(|g| g.device_id == device_id)
                            .map_or(u32::MAX, |i| i as u32);
                        let (name, order) = names.get(&key).copied().unwrap_or_default();
                        series.push(MetricSeries {
                            gpu,
                            device_id,
                            order,
                            name,
                            ..MetricSeries::default()
                        });
                        series.len() - 1
                    });
                    last = Some((key, i));
                    i
                }
            };
            let s = &mut series[index];
            s.timestamp.push(int(row, 0));
            s.value.push(row.get::<_, f64>(3).unwrap_or(0.0) as f32);
            b.tick(1)?;
        }
    }
    for s in &mut series {
        if !s.timestamp.is_sorted() {
            let mut pairs: Vec<(Ns, f32)> = s
                .timestamp
                .iter()
                .copied()
                .zip(s.value.iter().copied())
                .collect();
            pairs.sort_by_key(|p| p.0);
            (s.timestamp, s.value) = pairs.into_iter().unzip();
        }
    }
    // Rows of a GPU in the order nsys lists its metrics, whatever order the
    // samples came in.
    series.sort_by_key(|s| (s.device_id, s.order));
    for (i, s) in series.iter().enumerate() {
        if let Some(gpu) = b.trace.gpus.get_mut(s.gpu as usize) {
            gpu.metrics.push(i as u32);
        }
    }
    b.trace.metrics = Arc::new(series);
    Ok(())
}

/// The device a `GPU_METRICS` type samples: the low byte of its `typeId`
/// (nsys numbers the types per GPU; the rest of the id names the metric set).
fn metrics_device(type_id: i64) -> u32 {
    (type_id & 0xff) as u32
}

pub(super) fn build_correlation(b: &mut Builder) -> rusqlite::Result<()> {
    if let Some(carry) = b.carry.take() {
        let before = carry.links.rows();
        let result = grow_correlation(b, &mut carry.links);
        carry.rows_linked += carry.links.rows().saturating_sub(before);
        b.carry = Some(carry);
        return result;
    }
    let t = &b.trace;
    let api = api_track_ids(t, 0);
    let gpu = op_track_ids(t, [0; 4]);
    b.trace.correlation = Arc::new(CorrelationIndex::build(&api, &gpu));
    Ok(())
}

/// Every stream's GPU operations of [`LINKED_OPS`] from row `from[k]` of
/// kind `k` on (stream after stream, the kinds in that order: the order an
/// id's operations are listed in), each run with its kind.
fn op_track_ids(t: &Trace, from: [u32; 4]) -> Vec<(GpuOpKind, TrackIds<'_>)> {
    let mut ops = Vec::new();
    for stream in &t.streams {
        for (&kind, from) in LINKED_OPS.iter().zip(from) {
            let track = match kind {
                GpuOpKind::Kernel => &stream.kernels,
                GpuOpKind::Memcpy => &stream.memcpys,
                GpuOpKind::Memset => &stream.memsets,
                GpuOpKind::Sync => &stream.syncs,
            };
            let ids = op_table(t, kind).1;
            ops.extend(track_ids(stream.pid, track, ids, from).map(|t| (kind, t)));
        }
    }
    ops
}

/// The runs of `track` (of process `pid`, correlation ids `ids`) from row
/// `from` on, as the correlation index reads them.
fn track_ids<'a>(
    pid: u32,
    track: &'a Track,
    ids: &'a [u32],
    from: u32,
) -> impl Iterator<Item = TrackIds<'a>> + 'a {
    (track.runs().iter())
        .filter(move |run| run.events.start >= from)
        .map(move |run| TrackIds {
            pid,
            events: run.events.clone(),
            ids,
        })
}

/// Every thread's CUDA API runs from row `from` on.
fn api_track_ids(t: &Trace, from: u32) -> Vec<TrackIds<'_>> {
    (t.threads.iter())
        .flat_map(|th| track_ids(th.pid, &th.cuda_api, &t.cuda_api.correlation, from))
        .collect()
}

impl GrownLinks {
    /// Rows linked so far, every table together.
    pub(super) fn rows(&self) -> u64 {
        u64::from(self.api_rows) + self.op_rows.iter().map(|&n| u64::from(n)).sum::<u64>()
    }
}

/// The GPU operations linked to API calls, in the order a whole build lists
/// an id's operations of one stream.
const LINKED_OPS: [GpuOpKind; 4] = [
    GpuOpKind::Kernel,
    GpuOpKind::Memcpy,
    GpuOpKind::Memset,
    GpuOpKind::Sync,
];

/// The rows of a GPU operation table, and its correlation ids.
fn op_table(t: &Trace, kind: GpuOpKind) -> (&SpanColumns, &[u32]) {
    match kind {
        GpuOpKind::Kernel => (&t.kernels.spans, &t.kernels.correlation),
        GpuOpKind::Memcpy => (&t.memcpys.spans, &t.memcpys.correlation),
        GpuOpKind::Memset => (&t.memsets.spans, &t.memsets.correlation),
        GpuOpKind::Sync => (&t.syncs.spans, &t.syncs.correlation),
    }
}

/// A growing report's correlation index: the API calls and GPU operations
/// added since the last load linked into the shared slots.
fn grow_correlation(b: &mut Builder, grown: &mut GrownLinks) -> rusqlite::Result<()> {
    let t = &b.trace;
    let api_rows = t.cuda_api.spans.len() as u32;
    let op_rows = LINKED_OPS.map(|kind| op_table(t, kind).0.len() as u32);
    if !grown.whole {
        let api = api_track_ids(t, grown.api_rows);
        let ops = op_track_ids(t, grown.op_rows);
        grown.whole = !grown.links.add(&api, &ops);
        (grown.api_rows, grown.op_rows) = (api_rows, op_rows);
    }
    if grown.whole {
        // `b.carry` is out (see `build_correlation`): a whole build.
        return build_correlation(b);
    }
    b.trace.correlation = Arc::new(CorrelationIndex::with_grown(grown.links.views(), api_rows));
    Ok(())
}
