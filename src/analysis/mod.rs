//! Analysis: what `nsys stats` computes, over the whole trace or any time range.

pub mod stats;

pub use stats::{Cell, Report, Table, TimeRange};
