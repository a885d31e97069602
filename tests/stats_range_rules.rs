//! The two range rules on real reports: `StartsInside` (the default, the
//! numbers `sightline stats --range` prints) and `Overlapping` (every event
//! that overlaps the range, its duration clipped to it).

mod common;
use common::load;

use std::collections::BTreeMap;

use proptest::prelude::*;
use sightline::analysis::{
    Cell, RangeRule, Report, Table, TimeRange, UnsupportedRule, compute, compute_in,
};
use sightline::model::Trace;

const FIXTURES: [&str; 3] = ["sync_timing.sqlite", "streams.sqlite", "torch_work.sqlite"];

/// The reports whose `Total Time (ns)` is a sum of event durations, so
/// clipped totals must add up over a partition. Left out: the byte sizes of
/// `cuda_gpu_mem_size_sum` and the launch latencies of `cuda_kern_exec_sum`,
/// which the rule does not clip (and which have no such column).
const CLIPPED_TOTALS: [Report; 12] = [
    Report::CudaApiSum,
    Report::CudaGpuKernSum,
    Report::CudaGpuMemTimeSum,
    Report::NvtxSum,
    Report::OsrtSum,
    Report::CudaApiGpuSum,
    Report::NvtxPushpopSum,
    Report::NvtxStartendSum,
    Report::CudaGpuSum,
    Report::CudaGpuKernSumBase,
    Report::CudaGpuKernGbSum,
    Report::KernelLaunchSum,
];

fn column(table: &Table, name: &str) -> usize {
    table
        .columns
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", table.columns))
}

fn int(cell: &Cell) -> i64 {
    match cell {
        Cell::Int(v) => *v,
        other => panic!("not an integer: {other:?}"),
    }
}

/// Columns that hold a group's statistics; every other column names the group.
const STATISTICS: [&str; 12] = [
    "Time (%)",
    "Total Time (ns)",
    "Num Calls",
    "Instances",
    "Count",
    "Avg (ns)",
    "Med (ns)",
    "Min (ns)",
    "Max (ns)",
    "StdDev (ns)",
    "P90 (ns)",
    "P99 (ns)",
];

/// Per group (its naming cells), the `Total Time (ns)` of the row.
fn totals(table: &Table) -> BTreeMap<String, i128> {
    let total = column(table, "Total Time (ns)");
    let naming: Vec<usize> = (0..table.columns.len())
        .filter(|&c| !STATISTICS.contains(&table.columns[c].as_str()))
        .collect();
    let mut out = BTreeMap::new();
    for row in &table.rows {
        let key: Vec<String> = naming.iter().map(|&c| row[c].to_string()).collect();
        let previous = out.insert(key.join("\u{1f}"), int(&row[total]) as i128);
        assert!(previous.is_none(), "duplicate group {key:?}");
    }
    out
}

fn overlapping(trace: &Trace, report: Report, range: TimeRange) -> Table {
    compute_in(trace, report, Some(range), RangeRule::Overlapping).unwrap_or_else(|e| panic!("{e}"))
}

/// A 1 ms range inside streams' longest OS runtime call (a 349 ms `poll` on
/// one thread) that no other call of that name overlaps: the call, and only
/// it, lies across the whole range.
fn inside_the_longest_poll(trace: &Trace) -> (String, TimeRange) {
    let os = &trace.osrt.spans;
    let longest = (0..os.len())
        .filter(|&i| trace.osrt.event_class[i] == 27)
        .max_by_key(|&i| os.end(i) - os.start[i])
        .expect("streams has OS runtime calls");
    let name = trace.name(os.name[longest]).to_string();
    let (start, end) = (os.start[longest], os.end(longest));
    assert!(end - start > 100_000_000, "a long call: {}", end - start);
    let width = 1_000_000;
    let candidates = (1..10).map(|k| start + (end - start) * k / 10);
    let range = candidates
        .map(|from| TimeRange {
            start: from,
            end: from + width,
        })
        .find(|r| {
            (0..os.len()).all(|i| {
                i == longest
                    || os.name[i] != os.name[longest]
                    || os.end(i) <= r.start
                    || os.start[i] >= r.end
            })
        })
        .expect("a stretch of the call that no other call of its name overlaps");
    (name, range)
}

#[test]
fn a_range_inside_one_long_call_counts_it_only_when_overlapping() {
    let trace = load("streams.sqlite");
    let (name, range) = inside_the_longest_poll(&trace);
    let row_of = |table: &Table| -> Option<Vec<Cell>> {
        let n = column(table, "Name");
        table
            .rows
            .iter()
            .find(|r| r[n].to_string() == name)
            .cloned()
    };

    // Starting inside: the call started 100+ ms earlier, so it is not there.
    let starts = compute_in(
        &trace,
        Report::OsrtSum,
        Some(range),
        RangeRule::StartsInside,
    )
    .expect("osrt_sum takes every rule");
    assert_eq!(starts, compute(&trace, Report::OsrtSum, Some(range)));
    assert_eq!(row_of(&starts), None, "{name} starts before the range");

    // Overlapping: one call, for exactly the range's length.
    let clipped = overlapping(&trace, Report::OsrtSum, range);
    let row = row_of(&clipped).expect("the call overlaps the range");
    let length = range.end - range.start;
    assert_eq!(int(&row[column(&clipped, "Num Calls")]), 1);
    assert_eq!(int(&row[column(&clipped, "Total Time (ns)")]), length);
    assert_eq!(int(&row[column(&clipped, "Min (ns)")]), length);
    assert_eq!(int(&row[column(&clipped, "Max (ns)")]), length);
    assert_eq!(
        row[column(&clipped, "Avg (ns)")].to_string(),
        format!("{length}.0")
    );
}

#[test]
fn overlapping_over_everything_equals_the_whole_report() {
    for fixture in FIXTURES {
        let trace = load(fixture);
        let everything = TimeRange {
            start: i64::MIN,
            end: i64::MAX,
        };
        for report in Report::EVERY {
            let result = compute_in(&trace, report, Some(everything), RangeRule::Overlapping);
            if report.takes_rule(RangeRule::Overlapping) {
                assert_eq!(
                    result,
                    Ok(compute(&trace, report, None)),
                    "{fixture} {}",
                    report.name()
                );
            } else {
                assert_eq!(
                    result,
                    Err(UnsupportedRule {
                        report,
                        rule: RangeRule::Overlapping
                    })
                );
            }
        }
    }
}

#[test]
fn starts_inside_is_the_default_rule_and_unchanged() {
    for fixture in FIXTURES {
        let trace = load(fixture);
        let (first, last) = trace.info.time_range;
        let middle = first + (last - first) / 2;
        for range in [
            None,
            Some(TimeRange {
                start: first,
                end: middle,
            }),
            Some(TimeRange {
                start: middle,
                end: last + 1,
            }),
        ] {
            for report in Report::EVERY {
                assert_eq!(
                    compute_in(&trace, report, range, RangeRule::default()),
                    Ok(compute(&trace, report, range)),
                    "{fixture} {}",
                    report.name()
                );
            }
        }
    }
}

/// The viewer's panel shows these reports under either rule.
#[test]
fn every_panel_report_takes_both_rules() {
    for report in sightline::app::panels::range_stats::REPORTS {
        assert!(
            report.takes_rule(RangeRule::Overlapping),
            "{}",
            report.name()
        );
    }
}

/// Splits `[i64::MIN, i64::MAX)` at `cuts` and checks that the clipped totals
/// of the parts add up, per row, to the whole report's totals exactly, and
/// that every event that overlaps two parts is counted in both.
fn check_partition(trace: &Trace, fixture: &str, mut cuts: Vec<i64>) {
    cuts.sort_unstable();
    cuts.dedup();
    let mut bounds = vec![i64::MIN];
    bounds.extend(cuts);
    bounds.push(i64::MAX);
    for report in CLIPPED_TOTALS {
        let whole = totals(&compute(trace, report, None));
        let mut summed: BTreeMap<String, i128> = BTreeMap::new();
        for pair in bounds.windows(2) {
            let range = TimeRange {
                start: pair[0],
                end: pair[1],
            };
            for (key, total) in totals(&overlapping(trace, report, range)) {
                *summed.entry(key).or_default() += total;
            }
        }
        assert_eq!(
            summed,
            whole,
            "{fixture} {} cut at {bounds:?}",
            report.name()
        );
    }
    // Counts: an event cut by a boundary counts once on each side, so the
    // parts' calls are the whole's plus the cuts through calls.
    let api = &trace.cuda_api.spans;
    let crossings: i64 = bounds[1..bounds.len() - 1]
        .iter()
        .map(|&b| {
            (0..api.len())
                .filter(|&i| api.start[i] < b && api.end(i) > b)
                .count() as i64
        })
        .sum();
    let calls = |table: &Table| -> i64 {
        let n = column(table, "Num Calls");
        table.rows.iter().map(|r| int(&r[n])).sum()
    };
    let parts: i64 = bounds
        .windows(2)
        .map(|p| {
            calls(&overlapping(
                trace,
                Report::CudaApiSum,
                TimeRange {
                    start: p[0],
                    end: p[1],
                },
            ))
        })
        .sum();
    assert_eq!(parts, api.len() as i64 + crossings, "{fixture}");
}

#[test]
fn clipped_totals_add_up_when_cut_at_event_boundaries() {
    for fixture in FIXTURES {
        let trace = load(fixture);
        let k = &trace.kernels.spans;
        let (first, last) = trace.info.time_range;
        // Cuts on a kernel's start and end (boundaries that touch events),
        // one a nanosecond inside it, and the session's own ends.
        let mut cuts = vec![first, last, last + 1];
        if !k.is_empty() {
            let i = k.len() / 2;
            cuts.extend([k.start[i], k.start[i] + 1, k.end(i)]);
        }
        check_partition(&trace, fixture, cuts);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Random cuts anywhere in the session, and a little beyond it.
    #[test]
    fn clipped_totals_add_up_over_any_partition(
        fixture in 0..FIXTURES.len(),
        fractions in proptest::collection::vec(-0.05f64..1.05, 1..6),
    ) {
        let trace = load(FIXTURES[fixture]);
        let (first, last) = trace.info.time_range;
        let span = (last - first) as f64;
        let cuts = fractions
            .iter()
            .map(|f| first + (span * f) as i64)
            .collect();
        check_partition(&trace, FIXTURES[fixture], cuts);
    }
}

/// A launch counts under `Overlapping` when its API call overlaps the range;
/// its launch times are the whole launch's (not clipped).
#[test]
fn kernel_launches_count_by_their_call_and_keep_their_times() {
    let trace = load("sync_timing.sqlite");
    let api = &trace.cuda_api.spans;
    let launch = (0..api.len())
        .find(|&i| {
            trace.name(api.name[i]).starts_with("cudaLaunchKernel") && api.end(i) - api.start[i] > 2
        })
        .expect("a launch call");
    // One nanosecond in the middle of the call: it starts before, ends after.
    let mid = api.start[launch] + (api.end(launch) - api.start[launch]) / 2;
    let range = TimeRange {
        start: mid,
        end: mid + 1,
    };
    let exec = overlapping(&trace, Report::CudaKernExecSum, range);
    assert_eq!(exec.rows.len(), 1, "{:?}", exec.rows);
    let a_max = int(&exec.rows[0][column(&exec, "AMax (ns)")]);
    assert_eq!(a_max, api.end(launch) - api.start[launch]);
    assert!(
        compute(&trace, Report::CudaKernExecSum, Some(range))
            .rows
            .is_empty()
    );
}
