//! `sightline stats` over a job of reports (one per rank): each rank's rows are those of its
//! report alone behind a `Rank` column, trace reports' timestamps on the job clock; checked
//! against the CSVs nsys wrote for each rank of the recorded 4-rank jobs.

mod common;

use std::process::{Command, Output};

fn sightline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout_of(args: &[&str]) -> String {
    let out = sightline(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

const NSYS_REPORTS: [&str; 12] = [
    "cuda_api_sum",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "nvtx_sum",
    "osrt_sum",
    "nvtx_pushpop_trace",
    "cuda_gpu_trace",
    "cuda_api_gpu_sum",
    "cuda_kern_exec_sum",
    "nvtx_gpu_proj_sum",
    "nvtx_kern_sum",
];

#[test]
fn every_ranks_rows_are_nsys_rows_for_that_rank_on_the_job_clock() {
    let mut failures = Vec::new();
    for job in ["balanced", "straggler"] {
        let dir = common::fixture(&format!("jobs/{job}"));
        let offsets = common::job_offsets(&dir);
        assert!(offsets.iter().any(|o| o.1 > 0), "the ranks started apart");
        for report in NSYS_REPORTS {
            let out = stdout_of(&[
                "stats",
                dir.to_str().unwrap(),
                "--report",
                report,
                "--format",
                "csv",
            ]);
            let rows: Vec<Vec<String>> = out.lines().skip(1).map(common::csv_fields).collect();
            for &(rank, offset) in &offsets {
                let csv =
                    std::fs::read_to_string(dir.join(format!("stats/rank{rank}_{report}.csv")))
                        .unwrap();
                let expected = common::nsys_rows_on_job_clock(&csv, rank, offset);
                let actual: Vec<Vec<String>> = rows
                    .iter()
                    .filter(|r| r[0] == rank.to_string())
                    .cloned()
                    .collect();
                if expected != actual {
                    let at = expected.iter().zip(&actual).position(|(e, a)| e != a);
                    failures.push(format!(
                        "{job} rank {rank} {report}: {} rows expected, {} printed; first difference at {at:?}: {:?} vs {:?}",
                        expected.len(),
                        actual.len(),
                        at.and_then(|i| expected.get(i)),
                        at.and_then(|i| actual.get(i)),
                    ));
                }
            }
            let ranks_in_order = rows.windows(2).all(|w| w[0][0] <= w[1][0]);
            assert!(
                ranks_in_order,
                "{job} {report}: rows grouped by rank, in rank order"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An aligned table's rows (under its dashed rule), each as its words.
fn table_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("----"))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn a_jobs_summary_is_each_reports_summary_behind_its_rank() {
    let dir = common::fixture("jobs/straggler");
    let files: Vec<String> = [2, 0, 3, 1]
        .map(|r| {
            dir.join(format!("rank{r}.sqlite"))
                .to_string_lossy()
                .into_owned()
        })
        .to_vec();
    for report in ["cuda_gpu_kern_sum", "nvtx_sum", "osrt_sum", "cuda_api_sum"] {
        let mut job_args = vec!["stats", "--report", report, "--format", "csv"];
        job_args.extend(files.iter().map(String::as_str));
        let job = stdout_of(&job_args);
        let mut expected = String::new();
        for rank in 0..4 {
            let file = dir.join(format!("rank{rank}.sqlite"));
            let single = stdout_of(&[
                "stats",
                file.to_str().unwrap(),
                "--report",
                report,
                "--format",
                "csv",
            ]);
            let mut lines = single.lines();
            let header = lines.next().unwrap();
            if expected.is_empty() {
                expected = format!("Rank,{header}\n");
            }
            for line in lines {
                expected += &format!("{rank},{line}\n");
            }
        }
        assert_eq!(job, expected, "{report} as CSV");

        // The table: the same rows, each behind its rank (only the alignment may differ).
        let table = stdout_of(&["stats", "--report", report, dir.to_str().unwrap()]);
        let job_rows = table_rows(&table);
        let mut single_rows: Vec<Vec<String>> = Vec::new();
        for rank in 0..4 {
            let file = dir.join(format!("rank{rank}.sqlite"));
            let single = stdout_of(&["stats", file.to_str().unwrap(), "--report", report]);
            single_rows.extend(
                table_rows(&single)
                    .into_iter()
                    .map(|cells| std::iter::once(rank.to_string()).chain(cells).collect()),
            );
        }
        assert_eq!(job_rows, single_rows, "{report} as a table");
    }
}

#[test]
fn bad_jobs_get_one_line_naming_the_problem() {
    let empty = tempfile::tempdir().unwrap();
    let out = sightline(&["stats", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no .sqlite report"), "{err}");

    let broken = empty.path().join("rank1.sqlite");
    std::fs::write(&broken, b"not a report").unwrap();
    let good = common::fixture("jobs/balanced/rank0.sqlite");
    let out = sightline(&["stats", good.to_str().unwrap(), broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rank1.sqlite"),
        "the failing report is named: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");

    // One rank in a folder is a job of one; a report without its session start: unaligned, said.
    let one = tempfile::tempdir().unwrap();
    std::fs::copy(&good, one.path().join("rank0.sqlite")).unwrap();
    let out = sightline(&[
        "stats",
        one.path().to_str().unwrap(),
        "--report",
        "nvtx_sum",
        "--format",
        "csv",
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Rank,"));
    let other = one.path().join("rank1.sqlite");
    std::fs::copy(&good, &other).unwrap();
    let conn = rusqlite::Connection::open(&other).unwrap();
    conn.execute("DELETE FROM TARGET_INFO_SESSION_START_TIME", [])
        .unwrap();
    drop(conn);
    let out = sightline(&[
        "stats",
        one.path().to_str().unwrap(),
        "--report",
        "nvtx_sum",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not aligned") && err.contains("rank1.sqlite"),
        "{err}"
    );
}

#[test]
fn the_job_clock_is_said_once_and_files_get_the_rank_column() {
    let dir = common::fixture("jobs/balanced");
    let out_dir = tempfile::tempdir().expect("a folder");
    let prefix = out_dir.path().join("job");
    let out = sightline(&[
        "stats",
        dir.to_str().expect("path"),
        "--report",
        "nvtx_sum,cuda_gpu_trace",
        "--output",
        prefix.to_str().expect("path"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("aligned on each report's UTC session start")
            .count(),
        1,
        "{err}"
    );
    for rank in 0..4 {
        assert_eq!(
            err.matches(&format!("rank {rank} (rank{rank}.sqlite): +"))
                .count(),
            1,
            "{err}"
        );
    }
    for stem in ["nvtx_sum", "cuda_gpu_trace"] {
        let written = std::fs::read_to_string(out_dir.path().join(format!("job_{stem}.csv")))
            .expect("written");
        assert!(written.starts_with("Rank,"), "{stem}");
        let ranks: std::collections::BTreeSet<&str> = written
            .lines()
            .skip(1)
            .filter_map(|l| l.split(',').next())
            .collect();
        assert_eq!(
            ranks.into_iter().collect::<Vec<_>>(),
            ["0", "1", "2", "3"],
            "{stem}"
        );
    }
}
