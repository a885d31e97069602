//! `sightline stats` as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn stats(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("stats")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn reference(name: &str) -> String {
    std::fs::read_to_string(fixtures().join("stats").join(name)).expect("reference CSV")
}

#[test]
fn csv_to_stdout_is_the_nsys_csv() {
    let file = fixtures().join("sync_timing.sqlite");
    let out = stats(&[
        file.to_str().unwrap(),
        "--report",
        "cuda_api_sum",
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
        reference("sync_timing_cuda_api_sum.csv")
    );
}

#[test]
fn output_writes_one_csv_per_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prefix = dir.path().join("run");
    let file = fixtures().join("streams.sqlite");
    let out = stats(&[
        file.to_str().unwrap(),
        "--report",
        "cuda_gpu_kern_sum,nvtx_sum",
        "--output",
        prefix.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for report in ["cuda_gpu_kern_sum", "nvtx_sum"] {
        let written =
            std::fs::read_to_string(dir.path().join(format!("run_{report}.csv"))).expect("written");
        assert_eq!(written, reference(&format!("streams_{report}.csv")));
    }
    // Nothing else, in particular no temporary files.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn variants_and_new_reports_are_written_under_nsys_file_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prefix = dir.path().join("run");
    let file = fixtures().join("sync_timing.sqlite");
    let reports = [
        "cuda_gpu_kern_sum:base",
        "cuda_gpu_kern_sum:nvtx-name",
        "nvtx_gpu_proj_trace",
        "um_sum",
    ];
    let out = stats(&[
        file.to_str().unwrap(),
        "--report",
        &reports.join(","),
        "--output",
        prefix.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for report in reports {
        let stem = report.replace(':', "_");
        let written =
            std::fs::read_to_string(dir.path().join(format!("run_{stem}.csv"))).expect("written");
        assert_eq!(written, reference(&format!("sync_timing_{stem}.csv")));
    }
    // Exactly one file per report (um_sum: an empty one, as nsys writes).
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        reports.len()
    );
}

#[test]
fn table_output_and_ranges() {
    let file = fixtures().join("streams.sqlite");
    let out = stats(&[file.to_str().unwrap(), "--report", "cuda_gpu_kern_sum"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("CUDA GPU Kernel Summary") && text.contains("tiny(int *)"),
        "{text}"
    );
    let out = stats(&[file.to_str().unwrap(), "--format", "csv", "--range", "0:1"]);
    assert!(out.status.success());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn bad_input_exits_2() {
    let file = fixtures().join("streams.sqlite");
    let file = file.to_str().unwrap();
    for args in [
        &[file, "--report", "no_such_report"][..],
        &[file, "--range", "10:5"],
        &[file, "--range", "ten:20"],
        &[file, "--bogus", "1"],
        &["/no/such/file.sqlite"],
        &[],
    ] {
        let out = stats(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}
