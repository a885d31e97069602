//! Every `nsys analyze` rule on every fixture against the CSV nsys 2025.3 wrote.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sightline::analysis::rules::{Rule, RuleOptions, run};
use sightline::model::Trace;

fn load(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

fn check_fixture(dir: &Path, fixture: &str) -> Vec<String> {
    check_fixture_at(dir, &dir.join("stats"), fixture)
}

/// As `check_fixture`, with the report in `report_dir` and the CSVs in `stats_dir`.
fn check_fixture_at(report_dir: &Path, stats_dir: &Path, fixture: &str) -> Vec<String> {
    let trace = load(&report_dir.join(format!("{fixture}.sqlite")));
    let mut failures = Vec::new();
    for rule in Rule::ALL {
        let csv_path: PathBuf = stats_dir.join(format!("{fixture}_{}.csv", rule.name()));
        let expected = std::fs::read_to_string(&csv_path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", csv_path.display()));
        let actual = run(&trace, rule, &RuleOptions::default()).to_csv();
        if expected != actual {
            failures.push(format!(
                "{fixture} {}:\n--- nsys\n{expected}--- sightline\n{actual}",
                rule.name()
            ));
        }
    }
    failures
}

fn assert_all_match(dir: &Path, fixtures: &[&str]) {
    let failures: Vec<String> = fixtures
        .iter()
        .flat_map(|f| check_fixture(dir, f))
        .collect();
    assert!(
        failures.is_empty(),
        "{} rule output(s) differ from nsys:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn bundled_fixtures_match_nsys_analyze() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    assert_all_match(&dir, &["sync_timing", "streams", "torch_work"]);
}

/// The larger fixtures live outside the repository; skipped when absent.
#[test]
fn shared_fixtures_match_nsys_analyze() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/nsys-2025.3");
    if !dir.join("stats").is_dir() {
        eprintln!("skipped: {} is not there", dir.display());
        return;
    }
    assert_all_match(
        &dir,
        &[
            "sync_timing",
            "streams",
            "torch_work",
            "many_kernels",
            "torch_metrics",
        ],
    );
}

/// The benchmark reports bundled for the lessons, recorded by nsys 2025.3 on an H100.
#[test]
fn bundled_benchmark_reports_match_nsys_analyze() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (assets, stats) = (root.join("assets"), root.join("tests/fixtures/bench_stats"));
    let failures: Vec<String> = ["bandwidth", "gemm", "launch_overhead"]
        .iter()
        .flat_map(|f| check_fixture_at(&assets, &stats, f))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
