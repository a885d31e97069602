//! `sightline analyze` as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn analyze(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("analyze")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn reference(name: &str) -> String {
    std::fs::read_to_string(fixtures().join("stats").join(name)).expect("reference CSV")
}

#[test]
fn rule_csv_to_stdout_is_the_nsys_csv() {
    let file = fixtures().join("sync_timing.sqlite");
    let out = analyze(&[
        file.to_str().unwrap(),
        "--rule",
        "cuda_api_sync",
        "--format",
        "csv",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        reference("sync_timing_cuda_api_sync.csv")
    );
}

#[test]
fn output_writes_one_file_per_rule_empty_ones_too() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prefix = dir.path().join("run");
    let file = fixtures().join("streams.sqlite");
    let rules = [
        "cuda_api_sync",
        "cuda_memcpy_async",
        "cuda_memcpy_sync",
        "cuda_memset_sync",
        "dx12_mem_ops",
        "gpu_gaps",
        "gpu_time_util",
    ];
    let out = analyze(&[
        file.to_str().unwrap(),
        "--rule",
        &rules.join(","),
        "--output",
        prefix.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for rule in rules {
        let written =
            std::fs::read_to_string(dir.path().join(format!("run_{rule}.csv"))).expect("written");
        assert_eq!(written, reference(&format!("streams_{rule}.csv")), "{rule}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), rules.len());
}

#[test]
fn rule_options_change_the_output() {
    let file = fixtures().join("sync_timing.sqlite");
    let file = file.to_str().unwrap();
    let lines = |args: &[&str]| -> Vec<String> {
        let out = analyze(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    // rows= limits (header + 3 rows).
    assert_eq!(
        lines(&[file, "--rule", "cuda_api_sync:rows=3", "--format", "csv"]).len(),
        4
    );
    // A tiny gap= finds gaps the default 500 ms does not; longest first, numbered.
    let gaps = lines(&[file, "--rule", "gpu_gaps:gap=0.01", "--format", "csv"]);
    assert!(gaps.len() > 1, "{gaps:?}");
    assert_eq!(
        gaps[0],
        "Row#,Duration (ns),Start (ns),PID,Device ID,Context ID"
    );
    assert!(gaps[1].starts_with("1,"));
    // nvtx= restricts to the range: the cuda-events range has no device syncs.
    assert!(
        lines(&[
            file,
            "--rule",
            "cuda_api_sync:nvtx=cuda-events",
            "--format",
            "csv"
        ])
        .is_empty()
    );
    let in_no_sync = lines(&[
        file,
        "--rule",
        "cuda_api_sync:nvtx=sync-before-only",
        "--format",
        "csv",
    ]);
    assert_eq!(in_no_sync.len(), 11, "{in_no_sync:?}");
    // threshold=100 flags more of the trace than 50.
    let low = lines(&[file, "--rule", "gpu_time_util", "--format", "csv"]);
    let high = lines(&[
        file,
        "--rule",
        "gpu_time_util:threshold=100:chunks=10",
        "--format",
        "csv",
    ]);
    assert!(!high.is_empty() && !low.is_empty());
}

#[test]
fn findings_as_table_and_json() {
    let file = fixtures().join("sync_timing.sqlite");
    let out = analyze(&[file.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("range-ends-before-gpu-work") && text.contains("no-sync/timed-iteration")
    );
    // Every instance with --all; one line per entry without.
    let out = analyze(&[file.to_str().unwrap(), "--format", "json", "--all"]);
    assert!(out.status.success());
    let every = String::from_utf8_lossy(&out.stdout).lines().count();
    assert!(every >= 20);
    let out = analyze(&[file.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() < every);
    for line in lines {
        assert!(
            line.starts_with("{\"kind\":\"") && line.ends_with("]}"),
            "{line}"
        );
        assert!(line.contains("\"count\":") && line.contains("\"instances\":["));
        for key in [
            "\"severity\":",
            "\"start\":",
            "\"end\":",
            "\"range\":",
            "\"message\":",
        ] {
            assert!(line.contains(key), "{line}");
        }
    }
}

#[test]
fn bad_input_exits_2() {
    let file = fixtures().join("streams.sqlite");
    let file = file.to_str().unwrap();
    let dir = tempfile::tempdir().expect("temp dir");
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, b"not a database").unwrap();
    for args in [
        &[file, "--rule", "no_such_rule"][..],
        &[file, "--rule", "gpu_gaps:gap=x"],
        &[file, "--rule", "cuda_api_sync:gap=3"],
        &[file, "--bogus", "1"],
        &["/no/such/file.sqlite"],
        &[junk.to_str().unwrap()],
        &[junk.to_str().unwrap(), "--rule", "gpu_gaps"],
        &[],
    ] {
        let out = analyze(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

/// A copy of sync_timing whose `timed-iteration` ranges are numbered as a
/// training loop numbers its steps (`timed-iteration 0`, `1`, ...).
fn numbered_iterations(dir: &Path) -> PathBuf {
    let path = dir.join("numbered.sqlite");
    std::fs::copy(fixtures().join("sync_timing.sqlite"), &path).expect("copy");
    let conn = rusqlite::Connection::open(&path).expect("open copy");
    conn.execute_batch(
        "UPDATE NVTX_EVENTS SET text = 'timed-iteration ' || rowid WHERE text = 'timed-iteration'",
    )
    .expect("number the iterations");
    path
}

fn json_lines(args: &[&str]) -> Vec<serde_json::Value> {
    let out = analyze(args);
    assert!(out.status.success(), "{args:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Ranges whose names differ only by numbers are iterations of one loop: the
/// ten `no-sync` timed iterations' warnings are one entry ("10 of 10
/// iterations"), in the table and in JSON alike, as the unnumbered ones are.
#[test]
fn numbered_iterations_are_one_entry() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = numbered_iterations(dir.path());
    let file = file.to_str().expect("path");
    let lines = json_lines(&[file, "--format", "json"]);
    let no_sync: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| {
            l["kind"] == "range-ends-before-gpu-work"
                && l["range"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("no-sync/"))
        })
        .collect();
    assert_eq!(no_sync.len(), 1, "{no_sync:?}");
    let entry = no_sync[0];
    assert_eq!(entry["count"], 10);
    assert_eq!(entry["group"], "no-sync/timed-iteration #");
    assert_eq!(
        entry["iterations"],
        serde_json::json!({"range": "no-sync/timed-iteration #", "with": 10, "of": 10})
    );
    let message = entry["message"].as_str().expect("message");
    assert!(message.starts_with("10 of 10 iterations"), "{message}");
    let instances = entry["instances"].as_array().expect("instances");
    assert_eq!(instances.len(), 10);
    // The worst instance is one of them.
    assert!(
        instances
            .iter()
            .any(|i| i["start"] == entry["start"] && i["end"] == entry["end"])
    );
    let table = analyze(&[file]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert_eq!(
        table
            .lines()
            .filter(|l| l.contains("no-sync/timed-iteration #"))
            .count(),
        1,
        "{table}"
    );
}

/// The table and `--format json` list the same entries (one JSON line per
/// row, with its count and every instance); `--all` lists every instance in
/// both.
#[test]
fn table_and_json_list_the_same_entries() {
    let dir = tempfile::tempdir().expect("temp dir");
    let numbered = numbered_iterations(dir.path());
    let torch = fixtures().join("torch_loop/torch_loop.sqlite");
    for file in [numbered.as_path(), torch.as_path()] {
        let file = file.to_str().expect("path");
        let table = analyze(&[file]);
        let rows = String::from_utf8_lossy(&table.stdout).lines().count() - 2;
        let entries = json_lines(&[file, "--format", "json"]);
        assert_eq!(entries.len(), rows, "{file}");
        let every = json_lines(&[file, "--format", "json", "--all"]);
        let counted: u64 = entries.iter().map(|e| e["count"].as_u64().unwrap()).sum();
        assert_eq!(counted as usize, every.len(), "{file}");
        for e in &entries {
            let instances = e["instances"].as_array().expect("instances");
            assert_eq!(instances.len() as u64, e["count"].as_u64().unwrap());
        }
        let all_rows = String::from_utf8_lossy(&analyze(&[file, "--all"]).stdout)
            .lines()
            .count()
            - 2;
        assert_eq!(all_rows, every.len(), "{file}");
    }
}

/// A PyTorch training loop (`step N` › forward/backward/optimizer, each step
/// ending with `loss.item()`): its findings fit one screen, and none tells a
/// phase to synchronize.
#[test]
fn a_training_loops_findings_fit_one_screen_without_sync_advice_on_phases() {
    // 20 steps, and 38 (steps 2..39 of the 40) recorded again with Python frames.
    for name in [
        "torch_loop/torch_loop.sqlite",
        "torch_loop_py/torch_loop.sqlite",
    ] {
        let file = fixtures().join(name);
        let entries = json_lines(&[file.to_str().expect("path"), "--format", "json"]);
        assert!(entries.len() <= 20, "{entries:#?}");
        no_sync_advice_on_phases(&entries);
    }
}

fn no_sync_advice_on_phases(entries: &[serde_json::Value]) {
    for e in entries {
        let range = e["range"].as_str().unwrap_or("");
        let phase = ["forward", "backward", "optimizer"]
            .iter()
            .any(|p| range.ends_with(p));
        let advice = e["fix"].as_str().unwrap_or("").contains("ynchronize");
        assert!(!(phase && advice), "{e}");
        assert!(
            !(e["kind"] == "range-ends-before-gpu-work" && e["severity"] == "warning"),
            "{e}"
        );
    }
}
