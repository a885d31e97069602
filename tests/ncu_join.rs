//! Nsight Compute results joined to nsys reports: the real ncu raw pages of the fixture
//! programs (`tests/fixtures/ncu/`, and `tests/fixtures/ncu_metrics/` recorded with the
//! default metric set) join launch by launch to the kernels of the reports nsys wrote for the
//! same programs; a page joined to the wrong report lists every launch as unmatched.

mod common;

use sightline::analysis::metrics::ncu::{self, NcuResults};
use sightline::model::{MetricSource, Trace};

fn results(path: &str) -> NcuResults {
    let file = common::fixture(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    ncu::parse(&text).unwrap_or_else(|e| panic!("{file:?}: {e}"))
}

/// Every launch matched, to kernels of its name, in launch order, with ncu's grid and block.
fn assert_joins_whole(trace: &Trace, results: &NcuResults, nvtx: Option<&str>) -> Vec<u32> {
    let joined = ncu::join(trace, results, nvtx);
    assert!(joined.unmatched.is_empty(), "{:?}", joined.unmatched);
    assert_eq!(joined.pairs.len(), results.launches.len());
    let mut kernels: Vec<u32> = joined.pairs.iter().map(|p| p.1).collect();
    let distinct: std::collections::BTreeSet<u32> = kernels.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        kernels.len(),
        "one launch per kernel instance"
    );
    // Launches of one name keep their order: ncu's IDs count launches.
    for w in joined.pairs.windows(2) {
        let (a, b) = (w[0].1 as usize, w[1].1 as usize);
        let spans = &trace.kernels.spans;
        if spans.name[a] == spans.name[b] {
            assert!(spans.start[a] < spans.start[b], "launch order kept");
        }
    }
    assert_eq!(joined.metrics.source, MetricSource::Ncu);
    assert!(!joined.metrics.is_empty());
    kernels.sort_unstable();
    kernels
}

#[test]
fn occupancy_pages_join_to_their_reports() {
    for program in ["sync_timing", "streams"] {
        let trace = common::load(&format!("{program}.sqlite"));
        let r = results(&format!("ncu/{program}.ncu.csv"));
        assert!(!r.launches.is_empty());
        // ncu prints the units row: percentages keep their %.
        let occupancy = r
            .metrics
            .iter()
            .find(|m| m.name == "sm__maximum_warps_per_active_cycle_pct")
            .expect("theoretical occupancy column");
        assert_eq!(occupancy.unit, "%");
        assert_joins_whole(&trace, &r, None);
    }
}

#[test]
fn a_page_of_another_program_is_listed_unmatched_not_dropped() {
    let trace = common::load("sync_timing.sqlite");
    let r = results("ncu/streams.ncu.csv");
    let joined = ncu::join(&trace, &r, None);
    assert!(joined.pairs.is_empty());
    assert_eq!(joined.unmatched.len(), r.launches.len());
    assert!(
        joined
            .unmatched
            .iter()
            .all(|u| u.reason.contains("no kernel"))
    );
    assert!(
        joined
            .metrics
            .notes
            .iter()
            .any(|n| n.contains("matched no kernel"))
    );
    let table = ncu::unmatched_table(&joined);
    assert_eq!(table.rows.len(), r.launches.len());
}

#[test]
fn more_launches_than_the_report_has_are_listed() {
    // many_kernels' first launches are axpy/scale: sync_timing has neither, streams
    // has tiny/busy. Join sync_timing's page to itself twice over: the second copy of
    // each launch finds no instance left.
    let trace = common::load("sync_timing.sqlite");
    let mut r = results("ncu/sync_timing.ncu.csv");
    let n = trace.kernels.spans.len();
    while r.launches.len() <= n {
        let again = r.launches.clone();
        r.launches.extend(again);
    }
    let joined = ncu::join(&trace, &r, None);
    assert_eq!(joined.pairs.len(), n.min(r.launches.len()));
    assert_eq!(
        joined.unmatched.len(),
        r.launches.len() - joined.pairs.len()
    );
    assert!(
        joined
            .unmatched
            .iter()
            .all(|u| u.reason.contains("more launches"))
    );
}

#[test]
fn pytorch_kernels_join_despite_ncu_spelling_their_names_apart() {
    // ncu with the default metric set over torch_work.py; torch_work.sqlite is nsys over the
    // same program on the same H100.
    let trace = common::load("torch_work.sqlite");
    let r = results("ncu_metrics/torch_work.ncu.csv");
    assert_eq!(r.launches.len(), trace.kernels.spans.len());
    let kernels = assert_joins_whole(&trace, &r, None);
    assert_eq!(
        kernels.len(),
        trace.kernels.spans.len(),
        "every instance matched"
    );
    // The default set's metrics, with ncu's units.
    let unit = |name: &str| {
        r.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.unit.as_str())
            .unwrap_or("(missing)")
    };
    assert_eq!(unit("dram__bytes_read.sum"), "byte");
    assert_eq!(
        unit("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        "%"
    );
    assert_eq!(unit("gpu__time_duration.sum"), "ns");
}

/// Whether kernel `k`'s launch call lies inside an NVTX range called `name` of its thread.
fn launched_inside(trace: &Trace, k: u32, name: &str) -> bool {
    let pid = trace
        .streams
        .iter()
        .find(|s| s.kernels.contains(k))
        .map(|s| s.pid)
        .expect("a stream");
    let call = trace
        .correlation
        .api_call(pid, trace.kernels.correlation[k as usize])
        .expect("the launch call") as usize;
    let at = trace.cuda_api.spans.start[call];
    let nvtx = &trace.nvtx.spans;
    (0..nvtx.len())
        .any(|r| trace.name(nvtx.name[r]) == name && (nvtx.start[r]..=nvtx.end(r)).contains(&at))
}

#[test]
fn an_nvtx_filtered_page_joins_to_the_kernels_of_that_range() {
    // `ncu --nvtx --nvtx-include "MYPerf/"`: only the cuDNN convolution's launches.
    let trace = common::load("torch_work.sqlite");
    let r = results("ncu_metrics/torch_work_myperf.ncu.csv");
    assert!(
        r.launches
            .iter()
            .all(|l| l.nvtx_range.as_deref() == Some("MYPerf"))
    );
    // The range ncu recorded per launch is used by itself, and the same when given.
    for filter in [None, Some("MYPerf/")] {
        let kernels = assert_joins_whole(&trace, &r, filter);
        assert_eq!(kernels.len(), r.launches.len());
        for k in kernels {
            assert!(
                launched_inside(&trace, k, "MYPerf"),
                "kernel {k} outside MYPerf"
            );
        }
    }
    // Without the filter the same page would take the first launches of those names
    // (before MYPerf): a different join, which is why the filter matters.
    let mut unfiltered = r.clone();
    for l in &mut unfiltered.launches {
        l.nvtx_range = None;
    }
    let joined = ncu::join(&trace, &unfiltered, None);
    assert!(
        joined
            .pairs
            .iter()
            .any(|&(_, k)| !launched_inside(&trace, k, "MYPerf")),
        "the filter changes which instances match"
    );
}

#[test]
fn stats_prints_the_joined_metrics_and_lists_unmatched_launches() {
    let report = common::fixture("sync_timing.sqlite");
    let page = common::fixture("ncu/streams.ncu.csv");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args([
            "stats",
            report.to_str().unwrap_or_default(),
            "--format",
            "csv",
        ])
        .args(["--ncu", page.to_str().unwrap_or_default()])
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ID,Kernel Name,Reason"), "{stdout}");
    assert!(stdout.contains("tiny(int *)"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("matched no kernel"));

    let page = common::fixture("ncu_metrics/torch_work.ncu.csv");
    let report = common::fixture("torch_work.sqlite");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args([
            "stats",
            report.to_str().unwrap_or_default(),
            "--format",
            "csv",
        ])
        .args(["--ncu", page.to_str().unwrap_or_default()])
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("Name,Metric,Unit,Instances,Min,Median,Max,Mean\n"),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT,dram__bytes_read.sum,byte,")
    );
}

#[test]
fn roofline_and_speed_of_light_from_joined_pytorch_kernels() {
    use sightline::analysis::metrics::{roofline, summarise};
    let trace = common::load("torch_work.sqlite");
    let r = results("ncu_metrics/torch_work.ncu.csv");
    let joined = ncu::join(&trace, &r, None);
    let set = std::sync::Arc::new(joined.metrics.clone());
    let of_name = |prefix: &str| -> Vec<u32> {
        let spans = &trace.kernels.spans;
        (0..spans.len() as u32)
            .filter(|&k| trace.name(spans.name[k as usize]).starts_with(prefix))
            .collect()
    };
    // cuBLAS's FP16 GEMM runs on the tensor cores: the FP32 counters miss its FLOPs.
    let tensor = of_name("nvjet_sm90");
    assert!(!tensor.is_empty());
    let s = summarise(&trace, std::slice::from_ref(&set), &tensor);
    assert_eq!(s.len(), 1);
    assert_eq!(
        s[0].roofline,
        Err(roofline::NotPlotted::TensorFlopsUncounted)
    );
    assert!(
        s[0].speed_of_light.is_some(),
        "ncu's throughput pair gives a verdict"
    );
    // The FP32 GEMM (FFMA): FLOPs = 2·FFMA + FADD + FMUL over its instances, as ncu counted.
    let fp32 = of_name("sm80_xmma_gemm_f32f32");
    let s = summarise(&trace, std::slice::from_ref(&set), &fp32);
    let point = s[0].roofline.clone().expect("plotted");
    assert_eq!(point.flop_source, roofline::FlopSource::Counters);
    let column = |name: &str| r.metrics.iter().position(|m| m.name == name).expect(name);
    let (ffma, fadd, fmul) = (
        column(roofline::FFMA),
        column(roofline::FADD),
        column(roofline::FMUL),
    );
    let expected: f64 = joined
        .pairs
        .iter()
        .filter(|(_, k)| fp32.contains(k))
        .map(|&(l, _)| {
            let v = |c: usize| r.launches[l].values[c].unwrap_or(0.0);
            2.0 * v(ffma) + v(fadd) + v(fmul)
        })
        .sum();
    assert_eq!(point.flops, expected);
    assert_eq!(point.instances, fp32.len());
}
