//! Every report on every fixture against the CSV nsys 2025.3 wrote for it.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sightline::analysis::{Report, compute};
use sightline::model::Trace;

fn load(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// Compares line by line, reporting every differing line (up to a limit).
fn diff(expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = format!("{} expected lines, {} actual lines\n", e.len(), a.len());
    let mut shown = 0;
    for i in 0..e.len().max(a.len()) {
        let (el, al) = (e.get(i).copied(), a.get(i).copied());
        if el != al && shown < 8 {
            shown += 1;
            out += &format!(
                "line {}:\n  nsys:      {}\n  sightline: {}\n",
                i + 1,
                el.unwrap_or("<none>"),
                al.unwrap_or("<none>")
            );
        }
    }
    if shown == 0 {
        out += "lines equal; line endings or final newline differ\n";
    }
    Some(out)
}

/// The reports nsys wrote for the NVTX/GPU fixtures beyond the default eight
/// (all but `many_kernels`); nsys has no `:mangled` CSV in the fixtures.
const EXTRA: [Report; 14] = [
    Report::NvtxPushpopSum,
    Report::NvtxStartendSum,
    Report::NvtxGpuProjSum,
    Report::NvtxGpuProjTrace,
    Report::NvtxKernSum,
    Report::NvtxPushpopTrace,
    Report::CudaGpuSum,
    Report::CudaGpuKernGbSum,
    Report::CudaGpuTrace,
    Report::CudaApiTrace,
    Report::CudaKernExecTrace,
    Report::UmSum,
    Report::CudaGpuKernSumBase,
    Report::CudaGpuKernSumNvtxName,
];

/// Checks `reports` of `fixture` (a `NAME.sqlite` beside `stats/NAME_REPORT.csv`,
/// REPORT as nsys names the file).
fn check_reports(dir: &Path, fixture: &str, reports: &[Report]) -> Vec<String> {
    check_reports_at(dir, &dir.join("stats"), fixture, reports)
}

/// As `check_reports`, with the report in `report_dir` and the CSVs in `stats_dir`.
fn check_reports_at(
    report_dir: &Path,
    stats_dir: &Path,
    fixture: &str,
    reports: &[Report],
) -> Vec<String> {
    let trace = load(&report_dir.join(format!("{fixture}.sqlite")));
    let mut failures = Vec::new();
    for &report in reports {
        let csv_path: PathBuf = stats_dir.join(format!("{fixture}_{}.csv", report.file_stem()));
        let expected = std::fs::read_to_string(&csv_path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", csv_path.display()));
        let actual = compute(&trace, report, None).to_csv();
        if let Some(d) = diff(&expected, &actual) {
            failures.push(format!("{fixture} {}: {d}", report.name()));
        }
    }
    failures
}

fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn check_fixture(dir: &Path, fixture: &str) -> Vec<String> {
    check_reports(dir, fixture, &Report::ALL)
}

fn assert_none(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} report(s) differ from nsys:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn assert_all_match(dir: &Path, fixtures: &[&str]) {
    let failures: Vec<String> = fixtures
        .iter()
        .flat_map(|f| check_fixture(dir, f))
        .collect();
    assert!(
        failures.is_empty(),
        "{} report(s) differ from nsys:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn bundled_fixtures_match_nsys() {
    assert_all_match(&bundled(), &["sync_timing", "streams", "torch_work"]);
}

/// The larger fixtures live outside the repository; skipped when absent.
#[test]
fn shared_fixtures_match_nsys() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/nsys-2025.3");
    if !dir.join("stats").is_dir() {
        eprintln!("skipped: {} is not there", dir.display());
        return;
    }
    assert_all_match(&dir, &["many_kernels", "torch_metrics"]);
    assert_none(check_reports(
        &dir,
        "many_kernels",
        &[Report::NvtxPushpopTrace],
    ));
    assert_none(check_reports(&dir, "torch_metrics", &EXTRA));
}

#[test]
fn bundled_fixtures_match_nsys_extra_reports() {
    let dir = bundled();
    let failures = ["sync_timing", "streams", "torch_work"]
        .iter()
        .flat_map(|f| check_reports(&dir, f, &EXTRA))
        .collect();
    assert_none(failures);
}

/// The benchmark reports bundled for the lessons (Sightline's own benchmarks
/// recorded by nsys 2025.3 on an H100): the default reports and the NVTX
/// projections nsys printed for them.
#[test]
fn bundled_benchmark_reports_match_nsys() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (assets, stats) = (root.join("assets"), root.join("tests/fixtures/bench_stats"));
    let mut reports = Report::ALL.to_vec();
    reports.extend([Report::NvtxGpuProjSum, Report::NvtxKernSum]);
    let failures = ["bandwidth", "gemm", "launch_overhead"]
        .iter()
        .flat_map(|f| check_reports_at(&assets, &stats, f, &reports))
        .collect();
    assert_none(failures);
}
