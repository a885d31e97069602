//! `sync-timing` (seed 004): why an asynchronous launch needs a synchronization, or CUDA
//! events, to be timed. The `add2` kernel is timed from the host four ways — synchronize
//! before and after, before only, after only, not at all — then with CUDA events, and the
//! host-timed numbers are printed next to the GPU's own. Phases and NVTX range names follow
//! the fixture program `sync_timing.cu`: one range per variant with `warmup` and
//! `timed-iteration` children, then `cuda-events`.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::gpu::{Gpu, alloc, driver_error, host_vec};
use super::harness::{SampleSpread, Table, check_cancel, phase, work};
use super::kernels::{self, ADD2};
use super::spec::{BenchError, BenchmarkSpec, ParamSpec, Params};
use crate::capture::nvtx::colors;

pub(super) const NAME: &str = "sync-timing";

pub(super) const SPEC: BenchmarkSpec = BenchmarkSpec {
    name: NAME,
    about: "add2 timed from the host with and without synchronization, and with CUDA events",
    params: &[
        ParamSpec {
            name: "elements",
            default: "1M",
            help: "floats in x and y (K/M suffixes: 1M = 1048576)",
        },
        ParamSpec {
            name: "iterations",
            default: "10",
            help: "timed launches per variant",
        },
        ParamSpec {
            name: "warmup",
            default: "10",
            help: "untimed launches before each variant",
        },
    ],
};

/// The host-timed variants, named as the fixture program names its NVTX ranges.
const VARIANTS: [(&str, bool, bool); 4] = [
    ("sync-before-and-after", true, true),
    ("sync-before-only", true, false),
    ("sync-after-only", false, true),
    ("no-sync", false, false),
];

/// What each variant's host time really measures.
fn meaning(sync_before: bool, sync_after: bool) -> &'static str {
    match (sync_before, sync_after) {
        (true, true) => "launch + kernel (the right host timing)",
        (true, false) => "launch call only: the kernel is still running",
        (false, true) => "queued earlier work + launch + kernel",
        (false, false) => "launch call only, maybe queued behind others",
    }
}

pub(super) struct Config {
    elements: usize,
    iterations: usize,
    warmup: usize,
}

impl Config {
    pub(super) fn from_params(params: &Params) -> Result<Config, BenchError> {
        Ok(Config {
            // The kernel indexes with int; 512M floats (2 GiB per buffer) stays well inside.
            elements: params.count("elements", 1, 512 << 20)? as usize,
            iterations: params.count("iterations", 1, 100_000)? as usize,
            warmup: params.count("warmup", 0, 100_000)? as usize,
        })
    }
}

struct Buffers {
    n: i32,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
}

/// One add2 launch with the fixture's configuration: 1024 threads per block, enough blocks
/// to cover n.
fn launch_add2(
    stream: &Arc<CudaStream>,
    add2: &CudaFunction,
    buffers: &mut Buffers,
) -> Result<(), BenchError> {
    let config = LaunchConfig::for_num_elems(buffers.n as u32);
    let mut launch = stream.launch_builder(add2);
    launch.arg(&buffers.n).arg(&buffers.x).arg(&mut buffers.y);
    // SAFETY: add2(int n, const float* x, float* y) matches these arguments; x and y hold n
    // floats each and the kernel guards i < n.
    unsafe { launch.launch(config) }
        .map(drop)
        .map_err(|e| driver_error("launching add2", e))
}

pub(super) fn run(
    gpu: &Gpu,
    config: &Config,
    out: &mut dyn Write,
    cancel: &AtomicBool,
) -> Result<(), BenchError> {
    writeln!(out, "{}", gpu.describe())?;
    let n = config.elements;
    // add2 reads x and y and writes y: three floats per element.
    let bytes_per_launch = 12 * n as u64;
    // The fixture program works on the legacy default stream and synchronizes the device.
    let stream = gpu.legacy_default_stream();

    let setup = phase("setup", colors::SETUP, None);
    let functions = kernels::load(gpu, ADD2, &["add2"])?;
    let add2 = functions
        .get("add2")
        .ok_or_else(|| BenchError::Internal("add2 not loaded".into()))?;
    let ones = host_vec(n, 1.0f32, &format!("x and y ({n} floats)"))?;
    let mut buffers = Buffers {
        n: n as i32,
        x: alloc::<f32>(&stream, n, &format!("x ({n} floats)"))?,
        y: alloc::<f32>(&stream, n, &format!("y ({n} floats)"))?,
    };
    stream
        .memcpy_htod(&ones, &mut buffers.x)
        .and_then(|()| stream.memcpy_htod(&ones, &mut buffers.y))
        .map_err(|e| driver_error("copying x and y to the GPU", e))?;
    gpu.synchronize("copying x and y to the GPU")?;
    drop(setup);
    let mut launches = 0u64;

    let mut table = Table::new(&["variant", "mean us", "min us", "max us", "what it measures"]);
    for (name, sync_before, sync_after) in VARIANTS {
        let per_variant = bytes_per_launch * (config.warmup + config.iterations) as u64;
        let variant = phase(name, colors::VARIANT, work(per_variant));
        {
            let _warmup = phase(
                "warmup",
                colors::WARMUP,
                work(bytes_per_launch * config.warmup as u64),
            );
            for _ in 0..config.warmup {
                check_cancel(cancel)?;
                launch_add2(&stream, add2, &mut buffers)?;
                launches += 1;
            }
        }
        let mut host_us = Vec::with_capacity(config.iterations);
        for _ in 0..config.iterations {
            check_cancel(cancel)?;
            let _iteration = phase("timed-iteration", colors::TIMED, work(bytes_per_launch));
            if sync_before {
                gpu.synchronize("the sync before a timed launch")?;
            }
            let start = Instant::now();
            launch_add2(&stream, add2, &mut buffers)?;
            if sync_after {
                gpu.synchronize("the sync after a timed launch")?;
            }
            host_us.push(start.elapsed().as_secs_f64() * 1e6);
            launches += 1;
        }
        drop(variant);
        gpu.synchronize(&format!("the end of {name}"))?;
        let s = SampleSpread::of(&host_us);
        table.row(vec![
            format!("{name} (host)"),
            format!("{:.3}", s.mean),
            format!("{:.3}", s.min),
            format!("{:.3}", s.max),
            meaning(sync_before, sync_after).to_string(),
        ]);
    }

    // The recommended way: events recorded on the stream around the launch, timed by the GPU.
    let start_event = gpu.timing_event()?;
    let end_event = gpu.timing_event()?;
    let events = phase(
        "cuda-events",
        colors::VARIANT,
        work(bytes_per_launch * config.iterations as u64),
    );
    let mut gpu_us = Vec::with_capacity(config.iterations);
    for _ in 0..config.iterations {
        check_cancel(cancel)?;
        start_event
            .record(&stream)
            .map_err(|e| driver_error("recording the start event", e))?;
        launch_add2(&stream, add2, &mut buffers)?;
        end_event
            .record(&stream)
            .map_err(|e| driver_error("recording the end event", e))?;
        let ms = start_event
            .elapsed_ms(&end_event)
            .map_err(|e| driver_error("reading the event times", e))?;
        gpu_us.push(f64::from(ms) * 1e3);
        launches += 1;
    }
    drop(events);
    let s = SampleSpread::of(&gpu_us);
    table.row(vec![
        "cuda-events (GPU)".into(),
        format!("{:.3}", s.mean),
        format!("{:.3}", s.min),
        format!("{:.3}", s.max),
        format!(
            "the kernel alone: {:.1} GB/s",
            bytes_per_launch as f64 / (s.mean * 1e3)
        ),
    ]);

    // Every launch added 1 to y, which started at 1: a wrong value means a launch was lost.
    let check = phase("check", colors::CHECK, None);
    let y = stream
        .clone_dtoh(&buffers.y)
        .map_err(|e| driver_error("copying y back", e))?;
    drop(check);
    let expected = 1.0 + launches as f32;
    let last = y.len().saturating_sub(1);
    for index in [0, last] {
        let got = y.get(index).copied().unwrap_or(f32::NAN);
        // Exact while the count stays below 2^24, where f32 still counts by ones.
        if launches < (1 << 24) && got != expected {
            return Err(BenchError::WrongResult {
                what: format!(
                    "y[{index}] = {got} after {launches} add2 launches, expected {expected}"
                ),
            });
        }
    }

    writeln!(
        out,
        "sync-timing: add2 on {n} floats, {} warm-up + {} timed launches per variant",
        config.warmup, config.iterations
    )?;
    table.write(out)?;
    writeln!(out, "check: y = {expected} after {launches} launches: ok")?;
    Ok(())
}
