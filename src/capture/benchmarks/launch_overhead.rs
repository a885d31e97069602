//! `launch-overhead`: many tiny kernels, launched one by one and then replayed as one CUDA
//! graph captured from a stream. What the timeline shows is the launch cost itself: host time
//! per launch call, and the GPU's time per kernel back to back.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaFunction, CudaGraph, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::gpu::{Gpu, alloc, driver_error};
use super::harness::{SampleSpread, Table, check_cancel, phase, work};
use super::kernels::{self, LAUNCH};
use super::spec::{BenchError, BenchmarkSpec, ParamSpec, Params};
use crate::capture::nvtx::colors;

pub(super) const NAME: &str = "launch-overhead";

pub(super) const SPEC: BenchmarkSpec = BenchmarkSpec {
    name: NAME,
    about: "many tiny kernels launched one by one vs replayed as one CUDA graph",
    params: &[
        ParamSpec {
            name: "launches",
            default: "10000",
            help: "kernels per round (and nodes in the graph)",
        },
        ParamSpec {
            name: "iterations",
            default: "3",
            help: "timed rounds per mode",
        },
        ParamSpec {
            name: "warmup",
            default: "1",
            help: "untimed rounds per mode first",
        },
    ],
};

pub(super) struct Config {
    launches: usize,
    iterations: usize,
    warmup: usize,
}

impl Config {
    pub(super) fn from_params(params: &Params) -> Result<Config, BenchError> {
        Ok(Config {
            launches: params.count("launches", 1, 1_000_000)? as usize,
            iterations: params.count("iterations", 1, 10_000)? as usize,
            warmup: params.count("warmup", 0, 10_000)? as usize,
        })
    }
}

/// One launch of a single one-thread block: as small as a kernel gets.
const ONE_THREAD: LaunchConfig = LaunchConfig {
    grid_dim: (1, 1, 1),
    block_dim: (1, 1, 1),
    shared_mem_bytes: 0,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    PlainEmpty,
    PlainIncrement,
    GraphIncrement,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::PlainEmpty => "plain launches, empty_kernel",
            Mode::PlainIncrement => "plain launches, tiny_increment",
            Mode::GraphIncrement => "one CUDA graph, tiny_increment",
        }
    }
}

struct Kernels<'a> {
    empty: &'a CudaFunction,
    increment: &'a CudaFunction,
}

pub(super) fn run(
    gpu: &Gpu,
    config: &Config,
    out: &mut dyn Write,
    cancel: &AtomicBool,
) -> Result<(), BenchError> {
    writeln!(out, "{}", gpu.describe())?;
    let setup = phase("setup", colors::SETUP, None);
    let functions = kernels::load(gpu, LAUNCH, &["empty_kernel", "tiny_increment"])?;
    let missing = |name: &str| BenchError::Internal(format!("{name} not loaded"));
    let kernels = Kernels {
        empty: functions
            .get("empty_kernel")
            .ok_or_else(|| missing("empty_kernel"))?,
        increment: functions
            .get("tiny_increment")
            .ok_or_else(|| missing("tiny_increment"))?,
    };
    let stream = gpu.new_stream()?;
    let mut counter = alloc::<u32>(&stream, 1, "the launch counter")?;
    stream
        .memset_zeros(&mut counter)
        .map_err(|e| driver_error("clearing the launch counter", e))?;
    drop(setup);

    let capture = phase("graph capture", colors::SETUP, None);
    let graph = capture_graph(&stream, config.launches, &kernels, &mut counter)?;
    graph
        .upload()
        .map_err(|e| driver_error("uploading the CUDA graph", e))?;
    drop(capture);

    let mut increments = 0u64;
    let mut table = Table::new(&[
        "mode",
        "launches",
        "host us/launch",
        "GPU us/kernel",
        "to completion us/launch",
    ]);
    for mode in [Mode::PlainEmpty, Mode::PlainIncrement, Mode::GraphIncrement] {
        let total = (config.warmup + config.iterations) as u64 * config.launches as u64;
        let _mode_range = phase(mode.label(), colors::VARIANT, work(total));
        {
            let _warmup = phase(
                "warmup",
                colors::WARMUP,
                work((config.warmup * config.launches) as u64),
            );
            for _ in 0..config.warmup {
                check_cancel(cancel)?;
                issue(
                    &stream,
                    mode,
                    config.launches,
                    &kernels,
                    &mut counter,
                    &graph,
                )?;
                gpu.synchronize("a warm-up round")?;
            }
        }
        let start_event = gpu.timing_event()?;
        let end_event = gpu.timing_event()?;
        let (mut host_us, mut gpu_us, mut done_us) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..config.iterations {
            check_cancel(cancel)?;
            let _timed = phase(
                "timed-iteration",
                colors::TIMED,
                work(config.launches as u64),
            );
            let per_launch = 1.0 / config.launches as f64;
            start_event
                .record(&stream)
                .map_err(|e| driver_error("recording the start event", e))?;
            let start = Instant::now();
            issue(
                &stream,
                mode,
                config.launches,
                &kernels,
                &mut counter,
                &graph,
            )?;
            host_us.push(start.elapsed().as_secs_f64() * 1e6 * per_launch);
            end_event
                .record(&stream)
                .map_err(|e| driver_error("recording the end event", e))?;
            stream
                .synchronize()
                .map_err(|e| driver_error(&format!("a round of {}", mode.label()), e))?;
            done_us.push(start.elapsed().as_secs_f64() * 1e6 * per_launch);
            let ms = start_event
                .elapsed_ms(&end_event)
                .map_err(|e| driver_error("reading the event times", e))?;
            gpu_us.push(f64::from(ms) * 1e3 * per_launch);
        }
        if mode != Mode::PlainEmpty {
            increments += total;
        }
        table.row(vec![
            mode.label().into(),
            config.launches.to_string(),
            format!("{:.3}", SampleSpread::of(&host_us).mean),
            format!("{:.3}", SampleSpread::of(&gpu_us).mean),
            format!("{:.3}", SampleSpread::of(&done_us).mean),
        ]);
    }

    let counted = stream
        .clone_dtoh(&counter)
        .map_err(|e| driver_error("reading the launch counter", e))?;
    let counted = counted.first().copied().unwrap_or(0);
    // The counter is 32-bit: compare modulo 2^32, as it wraps on the GPU.
    if u64::from(counted) != increments % (1u64 << 32) {
        return Err(BenchError::WrongResult {
            what: format!("{counted} tiny_increment kernels ran, expected {increments}"),
        });
    }
    writeln!(
        out,
        "launch-overhead: {} kernels per round, {} warm-up + {} timed rounds per mode",
        config.launches, config.warmup, config.iterations
    )?;
    table.write(out)?;
    writeln!(out, "check: tiny_increment ran {counted} times: ok")?;
    Ok(())
}

/// Captures `launches` tiny_increment kernels on `stream` into one graph.
fn capture_graph(
    stream: &Arc<CudaStream>,
    launches: usize,
    kernels: &Kernels,
    counter: &mut CudaSlice<u32>,
) -> Result<CudaGraph, BenchError> {
    // Relaxed: cudarc makes context calls around each launch, which the stricter modes could
    // reject while a capture is open.
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .map_err(|e| driver_error("starting the graph capture", e))?;
    let mut captured = Ok(());
    for _ in 0..launches {
        captured = launch_one(stream, kernels.increment, Some(counter));
        if captured.is_err() {
            break;
        }
    }
    // End the capture on every path: a stream left capturing rejects all later work.
    let ended = stream.end_capture(CUgraphInstantiate_flags(0));
    captured?;
    ended
        .map_err(|e| driver_error("instantiating the CUDA graph", e))?
        .ok_or_else(|| BenchError::Internal("the graph capture recorded nothing".into()))
}

/// Issues one round of `mode`: `launches` kernels, or one graph launch.
fn issue(
    stream: &Arc<CudaStream>,
    mode: Mode,
    launches: usize,
    kernels: &Kernels,
    counter: &mut CudaSlice<u32>,
    graph: &CudaGraph,
) -> Result<(), BenchError> {
    match mode {
        Mode::PlainEmpty => {
            for _ in 0..launches {
                launch_one(stream, kernels.empty, None)?;
            }
            Ok(())
        }
        Mode::PlainIncrement => {
            for _ in 0..launches {
                launch_one(stream, kernels.increment, Some(counter))?;
            }
            Ok(())
        }
        Mode::GraphIncrement => graph
            .launch()
            .map_err(|e| driver_error("launching the CUDA graph", e)),
    }
}

/// One single-thread launch of `function`, with the counter as its argument when it takes one.
fn launch_one(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    counter: Option<&mut CudaSlice<u32>>,
) -> Result<(), BenchError> {
    let mut launch = stream.launch_builder(function);
    if let Some(counter) = counter {
        launch.arg(counter);
    }
    // SAFETY: empty_kernel takes no arguments and tiny_increment(unsigned int*) takes the
    // one-element counter; callers pass the counter exactly for tiny_increment.
    unsafe { launch.launch(ONE_THREAD) }
        .map(drop)
        .map_err(|e| driver_error("launching a tiny kernel", e))
}
