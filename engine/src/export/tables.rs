//! The tables of one rank's model, as the Parquet export lays them out (docs/parquet.md):
//! names resolved to text, each time both as recorded and on the job clock.

use sightline::model::nsys::event_class::OS_RUNTIME;
use sightline::model::{NvtxKind, SpanColumns, Trace, Track};

use super::clock::RankClock;
use super::columns::{TableRows, Values};

/// The owner (a stream's or a thread's index) of each row of a table of `len` rows, from
/// the tracks that name the rows; `u32::MAX` for a row no track names.
fn owners<'t>(len: usize, tracks: impl Iterator<Item = (usize, &'t Track)>) -> Vec<u32> {
    let mut owner = vec![u32::MAX; len];
    for (index, track) in tracks {
        for row in track.rows() {
            if let Some(slot) = owner.get_mut(row as usize) {
                *slot = index as u32;
            }
        }
    }
    owner
}

/// The time columns every span table starts with.
fn span_columns<'a>(
    spans: &'a SpanColumns,
    clock: RankClock,
    trace: &'a Trace,
) -> Vec<(&'static str, Values<'a>)> {
    let offset = clock.offset_ns;
    vec![
        ("start_ns", Values::I64(Box::new(move |i| spans.start[i]))),
        ("end_ns", Values::I64(Box::new(move |i| spans.end(i)))),
        (
            "duration_ns",
            Values::I64(Box::new(move |i| spans.duration(i))),
        ),
        (
            "start_job_ns",
            Values::I64(Box::new(move |i| spans.start[i].saturating_add(offset))),
        ),
        (
            "end_job_ns",
            Values::I64(Box::new(move |i| spans.end(i).saturating_add(offset))),
        ),
        (
            "name",
            Values::Str(Box::new(move |i| trace.name(spans.name[i]))),
        ),
    ]
}

/// Every table of one rank (empty ones included: every rank has every folder's schema).
pub fn rank_tables(trace: &Trace, clock: RankClock) -> Vec<TableRows<'_>> {
    vec![
        gpu_table(trace, clock, GpuTable::Kernels),
        gpu_table(trace, clock, GpuTable::Memcpys),
        gpu_table(trace, clock, GpuTable::Memsets),
        gpu_table(trace, clock, GpuTable::Syncs),
        thread_table(trace, clock, ThreadTable::CudaApi),
        thread_table(trace, clock, ThreadTable::OsRuntime),
        nvtx_table(trace, clock),
        metrics_table(trace, clock),
        super::samples::samples_table(trace, clock),
    ]
}

/// The GPU tables: each row on one stream.
#[derive(Clone, Copy)]
enum GpuTable {
    Kernels,
    Memcpys,
    Memsets,
    Syncs,
}

fn gpu_table(trace: &Trace, clock: RankClock, table: GpuTable) -> TableRows<'_> {
    let (name, spans, correlation): (&'static str, &SpanColumns, &[u32]) = match table {
        GpuTable::Kernels => ("kernels", &trace.kernels.spans, &trace.kernels.correlation),
        GpuTable::Memcpys => ("memcpys", &trace.memcpys.spans, &trace.memcpys.correlation),
        GpuTable::Memsets => ("memsets", &trace.memsets.spans, &trace.memsets.correlation),
        GpuTable::Syncs => ("syncs", &trace.syncs.spans, &trace.syncs.correlation),
    };
    let streams = owners(
        spans.len(),
        trace.streams.iter().enumerate().map(|(i, s)| {
            let track = match table {
                GpuTable::Kernels => &s.kernels,
                GpuTable::Memcpys => &s.memcpys,
                GpuTable::Memsets => &s.memsets,
                GpuTable::Syncs => &s.syncs,
            };
            (i, track)
        }),
    );
    let stream = move |i: usize| trace.streams.get(streams[i] as usize);
    let stream = std::sync::Arc::new(stream);
    let field = |read: fn(&sightline::model::Stream) -> u32| {
        let stream = stream.clone();
        Values::OptU32(Box::new(move |i| stream(i).map(read)))
    };
    let mut columns = span_columns(spans, clock, trace);
    columns.extend([
        ("device_id", field(|s| s.device_id)),
        ("context_id", field(|s| s.context_id)),
        ("stream_id", field(|s| s.stream_id)),
        ("pid", field(|s| s.pid)),
        (
            "correlation_id",
            Values::U32(Box::new(move |i| correlation.get(i).copied().unwrap_or(0))),
        ),
    ]);
    match table {
        GpuTable::Kernels => columns.extend(kernel_columns(trace)),
        GpuTable::Memcpys => {
            let bytes = &trace.memcpys.bytes;
            columns.push(("bytes", Values::U64(Box::new(move |i| bytes[i]))));
        }
        GpuTable::Memsets => {
            let bytes = &trace.memsets.bytes;
            columns.push(("bytes", Values::U64(Box::new(move |i| bytes[i]))));
        }
        GpuTable::Syncs => {
            let kind = &trace.syncs.sync_type;
            columns.push((
                "sync_type",
                Values::U32(Box::new(move |i| u32::from(kind[i]))),
            ));
        }
    }
    TableRows {
        name,
        rows: spans.len(),
        columns,
    }
}

/// A kernel's launch shape and its other names.
fn kernel_columns(trace: &Trace) -> Vec<(&'static str, Values<'_>)> {
    let kernels = &trace.kernels;
    let config = move |i: usize| {
        (kernels.config.get(i))
            .and_then(|&c| kernels.configs.get(c as usize))
            .copied()
            .unwrap_or_default()
    };
    let mangled = move |i: usize| kernels.mangled_name(i).map_or("", |id| trace.name(id));
    vec![
        ("mangled_name", Values::Str(Box::new(mangled))),
        ("grid_x", Values::U32(Box::new(move |i| config(i).grid[0]))),
        ("grid_y", Values::U32(Box::new(move |i| config(i).grid[1]))),
        ("grid_z", Values::U32(Box::new(move |i| config(i).grid[2]))),
        (
            "block_x",
            Values::U32(Box::new(move |i| config(i).block[0])),
        ),
        (
            "block_y",
            Values::U32(Box::new(move |i| config(i).block[1])),
        ),
        (
            "block_z",
            Values::U32(Box::new(move |i| config(i).block[2])),
        ),
        (
            "registers_per_thread",
            Values::U32(Box::new(move |i| config(i).registers_per_thread)),
        ),
        (
            "static_shared_memory",
            Values::U32(Box::new(move |i| config(i).static_shared_memory)),
        ),
        (
            "dynamic_shared_memory",
            Values::U32(Box::new(move |i| config(i).dynamic_shared_memory)),
        ),
    ]
}

/// The CPU tables whose rows belong to one thread each.
#[derive(Clone, Copy)]
enum ThreadTable {
    CudaApi,
    OsRuntime,
}

/// The (pid, tid) columns of rows owned by threads.
fn thread_columns(trace: &Trace, threads: Vec<u32>) -> Vec<(&'static str, Values<'_>)> {
    let threads = std::sync::Arc::new(threads);
    let of = threads.clone();
    vec![
        (
            "pid",
            Values::OptU32(Box::new(move |i| {
                trace.threads.get(of[i] as usize).map(|t| t.pid)
            })),
        ),
        (
            "tid",
            Values::OptU32(Box::new(move |i| {
                trace.threads.get(threads[i] as usize).map(|t| t.tid)
            })),
        ),
    ]
}

fn thread_table(trace: &Trace, clock: RankClock, table: ThreadTable) -> TableRows<'_> {
    let (name, spans) = match table {
        ThreadTable::CudaApi => ("cuda_api", &trace.cuda_api.spans),
        ThreadTable::OsRuntime => ("os_runtime", &trace.osrt.spans),
    };
    let threads = owners(
        spans.len(),
        trace.threads.iter().enumerate().map(|(i, t)| match table {
            ThreadTable::CudaApi => (i, &t.cuda_api),
            ThreadTable::OsRuntime => (i, &t.osrt),
        }),
    );
    let mut columns = span_columns(spans, clock, trace);
    columns.extend(thread_columns(trace, threads));
    match table {
        ThreadTable::CudaApi => {
            let api = &trace.cuda_api;
            columns.push((
                "correlation_id",
                Values::U32(Box::new(move |i| {
                    api.correlation.get(i).copied().unwrap_or(0)
                })),
            ));
            columns.push((
                "return_value",
                Values::OptI64(Box::new(move |i| api.return_value.get(i).map(i64::from))),
            ));
        }
        ThreadTable::OsRuntime => {
            let osrt = &trace.osrt;
            columns.push((
                "return_value",
                Values::I64(Box::new(move |i| {
                    osrt.return_value.get(i).copied().unwrap_or(0)
                })),
            ));
            // What nsys's osrt_sum counts: calls, not the other records of the table.
            columns.push((
                "is_call",
                Values::Bool(Box::new(move |i| {
                    osrt.event_class.get(i).map(|&c| i64::from(c)) == Some(OS_RUNTIME)
                })),
            ));
        }
    }
    TableRows {
        name,
        rows: spans.len(),
        columns,
    }
}

fn nvtx_table(trace: &Trace, clock: RankClock) -> TableRows<'_> {
    let nvtx = &trace.nvtx;
    let spans = &nvtx.spans;
    // Owner: thread index and the track's position in that thread's NVTX tracks.
    let mut domain_of = vec![""; spans.len()];
    for thread in &trace.threads {
        for track in &thread.nvtx {
            for row in track.track.rows() {
                if let Some(slot) = domain_of.get_mut(row as usize) {
                    *slot = track.domain.as_str();
                }
            }
        }
    }
    let threads = owners(
        spans.len(),
        (trace.threads.iter().enumerate())
            .flat_map(|(i, t)| t.nvtx.iter().map(move |n| (i, &n.track))),
    );
    let mut columns = span_columns(spans, clock, trace);
    columns.extend(thread_columns(trace, threads));
    columns.extend([
        (
            "domain",
            Values::Str(Box::new(move |i| domain_of.get(i).copied().unwrap_or(""))),
        ),
        (
            "style",
            Values::Str(Box::new(move |i| match nvtx.kind.get(i) {
                Some(NvtxKind::PushPop) => "PushPop",
                Some(NvtxKind::StartEnd) => "StartEnd",
                Some(NvtxKind::Mark) => "Mark",
                None => "",
            })),
        ),
        (
            "depth",
            Values::U32(Box::new(move |i| {
                nvtx.depth.get(i).copied().map_or(0, u32::from)
            })),
        ),
    ]);
    TableRows {
        name: "nvtx",
        rows: spans.len(),
        columns,
    }
}

/// The sampled GPU metrics, one row per (metric, sample).
fn metrics_table(trace: &Trace, clock: RankClock) -> TableRows<'_> {
    // Row i is sample `i - starts[s]` of series s.
    let mut starts = Vec::with_capacity(trace.metrics.len() + 1);
    let mut total = 0;
    for series in trace.metrics.iter() {
        starts.push(total);
        total += series.timestamp.len();
    }
    starts.push(total);
    let starts = std::sync::Arc::new(starts);
    let at = move |i: usize| -> (usize, usize) {
        let s = starts.partition_point(|&from| from <= i).saturating_sub(1);
        (s, i - starts[s])
    };
    let at = std::sync::Arc::new(at);
    let (a, b, c, d, e) = (at.clone(), at.clone(), at.clone(), at.clone(), at);
    let metrics = &trace.metrics;
    let offset = clock.offset_ns;
    TableRows {
        name: "gpu_metrics",
        rows: total,
        columns: vec![
            (
                "timestamp_ns",
                Values::I64(Box::new(move |i| {
                    let (s, k) = a(i);
                    metrics[s].timestamp[k]
                })),
            ),
            (
                "timestamp_job_ns",
                Values::I64(Box::new(move |i| {
                    let (s, k) = b(i);
                    metrics[s].timestamp[k].saturating_add(offset)
                })),
            ),
            (
                "device_id",
                Values::U32(Box::new(move |i| metrics[c(i).0].device_id)),
            ),
            (
                "metric",
                Values::Str(Box::new(move |i| trace.name(metrics[d(i).0].name))),
            ),
            (
                "value",
                Values::F32(Box::new(move |i| {
                    let (s, k) = e(i);
                    metrics[s].value[k]
                })),
            ),
        ],
    }
}
