//! Analysis: what `nsys stats` computes, over the whole trace or any time range.

pub mod findings;
mod format;
mod group;
mod reports;
pub mod rules;
pub mod stats;

pub use format::with_separators;
pub use stats::{Cell, Report, Table, TimeRange, compute};
