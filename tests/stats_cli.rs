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

/// The trace reports in the aligned table layout print what they printed when
/// they were built whole in memory: same widths, same bytes (on stdout; in
/// `--output` files, the table as `Table::to_text` lays it out).
#[test]
fn trace_reports_as_tables_print_as_before() {
    let file = fixtures().join("sync_timing.sqlite");
    let file = file.to_str().unwrap();
    let out = stats(&[
        file,
        "--report",
        "cuda_api_trace,cuda_gpu_trace,cuda_kern_exec_trace",
    ]);
    assert!(out.status.success());
    let expected =
        std::fs::read_to_string(fixtures().join("text_tables/sync_timing_trace_reports.txt"))
            .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout) == expected,
        "the tables changed"
    );
    let out = stats(&[file, "--report", "cuda_gpu_trace", "--range", "0:1"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "\n ** CUDA GPU Trace (cuda_gpu_trace):\n\n(no data)\n"
    );

    let trace = sightline::loader::load(file.as_ref(), &mut |_| {}, &Default::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (range, report, name) in [
        (
            None,
            sightline::analysis::Report::CudaGpuTrace,
            "cuda_gpu_trace",
        ),
        (
            None,
            sightline::analysis::Report::CudaApiTrace,
            "cuda_api_trace",
        ),
        (
            Some(sightline::analysis::TimeRange { start: 0, end: 1 }),
            sightline::analysis::Report::CudaGpuTrace,
            "cuda_gpu_trace",
        ),
    ] {
        let prefix = dir.path().join("t");
        let mut args = vec![file, "--format", "table", "--report", name, "--output"];
        args.push(prefix.to_str().unwrap());
        let range_arg;
        if let Some(r) = range {
            range_arg = format!("{}:{}", r.start, r.end);
            args.extend(["--range", range_arg.as_str()]);
        }
        assert!(stats(&args).status.success());
        let written = std::fs::read_to_string(dir.path().join(format!("t_{name}.txt"))).unwrap();
        let table = sightline::analysis::compute(&trace, report, range).to_text();
        assert!(written == table, "{name} {range:?}: the file changed");
    }
}

/// Peak resident memory of `sightline stats ARGS` in KiB (`/usr/bin/time`).
fn peak_kib(args: &[&str]) -> Option<u64> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_sightline"))
        .arg("stats")
        .args(args)
        .stdout(std::process::Stdio::null())
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

/// A trace report in the table layout is streamed as CSV is: its rows are
/// never all held (they took 7 GB at 10.2M events). Measured on four copies
/// of `streams` (80k GPU rows): the table may not take much more than CSV.
#[test]
fn trace_reports_as_tables_are_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.sqlite");
    let made = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["synth", "--scale", "4", "--from"])
        .arg(fixtures().join("streams.sqlite"))
        .arg("--output")
        .arg(&big)
        .output()
        .unwrap();
    assert!(made.status.success());
    let big = big.to_str().unwrap();
    let Some(csv) = peak_kib(&[big, "--report", "cuda_gpu_trace", "--format", "csv"]) else {
        eprintln!("note: /usr/bin/time unavailable; not measured");
        return;
    };
    let table = peak_kib(&[big, "--report", "cuda_gpu_trace", "--format", "table"]).unwrap();
    assert!(
        table < csv + csv / 2,
        "the table took {table} KiB at its peak, CSV {csv} KiB"
    );
}
