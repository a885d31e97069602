//! Time-range semantics: an event belongs to `[start, end)` when it starts in it.

mod common;
use common::load;

use std::collections::BTreeMap;
use std::path::Path;

use sightline::analysis::{Cell, Report, Table, compute};
use sightline::model::{NvtxKind, TimeRange, Trace};

const FIXTURES: [&str; 3] = ["sync_timing.sqlite", "streams.sqlite", "torch_work.sqlite"];
const KEY_COLUMNS: [&str; 10] = [
    "Name",
    "Operation",
    "Category",
    "Style",
    "Range",
    "PID",
    "TID",
    "DevId",
    "API Name",
    "Kernel Name",
];
const ADDITIVE_COLUMNS: [&str; 5] = [
    "Total Time (ns)",
    "Num Calls",
    "Instances",
    "Count",
    "QCount",
];

/// Per group (its key cells as text): the additive columns.
fn additive(table: &Table) -> BTreeMap<String, Vec<i64>> {
    let keys: Vec<usize> = (0..table.columns.len())
        .filter(|&c| KEY_COLUMNS.contains(&table.columns[c].as_str()))
        .collect();
    let sums: Vec<usize> = (0..table.columns.len())
        .filter(|&c| ADDITIVE_COLUMNS.contains(&table.columns[c].as_str()))
        .collect();
    assert!(!keys.is_empty() && !sums.is_empty(), "{:?}", table.columns);
    let mut out = BTreeMap::new();
    for row in &table.rows {
        let key: Vec<String> = keys.iter().map(|&c| row[c].to_string()).collect();
        let values = sums
            .iter()
            .map(|&c| match row[c] {
                Cell::Int(v) => v,
                ref other => panic!("column {} is not an integer: {other:?}", table.columns[c]),
            })
            .collect();
        assert!(
            out.insert(key.join("\u{1f}"), values).is_none(),
            "duplicate group"
        );
    }
    out
}

#[test]
fn a_range_covering_everything_equals_no_range() {
    for fixture in FIXTURES {
        let trace = load(fixture);
        let (first, last) = trace.info.time_range;
        for range in [
            TimeRange {
                start: i64::MIN,
                end: i64::MAX,
            },
            TimeRange {
                start: first,
                end: last + 1,
            },
        ] {
            for report in Report::ALL {
                let whole = compute(&trace, report, None);
                assert_eq!(
                    compute(&trace, report, Some(range)),
                    whole,
                    "{fixture} {}",
                    report.name()
                );
            }
        }
    }
}

#[test]
fn disjoint_ranges_partition_counts_and_totals() {
    for fixture in FIXTURES {
        let trace = load(fixture);
        let (first, last) = trace.info.time_range;
        let step = (last - first) / 7;
        let mut cuts = vec![i64::MIN];
        cuts.extend((1..7).map(|k| first + k * step));
        // An uneven cut too, and one at a single nanosecond's distance.
        cuts.push(first + 6 * step + 1);
        cuts.push(i64::MAX);
        for report in Report::ALL {
            if report == Report::CudaGpuMemSizeSum {
                continue; // its totals are printed in rounded megabytes; Count is checked via mem_time_sum
            }
            let whole = additive(&compute(&trace, report, None));
            let mut summed: BTreeMap<String, Vec<i64>> = BTreeMap::new();
            for pair in cuts.windows(2) {
                let part = compute(
                    &trace,
                    report,
                    Some(TimeRange {
                        start: pair[0],
                        end: pair[1],
                    }),
                );
                for (key, values) in additive(&part) {
                    let entry = summed.entry(key).or_insert_with(|| vec![0; values.len()]);
                    for (sum, v) in entry.iter_mut().zip(values) {
                        *sum += v;
                    }
                }
            }
            assert_eq!(summed, whole, "{fixture} {}", report.name());
        }
    }
}

#[test]
fn empty_ranges_give_no_rows() {
    let trace = load("streams.sqlite");
    let (first, last) = trace.info.time_range;
    for range in [
        TimeRange {
            start: first - 1000,
            end: first,
        },
        TimeRange {
            start: last + 1,
            end: last + 1000,
        },
        TimeRange { start: 50, end: 50 },
        TimeRange { start: 90, end: 10 },
    ] {
        for report in Report::ALL {
            let table = compute(&trace, report, Some(range));
            assert!(table.rows.is_empty(), "{} {range:?}", report.name());
            assert!(!table.columns.is_empty());
            assert_eq!(table.to_csv(), "");
        }
    }
}

#[test]
fn an_empty_trace_gives_no_rows() {
    let trace = Trace::default();
    for report in Report::ALL {
        assert!(compute(&trace, report, None).rows.is_empty());
        assert!(
            compute(&trace, report, Some(TimeRange { start: 0, end: 10 }))
                .rows
                .is_empty()
        );
    }
}

/// The streams program launches `tiny` 20000 times from the main thread inside
/// the push/pop range "tiny-kernels", while two workers run their own loops.
#[test]
fn the_span_of_one_nvtx_range() {
    let trace = load("streams.sqlite");
    let tiny = trace
        .strings
        .find("tiny-kernels")
        .expect("fixture has the range");
    let i = (0..trace.nvtx.spans.len())
        .find(|&i| trace.nvtx.spans.name[i] == tiny && trace.nvtx.kind[i] == NvtxKind::PushPop)
        .expect("fixture has the range");
    let (start, end) = (trace.nvtx.spans.start[i], trace.nvtx.spans.end(i));
    let range = Some(TimeRange { start, end });

    // Every launch of `tiny` happened in the range: as many as nsys counted in the whole trace.
    let reference = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/stats/streams_cuda_gpu_kern_sum.csv"),
    )
    .expect("reference CSV");
    let instances = reference
        .lines()
        .find(|l| l.ends_with(",tiny(int *)"))
        .and_then(|l| l.split(',').nth(2))
        .expect("tiny in the reference");
    let exec = compute(&trace, Report::CudaKernExecSum, range);
    let tiny_rows: Vec<_> = exec
        .rows
        .iter()
        .filter(|row| row.last().map(Cell::to_string).as_deref() == Some("tiny(int *)"))
        .collect();
    assert_eq!(tiny_rows.len(), 1);
    assert_eq!(tiny_rows[0][3].to_string(), instances);

    // The range itself is in; ranges that started earlier (whole-run) are not.
    let nvtx = compute(&trace, Report::NvtxSum, range);
    let row = nvtx
        .rows
        .iter()
        .find(|row| row[9].to_string() == ":tiny-kernels")
        .expect("the range counts itself");
    assert_eq!(row[1], Cell::Int(end - start));
    assert_eq!(row[2], Cell::Int(1));
    assert_eq!(row[8].to_string(), "PushPop");
    assert!(
        !nvtx
            .rows
            .iter()
            .any(|row| row[9].to_string() == ":whole-run")
    );
}

/// The reports beyond the default eight: a range covering everything equals no
/// range, an empty trace or range gives no rows, and the trace reports' rows
/// are partitioned by disjoint ranges (each row in exactly one part).
#[test]
fn every_report_respects_ranges() {
    for fixture in FIXTURES {
        let trace = load(fixture);
        let (first, last) = trace.info.time_range;
        let everything = TimeRange {
            start: first,
            end: last + 1,
        };
        let middle = first + (last - first) / 2;
        for report in Report::EVERY {
            let whole = compute(&trace, report, None);
            assert_eq!(
                compute(&trace, report, Some(everything)),
                whole,
                "{fixture} {}",
                report.name()
            );
            let nothing = TimeRange {
                start: last + 1,
                end: last + 1000,
            };
            assert!(compute(&trace, report, Some(nothing)).rows.is_empty());
            assert!(compute(&Trace::default(), report, None).rows.is_empty());
        }
        for report in [
            Report::CudaGpuTrace,
            Report::CudaApiTrace,
            Report::CudaKernExecTrace,
            Report::NvtxGpuProjTrace,
            Report::NvtxPushpopTrace,
        ] {
            let text_rows = |range| -> Vec<String> {
                compute(&trace, report, Some(range))
                    .rows
                    .iter()
                    .map(|row| format!("{row:?}"))
                    .collect()
            };
            let mut parts = text_rows(TimeRange {
                start: first,
                end: middle,
            });
            parts.extend(text_rows(TimeRange {
                start: middle,
                end: last + 1,
            }));
            let mut whole = text_rows(everything);
            parts.sort();
            whole.sort();
            // Nesting columns (Lvl, ParentId, ...) are the whole trace's in
            // every part, so the rows are equal as they are.
            assert_eq!(parts, whole, "{fixture} {}", report.name());
        }
    }
}
