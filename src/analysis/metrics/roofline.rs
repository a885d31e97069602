//! The roofline: a kernel's achieved FLOP/s against its arithmetic intensity
//! (FLOPs per DRAM byte), under the device's ceilings computed from the
//! report's GPU properties (`TARGET_INFO_GPU`: SMs, clock, memory bandwidth)
//! and each architecture's FLOPs per clock per SM.
//!
//! FLOPs come from FP32 instruction counters when collected (2 per FFMA, 1 per
//! FADD and FMUL), else from the work the benchmark knows: Sightline's `gemm`
//! benchmark gives each of its NVTX ranges the FLOPs it runs (2·M·N·K per
//! GEMM) as payload. Without FLOPs or DRAM bytes a kernel is not plotted, and
//! [`Point`]'s absence says why ([`NotPlotted`]).

use std::collections::HashMap;

use crate::analysis::projection::innermost_ranges;
use crate::model::{Gpu, KernelMetrics, Payload, Trace, peaks};

pub const DRAM_READ: &str = "dram__bytes_read.sum";
pub const DRAM_WRITE: &str = "dram__bytes_write.sum";
pub const FFMA: &str = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
pub const FADD: &str = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum";
pub const FMUL: &str = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum";
/// Tensor-pipe activity: a kernel that uses the tensor cores does FLOPs the
/// FP32 instruction counters do not count.
pub const TENSOR_PIPE: &str =
    "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active";
/// Tensor-pipe activity (%) above which the FP32 counters undercount.
const TENSOR_ACTIVE_PCT: f64 = 1.0;

/// The NVTX range Sightline's GEMM benchmark runs in: inside it, range
/// payloads are FLOPs (other benchmarks' payloads are bytes or launches).
pub const GEMM_BENCHMARK_RANGE: &str = "gemm";

/// The device's peaks.
#[derive(Clone, Debug, PartialEq)]
pub struct Ceilings {
    pub gpu_name: String,
    /// FP32 FMA peak, FLOP/s.
    pub fp32: f64,
    /// Dense FP16/BF16 tensor peak, FLOP/s, when the architecture is tabled.
    pub tensor: Option<f64>,
    /// DRAM bandwidth, bytes/s.
    pub dram: f64,
}

/// The ceilings of `gpu`, or why there are none.
pub fn ceilings(gpu: &Gpu) -> Result<Ceilings, String> {
    let (major, minor) = gpu.compute_capability;
    let cc = (major as i32, minor as i32);
    let Some(fp32_per_clk) = peaks::fp32_flops_per_clock_per_sm(cc) else {
        return Err(format!(
            "no FLOP/clock table for compute capability {major}.{minor}"
        ));
    };
    let tensor_per_clk = peaks::tensor_flops_per_clock_per_sm(cc);
    if gpu.sm_count == 0 || gpu.clock_rate_khz == 0 {
        return Err("the report does not record the GPU's SM count and clock".into());
    }
    if gpu.memory_bandwidth == 0 {
        return Err("the report does not record the GPU's memory bandwidth".into());
    }
    let per_clock = gpu.sm_count as f64 * gpu.clock_rate_khz as f64 * 1e3;
    Ok(Ceilings {
        gpu_name: gpu.name.clone(),
        fp32: fp32_per_clk * per_clock,
        tensor: tensor_per_clk.map(|t| t * per_clock),
        dram: gpu.memory_bandwidth as f64,
    })
}

/// Where a kernel's FLOPs came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FlopSource {
    Counters,
    BenchmarkWork,
}

/// Where a kernel's DRAM bytes came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ByteSource {
    /// Counted: `dram__bytes_read.sum` + `dram__bytes_write.sum`.
    Counters,
    /// Estimated from nsys's sampled DRAM read and write bandwidth (% of the
    /// GPU's peak) × the peak × each instance's duration.
    SampledBandwidth,
}

/// nsys's sampled DRAM bandwidth metrics, in % of the GPU's peak.
pub const SAMPLED_DRAM_READ: &str = "DRAM Read Bandwidth [Throughput %]";
pub const SAMPLED_DRAM_WRITE: &str = "DRAM Write Bandwidth [Throughput %]";

/// One kernel name on the roofline, over its instances.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub flops: f64,
    pub dram_bytes: f64,
    pub byte_source: ByteSource,
    /// Summed kernel durations of the instances counted, seconds.
    pub seconds: f64,
    pub instances: usize,
    pub flop_source: FlopSource,
}

impl Point {
    /// FLOPs per DRAM byte.
    pub fn intensity(&self) -> f64 {
        self.flops / self.dram_bytes
    }
    pub fn flops_per_second(&self) -> f64 {
        self.flops / self.seconds
    }
    pub fn bytes_per_second(&self) -> f64 {
        self.dram_bytes / self.seconds
    }
}

/// Why a kernel is not on the roofline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotPlotted {
    NoDramBytes,
    NoFlops,
    /// The kernel runs on the tensor cores: the FP32 counters miss its FLOPs.
    TensorFlopsUncounted,
    NoTime,
    /// nsys sampled the DRAM bandwidth, but no instance got enough samples.
    NotSampled,
}

impl std::fmt::Display for NotPlotted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NotPlotted::NoDramBytes => {
                "not plotted: no DRAM byte counts (collect dram__bytes_read.sum and \
                 dram__bytes_write.sum with counters or Nsight Compute)"
            }
            NotPlotted::NoFlops => {
                "not plotted: FLOPs unknown (collect the FP32 instruction counters \
                 sm__sass_thread_inst_executed_op_{ffma,fadd,fmul}_pred_on.sum, or capture \
                 the gemm benchmark, which records each GEMM's FLOPs)"
            }
            NotPlotted::TensorFlopsUncounted => {
                "not plotted: the kernel uses the tensor cores, whose FLOPs the FP32 \
                 instruction counters do not count (capture the gemm benchmark, which records \
                 each GEMM's FLOPs)"
            }
            NotPlotted::NoTime => "not plotted: the instances have no duration",
            NotPlotted::NotSampled => {
                "not plotted: no instance got 2 samples of the DRAM bandwidth (see the \
                 instances left out above)"
            }
        })
    }
}

/// FLOPs of every kernel instance from the benchmark's recorded work: the
/// payload of the innermost NVTX range its launch lies in, shared evenly by
/// the kernels launched in that range (only when they all have one name; a
/// range whose work several different kernels share has no per-kernel split).
/// Only inside Sightline's `gemm` benchmark range, where payloads are FLOPs.
pub fn benchmark_flops(trace: &Trace) -> HashMap<u32, f64> {
    let nvtx = &trace.nvtx.spans;
    let gemm_runs: Vec<(i64, i64)> = (0..nvtx.len())
        .filter(|&r| trace.name(nvtx.name[r]) == GEMM_BENCHMARK_RANGE)
        .map(|r| (nvtx.start[r], nvtx.end(r)))
        .collect();
    if gemm_runs.is_empty() {
        return HashMap::new();
    }
    let owners = innermost_ranges(trace);
    let k = &trace.kernels;
    // range → kernels launched with it innermost
    let mut by_range: HashMap<u32, Vec<u32>> = HashMap::new();
    for stream in &trace.streams {
        for i in stream.kernels.rows() {
            let call = k
                .correlation
                .get(i as usize)
                .and_then(|&c| trace.correlation.api_call(stream.pid, c));
            if let Some(&r) = call.and_then(|c| owners.get(c as usize))
                && r != u32::MAX
            {
                by_range.entry(r).or_default().push(i);
            }
        }
    }
    let mut out = HashMap::new();
    for (range, kernels) in by_range {
        let r = range as usize;
        let Some(work) = trace.nvtx.payload.get(&range).and_then(|p| match p {
            Payload::Int(v) if *v > 0 => Some(*v as f64),
            Payload::Uint(v) if *v > 0 => Some(*v as f64),
            Payload::Float(v) if *v > 0.0 => Some(*v),
            _ => None,
        }) else {
            continue;
        };
        let inside_gemm = gemm_runs
            .iter()
            .any(|&(s, e)| s <= nvtx.start[r] && nvtx.end(r) <= e);
        let one_name = kernels
            .windows(2)
            .all(|w| k.spans.name[w[0] as usize] == k.spans.name[w[1] as usize]);
        if inside_gemm && one_name {
            for &kernel in &kernels {
                out.insert(kernel, work / kernels.len() as f64);
            }
        }
    }
    out
}

/// FLOPs of one instance from FP32 instruction counters, when all three were
/// collected.
fn counter_flops(value: impl Fn(usize) -> Option<f64>, set: &KernelMetrics) -> Option<f64> {
    let v = |name: &str| set.metric_index(name).and_then(&value);
    Some(2.0 * v(FFMA)? + v(FADD)? + v(FMUL)?)
}

/// The roofline point of `kernels` (instances of one name) from `set`, with
/// FLOPs from counters or else `work` ([`benchmark_flops`]).
pub fn point(
    trace: &Trace,
    set: &KernelMetrics,
    kernels: &[u32],
    work: &HashMap<u32, f64>,
) -> Result<Point, NotPlotted> {
    // Each picked instance's values, a row of the set's metrics (NaN where
    // it has none), in slot order: a deterministic sum, and no map per
    // instance.
    let wanted = super::selection::Selection::new(kernels);
    let width = set.metrics.len();
    let mut values = vec![f64::NAN; wanted.len * width];
    let mut kernel_of = vec![0u32; wanted.len];
    for i in 0..set.len() {
        let (k, m) = (set.kernel[i], set.metric[i] as usize);
        if let Some(slot) = wanted.slot(k).filter(|_| m < width) {
            values[slot * width + m] = set.value[i];
            kernel_of[slot] = k;
        }
    }
    let (Some(read), Some(write)) = (set.metric_index(DRAM_READ), set.metric_index(DRAM_WRITE))
    else {
        return Err(NotPlotted::NoDramBytes);
    };
    let spans = &trace.kernels.spans;
    let tensor = set.metric_index(TENSOR_PIPE);
    let mut uncounted_tensor = false;
    let (mut flops, mut bytes, mut ns, mut n) = (0.0, 0.0, 0i64, 0usize);
    let mut source = None;
    let mut any_bytes = false;
    for (row, &kernel) in values.chunks_exact(width.max(1)).zip(&kernel_of) {
        let v = |m: usize| row.get(m).copied().filter(|x| !x.is_nan());
        let (Some(r), Some(w)) = (v(read), v(write)) else {
            continue;
        };
        any_bytes = true;
        let on_tensor_cores = tensor
            .and_then(v)
            .is_some_and(|pct| pct > TENSOR_ACTIVE_PCT);
        let counted = counter_flops(v, set).filter(|&f| f > 0.0 && !on_tensor_cores);
        let f = match counted {
            Some(f) => Some((f, FlopSource::Counters)),
            None => work.get(&kernel).map(|&f| (f, FlopSource::BenchmarkWork)),
        };
        if f.is_none() && on_tensor_cores {
            uncounted_tensor = true;
        }
        let Some((f, s)) = f else { continue };
        source = Some(source.unwrap_or(s));
        flops += f;
        bytes += r + w;
        ns += spans.duration(kernel as usize);
        n += 1;
    }
    if !any_bytes {
        return Err(NotPlotted::NoDramBytes);
    }
    let Some(flop_source) = source else {
        return Err(if uncounted_tensor {
            NotPlotted::TensorFlopsUncounted
        } else {
            NotPlotted::NoFlops
        });
    };
    if ns <= 0 || bytes <= 0.0 {
        return Err(if ns <= 0 {
            NotPlotted::NoTime
        } else {
            NotPlotted::NoDramBytes
        });
    }
    Ok(Point {
        flops,
        dram_bytes: bytes,
        byte_source: ByteSource::Counters,
        seconds: ns as f64 * 1e-9,
        instances: n,
        flop_source,
    })
}

/// The roofline point of `kernels` from nsys's sampling, which counts neither
/// FLOPs nor bytes: FLOPs from `work` ([`benchmark_flops`]: the GEMM sizes the
/// report records), DRAM bytes estimated from the sampled read and write
/// bandwidth (% of the GPU's peak `TARGET_INFO_GPU.memoryBandwidth`) × that
/// peak × each instance's duration. Instances with fewer than
/// [`super::sampled::MIN_SAMPLES`] samples are left out (their bandwidth is
/// another moment's).
pub fn sampled_point(
    trace: &Trace,
    set: &KernelMetrics,
    kernels: &[u32],
    work: &HashMap<u32, f64>,
) -> Result<Point, NotPlotted> {
    let (Some(read), Some(write)) = (
        set.metric_index(SAMPLED_DRAM_READ),
        set.metric_index(SAMPLED_DRAM_WRITE),
    ) else {
        return Err(NotPlotted::NoDramBytes);
    };
    let Some(peak) = trace
        .gpus
        .first()
        .map(|g| g.memory_bandwidth as f64)
        .filter(|&b| b > 0.0)
    else {
        return Err(NotPlotted::NoDramBytes);
    };
    let wanted = super::selection::Selection::new(kernels);
    // Per picked instance: (read %, write %).
    let mut percent = vec![(f64::NAN, f64::NAN); wanted.len];
    let mut kernel_of = vec![0u32; wanted.len];
    for i in 0..set.len() {
        let m = set.metric[i] as usize;
        if (m != read && m != write)
            || set
                .samples
                .get(i)
                .is_some_and(|&n| n < super::sampled::MIN_SAMPLES)
        {
            continue;
        }
        if let Some(slot) = wanted.slot(set.kernel[i]) {
            kernel_of[slot] = set.kernel[i];
            if m == read {
                percent[slot].0 = set.value[i];
            } else {
                percent[slot].1 = set.value[i];
            }
        }
    }
    let spans = &trace.kernels.spans;
    let (mut flops, mut bytes, mut ns, mut n) = (0.0, 0.0, 0i64, 0usize);
    let mut any_bytes = false;
    for (&(r, w), &kernel) in percent.iter().zip(&kernel_of) {
        // An instance without 2 samples of each has NaN here: left out.
        if r.is_nan() || w.is_nan() {
            continue;
        }
        any_bytes = true;
        let Some(&f) = work.get(&kernel) else {
            continue;
        };
        let d = spans.duration(kernel as usize);
        flops += f;
        bytes += (r + w) / 100.0 * peak * d as f64 * 1e-9;
        ns += d;
        n += 1;
    }
    if !any_bytes {
        return Err(NotPlotted::NotSampled);
    }
    if n == 0 {
        return Err(NotPlotted::NoFlops);
    }
    if ns <= 0 || bytes <= 0.0 {
        return Err(if ns <= 0 {
            NotPlotted::NoTime
        } else {
            NotPlotted::NoDramBytes
        });
    }
    Ok(Point {
        flops,
        dram_bytes: bytes,
        byte_source: ByteSource::SampledBandwidth,
        seconds: ns as f64 * 1e-9,
        instances: n,
        flop_source: FlopSource::BenchmarkWork,
    })
}

impl Point {
    /// How the point was found, in words: where its FLOPs and bytes came from
    /// and whether it is an estimate.
    pub fn how(&self) -> String {
        let flops = match self.flop_source {
            FlopSource::Counters => "FLOPs counted (FP32 FFMA×2 + FADD + FMUL instructions)",
            FlopSource::BenchmarkWork => {
                "FLOPs from the GEMM sizes the report records (2·M·N·K per GEMM)"
            }
        };
        let bytes = match self.byte_source {
            ByteSource::Counters => "DRAM bytes counted (dram__bytes_read + write)",
            ByteSource::SampledBandwidth => {
                "DRAM bytes estimated from nsys's sampled DRAM read + write bandwidth (% of the \
                 GPU's peak) × the peak × each instance's duration: an estimate, as good as \
                 the samples inside the kernel"
            }
        };
        format!("{flops}; {bytes}.")
    }
}

/// The attainable FLOP/s at `intensity` under `peak` FLOP/s and the DRAM roof.
pub fn attainable(c: &Ceilings, peak: f64, intensity: f64) -> f64 {
    peak.min(c.dram * intensity)
}

/// "757 TFLOPS, 81 % of 924" (seed 000's style): achieved against a peak.
pub fn against_peak(achieved: f64, peak: f64, unit: &str, scale: f64) -> String {
    format!(
        "{:.0} {unit}, {:.0} % of {:.0}",
        achieved / scale,
        100.0 * achieved / peak,
        peak / scale
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h100_ceilings_from_its_report_properties() {
        let gpu = Gpu {
            name: "NVIDIA H100 80GB HBM3".into(),
            sm_count: 132,
            compute_capability: (9, 0),
            clock_rate_khz: 1_980_000,
            memory_bandwidth: 3_352_320_000_000,
            ..Gpu::default()
        };
        let c = ceilings(&gpu).expect("H100 is tabled");
        // 132 SMs × 256 FP32 FLOP/clk × 1.98 GHz; × 4096 for dense FP16 tensor.
        assert!((c.fp32 / 1e12 - 66.9).abs() < 0.1, "{}", c.fp32);
        assert!((c.tensor.unwrap_or(0.0) / 1e12 - 1070.5).abs() < 0.5);
        assert_eq!(c.dram, 3.35232e12);
        let unknown = Gpu {
            compute_capability: (3, 5),
            ..gpu.clone()
        };
        assert!(ceilings(&unknown).is_err());
        assert_eq!(
            against_peak(757e12, 924e12, "TFLOPS", 1e12),
            "757 TFLOPS, 82 % of 924"
        );
    }
}
