//! `sightline analyze` over a job: every rank's findings exactly as for its report alone,
//! behind its rank, then the cross-rank straggler.

mod common;

use std::process::Command;

fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn a_jobs_json_is_each_reports_findings_with_its_rank_then_the_straggler() {
    let dir = common::fixture("jobs/straggler");
    let job = stdout_of(&["analyze", "--format", "json", dir.to_str().expect("path")]);
    let lines: Vec<serde_json::Value> = job
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let mut at = 0;
    for rank in 0..4 {
        let file = dir.join(format!("rank{rank}.sqlite"));
        let single = stdout_of(&["analyze", "--format", "json", file.to_str().expect("path")]);
        for line in single.lines() {
            let mut expected: serde_json::Value = serde_json::from_str(line).expect("JSON");
            expected["rank"] = serde_json::Value::String(rank.to_string());
            assert_eq!(lines[at], expected, "rank {rank}'s finding {at}");
            at += 1;
        }
    }
    assert_eq!(
        lines.len(),
        at + 1,
        "one cross-rank line after the ranks' findings"
    );
    let straggler = &lines[at];
    assert_eq!(straggler["kind"], "straggler");
    assert_eq!(straggler["rank"], "2");
    assert_eq!(straggler["range"], "forward");
    assert_eq!(straggler["iterations"], serde_json::json!([10, 19]));
    let message = straggler["message"].as_str().expect("a message");
    for other in ["rank 0", "rank 1", "rank 3"] {
        assert!(message.contains(other), "{message}");
    }
    let waits = straggler["waits"].as_array().expect("waits");
    assert_eq!(waits.len(), 3);
    for w in waits {
        assert_eq!(w["per_iteration"].as_array().map(Vec::len), Some(10));
    }
}

#[test]
fn a_balanced_jobs_table_says_there_is_no_straggler() {
    let dir = common::fixture("jobs/balanced");
    let text = stdout_of(&["analyze", dir.to_str().expect("path")]);
    assert!(text.contains("no straggler"), "{text}");
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.trim_start().starts_with("Rank")),
        "{text}"
    );
}

/// nsys analyze rules over a job: each rank's rows are nsys's rows for that rank (its own
/// `nsys analyze` CSV) behind its rank, their timestamps on the job clock.
#[test]
fn a_jobs_rules_are_nsys_rules_for_each_rank_on_the_job_clock() {
    let out_dir = tempfile::tempdir().expect("a temporary folder");
    let rules = [
        "cuda_api_sync",
        "gpu_time_util",
        "gpu_gaps",
        "cuda_memcpy_async",
    ];
    for job in ["balanced", "straggler"] {
        let dir = common::fixture(&format!("jobs/{job}"));
        let offsets = common::job_offsets(&dir);
        let prefix = out_dir.path().join(job);
        stdout_of(&[
            "analyze",
            dir.to_str().expect("path"),
            "--rule",
            &rules.join(","),
            "--output",
            prefix.to_str().expect("path"),
        ]);
        for rule in rules {
            let ours = std::fs::read_to_string(format!("{}_{rule}.csv", prefix.display()))
                .expect("a file per rule");
            let rows: Vec<Vec<String>> = ours.lines().skip(1).map(common::csv_fields).collect();
            let mut expected_rows = 0;
            for &(rank, offset) in &offsets {
                let csv = std::fs::read_to_string(dir.join(format!("stats/rank{rank}_{rule}.csv")))
                    .expect("nsys's CSV");
                let expected = common::nsys_rows_on_job_clock(&csv, rank, offset);
                let actual: Vec<Vec<String>> = (rows.iter())
                    .filter(|r| r[0] == rank.to_string())
                    .cloned()
                    .collect();
                assert_eq!(expected, actual, "{job} rank {rank} {rule}");
                expected_rows += expected.len();
            }
            assert_eq!(
                rows.len(),
                expected_rows,
                "{job} {rule}: nothing else printed"
            );
        }
    }
}

/// `--range` over a job is on the job clock: each rank's findings are those of its report
/// alone over the same span moved onto its own clock.
#[test]
fn a_jobs_range_is_on_the_job_clock() {
    let dir = common::fixture("jobs/straggler");
    let offsets = common::job_offsets(&dir);
    // A span well inside the recording: 150 ms..400 ms of the job clock.
    let (start, end) = (150_000_000i64, 400_000_000i64);
    let first_start: i64 = {
        let conn = rusqlite::Connection::open(dir.join("rank0.sqlite")).expect("opens");
        conn.query_row(
            "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL",
            [],
            |r| r.get(0),
        )
        .expect("kernels")
    };
    let (start, end) = (first_start + start, first_start + end);
    let job = stdout_of(&[
        "analyze",
        "--format",
        "json",
        dir.to_str().expect("path"),
        "--range",
        &format!("{start}:{end}"),
    ]);
    let lines: Vec<serde_json::Value> = (job.lines())
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .filter(|v: &serde_json::Value| v["kind"] != "straggler")
        .collect();
    let mut expected = Vec::new();
    for &(rank, offset) in &offsets {
        let file = dir.join(format!("rank{rank}.sqlite"));
        let own = format!("{}:{}", start - offset, end - offset);
        let single = stdout_of(&[
            "analyze",
            "--format",
            "json",
            file.to_str().expect("path"),
            "--range",
            &own,
        ]);
        for line in single.lines() {
            let mut v: serde_json::Value = serde_json::from_str(line).expect("JSON");
            v["rank"] = serde_json::Value::String(rank.to_string());
            expected.push(v);
        }
    }
    assert!(!lines.is_empty(), "findings in the span");
    assert_eq!(lines, expected);
    let whole = stdout_of(&["analyze", "--format", "json", dir.to_str().expect("path")]);
    // Instances, not lines: an entry groups a loop's iterations.
    let instances = |out: &str| -> u64 {
        (out.lines())
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
            .map(|v| v["count"].as_u64().unwrap_or(1))
            .sum()
    };
    assert!(
        instances(&whole) > instances(&job),
        "the span leaves findings out"
    );
}

/// `--align-on` puts the ranks on a shared event's clock and says so; a missing event is one
/// clear line and the bad-input exit code.
#[test]
fn a_job_aligns_on_a_kernel_or_a_range_from_the_command_line() {
    let dir = common::fixture("jobs/straggler");
    let path = dir.to_str().expect("path");
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args([
            "stats",
            path,
            "--report",
            "nvtx_sum",
            "--align-on",
            "range:backward:6",
        ])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("aligned on the end of instance 6 of NVTX range 'backward'"),
        "{err}"
    );
    assert!(err.contains("shared event"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["analyze", path, "--align-on", "kernel:no_such_kernel:2"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "bad input");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no_such_kernel"), "{err}");
    let file = dir.join("rank0.sqlite");
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args([
            "analyze",
            file.to_str().expect("path"),
            "--align-on",
            "range:backward",
        ])
        .output()
        .expect("runs");
    assert!(!out.status.success(), "one report has nothing to align");
}

/// The ranks that wait for a straggler wait in OS calls (DDP's all-reduce inside `backward`,
/// `pthread_cond_wait`), not in CPU work of their own: only the straggler is told it is
/// CPU-bound, and the others' idle time in those iterations is mostly an OS wait. (Every rank
/// was told "cpu-bound: prepare the next batch on another thread" before.)
#[test]
fn only_the_straggler_is_cpu_bound_the_ranks_waiting_for_it_wait() {
    let dir = common::fixture("jobs/straggler");
    let out = stdout_of(&["analyze", "--format", "json", dir.to_str().expect("path")]);
    let findings: Vec<serde_json::Value> = (out.lines())
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let rank_of = |v: &serde_json::Value| v["rank"].as_str().map(String::from);
    let straggler = (findings.iter())
        .find(|v| v["kind"] == "straggler")
        .and_then(rank_of)
        .expect("the job has a straggler");
    let cpu_bound: Vec<String> = (findings.iter())
        .filter(|v| v["kind"] == "cpu-bound")
        .filter_map(rank_of)
        .collect();
    assert_eq!(cpu_bound, vec![straggler.clone()], "{out}");
    // A waiting rank's idle time over the straggler's slow iterations: mostly OS waits.
    let slow = (findings.iter())
        .find(|v| v["kind"] == "cpu-bound")
        .expect("the straggler's finding");
    let (from, to) = (
        slow["start"].as_i64().expect("start"),
        slow["end"].as_i64().expect("end"),
    );
    for rank in 0..4 {
        if rank.to_string() == straggler {
            continue;
        }
        let file = dir.join(format!("rank{rank}.sqlite"));
        let table = stdout_of(&[
            "stats",
            file.to_str().expect("path"),
            "--report",
            "gpu_idle_sum",
            "--format",
            "csv",
            "--range",
            &format!("{}:{}", from - 30_000_000, to + 30_000_000),
        ]);
        let top = table.lines().nth(1).unwrap_or_default().to_string();
        assert!(top.contains(",os-wait,"), "rank {rank}: {table}");
    }
}
