//! `streams`: the same copies and kernels — each chunk copied in, scaled, copied out — first
//! serialized on the legacy default stream, then spread over several non-blocking streams,
//! with pinned and with pageable host memory. Copies overlap kernels (and copies in the other
//! direction) only with non-blocking streams and pinned memory; the timeline shows why.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};

use super::gpu::{DrainOnDrop, Gpu, alloc, alloc_pinned, driver_error, host_vec};
use super::harness::{SampleSpread, Table, check_cancel, phase, work};
use super::kernels::{self, STREAMS};
use super::spec::{BenchError, BenchmarkSpec, ParamSpec, Params, format_bytes};
use crate::capture::nvtx::colors;

pub(super) const NAME: &str = "streams";

pub(super) const SPEC: BenchmarkSpec = BenchmarkSpec {
    name: NAME,
    about: "copy/scale/copy chunks on the legacy default stream vs non-blocking streams, pinned vs pageable",
    params: &[
        ParamSpec {
            name: "elements",
            default: "16M",
            help: "floats in all, split evenly into one chunk per stream (16M = 64 MiB)",
        },
        ParamSpec {
            name: "streams",
            default: "4",
            help: "non-blocking streams (and chunks), 1 to 32",
        },
        ParamSpec {
            name: "passes",
            default: "32",
            help: "multiplications per element in the kernel: how long it runs next to the copies",
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
    elements: usize,
    streams: usize,
    passes: i32,
    iterations: usize,
    warmup: usize,
}

impl Config {
    pub(super) fn from_params(params: &Params) -> Result<Config, BenchError> {
        let config = Config {
            elements: params.count("elements", 1, 512 << 20)? as usize,
            streams: params.count("streams", 1, 32)? as usize,
            passes: params.count("passes", 1, 100_000)? as i32,
            iterations: params.count("iterations", 1, 10_000)? as usize,
            warmup: params.count("warmup", 0, 10_000)? as usize,
        };
        if config.elements < config.streams {
            return Err(BenchError::BadValue {
                param: "elements",
                value: config.elements.to_string(),
                why: format!("needs at least one element per stream ({})", config.streams),
            });
        }
        Ok(config)
    }

    /// Chunk `index` as (first element, length): the last chunk takes the remainder.
    fn chunk(&self, index: usize) -> (usize, usize) {
        let base = self.elements / self.streams;
        let start = index * base;
        let len = if index + 1 == self.streams {
            self.elements - start
        } else {
            base
        };
        (start, len)
    }
}

/// How a round is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    LegacyPageable,
    LegacyPinned,
    StreamsPageable,
    StreamsPinned,
}

impl Mode {
    const ALL: [Mode; 4] = [
        Mode::LegacyPageable,
        Mode::LegacyPinned,
        Mode::StreamsPageable,
        Mode::StreamsPinned,
    ];

    fn label(self) -> &'static str {
        match self {
            Mode::LegacyPageable => "default stream, pageable",
            Mode::LegacyPinned => "default stream, pinned",
            Mode::StreamsPageable => "non-blocking streams, pageable",
            Mode::StreamsPinned => "non-blocking streams, pinned",
        }
    }

    fn pinned(self) -> bool {
        matches!(self, Mode::LegacyPinned | Mode::StreamsPinned)
    }

    fn own_streams(self) -> bool {
        matches!(self, Mode::StreamsPageable | Mode::StreamsPinned)
    }
}

/// Per chunk: its host input and output (both kinds) and its device buffers.
struct Chunk {
    pinned_in: PinnedHostSlice<f32>,
    pinned_out: PinnedHostSlice<f32>,
    pageable_in: Vec<f32>,
    pageable_out: Vec<f32>,
    device_in: CudaSlice<f32>,
    device_out: CudaSlice<f32>,
}

pub(super) fn run(
    gpu: &Gpu,
    config: &Config,
    out: &mut dyn Write,
    cancel: &AtomicBool,
) -> Result<(), BenchError> {
    writeln!(out, "{}", gpu.describe())?;
    let setup = phase("setup", colors::SETUP, None);
    let functions = kernels::load(gpu, STREAMS, &["copy_scale"])?;
    let copy_scale = functions
        .get("copy_scale")
        .ok_or_else(|| BenchError::Internal("copy_scale not loaded".into()))?;
    let legacy = gpu.legacy_default_stream();
    let streams = (0..config.streams)
        .map(|_| gpu.new_stream())
        .collect::<Result<Vec<_>, _>>()?;
    let mut chunks = Vec::with_capacity(config.streams);
    for index in 0..config.streams {
        let (start, len) = config.chunk(index);
        let what = |buffer: &str| format!("{buffer} of chunk {index} ({len} floats)");
        // Distinct, exactly representable values, so the check catches a misplaced chunk.
        let input: Vec<f32> = (start..start + len).map(|i| (i % 4096) as f32).collect();
        let mut pinned_in = alloc_pinned::<f32>(gpu, len, &what("the input"))?;
        pinned_in
            .as_mut_slice()
            .map_err(|e| driver_error("filling pinned memory", e))?
            .copy_from_slice(&input);
        chunks.push(Chunk {
            pinned_in,
            pinned_out: alloc_pinned::<f32>(gpu, len, &what("the output"))?,
            pageable_in: input,
            pageable_out: host_vec(len, 0.0, &what("the pageable output"))?,
            device_in: alloc::<f32>(&legacy, len, &what("the device input"))?,
            device_out: alloc::<f32>(&legacy, len, &what("the device output"))?,
        });
    }
    gpu.synchronize("setting up the buffers")?;
    let _drain = DrainOnDrop(gpu);
    drop(setup);

    // Each round moves every element in and out once.
    let bytes_per_round = 8 * config.elements as u64;
    let mut table = Table::new(&[
        "mode",
        "mean ms",
        "min ms",
        "GB/s in+out",
        "vs default+pageable",
    ]);
    let mut baseline_ms = None;
    for mode in Mode::ALL {
        let _mode_range = phase(
            mode.label(),
            colors::VARIANT,
            work(bytes_per_round * (config.warmup + config.iterations) as u64),
        );
        {
            let _warmup = phase(
                "warmup",
                colors::WARMUP,
                work(bytes_per_round * config.warmup as u64),
            );
            for _ in 0..config.warmup {
                check_cancel(cancel)?;
                round(
                    gpu,
                    config,
                    mode,
                    &legacy,
                    &streams,
                    copy_scale,
                    &mut chunks,
                )?;
            }
        }
        let mut round_ms = Vec::with_capacity(config.iterations);
        for _ in 0..config.iterations {
            check_cancel(cancel)?;
            let _timed = phase("timed-iteration", colors::TIMED, work(bytes_per_round));
            let start = Instant::now();
            round(
                gpu,
                config,
                mode,
                &legacy,
                &streams,
                copy_scale,
                &mut chunks,
            )?;
            round_ms.push(start.elapsed().as_secs_f64() * 1e3);
        }
        check_outputs(config, mode, &chunks)?;
        let s = SampleSpread::of(&round_ms);
        let baseline = *baseline_ms.get_or_insert(s.mean);
        table.row(vec![
            mode.label().into(),
            format!("{:.3}", s.mean),
            format!("{:.3}", s.min),
            format!("{:.2}", bytes_per_round as f64 / (s.mean * 1e-3) / 1e9),
            format!("{:.2}x", baseline / s.mean),
        ]);
    }
    writeln!(
        out,
        "streams: {} floats ({}) in {} chunks, kernel {} passes; host-timed rounds to completion",
        config.elements,
        format_bytes(4 * config.elements as u64),
        config.streams,
        config.passes
    )?;
    table.write(out)?;
    Ok(())
}

/// One round: every chunk copied in, scaled, copied out, then wait for all of it.
#[allow(clippy::too_many_arguments)]
fn round(
    gpu: &Gpu,
    config: &Config,
    mode: Mode,
    legacy: &Arc<CudaStream>,
    streams: &[Arc<CudaStream>],
    copy_scale: &CudaFunction,
    chunks: &mut [Chunk],
) -> Result<(), BenchError> {
    for (index, chunk) in chunks.iter_mut().enumerate() {
        let stream = if mode.own_streams() {
            streams
                .get(index)
                .ok_or_else(|| BenchError::Internal("fewer streams than chunks".into()))?
        } else {
            legacy
        };
        let copy_in = if mode.pinned() {
            stream.memcpy_htod(&chunk.pinned_in, &mut chunk.device_in)
        } else {
            stream.memcpy_htod(&chunk.pageable_in, &mut chunk.device_in)
        };
        copy_in.map_err(|e| driver_error(&format!("copying chunk {index} in"), e))?;

        let n = chunk.device_in.len() as i32;
        let factor = 1.0f32;
        let mut launch = stream.launch_builder(copy_scale);
        launch
            .arg(&n)
            .arg(&config.passes)
            .arg(&factor)
            .arg(&chunk.device_in)
            .arg(&mut chunk.device_out);
        // A grid of at most 1024 blocks: the grid-stride loop covers the rest, and several
        // chunks' kernels can then share the GPU.
        let blocks = (n as u32).div_ceil(256).min(1024);
        let launch_config = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: copy_scale(int n, int passes, float factor, const float* in, float* out)
        // matches these arguments; both buffers hold n floats and the kernel guards i < n.
        unsafe { launch.launch(launch_config) }
            .map_err(|e| driver_error(&format!("launching copy_scale on chunk {index}"), e))?;

        let copy_out = if mode.pinned() {
            stream.memcpy_dtoh(&chunk.device_out, &mut chunk.pinned_out)
        } else {
            stream.memcpy_dtoh(&chunk.device_out, &mut chunk.pageable_out)
        };
        copy_out.map_err(|e| driver_error(&format!("copying chunk {index} out"), e))?;
    }
    gpu.synchronize(&format!("a round of {}", mode.label()))
}

/// With factor 1 every output must equal its input: a lost or misordered copy shows here.
fn check_outputs(config: &Config, mode: Mode, chunks: &[Chunk]) -> Result<(), BenchError> {
    for (index, chunk) in chunks.iter().enumerate() {
        let (start, _) = config.chunk(index);
        let output: &[f32] = if mode.pinned() {
            chunk
                .pinned_out
                .as_slice()
                .map_err(|e| driver_error("reading pinned output", e))?
        } else {
            &chunk.pageable_out
        };
        let wrong = output
            .iter()
            .enumerate()
            .find(|(i, v)| **v != ((start + i) % 4096) as f32);
        if let Some((i, v)) = wrong {
            return Err(BenchError::WrongResult {
                what: format!(
                    "{}: element {} is {v}, expected {}",
                    mode.label(),
                    start + i,
                    (start + i) % 4096
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_element_once() {
        let config = Config {
            elements: 10,
            streams: 3,
            passes: 1,
            iterations: 1,
            warmup: 0,
        };
        let chunks: Vec<_> = (0..3).map(|i| config.chunk(i)).collect();
        assert_eq!(chunks, vec![(0, 3), (3, 3), (6, 4)]);
    }
}
