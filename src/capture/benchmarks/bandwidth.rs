//! `bandwidth` (seed 000, after CUDA's bandwidthTest): host-to-device, device-to-host and
//! device-to-device copies with pinned and pageable host memory, from 1 KB to 256 MB, in GB/s.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice};

use super::gpu::{Gpu, alloc, alloc_pinned, driver_error, host_vec};
use super::harness::{Table, check_cancel, phase, work};
use super::spec::{BenchError, BenchmarkSpec, ParamSpec, Params, format_bytes};
use crate::capture::nvtx::colors;

pub(super) const NAME: &str = "bandwidth";

const DIRECTIONS: &[&str] = &["h2d", "d2h", "d2d"];
const MEMORY: &[&str] = &["pinned", "pageable"];

pub(super) const SPEC: BenchmarkSpec = BenchmarkSpec {
    name: NAME,
    about: "H2D, D2H and D2D copy bandwidth with pinned and pageable host memory, per size",
    params: &[
        ParamSpec {
            name: "sizes",
            default: "1K,64K,1M,16M,256M",
            help: "comma-separated copy sizes in bytes, 1K to 4G (K/M/G = 1024-based)",
        },
        ParamSpec {
            name: "directions",
            default: "all",
            help: "comma-separated: h2d, d2h, d2d (or all)",
        },
        ParamSpec {
            name: "memory",
            default: "all",
            help: "host memory for h2d/d2h: pinned, pageable (or all)",
        },
        ParamSpec {
            name: "iterations",
            default: "5",
            help: "timed copies per size, direction and memory",
        },
        ParamSpec {
            name: "warmup",
            default: "1",
            help: "untimed copies first",
        },
    ],
};

pub(super) struct Config {
    sizes: Vec<u64>,
    directions: Vec<&'static str>,
    memory: Vec<&'static str>,
    iterations: usize,
    warmup: usize,
}

impl Config {
    pub(super) fn from_params(params: &Params) -> Result<Config, BenchError> {
        Ok(Config {
            sizes: params.byte_sizes("sizes", 1, 4 << 30)?,
            directions: params.choices("directions", DIRECTIONS)?,
            memory: params.choices("memory", MEMORY)?,
            iterations: params.count("iterations", 1, 100_000)? as usize,
            warmup: params.count("warmup", 0, 100_000)? as usize,
        })
    }

    /// The table's columns: (direction, host memory), memory `None` for d2d.
    fn columns(&self) -> Vec<(&'static str, Option<&'static str>)> {
        let mut columns = Vec::new();
        for &direction in &self.directions {
            if direction == "d2d" {
                columns.push((direction, None));
            } else {
                for &memory in &self.memory {
                    columns.push((direction, Some(memory)));
                }
            }
        }
        columns
    }
}

/// The host side of a copy.
enum HostBuffer {
    Pinned(PinnedHostSlice<u8>),
    Pageable(Vec<u8>),
}

/// Every buffer one size needs, allocated only for the columns asked for.
struct Buffers {
    device: CudaSlice<u8>,
    device_second: Option<CudaSlice<u8>>,
    pinned: Option<HostBuffer>,
    pageable: Option<HostBuffer>,
}

pub(super) fn run(
    gpu: &Gpu,
    config: &Config,
    out: &mut dyn Write,
    cancel: &AtomicBool,
) -> Result<(), BenchError> {
    writeln!(out, "{}", gpu.describe())?;
    let stream = gpu.new_stream()?;
    let columns = config.columns();
    let mut header = vec!["size".to_string()];
    header.extend(columns.iter().map(|(direction, memory)| match memory {
        Some(memory) => format!("{direction} {memory}"),
        None => direction.to_string(),
    }));
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header_refs);

    for &size in &config.sizes {
        let label = format_bytes(size);
        let len = size as usize;
        let setup = phase(&format!("setup {label}"), colors::SETUP, None);
        let needs_host = |memory: &str| {
            columns
                .iter()
                .any(|(d, m)| *d != "d2d" && *m == Some(memory))
        };
        let mut buffers = Buffers {
            device: alloc::<u8>(&stream, len, &format!("a {label} device buffer"))?,
            device_second: if config.directions.contains(&"d2d") {
                Some(alloc::<u8>(
                    &stream,
                    len,
                    &format!("a second {label} device buffer"),
                )?)
            } else {
                None
            },
            pinned: if needs_host("pinned") {
                Some(HostBuffer::Pinned(alloc_pinned::<u8>(
                    gpu,
                    len,
                    &format!("a {label} buffer"),
                )?))
            } else {
                None
            },
            pageable: if needs_host("pageable") {
                // Touch every page now, so the first copy does not pay for page faults.
                Some(HostBuffer::Pageable(host_vec(
                    len,
                    1u8,
                    &format!("a {label} pageable buffer"),
                )?))
            } else {
                None
            },
        };
        stream
            .memset_zeros(&mut buffers.device)
            .map_err(|e| driver_error("clearing the device buffer", e))?;
        drop(setup);

        let mut row = vec![label.clone()];
        for &(direction, memory) in &columns {
            let gbps = time_copies(
                gpu,
                &stream,
                config,
                size,
                direction,
                memory,
                &mut buffers,
                cancel,
            )?;
            row.push(format!("{gbps:.2}"));
        }
        table.row(row);
    }
    writeln!(
        out,
        "bandwidth: GB/s (10^9 bytes/s) from CUDA events, {} warm-up + {} timed copies each; \
         d2d counts each byte read and written, as bandwidthTest does",
        config.warmup, config.iterations
    )?;
    table.write(out)?;
    Ok(())
}

/// Times `iterations` copies in one direction and returns GB/s.
#[allow(clippy::too_many_arguments)]
fn time_copies(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    config: &Config,
    size: u64,
    direction: &'static str,
    memory: Option<&'static str>,
    buffers: &mut Buffers,
    cancel: &AtomicBool,
) -> Result<f64, BenchError> {
    let name = match memory {
        Some(memory) => format!("{direction} {memory} {}", format_bytes(size)),
        None => format!("{direction} {}", format_bytes(size)),
    };
    // d2d moves every byte twice through device memory (a read and a write).
    let moved_per_copy = if direction == "d2d" { 2 * size } else { size };
    let _range = phase(
        &name,
        colors::COPY,
        work(size * (config.warmup + config.iterations) as u64),
    );
    {
        let _warmup = phase("warmup", colors::WARMUP, work(size * config.warmup as u64));
        for _ in 0..config.warmup {
            check_cancel(cancel)?;
            copy_once(stream, direction, memory, buffers, &name)?;
        }
    }
    let start = gpu.timing_event()?;
    let end = gpu.timing_event()?;
    let timed = phase(
        "timed",
        colors::TIMED,
        work(size * config.iterations as u64),
    );
    start
        .record(stream)
        .map_err(|e| driver_error("recording the start event", e))?;
    for _ in 0..config.iterations {
        check_cancel(cancel)?;
        copy_once(stream, direction, memory, buffers, &name)?;
    }
    end.record(stream)
        .map_err(|e| driver_error("recording the end event", e))?;
    let ms = start
        .elapsed_ms(&end)
        .map_err(|e| driver_error(&format!("the {name} copies"), e))?;
    drop(timed);
    let seconds = f64::from(ms) * 1e-3;
    Ok((moved_per_copy * config.iterations as u64) as f64 / seconds / 1e9)
}

/// Enqueues one copy.
fn copy_once(
    stream: &Arc<CudaStream>,
    direction: &str,
    memory: Option<&str>,
    buffers: &mut Buffers,
    name: &str,
) -> Result<(), BenchError> {
    let missing = || BenchError::Internal(format!("no buffer for {name}"));
    let host = match memory {
        Some("pinned") => Some(buffers.pinned.as_mut().ok_or_else(missing)?),
        Some(_) => Some(buffers.pageable.as_mut().ok_or_else(missing)?),
        None => None,
    };
    let result = match (direction, host) {
        ("h2d", Some(HostBuffer::Pinned(h))) => stream.memcpy_htod(h, &mut buffers.device),
        ("h2d", Some(HostBuffer::Pageable(h))) => stream.memcpy_htod(h, &mut buffers.device),
        ("d2h", Some(HostBuffer::Pinned(h))) => stream.memcpy_dtoh(&buffers.device, h),
        ("d2h", Some(HostBuffer::Pageable(h))) => stream.memcpy_dtoh(&buffers.device, h),
        ("d2d", None) => {
            let second = buffers.device_second.as_mut().ok_or_else(missing)?;
            stream.memcpy_dtod(&buffers.device, second)
        }
        _ => return Err(missing()),
    };
    result.map_err(|e| driver_error(&format!("copying {name}"), e))
}
