//! The list of reports Sightline computes ([`Report`]): their names as
//! `--report` takes them, titles, and which range rules they take. What each
//! computes is dispatched in `stats.rs`.

use super::scope::RangeRule;
use super::table::Table;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Report {
    CudaApiSum,
    CudaGpuKernSum,
    CudaGpuMemTimeSum,
    CudaGpuMemSizeSum,
    NvtxSum,
    OsrtSum,
    CudaApiGpuSum,
    CudaKernExecSum,
    NvtxPushpopSum,
    NvtxStartendSum,
    NvtxGpuProjSum,
    NvtxGpuProjTrace,
    NvtxKernSum,
    NvtxPushpopTrace,
    CudaGpuSum,
    CudaGpuKernGbSum,
    CudaGpuTrace,
    CudaApiTrace,
    CudaKernExecTrace,
    UmSum,
    /// `cuda_gpu_kern_sum:base`: kernels by short name.
    CudaGpuKernSumBase,
    /// `cuda_gpu_kern_sum:mangled`: kernels by mangled name.
    CudaGpuKernSumMangled,
    /// `cuda_gpu_kern_sum:nvtx-name`: kernels by `innermost NVTX range/name`.
    CudaGpuKernSumNvtxName,
    /// Ours: kernels per launch configuration, with theoretical occupancy.
    KernelLaunchSum,
    /// Ours: nsys's sampled GPU metrics averaged per kernel instance, per
    /// kernel name × metric.
    GpuMetricsKernSum,
    /// Ours: each GPU's idle time by what the launching thread was doing (`analysis::idle`).
    GpuIdleSum,
    /// Ours: functions by CPU samples, self and total (`analysis::cpu_sample_sum`).
    CpuSampleSum,
}

impl Report {
    /// The reports `nsys stats` computes by default, and the range panel shows.
    pub const ALL: [Report; 8] = [
        Report::CudaApiSum,
        Report::CudaGpuKernSum,
        Report::CudaGpuMemTimeSum,
        Report::CudaGpuMemSizeSum,
        Report::NvtxSum,
        Report::OsrtSum,
        Report::CudaApiGpuSum,
        Report::CudaKernExecSum,
    ];

    /// Every report `sightline stats --report` knows.
    pub const EVERY: [Report; 27] = [
        Report::CudaApiSum,
        Report::CudaGpuKernSum,
        Report::CudaGpuMemTimeSum,
        Report::CudaGpuMemSizeSum,
        Report::NvtxSum,
        Report::OsrtSum,
        Report::CudaApiGpuSum,
        Report::CudaKernExecSum,
        Report::NvtxPushpopSum,
        Report::NvtxStartendSum,
        Report::NvtxGpuProjSum,
        Report::NvtxGpuProjTrace,
        Report::NvtxKernSum,
        Report::NvtxPushpopTrace,
        Report::CudaGpuSum,
        Report::CudaGpuKernGbSum,
        Report::CudaGpuTrace,
        Report::CudaApiTrace,
        Report::CudaKernExecTrace,
        Report::UmSum,
        Report::CudaGpuKernSumBase,
        Report::CudaGpuKernSumMangled,
        Report::CudaGpuKernSumNvtxName,
        Report::KernelLaunchSum,
        Report::GpuMetricsKernSum,
        Report::GpuIdleSum,
        Report::CpuSampleSum,
    ];

    /// The column of this report's tables that holds kernel names as
    /// `cuda_gpu_kern_sum` names them (the demangled name), for views that
    /// link a row to its kernel. A role known from the report, not read from
    /// the header text: the headers differ ("Name", "Kernel Name").
    pub fn kernel_name_column(self, table: &Table) -> Option<usize> {
        match self {
            // Both reports end with the kernel's name.
            Report::CudaGpuKernSum | Report::CudaKernExecSum => table.columns.len().checked_sub(1),
            _ => None,
        }
    }

    /// The report name as `--report` takes it, nsys's spelling: e.g.
    /// `cuda_gpu_kern_sum`, or `cuda_gpu_kern_sum:base` for a variant.
    pub fn name(self) -> &'static str {
        match self {
            Report::CudaApiSum => "cuda_api_sum",
            Report::CudaGpuKernSum => "cuda_gpu_kern_sum",
            Report::CudaGpuMemTimeSum => "cuda_gpu_mem_time_sum",
            Report::CudaGpuMemSizeSum => "cuda_gpu_mem_size_sum",
            Report::NvtxSum => "nvtx_sum",
            Report::OsrtSum => "osrt_sum",
            Report::CudaApiGpuSum => "cuda_api_gpu_sum",
            Report::CudaKernExecSum => "cuda_kern_exec_sum",
            Report::NvtxPushpopSum => "nvtx_pushpop_sum",
            Report::NvtxStartendSum => "nvtx_startend_sum",
            Report::NvtxGpuProjSum => "nvtx_gpu_proj_sum",
            Report::NvtxGpuProjTrace => "nvtx_gpu_proj_trace",
            Report::NvtxKernSum => "nvtx_kern_sum",
            Report::NvtxPushpopTrace => "nvtx_pushpop_trace",
            Report::CudaGpuSum => "cuda_gpu_sum",
            Report::CudaGpuKernGbSum => "cuda_gpu_kern_gb_sum",
            Report::CudaGpuTrace => "cuda_gpu_trace",
            Report::CudaApiTrace => "cuda_api_trace",
            Report::CudaKernExecTrace => "cuda_kern_exec_trace",
            Report::UmSum => "um_sum",
            Report::CudaGpuKernSumBase => "cuda_gpu_kern_sum:base",
            Report::CudaGpuKernSumMangled => "cuda_gpu_kern_sum:mangled",
            Report::CudaGpuKernSumNvtxName => "cuda_gpu_kern_sum:nvtx-name",
            Report::KernelLaunchSum => "kernel_launch_sum",
            Report::GpuMetricsKernSum => "gpu_metrics_kern_sum",
            Report::GpuIdleSum => "gpu_idle_sum",
            Report::CpuSampleSum => "cpu_sample_sum",
        }
    }

    /// Whether the report is made of the CPU samples and scheduling (a load
    /// for it reads them: `loader::LoadOptions`).
    pub fn reads_cpu_samples(self) -> bool {
        matches!(self, Report::CpuSampleSum)
    }

    /// A per-event trace report (a row per event, not a summary), streamed
    /// row by row (`nvtx_pushpop_trace` too: its rows grow with depth).
    pub fn is_trace(self) -> bool {
        matches!(
            self,
            Report::CudaGpuTrace
                | Report::CudaApiTrace
                | Report::CudaKernExecTrace
                | Report::NvtxPushpopTrace
        )
    }

    /// The name in output file names: nsys writes `PREFIX_cuda_gpu_kern_sum_base.csv`
    /// for `cuda_gpu_kern_sum:base` (each `:` becomes `_`).
    pub fn file_stem(self) -> String {
        self.name().replace(':', "_")
    }

    /// Whether the report can count by [`RangeRule::Overlapping`]: the
    /// summaries of durations can; the traces (one row per event, with its
    /// start) and the NVTX projections (a range and the GPU work it owns) keep
    /// to `StartsInside`, where clipping would describe events that never were.
    pub fn takes_rule(self, rule: RangeRule) -> bool {
        match rule {
            RangeRule::StartsInside => true,
            RangeRule::Overlapping => !matches!(
                self,
                Report::NvtxGpuProjSum
                    | Report::NvtxGpuProjTrace
                    | Report::NvtxKernSum
                    | Report::NvtxPushpopTrace
                    | Report::CudaGpuTrace
                    | Report::CudaApiTrace
                    | Report::CudaKernExecTrace
            ),
        }
    }

    /// Whether `--nvtx NAME` restricts the report to that range's instances
    /// (ours: the reports of time, not of events).
    pub fn takes_nvtx(self) -> bool {
        matches!(self, Report::GpuIdleSum | Report::CpuSampleSum)
    }

    pub fn from_name(name: &str) -> Option<Report> {
        Report::EVERY.into_iter().find(|r| r.name() == name)
    }

    /// A title for people, e.g. "CUDA GPU Kernel Summary".
    pub fn title(self) -> &'static str {
        match self {
            Report::CudaApiSum => "CUDA API Summary",
            Report::CudaGpuKernSum => "CUDA GPU Kernel Summary",
            Report::CudaGpuMemTimeSum => "CUDA GPU MemOps Summary (by Time)",
            Report::CudaGpuMemSizeSum => "CUDA GPU MemOps Summary (by Size)",
            Report::NvtxSum => "NVTX Range Summary",
            Report::OsrtSum => "OS Runtime Summary",
            Report::CudaApiGpuSum => "CUDA Summary (API/Kernels/MemOps)",
            Report::CudaKernExecSum => "CUDA Kernel Launch & Exec Time Summary",
            Report::NvtxPushpopSum => "NVTX Push/Pop Range Summary",
            Report::NvtxStartendSum => "NVTX Start/End Range Summary",
            Report::NvtxGpuProjSum => "NVTX GPU Projection Summary",
            Report::NvtxGpuProjTrace => "NVTX GPU Projection Trace",
            Report::NvtxKernSum => "NVTX Range Kernel Summary",
            Report::NvtxPushpopTrace => "NVTX Push/Pop Range Trace",
            Report::CudaGpuSum => "CUDA GPU Summary (Kernels/MemOps)",
            Report::CudaGpuKernGbSum => "CUDA GPU Kernel/Grid/Block Summary",
            Report::CudaGpuTrace => "CUDA GPU Trace",
            Report::CudaApiTrace => "CUDA API Trace",
            Report::CudaKernExecTrace => "CUDA Kernel Launch & Exec Time Trace",
            Report::UmSum => "Unified Memory Analysis Summary",
            Report::CudaGpuKernSumBase => "CUDA GPU Kernel Summary (base names)",
            Report::CudaGpuKernSumMangled => "CUDA GPU Kernel Summary (mangled names)",
            Report::CudaGpuKernSumNvtxName => "CUDA GPU Kernel Summary (NVTX range/name)",
            Report::KernelLaunchSum => "Kernel Launch Configuration Summary",
            Report::GpuMetricsKernSum => "GPU Metrics per Kernel (nsys sampling)",
            Report::GpuIdleSum => "GPU Idle Time by Cause",
            Report::CpuSampleSum => {
                "CPU Sample Summary (Sightline's, not nsys's: functions by samples)"
            }
        }
    }
}
