//! Kernel statistics per kernel name and per launch configuration: the data
//! behind the kernel panel and the `kernel_launch_sum` report.
//!
//! # Percentiles
//! P90 and P99 use the **nearest-rank** rule: with the `n` durations sorted
//! ascending, `Pp` is the value at 1-based rank `ceil(p / 100 * n)` (rank 1
//! when that is 0). A percentile is therefore always a duration that occurred
//! (an integer, no interpolation); with one instance every percentile is that
//! instance. The rank is computed in integers (`ceil(p * n / 100)`), so no
//! rounding of `p / 100` can move it.

use std::collections::HashMap;

use super::group::ValueStats;
use super::occupancy::{DeviceLimits, LaunchShape, Occupancy, theoretical_occupancy};
use super::reports::{events_in, for_each_counted, int, text};
use crate::analysis::scope::Scope;
use crate::analysis::table::Cell;
use crate::analysis::table::Table;
use crate::model::TimeRange;
use crate::model::{LaunchConfig, StrId, StreamIdx, Trace};

/// The `p`-th percentile (0–100) of `sorted` (ascending) by nearest rank;
/// `None` when empty.
pub fn nearest_rank(sorted: &[i64], p: u32) -> Option<i64> {
    let n = sorted.len() as u64;
    if n == 0 {
        return None;
    }
    let rank = (p.min(100) as u64 * n).div_ceil(100).max(1);
    sorted.get(rank as usize - 1).copied()
}

/// Duration statistics of a set of kernel instances (nanoseconds).
#[derive(Clone, Debug, PartialEq)]
pub struct DurationStats {
    pub instances: u64,
    pub total: i128,
    pub avg: f64,
    pub median: f64,
    pub min: i64,
    pub max: i64,
    /// Sample standard deviation, as nsys computes it (0 for one instance).
    pub stddev: f64,
    pub p90: i64,
    pub p99: i64,
}

impl DurationStats {
    /// Statistics of `durations` (reordered); `None` when empty.
    pub fn of(durations: &mut [i64]) -> Option<DurationStats> {
        durations.sort_unstable();
        let p90 = nearest_rank(durations, 90)?;
        let p99 = nearest_rank(durations, 99)?;
        let s = ValueStats::of(durations)?;
        Some(DurationStats {
            instances: s.count,
            total: s.total,
            avg: s.avg,
            median: s.median,
            min: s.min,
            max: s.max,
            stddev: s.stddev,
            p90,
            p99,
        })
    }
}

/// Everything about one kernel name over a time range.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelStats {
    /// The demangled name, as `cuda_gpu_kern_sum` names kernels.
    pub name: StrId,
    pub durations: DurationStats,
    /// This kernel's share of all kernel time in the range, in percent.
    pub gpu_time_percent: f64,
    /// Launch configurations seen, with their instance counts, most used first.
    pub configs: Vec<(LaunchConfig, u64)>,
    /// Streams the kernel ran on, in stream order.
    pub streams: Vec<StreamIdx>,
    /// Rows of `Trace::kernels` of every instance, in start order per stream.
    pub instances: Vec<u32>,
    /// Launch latency (launching API call's start → kernel start) over the
    /// instances whose API call the report has; `None` when none has one.
    pub launch_latency: Option<DurationStats>,
}

fn config_of(trace: &Trace, row: usize) -> LaunchConfig {
    let k = &trace.kernels;
    k.config
        .get(row)
        .and_then(|&c| k.configs.get(c as usize))
        .copied()
        .unwrap_or_default()
}

/// Statistics of every kernel name whose instances start in `range` (all
/// without one), by total time descending (ties: name).
pub fn kernel_stats(trace: &Trace, range: Option<TimeRange>) -> Vec<KernelStats> {
    kernel_stats_where(trace, range, |_| true)
}

/// Statistics of one kernel name; `None` when it has no instance in `range`.
pub fn kernel_stats_for(
    trace: &Trace,
    name: StrId,
    range: Option<TimeRange>,
) -> Option<KernelStats> {
    let grand = kernel_time(trace, range);
    let mut all = kernel_stats_where(trace, range, |n| n == name);
    let mut stats = all.pop()?;
    // The share is of all kernels' time, not only the selected one's.
    stats.gpu_time_percent = percent(stats.durations.total, grand);
    Some(stats)
}

fn kernel_time(trace: &Trace, range: Option<TimeRange>) -> i128 {
    let spans = &trace.kernels.spans;
    trace
        .streams
        .iter()
        .flat_map(|s| events_in(spans, &s.kernels, range))
        .map(|i| spans.duration(i) as i128)
        .sum()
}

fn percent(part: i128, whole: i128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn kernel_stats_where(
    trace: &Trace,
    range: Option<TimeRange>,
    wanted: impl Fn(StrId) -> bool,
) -> Vec<KernelStats> {
    let spans = &trace.kernels.spans;
    type Instances = (Vec<u32>, Vec<StreamIdx>, Vec<i64>);
    let mut by_name: HashMap<StrId, Instances> = HashMap::new();
    for (s, stream) in trace.streams.iter().enumerate() {
        for i in events_in(spans, &stream.kernels, range) {
            if !wanted(spans.name[i]) {
                continue;
            }
            let entry = by_name.entry(spans.name[i]).or_default();
            entry.0.push(i as u32);
            // Streams are walked in order, so one comparison deduplicates.
            if entry.1.last() != Some(&(s as StreamIdx)) {
                entry.1.push(s as StreamIdx);
            }
            let call = trace
                .kernels
                .correlation
                .get(i)
                .and_then(|&c| trace.correlation.api_call(stream.pid, c));
            if let Some(call_start) = call.and_then(|c| trace.cuda_api.spans.start.get(c as usize))
            {
                entry.2.push(spans.start[i].saturating_sub(*call_start));
            }
        }
    }
    let mut out: Vec<KernelStats> = by_name
        .into_iter()
        .filter_map(|(name, (instances, streams, mut latencies))| {
            let mut durations: Vec<i64> = instances
                .iter()
                .map(|&i| spans.duration(i as usize))
                .collect();
            let durations = DurationStats::of(&mut durations)?;
            let mut counts: HashMap<LaunchConfig, u64> = HashMap::new();
            for &i in &instances {
                *counts.entry(config_of(trace, i as usize)).or_default() += 1;
            }
            let mut configs: Vec<(LaunchConfig, u64)> = counts.into_iter().collect();
            configs.sort_by(|a, b| {
                b.1.cmp(&a.1)
                    .then_with(|| (a.0.grid, a.0.block).cmp(&(b.0.grid, b.0.block)))
            });
            Some(KernelStats {
                name,
                durations,
                gpu_time_percent: 0.0,
                configs,
                streams,
                instances,
                launch_latency: DurationStats::of(&mut latencies),
            })
        })
        .collect();
    let grand: i128 = out.iter().map(|k| k.durations.total).sum();
    for k in &mut out {
        k.gpu_time_percent = percent(k.durations.total, grand);
    }
    out.sort_by(|a, b| {
        b.durations
            .total
            .cmp(&a.durations.total)
            .then_with(|| trace.name(a.name).cmp(trace.name(b.name)))
    });
    out
}

/// The theoretical occupancy of `config` on the GPU that ran stream `stream`;
/// `None` when the report lacks what it needs.
pub fn occupancy_of(trace: &Trace, stream: StreamIdx, config: &LaunchConfig) -> Option<Occupancy> {
    let device = trace.streams.get(stream as usize)?.device_id;
    let gpu = trace.gpus.iter().find(|g| g.device_id == device)?;
    let limits = DeviceLimits::for_gpu(gpu)?;
    theoretical_occupancy(&limits, &LaunchShape::from(config)).ok()
}

fn xyz(dims: [u32; 3]) -> String {
    format!("{}x{}x{}", dims[0], dims[1], dims[2])
}

/// `kernel_launch_sum` (ours): one row per kernel name × launch configuration
/// (grid, block, registers, static/dynamic shared memory, shared memory
/// config) × device, with duration statistics and theoretical occupancy.
/// Ordered by total time descending (ties: name, then configuration).
pub(crate) fn kernel_launch_sum(trace: &Trace, scope: Scope) -> Table {
    launch_rows(trace, scope, None)
}

/// `kernel_launch_sum`'s rows of one kernel (by demangled name) alone: the
/// kernel panel's launch configurations, with the report's columns and numbers.
pub(crate) fn kernel_launch_sum_of_kernel(trace: &Trace, scope: Scope, kernel: StrId) -> Table {
    launch_rows(trace, scope, Some(kernel))
}

fn launch_rows(trace: &Trace, scope: Scope, only_kernel: Option<StrId>) -> Table {
    let spans = &trace.kernels.spans;
    type Key = (StrId, [u32; 3], [u32; 3], u32, u32, u32, u32, u32);
    // Per key: durations, and a stream that ran it (for the device).
    let mut groups: HashMap<Key, (Vec<i64>, StreamIdx)> = HashMap::new();
    for (s, stream) in trace.streams.iter().enumerate() {
        for_each_counted!(spans, &stream.kernels, scope, |i, d| {
            if only_kernel.is_none_or(|name| spans.name[i] == name) {
                let c = config_of(trace, i);
                let key = (
                    spans.name[i],
                    c.grid,
                    c.block,
                    c.registers_per_thread,
                    c.static_shared_memory,
                    c.dynamic_shared_memory,
                    c.shared_memory_executed,
                    stream.device_id,
                );
                groups
                    .entry(key)
                    .or_insert_with(|| (Vec::new(), s as StreamIdx))
                    .0
                    .push(d);
            }
        });
    }
    let mut rows: Vec<(Key, i128, Vec<Cell>)> = Vec::new();
    for (key, (mut durations, stream)) in groups {
        let Some(d) = DurationStats::of(&mut durations) else {
            continue;
        };
        let config = LaunchConfig {
            grid: key.1,
            block: key.2,
            registers_per_thread: key.3,
            static_shared_memory: key.4,
            dynamic_shared_memory: key.5,
            shared_memory_executed: key.6,
            ..LaunchConfig::default()
        };
        let mut row = vec![
            text(trace.name(key.0)),
            text(&xyz(key.1)),
            text(&xyz(key.2)),
            Cell::Int(key.3 as i64),
            Cell::Int(key.4 as i64),
            Cell::Int(key.5 as i64),
            Cell::Int(key.6 as i64),
            int(d.instances as i128),
            int(d.total),
            Cell::Round1(d.avg),
            Cell::Round1(d.median),
            Cell::Int(d.min),
            Cell::Int(d.max),
            Cell::Round1(d.stddev),
            Cell::Int(d.p90),
            Cell::Int(d.p99),
        ];
        match occupancy_of(trace, stream, &config) {
            Some(o) => row.extend([
                Cell::TwoDecimals(o.theoretical_percent),
                text(&o.limiter_text()),
                Cell::Int(o.block_limit_registers as i64),
                Cell::Int(o.block_limit_shared_memory as i64),
                Cell::Int(o.block_limit_warps as i64),
                Cell::Int(o.block_limit_blocks as i64),
            ]),
            None => row.extend(std::iter::repeat_n(Cell::Empty, 6)),
        }
        rows.push((key, d.total, row));
    }
    rows.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| trace.name(a.0.0).cmp(trace.name(b.0.0)))
            .then_with(|| a.0.cmp(&b.0))
    });
    let columns = [
        "Name",
        "Grid",
        "Block",
        "Registers Per Thread",
        "Static Shared Memory (B)",
        "Dynamic Shared Memory (B)",
        "Shared Memory Config (B)",
        "Instances",
        "Total Time (ns)",
        "Avg (ns)",
        "Med (ns)",
        "Min (ns)",
        "Max (ns)",
        "StdDev (ns)",
        "P90 (ns)",
        "P99 (ns)",
        "Theoretical Occupancy (%)",
        "Limiter",
        "Block Limit Registers",
        "Block Limit Shared Mem",
        "Block Limit Warps",
        "Block Limit SM",
    ];
    Table {
        columns: columns.iter().map(|s| s.to_string()).collect(),
        rows: rows.into_iter().map(|(_, _, row)| row).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<i64> = (1..=10).collect();
        assert_eq!(nearest_rank(&v, 90), Some(9));
        assert_eq!(nearest_rank(&v, 99), Some(10));
        assert_eq!(nearest_rank(&v, 50), Some(5));
        assert_eq!(nearest_rank(&v, 0), Some(1));
        assert_eq!(nearest_rank(&[7], 99), Some(7));
        assert_eq!(nearest_rank(&[], 90), None);
        let hundred: Vec<i64> = (1..=100).collect();
        assert_eq!(nearest_rank(&hundred, 99), Some(99));
        let v = [5, 1, 9, 3];
        let mut v = v.to_vec();
        let d = DurationStats::of(&mut v).unwrap();
        assert_eq!((d.p90, d.p99, d.median, d.min), (9, 9, 4.0, 1));
    }
}
