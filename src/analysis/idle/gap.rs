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
    /// Another thread of the process that waited for a thread around the
    /// launch (it handed the work off: `handoff.rs`), and when its wait
    /// began: the gap's time before then is walked on it, not on `thread`.
    pub handed_by: Option<(u32, Ns)>,
    /// The cause with the most time in the gap.
    pub dominant: Cause,
    /// Why the gap happened ([`verdict`](super::cause::verdict) of its whole time; Unknown when
    /// nothing is known).
    pub verdict: Cause,
}
