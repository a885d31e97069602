//! The `nsys analyze` rules (nsys 2025.3): the same table, rows, order and
//! formatting as `nsys analyze --format csv` prints, computed from the model.
//!
//! The semantics (filters, tie order, chunking) are in
//! `docs/nsys-stats-semantics.md` §9. Each rule is one file; this module holds
//! what they share: the options nsys takes (`rows=`, `start=`, `end=`,
//! `nvtx=`, and `gap=`, `threshold=`, `chunks=` where they apply), the time
//! window, SQL `LIKE` matching and the memory-kind labels.

pub mod cuda_api_sync;
mod cuda_memcpy_async;
mod cuda_memcpy_sync;
pub mod cuda_memset_sync;
mod dx12_mem_ops;
pub mod gpu_gaps;
pub(crate) mod gpu_ops;
pub mod gpu_time_util;
mod labels;
pub mod memcpy;
pub(crate) mod sorted_ops;
mod window;

use crate::analysis::table::Table;
use crate::model::TimeRange;
use crate::model::{Ns, NvtxKind, Trace};

pub use crate::analysis::like::like;
pub use window::Window;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    CudaApiSync,
    CudaMemcpyAsync,
    CudaMemcpySync,
    CudaMemsetSync,
    Dx12MemOps,
    GpuGaps,
    GpuTimeUtil,
}

impl Rule {
    /// In the order `nsys analyze --help-rules` lists them.
    pub const ALL: [Rule; 7] = [
        Rule::CudaApiSync,
        Rule::CudaMemcpyAsync,
        Rule::CudaMemcpySync,
        Rule::CudaMemsetSync,
        Rule::Dx12MemOps,
        Rule::GpuGaps,
        Rule::GpuTimeUtil,
    ];

    /// The nsys rule name, e.g. `gpu_gaps`; also the suffix of its CSV file.
    pub fn name(self) -> &'static str {
        match self {
            Rule::CudaApiSync => "cuda_api_sync",
            Rule::CudaMemcpyAsync => "cuda_memcpy_async",
            Rule::CudaMemcpySync => "cuda_memcpy_sync",
            Rule::CudaMemsetSync => "cuda_memset_sync",
            Rule::Dx12MemOps => "dx12_mem_ops",
            Rule::GpuGaps => "gpu_gaps",
            Rule::GpuTimeUtil => "gpu_time_util",
        }
    }

    pub fn from_name(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == name)
    }

    /// nsys's title for the rule.
    pub fn title(self) -> &'static str {
        match self {
            Rule::CudaApiSync => "CUDA Synchronization APIs",
            Rule::CudaMemcpyAsync => "CUDA Async Memcpy with Pageable Memory",
            Rule::CudaMemcpySync => "CUDA Synchronous Memcpy",
            Rule::CudaMemsetSync => "CUDA Synchronous Memset",
            Rule::Dx12MemOps => "DX12 Memory Operations",
            Rule::GpuGaps => "GPU Gaps",
            Rule::GpuTimeUtil => "GPU Time Utilization",
        }
    }

    /// The rule-specific options it accepts besides `rows`, `start`, `end`, `nvtx`.
    fn own_options(self) -> &'static [&'static str] {
        match self {
            Rule::GpuGaps => &["gap"],
            Rule::GpuTimeUtil => &["threshold", "chunks"],
            _ => &[],
        }
    }
}

/// Options of one rule, as nsys takes them: `RULE:name=value:name=value`.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleOptions {
    /// `rows=`: the most rows printed (nsys's `LIMIT`); `None` prints all
    /// (a negative `rows=`, as SQLite's `LIMIT -1`). Default 50.
    pub rows: Option<usize>,
    /// `start=` / `end=`: only events overlapping this window, in session
    /// nanoseconds (both ends inclusive, as nsys's `start <= end AND end >= start`).
    pub start: Option<Ns>,
    pub end: Option<Ns>,
    /// `nvtx=range[@domain]`: only events overlapping the first (earliest)
    /// instance of that push/pop or start/end range.
    pub nvtx: Option<String>,
    /// `gap=` (gpu_gaps): the shortest gap reported, in milliseconds. Default 500.
    pub gap_ms: f64,
    /// `threshold=` (gpu_time_util): chunks used less than this percentage are
    /// reported. Default 50.
    pub threshold: f64,
    /// `chunks=` (gpu_time_util): how many chunks each device's span is cut into.
    /// Default 30.
    pub chunks: u32,
}

impl Default for RuleOptions {
    fn default() -> Self {
        RuleOptions {
            rows: Some(50),
            start: None,
            end: None,
            nvtx: None,
            gap_ms: 500.0,
            threshold: 50.0,
            chunks: 30,
        }
    }
}

/// A rule and its options, parsed from `RULE[:name=value...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleSpec {
    pub rule: Rule,
    pub options: RuleOptions,
}

impl RuleSpec {
    /// Parses `gpu_gaps`, `gpu_gaps:gap=300`, `gpu_time_util:chunks=10:threshold=20`.
    pub fn parse(text: &str) -> Result<RuleSpec, String> {
        let mut parts = text.split(':');
        let name = parts.next().unwrap_or_default().trim();
        let rule = Rule::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
            format!("unknown rule '{name}' (known: {})", known.join(", "))
        })?;
        let mut options = RuleOptions::default();
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("rule option '{part}' of {name}: expected name=value"))?;
            let bad = || format!("bad value '{value}' for {name} option {key}");
            match key {
                "rows" => {
                    let rows: i64 = value.trim().parse().map_err(|_| bad())?;
                    options.rows = usize::try_from(rows).ok();
                }
                "start" => options.start = Some(value.trim().parse().map_err(|_| bad())?),
                "end" => options.end = Some(value.trim().parse().map_err(|_| bad())?),
                "nvtx" if !value.is_empty() => options.nvtx = Some(value.to_string()),
                "gap" if rule.own_options().contains(&"gap") => {
                    let gap: f64 = value.trim().parse().map_err(|_| bad())?;
                    if !(gap.is_finite() && gap >= 0.0) {
                        return Err(bad());
                    }
                    options.gap_ms = gap;
                }
                "threshold" if rule.own_options().contains(&"threshold") => {
                    let threshold: f64 = value.trim().parse().map_err(|_| bad())?;
                    if !(0.0..=100.0).contains(&threshold) {
                        return Err(bad());
                    }
                    options.threshold = threshold;
                }
                "chunks" if rule.own_options().contains(&"chunks") => {
                    let chunks: u32 = value.trim().parse().map_err(|_| bad())?;
                    if !(1..=10_000).contains(&chunks) {
                        return Err(bad());
                    }
                    options.chunks = chunks;
                }
                _ => return Err(format!("rule {name} takes no option '{key}'")),
            }
        }
        Ok(RuleSpec { rule, options })
    }
}

/// Runs `rule` over `trace`. An empty table (no rows) is nsys's empty file.
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use sightline::analysis::rules::{Rule, RuleOptions, run};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sync_timing.sqlite");
/// let trace = sightline::loader::load(path.as_ref(), &mut |_| {}, &AtomicBool::new(false))?;
/// let syncs = run(&trace, Rule::CudaApiSync, &RuleOptions::default());
/// assert_eq!(syncs.columns[0], "Duration (ns)");
/// assert!(run(&trace, Rule::Dx12MemOps, &RuleOptions::default()).rows.is_empty());
/// # Ok::<(), sightline::loader::LoadError>(())
/// ```
pub fn run(trace: &Trace, rule: Rule, options: &RuleOptions) -> Table {
    let Some(window) = resolve_window(trace, options) else {
        // The nvtx= range is not in the report: nothing lies in it.
        return Table::default();
    };
    let mut table = match rule {
        Rule::CudaApiSync => cuda_api_sync::run(trace, window),
        Rule::CudaMemcpyAsync => cuda_memcpy_async::run(trace, window),
        Rule::CudaMemcpySync => cuda_memcpy_sync::run(trace, window),
        Rule::CudaMemsetSync => cuda_memset_sync::run(trace, window),
        Rule::Dx12MemOps => dx12_mem_ops::run(trace, window),
        Rule::GpuGaps => gpu_gaps::run(trace, window, options.gap_ms),
        Rule::GpuTimeUtil => gpu_time_util::run(trace, window, options.chunks, options.threshold),
    };
    if let Some(rows) = options.rows {
        table.rows.truncate(rows);
    }
    table
}

/// The window `options` ask for (`start=`, `end=`, `nvtx=`); `None` when `nvtx=` names a range the report does not have.
fn resolve_window(trace: &Trace, options: &RuleOptions) -> Option<Window> {
    let mut window = Window::ALL;
    if let Some(spec) = &options.nvtx {
        let range = find_nvtx(trace, spec)?;
        window = Window {
            start: range.start,
            end: range.end,
        };
    }
    if let Some(start) = options.start {
        window.start = window.start.max(start);
    }
    if let Some(end) = options.end {
        window.end = window.end.min(end);
    }
    Some(window)
}

/// The earliest range named `name[@domain]` (no domain: the default domain).
fn find_nvtx(trace: &Trace, spec: &str) -> Option<TimeRange> {
    let (name, domain) = match spec.rsplit_once('@') {
        Some((name, domain)) => (name, domain),
        None => (spec, ""),
    };
    let spans = &trace.nvtx.spans;
    let mut best: Option<TimeRange> = None;
    for thread in &trace.threads {
        for track in thread.nvtx.iter().filter(|t| t.domain == domain) {
            for i in track.track.rows() {
                let i = i as usize;
                if trace.nvtx.kind.get(i) == Some(&NvtxKind::Mark) {
                    continue;
                }
                if trace.name(spans.name[i]) != name {
                    continue;
                }
                if best.is_none_or(|b| spans.start[i] < b.start) {
                    best = Some(TimeRange {
                        start: spans.start[i],
                        end: spans.end(i),
                    });
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rule_options() {
        let spec = RuleSpec::parse("gpu_gaps:gap=300:rows=5").unwrap();
        assert_eq!(spec.rule, Rule::GpuGaps);
        assert_eq!(spec.options.gap_ms, 300.0);
        assert_eq!(spec.options.rows, Some(5));
        let spec = RuleSpec::parse("gpu_time_util:chunks=10:threshold=20:nvtx=a@b").unwrap();
        assert_eq!(spec.options.chunks, 10);
        assert_eq!(spec.options.threshold, 20.0);
        assert_eq!(spec.options.nvtx.as_deref(), Some("a@b"));
        assert_eq!(
            RuleSpec::parse("cuda_api_sync:rows=-1")
                .unwrap()
                .options
                .rows,
            None
        );
        for bad in [
            "nope",
            "gpu_gaps:gap",
            "gpu_gaps:gap=x",
            "cuda_api_sync:gap=3",
            "gpu_time_util:chunks=0",
            "gpu_time_util:threshold=101",
            "cuda_api_sync:start=abc",
        ] {
            assert!(RuleSpec::parse(bad).is_err(), "{bad} accepted");
        }
    }
}
