//! Analysis: what `nsys stats` computes, over the whole trace or any time range, and
//! diffs of two reports built from those summaries (`compare`).

pub mod api_class;
mod cancel;
pub mod compare;
pub mod counter_ranges;
pub mod findings;
mod format;
mod gpu_reports;
mod group;
pub mod idle;
pub mod kernels;
pub mod metrics;
pub mod occupancy;
mod parallel;
pub mod projection;
mod reports;
pub mod rules;
pub mod stats;
mod traces;

pub use cancel::Cancelled;
pub(crate) use format::TextLayout;
pub use format::{binary_size, csv_line, with_separators};
pub use gpu_reports::{KernelNaming, kernel_names};
pub use stats::{
    Cell, RangeRule, Report, Table, TimeRange, UnsupportedRule, compute, compute_for_kernel,
    compute_in,
};
pub use traces::{for_each_row as for_each_trace_row, trace_columns};
