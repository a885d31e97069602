//! `gemm` (seed 000): matrix multiply C = A·B in single precision (cuBLAS SGEMM, our tiled
//! and naive kernels) and on the tensor cores (cuBLAS GemmEx with BF16 and FP16 inputs, FP32
//! accumulation). TFLOP/s = 2·M·N·K / time, next to the device's peak = SMs × FLOPs per clock
//! per SM × clock, as the seed computes it.

use std::ffi::c_void;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use cudarc::cublas::CudaBlas;
use cudarc::cublas::result as cublas;
use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg,
};

use super::gpu::{Gpu, alloc, driver_error, host_vec};
use super::harness::{Table, check_cancel, phase, work};
use super::kernels::{self, SGEMM};
use super::spec::{BenchError, BenchmarkSpec, ParamSpec, Params};
use crate::capture::nvtx::colors;
use crate::model::peaks::{fp32_flops_per_clock_per_sm, tensor_flops_per_clock_per_sm};

pub(super) const NAME: &str = "gemm";

/// The implementations, in the order they run.
pub(super) const IMPLS: &[&str] = &[
    "cublas-sgemm",
    "cublas-bf16",
    "cublas-fp16",
    "tiled",
    "naive",
];

pub(super) const SPEC: BenchmarkSpec = BenchmarkSpec {
    name: NAME,
    about: "SGEMM (cuBLAS, tiled, naive) and BF16/FP16 tensor-core GEMM: TFLOP/s vs peak",
    params: &[
        ParamSpec {
            name: "sizes",
            default: "1024",
            help: "comma-separated N (an NxNxN problem) or MxNxK, e.g. 2048x40960x2048 (the seed's)",
        },
        ParamSpec {
            name: "impls",
            default: "all",
            help: "comma-separated: cublas-sgemm, cublas-bf16, cublas-fp16, tiled, naive (or all)",
        },
        ParamSpec {
            name: "iterations",
            default: "10",
            help: "timed GEMMs per implementation and size",
        },
        ParamSpec {
            name: "warmup",
            default: "2",
            help: "untimed GEMMs first (cuBLAS picks and loads its kernels here)",
        },
    ],
};

/// One problem: C (M×N) = A (M×K) · B (K×N), all row-major.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    m: usize,
    n: usize,
    k: usize,
}

impl Shape {
    fn flops(self) -> u64 {
        2 * self.m as u64 * self.n as u64 * self.k as u64
    }

    fn label(self) -> String {
        format!("{}x{}x{}", self.m, self.n, self.k)
    }
}

/// The largest dimension accepted: every index the kernels compute stays inside an int.
const MAX_DIM: u64 = 65536;

fn parse_shapes(params: &Params) -> Result<Vec<Shape>, BenchError> {
    let text = params.text("sizes")?;
    let bad = |why: String| BenchError::BadValue {
        param: "sizes",
        value: text.to_string(),
        why,
    };
    let mut shapes = Vec::new();
    for item in text.split(',').map(str::trim) {
        let dims: Vec<&str> = item.split(['x', 'X']).collect();
        let parse = |d: &str| -> Result<usize, BenchError> {
            match super::spec::parse_count(d) {
                Some(v) if (1..=MAX_DIM).contains(&v) => Ok(v as usize),
                _ => Err(bad(format!(
                    "'{d}' in '{item}' is not a dimension between 1 and {MAX_DIM}"
                ))),
            }
        };
        let shape = match dims.as_slice() {
            [n] => {
                let n = parse(n)?;
                Shape { m: n, n, k: n }
            }
            [m, n, k] => Shape {
                m: parse(m)?,
                n: parse(n)?,
                k: parse(k)?,
            },
            _ => return Err(bad(format!("'{item}' is neither N nor MxNxK"))),
        };
        // Row-major indices like row * K + k must fit in an int.
        if shape.m as u64 * shape.k as u64 > i32::MAX as u64
            || shape.k as u64 * shape.n as u64 > i32::MAX as u64
            || shape.m as u64 * shape.n as u64 > i32::MAX as u64
        {
            return Err(bad(format!(
                "'{item}' has a matrix of more than 2^31 elements"
            )));
        }
        shapes.push(shape);
    }
    Ok(shapes)
}

pub(super) struct Config {
    shapes: Vec<Shape>,
    impls: Vec<&'static str>,
    iterations: usize,
    warmup: usize,
}

impl Config {
    pub(super) fn from_params(params: &Params) -> Result<Config, BenchError> {
        Ok(Config {
            shapes: parse_shapes(params)?,
            impls: params.choices("impls", IMPLS)?,
            iterations: params.count("iterations", 1, 10_000)? as usize,
            warmup: params.count("warmup", 0, 10_000)? as usize,
        })
    }
}

/// Peak TFLOP/s: SMs × FLOPs/clock/SM × clock.
fn peak_tflops(gpu: &Gpu, per_clock_per_sm: Option<f64>) -> Option<f64> {
    let clock_hz = f64::from(gpu.clock_khz?) * 1e3;
    per_clock_per_sm.map(|flops| f64::from(gpu.sm_count) * flops * clock_hz / 1e12)
}

/// Deterministic inputs in [-1, 1): the same matrices on every run and machine.
fn fill(values: &mut [f32], seed: u64) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for v in values {
        // xorshift64*: plenty for test matrices, and no dependency.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        *v = ((r >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0;
    }
}

/// f32 → bfloat16 bits, rounding to nearest even.
fn f32_to_bf16_bits(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return 0x7FC0;
    }
    let rounding = 0x7FFF + ((bits >> 16) & 1);
    (bits.wrapping_add(rounding) >> 16) as u16
}

fn bf16_bits_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// f32 → IEEE half bits, rounding to nearest even, with subnormals, infinities and NaN.
fn f32_to_f16_bits(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xFF) as i32;
    let mantissa = bits & 0x7F_FFFF;
    if exponent == 0xFF {
        return sign | 0x7C00 | if mantissa != 0 { 0x200 } else { 0 };
    }
    let half_exponent = exponent - 127 + 15;
    if half_exponent >= 0x1F {
        return sign | 0x7C00;
    }
    let round = |kept: u32, dropped: u32, halfway: u32| -> u32 {
        if dropped > halfway || (dropped == halfway && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    if half_exponent <= 0 {
        if half_exponent < -10 {
            return sign;
        }
        // A half subnormal counts units of 2^-24: shift the full 24-bit significand down.
        let significand = mantissa | 0x80_0000;
        let shift = (14 - half_exponent) as u32;
        let kept = significand >> shift;
        let dropped = significand & ((1 << shift) - 1);
        return sign | round(kept, dropped, 1 << (shift - 1)) as u16;
    }
    let kept = ((half_exponent as u32) << 10) | (mantissa >> 13);
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    sign | round(kept, mantissa & 0x1FFF, 0x1000) as u16
}

fn f16_bits_to_f32(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1F);
    let mantissa = f32::from(bits & 0x3FF);
    match exponent {
        0 => sign * mantissa * 2f32.powi(-24),
        0x1F if mantissa == 0.0 => sign * f32::INFINITY,
        0x1F => f32::NAN,
        _ => sign * (1.0 + mantissa / 1024.0) * 2f32.powi(exponent - 15),
    }
}

/// The device buffers for one shape.
struct Operands {
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
    /// 16-bit copies of A and B for the tensor-core GEMMs, made when first needed.
    a16: Option<CudaSlice<u16>>,
    b16: Option<CudaSlice<u16>>,
}

/// Host copies of the inputs, to check sampled outputs against a double-precision product.
struct HostInputs {
    a: Vec<f32>,
    b: Vec<f32>,
}

pub(super) fn run(
    gpu: &Gpu,
    config: &Config,
    out: &mut dyn Write,
    cancel: &AtomicBool,
) -> Result<(), BenchError> {
    writeln!(out, "{}", gpu.describe())?;
    let fp32_peak = peak_tflops(gpu, fp32_flops_per_clock_per_sm(gpu.compute_capability));
    let tensor_peak = peak_tflops(gpu, tensor_flops_per_clock_per_sm(gpu.compute_capability));
    let show_peak = |p: Option<f64>| p.map_or("unknown".into(), |p| format!("{p:.1} TFLOP/s"));
    writeln!(
        out,
        "peak at the max SM clock: FP32 {}, FP16/BF16 tensor cores (dense) {}",
        show_peak(fp32_peak),
        show_peak(tensor_peak)
    )?;

    let stream = gpu.new_stream()?;
    let setup = phase("setup", colors::SETUP, None);
    let functions = kernels::load(gpu, SGEMM, &["sgemm_naive", "sgemm_tiled"])?;
    let blas = if config.impls.iter().any(|i| i.starts_with("cublas")) {
        Some(
            CudaBlas::new(stream.clone()).map_err(|e| BenchError::Cublas {
                during: "creating the cuBLAS handle".into(),
                error: format!("{:?}", e.0),
            })?,
        )
    } else {
        None
    };
    drop(setup);

    let mut table = Table::new(&[
        "implementation",
        "MxNxK",
        "mean ms",
        "TFLOP/s",
        "% of peak",
        "check",
    ]);
    for &shape in &config.shapes {
        let label = shape.label();
        let _size_range = phase(&label, colors::VARIANT, None);
        let setup = phase("setup", colors::SETUP, None);
        let mut host = HostInputs {
            a: host_vec(shape.m * shape.k, 0.0, &format!("A of gemm {label}"))?,
            b: host_vec(shape.k * shape.n, 0.0, &format!("B of gemm {label}"))?,
        };
        fill(&mut host.a, 1);
        fill(&mut host.b, 2);
        let what = |name: &str, rows: usize, cols: usize| {
            format!("{name} of gemm {label} ({rows}x{cols} floats)")
        };
        let mut operands = Operands {
            a: alloc::<f32>(&stream, host.a.len(), &what("A", shape.m, shape.k))?,
            b: alloc::<f32>(&stream, host.b.len(), &what("B", shape.k, shape.n))?,
            c: alloc::<f32>(&stream, shape.m * shape.n, &what("C", shape.m, shape.n))?,
            a16: None,
            b16: None,
        };
        stream
            .memcpy_htod(&host.a, &mut operands.a)
            .and_then(|()| stream.memcpy_htod(&host.b, &mut operands.b))
            .map_err(|e| driver_error("copying A and B to the GPU", e))?;
        drop(setup);

        for &implementation in &config.impls {
            check_cancel(cancel)?;
            let is_tensor = matches!(implementation, "cublas-bf16" | "cublas-fp16");
            if implementation == "cublas-bf16" && gpu.compute_capability.0 < 8 {
                table.row(vec![
                    implementation.into(),
                    label.clone(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "needs sm_80+".into(),
                ]);
                continue;
            }
            if is_tensor {
                prepare_16bit(&stream, implementation, &host, &mut operands, &label)?;
            }
            // Clear C so a GEMM that silently does nothing fails the check.
            stream
                .memset_zeros(&mut operands.c)
                .map_err(|e| driver_error("clearing C", e))?;
            let ms = time_gemm(
                gpu,
                &stream,
                config,
                shape,
                implementation,
                &functions,
                blas.as_ref(),
                &mut operands,
                cancel,
            )?;
            let result = stream
                .clone_dtoh(&operands.c)
                .map_err(|e| driver_error(&format!("copying C of {implementation} back"), e))?;
            let check = check_samples(shape, implementation, &host, &result);
            let tflops = shape.flops() as f64 / (ms * 1e-3) / 1e12;
            let peak = if is_tensor { tensor_peak } else { fp32_peak };
            table.row(vec![
                implementation.into(),
                label.clone(),
                format!("{ms:.3}"),
                format!("{tflops:.2}"),
                peak.map_or("-".into(), |p| format!("{:.1}", 100.0 * tflops / p)),
                check,
            ]);
        }
    }
    writeln!(
        out,
        "gemm: C = A·B row-major, {} warm-up + {} timed runs each, time from CUDA events",
        config.warmup, config.iterations
    )?;
    table.write(out)?;
    Ok(())
}

/// Makes the 16-bit copies of A and B for `implementation` (BF16 or FP16), replacing the
/// other format's if that is what the buffers hold now.
fn prepare_16bit(
    stream: &Arc<CudaStream>,
    implementation: &str,
    host: &HostInputs,
    operands: &mut Operands,
    label: &str,
) -> Result<(), BenchError> {
    let convert: fn(f32) -> u16 = if implementation == "cublas-bf16" {
        f32_to_bf16_bits
    } else {
        f32_to_f16_bits
    };
    let a16: Vec<u16> = host.a.iter().map(|v| convert(*v)).collect();
    let b16: Vec<u16> = host.b.iter().map(|v| convert(*v)).collect();
    if operands.a16.is_none() {
        operands.a16 = Some(alloc::<u16>(
            stream,
            a16.len(),
            &format!("16-bit A of gemm {label}"),
        )?);
    }
    if operands.b16.is_none() {
        operands.b16 = Some(alloc::<u16>(
            stream,
            b16.len(),
            &format!("16-bit B of gemm {label}"),
        )?);
    }
    if let (Some(a), Some(b)) = (operands.a16.as_mut(), operands.b16.as_mut()) {
        stream
            .memcpy_htod(&a16, a)
            .and_then(|()| stream.memcpy_htod(&b16, b))
            .map_err(|e| driver_error("copying the 16-bit A and B to the GPU", e))?;
    }
    // The host vectors are pageable: the copies are done when memcpy returns, so they can go.
    Ok(())
}

/// Runs the warm-up and timed GEMMs and returns the mean milliseconds per GEMM.
#[allow(clippy::too_many_arguments)]
fn time_gemm(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    config: &Config,
    shape: Shape,
    implementation: &'static str,
    functions: &std::collections::HashMap<String, CudaFunction>,
    blas: Option<&CudaBlas>,
    operands: &mut Operands,
    cancel: &AtomicBool,
) -> Result<f64, BenchError> {
    let flops = shape.flops();
    let runs = (config.warmup + config.iterations) as u64;
    let _range = phase(implementation, colors::COMPUTE, work(flops * runs));
    {
        let _warmup = phase("warmup", colors::WARMUP, work(flops * config.warmup as u64));
        for _ in 0..config.warmup {
            check_cancel(cancel)?;
            launch_gemm(stream, shape, implementation, functions, blas, operands)?;
        }
    }
    let start = gpu.timing_event()?;
    let end = gpu.timing_event()?;
    start
        .record(stream)
        .map_err(|e| driver_error("recording the start event", e))?;
    for _ in 0..config.iterations {
        check_cancel(cancel)?;
        let _iteration = phase("timed-iteration", colors::TIMED, work(flops));
        launch_gemm(stream, shape, implementation, functions, blas, operands)?;
    }
    end.record(stream)
        .map_err(|e| driver_error("recording the end event", e))?;
    let ms = start
        .elapsed_ms(&end)
        .map_err(|e| driver_error(&format!("running {implementation} on {}", shape.label()), e))?;
    Ok(f64::from(ms) / config.iterations as f64)
}

/// Enqueues one GEMM of `implementation` on `stream`.
fn launch_gemm(
    stream: &Arc<CudaStream>,
    shape: Shape,
    implementation: &'static str,
    functions: &std::collections::HashMap<String, CudaFunction>,
    blas: Option<&CudaBlas>,
    operands: &mut Operands,
) -> Result<(), BenchError> {
    let (m, n, k) = (shape.m as i32, shape.n as i32, shape.k as i32);
    let (alpha, beta) = (1.0f32, 0.0f32);
    match implementation {
        "tiled" | "naive" => {
            let (name, tile) = if implementation == "tiled" {
                // Must match SGEMM_TILE in kernels/sgemm.cu.
                ("sgemm_tiled", 32u32)
            } else {
                ("sgemm_naive", 16u32)
            };
            let function = functions
                .get(name)
                .ok_or_else(|| BenchError::Internal(format!("{name} not loaded")))?;
            let config = LaunchConfig {
                grid_dim: (
                    shape.n.div_ceil(tile as usize) as u32,
                    shape.m.div_ceil(tile as usize) as u32,
                    1,
                ),
                block_dim: (tile, tile, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = stream.launch_builder(function);
            launch
                .arg(&m)
                .arg(&n)
                .arg(&k)
                .arg(&alpha)
                .arg(&operands.a)
                .arg(&operands.b)
                .arg(&beta)
                .arg(&mut operands.c);
            // SAFETY: the kernel takes (int M, int N, int K, float alpha, const float* A,
            // const float* B, float beta, float* C) with A M×K, B K×N, C M×N, exactly the
            // buffers' sizes, and bounds-checks every row and column.
            unsafe { launch.launch(config) }
                .map(drop)
                .map_err(|e| driver_error(&format!("launching {name}"), e))
        }
        _ => {
            let blas = blas.ok_or_else(|| BenchError::Internal("no cuBLAS handle".into()))?;
            cublas_gemm(stream, shape, implementation, blas, operands)
        }
    }
}

/// One cuBLAS GEMM. cuBLAS is column-major: a row-major C = A·B is the column-major
/// Cᵀ = Bᵀ·Aᵀ, so B goes first and the leading dimensions are the row lengths.
fn cublas_gemm(
    stream: &Arc<CudaStream>,
    shape: Shape,
    implementation: &'static str,
    blas: &CudaBlas,
    operands: &mut Operands,
) -> Result<(), BenchError> {
    let (m, n, k) = (shape.m as i32, shape.n as i32, shape.k as i32);
    let (alpha, beta) = (1.0f32, 0.0f32);
    let during = || format!("{implementation} {}", shape.label());
    let (c_ptr, _c_sync) = operands.c.device_ptr_mut(stream);
    let status = if implementation == "cublas-sgemm" {
        let (a_ptr, _a_sync) = operands.a.device_ptr(stream);
        let (b_ptr, _b_sync) = operands.b.device_ptr(stream);
        // SAFETY: the pointers are live device buffers of the sizes the dimensions describe
        // (B: K×N, A: M×K, C: M×N floats, row-major = column-major transposed); alpha and
        // beta are host scalars, cuBLAS's default pointer mode.
        unsafe {
            cublas::sgemm(
                *blas.handle(),
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                &alpha,
                b_ptr as *const f32,
                n,
                a_ptr as *const f32,
                k,
                &beta,
                c_ptr as *mut f32,
                n,
            )
        }
    } else {
        let data_type = if implementation == "cublas-bf16" {
            cudaDataType::CUDA_R_16BF
        } else {
            cudaDataType::CUDA_R_16F
        };
        let (Some(a16), Some(b16)) = (operands.a16.as_ref(), operands.b16.as_ref()) else {
            return Err(BenchError::Internal("16-bit operands not prepared".into()));
        };
        let (a_ptr, _a_sync) = a16.device_ptr(stream);
        let (b_ptr, _b_sync) = b16.device_ptr(stream);
        // SAFETY: as for SGEMM, with 16-bit A and B of the same element counts and an FP32 C;
        // FP32 compute with 16-bit inputs lets cuBLAS use the tensor cores.
        unsafe {
            cublas::gemm_ex(
                *blas.handle(),
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                (&alpha as *const f32).cast::<c_void>(),
                b_ptr as *const c_void,
                data_type,
                n,
                a_ptr as *const c_void,
                data_type,
                k,
                (&beta as *const f32).cast::<c_void>(),
                c_ptr as *mut c_void,
                cudaDataType::CUDA_R_32F,
                n,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
    };
    status.map_err(|e| BenchError::Cublas {
        during: during(),
        error: format!("{:?}", e.0),
    })
}

/// Compares 16 sampled entries of C with a double-precision product of the same inputs
/// (rounded to 16 bits where the GEMM used 16-bit inputs). The error is measured against
/// Σ|a·b|, the scale that rounding errors grow with.
fn check_samples(shape: Shape, implementation: &str, host: &HostInputs, c: &[f32]) -> String {
    let round: fn(f32) -> f32 = match implementation {
        "cublas-bf16" => |v| bf16_bits_to_f32(f32_to_bf16_bits(v)),
        "cublas-fp16" => |v| f16_bits_to_f32(f32_to_f16_bits(v)),
        _ => |v| v,
    };
    let samples = 16usize;
    let mut worst = 0.0f64;
    for s in 0..samples {
        // Spread the samples over rows and columns, corners included.
        let row = (s * (shape.m - 1)) / (samples - 1);
        let col = ((samples - 1 - s) * (shape.n - 1)) / (samples - 1);
        let (mut exact, mut scale) = (0.0f64, 0.0f64);
        for i in 0..shape.k {
            let a = f64::from(round(
                host.a.get(row * shape.k + i).copied().unwrap_or(f32::NAN),
            ));
            let b = f64::from(round(
                host.b.get(i * shape.n + col).copied().unwrap_or(f32::NAN),
            ));
            exact += a * b;
            scale += (a * b).abs();
        }
        let got = f64::from(c.get(row * shape.n + col).copied().unwrap_or(f32::NAN));
        let error = (got - exact).abs() / scale.max(f64::MIN_POSITIVE);
        // NaN compares false: count it as the worst possible.
        worst = if error.is_nan() {
            f64::INFINITY
        } else {
            worst.max(error)
        };
    }
    // FP32 accumulation over K terms: comfortably below 1e-3 of Σ|a·b| when correct.
    if worst < 1e-3 {
        format!("ok ({worst:.0e})")
    } else {
        format!("WRONG ({worst:.1e})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_square_and_rectangular() {
        let spec = SPEC;
        let mut params = Params::defaults(&spec);
        assert!(params.set("sizes", "512, 2048x40960x2048").is_ok());
        let shapes = parse_shapes(&params).unwrap_or_default();
        assert_eq!(
            shapes,
            vec![
                Shape {
                    m: 512,
                    n: 512,
                    k: 512
                },
                Shape {
                    m: 2048,
                    n: 40960,
                    k: 2048
                }
            ]
        );
        assert_eq!(
            shapes.get(1).map(|s| s.flops()),
            Some(2 * 2048 * 40960 * 2048)
        );
        for bad in ["0", "12x12", "65537", "x", "50000x50000x1"] {
            assert!(params.set("sizes", bad).is_ok());
            assert!(parse_shapes(&params).is_err(), "{bad}");
        }
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(f32_to_bf16_bits(1.0), 0x3F80);
        assert_eq!(bf16_bits_to_f32(f32_to_bf16_bits(-2.5)), -2.5);
        // 1 + 2^-8 is halfway between two bf16 values: ties go to the even one, 1.0.
        assert_eq!(f32_to_bf16_bits(1.0 + 2f32.powi(-8)), 0x3F80);
        assert_eq!(f32_to_bf16_bits(1.0 + 3.0 * 2f32.powi(-8)), 0x3F82);
        assert_eq!(f32_to_bf16_bits(f32::NAN), 0x7FC0);
    }

    #[test]
    fn f16_converts_normals_subnormals_and_limits() {
        assert_eq!(f32_to_f16_bits(1.0), 0x3C00);
        assert_eq!(f32_to_f16_bits(-2.0), 0xC000);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7BFF);
        assert_eq!(f32_to_f16_bits(1e6), 0x7C00);
        assert_eq!(f32_to_f16_bits(2f32.powi(-24)), 0x0001);
        assert_eq!(f32_to_f16_bits(2f32.powi(-14)), 0x0400);
        assert_eq!(f32_to_f16_bits(1e-10), 0x0000);
        // 1 + 2^-11 is halfway: ties to even (1.0); 1 + 3·2^-11 rounds up.
        assert_eq!(f32_to_f16_bits(1.0 + 2f32.powi(-11)), 0x3C00);
        assert_eq!(f32_to_f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3C02);
        let mut values = vec![0.0f32; 1000];
        fill(&mut values, 7);
        for v in values {
            let back = f16_bits_to_f32(f32_to_f16_bits(v));
            assert!(
                (back - v).abs() <= v.abs() * 2f32.powi(-11) + 2f32.powi(-25),
                "{v} {back}"
            );
        }
    }

    #[test]
    fn fill_stays_in_range_and_repeats() {
        let mut a = vec![0.0f32; 4096];
        let mut b = vec![0.0f32; 4096];
        fill(&mut a, 3);
        fill(&mut b, 3);
        assert_eq!(a, b);
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
        assert!(a.iter().any(|v| *v < -0.5) && a.iter().any(|v| *v > 0.5));
    }

    #[test]
    fn sampled_check_accepts_exact_and_rejects_wrong_products() {
        let shape = Shape { m: 3, n: 4, k: 5 };
        let mut host = HostInputs {
            a: vec![0.0; 15],
            b: vec![0.0; 20],
        };
        fill(&mut host.a, 1);
        fill(&mut host.b, 2);
        let mut c = vec![0.0f32; 12];
        for row in 0..3 {
            for col in 0..4 {
                c[row * 4 + col] = (0..5)
                    .map(|i| host.a[row * 5 + i] * host.b[i * 4 + col])
                    .sum();
            }
        }
        assert!(check_samples(shape, "tiled", &host, &c).starts_with("ok"));
        // Row 0, last column: the first sample.
        c[3] += 1.0;
        assert!(check_samples(shape, "tiled", &host, &c).starts_with("WRONG"));
    }

    #[test]
    fn peaks_follow_the_seed_formula() {
        // An H100 SXM: 132 SMs at 1980 MHz, 4096 dense BF16 FLOPs/clock/SM ≈ 1070 TFLOP/s.
        let per_sm = tensor_flops_per_clock_per_sm((9, 0)).unwrap_or(0.0);
        let tflops = 132.0 * per_sm * 1.98e9 / 1e12;
        assert!((tflops - 1070.5).abs() < 1.0, "{tflops}");
        assert_eq!(fp32_flops_per_clock_per_sm((9, 0)), Some(256.0));
        assert_eq!(fp32_flops_per_clock_per_sm((3, 5)), None);
    }
}
