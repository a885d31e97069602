//! `sightline bench FILE [--json]`: how fast a report loads and how much memory
//! it takes, next to a floor: the time bare SQLite takes to hand over the same
//! columns the loader reads. The ratio load/floor is what the loader itself costs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;

use super::EXIT_BAD_INPUT;
use super::bench_sampling::{Cost, Deferred};
use crate::analysis::stats::{Report, compute};
use crate::loader;
use crate::model::TimeRange;

/// Arguments of `sightline bench`.
#[derive(Debug, clap::Args)]
#[command(
    about = "How fast a report loads, and its memory per event, next to bare SQLite's time",
    long_about = "Loads FILE and prints load time (total and by phase), events, memory per \
                  event, cuda_gpu_kern_sum time over the full range and over 1% of it, and the \
                  time bare SQLite takes to read the same columns (the floor)."
)]
pub struct BenchArgs {
    /// The report to load.
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs per stats timing; the median is reported.
const STATS_RUNS: usize = 5;

/// The columns the loader reads from its big tables (see `src/loader/cpu.rs`
/// and `gpu.rs`); those a report lacks are skipped.
const FLOOR_TABLES: &[(&str, &[&str])] = &[
    (
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        &[
            "start",
            "end",
            "nameId",
            "globalTid",
            "correlationId",
            "returnValue",
        ],
    ),
    (
        "CUPTI_ACTIVITY_KIND_KERNEL",
        &[
            "start",
            "end",
            "globalPid",
            "deviceId",
            "contextId",
            "streamId",
            "correlationId",
            "demangledName",
            "shortName",
            "mangledName",
            "gridX",
            "gridY",
            "gridZ",
            "blockX",
            "blockY",
            "blockZ",
            "registersPerThread",
            "staticSharedMemory",
            "dynamicSharedMemory",
            "localMemoryPerThread",
            "localMemoryTotal",
            "sharedMemoryExecuted",
            "launchType",
            "cacheConfig",
            "sharedMemoryLimitConfig",
            "gridId",
            "graphNodeId",
        ],
    ),
    (
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        &[
            "start",
            "end",
            "globalPid",
            "deviceId",
            "contextId",
            "streamId",
            "correlationId",
            "bytes",
            "copyKind",
            "srcKind",
            "dstKind",
        ],
    ),
    (
        "CUPTI_ACTIVITY_KIND_MEMSET",
        &[
            "start",
            "end",
            "globalPid",
            "deviceId",
            "contextId",
            "streamId",
            "correlationId",
            "bytes",
            "value",
            "memKind",
        ],
    ),
    (
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        &[
            "start",
            "end",
            "globalPid",
            "deviceId",
            "contextId",
            "streamId",
            "correlationId",
            "syncType",
            "eventId",
        ],
    ),
    (
        "NVTX_EVENTS",
        &[
            "start",
            "end",
            "eventType",
            "text",
            "textId",
            "globalTid",
            "endGlobalTid",
            "domainId",
            "color",
            "category",
            "int64Value",
            "uint64Value",
            "doubleValue",
            "int32Value",
            "uint32Value",
            "floatValue",
            "jsonText",
        ],
    ),
    (
        "OSRT_API",
        &[
            "start",
            "end",
            "nameId",
            "globalTid",
            "returnValue",
            "eventClass",
        ],
    ),
];

struct Results {
    file: String,
    file_bytes: u64,
    events: usize,
    load: Duration,
    /// The whole load's CPU time (every thread).
    load_cpu: Option<Duration>,
    /// The same report loaded without its CPU samples, then those read.
    deferred: Option<Deferred>,
    phases: Vec<(&'static str, Duration)>,
    heap_bytes: usize,
    rss_growth_bytes: Option<i64>,
    kern_sum_full: Duration,
    kern_sum_1pct: Duration,
    kern_sum_rows: usize,
    floor: Duration,
    floor_rows: u64,
    floor_checksum: i64,
    cpu: CpuMemory,
}

/// What the CPU samples and scheduling hold (`Trace::cpu`).
struct CpuMemory {
    samples: usize,
    switches: usize,
    /// Bytes of the samples: times, stacks, the stack tree and the frames.
    sample_bytes: usize,
    /// Bytes of the scheduling: a time and a state per switch.
    sched_bytes: usize,
    stack_nodes: usize,
    frames: usize,
}

impl CpuMemory {
    fn of(trace: &crate::model::Trace) -> CpuMemory {
        let cpu = &trace.cpu;
        let switches: usize = cpu.sched.iter().map(|s| s.at.len()).sum();
        let sched_bytes: usize = (cpu.sched.iter())
            .map(|s| s.at.capacity() * 8 + s.state.capacity())
            .sum();
        CpuMemory {
            samples: cpu.sample_count(),
            switches,
            sample_bytes: cpu.heap_bytes() - sched_bytes,
            sched_bytes,
            stack_nodes: cpu.stacks.len(),
            frames: cpu.frames.len(),
        }
    }

    /// Bytes per sample beyond its 8-byte timestamp.
    fn beyond_timestamp(&self) -> f64 {
        (self.sample_bytes as f64 - 8.0 * self.samples as f64) / self.samples.max(1) as f64
    }
}

pub fn main(args: BenchArgs) -> ExitCode {
    match run(&args.file) {
        Ok(r) => {
            use std::io::Write;
            let text = if args.json {
                format!("{}\n", to_json(&r))
            } else {
                to_text(&r)
            };
            // `> /dev/full`, a closed pipe: said (or not, for the pipe), no panic.
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(text.as_bytes()) {
                Ok(()) => super::output::finish(&mut stdout),
                Err(e) => super::output::write_failed(&e),
            }
        }
        Err(message) => {
            eprintln!("sightline bench: {message}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn run(path: &Path) -> Result<Results, String> {
    // Before the warm-up reads it: a FIFO or /dev/zero would never end.
    loader::check_file(path).map_err(|e| e.to_string())?;
    // Both the load and the floor should read from the page cache, so neither
    // pays for the disk and the first one measured is not penalised.
    // A file that cannot be read is left for the loader to explain.
    let file_bytes = warm_page_cache(path).unwrap_or(0);

    let rss_before = resident_bytes();
    let cancel = AtomicBool::new(false);
    let (loaded, whole) = Cost::of(|| loader::load_timed(path, &mut |_| {}, &cancel));
    let (trace, phases) = loaded.map_err(|e| e.to_string())?;
    let load = whole.wall;
    let rss_after = resident_bytes();
    let deferred = super::bench_sampling::deferred(path)?;

    let (lo, hi) = trace.info.time_range;
    let full = TimeRange {
        start: lo,
        end: hi.saturating_add(1),
    };
    // Saturating: a damaged report may span the whole i64 clock.
    let width = (hi.saturating_sub(lo) / 100).max(1);
    let mid = lo.midpoint(hi);
    let one_percent = TimeRange {
        start: mid.saturating_sub(width / 2),
        end: mid.saturating_sub(width / 2).saturating_add(width),
    };
    let (kern_sum_full, kern_sum_rows) = median_time(|| {
        compute(&trace, Report::CudaGpuKernSum, Some(full))
            .rows
            .len()
    });
    let (kern_sum_1pct, _) = median_time(|| {
        compute(&trace, Report::CudaGpuKernSum, Some(one_percent))
            .rows
            .len()
    });

    let t1 = Instant::now();
    let (floor_rows, floor_checksum) =
        read_floor(path).map_err(|e| format!("{}: reading the floor: {e}", path.display()))?;
    let floor = t1.elapsed();

    Ok(Results {
        file: path.display().to_string(),
        file_bytes,
        events: trace.event_count(),
        load,
        load_cpu: whole.cpu,
        deferred,
        phases: phases.0,
        heap_bytes: trace.heap_bytes(),
        cpu: CpuMemory::of(&trace),
        rss_growth_bytes: rss_before.zip(rss_after).map(|(b, a)| a - b),
        kern_sum_full,
        kern_sum_1pct,
        kern_sum_rows,
        floor,
        floor_rows,
        floor_checksum,
    })
}

fn warm_page_cache(path: &Path) -> std::io::Result<u64> {
    let mut file = std::fs::File::open(path)?;
    std::io::copy(&mut file, &mut std::io::sink())
}

/// Resident set size of this process, from /proc (Linux only).
fn resident_bytes() -> Option<i64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Median wall time of [`STATS_RUNS`] runs of `f`, and what the last run returned.
fn median_time<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(STATS_RUNS);
    let mut last = None;
    for _ in 0..STATS_RUNS {
        let t = Instant::now();
        let out = std::hint::black_box(f());
        times.push(t.elapsed());
        last = Some(out);
    }
    times.sort();
    let value = last.unwrap_or_else(f);
    (times[times.len() / 2], value)
}

/// Reads, with nothing but rusqlite, every column the loader reads from the big
/// tables, touching each value. Returns rows read and a checksum (so the
/// compiler cannot skip the work).
fn read_floor(path: &Path) -> rusqlite::Result<(u64, i64)> {
    // Opened the way the loader opens reports: read-only, immutable.
    let conn = crate::loader::open_read_only(path).map_err(|e| {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some(e.to_string()),
        )
    })?;
    let mut rows_read = 0u64;
    let mut sum = 0i64;
    for (table, wanted) in FLOOR_TABLES {
        let present: Vec<String> = conn
            .prepare(&format!("PRAGMA table_info(\"{table}\")"))?
            .query_map([], |r| r.get::<_, String>(1))?
            .collect::<Result<_, _>>()?;
        let cols: Vec<String> = wanted
            .iter()
            .filter(|c| present.iter().any(|p| p == *c))
            .map(|c| format!("\"{c}\""))
            .collect();
        if cols.is_empty() {
            continue;
        }
        let mut stmt = conn.prepare(&format!("SELECT {} FROM \"{table}\"", cols.join(", ")))?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            rows_read += 1;
            for i in 0..cols.len() {
                sum = sum.wrapping_add(match row.get_ref(i)? {
                    ValueRef::Integer(v) => v,
                    ValueRef::Real(v) => v.to_bits() as i64,
                    ValueRef::Text(t) | ValueRef::Blob(t) => t.len() as i64,
                    ValueRef::Null => 0,
                });
            }
        }
    }
    Ok((rows_read, sum))
}

fn per_event(bytes: f64, events: usize) -> f64 {
    if events == 0 {
        0.0
    } else {
        bytes / events as f64
    }
}

fn ratio(r: &Results) -> f64 {
    r.load.as_secs_f64() / r.floor.as_secs_f64().max(1e-9)
}

fn to_text(r: &Results) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "file                 {} ({:.1} MB)",
        r.file,
        r.file_bytes as f64 / 1e6
    );
    let _ = writeln!(s, "events loaded        {}", r.events);
    let _ = writeln!(s, "load                 {:.3} s", r.load.as_secs_f64());
    for (phase, t) in &r.phases {
        let _ = writeln!(s, "  {phase:<19} {:.3} s", t.as_secs_f64());
    }
    let whole = Cost {
        wall: r.load,
        cpu: r.load_cpu,
    };
    let _ = writeln!(s, "load, whole          {}", whole.text());
    if let Some(d) = &r.deferred {
        let _ = writeln!(s, "load, no CPU samples {}", d.load.text());
        let _ = writeln!(s, "  CPU samples later  {}", d.read_later.text());
    }
    let _ = writeln!(
        s,
        "model heap           {:.1} MB, {:.1} B/event",
        r.heap_bytes as f64 / 1e6,
        per_event(r.heap_bytes as f64, r.events)
    );
    match r.rss_growth_bytes {
        Some(g) => {
            let _ = writeln!(
                s,
                "RSS growth on load   {:.1} MB, {:.1} B/event",
                g as f64 / 1e6,
                per_event(g as f64, r.events)
            );
        }
        None => {
            let _ = writeln!(s, "RSS growth on load   unknown (no /proc/self/status)");
        }
    }
    let _ = writeln!(
        s,
        "cuda_gpu_kern_sum    full range {:.3} ms, 1% range {:.3} ms (median of {STATS_RUNS}; {} rows)",
        r.kern_sum_full.as_secs_f64() * 1e3,
        r.kern_sum_1pct.as_secs_f64() * 1e3,
        r.kern_sum_rows
    );
    let _ = writeln!(
        s,
        "floor (bare SQLite)  {:.3} s for {} rows (checksum {})",
        r.floor.as_secs_f64(),
        r.floor_rows,
        r.floor_checksum
    );
    let _ = writeln!(s, "load / floor         {:.2}", ratio(r));
    let c = &r.cpu;
    let _ = writeln!(
        s,
        "CPU samples          {} samples ({} B, {:.2} B/sample beyond its 8 B time; {} stacks, {} frames), {} switches ({} B)",
        c.samples,
        c.sample_bytes,
        c.beyond_timestamp(),
        c.stack_nodes,
        c.frames,
        c.switches,
        c.sched_bytes
    );
    s
}

fn json_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn to_json(r: &Results) -> String {
    let phases: Vec<String> = r
        .phases
        .iter()
        .map(|(p, t)| format!("{}:{:.6}", json_string(p), t.as_secs_f64()))
        .collect();
    let rss = r
        .rss_growth_bytes
        .map_or("null".to_string(), |g| g.to_string());
    let rss_per_event = r.rss_growth_bytes.map_or("null".to_string(), |g| {
        format!("{:.2}", per_event(g as f64, r.events))
    });
    format!(
        "{{\"file\":{},\"file_bytes\":{},\"events\":{},\"load_s\":{:.6},\"phases_s\":{{{}}},\
         \"heap_bytes\":{},\"heap_bytes_per_event\":{:.2},\"rss_growth_bytes\":{},\
         \"rss_bytes_per_event\":{},\"kern_sum_full_ms\":{:.4},\"kern_sum_1pct_ms\":{:.4},\
         \"kern_sum_rows\":{},\"stats_runs\":{STATS_RUNS},\"floor_s\":{:.6},\"floor_rows\":{},\
         \"load_over_floor\":{:.3},\"cpu_samples\":{},\"cpu_sample_bytes\":{},\
         \"cpu_bytes_per_sample_beyond_time\":{:.3},\"cpu_switches\":{},\"cpu_sched_bytes\":{},\
         \"load_whole\":{},\"load_without_cpu_samples\":{},\"cpu_samples_read_later\":{}}}",
        json_string(&r.file),
        r.file_bytes,
        r.events,
        r.load.as_secs_f64(),
        phases.join(","),
        r.heap_bytes,
        per_event(r.heap_bytes as f64, r.events),
        rss,
        rss_per_event,
        r.kern_sum_full.as_secs_f64() * 1e3,
        r.kern_sum_1pct.as_secs_f64() * 1e3,
        r.kern_sum_rows,
        r.floor.as_secs_f64(),
        r.floor_rows,
        ratio(r),
        r.cpu.samples,
        r.cpu.sample_bytes,
        r.cpu.beyond_timestamp(),
        r.cpu.switches,
        r.cpu.sched_bytes,
        Cost {
            wall: r.load,
            cpu: r.load_cpu
        }
        .json(),
        r.deferred.map_or("null".into(), |d| d.load.json()),
        r.deferred.map_or("null".into(), |d| d.read_later.json()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
