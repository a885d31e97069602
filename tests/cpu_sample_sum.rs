//! `sightline stats --report cpu_sample_sum` (ours) on real recordings:
//! its counts are SQL's over the file, `--range` and `--nvtx` restrict it as
//! they do the other reports, and it says it is not nsys's.

mod common;

use std::process::Command;

fn sightline(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("runs")
}

/// The CSV's rows as field lists (header first).
fn csv(out: &std::process::Output) -> Vec<Vec<String>> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(common::csv_fields)
        .collect()
}

fn column(rows: &[Vec<String>], name: &str) -> usize {
    rows[0]
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", rows[0]))
}

fn sum(rows: &[Vec<String>], name: &str) -> u64 {
    let c = column(rows, name);
    rows[1..]
        .iter()
        .map(|r| r[c].parse::<u64>().expect("a count"))
        .sum()
}

fn db(name: &str) -> rusqlite::Connection {
    rusqlite::Connection::open(common::fixture(name)).expect("open")
}

/// Every sample once as someone's self sample: each thread's Python samples
/// where it has them with frames, its native ones else (nsys's own threads);
/// the top function is the program's own, shown as Python.
#[test]
fn the_whole_reports_samples_are_sqls() {
    let file = common::fixture("cpu_only_py/cpu_only.sqlite");
    let file = file.to_str().expect("path");
    let rows = csv(&sightline(&[
        "stats",
        "-q",
        file,
        "--report",
        "cpu_sample_sum",
        "--format",
        "csv",
    ]));
    let marks: u64 = db("cpu_only_py/cpu_only.sqlite")
        .query_row(
            "SELECT (SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34) + \
             (SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid NOT IN \
              (SELECT globalTid FROM NVTX_EVENTS WHERE eventType = 34 AND jsonText IS NOT NULL))",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(sum(&rows, "Self Samples"), marks);
    let (kind, function) = (column(&rows, "Kind"), column(&rows, "Function"));
    assert_eq!(rows[1][kind], "Python");
    assert_eq!(rows[1][function], "hash_worker", "the hasher thread's loop");
}

/// `--range` keeps the samples taken in it (SQL over the native samples of
/// a report without Python frames).
#[test]
fn a_range_keeps_the_samples_taken_in_it() {
    let name = "native_burn/native_burn.sqlite";
    let file = common::fixture(name);
    let file = file.to_str().expect("path");
    let conn = db(name);
    let (lo, hi): (i64, i64) = conn
        .query_row(
            "SELECT min(start), max(start) FROM COMPOSITE_EVENTS",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("bounds");
    let mid = lo + (hi - lo) / 2;
    let expected: u64 = conn
        .query_row(
            "SELECT count(*) FROM COMPOSITE_EVENTS WHERE start >= ?1 AND start < ?2",
            [lo, mid],
            |r| r.get(0),
        )
        .expect("count");
    let rows = csv(&sightline(&[
        "stats",
        "-q",
        file,
        "--report",
        "cpu_sample_sum",
        "--format",
        "csv",
        "--range",
        &format!("{lo}:{mid}"),
    ]));
    assert!(expected > 0);
    assert_eq!(sum(&rows, "Self Samples"), expected);
}

/// `--nvtx NAME` of a range with one instance is `--range` over it.
#[test]
fn nvtx_of_one_instance_is_its_range() {
    let name = "torch_loop_py/torch_loop.sqlite";
    let file = common::fixture(name);
    let file = file.to_str().expect("path");
    let (s, e): (i64, i64) = db(name)
        .query_row(
            "SELECT start, end FROM NVTX_EVENTS WHERE text = 'step 5'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("step 5");
    let args = [
        "stats",
        "-q",
        file,
        "--report",
        "cpu_sample_sum",
        "--format",
        "csv",
    ];
    let by_nvtx = sightline(&[&args[..], &["--nvtx", "step 5"]].concat());
    let by_range = sightline(&[&args[..], &["--range", &format!("{s}:{e}")]].concat());
    assert_eq!(csv(&by_nvtx), csv(&by_range));
    assert!(csv(&by_nvtx).len() > 1, "samples in step 5");
}

#[test]
fn it_says_it_is_ours_and_a_report_without_samples_is_empty() {
    let file = common::fixture("sync_timing.sqlite");
    let file = file.to_str().expect("path");
    let out = sightline(&["stats", "-q", file, "--report", "cpu_sample_sum"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("not nsys's"), "{text}");
    let rows = csv(&sightline(&[
        "stats",
        "-q",
        file,
        "--report",
        "cpu_sample_sum",
        "--format",
        "csv",
    ]));
    assert!(rows.len() <= 1, "no samples, no rows: {rows:?}");
}
