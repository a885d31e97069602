//! Two reports compared: per kernel, CUDA API, NVTX range or memory operation, the
//! instances, total and average time of each side, and how the average changed.
//!
//! The numbers of each side are that report's own summary (`cuda_gpu_kern_sum`,
//! `cuda_api_sum`, `nvtx_sum`, `cuda_gpu_mem_time_sum`): the diff reads the same
//! groups the stats tables are laid out from, so a diff can never disagree with
//! `sightline stats` on either file. Rows are joined on a typed key built from the
//! report's own name column (plus the NVTX style), never on formatted table text.
//!
//! The CLI `sightline diff` and any window table are meant to be this one computation.

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

use super::group::ValueStats;
use super::reports::{self, int};
use crate::analysis::report::Report;
use crate::analysis::table::Cell;
use crate::analysis::table::Table;
use crate::model::TimeRange;
use crate::model::{EventId, EventKind, StrId, Trace};

/// The summaries a diff can compare.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DiffReport {
    /// `cuda_gpu_kern_sum`: kernels by name.
    Kernels,
    /// `cuda_api_sum`: CUDA runtime/driver calls by name.
    Api,
    /// `nvtx_sum`: NVTX push/pop and start/end ranges by `domain:message` and style.
    Nvtx,
    /// `cuda_gpu_mem_time_sum`: memory copies (by kind) and sets, by time.
    Memcpy,
}

impl DiffReport {
    /// Every diff report, in the order `sightline diff` prints them by default.
    pub const ALL: [DiffReport; 4] = [
        DiffReport::Kernels,
        DiffReport::Api,
        DiffReport::Nvtx,
        DiffReport::Memcpy,
    ];

    /// The short name `--report` takes and output files use (`PREFIX_diff_kernels.csv`).
    pub fn name(self) -> &'static str {
        match self {
            DiffReport::Kernels => "kernels",
            DiffReport::Api => "api",
            DiffReport::Nvtx => "nvtx",
            DiffReport::Memcpy => "memcpy",
        }
    }

    /// The `nsys stats` report whose numbers each side shows.
    pub fn source(self) -> Report {
        match self {
            DiffReport::Kernels => Report::CudaGpuKernSum,
            DiffReport::Api => Report::CudaApiSum,
            DiffReport::Nvtx => Report::NvtxSum,
            DiffReport::Memcpy => Report::CudaGpuMemTimeSum,
        }
    }

    /// Accepts the short name or the nsys report name (`kernels` or `cuda_gpu_kern_sum`).
    pub fn from_name(name: &str) -> Option<DiffReport> {
        DiffReport::ALL
            .into_iter()
            .find(|r| r.name() == name || r.source().name() == name)
    }

    /// A title for people, e.g. "CUDA GPU Kernel Summary diff".
    pub fn title(self) -> String {
        format!("{} diff", self.source().title())
    }
}

/// NVTX style: `nvtx_sum` keeps a push/pop and a start/end range of one name apart.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NvtxStyle {
    PushPop,
    StartEnd,
}

impl NvtxStyle {
    pub fn label(self) -> &'static str {
        match self {
            NvtxStyle::PushPop => "PushPop",
            NvtxStyle::StartEnd => "StartEnd",
        }
    }
}

/// What joins a row of A with a row of B.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DiffKey {
    /// The report's own name column: kernel name, API name (version suffix
    /// stripped), NVTX `domain:message`, or memory operation.
    pub name: String,
    /// NVTX rows only.
    pub style: Option<NvtxStyle>,
    /// 0 for the first row of this name and style in its report, 1 for a second…
    /// (`cuda_api_sum` groups by name id, so two ids whose names strip to the same
    /// text are two rows; they pair up in order rather than merging, which would
    /// change the report's numbers).
    pub occurrence: u32,
}

/// One side's numbers for one row, exactly as its summary report holds them.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct DiffSide {
    pub instances: u64,
    /// Total time, ns.
    pub total: i128,
    /// Average time, ns, unrounded (tables print it as the report does, one decimal).
    pub avg: f64,
}

impl From<&ValueStats> for DiffSide {
    fn from(s: &ValueStats) -> DiffSide {
        DiffSide {
            instances: s.count,
            total: s.total,
            avg: s.avg,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct DiffRow {
    pub key: DiffKey,
    /// The Name cell: the key's name, with the style when an NVTX name has rows of
    /// both styles, and `#2`, `#3`… for repeated names (see [`DiffKey::occurrence`]).
    pub name: String,
    /// `None` when the name is only in B.
    pub a: Option<DiffSide>,
    /// `None` when the name is only in A.
    pub b: Option<DiffSide>,
}

impl DiffRow {
    /// Total time of B minus total time of A, a missing side counting 0.
    pub fn total_change(&self) -> i128 {
        self.b.map_or(0, |s| s.total) - self.a.map_or(0, |s| s.total)
    }

    /// How much the average grew from A to B, in percent of A's. `None` when a
    /// side is missing, or A's average is 0 and B's is not (no finite change).
    pub fn avg_change_percent(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        if a.avg == 0.0 {
            return (b.avg == 0.0).then_some(0.0);
        }
        Some((b.avg - a.avg) * 100.0 / a.avg)
    }
}

/// A computed diff: rows by absolute change of total time, descending; ties by name.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    pub report: DiffReport,
    pub rows: Vec<DiffRow>,
}

/// The diff table's header, the same for every report (count columns are
/// "Instances" even where the source report says "Num Calls" or "Count").
pub const COLUMNS: [&str; 8] = [
    "Name",
    "Instances (A)",
    "Instances (B)",
    "Total Time (A) (ns)",
    "Total Time (B) (ns)",
    "Avg (A) (ns)",
    "Avg (B) (ns)",
    "Avg Change (%)",
];

impl Diff {
    /// The rows as a table: empty cells where a side lacks the name. Counts and
    /// totals are integers, averages and the change print one decimal as nsys does.
    pub fn to_table(&self) -> Table {
        let rows = self
            .rows
            .iter()
            .map(|row| {
                let side = |s: Option<DiffSide>, pick: fn(&DiffSide) -> Cell| {
                    s.as_ref().map_or(Cell::Empty, pick)
                };
                let instances = |s: &DiffSide| int(s.instances as i128);
                let total = |s: &DiffSide| int(s.total);
                let avg = |s: &DiffSide| Cell::Round1(s.avg);
                vec![
                    Cell::Text(row.name.clone()),
                    side(row.a, instances),
                    side(row.b, instances),
                    side(row.a, total),
                    side(row.b, total),
                    side(row.a, avg),
                    side(row.b, avg),
                    row.avg_change_percent().map_or(Cell::Empty, Cell::Round1),
                ]
            })
            .collect();
        Table {
            columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
            rows,
        }
    }

    /// The table as `sightline diff` prints and writes it: the numbers first
    /// and the name last, as `nsys stats` lays out its reports, so a long name
    /// (torch's run to hundreds of characters) never pushes the numbers of
    /// every row to the right ([`to_table`](Self::to_table) keeps the name
    /// first for the window's fixed-width name column).
    pub fn to_report(&self) -> Table {
        let mut table = self.to_table();
        table.columns.rotate_left(1);
        for row in &mut table.rows {
            row.rotate_left(1);
        }
        table
    }

    /// Rows on both sides whose average grew by more than `percent` %: the
    /// regression gate (`sightline diff --fail-above`). Names on one side only
    /// are new or gone, not slower, and never trip it.
    pub fn slower_than(&self, percent: f64) -> impl Iterator<Item = &DiffRow> {
        self.rows
            .iter()
            .filter(move |row| row.avg_change_percent().is_some_and(|c| c > percent))
    }
}

/// Compares `report` over the whole of `a` and `b`.
pub fn diff(a: &Trace, b: &Trace, report: DiffReport) -> Diff {
    diff_ranges(a, None, b, None, report)
}

/// Compares `report` over the events of `a` that start in `range_a` and those of
/// `b` that start in `range_b` (each side's whole trace for `None`), the ranges
/// meaning what they mean for [`super::stats::compute`].
pub fn diff_ranges(
    a: &Trace,
    range_a: Option<TimeRange>,
    b: &Trace,
    range_b: Option<TimeRange>,
    report: DiffReport,
) -> Diff {
    let side_a = keyed_groups(a, range_a, report);
    let side_b = keyed_groups(b, range_b, report);

    // NVTX names that come in both styles (on either side) name their style.
    let mut styles: HashMap<&str, HashSet<NvtxStyle>> = HashMap::new();
    for key in side_a.iter().chain(&side_b).map(|(k, _)| k) {
        if let Some(style) = key.style {
            styles.entry(&key.name).or_default().insert(style);
        }
    }
    let label = |key: &DiffKey| {
        let mut name = key.name.clone();
        if let Some(style) = key.style
            && styles.get(key.name.as_str()).is_some_and(|s| s.len() > 1)
        {
            name = format!("{name} ({})", style.label());
        }
        if key.occurrence > 0 {
            name = format!("{name} #{}", key.occurrence + 1);
        }
        name
    };

    let mut b_by_key: HashMap<&DiffKey, DiffSide> =
        side_b.iter().map(|(k, s)| (k, DiffSide::from(s))).collect();
    let mut rows: Vec<DiffRow> = side_a
        .iter()
        .map(|(key, s)| DiffRow {
            key: key.clone(),
            name: label(key),
            a: Some(DiffSide::from(s)),
            b: b_by_key.remove(key),
        })
        .collect();
    // What is left of B is only in B; walking side_b keeps its order deterministic.
    for (key, _) in &side_b {
        if let Some(b) = b_by_key.remove(key) {
            rows.push(DiffRow {
                key: key.clone(),
                name: label(key),
                a: None,
                b: Some(b),
            });
        }
    }
    rows.sort_by(|x, y| {
        Reverse(x.total_change().unsigned_abs())
            .cmp(&Reverse(y.total_change().unsigned_abs()))
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.key.cmp(&y.key))
    });
    Diff { report, rows }
}

/// One report's groups with their join keys, in the report's own group order.
fn keyed_groups(
    trace: &Trace,
    range: Option<TimeRange>,
    report: DiffReport,
) -> Vec<(DiffKey, ValueStats)> {
    let named: Vec<((String, Option<NvtxStyle>), ValueStats)> = match report {
        DiffReport::Kernels => reports::cuda_gpu_kern_groups(trace, range)
            .into_iter()
            .map(|(id, s)| ((trace.name(StrId(id)).to_string(), None), s))
            .collect(),
        DiffReport::Api => reports::cuda_api_groups(trace, range)
            .into_iter()
            .map(|(id, s)| ((reports::cuda_api_name(trace, id).to_string(), None), s))
            .collect(),
        DiffReport::Memcpy => reports::cuda_gpu_mem_time_groups(trace, range)
            .into_iter()
            .map(|(id, s)| ((trace.name(StrId(id)).to_string(), None), s))
            .collect(),
        DiffReport::Nvtx => reports::nvtx_groups(trace, range)
            .into_iter()
            .map(|((tag, style), s)| {
                // nvtx_groups codes the style as 0 push/pop, 1 start/end.
                let style = if style == 0 {
                    NvtxStyle::PushPop
                } else {
                    NvtxStyle::StartEnd
                };
                ((tag, Some(style)), s)
            })
            .collect(),
    };
    let mut seen: HashMap<(String, Option<NvtxStyle>), u32> = HashMap::new();
    named
        .into_iter()
        .map(|((name, style), summary)| {
            let count = seen.entry((name.clone(), style)).or_insert(0);
            let key = DiffKey {
                name,
                style,
                occurrence: *count,
            };
            *count += 1;
            (key, summary)
        })
        .collect()
}

/// The events one row of a diff counts in one report, and the names they carry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Instances {
    /// By `StrId`: the names of the row's events (views outline events by name).
    pub names: Vec<bool>,
    /// The events, by start time (ties by kind, then index). As many as the
    /// row's instances on that side: a view stepping through them steps
    /// through exactly what the numbers count.
    pub events: Vec<EventId>,
}

/// The events of `trace` that the row keyed `key` of `report` counts, over the
/// events starting in `range` (the whole trace for `None`), as
/// [`diff_ranges`] counted them for that side. Empty when `trace` has no such row.
///
/// One pass over the report's events, without the summaries: cheap enough for
/// a click on a 10M-event report.
pub fn instances(
    trace: &Trace,
    report: DiffReport,
    key: &DiffKey,
    range: Option<TimeRange>,
) -> Instances {
    let mut names = vec![false; trace.strings.len()];
    let mut events: Vec<(i64, EventId)> = Vec::new();
    match report {
        DiffReport::Nvtx => {
            let Some(style) = key.style else {
                return Instances::default();
            };
            // nvtx_sum merges every domain's groups with the same tag text:
            // one row per (tag, style), so there is never a second occurrence.
            if key.occurrence > 0 {
                return Instances::default();
            }
            let spans = &trace.nvtx.spans;
            for thread in &trace.threads {
                for track in &thread.nvtx {
                    // The row's tag is `domain:message`: this domain's part of
                    // it is the message, which names are interned once.
                    let Some(message) = key
                        .name
                        .strip_prefix(track.domain.as_str())
                        .and_then(|rest| rest.strip_prefix(':'))
                    else {
                        continue;
                    };
                    let Some(id) = trace.strings.find(message) else {
                        continue;
                    };
                    for i in reports::events_in(spans, &track.track, range) {
                        let kind_style = match trace.nvtx.kind.get(i) {
                            Some(crate::model::NvtxKind::PushPop) => NvtxStyle::PushPop,
                            Some(crate::model::NvtxKind::StartEnd) => NvtxStyle::StartEnd,
                            _ => continue,
                        };
                        if spans.name[i] == id && kind_style == style {
                            names[id.0 as usize] = true;
                            events.push((spans.start[i], EventId::new(EventKind::Nvtx, i as u32)));
                        }
                    }
                }
            }
        }
        DiffReport::Kernels | DiffReport::Api | DiffReport::Memcpy => {
            // The name ids whose Name cell is the key's name: one for kernels
            // and memory operations (names are interned), maybe several API
            // names that differ only in their version suffix.
            let candidate = |id: u32| {
                let text = trace.name(StrId(id));
                let cell = if report == DiffReport::Api {
                    reports::cuda_api_name(trace, id)
                } else {
                    text
                };
                id != 0 && cell == key.name
            };
            let wanted: Vec<bool> = (0..trace.strings.len() as u32).map(candidate).collect();
            let is_wanted = |id: StrId| wanted.get(id.0 as usize).copied().unwrap_or(false);
            let mut by_id: std::collections::BTreeMap<u32, Vec<(i64, EventId)>> =
                std::collections::BTreeMap::new();
            let mut take = |spans: &crate::model::SpanColumns,
                            track: &crate::model::Track,
                            kind: EventKind,
                            counted: &dyn Fn(usize) -> bool| {
                for i in reports::events_in(spans, track, range) {
                    if is_wanted(spans.name[i]) && counted(i) {
                        by_id
                            .entry(spans.name[i].0)
                            .or_default()
                            .push((spans.start[i], EventId::new(kind, i as u32)));
                    }
                }
            };
            match report {
                DiffReport::Api => {
                    for thread in &trace.threads {
                        take(
                            &trace.cuda_api.spans,
                            &thread.cuda_api,
                            EventKind::Api,
                            &|_| true,
                        );
                    }
                }
                DiffReport::Kernels => {
                    for stream in &trace.streams {
                        take(
                            &trace.kernels.spans,
                            &stream.kernels,
                            EventKind::Kernel,
                            &|_| true,
                        );
                    }
                }
                _ => {
                    let known = &trace.memcpys.kind_known;
                    for stream in &trace.streams {
                        // Copies of a kind the report's enum does not name are
                        // not in cuda_gpu_mem_time_sum, so not in the row.
                        take(
                            &trace.memcpys.spans,
                            &stream.memcpys,
                            EventKind::Memcpy,
                            &|i| known.get(i).copied().unwrap_or(false),
                        );
                        take(
                            &trace.memsets.spans,
                            &stream.memsets,
                            EventKind::Memset,
                            &|_| true,
                        );
                    }
                }
            }
            // Groups come in name id order (the summaries' key order), and the
            // key's occurrence counts repeated names in that order.
            if let Some((id, found)) = by_id.into_iter().nth(key.occurrence as usize) {
                names[id as usize] = true;
                events = found;
            }
        }
    }
    events.sort_unstable();
    Instances {
        names,
        events: events.into_iter().map(|(_, e)| e).collect(),
    }
}

/// An NVTX range name two reports can be lined up on, and how many ranges of
/// that name each has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvtxAnchor {
    /// The range's message, whatever its domain: a program recorded by nsys
    /// marks its phases in the default domain, the same phases captured by
    /// Sightline are in the `sightline` domain, and they are still one phase.
    pub name: String,
    pub count_a: u64,
    pub count_b: u64,
}

/// How many push/pop and start/end ranges (not marks) each message names.
fn nvtx_range_counts(trace: &Trace) -> Vec<u64> {
    let mut counts = vec![0u64; trace.strings.len()];
    let spans = &trace.nvtx.spans;
    for thread in &trace.threads {
        for track in &thread.nvtx {
            for i in reports::events_in(spans, &track.track, None) {
                if is_range(trace, i)
                    && let Some(c) = counts.get_mut(spans.name[i].0 as usize)
                {
                    *c += 1;
                }
            }
        }
    }
    counts
}

fn is_range(trace: &Trace, i: usize) -> bool {
    matches!(
        trace.nvtx.kind.get(i),
        Some(crate::model::NvtxKind::PushPop | crate::model::NvtxKind::StartEnd)
    )
}

/// The NVTX range names both reports have, by name.
pub fn common_nvtx_names(a: &Trace, b: &Trace) -> Vec<NvtxAnchor> {
    let (counts_a, counts_b) = (nvtx_range_counts(a), nvtx_range_counts(b));
    let mut common: Vec<NvtxAnchor> = counts_a
        .iter()
        .enumerate()
        .filter(|&(id, &n)| id != 0 && n > 0)
        .filter_map(|(id, &count_a)| {
            let name = a.name(StrId(id as u32));
            let count_b = b
                .strings
                .find(name)
                .and_then(|other| counts_b.get(other.0 as usize).copied())
                .unwrap_or(0);
            (count_b > 0).then(|| NvtxAnchor {
                name: name.to_string(),
                count_a,
                count_b,
            })
        })
        .collect();
    common.sort_by(|x, y| x.name.cmp(&y.name));
    common
}

/// The push/pop and start/end ranges whose message is `name`, in any domain,
/// by start (ties by index).
pub fn nvtx_ranges_named(trace: &Trace, name: &str) -> Vec<EventId> {
    let Some(id) = trace.strings.find(name) else {
        return Vec::new();
    };
    let spans = &trace.nvtx.spans;
    let mut found: Vec<(i64, EventId)> = Vec::new();
    for thread in &trace.threads {
        for track in &thread.nvtx {
            for i in reports::events_in(spans, &track.track, None) {
                if spans.name[i] == id && is_range(trace, i) {
                    found.push((spans.start[i], EventId::new(EventKind::Nvtx, i as u32)));
                }
            }
        }
    }
    found.sort_unstable();
    found.into_iter().map(|(_, e)| e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(instances: u64, total: i128) -> Option<DiffSide> {
        Some(DiffSide {
            instances,
            total,
            avg: total as f64 / instances as f64,
        })
    }

    fn row(name: &str, a: Option<DiffSide>, b: Option<DiffSide>) -> DiffRow {
        DiffRow {
            key: DiffKey {
                name: name.into(),
                style: None,
                occurrence: 0,
            },
            name: name.into(),
            a,
            b,
        }
    }

    #[test]
    fn change_and_gate() {
        let slower = row("k", side(2, 200), side(2, 300));
        assert_eq!(slower.avg_change_percent(), Some(50.0));
        assert_eq!(slower.total_change(), 100);
        let gone = row("g", side(1, 40), None);
        assert_eq!(gone.avg_change_percent(), None);
        assert_eq!(gone.total_change(), -40);
        let zero = row("z", side(1, 0), side(1, 0));
        assert_eq!(zero.avg_change_percent(), Some(0.0));
        let from_zero = row("f", side(1, 0), side(1, 5));
        assert_eq!(from_zero.avg_change_percent(), None);
        let diff = Diff {
            report: DiffReport::Kernels,
            rows: vec![slower, gone, zero, from_zero],
        };
        assert_eq!(diff.slower_than(49.9).count(), 1);
        assert_eq!(diff.slower_than(50.0).count(), 0);
        let table = diff.to_table();
        assert_eq!(table.columns, COLUMNS);
        assert_eq!(table.rows[1][2], Cell::Empty);
        assert_eq!(table.rows[1][7], Cell::Empty);
        assert_eq!(table.rows[0][7].to_string(), "50.0");
    }

    #[test]
    fn report_names() {
        for r in DiffReport::ALL {
            assert_eq!(DiffReport::from_name(r.name()), Some(r));
            assert_eq!(DiffReport::from_name(r.source().name()), Some(r));
        }
        assert_eq!(DiffReport::from_name("osrt_sum"), None);
    }
}
