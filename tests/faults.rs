//! Faults (issue 18): reports read as SQLite commits them (a hot journal, a WAL,
//! a writer committing during the load), outputs that never replace a device or
//! a FIFO, loader warnings on stderr, sums that do not wrap, FIFOs and devices
//! that do not hang, failing stdout, stub CUDA libraries, and the small
//! messages (non-UTF-8 paths, page size, --range, mistyped commands, lessons).
//!
//! Every report here is a private copy of a committed fixture; the fixtures are
//! only read.

mod common;
use common::fixture;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tempfile::TempDir;

const KERNELS: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
/// A command on a small file taking longer than this hangs.
const TIME_LIMIT: Duration = Duration::from_secs(60);

fn sightline() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
}

/// Runs `cmd` with a time limit (a hang fails the test instead of blocking
/// it); the pipes are read on threads, so a full pipe is not taken for a hang.
fn run(cmd: Command) -> Output {
    run_within(cmd, TIME_LIMIT)
}

/// [`run`] with a time limit of its own.
fn run_within(mut cmd: Command, limit: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start sightline");
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran over {limit:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn copy_of(dir: &TempDir, name: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::copy(fixture(name), &path).expect("copy the fixture");
    path
}

/// Kernel instances and total time that `stats --report cuda_gpu_kern_sum`
/// prints for `path`, summed over its rows (exit status checked).
fn kern_sum(path: &Path) -> (u64, i128) {
    let mut cmd = sightline();
    cmd.args(["stats", "--report", "cuda_gpu_kern_sum", "--format", "csv"])
        .arg(path);
    let out = run(cmd);
    assert!(out.status.success(), "stats failed: {}", text(&out.stderr));
    let csv = text(&out.stdout);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h.trim_matches('"') == name)
            .unwrap_or_else(|| panic!("no {name} column in {csv}"))
    };
    let (instances, total) = (column("Instances"), column("Total Time (ns)"));
    let mut sums = (0u64, 0i128);
    for line in lines.filter(|l| !l.is_empty()) {
        let cells: Vec<&str> = line.split(',').collect();
        sums.0 += cells[instances]
            .trim_matches('"')
            .parse::<u64>()
            .expect("count");
        sums.1 += cells[total]
            .trim_matches('"')
            .parse::<i128>()
            .expect("total");
    }
    sums
}

/// The committed kernel count of a database, as SQLite reads it (a normal
/// open of a private copy: it rolls back and recovers as SQLite does).
fn committed_kernels(db: &Path, companions: &[&str]) -> u64 {
    let dir = TempDir::new().expect("temp dir");
    let copy = dir.path().join("c.sqlite");
    std::fs::copy(db, &copy).expect("copy");
    for suffix in companions {
        let mut from = db.as_os_str().to_owned();
        from.push(suffix);
        let mut to = copy.as_os_str().to_owned();
        to.push(suffix);
        std::fs::copy(from, to).expect("copy companion");
    }
    let conn = Connection::open(&copy).expect("open");
    conn.query_row(&format!("SELECT count(*) FROM {KERNELS}"), [], |r| {
        r.get::<_, i64>(0)
    })
    .expect("count") as u64
}

fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// A report left by a writer that died mid-transaction: its file holds pages
/// of a state never committed (every string 'CHANGED', kernels deleted) and a
/// hot journal lies beside it.
fn with_hot_journal(dir: &TempDir) -> PathBuf {
    let live = copy_of(dir, "streams.sqlite");
    let conn = Connection::open(&live).expect("open");
    // A tiny cache spills the transaction's pages into the file before commit.
    conn.execute_batch(&format!(
        "PRAGMA journal_mode=DELETE; PRAGMA cache_size=1; BEGIN;
         UPDATE StringIds SET value = 'CHANGED';
         DELETE FROM {KERNELS} WHERE rowid % 3 = 0;"
    ))
    .expect("write");
    assert!(
        companion(&live, "-journal").exists(),
        "the journal is there mid-transaction"
    );
    // The state on disk now, as a crash would leave it.
    let crashed = dir.path().join("crashed.sqlite");
    std::fs::copy(&live, &crashed).expect("copy the file");
    std::fs::copy(
        companion(&live, "-journal"),
        companion(&crashed, "-journal"),
    )
    .expect("copy the journal");
    conn.execute_batch("ROLLBACK").expect("rollback");
    crashed
}

#[test]
fn a_hot_journal_reads_as_the_committed_state_and_is_left_alone() {
    let dir = TempDir::new().expect("temp dir");
    let crashed = with_hot_journal(&dir);
    let before = (
        std::fs::read(&crashed).expect("read"),
        std::fs::read(companion(&crashed, "-journal")).expect("read"),
    );
    let committed = committed_kernels(&crashed, &["-journal"]);
    assert_eq!(
        committed,
        committed_kernels(&fixture("streams.sqlite"), &[])
    );
    let (instances, _) = kern_sum(&crashed);
    assert_eq!(instances, committed, "the committed kernels, all of them");
    let mut cmd = sightline();
    cmd.args(["stats", "--report", "cuda_api_sum"])
        .arg(&crashed);
    let out = run(cmd);
    assert!(out.status.success());
    assert!(
        !text(&out.stdout).contains("CHANGED"),
        "uncommitted strings shown"
    );
    assert!(
        text(&out.stderr).contains("-journal"),
        "the journal is named: {}",
        text(&out.stderr)
    );
    let after = (
        std::fs::read(&crashed).expect("read"),
        std::fs::read(companion(&crashed, "-journal")).expect("read"),
    );
    assert!(before == after, "the report or its journal was modified");
}

#[test]
fn committed_transactions_in_a_wal_are_included() {
    let dir = TempDir::new().expect("temp dir");
    let live = copy_of(&dir, "streams.sqlite");
    let conn = Connection::open(&live).expect("open");
    conn.execute_batch(&format!(
        "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
         DELETE FROM {KERNELS} WHERE rowid % 2 = 0;"
    ))
    .expect("commit into the WAL");
    let report = dir.path().join("wal.sqlite");
    std::fs::copy(&live, &report).expect("copy the file");
    std::fs::copy(companion(&live, "-wal"), companion(&report, "-wal")).expect("copy the WAL");
    drop(conn);
    let committed = committed_kernels(&report, &["-wal"]);
    assert!(committed < committed_kernels(&fixture("streams.sqlite"), &[]));
    let before = std::fs::read(&report).expect("read");
    assert_eq!(kern_sum(&report).0, committed);
    assert!(
        std::fs::read(&report).expect("read") == before,
        "report modified"
    );
    assert!(
        !companion(&report, "-shm").exists(),
        "nothing written beside the report"
    );
}

/// A report reached through a symlink: SQLite keeps its journal and WAL
/// beside the file the link points to, not beside the link.
#[cfg(unix)]
#[test]
fn a_journal_or_wal_beside_a_linked_report_is_seen() {
    let dir = TempDir::new().expect("temp dir");
    let crashed = with_hot_journal(&dir);
    let committed = committed_kernels(&crashed, &["-journal"]);
    let link = dir.path().join("link.sqlite");
    std::os::unix::fs::symlink(&crashed, &link).expect("symlink");
    let mut cmd = sightline();
    cmd.args(["stats", "--report", "cuda_gpu_kern_sum", "--format", "csv"])
        .arg(&link);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(kern_sum(&link).0, committed, "the journal rolled back");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{}-journal", crashed.display())),
        "the journal read is named: {stderr}"
    );

    let live = copy_of(&dir, "sync_timing.sqlite");
    let conn = Connection::open(&live).expect("open");
    conn.execute_batch(&format!(
        "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
         DELETE FROM {KERNELS} WHERE rowid % 2 = 0;"
    ))
    .expect("commit into the WAL");
    let real = dir.path().join("real");
    std::fs::create_dir(&real).expect("mkdir");
    let report = real.join("wal.sqlite");
    std::fs::copy(&live, &report).expect("copy the file");
    std::fs::copy(companion(&live, "-wal"), companion(&report, "-wal")).expect("copy the WAL");
    drop(conn);
    let link = dir.path().join("wal-link.sqlite");
    std::os::unix::fs::symlink(&report, &link).expect("symlink");
    assert_eq!(
        kern_sum(&link).0,
        committed_kernels(&report, &["-wal"]),
        "the WAL's transactions applied"
    );
}

/// A load killed while it read a private copy (SIGKILL runs no destructor)
/// left the whole copy in the temporary folder for good: the next load that
/// makes a copy removes those of processes no longer running, and its own.
#[test]
fn private_copies_left_by_killed_loads_are_removed() {
    let dir = TempDir::new().expect("temp dir");
    let temp = dir.path().join("tmp");
    std::fs::create_dir(&temp).expect("mkdir");
    // A process that has ended: its pid runs nothing now.
    let mut ended = Command::new("true").spawn().expect("spawn");
    let dead = ended.id();
    ended.wait().expect("wait");
    let left = temp.join(format!("sightline-committed-{dead}-0"));
    std::fs::create_dir(&left).expect("mkdir");
    std::fs::write(left.join("report.sqlite"), b"a whole copy").expect("write");
    let crashed = with_hot_journal(&dir);
    let mut cmd = sightline();
    cmd.env("TMPDIR", &temp)
        .args(["stats", "--report", "cuda_gpu_kern_sum"])
        .arg(&crashed);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let remaining: Vec<_> = std::fs::read_dir(&temp)
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(
        remaining.is_empty(),
        "left in the temporary folder: {remaining:?}"
    );
}

#[test]
fn a_report_written_during_the_loads_reads_as_one_committed_state() {
    let dir = TempDir::new().expect("temp dir");
    let report = copy_of(&dir, "streams.sqlite");
    let conn = Connection::open(&report).expect("open");
    conn.execute_batch(&format!(
        "CREATE TABLE held AS SELECT rowid AS held_rowid, * FROM {KERNELS} WHERE rowid % 4 = 0;"
    ))
    .expect("prepare");
    // Put back under their own rowids, so that the table flips between exactly two states
    // (rows re-inserted under new rowids would escape the next delete and pile up).
    let columns: Vec<String> = conn
        .prepare(&format!("SELECT name FROM pragma_table_info('{KERNELS}')"))
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()
        })
        .expect("columns");
    let columns = columns
        .iter()
        .map(|c| format!("[{c}]"))
        .collect::<Vec<_>>()
        .join(", ");
    let full = committed_kernels(&report, &[]);
    let held: u64 = conn
        .query_row("SELECT count(*) FROM held", [], |r| r.get::<_, i64>(0))
        .expect("count") as u64;
    drop(conn);
    let states = [full, full - held];
    // A writer flips between the two states as fast as it can.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (report, stop, columns) = (report.clone(), stop.clone(), columns.clone());
        std::thread::spawn(move || {
            let conn = Connection::open(&report).expect("open");
            conn.busy_timeout(Duration::from_secs(5)).expect("timeout");
            let mut commits = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                conn.execute_batch(&format!(
                    "BEGIN; DELETE FROM {KERNELS} WHERE rowid IN (SELECT held_rowid FROM held); COMMIT;
                     BEGIN; INSERT INTO {KERNELS} (rowid, {columns}) SELECT held_rowid, {columns} FROM held; COMMIT;"
                ))
                .expect("commit");
                commits += 2;
                std::thread::sleep(Duration::from_millis(30));
            }
            commits
        })
    };
    for _ in 0..6 {
        let mut cmd = sightline();
        cmd.args(["stats", "--report", "cuda_gpu_kern_sum", "--format", "csv"])
            .arg(&report);
        let out = run(cmd);
        if out.status.code() == Some(2) {
            // It may say the report kept changing: then never numbers.
            assert!(
                text(&out.stderr).contains("changed"),
                "{}",
                text(&out.stderr)
            );
            assert!(out.stdout.is_empty());
            continue;
        }
        assert!(out.status.success(), "{}", text(&out.stderr));
        let csv = text(&out.stdout);
        let instances: u64 = csv
            .lines()
            .skip(1)
            .filter(|l| !l.is_empty())
            .map(|l| {
                l.split(',')
                    .nth(2)
                    .unwrap_or("0")
                    .trim_matches('"')
                    .parse::<u64>()
                    .unwrap_or(0)
            })
            .sum();
        assert!(
            states.contains(&instances),
            "{instances} kernels: never a committed state ({states:?})"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(writer.join().expect("writer") > 0, "the writer committed");
}

/// A crafted report whose kernel table is a view that never ends (a
/// recursive one): reading it would hang and grow without limit. It is
/// refused, in one line naming the table.
#[test]
fn an_event_table_that_is_a_view_is_refused_not_read_forever() {
    let dir = TempDir::new().expect("temp dir");
    let report = copy_of(&dir, "sync_timing.sqlite");
    let conn = Connection::open(&report).expect("open");
    conn.execute_batch(&format!(
        "ALTER TABLE {KERNELS} RENAME TO kernel_rows;
         CREATE VIEW {KERNELS} AS
           WITH RECURSIVE forever(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM forever)
           SELECT kernel_rows.* FROM forever, kernel_rows;"
    ))
    .expect("make the view");
    drop(conn);
    for command in [
        vec!["stats", "--report", "cuda_gpu_kern_sum"],
        vec!["bench"],
    ] {
        let mut cmd = sightline();
        cmd.args(&command).arg(&report);
        let out = run_within(cmd, Duration::from_secs(10));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{command:?}: one line: {stderr}");
        assert!(
            stderr.contains(KERNELS) && stderr.contains("a view"),
            "{command:?}: the table is named: {stderr}"
        );
    }
}

/// A FIFO at `path` (None where mkfifo is missing).
fn fifo(path: &Path) -> Option<()> {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .ok()
        .filter(|s| s.success())
        .map(|_| ())
}

/// A character device at `path` (root can make one), like /dev/null.
fn device(path: &Path) -> Option<()> {
    Command::new("mknod")
        .arg(path)
        .args(["c", "1", "3"])
        .status()
        .ok()
        .filter(|s| s.success())
        .map(|_| ())
}

fn is_regular(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

#[test]
fn outputs_never_replace_a_device_or_a_fifo() {
    let dir = TempDir::new().expect("temp dir");
    let prefix = dir.path().join("out");
    let csv = dir.path().join("out_cuda_api_sum.csv");
    if fifo(&csv).is_none() {
        eprintln!("note: mkfifo unavailable; the FIFO case is skipped");
        return;
    }
    let mut cmd = sightline();
    cmd.args(["stats", "--report", "cuda_api_sum", "--output"])
        .arg(&prefix)
        .arg(fixture("sync_timing.sqlite"));
    let out = run(cmd);
    assert!(!out.status.success(), "a FIFO output is refused");
    assert!(
        text(&out.stderr).contains("a FIFO, not a regular file"),
        "{}",
        text(&out.stderr)
    );
    assert!(!is_regular(&csv), "the FIFO was replaced by a file");

    let dev = dir.path().join("full.sqlite");
    if device(&dev).is_none() {
        eprintln!("note: mknod unavailable (not root?); the device case is skipped");
        return;
    }
    let mut cmd = sightline();
    cmd.args(["synth", "--scale", "1", "--from"])
        .arg(fixture("sync_timing.sqlite"))
        .arg("--output")
        .arg(&dev);
    let out = run(cmd);
    assert!(!out.status.success(), "a device output is refused");
    assert!(
        text(&out.stderr).contains("a character device"),
        "{}",
        text(&out.stderr)
    );
    assert!(!is_regular(&dev), "the device was replaced by a file");
}

/// A symlink planted where the temporary of an output would go (the old name
/// was `.NAME.tmpPID`, PID the one `exec` keeps): the file it points to must
/// not be written, and the output still is.
#[cfg(unix)]
#[test]
fn an_output_never_writes_through_a_planted_link() {
    let dir = TempDir::new().expect("temp dir");
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "the user's own words\n").expect("write the victim");
    let mut cmd = Command::new("sh");
    cmd.current_dir(dir.path())
        .arg("-c")
        .arg(
            "ln -s \"$PWD/victim.txt\" .V_cuda_gpu_kern_sum.csv.tmp$$ && \
             exec \"$0\" stats --report cuda_gpu_kern_sum --format csv --output V \"$1\"",
        )
        .arg(env!("CARGO_BIN_EXE_sightline"))
        .arg(fixture("sync_timing.sqlite"));
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&victim).expect("read the victim"),
        "the user's own words\n",
        "the planted link was written through"
    );
    let written = dir.path().join("V_cuda_gpu_kern_sum.csv");
    assert!(is_regular(&written), "the output is a file of its own");
}

/// A private file (mode 600) at `path`.
#[cfg(unix)]
fn private_file(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, "old\n").expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

/// The permission bits of `path`, in octal as `ls` shows them.
#[cfg(unix)]
fn mode(path: &Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bits = std::fs::metadata(path).expect("stat").permissions().mode();
    format!("{:o}", bits & 0o7777)
}

/// An output replacing a file keeps its mode: a private file stays private.
#[cfg(unix)]
#[test]
fn an_output_keeps_the_replaced_files_mode() {
    let dir = TempDir::new().expect("temp dir");
    let table = dir.path().join("t_cuda_gpu_kern_sum.csv");
    private_file(&table);
    let mut cmd = sightline();
    cmd.args([
        "stats",
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
        "--output",
    ])
    .arg(dir.path().join("t"))
    .arg(fixture("sync_timing.sqlite"));
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(mode(&table), "600", "a table loosened a private file");
}

/// A saved capture (Save as, `capture --output`) is an output like the
/// others: it keeps a private file private and never replaces a FIFO or a
/// device by a file.
#[cfg(unix)]
#[test]
fn a_saved_capture_keeps_the_mode_and_never_replaces_a_fifo_or_a_device() {
    use sightline::capture::live::LiveReport;
    let dir = TempDir::new().expect("temp dir");
    let live = LiveReport::create(4242, "sightline", "test").expect("working file");
    let saved = dir.path().join("saved.sqlite");
    private_file(&saved);
    live.save(&saved).expect("save over a file");
    assert_eq!(
        mode(&saved),
        "600",
        "a saved capture loosened a private file"
    );
    let pipe = dir.path().join("pipe.sqlite");
    if fifo(&pipe).is_some() {
        let e = live.save(&pipe).expect_err("a FIFO is refused");
        assert!(e.contains("a FIFO"), "{e}");
        assert!(!is_regular(&pipe), "the FIFO was replaced by a file");
    }
    let dev = dir.path().join("null.sqlite");
    if device(&dev).is_some() {
        let e = live.save(&dev).expect_err("a device is refused");
        assert!(e.contains("a character device"), "{e}");
        assert!(!is_regular(&dev), "the device was replaced by a file");
    }
}

/// `--output` names a prefix; a device there (`/dev/null`, meant as "no
/// output") is refused, and no output is ever written into /dev.
#[cfg(unix)]
#[test]
fn an_output_that_is_a_device_or_in_dev_is_refused() {
    let dir = TempDir::new().expect("temp dir");
    let null = dir.path().join("null");
    if device(&null).is_some() {
        let mut cmd = sightline();
        cmd.args(["stats", "--report", "cuda_gpu_kern_sum", "--output"])
            .arg(&null)
            .arg(fixture("sync_timing.sqlite"));
        let out = run(cmd);
        let written = dir.path().join("null_cuda_gpu_kern_sum.csv");
        assert!(!written.exists(), "a file was written beside the device");
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("a character device"),
            "{}",
            text(&out.stderr)
        );
    }
    // Into /dev itself (root may write there): refused, whatever the name.
    let prefix = format!("/dev/sightline-test-{}", std::process::id());
    let written = PathBuf::from(format!("{prefix}_cuda_gpu_kern_sum.csv"));
    let mut cmd = sightline();
    cmd.args([
        "stats",
        "--report",
        "cuda_gpu_kern_sum",
        "--output",
        &prefix,
    ])
    .arg(fixture("sync_timing.sqlite"));
    let out = run(cmd);
    let leaked = written.exists();
    let _ = std::fs::remove_file(&written);
    assert!(!leaked, "a file was written into /dev");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("/dev"), "{}", text(&out.stderr));
}

/// A report whose path is longer than SQLite opens is said to be so, not
/// "unable to open database file".
#[test]
fn a_path_too_long_for_sqlite_is_named_as_such() {
    let dir = TempDir::new().expect("temp dir");
    let mut deep = dir.path().to_path_buf();
    while deep.as_os_str().len() < 3_800 {
        deep.push("d".repeat(200));
    }
    std::fs::create_dir_all(&deep).expect("mkdir");
    let report = deep.join("r.sqlite");
    std::fs::copy(fixture("sync_timing.sqlite"), &report).expect("copy");
    let mut cmd = sightline();
    cmd.args(["stats", "--report", "cuda_gpu_kern_sum"])
        .arg(&report);
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("too long"),
        "{}",
        text(&out.stderr)
    );
}

/// An output named as SQLite names a report's journal, WAL or shared memory
/// would make a later read of the report take it for a writer's: refused.
#[test]
fn a_report_output_named_as_a_journal_is_refused() {
    let dir = TempDir::new().expect("temp dir");
    for suffix in ["-journal", "-wal", "-shm"] {
        let output = dir.path().join(format!("x.sqlite{suffix}"));
        let mut cmd = sightline();
        cmd.args(["synth", "--scale", "1", "--from"])
            .arg(fixture("sync_timing.sqlite"))
            .arg("--output")
            .arg(&output);
        let out = run(cmd);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains(suffix), "{}", text(&out.stderr));
        assert!(!output.exists(), "{suffix}: written");
        let live = sightline::capture::live::LiveReport::create(4242, "sightline", "test")
            .expect("working file");
        let e = live.save(&output).expect_err("a saved capture too");
        assert!(e.contains(suffix), "{e}");
        assert!(!output.exists(), "{suffix}: saved");
    }
}

/// Synth's refusal of copies past the clock names the report copied.
#[test]
fn synth_past_the_clock_names_the_source() {
    let dir = TempDir::new().expect("temp dir");
    let report = copy_of(&dir, "sync_timing.sqlite");
    let conn = Connection::open(&report).expect("open");
    conn.execute_batch(&format!(
        "UPDATE {KERNELS} SET start = -9000000000000000000 WHERE rowid = 1;
         UPDATE {KERNELS} SET [end] = 9000000000000000000 WHERE rowid = 2;"
    ))
    .expect("edit");
    drop(conn);
    let mut cmd = sightline();
    cmd.args(["synth", "--scale", "2", "--from"])
        .arg(&report)
        .arg("--output")
        .arg(dir.path().join("x2.sqlite"));
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("do not fit") && stderr.contains(&report.display().to_string()),
        "{stderr}"
    );
}

#[test]
fn loader_warnings_go_to_stderr_once_and_quiet_silences_them() {
    let dir = TempDir::new().expect("temp dir");
    let report = copy_of(&dir, "sync_timing.sqlite");
    let conn = Connection::open(&report).expect("open");
    // nsys declares the times NOT NULL: a copy without the constraint.
    conn.execute_batch(&format!(
        "CREATE TABLE k AS SELECT * FROM {KERNELS}; DROP TABLE {KERNELS};
         ALTER TABLE k RENAME TO {KERNELS};
         UPDATE {KERNELS} SET [end] = NULL WHERE rowid % 2 = 0;"
    ))
    .expect("edit");
    drop(conn);
    for command in [
        vec!["stats", "--report", "cuda_gpu_kern_sum", "--format", "csv"],
        vec!["analyze"],
    ] {
        let mut cmd = sightline();
        cmd.args(&command).arg(&report);
        let out = run(cmd);
        assert!(out.status.success(), "{command:?}: {}", text(&out.stderr));
        let stderr = text(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        assert!(
            lines
                .iter()
                .any(|l| l.contains("warning") && l.contains("kernel")),
            "{command:?}: the dropped kernels are said: {stderr}"
        );
        let mut unique = lines.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), lines.len(), "each warning once: {stderr}");
        // (analyze's findings have a "warning" severity of their own.)
        assert!(
            !text(&out.stdout).contains("sightline:") && !text(&out.stdout).contains("not loaded"),
            "stdout stays clean"
        );

        let mut cmd = sightline();
        cmd.args(&command).arg("--quiet").arg(&report);
        let quiet = run(cmd);
        assert_eq!(quiet.status.code(), out.status.code());
        assert!(quiet.stderr.is_empty(), "{}", text(&quiet.stderr));
        assert_eq!(quiet.stdout, out.stdout);
    }
    let mut cmd = sightline();
    cmd.args(["diff", "--report", "kernels"])
        .arg(fixture("sync_timing.sqlite"))
        .arg(&report);
    let out = run(cmd);
    assert!(text(&out.stderr).contains("warning"), "diff says it too");
}

/// Times of the wrong type (text, a blob, a real out of the clock's range)
/// are not times: their rows are dropped and counted in a warning, as NULL
/// times are, never read as 0 or as the number a prefix spells.
#[test]
fn times_that_are_not_numbers_are_dropped_and_said() {
    let dir = TempDir::new().expect("temp dir");
    let report = copy_of(&dir, "sync_timing.sqlite");
    let conn = Connection::open(&report).expect("open");
    let all_kernels: i64 = conn
        .query_row(&format!("SELECT count(*) FROM {KERNELS}"), [], |r| r.get(0))
        .expect("count");
    let odd_values = ["'abc'", "'12abc'", "x'0102'", "1e300", "9e999", "-9e999"];
    for (i, value) in odd_values.iter().enumerate() {
        let column = if i % 2 == 0 { "start" } else { "[end]" };
        conn.execute_batch(&format!(
            "UPDATE {KERNELS} SET {column} = {value}
             WHERE rowid = (SELECT rowid FROM {KERNELS} ORDER BY rowid LIMIT 1 OFFSET {i});
             UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET {column} = {value}
             WHERE rowid = (SELECT rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY rowid
                            LIMIT 1 OFFSET {i});"
        ))
        .expect("edit");
    }
    drop(conn);
    let (instances, _) = kern_sum(&report);
    assert_eq!(
        instances,
        all_kernels as u64 - odd_values.len() as u64,
        "kernels with odd times are not loaded"
    );
    let mut cmd = sightline();
    cmd.args(["stats", "--report", "cuda_api_sum", "--format", "csv"])
        .arg(&report);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    for what in ["kernels", "CUDA API calls"] {
        assert!(
            stderr.contains(&format!("{} {what}", odd_values.len()))
                && stderr.contains("not a time"),
            "the dropped {what} are counted: {stderr}"
        );
    }
}

#[test]
fn sums_past_i64_are_exact_not_clamped() {
    let dir = TempDir::new().expect("temp dir");
    let report = copy_of(&dir, "sync_timing.sqlite");
    let conn = Connection::open(&report).expect("open");
    // Extreme timestamps: every kernel a quarter of the i64 clock long.
    conn.execute_batch(&format!(
        "UPDATE {KERNELS} SET start = rowid, [end] = rowid + 2305843009213693952;"
    ))
    .expect("edit");
    let expected: i128 = conn
        .prepare(&format!("SELECT start, [end] FROM {KERNELS}"))
        .expect("prepare")
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
        .expect("query")
        .map(|r| r.map(|(s, e)| e as i128 - s as i128).expect("row"))
        .sum();
    drop(conn);
    assert!(expected > i64::MAX as i128, "the sum passes i64");
    let (_, total) = kern_sum(&report);
    assert_eq!(total, expected, "every digit of the total");
}

#[test]
fn fifos_devices_and_proc_files_are_named_not_read() {
    let dir = TempDir::new().expect("temp dir");
    let pipe = dir.path().join("pipe.sqlite");
    let mut cases: Vec<(PathBuf, &str)> = vec![
        (PathBuf::from("/dev/zero"), "a character device"),
        (PathBuf::from("/proc/self/status"), "pseudo-file"),
    ];
    if fifo(&pipe).is_some() {
        cases.push((pipe, "a FIFO"));
    }
    for (path, phrase) in cases {
        for command in [&["bench"][..], &["stats"], &["analyze"]] {
            let mut cmd = sightline();
            cmd.args(command).arg(&path);
            let out = run(cmd);
            assert_eq!(out.status.code(), Some(2), "{command:?} {}", path.display());
            let stderr = text(&out.stderr);
            assert!(
                stderr.contains(phrase),
                "{command:?} {}: {stderr}",
                path.display()
            );
            assert!(!stderr.contains("empty"), "{stderr}");
        }
    }
}

#[test]
fn a_failing_stdout_is_one_line_and_a_closed_pipe_is_quiet() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("note: no /dev/full here; skipped");
        return;
    };
    let report = fixture("sync_timing.sqlite");
    // --quiet: the loader's warnings (if any) are not what is counted here.
    for command in [
        &["bench", "--json"][..],
        &["stats", "--quiet"],
        &["analyze", "--quiet"],
        &["diff", "--quiet"],
    ] {
        let mut cmd = sightline();
        cmd.args(command).arg(&report);
        if command[0] == "diff" {
            cmd.arg(&report);
        }
        cmd.stdout(full.try_clone().expect("clone"));
        cmd.stderr(Stdio::piped()).stdin(Stdio::null());
        let out = cmd.output().expect("run");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{command:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{command:?}: {stderr}");
        assert!(stderr.contains("No space left"), "{command:?}: {stderr}");
    }
    // A reader that has gone: nothing said.
    let mut cmd = sightline();
    cmd.args(["bench"]).arg(&report);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert!(
        !text(&out.stderr).contains("panicked") && out.stderr.is_empty(),
        "{}",
        text(&out.stderr)
    );
}

/// Builds a stub shared library named `name` in `dir` exporting `symbols`
/// (None where there is no C compiler).
fn stub_library(dir: &Path, name: &str, symbols: &[&str]) -> Option<()> {
    let source = dir.join(format!("{name}.c"));
    let body: String = symbols
        .iter()
        .map(|s| format!("int {s}(void) {{ return 999; }}\n"))
        .collect();
    std::fs::write(
        &source,
        format!("int stub_only(void) {{ return 0; }}\n{body}"),
    )
    .ok()?;
    Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.join(name))
        .arg(&source)
        .status()
        .ok()
        .filter(|s| s.success())
        .map(|_| ())
}

#[test]
fn cuda_libraries_without_their_symbols_get_one_line_not_a_panic() {
    let dir = TempDir::new().expect("temp dir");
    if stub_library(dir.path(), "libcuda.so", &[]).is_none() {
        eprintln!("note: no C compiler; the stub library case is skipped");
        return;
    }
    let mut cmd = sightline();
    cmd.args(["run", "sync-timing"])
        .env("LD_LIBRARY_PATH", dir.path());
    let out = run(cmd);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cuInit") && stderr.contains("libcuda.so"),
        "names the library and the symbol: {stderr}"
    );

    // A driver that has what is checked, and a CUPTI stub without its functions.
    let driver = sightline::capture::environment::DRIVER_SYMBOLS;
    let both = TempDir::new().expect("temp dir");
    stub_library(both.path(), "libcuda.so", driver).expect("cc worked above");
    stub_library(both.path(), "libcupti.so", &[]).expect("cc worked above");
    let mut cmd = sightline();
    cmd.args(["capture", "sync-timing", "--output"])
        .arg(both.path().join("c.sqlite"))
        .env("LD_LIBRARY_PATH", both.path());
    let out = run(cmd);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("cuptiGetVersion") && stderr.contains("libcupti.so"),
        "{stderr}"
    );
}

#[test]
fn small_messages_say_what_is_wrong() {
    let dir = TempDir::new().expect("temp dir");
    // A mistyped command gets the one meant.
    for (typed, meant) in [("stas", "stats"), ("analyse", "analyze")] {
        let mut cmd = sightline();
        cmd.current_dir(dir.path())
            .args([typed])
            .arg(fixture("sync_timing.sqlite"));
        let out = run(cmd);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            text(&out.stderr).contains(&format!("did you mean '{meant}'")),
            "{}",
            text(&out.stderr)
        );
    }
    // A number too big for the clock is named.
    let mut cmd = sightline();
    cmd.args(["stats", "--range", "0:99999999999999999999"])
        .arg(fixture("sync_timing.sqlite"));
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("out of range"),
        "{}",
        text(&out.stderr)
    );
    // A damaged page size in the header is said, not "not an SQLite file".
    let bad = copy_of(&dir, "sync_timing.sqlite");
    let mut bytes = std::fs::read(&bad).expect("read");
    bytes[16] = 0x03;
    bytes[17] = 0x00;
    std::fs::write(&bad, bytes).expect("write");
    let mut cmd = sightline();
    cmd.args(["stats"]).arg(&bad);
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("page size"),
        "{}",
        text(&out.stderr)
    );
}

#[cfg(unix)]
#[test]
fn a_report_whose_name_is_not_utf8_opens() {
    use std::os::unix::ffi::OsStrExt;
    let dir = TempDir::new().expect("temp dir");
    let name = std::ffi::OsStr::from_bytes(b"r\xff\xfe.sqlite");
    let path = dir.path().join(name);
    std::fs::copy(fixture("sync_timing.sqlite"), &path).expect("copy");
    let trace = sightline::loader::load(&path, &mut |_| {}, &Default::default())
        .expect("a non-UTF-8 name loads");
    assert!(!trace.kernels.spans.is_empty());
}

#[test]
fn a_lesson_whose_report_is_a_directory_says_so() {
    let dir = TempDir::new().expect("temp dir");
    std::fs::create_dir(dir.path().join("folder.sqlite")).expect("mkdir");
    let lesson = dir.path().join("l.toml");
    let e = sightline::lessons::parse(
        "title = \"t\"\nreport = \"folder.sqlite\"\n\n[[step]]\ntext = \"x\"\n",
        &lesson,
    )
    .expect_err("a directory is no report");
    assert!(e.message.contains("a directory"), "{e}");
    assert!(!e.message.contains("not found"), "{e}");
    // And a lesson file that is a FIFO is refused before it is read.
    let pipe = dir.path().join("pipe.toml");
    if fifo(&pipe).is_some() {
        let e = sightline::lessons::load(&pipe).expect_err("a FIFO is no lesson");
        assert!(e.message.contains("a FIFO"), "{e}");
    }
}

/// An output that cannot be written after others were (a full disk, a name taken by a folder)
/// says which files of the run are there, each whole; the first failing says nothing more.
#[test]
fn a_failed_output_names_the_ones_written_before_it() {
    let dir = TempDir::new().expect("a temporary folder");
    let prefix = dir.path().join("out");
    // The second report's file cannot be made: a folder holds its name.
    let blocked = dir.path().join("out_nvtx_sum.csv");
    std::fs::create_dir(&blocked).expect("a folder in the way");
    let mut cmd = sightline();
    cmd.arg("stats")
        .arg(fixture("sync_timing.sqlite"))
        .args([
            "--report",
            "cuda_gpu_kern_sum,nvtx_sum",
            "--format",
            "csv",
            "--output",
        ])
        .arg(&prefix);
    let out = run(cmd);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    let first = dir.path().join("out_cuda_gpu_kern_sum.csv");
    assert!(first.is_file(), "the first table was written");
    assert!(
        stderr.contains("written before it, each whole")
            && stderr.contains(&first.display().to_string()),
        "{stderr}"
    );
}
