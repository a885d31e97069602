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
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Empty,
    Int(i64),
    Text(String),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

pub fn compute(_trace: &Trace, _report: Report, _range: Option<TimeRange>) -> Table {
    Table::default()
}
