//! Bad input: every damaged, foreign or odd file gives a clear error naming the
//! file and the problem (or, when it can be read, a trace with a warning), never
//! a panic or a hang, both from the loader and from the command line.
//!
//! Bad files are built in temporary directories from copies of the fixtures;
//! the fixtures themselves are only ever read.

mod common;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use sightline::analysis::stats::{Report, compute};
use sightline::loader::{LoadError, Problem, load};
use sightline::model::Trace;
use tempfile::TempDir;

/// A command taking longer than this on a small file is a hang.
const CLI_TIME_LIMIT: Duration = Duration::from_secs(60);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.sqlite"))
}

/// A private copy of a fixture, to damage.
fn copy_of(dir: &TempDir, name: &str) -> PathBuf {
    let path = dir.path().join(format!("{name}-copy.sqlite"));
    std::fs::copy(fixture(name), &path).unwrap();
    path
}

/// Edits a copy with SQL (through a normal read-write connection).
fn edit(path: &Path, sql: &str) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
}

/// Removes the NOT NULL constraints of `table` (nsys declares many), so a test
/// can put NULLs where a real report never has them.
fn drop_not_null(table: &str) -> String {
    format!(
        "CREATE TABLE tmp_copy AS SELECT * FROM {table}; DROP TABLE {table};
         ALTER TABLE tmp_copy RENAME TO {table};"
    )
}

fn try_load(path: &Path) -> Result<Trace, LoadError> {
    let cancel = AtomicBool::new(false);
    load(path, &mut |_| {}, &cancel)
}

/// The loader refuses `path` with `problem`, in a message that names the file
/// and contains `phrase`; so do the commands.
fn assert_rejected(path: &Path, problem: fn(&Problem) -> bool, phrase: &str) {
    let err = match try_load(path) {
        Ok(t) => panic!(
            "{}: loaded ({} events), expected an error",
            path.display(),
            t.event_count()
        ),
        Err(e) => e,
    };
    assert!(
        problem(&err.problem),
        "{}: unexpected problem {:?}",
        path.display(),
        err.problem
    );
    let message = err.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "message does not name the file: {message}"
    );
    assert!(
        message.contains(phrase),
        "message `{message}` lacks `{phrase}`"
    );
    assert_cli_rejects(path, phrase);
}

/// Runs sightline with a time limit; returns (exit code, stderr).
fn run_cli(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sightline");
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if t0.elapsed() > CLI_TIME_LIMIT => {
                let _ = child.kill();
                panic!("sightline {args:?} hung (over {CLI_TIME_LIMIT:?})");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for sightline: {e}"),
        }
    }
    let out = child.wait_with_output().expect("sightline output");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_cli_rejects(path: &Path, phrase: &str) {
    let file = path.to_str().unwrap();
    let commands = [
        vec!["bench", file],
        vec!["stats", file, "--report", "cuda_api_sum"],
    ];
    for args in commands {
        let (code, stderr) = run_cli(&args);
        assert_eq!(
            code,
            Some(2),
            "sightline {args:?}: exit code; stderr: {stderr}"
        );
        assert!(
            !stderr.contains("panicked"),
            "sightline {args:?} panicked: {stderr}"
        );
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(
            lines.len(),
            1,
            "sightline {args:?}: want one line, got: {stderr}"
        );
        assert!(lines[0].starts_with("sightline"), "{stderr}");
        assert!(
            lines[0].contains(file),
            "sightline {args:?}: file not named: {stderr}"
        );
        assert!(
            lines[0].contains(phrase),
            "sightline {args:?}: `{phrase}` not said: {stderr}"
        );
    }
}

fn is_not_sqlite(p: &Problem) -> bool {
    matches!(p, Problem::NotSqlite)
}

fn is_corrupt(p: &Problem) -> bool {
    matches!(p, Problem::Corrupt(_))
}

fn is_not_nsys(p: &Problem) -> bool {
    matches!(p, Problem::NotNsysReport(_))
}

#[test]
fn a_text_file_is_not_sqlite() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("notes.sqlite");
    std::fs::write(
        &path,
        "these are my profiling notes, not a report\n".repeat(100),
    )
    .unwrap();
    assert_rejected(&path, is_not_sqlite, "not an SQLite file");
}

#[test]
fn png_bytes_are_not_sqlite() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("timeline.png");
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0\0\0\x01\0\x08\x06\0\0\0".to_vec();
    png.extend((0..4096u32).map(|i| (i * 31 % 251) as u8));
    std::fs::write(&path, png).unwrap();
    assert_rejected(&path, is_not_sqlite, "not an SQLite file");
}

#[test]
fn a_file_shorter_than_the_header_is_not_sqlite() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("short.sqlite");
    std::fs::write(&path, b"SQLite form").unwrap();
    assert_rejected(&path, is_not_sqlite, "not an SQLite file");
}

#[test]
fn an_empty_file_says_so() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("empty.sqlite");
    std::fs::write(&path, b"").unwrap();
    assert_rejected(&path, |p| matches!(p, Problem::Empty), "the file is empty");
}

#[test]
fn a_directory_says_so() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("report.sqlite");
    std::fs::create_dir(&path).unwrap();
    assert_rejected(
        &path,
        |p| matches!(p, Problem::IsDirectory),
        "is a directory",
    );
}

#[test]
fn a_missing_file_says_so() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("nowhere.sqlite");
    assert_rejected(&path, |p| matches!(p, Problem::NotFound), "no such file");
}

fn truncate(path: &Path, len: u64) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(len).unwrap();
}

#[test]
fn a_report_cut_in_half_is_damaged() {
    let dir = TempDir::new().unwrap();
    for name in ["sync_timing", "streams"] {
        let path = copy_of(&dir, name);
        let len = std::fs::metadata(&path).unwrap().len();
        truncate(&path, len / 2);
        assert_rejected(&path, is_corrupt, "damaged");
    }
}

#[test]
fn a_report_cut_at_4_kib_is_damaged() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    truncate(&path, 4096);
    assert_rejected(&path, is_corrupt, "damaged");
}

fn overwrite(path: &Path, offset: u64, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(offset)).unwrap();
    file.write_all(bytes).unwrap();
}

#[test]
fn a_garbled_page_of_an_event_table_is_damage() {
    let dir = TempDir::new().unwrap();
    for table in ["CUPTI_ACTIVITY_KIND_RUNTIME", "OSRT_API", "StringIds"] {
        let path = copy_of(&dir, "sync_timing");
        common::garble_table(&path, table);
        assert_rejected(&path, is_corrupt, "damaged");
    }
}

#[test]
fn garbage_in_the_middle_of_a_report_never_panics() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "streams");
    let len = std::fs::metadata(&path).unwrap().len();
    let garbage: Vec<u8> = (0..16384u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    overwrite(&path, len / 2, &garbage);
    // Wherever the damage lands, the answer is a trace or a clear error.
    match try_load(&path) {
        Ok(t) => assert!(t.event_count() > 0),
        Err(e) => {
            assert!(is_corrupt(&e.problem), "{e}");
            assert_cli_rejects(&path, "damaged");
        }
    }
}

#[test]
fn an_sqlite_file_from_another_program_is_not_a_report() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("contacts.sqlite");
    edit(
        &path,
        "CREATE TABLE contacts (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, phone TEXT);
         INSERT INTO contacts (name, phone) VALUES ('Ada', '555-0100'), ('Grace', '555-0199');",
    );
    assert_rejected(&path, is_not_nsys, "not an Nsight Systems report");
}

#[test]
fn an_empty_sqlite_database_is_not_a_report() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("blank.sqlite");
    edit(&path, "CREATE TABLE t (x); DROP TABLE t;");
    assert_rejected(&path, is_not_nsys, "not an Nsight Systems report");
}

#[test]
fn a_report_without_string_ids_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(&path, "DROP TABLE StringIds;");
    assert_rejected(&path, is_not_nsys, "StringIds");
}

#[test]
fn a_report_without_the_kernel_table_loads_without_kernels() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(&path, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;");
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(trace.kernels.spans.len(), 0);
    assert!(!trace.cuda_api.spans.is_empty(), "the rest still loads");
    assert!(!trace.memcpys.spans.is_empty(), "the rest still loads");
}

#[test]
fn a_report_without_the_kernel_table_warns() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(&path, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;");
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("CUPTI_ACTIVITY_KIND_KERNEL")),
        "warnings: {:?}",
        trace.warnings
    );
}

#[test]
fn a_kernel_table_without_a_required_column_warns() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN demangledName;",
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(trace.kernels.spans.len(), 0);
    assert!(
        trace.warnings.iter().any(|w| w.contains("demangledName")),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn events_ending_before_they_start_load_with_a_warning() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 1000 WHERE rowid % 10 = 0;
         UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 5 WHERE rowid % 3 = 0;",
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    let original = try_load(&fixture("sync_timing")).unwrap();
    assert_eq!(trace.cuda_api.spans.len(), original.cuda_api.spans.len());
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("CUDA API calls end before they start")),
        "{:?}",
        trace.warnings
    );
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("kernels end before they start")),
        "{:?}",
        trace.warnings
    );
    for s in [&trace.cuda_api.spans, &trace.kernels.spans] {
        assert!(
            (0..s.len()).all(|i| s.duration(i) >= 0),
            "a negative duration survived"
        );
    }
}

#[test]
fn nulls_where_nsys_never_writes_them_do_not_stop_a_load() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        &format!(
            "{} {} {}
             UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = NULL, streamId = NULL, gridX = NULL
                WHERE rowid % 4 = 0;
             UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = NULL, globalTid = NULL WHERE rowid % 5 = 0;
             UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = NULL, copyKind = NULL;",
            drop_not_null("CUPTI_ACTIVITY_KIND_KERNEL"),
            drop_not_null("CUPTI_ACTIVITY_KIND_RUNTIME"),
            drop_not_null("CUPTI_ACTIVITY_KIND_MEMCPY"),
        ),
    );
    let original = try_load(&fixture("sync_timing")).unwrap();
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(trace.kernels.spans.len(), original.kernels.spans.len());
    assert_eq!(trace.cuda_api.spans.len(), original.cuda_api.spans.len());
    assert_eq!(trace.memcpys.spans.len(), original.memcpys.spans.len());
}

#[test]
fn null_timestamps_are_not_read_as_time_zero() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        &format!(
            "{} UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = NULL WHERE rowid = 1;",
            drop_not_null("CUPTI_ACTIVITY_KIND_KERNEL")
        ),
    );
    let original = try_load(&fixture("sync_timing")).unwrap();
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        trace.info.time_range, original.info.time_range,
        "a NULL start moved the trace start to 0"
    );
    assert!(
        !trace.warnings.is_empty(),
        "no warning about the NULL timestamp"
    );
}

#[test]
fn unknown_enum_values_load_with_visible_labels() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "streams");
    edit(
        &path,
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 99 WHERE rowid = 1;
         UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET syncType = 42 WHERE rowid = 1;
         UPDATE NVTX_EVENTS SET eventType = 999 WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType = 59);",
    );
    let original = try_load(&fixture("streams")).unwrap();
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    let names = |s: &sightline::model::SpanColumns| -> Vec<String> {
        s.name.iter().map(|&n| trace.name(n).to_string()).collect()
    };
    assert!(names(&trace.memcpys.spans).contains(&"[CUDA memcpy Unknown (99)]".to_string()));
    assert!(names(&trace.syncs.spans).contains(&"Unknown sync (42)".to_string()));
    assert_eq!(
        trace.memcpys.copy_kind.iter().filter(|&&k| k == 99).count(),
        1
    );
    assert_eq!(
        trace.syncs.sync_type.iter().filter(|&&k| k == 42).count(),
        1
    );
    // An NVTX row of an unknown type is not an event the viewer can draw.
    assert_eq!(trace.nvtx.spans.len(), original.nvtx.spans.len() - 1);
}

#[test]
fn unknown_nvtx_event_types_are_reported() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "streams");
    edit(
        &path,
        "UPDATE NVTX_EVENTS SET eventType = 999 WHERE eventType = 59;",
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        trace.warnings.iter().any(|w| w.contains("999")),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn out_of_range_values_are_clamped_not_panicked_on() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = -1, blockX = 9223372036854775807,
            registersPerThread = 'lots', streamId = -7, deviceId = 1e300 WHERE rowid % 2 = 0;
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = -1, returnValue = 9223372036854775807
            WHERE rowid % 3 = 0;
         UPDATE StringIds SET id = id + 4611686018427387904 WHERE id % 7 = 0;",
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(!trace.kernels.spans.is_empty());
}

#[test]
fn extreme_timestamps_do_not_overflow() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = -9223372036854775808, end = 9223372036854775807
            WHERE rowid = 2;",
    );
    let result = std::panic::catch_unwind(|| try_load(&path).map(|t| t.cuda_api.spans.len()));
    match result {
        Ok(Ok(n)) => assert!(n > 0),
        Ok(Err(e)) => assert!(e.to_string().contains(&path.display().to_string())),
        Err(_) => panic!("the loader panicked on extreme timestamps"),
    }
}

#[test]
fn a_five_megabyte_kernel_name_loads() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        "UPDATE StringIds SET value = 'k' || hex(zeroblob(2621440))
            WHERE id = (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1);",
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    let longest = trace
        .kernels
        .spans
        .name
        .iter()
        .map(|&n| trace.name(n).len())
        .max()
        .unwrap_or(0);
    assert_eq!(longest, 1 + 5 * 1024 * 1024);
}

#[test]
fn invalid_utf8_in_strings_loads() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        "UPDATE StringIds SET value = CAST(x'66ff6fc328' AS TEXT)
            WHERE id = (SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1);",
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        trace
            .cuda_api
            .spans
            .name
            .iter()
            .any(|&n| trace.name(n).contains('\u{FFFD}'))
    );
}

fn siblings(path: &Path) -> Vec<String> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&name) && *n != name)
        .collect()
}

#[test]
fn loading_never_writes_beside_or_into_the_report() {
    for name in ["sync_timing", "streams", "torch_work"] {
        let path = fixture(name);
        let before = std::fs::read(&path).unwrap();
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(trace.event_count() > 0);
        assert_eq!(std::fs::read(&path).unwrap(), before, "{name} changed");
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            modified
        );
        let extra = siblings(&path);
        assert!(
            extra
                .iter()
                .all(|n| !n.ends_with("-journal") && !n.ends_with("-wal") && !n.ends_with("-shm")),
            "{name}: files appeared beside the report: {extra:?}"
        );
    }
}

#[test]
fn a_report_in_wal_mode_loads_read_only() {
    // A report someone opened in a tool that switched it to WAL: the loader
    // must still read it without creating -wal/-shm files.
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    {
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    }
    assert!(siblings(&path).is_empty(), "{:?}", siblings(&path));
    let before = std::fs::read(&path).unwrap();
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(!trace.kernels.spans.is_empty());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(siblings(&path).is_empty(), "{:?}", siblings(&path));
}

#[test]
fn odd_file_names_are_named_correctly_in_errors() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("my report #1 (50%)?.sqlite");
    std::fs::copy(fixture("sync_timing"), &path).unwrap();
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(trace.event_count() > 0, "percent-escaping of the URI");
    let bad = dir.path().join("bad #2 ?.sqlite");
    std::fs::write(&bad, b"nope").unwrap();
    assert_rejected(&bad, is_not_sqlite, "not an SQLite file");
}

// --- Regressions found in review: odd values that once gave wrong numbers. ---

/// Every report on `trace`: none may panic, whatever the data.
fn all_reports(trace: &Trace) {
    for report in Report::EVERY {
        let _ = compute(trace, report, None).to_csv();
    }
}

/// A column of a report as text, row by row.
fn column(trace: &Trace, report: Report, name: &str) -> Vec<String> {
    let table = compute(trace, report, None);
    let Some(c) = table.columns.iter().position(|h| h == name) else {
        return Vec::new();
    };
    table.rows.iter().map(|r| r[c].to_string()).collect()
}

#[test]
fn null_correlation_ids_pair_nothing() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        &format!(
            "{} {} UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = NULL;
             UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL;",
            drop_not_null("CUPTI_ACTIVITY_KIND_RUNTIME"),
            drop_not_null("CUPTI_ACTIVITY_KIND_KERNEL")
        ),
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    // NULL never joins in nsys's SQL: no launch pairs with any kernel.
    assert!(
        compute(&trace, Report::CudaKernExecSum, None)
            .rows
            .is_empty()
    );
    all_reports(&trace);
}

#[test]
fn extreme_rowids_lose_no_rows() {
    let original = try_load(&fixture("streams")).unwrap();
    for rowid in ["9223372036854775807", "-9223372036854775808"] {
        let dir = TempDir::new().unwrap();
        let path = copy_of(&dir, "streams");
        // A copy of one kernel row under an extreme rowid: one kernel more.
        edit(
            &path,
            &format!(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (rowid, {cols})
                 SELECT {rowid}, {cols} FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = 1;",
                cols = "start, end, deviceId, contextId, greenContextId, streamId, correlationId,
                    globalPid, demangledName, shortName, mangledName, launchType, cacheConfig,
                    registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
                    staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,
                    localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId,
                    sharedMemoryLimitConfig"
            ),
        );
        let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            trace.kernels.spans.len(),
            original.kernels.spans.len() + 1,
            "rowid {rowid}"
        );
    }
}

#[test]
fn copies_of_unknown_kind_are_left_out_of_the_summaries_as_nsys_does() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "streams");
    edit(
        &path,
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 99 WHERE rowid IN (1, 2, 3);",
    );
    let original = try_load(&fixture("streams")).unwrap();
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    // Still on the timeline...
    assert_eq!(trace.memcpys.spans.len(), original.memcpys.spans.len());
    // ...but not in the memory summaries (nsys joins with ENUM_CUDA_MEMCPY_OPER).
    for report in [
        Report::CudaGpuMemTimeSum,
        Report::CudaGpuMemSizeSum,
        Report::CudaApiGpuSum,
    ] {
        let csv = compute(&trace, report, None).to_csv();
        assert!(!csv.contains("Unknown (99)"), "{report:?}: {csv}");
    }
    let count = |t: &Trace| -> i64 {
        column(t, Report::CudaGpuMemTimeSum, "Count")
            .iter()
            .map(|c| c.parse::<i64>().unwrap_or(0))
            .sum()
    };
    assert_eq!(count(&trace), count(&original) - 3);
}

#[test]
fn scaled_copies_of_an_unended_range_add_up() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        &format!(
            "{} UPDATE NVTX_EVENTS SET end = NULL WHERE rowid = (
                SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType = 59);",
            drop_not_null("NVTX_EVENTS")
        ),
    );
    let single = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(single.nvtx.unended.iter().any(|&u| u));
    let doubled_path = dir.path().join("x2.sqlite");
    let (code, stderr) = run_cli(&[
        "synth",
        "--from",
        path.to_str().unwrap(),
        "--scale",
        "2",
        "--output",
        doubled_path.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let doubled = try_load(&doubled_path).unwrap_or_else(|e| panic!("{e}"));
    let totals = |t: &Trace| column(t, Report::NvtxSum, "Total Time (ns)");
    let twice: Vec<String> = totals(&single)
        .iter()
        .map(|v| (2 * v.parse::<i64>().unwrap()).to_string())
        .collect();
    let mut got = totals(&doubled);
    let mut want = twice;
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn extreme_timestamps_survive_every_report_and_command() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9000000000000000000 WHERE rowid = 1;
         UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = 9000000000000000000 WHERE rowid = 2;",
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    all_reports(&trace);
    let file = path.to_str().unwrap();
    let (code, stderr) = run_cli(&["bench", file]);
    assert_eq!(code, Some(0), "{stderr}");
    // Two copies of an 18e18 ns trace do not fit the clock: a clear refusal.
    let out = dir.path().join("x2.sqlite");
    let (code, stderr) = run_cli(&[
        "synth",
        "--from",
        file,
        "--scale",
        "2",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("do not fit"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn many_processes_and_overlapping_ranges_load() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    // Every API call in its own process, and 3000 start/end ranges that all
    // overlap on one thread: both once made the loader quadratic.
    edit(
        &path,
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = (rowid << 24) + rowid;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
         INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
         SELECT 1000 + i, 10000000 + i, 60, 'overlap', 281474976710656 + (553 << 24) + 553, 0 FROM n;",
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(trace.processes.len() > 200);
    // 3000 overlapping ranges, levels stored in a byte: the lanes are capped.
    let deepest = trace
        .threads
        .iter()
        .flat_map(|t| t.nvtx.iter().map(|n| n.track.depth))
        .max();
    assert_eq!(deepest, Some(u8::MAX));
    all_reports(&trace);
}

#[test]
fn null_names_read_as_empty_not_as_string_zero() {
    let dir = TempDir::new().unwrap();
    let path = copy_of(&dir, "sync_timing");
    edit(
        &path,
        &format!(
            "{} UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = NULL WHERE rowid <= 5;",
            drop_not_null("CUPTI_ACTIVITY_KIND_RUNTIME")
        ),
    );
    let trace = try_load(&path).unwrap_or_else(|e| panic!("{e}"));
    let names = column(&trace, Report::CudaApiSum, "Name");
    assert!(names.iter().any(|n| n.is_empty()), "{names:?}");
    let string_zero: String = Connection::open(&path)
        .unwrap()
        .query_row("SELECT value FROM StringIds WHERE id = 0", [], |r| r.get(0))
        .unwrap();
    assert!(!names.contains(&string_zero), "{names:?}");
}

/// Every table the loader reads says so when a column it needs is missing,
/// or when a column it reads is not there and is taken as unknown: a report
/// that loses its GPUs, its CUDA event records, its streams' priorities or
/// its graph records without a word would be silently wrong (occupancy without
/// the SM's limits, a sync on an event that seems to wait on stream 0).
#[test]
fn every_table_read_warns_about_its_missing_columns() {
    let cases: [(&str, &str, &str); 6] = [
        ("sync_timing", "TARGET_INFO_GPU", "id"),
        ("sync_timing", "TARGET_INFO_GPU", "maxWarpsPerSm"),
        ("sync_timing", "CUPTI_ACTIVITY_KIND_CUDA_EVENT", "streamId"),
        ("sync_timing", "CUPTI_ACTIVITY_KIND_CUDA_EVENT", "eventId"),
        ("sync_timing", "TARGET_INFO_CUDA_STREAM", "priority"),
        ("torch_work", "CUDA_GRAPH_NODE_EVENTS", "start"),
    ];
    for (fixture_name, table, column) in cases {
        let dir = TempDir::new().unwrap();
        let path = copy_of(&dir, fixture_name);
        edit(&path, &format!("ALTER TABLE {table} DROP COLUMN {column};"));
        let trace = try_load(&path).unwrap_or_else(|e| panic!("{table}.{column}: {e}"));
        assert!(
            trace
                .warnings
                .iter()
                .any(|w| w.contains(table) && w.contains(column)),
            "{table} without `{column}` loaded without a word: {:?}",
            trace.warnings
        );
    }
}
