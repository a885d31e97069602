//! Deep NVTX nesting (issue 44, item 8): one thread whose push/pop ranges
//! nest 100,000 deep. `analyze` once spelled out every range's path and, for
//! each API call, climbed through every ancestor of the ranges before it:
//! quadratic in depth (61 s and 16.6 GB here, release build). It must finish
//! well inside a deadline the quadratic code cannot meet. `stats --report
//! nvtx_pushpop_trace` is as long as the nesting is deep squared (each row
//! lists its enclosing ranges): it must not hold it all.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tempfile::TempDir;

/// A copy of `sync_timing` whose NVTX ranges are replaced by `depth` push/pop
/// ranges on one of its threads, range `i` from `i` to `2 * depth - i` ns:
/// each holds all the later ones. Its CUDA calls all come after them.
fn nested_report(dir: &TempDir, depth: i64) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sync_timing.sqlite");
    let path = dir.path().join(format!("nested-{depth}.sqlite"));
    std::fs::copy(fixture, &path).expect("copy the fixture");
    let mut conn = Connection::open(&path).expect("open the copy");
    let tid: i64 = conn
        .query_row(
            "SELECT globalTid FROM NVTX_EVENTS WHERE eventType = 59 LIMIT 1",
            [],
            |r| r.get(0),
        )
        .expect("a push/pop range");
    let tx = conn.transaction().expect("transaction");
    tx.execute("DELETE FROM NVTX_EVENTS", []).expect("delete");
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
                 VALUES (?1, ?2, 59, 'deep', ?3, 0)",
            )
            .expect("prepare");
        for i in 0..depth {
            insert
                .execute((i, 2 * depth - i, tid))
                .expect("insert a range");
        }
    }
    tx.commit().expect("commit");
    path
}

/// Runs `sightline ARGS`, killed past `deadline`: whether it finished in
/// time, successfully, and how long it took.
fn run_within(args: &[&str], deadline: Duration) -> Result<Duration, String> {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sightline");
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let took = started.elapsed();
            return match status.success() {
                true => Ok(took),
                false => Err(format!("{args:?} failed: {status}")),
            };
        }
        if started.elapsed() > deadline {
            child.kill().expect("kill");
            child.wait().expect("reap");
            return Err(format!("{args:?} still running after {deadline:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `analyze` at depth 100,000: 0.8 s in a dev build once linear (on a
/// 2-core VM); the quadratic code took 61 s in a release build and many
/// minutes in a dev one.
#[test]
fn analyze_is_linear_in_nvtx_depth() {
    let dir = TempDir::new().expect("temp dir");
    let path = nested_report(&dir, 100_000);
    let file = path.to_str().expect("utf-8 path");
    let took =
        run_within(&["analyze", file], Duration::from_secs(20)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("analyze at depth 100,000: {took:?}");
}

/// The peak resident memory of process `pid` so far, in KiB (Linux), if it
/// can be read.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `stats --report nvtx_pushpop_trace --format csv` at depth 5,000 writes
/// 83 MB (the RangeStack of a range at depth d lists d + 1 ids); it once held
/// that as cells and again as one string (190 MB peak), and now writes
/// each row as it is made (about 20 MB, as for a report of no depth).
#[test]
fn pushpop_trace_is_not_held_whole() {
    if peak_kib(std::process::id()).is_none() {
        eprintln!("skipped: no /proc/PID/status VmHWM here");
        return;
    }
    let dir = TempDir::new().expect("temp dir");
    let path = nested_report(&dir, 5_000);
    let file = path.to_str().expect("utf-8 path");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args([
            "stats",
            "--report",
            "nvtx_pushpop_trace",
            "--format",
            "csv",
            file,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sightline");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let started = Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        peak = peak_kib(child.id()).unwrap_or(0).max(peak);
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "still running"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let written = reader.join().expect("reader").expect("read stdout");
    assert!(status.success(), "{status}");
    assert!(written > 80_000_000, "{written} bytes");
    eprintln!("{written} bytes written, peak {peak} KiB");
    assert!(
        peak < 120 * 1024,
        "peak {peak} KiB for {written} bytes written"
    );
}
