//! The `nsys stats` summary reports, computed from the trace model.
//! SCAFFOLD: the stats engine replaces this file.

use crate::model::{Ns, Trace};

/// A half-open time span `[start, end)` in session nanoseconds. An event belongs
/// to a range when its start lies inside it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeRange {
    pub start: Ns,
    pub end: Ns,
}

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
}

impl Report {
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

    /// The nsys report name, e.g. `cuda_gpu_kern_sum`.
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
        }
    }

    pub fn from_name(name: &str) -> Option<Report> {
        Report::ALL.into_iter().find(|r| r.name() == name)
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
        }
    }
}

/// One cell of a report, printed exactly as nsys prints it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Empty,
    Int(i64),
    Text(String),
}

impl Cell {
    /// The numeric value, for sorting (text and empty cells have none).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Int(v) => Some(*v as f64),
            _ => None,
        }
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Empty => Ok(()),
            Cell::Int(v) => write!(f, "{v}"),
            Cell::Text(t) => f.write_str(t),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

pub fn compute(_trace: &Trace, _report: Report, _range: Option<TimeRange>) -> Table {
    Table::default()
}
