//! Analysis: what `nsys stats` computes, over the whole trace or any time range, and
//! diffs of two reports built from those summaries (`compare`).

pub mod api_class;
mod cancel;
pub mod compare;
pub mod counter_ranges;
pub mod cpu_profile;
pub mod cpu_sample_sum;
pub mod findings;
mod format;
mod gpu_reports;
mod group;
pub mod idle;
pub mod kernels;
mod like;
pub mod metrics;
pub mod occupancy;
mod parallel;
pub mod projection;
pub mod range_work;
pub mod ranks;
mod report;
mod reports;
pub mod rules;
mod scope;
pub mod stats;
mod table;
mod traces;

pub use crate::model::TimeRange;
pub use cancel::Cancelled;
pub use format::{binary_size, csv_line, duration_places, with_separators};
pub use gpu_reports::{KernelNaming, kernel_names};
pub use report::Report;
pub use scope::RangeRule;
pub use stats::{UnsupportedRule, compute, compute_for_kernel, compute_in};
pub(crate) use table::TextLayout;
pub use table::{Cell, Table};
pub use traces::{for_each_row as for_each_trace_row, trace_columns};
