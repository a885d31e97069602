//! nsys's sampled GPU metrics (`GPU_METRICS`) per kernel: `gpu_metrics_kern_sum` on a real
//! excerpt of `torch_metrics.sqlite` (tests/fixtures/torch_metrics_excerpt.sqlite: the same
//! report with only the samples within 0.3 ms of a kernel kept) against the same numbers
//! computed independently in SQL over the file; the metric ids renumbered (as another nsys
//! version may) must change nothing; samples of another device never average into a kernel.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use rusqlite::Connection;
use sightline::analysis::metrics::sampled;
use sightline::analysis::{Report, compute};
use sightline::model::Trace;

const EXCERPT: &str = "torch_metrics_excerpt.sqlite";

fn load(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// (name, metric) → (instances, sampled instances, samples, mean, min, max) computed in SQL:
/// per instance, the samples of the kernel's device (typeId's low byte) in [start, end].
type Expected = HashMap<(String, String), (i64, i64, i64, Option<f64>, Option<f64>, Option<f64>)>;

fn expected_by_sql(path: &Path) -> (Expected, Vec<(String, String)>) {
    // The report is only read (attached read-only); the samples are copied into an indexed
    // temporary table so that each kernel's window is a range scan, not a pass over 1.27M rows.
    let db = Connection::open_in_memory().expect("in-memory database");
    let uri = format!("file:{}?mode=ro", path.display());
    db.execute("ATTACH DATABASE ?1 AS report", [uri])
        .expect("attaches the report");
    db.execute_batch(
        // Each sample in its shown unit (nsys names clocks [MHz] but stores Hz), and
        // whether the unit allows it (no negative count or clock, no share over 100 %).
        "CREATE TEMP TABLE g AS
           SELECT g.typeId, g.metricId, g.timestamp,
                  CASE WHEN substr(m.metricName, -5) = '[MHz]' THEN g.value / 1e6 ELSE g.value END AS value,
                  g.value >= 0 AND (substr(m.metricName, -2) <> '%]' OR g.value <= 100)
                    AS possible
           FROM report.GPU_METRICS g JOIN report.TARGET_INFO_GPU_METRICS m
             ON m.typeId = g.typeId AND m.metricId = g.metricId;
         DELETE FROM g WHERE NOT possible;
         CREATE INDEX temp.g_key ON g (typeId, metricId, timestamp);",
    )
    .expect("indexed copy of the samples");
    let sql = "
        WITH per_instance AS (
            SELECT k.rowid AS kid, s.value AS name, m.metricName AS metric, m.rowid AS morder,
                   (SELECT avg(g.value) FROM g
                     WHERE g.typeId = m.typeId AND g.metricId = m.metricId
                       AND g.timestamp BETWEEN k.start AND k.end) AS mean,
                   (SELECT count(*) FROM g
                     WHERE g.typeId = m.typeId AND g.metricId = m.metricId
                       AND g.timestamp BETWEEN k.start AND k.end) AS n
            FROM report.CUPTI_ACTIVITY_KIND_KERNEL k
            JOIN report.StringIds s ON s.id = k.demangledName
            JOIN report.TARGET_INFO_GPU_METRICS m ON (m.typeId & 255) = k.deviceId
        )
        SELECT name, metric, min(morder), count(*),
               sum(n >= 2), sum(CASE WHEN n >= 2 THEN n ELSE 0 END),
               avg(CASE WHEN n >= 2 THEN mean END),
               min(CASE WHEN n >= 2 THEN mean END),
               max(CASE WHEN n >= 2 THEN mean END)
        FROM per_instance GROUP BY name, metric ORDER BY name, min(morder)";
    let mut stmt = db.prepare(sql).expect("sql");
    let mut rows = stmt.query([]).expect("query");
    let mut expected = HashMap::new();
    let mut order = Vec::new();
    while let Some(r) = rows.next().expect("row") {
        let key: (String, String) = (r.get(0).expect("name"), r.get(1).expect("metric"));
        order.push(key.clone());
        expected.insert(
            key,
            (
                r.get(3).expect("n"),
                r.get(4).expect("sampled"),
                r.get(5).expect("samples"),
                r.get(6).expect("mean"),
                r.get(7).expect("min"),
                r.get(8).expect("max"),
            ),
        );
    }
    (expected, order)
}

/// The decimals a value is read with: whole MHz for clocks, 0.1 for percentages, else by
/// size (whole from 100, one from 10, two below).
fn places(metric: &str, v: f64) -> i32 {
    if metric.ends_with("[MHz]") {
        0
    } else if metric.ends_with("%]") {
        1
    } else if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    }
}

/// The table's rounded value against SQL's exact one: within half its last place (and
/// f32 precision: the loader keeps samples as f32), with no more decimals than that.
fn close(metric: &str, got: &sightline::analysis::Cell, want: Option<f64>) -> bool {
    match (got.as_f64(), want) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            let p = places(metric, b);
            let decimals = got.to_string().split('.').nth(1).map_or(0, str::len);
            decimals as i32 <= p && (a - b).abs() <= 0.5 * 10f64.powi(-p) + 1e-6 * b.abs()
        }
        _ => false,
    }
}

fn check_against_sql(path: &Path) -> usize {
    let trace = load(path);
    let table = compute(&trace, Report::GpuMetricsKernSum, None);
    assert_eq!(
        table.columns,
        [
            "Name",
            "Metric",
            "Instances",
            "Instances Sampled",
            "Samples",
            "Mean",
            "Min",
            "Max"
        ]
    );
    let (expected, order) = expected_by_sql(path);
    assert_eq!(
        table.rows.len(),
        expected.len(),
        "one row per kernel × metric"
    );
    let got_order: Vec<(String, String)> = table
        .rows
        .iter()
        .map(|r| (r[0].to_string(), r[1].to_string()))
        .collect();
    assert_eq!(
        got_order, order,
        "by name, then TARGET_INFO_GPU_METRICS order"
    );
    let mut short = 0;
    for row in &table.rows {
        let key = (row[0].to_string(), row[1].to_string());
        let e = expected[&key];
        assert_eq!(row[2].to_string(), e.0.to_string(), "{key:?} instances");
        assert_eq!(row[3].to_string(), e.1.to_string(), "{key:?} sampled");
        assert_eq!(row[4].to_string(), e.2.to_string(), "{key:?} samples");
        assert!(
            close(&key.1, &row[5], e.3),
            "{key:?} mean {:?} vs {:?}",
            row[5],
            e.3
        );
        assert!(
            close(&key.1, &row[6], e.4),
            "{key:?} min {:?} {:?}",
            row[6],
            e.4
        );
        assert!(
            close(&key.1, &row[7], e.5),
            "{key:?} max {:?} {:?}",
            row[7],
            e.5
        );
        if e.1 < e.0 {
            short += 1;
        }
    }
    short
}

#[test]
fn per_kernel_means_equal_an_sql_computation_over_the_file() {
    let short = check_against_sql(&common::fixture(EXCERPT));
    assert!(
        short > 0,
        "the excerpt has kernels shorter than the sampling period"
    );
}

#[test]
fn the_whole_torch_metrics_report_when_present() {
    let full = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/nsys-2025.3/torch_metrics.sqlite");
    if !full.exists() {
        eprintln!("skipped: {} is absent", full.display());
        return;
    }
    check_against_sql(&full);
}

#[test]
fn short_instances_are_marked_and_left_out() {
    let trace = common::load(EXCERPT);
    let set = sampled::kernel_metrics(&trace).expect("the excerpt has GPU metrics");
    // Every row of an instance with fewer than 2 samples is kept with its count (an
    // instance is short when no metric has 2 of its samples: one metric may have fewer,
    // its impossible samples left out)...
    let sampled_enough: std::collections::BTreeSet<u32> = (0..set.len())
        .filter(|&i| set.samples[i] >= sampled::MIN_SAMPLES)
        .map(|i| set.kernel[i])
        .collect();
    let short: Vec<u32> = (0..set.len())
        .filter(|&i| set.samples[i] < sampled::MIN_SAMPLES)
        .map(|i| set.kernel[i])
        .filter(|k| !sampled_enough.contains(k))
        .collect();
    assert!(!short.is_empty());
    // ...and stays out of the statistics.
    let stats = sightline::analysis::metrics::stats_over(&set, &short);
    assert!(stats.is_empty(), "{stats:?}");
    assert_eq!(
        sightline::analysis::metrics::too_short(&set, &short),
        short
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    );
}

/// A copy of the excerpt changed by `sql`.
fn changed_copy(sql: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("changed.sqlite");
    std::fs::copy(common::fixture(EXCERPT), &path).expect("copy");
    Connection::open(&path)
        .expect("opens")
        .execute_batch(sql)
        .expect("changes");
    (dir, path)
}

#[test]
fn metric_ids_of_another_nsys_version_change_nothing() {
    let original = compute(&common::load(EXCERPT), Report::GpuMetricsKernSum, None);
    // Reverse the ids in both tables: names and their listed order stay.
    let (_dir, path) = changed_copy(
        "UPDATE TARGET_INFO_GPU_METRICS SET metricId = 100 - metricId;
         UPDATE GPU_METRICS SET metricId = 100 - metricId;",
    );
    let renumbered = compute(&load(&path), Report::GpuMetricsKernSum, None);
    assert!(!original.rows.is_empty());
    assert_eq!(renumbered, original);
}

#[test]
fn samples_of_another_device_never_average_into_a_kernel() {
    // The samples say device 1 (typeId's low byte); the report's only GPU is device 0.
    let (_dir, path) = changed_copy(
        "UPDATE TARGET_INFO_GPU_METRICS SET typeId = typeId + 1;
         UPDATE GPU_METRICS SET typeId = typeId + 1;",
    );
    let trace = load(&path);
    assert!(!trace.metrics.is_empty());
    assert!(
        trace
            .metrics
            .iter()
            .all(|s| s.device_id == 1 && s.gpu == u32::MAX)
    );
    let table = compute(&trace, Report::GpuMetricsKernSum, None);
    assert!(
        table.rows.iter().all(|r| r[3].to_string() == "0"),
        "no instance of device 0 is sampled by device 1's metrics"
    );
}

#[test]
fn csv_raw_and_table_grouped_from_the_command_line() {
    let file = common::fixture(EXCERPT);
    let run = |format: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(["stats", file.to_str().unwrap_or_default()])
            .args(["--report", "gpu_metrics_kern_sum", "--format", format])
            .output()
            .expect("the binary runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let csv = run("csv");
    assert!(csv.starts_with("Name,Metric,Instances,Instances Sampled,Samples,Mean,Min,Max\n"));
    // A clock (stored in Hz, named [MHz]) in whole MHz: ungrouped in CSV, grouped in the table.
    let clock = csv
        .lines()
        .find(|l| l.contains("GPC Clock Frequency [MHz]") && !l.ends_with(",,,"))
        .expect("a sampled clock row");
    let mean = clock.rsplit(',').nth(2).expect("mean");
    assert!(
        mean.parse::<f64>()
            .is_ok_and(|v| (1000.0..3000.0).contains(&v)),
        "{clock}"
    );
    let text = run("table");
    let grouped = sightline::analysis::with_separators(mean);
    assert!(text.contains(&grouped), "{grouped} in the table");
}

/// Issue 45: clocks named `[MHz]` showed nsys's Hz; a mean of negative warps was printed as
/// is; means had 15 digits. In the unit the name gives, rounded as it is read, and a sample
/// no unit allows (nsys writes negative warp counts) left out of the means and said.
#[test]
fn units_as_named_rounded_and_impossible_samples_left_out_and_said() {
    // One sample inside the long GEMM made impossible for each kind of unit.
    let (_dir, path) = changed_copy(
        "UPDATE GPU_METRICS SET value = -124 WHERE rowid IN (
           SELECT g.rowid FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING (typeId, metricId)
           WHERE m.metricName = 'Compute Warps in Flight [Avg Warps per Cycle]'
             AND g.timestamp BETWEEN (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end - start > 300000)
                                 AND (SELECT min(end) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end - start > 300000)
           LIMIT 1);
         UPDATE GPU_METRICS SET value = 250 WHERE rowid IN (
           SELECT g.rowid FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING (typeId, metricId)
           WHERE m.metricName = 'SM Issue [Throughput %]'
             AND g.timestamp BETWEEN (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end - start > 300000)
                                 AND (SELECT min(end) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end - start > 300000)
           LIMIT 1);",
    );
    let trace = load(&path);
    let table = compute(&trace, Report::GpuMetricsKernSum, None);
    assert!(!table.rows.is_empty());
    for row in &table.rows {
        let metric = row[1].to_string();
        for cell in &row[5..8] {
            let Some(v) = cell.as_f64() else { continue };
            assert!(v >= 0.0, "{metric}: {v} (negative samples left out)");
            if metric.ends_with("%]") {
                assert!(v <= 100.0, "{metric}: {v}");
            }
            if metric.ends_with("[MHz]") {
                assert!((500.0..3000.0).contains(&v), "{metric}: {v} is MHz");
            }
            let decimals = cell.to_string().split('.').nth(1).map_or(0, str::len);
            assert!(decimals <= 2, "{metric}: {cell} rounded as read");
        }
    }
    let set = sampled::kernel_metrics(&trace).expect("sampled");
    for metric in [
        "Compute Warps in Flight [Avg Warps per Cycle]",
        "SM Issue [Throughput %]",
    ] {
        assert!(
            set.notes.iter().any(|n| n.starts_with(metric)
                && n.contains("1 sample(s)")
                && n.contains("impossible")),
            "{metric}: {:?}",
            set.notes
        );
    }
    assert!(
        set.notes.iter().all(|n| !n.contains(sampled::TOO_SHORT)),
        "the kernel panel says which of its kernel's instances were too short, once: {:?}",
        set.notes
    );
}

/// Issue 45: from sampling alone there was no roofline point and no TFLOP/s, though the GEMM
/// size (the gemm benchmark's NVTX payload, 2·M·N·K) and the DRAM bandwidth are in the report.
/// The point's bytes are estimated from the sampled DRAM read + write bandwidth × the GPU's
/// peak × each instance's time, and the point says so.
#[test]
fn sampling_alone_places_a_gemm_on_the_roofline_and_says_it_is_an_estimate() {
    use sightline::analysis::metrics::roofline::{ByteSource, FlopSource};
    // torch's fp16 GEMM, 2048 × 40960 × 2048, run 8 times in `matmul-fp16`: recorded as the
    // gemm benchmark records it (its FLOPs the range's payload, inside a `gemm` range).
    let flops_each = 2.0 * 2048.0 * 40960.0 * 2048.0;
    let (_dir, path) = changed_copy(&format!(
        "UPDATE NVTX_EVENTS SET int64Value = {} WHERE text = 'matmul-fp16';
         INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
           SELECT start - 1, end + 1, eventType, 'gemm', globalTid, domainId
           FROM NVTX_EVENTS WHERE text = 'matmul-fp16';",
        8.0 * flops_each
    ));
    let trace = load(&path);
    let set = std::sync::Arc::new(sampled::kernel_metrics(&trace).expect("sampled"));
    let gemm: Vec<u32> = (0..trace.kernels.spans.len() as u32)
        .filter(|&k| {
            trace
                .name(trace.kernels.spans.name[k as usize])
                .starts_with("nvjet_")
        })
        .collect();
    let summary = &sightline::analysis::metrics::summarise(&trace, &[set], &gemm)[0];
    let point = summary
        .roofline
        .clone()
        .expect("a roofline point from sampling");
    assert_eq!(point.byte_source, ByteSource::SampledBandwidth);
    assert_eq!(point.flop_source, FlopSource::BenchmarkWork);
    assert!(point.instances >= 1 && point.instances <= 8, "{point:?}");
    assert_eq!(point.flops, flops_each * point.instances as f64);
    let tflops = point.flops_per_second() / 1e12;
    assert!((100.0..1100.0).contains(&tflops), "{tflops} TFLOP/s");
    let peak = trace.gpus[0].memory_bandwidth as f64;
    assert!(point.bytes_per_second() > 0.0 && point.bytes_per_second() <= peak);
    assert!(point.how().contains("estimate"), "{}", point.how());
}
