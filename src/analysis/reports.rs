//! The eight reports. Each walks the tracks that hold its events, binary-searched
//! to the time range and counted by the range's rule ([`for_each_counted`]),
//! groups durations (or bytes) per name, and lays the groups out in nsys's
//! columns and order. The rules they follow, and how each was
//! checked against nsys, are in `docs/nsys-stats-semantics.md` (section numbers below).
//!
//! Ties on the sort key come out in ascending group-key order, as SQLite's stable
//! sorter gives them. Where nsys's key is a `StringIds` id, `StrId` order is the
//! same order: the loader interns `StringIds` first, in id order.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::ops::Range;

use super::format::round1_value;
use super::group::{
    Collector, Grouped, UNUSED, ValueStats, collect, collect_parts, one_group_per_key,
};
use crate::analysis::scope::{RangeRule, Scope};
use crate::analysis::table::Cell;
use crate::analysis::table::Table;
use crate::model::TimeRange;
use crate::model::nsys::strip_version_suffix;
use crate::model::{GpuOpKind, NvtxKind, RowOwners, Run, Span, SpanColumns, StrId, Trace, Track};

/// The OS runtime calls `osrt_sum` counts (others are start/finish markers).
const OSRT_CALL_CLASS: u8 = crate::model::nsys::event_class::OS_RUNTIME as u8;

/// The rows of `track` that belong to `range` (all of them without a range),
/// in start order.
pub(crate) fn events_in<'a>(
    spans: &'a SpanColumns,
    track: &'a Track,
    range: Option<TimeRange>,
) -> impl Iterator<Item = usize> + Clone + 'a {
    let runs = match range {
        Some(r) => track.runs_overlapping(spans, r.start, r.end),
        None => track.runs(),
    };
    runs.iter().flat_map(move |run| {
        let rows = match range {
            Some(r) => run.starting_in(spans, r.start, r.end),
            None => run.events.clone(),
        };
        rows.start as usize..rows.end as usize
    })
}

/// Which rows of a run a scope walks, and how their durations count.
pub(crate) enum Walk {
    /// These rows, each with its whole duration (no range, or the default
    /// rule, whose rows are those that start in the range).
    Whole(Range<usize>),
    /// These rows (a window widened by the run's longest event), each
    /// counted as [`RangeRule::counted`] says for this range.
    Clipped(Range<usize>, TimeRange),
}

/// The runs of `track` that may hold rows `scope` counts: with a range, those
/// the range may touch (a capture's track is a run per snapshot).
pub(crate) fn runs_in<'a>(spans: &SpanColumns, track: &'a Track, scope: Scope) -> &'a [Run] {
    match scope.range {
        Some(r) => track.runs_overlapping(spans, r.start, r.end),
        None => track.runs(),
    }
}

pub(crate) fn walk(spans: &SpanColumns, run: &Run, scope: Scope) -> Walk {
    let usize_range = |rows: Span| rows.start as usize..rows.end as usize;
    match scope.range {
        None => Walk::Whole(run.rows()),
        Some(r) => match scope.rule {
            RangeRule::StartsInside => {
                Walk::Whole(usize_range(run.starting_in(spans, r.start, r.end)))
            }
            // Rows that start before the range by up to the run's longest
            // event may still reach into it; `counted` decides.
            RangeRule::Overlapping => {
                Walk::Clipped(usize_range(run.window(spans, r.start, r.end)), r)
            }
        },
    }
}

/// The rows of `rows` that overlap `range`, each with its clipped duration,
/// handed to `each`. Out of line on purpose: see [`for_each_counted`].
#[inline(never)]
pub(crate) fn each_clipped(
    spans: &SpanColumns,
    rows: Range<usize>,
    range: TimeRange,
    mut each: impl FnMut(usize, i64),
) {
    for row in rows {
        if let Some(d) = RangeRule::Overlapping.counted(range, spans.start[row], spans.end(row)) {
            each(row, d);
        }
    }
}

/// `for_each_counted!(spans, track, scope, |row, duration| { body })` runs
/// `body` for every row of `track` that `scope` counts, in track order, with
/// the duration it counts with ([`walk`]).
///
/// A macro for speed: the default rule's rows are walked by a plain loop
/// with the body pasted in, exactly the loop the reports had before rules
/// existed, while the overlapping rule's loop lives out of line
/// ([`each_clipped`]). Both in one function, or a per-row test of the rule,
/// made `cuda_gpu_kern_sum` over 600k kernels 10–18 % slower. The body is a
/// closure in the second arm, so it must not use `continue`, `break` or
/// `return` (the first two do not compile there).
macro_rules! for_each_counted {
    ($spans:expr, $track:expr, $scope:expr, |$row:ident, $duration:pat_param| $body:block) => {{
        let spans: &$crate::model::SpanColumns = $spans;
        let track: &$crate::model::Track = $track;
        for run in $crate::analysis::reports::runs_in(spans, track, $scope) {
            match $crate::analysis::reports::walk(spans, run, $scope) {
                $crate::analysis::reports::Walk::Whole(rows) => {
                    for $row in rows {
                        let $duration = spans.duration($row);
                        $body
                    }
                }
                $crate::analysis::reports::Walk::Clipped(rows, range) => {
                    $crate::analysis::reports::each_clipped(
                        spans,
                        rows,
                        range,
                        |$row, $duration| $body,
                    )
                }
            }
        }
    }};
}
pub(crate) use for_each_counted;

/// An integer cell. A sum past i64 (extreme timestamps) keeps every digit,
/// as text: clamped to i64::MAX it would read as a real total, silently
/// smaller than Avg × Instances.
pub(crate) fn int(value: i128) -> Cell {
    match i64::try_from(value) {
        Ok(v) => Cell::Int(v),
        Err(_) => Cell::Text(value.to_string()),
    }
}

pub(crate) fn text(value: &str) -> Cell {
    Cell::Text(value.to_string())
}

/// `round(total * 100.0 / grand, 1)`; SQL gives NULL when dividing by zero.
pub(crate) fn percent(total: i128, grand: i128) -> Cell {
    if grand == 0 {
        Cell::Empty
    } else {
        Cell::Round1(total as f64 * 100.0 / grand as f64)
    }
}

/// The eight duration columns most reports start with.
pub(crate) fn duration_columns(count: &str, names: &[&str]) -> Vec<String> {
    let mut columns: Vec<String> = [
        "Time (%)",
        "Total Time (ns)",
        count,
        "Avg (ns)",
        "Med (ns)",
        "Min (ns)",
        "Max (ns)",
        "StdDev (ns)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    columns.extend(names.iter().map(|s| s.to_string()));
    columns
}

pub(crate) fn duration_cells(s: &ValueStats, grand: i128) -> Vec<Cell> {
    vec![
        percent(s.total, grand),
        int(s.total),
        int(s.count as i128),
        Cell::Round1(s.avg),
        Cell::Round1(s.median),
        Cell::Int(s.min),
        Cell::Int(s.max),
        Cell::Round1(s.stddev),
    ]
}

/// Groups by raw key, one group per used key: `(key, summary)` in key order.
pub(crate) fn summarize_by_key(
    raw_keys: usize,
    walk: impl Fn(&mut Collector) + Sync,
) -> Vec<(u32, ValueStats)> {
    summarize_by_key_in_parts(raw_keys, 1, |c, _| walk(c))
}

/// [`summarize_by_key`] with the walk cut in `parts` walked side by side
/// (see [`collect_parts`]).
pub(crate) fn summarize_by_key_in_parts(
    raw_keys: usize,
    parts: usize,
    walk: impl Fn(&mut Collector, usize) + Sync,
) -> Vec<(u32, ValueStats)> {
    let mut keys = Vec::new();
    let mut grouped = collect_parts(raw_keys, parts, walk, |counts| {
        let (merge, used) = one_group_per_key(counts);
        keys = used;
        merge
    });
    let summaries = summarize_groups(&mut grouped);
    keys.into_iter()
        .zip(summaries)
        .filter_map(|(key, s)| s.map(|s| (key, s)))
        .collect()
}

/// How many parts to walk `rows` events in: one per core, two at most (this
/// is for reports of millions of events, on any machine), one below a
/// million, where a second thread costs more than it saves.
pub(crate) fn parts_for(rows: usize) -> usize {
    const PARALLEL_ROWS: usize = 1 << 20;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if rows >= PARALLEL_ROWS {
        cores.clamp(1, 2)
    } else {
        1
    }
}

/// The rows of `tracks` cut in `parts` consecutive parts of about equal
/// size, a track cut where a part ends. Walked part after part they are the
/// tracks' rows in order; walked side by side they take a part's time.
pub(crate) fn in_parts(tracks: &[&Track], parts: usize) -> Vec<Vec<Track>> {
    let rows: usize = tracks.iter().map(|t| t.len()).sum();
    let per_part = rows.div_ceil(parts.max(1)).max(1);
    let mut out: Vec<Vec<Track>> = vec![Vec::new()];
    let mut room = per_part;
    for track in tracks {
        for run in track.runs() {
            let mut from = run.events.start;
            while from < run.events.end {
                if room == 0 {
                    out.push(Vec::new());
                    room = per_part;
                }
                let take = (run.events.end - from).min(room as u32);
                // A part of a run is a run: its rows are in start order, and
                // its longest event is at most the run's.
                let part = Run {
                    events: from..from + take,
                    max_duration: run.max_duration,
                    // The run's samples are not the part's: none.
                    sampled_starts: Default::default(),
                };
                if let Some(cut) = out.last_mut() {
                    cut.push(Track::whole(part, track.depth));
                }
                from += take;
                room -= take as usize;
            }
        }
    }
    out
}

/// Each group's summary, in group order. Big inputs are split in two runs
/// of groups of about equal size, summarized on two threads: one kernel
/// name of 17M instances is 300 ms of passes over its durations.
pub(crate) fn summarize_groups(grouped: &mut Grouped) -> Vec<Option<ValueStats>> {
    /// Below this many values a second thread costs more than it saves.
    const PARALLEL_VALUES: usize = 1 << 20;
    let total = grouped.values.len();
    let groups = grouped.len();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if total < PARALLEL_VALUES || groups < 2 || threads < 2 {
        return (0..groups)
            .map(|g| ValueStats::of(grouped.group_mut(g)))
            .collect();
    }
    // The first group whose start is past half the values begins the second run.
    let split = (1..groups)
        .find(|&g| grouped.offsets[g] as usize >= total / 2)
        .unwrap_or(groups - 1);
    let at = grouped.offsets[split] as usize;
    let (first, second) = grouped.values.split_at_mut(at);
    let offsets = &grouped.offsets;
    let summarize = |values: &mut [i64], from: usize, to: usize, base: usize| {
        (from..to)
            .map(|g| {
                let (a, b) = (offsets[g] as usize - base, offsets[g + 1] as usize - base);
                ValueStats::of(&mut values[a..b])
            })
            .collect::<Vec<_>>()
    };
    std::thread::scope(|scope| {
        let later = scope.spawn(|| summarize(second, split, groups, at));
        let mut out = summarize(first, 0, split, 0);
        match later.join() {
            Ok(rest) => out.extend(rest),
            // As if it had run here.
            Err(panic) => std::panic::resume_unwind(panic),
        }
        out
    })
}

/// The usual report shape: duration columns, then `names`, groups ordered by
/// Total descending. `groups` come in tie order (the sort is stable).
pub(crate) fn duration_table<K>(
    mut groups: Vec<(K, ValueStats)>,
    count: &str,
    names: &[&str],
    name_cells: impl Fn(&K) -> Vec<Cell>,
) -> Table {
    let grand: i128 = groups.iter().map(|(_, s)| s.total).sum();
    groups.sort_by_key(|g| Reverse(g.1.total));
    Table {
        columns: duration_columns(count, names),
        rows: groups
            .iter()
            .map(|(key, s)| {
                let mut row = duration_cells(s, grand);
                row.extend(name_cells(key));
                row
            })
            .collect(),
    }
}

/// §1. Every CUDA runtime/driver API call, grouped by name id (stripped after
/// grouping); ties by name id.
pub(crate) fn cuda_api_sum(trace: &Trace, scope: Scope) -> Table {
    duration_table(
        cuda_api_groups(trace, scope),
        "Num Calls",
        &["Name"],
        |&key| vec![text(cuda_api_name(trace, key))],
    )
}

/// `cuda_api_sum`'s groups (name id, summary) in name id order; `compare` reads
/// them too, so a diff's numbers are the report's own.
pub(crate) fn cuda_api_groups(trace: &Trace, scope: impl Into<Scope>) -> Vec<(u32, ValueStats)> {
    let scope = scope.into();
    let spans = &trace.cuda_api.spans;
    summarize_by_key(trace.strings.len(), |c| {
        for thread in &trace.threads {
            for_each_counted!(spans, &thread.cuda_api, scope, |i, d| {
                c.push(spans.name[i].0, d);
            });
        }
    })
}

/// The Name cell of a `cuda_api_sum` group: the name id's text, version suffix stripped.
pub(crate) fn cuda_api_name(trace: &Trace, key: u32) -> &str {
    strip_version_suffix(trace.name(StrId(key)))
}

/// §2. Kernels by (demangled) name; ordered by Total desc, Instances asc, Name asc.
pub(crate) fn cuda_gpu_kern_sum(trace: &Trace, scope: Scope) -> Table {
    duration_table(
        cuda_gpu_kern_groups(trace, scope),
        "Instances",
        &["Name"],
        |&key| vec![text(trace.name(StrId(key)))],
    )
}

/// `cuda_gpu_kern_sum`'s groups (name id, summary) in the report's row order.
pub(crate) fn cuda_gpu_kern_groups(
    trace: &Trace,
    scope: impl Into<Scope>,
) -> Vec<(u32, ValueStats)> {
    let scope = scope.into();
    let spans = &trace.kernels.spans;
    let tracks: Vec<&Track> = trace.streams.iter().map(|s| &s.kernels).collect();
    let parts = in_parts(&tracks, parts_for(spans.len()));
    let mut groups = summarize_by_key_in_parts(trace.strings.len(), parts.len(), |c, part| {
        for track in &parts[part] {
            for_each_counted!(spans, track, scope, |i, d| {
                c.push(spans.name[i].0, d);
            });
        }
    });
    groups.sort_by(|a, b| {
        (b.1.total.cmp(&a.1.total))
            .then(a.1.count.cmp(&b.1.count))
            .then_with(|| trace.name(StrId(a.0)).cmp(trace.name(StrId(b.0))))
    });
    groups
}

/// Memory copies and sets by operation label, with `value(row, counted
/// duration)` per operation. Copies of a kind the report's enum does not name
/// are left out, as nsys's join with `ENUM_CUDA_MEMCPY_OPER` leaves them out.
fn memops_by_name(
    trace: &Trace,
    scope: Scope,
    memcpy_value: impl Fn(usize, i64) -> i64 + Sync,
    memset_value: impl Fn(usize, i64) -> i64 + Sync,
) -> Vec<(u32, ValueStats)> {
    let copies = &trace.memcpys.spans;
    let sets = &trace.memsets.spans;
    let mut groups = summarize_by_key(trace.strings.len(), |c| {
        for stream in &trace.streams {
            for_each_counted!(copies, &stream.memcpys, scope, |i, d| {
                if trace.memcpys.kind_known[i] {
                    c.push(copies.name[i].0, memcpy_value(i, d));
                }
            });
            for_each_counted!(sets, &stream.memsets, scope, |i, d| {
                c.push(sets.name[i].0, memset_value(i, d));
            });
        }
    });
    // Ties on Total keep the name order.
    groups.sort_by(|a, b| trace.name(StrId(a.0)).cmp(trace.name(StrId(b.0))));
    groups
}

/// §3. Memory operations by time.
pub(crate) fn cuda_gpu_mem_time_sum(trace: &Trace, scope: Scope) -> Table {
    duration_table(
        cuda_gpu_mem_time_groups(trace, scope),
        "Count",
        &["Operation"],
        |&key| vec![text(trace.name(StrId(key)))],
    )
}

/// `cuda_gpu_mem_time_sum`'s groups (operation name id, duration summary).
pub(crate) fn cuda_gpu_mem_time_groups(
    trace: &Trace,
    scope: impl Into<Scope>,
) -> Vec<(u32, ValueStats)> {
    memops_by_name(trace, scope.into(), |_, d| d, |_, d| d)
}

fn bytes_value(bytes: Option<&u64>) -> i64 {
    bytes.map_or(0, |&b| b.min(i64::MAX as u64) as i64)
}

/// §4. Memory operations by size: byte statistics in decimal megabytes.
/// Under [`RangeRule::Overlapping`] an operation cut by the range still
/// counts all its bytes: how many of them moved inside the range is not
/// recorded, and a share by time would be a guess.
pub(crate) fn cuda_gpu_mem_size_sum(trace: &Trace, scope: Scope) -> Table {
    let mut groups = memops_by_name(
        trace,
        scope,
        |i, _| bytes_value(trace.memcpys.bytes.get(i)),
        |i, _| bytes_value(trace.memsets.bytes.get(i)),
    );
    groups.sort_by_key(|g| Reverse(g.1.total));
    let columns = [
        "Total (MB)",
        "Count",
        "Avg (MB)",
        "Med (MB)",
        "Min (MB)",
        "Max (MB)",
        "StdDev (MB)",
        "Operation",
    ];
    Table {
        columns: columns.iter().map(|s| s.to_string()).collect(),
        rows: groups
            .iter()
            .map(|(key, s)| {
                vec![
                    Cell::Megabytes(s.total as f64),
                    int(s.count as i128),
                    Cell::Megabytes(s.avg),
                    Cell::Megabytes(s.median),
                    Cell::Megabytes(s.min as f64),
                    Cell::Megabytes(s.max as f64),
                    Cell::Megabytes(s.stddev),
                    text(trace.name(StrId(*key))),
                ]
            })
            .collect(),
    }
}

/// §5. NVTX push/pop and start/end ranges (not marks) by `domain:message` and
/// style. Each domain is grouped on its own (raw key = message id × style), then
/// groups whose tag text is equal merge, as nsys groups by the text.
pub(crate) fn nvtx_groups(
    trace: &Trace,
    scope: impl Into<Scope>,
) -> Vec<((String, u8), ValueStats)> {
    let scope = scope.into();
    let spans = &trace.nvtx.spans;
    let kinds = &trace.nvtx.kind;
    let mut domains: Vec<&str> = Vec::new();
    for thread in &trace.threads {
        for track in &thread.nvtx {
            if !domains.contains(&track.domain.as_str()) {
                domains.push(&track.domain);
            }
        }
    }
    // (tag, style) → the value slices of every domain group with that tag.
    let mut tags: HashMap<(String, u8), Vec<i64>> = HashMap::new();
    for &domain in &domains {
        let mut keys = Vec::new();
        let mut grouped = collect(
            trace.strings.len() * 2,
            |c| {
                for thread in &trace.threads {
                    for track in thread.nvtx.iter().filter(|t| t.domain == domain) {
                        for_each_counted!(spans, &track.track, scope, |i, d| {
                            let style = match kinds.get(i) {
                                Some(crate::model::NvtxKind::PushPop) => Some(0),
                                Some(crate::model::NvtxKind::StartEnd) => Some(1),
                                _ => None,
                            };
                            if let Some(style) = style {
                                c.push(spans.name[i].0 * 2 + style, d);
                            }
                        });
                    }
                }
            },
            |counts| {
                let (merge, used) = one_group_per_key(counts);
                keys = used;
                merge
            },
        );
        for (g, &key) in keys.iter().enumerate() {
            let message = trace.name(StrId(key / 2));
            let values = tags
                .entry((format!("{domain}:{message}"), (key % 2) as u8))
                .or_default();
            values.extend_from_slice(grouped.group_mut(g));
        }
    }
    let mut groups: Vec<((String, u8), ValueStats)> = tags
        .into_iter()
        .filter_map(|(tag, mut values)| ValueStats::of(&mut values).map(|s| (tag, s)))
        .collect();
    // Ties on Total: tag, then style ("PushPop" < "StartEnd"), byte order.
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    groups
}

pub(crate) fn nvtx_sum(trace: &Trace, scope: Scope) -> Table {
    duration_table(
        nvtx_groups(trace, scope),
        "Instances",
        &["Style", "Range"],
        |(tag, style)| {
            let style = if *style == 0 { "PushPop" } else { "StartEnd" };
            vec![text(style), text(tag)]
        },
    )
}

/// `nvtx_pushpop_sum` / `nvtx_startend_sum`: `nvtx_sum` restricted to one
/// style, without the Style column (Time (%) is relative to that style).
pub(crate) fn nvtx_style_sum(trace: &Trace, scope: Scope, style: NvtxKind) -> Table {
    let wanted = if style == NvtxKind::PushPop { 0 } else { 1 };
    let groups: Vec<(String, ValueStats)> = nvtx_groups(trace, scope)
        .into_iter()
        .filter(|((_, s), _)| *s == wanted)
        .map(|((tag, _), summary)| (tag, summary))
        .collect();
    duration_table(groups, "Instances", &["Range"], |tag| vec![text(tag)])
}

/// §6. OS runtime calls of class 27 by name id; names unstripped.
pub(crate) fn osrt_sum(trace: &Trace, scope: Scope) -> Table {
    let spans = &trace.osrt.spans;
    let classes = &trace.osrt.event_class;
    let groups = summarize_by_key(trace.strings.len(), |c| {
        for thread in &trace.threads {
            for_each_counted!(spans, &thread.osrt, scope, |i, d| {
                if classes.get(i) == Some(&OSRT_CALL_CLASS) {
                    c.push(spans.name[i].0, d);
                }
            });
        }
    });
    duration_table(groups, "Num Calls", &["Name"], |&key| {
        vec![text(trace.name(StrId(key)))]
    })
}

/// §7. API calls, kernels and memory operations together, by name text (API
/// names stripped first). Raw keys: `[0, n)` API name ids, `[n, 2n)` kernel
/// name ids, `[2n, 3n)` memory operation name ids; the category of a merged
/// group is that of its first raw key, so an API name wins, as in nsys's order.
pub(crate) fn cuda_api_gpu_sum(trace: &Trace, scope: Scope) -> Table {
    api_gpu_sum(trace, scope, true)
}

/// `cuda_gpu_sum`: `cuda_api_gpu_sum` without the API calls (kernels and
/// memory operations; Time (%) relative to their total).
pub(crate) fn cuda_gpu_sum(trace: &Trace, scope: Scope) -> Table {
    api_gpu_sum(trace, scope, false)
}

fn api_gpu_sum(trace: &Trace, scope: Scope, with_api: bool) -> Table {
    const CATEGORIES: [&str; 3] = ["CUDA_API", "CUDA_KERNEL", "MEMORY_OPER"];
    let n = trace.strings.len() as u32;
    let api = &trace.cuda_api.spans;
    let kernels = &trace.kernels.spans;
    let copies = &trace.memcpys.spans;
    let sets = &trace.memsets.spans;
    let mut group_names: Vec<(&str, &str)> = Vec::new();
    let mut grouped = collect(
        n as usize * 3,
        |c| {
            for thread in trace.threads.iter().filter(|_| with_api) {
                for_each_counted!(api, &thread.cuda_api, scope, |i, d| {
                    c.push(api.name[i].0, d);
                });
            }
            for stream in &trace.streams {
                for_each_counted!(kernels, &stream.kernels, scope, |i, d| {
                    c.push(n + kernels.name[i].0, d);
                });
                for_each_counted!(copies, &stream.memcpys, scope, |i, d| {
                    if trace.memcpys.kind_known[i] {
                        c.push(2 * n + copies.name[i].0, d);
                    }
                });
                for_each_counted!(sets, &stream.memsets, scope, |i, d| {
                    c.push(2 * n + sets.name[i].0, d);
                });
            }
        },
        |counts| {
            let mut group_of = vec![UNUSED; counts.len()];
            let mut by_name: HashMap<&str, u32> = HashMap::new();
            for (raw, _) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
                let (part, id) = (raw / n as usize, StrId(raw as u32 % n));
                let name = if part == 0 {
                    strip_version_suffix(trace.name(id))
                } else {
                    trace.name(id)
                };
                group_of[raw] = *by_name.entry(name).or_insert_with(|| {
                    group_names.push((name, CATEGORIES[part.min(2)]));
                    group_names.len() as u32 - 1
                });
            }
            (group_of, group_names.len())
        },
    );
    let mut groups: Vec<((&str, &str), ValueStats)> = group_names
        .into_iter()
        .zip(summarize_groups(&mut grouped))
        .filter_map(|(name, s)| s.map(|s| (name, s)))
        .collect();
    groups.sort_by(|a, b| a.0.0.cmp(b.0.0));
    duration_table(
        groups,
        "Instances",
        &["Category", "Operation"],
        |(name, category)| vec![text(category), text(name)],
    )
}

/// One launch: a kernel and the API call that launched it.
struct Launch {
    group: u32,
    total: i64,
    api: i64,
    queue: Option<i64>,
    kernel: i64,
}

/// (pid, tid, device, API name, kernel name): a kern_exec group before the API
/// name is stripped.
type LaunchKey = (u32, u32, u32, StrId, StrId);

/// §8. Kernels paired with their launching API call (same process, same
/// correlation id), grouped by (PID, TID, device, stripped API name, kernel
/// name). A pair belongs to a range when its API call does: starts in it
/// ([`RangeRule::StartsInside`]) or overlaps it ([`RangeRule::Overlapping`]).
/// The times are never clipped: they are latencies between a call and its
/// kernel, and a clipped one would describe no launch.
pub(crate) fn cuda_kern_exec_sum(trace: &Trace, scope: Scope) -> Table {
    let api = &trace.cuda_api.spans;
    let kernels = &trace.kernels.spans;
    // Which device ran kernel row i: the stream whose kernel track holds i.
    let device_of_rows = RowOwners::of(trace.streams.iter().map(|s| (s.device_id, &s.kernels)));
    let device_of = |row: u32| -> u32 { device_of_rows.owner_of(row).unwrap_or(0) };

    let mut raw_groups: HashMap<LaunchKey, u32> = HashMap::new();
    let mut raw_keys: Vec<LaunchKey> = Vec::new();
    let mut launches: Vec<Launch> = Vec::new();
    for thread in &trace.threads {
        for_each_counted!(api, &thread.cuda_api, scope, |call, _| {
            // A call without a correlation id launched nothing.
            let ops = (trace.cuda_api.correlation.get(call))
                .map(|&correlation| trace.correlation.gpu_ops(thread.pid, correlation));
            let (call_start, call_end) = (api.start[call], api.end(call));
            for op in ops.into_iter().flatten() {
                if op.kind != GpuOpKind::Kernel || op.index as usize >= kernels.len() {
                    continue;
                }
                let k = op.index as usize;
                let (kernel_start, kernel_end) = (kernels.start[k], kernels.end(k));
                let key = (
                    thread.pid,
                    thread.tid,
                    device_of(op.index),
                    api.name[call],
                    kernels.name[k],
                );
                let group = *raw_groups.entry(key).or_insert_with(|| {
                    raw_keys.push(key);
                    raw_keys.len() as u32 - 1
                });
                let queue = kernel_start.saturating_sub(call_end);
                launches.push(Launch {
                    group,
                    total: call_end.max(kernel_end).saturating_sub(call_start),
                    api: call_end.saturating_sub(call_start),
                    queue: (queue >= 0).then_some(queue),
                    kernel: kernel_end.saturating_sub(kernel_start),
                });
            }
        });
    }

    // Merge raw groups whose API names strip to the same text.
    type GroupKey<'a> = (u32, u32, u32, &'a str, &'a str);
    let mut final_of_text: HashMap<GroupKey, u32> = HashMap::new();
    let mut final_keys: Vec<GroupKey> = Vec::new();
    let final_of_raw: Vec<u32> = raw_keys
        .iter()
        .map(|&(pid, tid, device, api_name, kernel_name)| {
            let key = (
                pid,
                tid,
                device,
                strip_version_suffix(trace.name(api_name)),
                trace.name(kernel_name),
            );
            *final_of_text.entry(key).or_insert_with(|| {
                final_keys.push(key);
                final_keys.len() as u32 - 1
            })
        })
        .collect();
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); final_keys.len()];
    for (i, launch) in launches.iter().enumerate() {
        members[final_of_raw[launch.group as usize] as usize].push(i as u32);
    }

    let (mut totals, mut apis, mut queues, mut kernel_times) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut rows: Vec<(f64, GroupKey, Vec<Cell>)> = Vec::new();
    for (key, launch_ids) in final_keys.iter().zip(&members) {
        totals.clear();
        apis.clear();
        queues.clear();
        kernel_times.clear();
        for &i in launch_ids {
            let launch = &launches[i as usize];
            totals.push(launch.total);
            apis.push(launch.api);
            queues.extend(launch.queue);
            kernel_times.push(launch.kernel);
        }
        let Some(total) = ValueStats::of(&mut totals) else {
            continue;
        };
        let mut row = vec![
            Cell::Int(key.0 as i64),
            Cell::Int(key.1 as i64),
            Cell::Int(key.2 as i64),
            int(total.count as i128),
            Cell::Int(queues.len() as i64),
        ];
        for values in [&mut totals, &mut apis, &mut queues, &mut kernel_times] {
            match ValueStats::of(values) {
                Some(s) => row.extend([
                    Cell::Round1(s.avg),
                    Cell::Round1(s.median),
                    Cell::Int(s.min),
                    Cell::Int(s.max),
                    Cell::Round1(s.stddev),
                ]),
                // No queued launch: NULL statistics, but nsys's stddev gives 0.0.
                None => row.extend([
                    Cell::Empty,
                    Cell::Empty,
                    Cell::Empty,
                    Cell::Empty,
                    Cell::Round1(0.0),
                ]),
            }
        }
        row.extend([text(key.3), text(key.4)]);
        rows.push((round1_value(total.avg), *key, row));
    }
    // nsys orders by the rounded TAvg; ties keep the group key order.
    rows.sort_by(|a, b| a.1.cmp(&b.1));
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));

    let mut columns: Vec<String> = ["PID", "TID", "DevId", "Count", "QCount"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for prefix in ["T", "A", "Q", "K"] {
        for stat in ["Avg", "Med", "Min", "Max", "StdDev"] {
            columns.push(format!("{prefix}{stat} (ns)"));
        }
    }
    columns.extend(["API Name".to_string(), "Kernel Name".to_string()]);
    Table {
        columns,
        rows: rows.into_iter().map(|(_, _, row)| row).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streams_report() -> Trace {
        crate::loader::load_fixture("streams.sqlite")
    }

    /// Kernels by name, their walk cut in `parts`.
    fn kernel_groups(trace: &Trace, scope: Scope, parts: usize) -> Vec<(u32, ValueStats)> {
        let spans = &trace.kernels.spans;
        let tracks: Vec<&Track> = trace.streams.iter().map(|s| &s.kernels).collect();
        let cut = in_parts(&tracks, parts);
        summarize_by_key_in_parts(trace.strings.len(), cut.len(), |c, part| {
            for track in &cut[part] {
                for_each_counted!(spans, track, scope, |i, d| {
                    c.push(spans.name[i].0, d);
                });
            }
        })
    }

    /// Cut in parts, the tracks are the same rows in the same order, the
    /// parts about equal; walked side by side, the summaries are the ones a
    /// single walk gives, to the last bit (values in the same order), for
    /// the whole report and for a range counted by either rule.
    #[test]
    fn a_walk_in_parts_summarizes_as_one_walk() {
        let trace = streams_report();
        let tracks: Vec<&Track> = trace.streams.iter().map(|s| &s.kernels).collect();
        let all: Vec<u32> = tracks.iter().flat_map(|t| t.rows()).collect();
        assert!(all.len() > 10_000);
        for parts in 1..=4 {
            let cut = in_parts(&tracks, parts);
            assert_eq!(cut.len(), parts);
            let rows: Vec<u32> = cut.iter().flatten().flat_map(|t| t.rows()).collect();
            assert_eq!(rows, all, "{parts} parts");
            let sizes: Vec<usize> = cut.iter().map(|p| p.iter().map(Track::len).sum()).collect();
            let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
            assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1), "{sizes:?}");
        }
        let starts = &trace.kernels.spans.start;
        let (lo, hi) = (starts.iter().min().copied(), starts.iter().max().copied());
        let (lo, hi) = lo.zip(hi).expect("kernels");
        let middle = TimeRange {
            start: lo + (hi - lo) / 3,
            end: lo + (hi - lo) / 2,
        };
        for scope in [
            Scope::default(),
            Scope::from(Some(middle)),
            Scope {
                range: Some(middle),
                rule: RangeRule::Overlapping,
            },
        ] {
            let one = kernel_groups(&trace, scope, 1);
            assert!(!one.is_empty());
            for parts in 2..=3 {
                assert_eq!(
                    kernel_groups(&trace, scope, parts),
                    one,
                    "{parts} parts, {scope:?}"
                );
            }
        }
    }
}
