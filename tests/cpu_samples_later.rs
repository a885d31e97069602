//! A sampled report's CPU samples and scheduling are read only by what needs them
//! (`loader::LoadOptions`): every other command on it pays nothing for them, and does not
//! even look at their tables.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::fixture;

fn sightline(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of the PyTorch loop's report (CPU samples, Python samples, scheduling) in `dir`
/// whose `SCHED_EVENTS` is damaged: its b-tree's root page garbled.
fn with_damaged_switches(dir: &Path) -> PathBuf {
    let path = dir.join("torch_loop.sqlite");
    std::fs::copy(fixture("torch_loop_py/torch_loop.sqlite"), &path).expect("copy");
    common::garble_table(&path, "SCHED_EVENTS");
    path
}

/// The commands that need no samples answer on a report whose switches are damaged, as nsys
/// does (its own CSV); the one made of samples says what is wrong. Before the load left the
/// sampling to those that need it, every command failed on it.
#[test]
fn only_the_commands_that_need_samples_read_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let damaged = with_damaged_switches(dir.path());
    let file = damaged.to_str().expect("a UTF-8 path");

    let (code, stdout, stderr) =
        sightline(&["stats", file, "--report", "cuda_api_sum", "--format", "csv"]);
    assert_eq!(code, Some(0), "stats cuda_api_sum: {stderr}");
    let nsys = std::fs::read_to_string(fixture("torch_loop_py/stats/torch_loop_cuda_api_sum.csv"))
        .expect("nsys's CSV");
    assert_eq!(stdout, nsys);

    let (code, _, stderr) = sightline(&["stats", file, "--report", "cpu_sample_sum"]);
    assert_eq!(code, Some(2), "cpu_sample_sum: {stderr}");
    assert!(
        stderr.contains(file) && stderr.contains("damaged"),
        "a clear error naming the report: {stderr}"
    );

    // The samples' own command, on the intact report, still has them.
    let intact = fixture("torch_loop_py/torch_loop.sqlite");
    let (code, stdout, stderr) = sightline(&[
        "stats",
        intact.to_str().expect("UTF-8"),
        "--report",
        "cpu_sample_sum",
        "--format",
        "csv",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.lines().count() > 10,
        "functions by samples: {stdout}"
    );
}

/// A report read without its CPU samples, then changed on disk (exported again over it)
/// before they are read: the later read says the report changed and reads nothing, rather than
/// adopting another report's samples into the trace shown.
#[test]
fn a_report_changed_since_it_was_opened_is_not_read_later() {
    use sightline::loader::{LoadOptions, Problem, load_with, read_cpu_sampling};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("torch_loop.sqlite");
    std::fs::copy(fixture("torch_loop_py/torch_loop.sqlite"), &path).expect("copy");
    let never = std::sync::atomic::AtomicBool::new(false);
    let trace = load_with(
        &path,
        LoadOptions::WITHOUT_CPU_SAMPLING,
        &mut |_| {},
        &never,
    )
    .expect("loads");
    assert!(trace.cpu_sampling_not_read());
    // Untouched, it reads.
    let read = read_cpu_sampling(&path, &trace, &mut |_| {}, &never).expect("reads later");
    assert!(read.cpu.sample_count() > 0);
    rusqlite::Connection::open(&path)
        .expect("open")
        .execute("DELETE FROM SCHED_EVENTS WHERE rowid % 2 = 0", [])
        .expect("changed");
    let err =
        read_cpu_sampling(&path, &trace, &mut |_| {}, &never).expect_err("the change is seen");
    assert_eq!(err.problem, Problem::ChangedSinceOpened, "{err}");
    assert!(
        err.to_string().contains("changed since it was opened"),
        "{err}"
    );
}
