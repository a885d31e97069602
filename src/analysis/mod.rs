//! Analysis: what `nsys stats` computes, over the whole trace or any time range.

mod format;
mod group;
mod reports;
pub mod stats;

pub use format::with_separators;
pub use stats::{Cell, Report, Table, TimeRange, compute};
