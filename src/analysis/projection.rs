//! NVTX ranges projected onto the GPU, as Nsight Systems projects them
//! (`nvtx_gpu_proj_trace`, `nvtx_gpu_proj_sum`, `nvtx_kern_sum`, and the
//! `:nvtx-name` kernel names).
//!
//! The rules, checked against nsys 2025.3's CSVs for four reports:
//! * Ranges: push/pop and start/end ranges of every domain; a start/end range
//!   ended on another thread is left out (nsys cannot tell which thread's work
//!   it owns). An unended range lasts to the last NVTX timestamp.
//! * A range owns the GPU work (kernels, copies, sets; not syncs) of every CUDA
//!   API call made on the range's thread that lies wholly inside the range
//!   (`range.start <= call.start` and `call.end <= range.end`), nested ranges'
//!   calls included.
//! * Projected start/end: the earliest start and latest end of that work.
//!   `NumGPUOps` counts launching API calls, not operations: a CUDA graph
//!   launch that ran 3 node kernels counts once.
//! * Ranges that own no GPU work are not projected, and do not count as
//!   anyone's parent or child: `Lvl`, `ParentId` and `NumChild` come from the
//!   nesting of the projected ranges of one thread (by their CPU times).
//! * `RangeId` is the `NVTX_EVENTS` rowid.
//! * Kernel attribution (`nvtx_kern_sum`): a kernel belongs to every range
//!   (either style, any level) that contains its launching call; a kernel in
//!   none is listed with an empty range. `:nvtx-name` prefixes the message (no
//!   domain) of the innermost (latest-starting) such range only.

use std::collections::{HashMap, HashSet};

use super::group::ValueStats;
use super::reports::{events_in, int, text};
use crate::analysis::table::{Cell, Table};
use crate::model::TimeRange;
use crate::model::{GpuOp, GpuOpKind, Ns, NvtxKind, StrId, ThreadIdx, Trace};

const NONE: u32 = u32::MAX;

/// One NVTX range projected onto the GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectedRange {
    /// Index into `Trace::nvtx`.
    pub nvtx: u32,
    pub thread: ThreadIdx,
    /// `domain:message`, as nsys names ranges (`:message` in the default domain).
    pub tag: String,
    pub style: NvtxKind,
    /// Earliest start and latest end of the GPU work the range launched.
    pub gpu_start: Ns,
    pub gpu_end: Ns,
    /// Launching API calls with GPU work inside the range (nested ranges' too).
    pub gpu_ops: u32,
    /// Nesting level among the projected ranges of the thread (0 = outermost).
    pub level: u32,
    /// The enclosing projected range (index into `Trace::nvtx`). Nesting is
    /// that of the whole trace, whatever time range was asked for.
    pub parent: Option<u32>,
    /// Projected ranges directly inside this one.
    pub children: u32,
}

/// The NVTX ranges that take part in projection: push/pop and start/end ranges
/// not ended on another thread, with their domain, per thread.
fn candidate_ranges(trace: &Trace, thread: usize) -> Vec<(u32, &str)> {
    let mut out = Vec::new();
    for track in &trace.threads[thread].nvtx {
        for i in track.track.rows() {
            let kind = trace.nvtx.kind.get(i as usize);
            if matches!(kind, Some(NvtxKind::PushPop | NvtxKind::StartEnd))
                && !trace.nvtx.end_thread.contains_key(&i)
            {
                out.push((i, track.domain.as_str()));
            }
        }
    }
    out
}

/// The API calls (indices into `Trace::cuda_api`) of `thread` that lie wholly
/// inside NVTX range `nvtx`.
fn calls_inside(trace: &Trace, thread: usize, nvtx: u32) -> impl Iterator<Item = usize> + '_ {
    let api = &trace.cuda_api.spans;
    let (start, end) = (
        trace.nvtx.spans.start[nvtx as usize],
        trace.nvtx.spans.end(nvtx as usize),
    );
    trace.threads[thread]
        .cuda_api
        .starting_in(api, start, end.saturating_add(1))
        .map(|i| i as usize)
        .filter(move |&i| api.end(i) <= end)
}

/// The span of the GPU work (kernels, copies, sets) API call `call` of a thread
/// of process `pid` caused, if any.
fn gpu_span(trace: &Trace, pid: u32, call: usize) -> Option<(Ns, Ns)> {
    let correlation = *trace.cuda_api.correlation.get(call)?;
    let mut span: Option<(Ns, Ns)> = None;
    for op in trace.correlation.gpu_ops(pid, correlation) {
        if op.kind == GpuOpKind::Sync {
            continue;
        }
        let spans = trace.gpu_spans(op.kind);
        let i = op.index as usize;
        if i >= spans.len() {
            continue;
        }
        let (s, e) = (spans.start[i], spans.end(i));
        span = Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
    }
    span
}

fn tag(trace: &Trace, nvtx: u32, domain: &str) -> String {
    format!(
        "{domain}:{}",
        trace.name(trace.nvtx.spans.name[nvtx as usize])
    )
}

/// Sort key of nsys's range order: start, longer first, then range id.
fn range_key(trace: &Trace, nvtx: u32) -> (Ns, std::cmp::Reverse<Ns>, i64) {
    let i = nvtx as usize;
    (
        trace.nvtx.spans.start[i],
        std::cmp::Reverse(trace.nvtx.spans.end(i)),
        trace.nvtx.row_id.get(i).copied().unwrap_or(0),
    )
}

/// The nesting of one thread's NVTX ranges `ranges`, given in [`range_key`]
/// order: per range, the index of its parent (the nearest range still open
/// that contains it) and its level.
fn nesting(trace: &Trace, ranges: &[u32]) -> Vec<(Option<usize>, u32)> {
    let end = |i: usize| trace.nvtx.spans.end(ranges[i] as usize);
    let mut out = Vec::with_capacity(ranges.len());
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..ranges.len() {
        while stack.last().is_some_and(|&top| end(top) < end(i)) {
            stack.pop();
        }
        out.push((stack.last().copied(), stack.len() as u32));
        stack.push(i);
    }
    out
}

/// The GPU operations (kernels, copies, sets; not syncs) that NVTX range
/// `nvtx` owns by the projection rules: the work of every CUDA API call of
/// its thread that lies wholly inside it. Empty for a range ended on another
/// thread (nsys does not project those) or an unknown index.
pub fn gpu_work(trace: &Trace, nvtx: u32) -> Vec<GpuOp> {
    if nvtx as usize >= trace.nvtx.spans.len() || trace.nvtx.end_thread.contains_key(&nvtx) {
        return Vec::new();
    }
    let Some(t) = trace
        .threads
        .iter()
        .position(|th| th.nvtx.iter().any(|n| n.track.contains(nvtx)))
    else {
        return Vec::new();
    };
    let pid = trace.threads[t].pid;
    let mut out = Vec::new();
    for call in calls_inside(trace, t, nvtx) {
        let Some(&correlation) = trace.cuda_api.correlation.get(call) else {
            continue;
        };
        out.extend(
            trace
                .correlation
                .gpu_ops(pid, correlation)
                .filter(|op| op.kind != GpuOpKind::Sync),
        );
    }
    out
}

/// Projects the NVTX ranges that start in `range` (all without one) onto the
/// GPU, in nsys's order (CPU start time, outer ranges first).
pub fn project_nvtx(trace: &Trace, range: Option<TimeRange>) -> Vec<ProjectedRange> {
    let mut all = project_all(trace);
    all.retain(|p| starts_in(trace, p.nvtx, range));
    all
}

fn starts_in(trace: &Trace, nvtx: u32, range: Option<TimeRange>) -> bool {
    let start = trace.nvtx.spans.start[nvtx as usize];
    range.is_none_or(|r| start >= r.start && start < r.end)
}

fn project_all(trace: &Trace) -> Vec<ProjectedRange> {
    let mut out: Vec<ProjectedRange> = Vec::new();
    for (t, thread) in trace.threads.iter().enumerate() {
        if thread.nvtx.is_empty() || thread.cuda_api.is_empty() {
            continue;
        }
        // Each call's GPU span, computed once per thread, by the call's
        // position in the thread's track.
        let spans: Vec<Option<(Ns, Ns)>> = thread
            .cuda_api
            .rows()
            .map(|call| gpu_span(trace, thread.pid, call as usize))
            .collect();
        let position = |call: usize| thread.cuda_api.position(call as u32);
        let mut projected: Vec<ProjectedRange> = Vec::new();
        for (nvtx, domain) in candidate_ranges(trace, t) {
            let mut ops = 0u32;
            let mut span: Option<(Ns, Ns)> = None;
            for call in calls_inside(trace, t, nvtx) {
                if let Some((s, e)) = position(call).and_then(|k| spans[k]) {
                    ops += 1;
                    span = Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
                }
            }
            let Some((gpu_start, gpu_end)) = span else {
                continue;
            };
            projected.push(ProjectedRange {
                nvtx,
                thread: t as ThreadIdx,
                tag: tag(trace, nvtx, domain),
                style: trace.nvtx.kind[nvtx as usize],
                gpu_start,
                gpu_end,
                gpu_ops: ops,
                level: 0,
                parent: None,
                children: 0,
            });
        }
        projected.sort_by_key(|p| range_key(trace, p.nvtx));
        let ranges: Vec<u32> = projected.iter().map(|p| p.nvtx).collect();
        for (i, (parent, level)) in nesting(trace, &ranges).into_iter().enumerate() {
            if let Some(parent) = parent {
                projected[i].parent = Some(projected[parent].nvtx);
                projected[i].level = level;
                projected[parent].children += 1;
            }
        }
        out.extend(projected);
    }
    // Threads interleave in start order.
    out.sort_by_key(|p| range_key(trace, p.nvtx));
    out
}

fn style_text(style: NvtxKind) -> &'static str {
    match style {
        NvtxKind::StartEnd => "StartEnd",
        _ => "PushPop",
    }
}

/// `nvtx_gpu_proj_trace`: one row per projected range.
pub(crate) fn nvtx_gpu_proj_trace(trace: &Trace, range: Option<TimeRange>) -> Table {
    let projected = project_all(trace);
    let row_id = |nvtx: u32| trace.nvtx.row_id.get(nvtx as usize).copied();
    let parent_of: HashMap<u32, Option<u32>> =
        projected.iter().map(|p| (p.nvtx, p.parent)).collect();
    let columns = [
        "Name",
        "Projected Start (ns)",
        "Projected Duration (ns)",
        "Orig Start (ns)",
        "Orig Duration (ns)",
        "Style",
        "PID",
        "TID",
        "NumGPUOps",
        "Lvl",
        "NumChild",
        "RangeId",
        "ParentId",
        "RangeStack",
    ];
    let rows = projected
        .iter()
        .filter(|p| starts_in(trace, p.nvtx, range))
        .map(|p| {
            let thread = &trace.threads[p.thread as usize];
            let i = p.nvtx as usize;
            let mut stack = Vec::new();
            let mut at = Some(p.nvtx);
            while let Some(q) = at {
                stack.push(row_id(q).unwrap_or(0));
                at = parent_of.get(&q).copied().flatten();
            }
            let stack: String = stack.iter().rev().map(|id| format!(":{id}")).collect();
            vec![
                text(&p.tag),
                Cell::Int(p.gpu_start),
                Cell::Int(p.gpu_end.saturating_sub(p.gpu_start)),
                Cell::Int(trace.nvtx.spans.start[i]),
                Cell::Int(trace.nvtx.spans.duration(i)),
                text(style_text(p.style)),
                Cell::Int(thread.pid as i64),
                Cell::Int(thread.tid as i64),
                Cell::Int(p.gpu_ops as i64),
                Cell::Int(p.level as i64),
                Cell::Int(p.children as i64),
                row_id(p.nvtx).map_or(Cell::Empty, Cell::Int),
                p.parent.and_then(row_id).map_or(Cell::Empty, Cell::Int),
                text(&stack),
            ]
        })
        .collect();
    Table {
        columns: columns.iter().map(|s| s.to_string()).collect(),
        rows,
    }
}

/// `nvtx_gpu_proj_sum`: projected ranges grouped by (name, style), ordered by
/// total projected time descending (ties by name, then style).
pub(crate) fn nvtx_gpu_proj_sum(trace: &Trace, range: Option<TimeRange>) -> Table {
    let projected = project_nvtx(trace, range);
    let mut groups: HashMap<(&str, &'static str), Vec<&ProjectedRange>> = HashMap::new();
    for p in &projected {
        groups
            .entry((p.tag.as_str(), style_text(p.style)))
            .or_default()
            .push(p);
    }
    let mut rows: Vec<((&str, &str), i128, Vec<Cell>)> = Vec::new();
    for (key, members) in groups {
        let mut durations: Vec<i64> = members
            .iter()
            .map(|p| p.gpu_end.saturating_sub(p.gpu_start))
            .collect();
        let Some(s) = ValueStats::of(&mut durations) else {
            continue;
        };
        let n = members.len() as f64;
        let range_total: i128 = members
            .iter()
            .map(|p| trace.nvtx.spans.duration(p.nvtx as usize) as i128)
            .sum();
        let ops: i64 = members.iter().map(|p| p.gpu_ops as i64).sum();
        let levels: f64 = members.iter().map(|p| p.level as f64).sum();
        let children: f64 = members.iter().map(|p| p.children as f64).sum();
        rows.push((
            key,
            s.total,
            vec![
                text(key.0),
                text(key.1),
                int(s.total),
                int(range_total),
                int(s.count as i128),
                Cell::Round1(s.avg),
                Cell::Round1(s.median),
                Cell::Int(s.min),
                Cell::Int(s.max),
                Cell::Round1(s.stddev),
                Cell::Int(ops),
                Cell::Round1(ops as f64 / n),
                Cell::Round1(levels / n),
                Cell::Round1(children / n),
            ],
        ));
    }
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let columns = [
        "Range",
        "Style",
        "Total Proj Time (ns)",
        "Total Range Time (ns)",
        "Range Instances",
        "Proj Avg (ns)",
        "Proj Med (ns)",
        "Proj Min (ns)",
        "Proj Max (ns)",
        "Proj StdDev (ns)",
        "Total GPU Ops",
        "Avg GPU Ops",
        "Avg Range Lvl",
        "Avg Num Child",
    ];
    Table {
        columns: columns.iter().map(|s| s.to_string()).collect(),
        rows: rows.into_iter().map(|(_, _, row)| row).collect(),
    }
}

/// For every CUDA API call (index into `Trace::cuda_api`), the innermost
/// (latest-starting) push/pop or start/end range that contains it on its
/// thread: an index into `Trace::nvtx`, or `u32::MAX` for none.
pub(crate) fn innermost_ranges(trace: &Trace) -> Vec<u32> {
    let mut owner = vec![NONE; trace.cuda_api.spans.len()];
    for t in 0..trace.threads.len() {
        if trace.threads[t].cuda_api.is_empty() {
            continue;
        }
        for (nvtx, _) in candidate_ranges(trace, t) {
            for call in calls_inside(trace, t, nvtx) {
                if owner[call] == NONE || later(trace, nvtx, owner[call]) {
                    owner[call] = nvtx;
                }
            }
        }
    }
    owner
}

/// Whether range `a` starts after `b` (ties: the later-recorded one).
fn later(trace: &Trace, a: u32, b: u32) -> bool {
    let key = |i: u32| {
        (
            trace.nvtx.spans.start[i as usize],
            trace.nvtx.row_id.get(i as usize).copied().unwrap_or(0),
        )
    };
    key(a) > key(b)
}

/// `nvtx_kern_sum`: kernels by the NVTX ranges they were launched in (every
/// enclosing range, not only the innermost), per (range, style, PID, TID,
/// kernel name); kernels launched outside any range get an empty range. A
/// kernel belongs to `range` when its API call starts in it.
pub(crate) fn nvtx_kern_sum(trace: &Trace, range: Option<TimeRange>) -> Table {
    // nsys prints "does not contain NVTX data" and no table for such a report,
    // not every kernel under an empty range.
    if trace.nvtx.spans.is_empty() {
        return Table::default();
    }
    let kernels = &trace.kernels.spans;
    let api = &trace.cuda_api.spans;
    // Range names are interned per (name, style) so that the per-kernel
    // work hashes four integers, not a string; id 0 is "no range".
    let mut tags: Vec<(String, &'static str)> = vec![(String::new(), "")];
    let mut tag_ids: HashMap<(String, &'static str), u32> = HashMap::new();
    type Key = (u32, u32, u32, StrId);
    let mut groups: HashMap<Key, (Vec<i64>, HashSet<u32>)> = HashMap::new();
    let kernels_of = |pid: u32, call: usize| {
        let correlation = trace.cuda_api.correlation.get(call).copied();
        correlation
            .into_iter()
            .flat_map(move |c| trace.correlation.gpu_ops(pid, c))
            .filter(|op| op.kind == GpuOpKind::Kernel && (op.index as usize) < kernels.len())
            .map(|op| op.index as usize)
    };
    let in_time_range =
        |call: usize| range.is_none_or(|r| api.start[call] >= r.start && api.start[call] < r.end);
    for (t, thread) in trace.threads.iter().enumerate() {
        if thread.cuda_api.is_empty() {
            continue;
        }
        let position = |call: usize| thread.cuda_api.position(call as u32);
        let mut covered = vec![false; thread.cuda_api.len()];
        for (nvtx, domain) in candidate_ranges(trace, t) {
            let style = style_text(trace.nvtx.kind[nvtx as usize]);
            let tag_id = *tag_ids
                .entry((tag(trace, nvtx, domain), style))
                .or_insert_with_key(|key| {
                    tags.push(key.clone());
                    tags.len() as u32 - 1
                });
            for call in calls_inside(trace, t, nvtx) {
                if let Some(k) = position(call) {
                    covered[k] = true;
                }
                if !in_time_range(call) {
                    continue;
                }
                for k in kernels_of(thread.pid, call) {
                    let key = (tag_id, thread.pid, thread.tid, kernels.name[k]);
                    let entry = groups.entry(key).or_default();
                    entry.0.push(kernels.duration(k));
                    entry.1.insert(nvtx);
                }
            }
        }
        for call in events_in(api, &thread.cuda_api, range) {
            if position(call).is_some_and(|k| covered[k]) {
                continue;
            }
            for k in kernels_of(thread.pid, call) {
                let key = (0, thread.pid, thread.tid, kernels.name[k]);
                groups.entry(key).or_default().0.push(kernels.duration(k));
            }
        }
    }
    let mut rows: Vec<(Key, i128, Vec<Cell>)> = Vec::new();
    for (key, (mut values, ranges)) in groups {
        let Some(s) = ValueStats::of(&mut values) else {
            continue;
        };
        let row = vec![
            text(&tags[key.0 as usize].0),
            text(tags[key.0 as usize].1),
            Cell::Int(key.1 as i64),
            Cell::Int(key.2 as i64),
            Cell::Int(ranges.len() as i64),
            int(s.count as i128),
            int(s.total),
            Cell::Round1(s.avg),
            Cell::Round1(s.median),
            Cell::Int(s.min),
            Cell::Int(s.max),
            Cell::Round1(s.stddev),
            text(trace.name(key.3)),
        ];
        rows.push((key, s.total, row));
    }
    // Range, style, PID, TID; inside one, total time descending, then name.
    rows.sort_by(|a, b| {
        let (ta, tb) = (&tags[a.0.0 as usize], &tags[b.0.0 as usize]);
        (&ta.0, ta.1, a.0.1, a.0.2)
            .cmp(&(&tb.0, tb.1, b.0.1, b.0.2))
            .then(b.1.cmp(&a.1))
            .then_with(|| trace.name(a.0.3).cmp(trace.name(b.0.3)))
    });
    let columns = [
        "NVTX Range",
        "Style",
        "PID",
        "TID",
        "NVTX Inst",
        "Kern Inst",
        "Total Time (ns)",
        "Avg (ns)",
        "Med (ns)",
        "Min (ns)",
        "Max (ns)",
        "StdDev (ns)",
        "Kernel Name",
    ];
    Table {
        columns: columns.iter().map(|s| s.to_string()).collect(),
        rows: rows.into_iter().map(|(_, _, row)| row).collect(),
    }
}

/// The columns of `nvtx_pushpop_trace`.
pub(crate) const PUSHPOP_COLUMNS: &[&str] = &[
    "Start (ns)",
    "End (ns)",
    "Duration (ns)",
    "DurChild (ns)",
    "DurNonChild (ns)",
    "Name",
    "PID",
    "TID",
    "Lvl",
    "NumChild",
    "RangeId",
    "ParentId",
    "RangeStack",
    "NameTree",
];

/// One push/pop range of [`PushPopRows`] with its nesting.
struct PushPopRow {
    nvtx: u32,
    thread: usize,
    tag: String,
    parent: Option<usize>,
    level: u32,
    children: u32,
    child_time: i64,
}

/// The rows of `nvtx_pushpop_trace`, each made when it is written
/// ([`PushPopRows::row`]): a row's `RangeStack` and `NameTree` grow with its
/// depth, so the rows of ranges nested thousands deep hold gigabytes of text
/// (the report is that long) and must not all be held at once.
pub(crate) struct PushPopRows {
    rows: Vec<PushPopRow>,
    /// The rows in the report's order (those starting in the range asked).
    pub(crate) order: Vec<usize>,
}

/// `nvtx_pushpop_trace`: every push/pop range (all domains) with its nesting
/// among the push/pop ranges of its thread, by start (outer ranges first).
/// `DurChild` sums the direct children's durations; `NameTree` indents the
/// name by two dashes per level. A range belongs to `range` when it starts in
/// it (its nesting is that of the whole trace).
pub(crate) fn nvtx_pushpop_trace(trace: &Trace, range: Option<TimeRange>) -> Table {
    let rows = pushpop_rows(trace, range);
    Table {
        columns: PUSHPOP_COLUMNS.iter().map(|s| s.to_string()).collect(),
        rows: rows.order.iter().map(|&i| rows.row(trace, i)).collect(),
    }
}

/// The rows of `nvtx_pushpop_trace` over `range`, in order, not yet made.
pub(crate) fn pushpop_rows(trace: &Trace, range: Option<TimeRange>) -> PushPopRows {
    let mut rows: Vec<PushPopRow> = Vec::new();
    for (t, thread) in trace.threads.iter().enumerate() {
        let mut ranges: Vec<(u32, &str)> = Vec::new();
        for track in &thread.nvtx {
            for i in track.track.rows() {
                if trace.nvtx.kind.get(i as usize) == Some(&NvtxKind::PushPop) {
                    ranges.push((i, track.domain.as_str()));
                }
            }
        }
        ranges.sort_by_key(|r| range_key(trace, r.0));
        let ids: Vec<u32> = ranges.iter().map(|r| r.0).collect();
        let offset = rows.len();
        for ((nvtx, domain), (parent, level)) in ranges.iter().zip(nesting(trace, &ids)) {
            rows.push(PushPopRow {
                nvtx: *nvtx,
                thread: t,
                tag: tag(trace, *nvtx, domain),
                parent: parent.map(|p| offset + p),
                level,
                children: 0,
                child_time: 0,
            });
        }
        for i in offset..rows.len() {
            if let Some(p) = rows[i].parent {
                let duration = trace.nvtx.spans.duration(rows[i].nvtx as usize);
                rows[p].children += 1;
                rows[p].child_time = rows[p].child_time.saturating_add(duration);
            }
        }
    }
    let mut order: Vec<usize> = (0..rows.len())
        .filter(|&i| {
            let start = trace.nvtx.spans.start[rows[i].nvtx as usize];
            range.is_none_or(|r| start >= r.start && start < r.end)
        })
        .collect();
    order.sort_by_key(|&i| range_key(trace, rows[i].nvtx));
    PushPopRows { rows, order }
}

impl PushPopRows {
    /// The cells of row `i` (an entry of `order`).
    pub(crate) fn row(&self, trace: &Trace, i: usize) -> Vec<Cell> {
        let rows = &self.rows;
        let row_id = |i: usize| trace.nvtx.row_id.get(rows[i].nvtx as usize).copied();
        let r = &rows[i];
        let n = r.nvtx as usize;
        let thread = &trace.threads[r.thread];
        let duration = trace.nvtx.spans.duration(n);
        let mut stack = Vec::new();
        let mut at = Some(i);
        while let Some(j) = at {
            stack.push(row_id(j).unwrap_or(0));
            at = rows[j].parent;
        }
        let stack: String = stack.iter().rev().map(|id| format!(":{id}")).collect();
        vec![
            Cell::Int(trace.nvtx.spans.start[n]),
            Cell::Int(trace.nvtx.spans.end(n)),
            Cell::Int(duration),
            Cell::Int(r.child_time),
            Cell::Int(duration.saturating_sub(r.child_time)),
            text(&r.tag),
            Cell::Int(thread.pid as i64),
            Cell::Int(thread.tid as i64),
            Cell::Int(r.level as i64),
            Cell::Int(r.children as i64),
            row_id(i).map_or(Cell::Empty, Cell::Int),
            r.parent.and_then(row_id).map_or(Cell::Empty, Cell::Int),
            text(&stack),
            text(&format!("{}{}", "--".repeat(r.level as usize), r.tag)),
        ]
    }
}
