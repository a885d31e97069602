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
