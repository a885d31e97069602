//! The engine's reports give, rank by rank, the numbers of `sightline stats` on that rank
//! alone and of nsys's own `nsys stats` CSVs (recorded with the fixtures), whether the job
//! is read from its `.sqlite` reports or from its Parquet export; with a memory limit too.

mod common;

use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;

use common::{engine_stats, export, reports};
use sightline::analysis::{RangeRule, Report, compute_in};

const REPORTS: [(&str, Report); 4] = [
    ("cuda_gpu_kern_sum", Report::CudaGpuKernSum),
    ("cuda_api_sum", Report::CudaApiSum),
    ("nvtx_sum", Report::NvtxSum),
    ("osrt_sum", Report::OsrtSum),
];

/// The CSV tables of a multi-report CSV output, in order (blank lines between).
fn tables(csv: &str) -> Vec<Vec<String>> {
    csv.split("\n\n")
        .map(|t| t.lines().map(String::from).collect())
        .collect()
}

/// Rank `rank`'s rows of a table with a first Rank column, without it; ties on Total may
/// be ordered otherwise (nsys breaks some by string id), so as a set.
fn rank_rows(table: &[String], rank: u32) -> BTreeSet<String> {
    let prefix = format!("{rank},");
    table
        .iter()
        .skip(1)
        .filter_map(|line| line.strip_prefix(&prefix).map(String::from))
        .collect()
}

fn rows_of(csv: &str) -> BTreeSet<String> {
    csv.lines().skip(1).map(String::from).collect()
}

/// Each report of `REPORTS` on the engine over `inputs`, one run each (an empty table prints
/// nothing, so several in one output could not be told apart).
fn engine_tables(inputs: &[std::path::PathBuf], extra: &[&str]) -> Vec<Vec<String>> {
    REPORTS
        .iter()
        .map(|(name, _)| {
            let csv = engine_stats(inputs, name, extra);
            csv.lines().map(String::from).collect()
        })
        .collect()
}

fn same_as_each_rank_alone(job: &str, tables: &[Vec<String>]) {
    each_ranks_own(&reports(job), Some(&common::jobs().join(job)), tables);
}

/// Each rank's rows of `tables` are those of `sightline stats` on its report alone (rank N the
/// Nth of `paths`), and nsys's own where `nsys_dir` has its CSVs.
fn each_ranks_own(
    paths: &[std::path::PathBuf],
    nsys_dir: Option<&std::path::Path>,
    tables: &[Vec<String>],
) {
    let job = paths.first().and_then(|p| p.parent()).unwrap().display();
    for (rank, path) in paths.iter().enumerate() {
        let trace = sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false)).unwrap();
        for ((name, report), table) in REPORTS.iter().zip(tables) {
            let alone = compute_in(&trace, *report, None, RangeRule::StartsInside).unwrap();
            let engine = rank_rows(table, rank as u32);
            assert!(
                !engine.is_empty() || alone.rows.is_empty(),
                "{job} rank {rank} {name}: rows"
            );
            assert_eq!(engine, rows_of(&alone.to_csv()), "{job} rank {rank} {name}");
            if let (Some(header), Some(want)) = (table.first(), alone.to_csv().lines().next()) {
                assert_eq!(
                    header.strip_prefix("Rank,"),
                    Some(want),
                    "{name}: the columns of the report alone, after Rank"
                );
            }
            // nsys's own numbers, where it wrote the report.
            let nsys = nsys_dir.map(|d| d.join(format!("stats/rank{rank}_{name}.csv")));
            if let Some(Ok(text)) = nsys.map(std::fs::read_to_string) {
                assert_eq!(engine, rows_of(&text), "{job} rank {rank} {name} vs nsys");
            }
        }
    }
}

#[test]
fn the_reports_of_a_job_from_its_sqlite_files_are_each_ranks_own() {
    for job in ["balanced", "straggler"] {
        same_as_each_rank_alone(job, &engine_tables(&reports(job), &[]));
    }
}

#[test]
fn the_reports_of_a_parquet_job_folder_are_each_ranks_own_within_a_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let folder = export("straggler", dir.path());
    let tables = engine_tables(std::slice::from_ref(&folder), &[]);
    same_as_each_rank_alone("straggler", &tables);
    let limited = engine_tables(&[folder], &["--memory-limit", "64M"]);
    assert_eq!(limited, tables, "the same answers under a memory limit");
}

/// A job of more ranks than one query of the engine's summaries holds (they are asked a few
/// ranks at a time, so that exact medians fit in memory): every rank's rows are still its own,
/// once each, in rank order. The ranks are `synth --ranks` copies of a recorded rank, one
/// slowed, on clocks spread over 3 ms.
#[test]
fn a_job_of_more_ranks_than_one_query_holds_gives_each_rank_its_own_rows() {
    let ranks = common::MANY_RANKS;
    let dir = tempfile::tempdir().unwrap();
    let (paths, folder) = common::many_ranks(dir.path());
    let tables = engine_tables(&[folder], &[]);
    each_ranks_own(&paths, None, &tables);
    for (table, (name, _)) in tables.iter().zip(REPORTS) {
        let order: Vec<i64> = ints(table, 0);
        assert!(order.is_sorted(), "{name}: rank order");
        let seen: BTreeSet<i64> = order.iter().copied().collect();
        assert_eq!(seen.len(), ranks as usize, "{name}: every rank");
        // Once each: a rank's rows are as many as its report alone gives.
        let alone = |r: i64| rank_rows(table, r as u32).len();
        assert_eq!(
            order.len(),
            seen.iter().map(|&r| alone(r)).sum::<usize>(),
            "{name}"
        );
    }
}

/// Column `c` of each data row of a CSV table, as integers.
fn ints(table: &[String], c: usize) -> Vec<i64> {
    table[1..]
        .iter()
        .map(|l| l.split(',').nth(c).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn the_rank_spread_sums_each_ranks_kernels_as_nsys_and_finds_the_straggler() {
    let output = engine_stats(&reports("straggler"), "rank_spread,nccl_sum", &[]);
    let tables = tables(&output);
    let spread = &tables[0];
    assert_eq!(spread.len(), 5, "a header and four ranks: {spread:?}");
    // nsys's own kernel sums per rank.
    let mut nsys_time = Vec::new();
    let mut nsys_count = Vec::new();
    for rank in 0..4 {
        let path = common::jobs().join(format!("straggler/stats/rank{rank}_cuda_gpu_kern_sum.csv"));
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<String> = text.lines().map(String::from).collect();
        nsys_time.push(ints(&lines, 1).iter().sum::<i64>());
        nsys_count.push(ints(&lines, 2).iter().sum::<i64>());
    }
    assert_eq!(ints(spread, 2), nsys_time, "GPU time per rank: {spread:?}");
    assert_eq!(ints(spread, 1), nsys_count, "kernels per rank");
    // No NCCL in this job (gloo): all compute, and the busiest rank is above the median.
    assert_eq!(ints(spread, 3), vec![0; 4], "NCCL time");
    assert!(
        tables.len() == 1,
        "nccl_sum: empty, so nothing printed: {tables:?}"
    );
    let busiest = (0..4).max_by_key(|&r| nsys_time[r]).unwrap();
    let above: Vec<usize> = (1..5)
        .filter(|&row| {
            !spread[row].ends_with(",-") && !spread[row].split(',').nth(5).unwrap().starts_with('-')
        })
        .map(|row| row - 1)
        .collect();
    assert!(
        above.contains(&busiest),
        "rank {busiest} above the median: {spread:?}"
    );
}

/// `(start, duration, in-use text)` rows of a CSV with those columns at `at`.
fn util_rows(csv: &str, at: (usize, usize, usize)) -> Vec<(i64, i64, String)> {
    csv.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[at.0].parse().unwrap(),
                f[at.1].parse().unwrap(),
                f[at.2].to_string(),
            )
        })
        .collect()
}

#[test]
fn the_gpu_use_map_of_a_rank_alone_has_nsys_gpu_time_util_chunks() {
    for (rank, path) in reports("straggler").iter().enumerate() {
        let map = engine_stats(std::slice::from_ref(path), "gpu_time_util_map", &[]);
        // Rank,Chunk,Start (ns),Duration (ns),In-Use (%)
        let chunks = util_rows(&map, (2, 3, 4));
        assert_eq!(chunks.len(), 30, "rank {rank}: 30 chunks: {map}");
        let chunk = chunks[0].1;
        let nsys_csv = std::fs::read_to_string(
            common::jobs().join(format!("straggler/stats/rank{rank}_gpu_time_util.csv")),
        )
        .unwrap();
        // Row#,In-Use (%),Duration (ns),Start (ns),PID,Device ID,Context ID
        let nsys = util_rows(&nsys_csv, (3, 2, 1));
        assert!(!nsys.is_empty());
        for (start, duration, in_use) in &nsys {
            let inside: Vec<&(i64, i64, String)> = (chunks.iter())
                .filter(|c| c.0 >= *start && c.0 < start + duration)
                .collect();
            assert_eq!(
                inside.iter().map(|c| c.1).sum::<i64>(),
                *duration,
                "rank {rank}: nsys's stretch at {start} is whole chunks of the map"
            );
            if *duration == chunk {
                assert_eq!(&inside[0].2, in_use, "rank {rank}: chunk at {start}");
            }
        }
        // And every chunk under nsys's 50 % lies in one of nsys's rows.
        for (start, _, in_use) in &chunks {
            if in_use.parse::<f64>().unwrap() < 50.0 {
                assert!(
                    nsys.iter().any(|n| *start >= n.0 && *start < n.0 + n.1),
                    "rank {rank}: the chunk at {start} ({in_use} %) is under 50 % for nsys too"
                );
            }
        }
    }
}
