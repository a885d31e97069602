//! Theoretical occupancy against Nsight Compute: for every launch that ncu
//! profiled in the fixture programs (`tests/fixtures/ncu/*.ncu.csv`, its
//! LaunchStats + Occupancy raw page), our block limits and occupancy must equal
//! `launch__occupancy_limit_*` and `sm__maximum_warps_per_active_cycle_pct`,
//! with the device limits read from the report nsys wrote on the same GPU; and
//! `kernel_launch_sum` must show the same for those kernels.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sightline::analysis::occupancy::{DeviceLimits, LaunchShape, theoretical_occupancy};
use sightline::analysis::{Report, compute};
use sightline::model::Trace;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn load(name: &str) -> Trace {
    let path = fixtures().join(format!("{name}.sqlite"));
    sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// A launch as ncu measured it.
#[derive(Debug)]
struct NcuLaunch {
    kernel: String,
    shape: LaunchShape,
    /// registers, shared memory, warps, blocks.
    limits: [u32; 4],
    percent: f64,
    /// The theoretical occupancy as ncu printed it (`100`, `6.25`).
    percent_text: String,
}

fn ncu_launches(program: &str) -> Vec<NcuLaunch> {
    let path = fixtures().join(format!("ncu/{program}.ncu.csv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    // ncu prints the program's own output first; the table starts at "ID".
    let mut lines = text.lines().skip_while(|l| !l.starts_with("\"ID\""));
    let header = common::csv_fields(lines.next().expect("no ncu header"));
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let number = |row: &[String], name: &str| -> f64 {
        row[col(name)]
            .replace(',', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}: {:?}", row[col(name)]))
    };
    lines
        .skip(1) // units
        .map(common::csv_fields)
        .filter(|row| row.len() == header.len())
        .map(|row| {
            let block: u32 = row[col("Block Size")]
                .trim_matches(|c| c == '(' || c == ')')
                .split(',')
                .map(|d| d.trim().parse::<u32>().expect("block dimension"))
                .product();
            NcuLaunch {
                kernel: row[col("Kernel Name")].clone(),
                shape: LaunchShape {
                    threads_per_block: block,
                    registers_per_thread: number(&row, "launch__registers_per_thread") as u32,
                    static_shared_memory: number(&row, "launch__shared_mem_per_block_static")
                        as u32,
                    dynamic_shared_memory: number(&row, "launch__shared_mem_per_block_dynamic")
                        as u32,
                    shared_memory_config: number(&row, "launch__shared_mem_config_size") as u32,
                },
                limits: [
                    number(&row, "launch__occupancy_limit_registers") as u32,
                    number(&row, "launch__occupancy_limit_shared_mem") as u32,
                    number(&row, "launch__occupancy_limit_warps") as u32,
                    number(&row, "launch__occupancy_limit_blocks") as u32,
                ],
                percent: number(&row, "sm__maximum_warps_per_active_cycle_pct"),
                percent_text: row[col("sm__maximum_warps_per_active_cycle_pct")].clone(),
            }
        })
        .collect()
}

#[test]
fn occupancy_equals_nsight_compute_for_every_profiled_launch() {
    // sync_timing and streams ran on the GPU their own reports describe;
    // many_kernels on the same H100 (its report is not bundled).
    for (program, report) in [
        ("sync_timing", "sync_timing"),
        ("streams", "streams"),
        ("many_kernels", "sync_timing"),
    ] {
        let trace = load(report);
        let device = DeviceLimits::for_gpu(&trace.gpus[0]).expect("device limits");
        let launches = ncu_launches(program);
        assert!(!launches.is_empty(), "{program}: no launches read");
        for launch in &launches {
            let o = theoretical_occupancy(&device, &launch.shape)
                .unwrap_or_else(|e| panic!("{program} {launch:?}: {e}"));
            let ours = [
                o.block_limit_registers,
                o.block_limit_shared_memory,
                o.block_limit_warps,
                o.block_limit_blocks,
            ];
            assert_eq!(ours, launch.limits, "{program} {launch:?}");
            assert_eq!(
                o.theoretical_percent, launch.percent,
                "{program} {launch:?}"
            );
        }
    }
}

#[test]
fn kernel_launch_sum_agrees_with_nsight_compute() {
    for program in ["sync_timing", "streams"] {
        let trace = load(program);
        let table = compute(&trace, Report::KernelLaunchSum, None);
        let col = |name: &str| table.columns.iter().position(|c| c == name).unwrap();
        let launches = ncu_launches(program);
        for launch in &launches {
            let row = table
                .rows
                .iter()
                .find(|r| r[0].to_string() == launch.kernel)
                .unwrap_or_else(|| panic!("{program}: no row for {}", launch.kernel));
            let cell = |name: &str| row[col(name)].to_string();
            assert_eq!(
                cell("Registers Per Thread"),
                launch.shape.registers_per_thread.to_string()
            );
            assert_eq!(
                cell("Shared Memory Config (B)"),
                launch.shape.shared_memory_config.to_string()
            );
            assert_eq!(cell("Block Limit Registers"), launch.limits[0].to_string());
            assert_eq!(cell("Block Limit Shared Mem"), launch.limits[1].to_string());
            assert_eq!(cell("Block Limit Warps"), launch.limits[2].to_string());
            assert_eq!(cell("Block Limit SM"), launch.limits[3].to_string());
            // Printed as ncu prints it: two decimals, none when whole.
            assert_eq!(cell("Theoretical Occupancy (%)"), launch.percent_text);
        }
    }
}
