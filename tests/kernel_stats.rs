//! The per-kernel statistics the kernel panel shows, against the reports that
//! state the same numbers.

mod common;
use common::load;

use sightline::analysis::kernels::{kernel_stats, kernel_stats_for, nearest_rank};
use sightline::analysis::{Report, compute};

#[test]
fn kernel_stats_agree_with_cuda_gpu_kern_sum() {
    for fixture in ["sync_timing.sqlite", "streams.sqlite", "torch_work.sqlite"] {
        let trace = load(fixture);
        let stats = kernel_stats(&trace, None);
        let table = compute(&trace, Report::CudaGpuKernSum, None);
        assert_eq!(stats.len(), table.rows.len(), "{fixture}");
        let share: f64 = stats.iter().map(|k| k.gpu_time_percent).sum();
        assert!(
            (share - 100.0).abs() < 1e-6,
            "{fixture}: shares add to {share}"
        );
        for (k, row) in stats.iter().zip(&table.rows) {
            // Same order (total descending) and the same numbers.
            assert_eq!(trace.name(k.name), row[8].to_string(), "{fixture}");
            assert_eq!(k.durations.total.to_string(), row[1].to_string());
            assert_eq!(k.durations.instances.to_string(), row[2].to_string());
            assert_eq!(k.durations.min.to_string(), row[5].to_string());
            assert_eq!(k.durations.max.to_string(), row[6].to_string());
            assert_eq!(k.instances.len() as u64, k.durations.instances);
            let configs: u64 = k.configs.iter().map(|c| c.1).sum();
            assert_eq!(configs, k.durations.instances);
            assert!(!k.streams.is_empty());
            // Percentiles are instances' durations, by nearest rank.
            let mut d: Vec<i64> = k
                .instances
                .iter()
                .map(|&i| trace.kernels.spans.duration(i as usize))
                .collect();
            d.sort_unstable();
            assert_eq!(Some(k.durations.p90), nearest_rank(&d, 90));
            assert_eq!(Some(k.durations.p99), nearest_rank(&d, 99));
            assert!(k.durations.min <= k.durations.p90 && k.durations.p90 <= k.durations.p99);
            assert!(k.durations.p99 <= k.durations.max);
            // One kernel alone keeps its share of all kernel time.
            let alone = kernel_stats_for(&trace, k.name, None).expect("the kernel");
            assert_eq!(alone, *k);
        }
    }
}

#[test]
fn streams_tiny_kernel_runs_on_one_stream_with_one_config() {
    let trace = load("streams.sqlite");
    let name = trace.strings.find("tiny(int *)").expect("tiny");
    let k = kernel_stats_for(&trace, name, None).expect("stats");
    assert_eq!(k.durations.instances, 20000);
    assert_eq!(k.streams.len(), 1);
    assert_eq!(k.configs.len(), 1);
    assert_eq!(k.configs[0].0.block, [32, 1, 1]);
    // Every tiny kernel has its launching call; latency is start to start.
    let latency = k.launch_latency.expect("launch latency");
    assert_eq!(latency.instances, 20000);
    assert!(latency.min > 0);
}
