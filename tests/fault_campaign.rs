//! A fault campaign kept in the repository (issue 18): mutated copies of the
//! fixture reports — truncated, pages overwritten, tables dropped, columns
//! NULL or of the wrong type, extreme timestamps, dangling ids, a hot journal,
//! a WAL — through `stats`, `analyze` and `diff`. For every run:
//! - no panic, no hang (a time limit);
//! - the input is not modified (the report and its journal or WAL hashed
//!   before and after);
//! - exit 0 or 2 only;
//! - where SQLite can read a committed state, the kernel count printed equals
//!   that state's.
//!
//! Deterministic (every mutation is listed); runs in well under two minutes.

mod common;
use common::fixture;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tempfile::TempDir;

const KERNELS: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
const TIME_LIMIT: Duration = Duration::from_secs(60);
const PAGE: usize = 4096;

/// How a copy is damaged.
enum Mutation {
    /// Keep this fraction of the bytes.
    Truncate(f64),
    /// Overwrite page N (0 is the header) with a byte pattern.
    FlipPage(usize, u8),
    /// Run SQL on the copy (it stays a valid database).
    Sql(&'static str),
    /// A transaction left as a crash leaves it: pages in the file, a hot journal.
    HotJournal(&'static str),
    /// A transaction committed into a WAL that is not checkpointed.
    Wal(&'static str),
}

fn mutations() -> Vec<(&'static str, Mutation, bool)> {
    // (name, mutation, whether the kernel count must equal the committed state's)
    vec![
        ("truncated to 10%", Mutation::Truncate(0.1), false),
        ("truncated to 50%", Mutation::Truncate(0.5), false),
        ("truncated to 99%", Mutation::Truncate(0.99), false),
        (
            "truncated inside the header",
            Mutation::Truncate(50.0 / 516_096.0),
            false,
        ),
        ("header page flipped", Mutation::FlipPage(0, 0xff), false),
        ("schema page zeroed", Mutation::FlipPage(1, 0x00), false),
        ("a data page flipped", Mutation::FlipPage(20, 0xa5), false),
        ("a late page flipped", Mutation::FlipPage(100, 0x5a), false),
        (
            "StringIds dropped",
            Mutation::Sql("DROP TABLE StringIds;"),
            false,
        ),
        (
            "kernels dropped",
            Mutation::Sql("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;"),
            false,
        ),
        (
            "runtime dropped",
            Mutation::Sql("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME;"),
            true,
        ),
        (
            "TARGET_INFO_GPU dropped",
            Mutation::Sql("DROP TABLE IF EXISTS TARGET_INFO_GPU;"),
            true,
        ),
        (
            "kernel times NULL",
            Mutation::Sql(concat!(
                "CREATE TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL; ",
                "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; ",
                "ALTER TABLE k RENAME TO CUPTI_ACTIVITY_KIND_KERNEL; ",
                "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = NULL WHERE rowid % 3 = 0;"
            )),
            false,
        ),
        (
            "kernel names NULL",
            Mutation::Sql(concat!(
                "CREATE TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL; ",
                "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; ",
                "ALTER TABLE k RENAME TO CUPTI_ACTIVITY_KIND_KERNEL; ",
                "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = NULL, demangledName = NULL;"
            )),
            true,
        ),
        (
            "wrong types",
            Mutation::Sql(concat!(
                "CREATE TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL; ",
                "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; ",
                "ALTER TABLE k RENAME TO CUPTI_ACTIVITY_KIND_KERNEL; ",
                "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon', [end] = 1.5, ",
                "shortName = x'ff00ff', gridX = 'wide' WHERE rowid % 2 = 0;"
            )),
            false,
        ),
        (
            "extreme timestamps",
            Mutation::Sql(concat!(
                "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9223372036854775807 ",
                "WHERE rowid % 2 = 0; UPDATE CUPTI_ACTIVITY_KIND_KERNEL ",
                "SET [end] = 9223372036854775807;"
            )),
            true,
        ),
        (
            "dangling ids",
            Mutation::Sql(concat!(
                "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 987654321, ",
                "demangledName = -5, correlationId = -1, streamId = 99999, deviceId = 77; ",
                "DELETE FROM StringIds WHERE id % 2 = 1;"
            )),
            true,
        ),
        (
            "a hot journal",
            Mutation::HotJournal(concat!(
                "UPDATE StringIds SET value = 'CHANGED'; ",
                "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 2 = 0;"
            )),
            true,
        ),
        (
            "committed in a WAL",
            Mutation::Wal("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 3 = 0;"),
            true,
        ),
    ]
}

fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Builds the damaged copy `dir/NAME.sqlite` (with its journal or WAL).
fn build(dir: &Path, name: &str, mutation: &Mutation) -> PathBuf {
    let original = std::fs::read(fixture("sync_timing.sqlite")).expect("read the fixture");
    let path = dir.join(format!("{}.sqlite", name.replace(' ', "_")));
    match mutation {
        Mutation::Truncate(fraction) => {
            let keep = ((original.len() as f64 * fraction) as usize).min(original.len());
            std::fs::write(&path, &original[..keep]).expect("write");
        }
        Mutation::FlipPage(page, byte) => {
            let mut bytes = original.clone();
            let start = (page * PAGE).min(bytes.len());
            let end = (start + PAGE).min(bytes.len());
            bytes[start..end].fill(*byte);
            if *page == 0 {
                // Keep the magic: a damaged header, not a foreign file.
                bytes[..16].copy_from_slice(b"SQLite format 3\0");
            }
            std::fs::write(&path, bytes).expect("write");
        }
        Mutation::Sql(sql) => {
            std::fs::write(&path, &original).expect("write");
            let conn = Connection::open(&path).expect("open");
            conn.execute_batch(sql).expect("mutate");
        }
        Mutation::HotJournal(sql) => {
            let live = dir.join("live.sqlite");
            std::fs::write(&live, &original).expect("write");
            let conn = Connection::open(&live).expect("open");
            conn.execute_batch(&format!(
                "PRAGMA journal_mode=DELETE; PRAGMA cache_size=1; BEGIN; {sql}"
            ))
            .expect("mutate");
            std::fs::copy(&live, &path).expect("copy");
            std::fs::copy(companion(&live, "-journal"), companion(&path, "-journal"))
                .expect("copy the journal");
            conn.execute_batch("ROLLBACK").expect("rollback");
        }
        Mutation::Wal(sql) => {
            let live = dir.join("live-wal.sqlite");
            std::fs::write(&live, &original).expect("write");
            let conn = Connection::open(&live).expect("open");
            conn.execute_batch(&format!(
                "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; {sql}"
            ))
            .expect("mutate");
            std::fs::copy(&live, &path).expect("copy");
            std::fs::copy(companion(&live, "-wal"), companion(&path, "-wal"))
                .expect("copy the WAL");
        }
    }
    path
}

/// A hash of the report and its companions: what must not change.
fn fingerprint(path: &Path) -> u64 {
    let mut h = DefaultHasher::new();
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let p = companion(path, suffix);
        suffix.hash(&mut h);
        std::fs::read(&p).ok().hash(&mut h);
    }
    h.finish()
}

/// The kernels of the committed state, as SQLite reads it (from a copy, so the
/// journal or WAL is applied there); None where SQLite cannot read it.
fn committed_kernels(path: &Path) -> Option<u64> {
    let dir = TempDir::new().ok()?;
    let copy = dir.path().join("c.sqlite");
    std::fs::copy(path, &copy).ok()?;
    for suffix in ["-journal", "-wal"] {
        let _ = std::fs::copy(companion(path, suffix), companion(&copy, suffix));
    }
    let conn = Connection::open(&copy).ok()?;
    conn.query_row(
        &format!("SELECT count(*) FROM {KERNELS} WHERE start IS NOT NULL AND [end] IS NOT NULL"),
        [],
        |r| r.get::<_, i64>(0),
    )
    .ok()
    .map(|n| n as u64)
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sightline");
    // Read the pipes on threads: a full pipe must not look like a hang.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut b).ok();
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut b).ok();
        b
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            panic!("sightline {args:?} ran over {TIME_LIMIT:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out.join().expect("stdout"),
        stderr: err.join().expect("stderr"),
    }
}

/// Kernel instances in `stats --report cuda_gpu_kern_sum` CSV.
fn instances(csv: &str) -> u64 {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let Some(col) = header
        .iter()
        .position(|h| h.trim_matches('"') == "Instances")
    else {
        return 0;
    };
    lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split(',').nth(col)?.trim_matches('"').parse::<u64>().ok())
        .sum()
}

#[test]
fn mutated_reports_never_panic_hang_change_or_miscount() {
    let started = Instant::now();
    let dir = TempDir::new().expect("temp dir");
    let good = fixture("sync_timing.sqlite");
    let mut failures = Vec::new();
    for (name, mutation, must_count) in mutations() {
        let report = build(dir.path(), name, &mutation);
        let before = fingerprint(&report);
        let r = report.as_os_str();
        let runs: Vec<(&str, Vec<&std::ffi::OsStr>)> = vec![
            (
                "stats",
                vec![
                    "stats".as_ref(),
                    "--report".as_ref(),
                    "cuda_gpu_kern_sum".as_ref(),
                    "--format".as_ref(),
                    "csv".as_ref(),
                    r,
                ],
            ),
            ("stats (all)", vec!["stats".as_ref(), r]),
            ("analyze", vec!["analyze".as_ref(), r]),
            (
                "analyze --rule",
                vec![
                    "analyze".as_ref(),
                    "--rule".as_ref(),
                    "gpu_gaps".as_ref(),
                    r,
                ],
            ),
            ("diff", vec!["diff".as_ref(), good.as_os_str(), r]),
        ];
        for (what, args) in runs {
            let out = run(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let code = out.status.code();
            if stderr.contains("panicked") || !matches!(code, Some(0) | Some(2)) {
                failures.push(format!("{name}: {what}: exit {code:?}: {stderr}"));
                continue;
            }
            if what == "stats" && must_count && code == Some(0) {
                let printed = instances(&String::from_utf8_lossy(&out.stdout));
                match committed_kernels(&report) {
                    Some(committed) if committed != printed => failures.push(format!(
                        "{name}: {printed} kernels printed, the committed state has {committed}"
                    )),
                    _ => {}
                }
            }
            if what == "stats" && must_count && code != Some(0) {
                failures.push(format!("{name}: a readable report refused: {stderr}"));
            }
        }
        if fingerprint(&report) != before {
            failures.push(format!("{name}: the input was modified"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("campaign took {:?}", started.elapsed());
}
