//! One idle interval of a lane ([`Gap`]): the unit the attribution makes and
//! `blocks.rs` stores. Kept apart from `mod.rs` so the blocks need not reach
//! into the module that uses them.

use super::cause::Cause;
use crate::model::{GpuOp, Ns};

/// One idle interval of a lane.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    pub start: Ns,
    pub end: Ns,
    /// The device id (`Lanes::Device`) or stream index (`Lanes::Stream`).
    pub lane: u32,
    /// The operation that ends the gap.
    pub next: GpuOp,
    /// The thread that launched it, when its API call is in the report.
    pub thread: Option<u32>,
    /// The cause with the most time in the gap.
    pub dominant: Cause,
    /// Why the gap happened ([`verdict`](super::cause::verdict) of its whole time; Unknown when
    /// nothing is known).
    pub verdict: Cause,
}
