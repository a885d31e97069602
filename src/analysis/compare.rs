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

use super::group::Summary;
use super::reports::{self, int};
use super::stats::{Cell, Report, Table, TimeRange};
use crate::model::{StrId, Trace};

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

impl From<&Summary> for DiffSide {
    fn from(s: &Summary) -> DiffSide {
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
) -> Vec<(DiffKey, Summary)> {
    let named: Vec<((String, Option<NvtxStyle>), Summary)> = match report {
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
