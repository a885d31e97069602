//! `sightline diff` and `analysis::compare`: each side's numbers are that report's
//! own `stats` numbers (compared with the computed summaries, never typed numbers),
//! one-sided names have empty cells, rows follow the order rule, the regression
//! gate trips on a slowed copy and only then; and the viewer without a display
//! says so and exits 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::AtomicBool;

use rusqlite::Connection;
use sightline::analysis::compare::{COLUMNS, Diff, DiffReport, diff};
use sightline::analysis::stats::{Cell, Table, compute};
use sightline::model::Trace;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.sqlite"))
}

fn load(path: &Path) -> Trace {
    let cancel = AtomicBool::new(false);
    match sightline::loader::load(path, &mut |_| {}, &cancel) {
        Ok(t) => t,
        Err(e) => panic!("load {} failed: {e}", path.display()),
    }
}

fn sightline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// One row of a stats report, read through its header (this is the test's
/// independent reading; the diff itself joins on typed keys).
#[derive(Debug)]
struct StatsRow {
    name: String,
    style: Option<String>,
    instances: Cell,
    total: Cell,
    avg: Cell,
}

fn column(table: &Table, names: &[&str]) -> usize {
    table
        .columns
        .iter()
        .position(|c| names.contains(&c.as_str()))
        .unwrap_or_else(|| panic!("no column {names:?} in {:?}", table.columns))
}

fn stats_rows(trace: &Trace, report: DiffReport) -> Vec<StatsRow> {
    let table = compute(trace, report.source(), None);
    if table.rows.is_empty() {
        return Vec::new();
    }
    let name = column(&table, &["Name", "Range", "Operation"]);
    let style = table.columns.iter().position(|c| c == "Style");
    let instances = column(&table, &["Instances", "Num Calls", "Count"]);
    let total = column(&table, &["Total Time (ns)"]);
    let avg = column(&table, &["Avg (ns)"]);
    table
        .rows
        .iter()
        .map(|row| StatsRow {
            name: row[name].to_string(),
            style: style.map(|s| row[s].to_string()),
            instances: row[instances].clone(),
            total: row[total].clone(),
            avg: row[avg].clone(),
        })
        .collect()
}

/// Every row of `trace`'s own report appears in the diff on side `a_side` (A or
/// B) with exactly its cells, and no other row has that side.
fn assert_side_is_own_stats(d: &Diff, trace: &Trace, a_side: bool, what: &str) {
    let table = d.to_table();
    let (instances, total, avg) = if a_side { (1, 3, 5) } else { (2, 4, 6) };
    let expected = stats_rows(trace, d.report);
    let mut matched = 0;
    for (row, cells) in d.rows.iter().zip(&table.rows) {
        let side = if a_side { row.a } else { row.b };
        if side.is_none() {
            assert_eq!(cells[instances], Cell::Empty, "{what}: {}", row.name);
            assert_eq!(cells[total], Cell::Empty, "{what}: {}", row.name);
            assert_eq!(cells[avg], Cell::Empty, "{what}: {}", row.name);
            assert_eq!(cells[7], Cell::Empty, "{what}: {} change", row.name);
            continue;
        }
        matched += 1;
        let same_name: Vec<&StatsRow> = expected
            .iter()
            .filter(|s| {
                s.name == row.key.name && s.style.as_deref() == row.key.style.map(|st| st.label())
            })
            .collect();
        let own = same_name
            .get(row.key.occurrence as usize)
            .unwrap_or_else(|| panic!("{what}: {:?} not in the stats report", row.key));
        assert_eq!(cells[instances], own.instances, "{what}: {}", row.name);
        assert_eq!(cells[total], own.total, "{what}: {}", row.name);
        assert_eq!(cells[avg], own.avg, "{what}: {}", row.name);
    }
    assert_eq!(
        matched,
        expected.len(),
        "{what}: every stats row is in the diff"
    );
}

/// Rows by |Total (B) − Total (A)| descending, ties by name.
fn assert_ordered(d: &Diff, what: &str) {
    for pair in d.rows.windows(2) {
        let (x, y) = (&pair[0], &pair[1]);
        let (dx, dy) = (
            x.total_change().unsigned_abs(),
            y.total_change().unsigned_abs(),
        );
        assert!(
            dx > dy || (dx == dy && x.name <= y.name),
            "{what}: {} ({dx}) before {} ({dy})",
            x.name,
            y.name
        );
    }
}

#[test]
fn a_report_against_itself_changes_nothing() {
    for name in ["sync_timing", "streams"] {
        let trace = load(&fixture(name));
        for report in DiffReport::ALL {
            let what = format!("{name} {}", report.name());
            let d = diff(&trace, &trace, report);
            assert_eq!(d.to_table().columns, COLUMNS, "{what}");
            assert_side_is_own_stats(&d, &trace, true, &what);
            assert_side_is_own_stats(&d, &trace, false, &what);
            for (row, cells) in d.rows.iter().zip(&d.to_table().rows) {
                assert_eq!(row.a, row.b, "{what}: {}", row.name);
                assert_eq!(cells[1], cells[2], "{what}: {}", row.name);
                assert_eq!(cells[7].to_string(), "0.0", "{what}: {}", row.name);
            }
            assert_ordered(&d, &what);
        }
    }
}

#[test]
fn two_reports_show_each_ones_own_stats() {
    let a = load(&fixture("sync_timing"));
    let b = load(&fixture("streams"));
    let mut one_sided = 0;
    for report in DiffReport::ALL {
        let what = format!("sync_timing vs streams {}", report.name());
        let d = diff(&a, &b, report);
        assert_side_is_own_stats(&d, &a, true, &what);
        assert_side_is_own_stats(&d, &b, false, &what);
        assert_ordered(&d, &what);
        one_sided += d
            .rows
            .iter()
            .filter(|r| r.a.is_none() || r.b.is_none())
            .count();
    }
    // The two programs run different kernels: the one-sided rule is exercised.
    let kernels = diff(&a, &b, DiffReport::Kernels);
    assert!(kernels.rows.iter().any(|r| r.b.is_none()));
    assert!(kernels.rows.iter().any(|r| r.a.is_none()));
    assert!(one_sided > 0);
}

#[test]
fn a_doubled_copy_has_twice_the_instances_and_the_same_average() {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in ["sync_timing", "streams"] {
        let trace = load(&fixture(name));
        let out = dir.path().join(format!("{name}_x2.sqlite"));
        let cancel = AtomicBool::new(false);
        if let Err(e) = sightline::synth::write_report(&trace, 2, &out, &mut |_| {}, &cancel) {
            panic!("synth failed: {e}");
        }
        let doubled = load(&out);
        for report in DiffReport::ALL {
            let what = format!("{name} x2 {}", report.name());
            let d = diff(&trace, &doubled, report);
            assert_side_is_own_stats(&d, &trace, true, &what);
            assert_side_is_own_stats(&d, &doubled, false, &what);
            for row in &d.rows {
                let (Some(a), Some(b)) = (row.a, row.b) else {
                    panic!("{what}: {} on one side only", row.name);
                };
                assert_eq!(b.instances, 2 * a.instances, "{what}: {}", row.name);
                assert_eq!(b.total, 2 * a.total, "{what}: {}", row.name);
                assert_eq!(row.avg_change_percent(), Some(0.0), "{what}: {}", row.name);
            }
            assert_ordered(&d, &what);
        }
    }
}

/// A copy of sync_timing whose first kernel lasts longer by half the kernels'
/// total time: the kernel's average grows by 50%.
fn slowed_copy(dir: &Path) -> PathBuf {
    let path = dir.join("slowed.sqlite");
    std::fs::copy(fixture("sync_timing"), &path).expect("copy");
    let conn = Connection::open(&path).expect("open copy");
    let changed = conn
        .execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL
             SET end = end + (SELECT sum(end - start) / 2 FROM CUPTI_ACTIVITY_KIND_KERNEL)
             WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)",
            [],
        )
        .expect("edit copy");
    assert_eq!(changed, 1);
    path
}

#[test]
fn fail_above_trips_on_a_slowed_kernel_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let slowed = slowed_copy(dir.path());
    let original = fixture("sync_timing");
    let change = diff(&load(&original), &load(&slowed), DiffReport::Kernels).rows[0]
        .avg_change_percent()
        .expect("kernel on both sides");
    assert!((49.0..51.0).contains(&change), "change {change}");

    let out = sightline(&["diff", text(&original), text(&slowed), "--fail-above", "10"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("add2_kernel"));
    let out = sightline(&["diff", text(&original), text(&slowed), "--fail-above", "60"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Faster is never a regression, and the gate looks at kernels whatever --report says.
    let out = sightline(&[
        "diff",
        text(&slowed),
        text(&original),
        "--report",
        "nvtx",
        "--fail-above",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = sightline(&[
        "diff",
        text(&original),
        text(&slowed),
        "--report",
        "nvtx",
        "--fail-above",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn csv_is_the_library_diff_and_output_writes_one_file_per_report() {
    let (a, b) = (fixture("sync_timing"), fixture("streams"));
    let (ta, tb) = (load(&a), load(&b));
    let out = sightline(&[
        "diff",
        text(&a),
        text(&b),
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
    ]);
    assert!(out.status.success(), "{out:?}");
    let expected = diff(&ta, &tb, DiffReport::Kernels).to_report().to_csv();
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    let mut columns = COLUMNS.to_vec();
    columns.rotate_left(1);
    assert!(expected.starts_with(&(columns.join(",") + "\n")));

    let dir = tempfile::tempdir().expect("temp dir");
    let prefix = dir.path().join("run");
    let out = sightline(&["diff", text(&a), text(&b), "--output", text(&prefix)]);
    assert!(out.status.success(), "{out:?}");
    for report in DiffReport::ALL {
        let file = dir.path().join(format!("run_diff_{}.csv", report.name()));
        let written = std::fs::read_to_string(&file).expect("one file per report");
        assert_eq!(written, diff(&ta, &tb, report).to_report().to_csv());
    }

    let out = sightline(&["diff", text(&a), text(&b)]);
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("Avg Change (%)") && table.contains("(kernels)"));
}

#[test]
fn bad_input_exits_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, "not a report").expect("write");
    let good = fixture("sync_timing");
    for args in [
        vec!["diff", text(&good), text(&junk)],
        vec!["diff", text(&junk), text(&good)],
        vec!["diff", text(&good), "/nonexistent/x.sqlite"],
        vec!["diff", text(&good)],
        vec!["diff", text(&good), text(&good), "--report", "osrt_sum"],
        vec!["diff", text(&good), text(&good), "--fail-above", "x"],
    ] {
        let out = sightline(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "{args:?}: says why");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_viewer_without_a_display_says_so() {
    for args in [
        vec![],
        vec![text(&fixture("sync_timing")).to_string()],
        vec![
            "replay".to_string(),
            text(&fixture("sync_timing")).to_string(),
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(&args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .expect("the binary runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "sightline: no display found (DISPLAY/WAYLAND_DISPLAY unset): the viewer needs a \
             desktop; `sightline stats FILE` works without one\n",
            "{args:?}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// Issue 45: `sightline diff` put the name first, padded to the longest one (torch's kernel
/// names made 1,500-column lines). As `nsys stats` prints its tables: the numbers first, the
/// name last, so every row's numbers sit at the left whatever the names.
#[test]
fn the_name_comes_last_so_long_names_never_push_the_numbers_away() {
    let a = fixture("torch_work");
    let out = sightline(&["diff", text(&a), text(&a), "--report", "cuda_gpu_kern_sum"]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains("**"))
        .collect();
    assert!(lines.len() > 3, "{stdout}");
    assert!(lines[0].trim_end().ends_with("Name"), "{}", lines[0]);
    let widest_name = lines.iter().map(|l| l.len()).max().unwrap_or(0);
    assert!(widest_name > 200, "torch's names are long: {widest_name}");
    for line in &lines[2..] {
        // The last number of the row (the change, or an instance count) ends
        // before any name begins: within the numbers' own width.
        let name_at = line.find(|c: char| c.is_alphabetic()).unwrap_or(line.len());
        assert!(name_at < 140, "numbers first, then the name: {line:.200}");
    }
    let csv = sightline(&[
        "diff",
        text(&a),
        text(&a),
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
    ]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(
        csv.lines().next().is_some_and(|h| h.ends_with(",Name")),
        "{csv:.300}"
    );
}
