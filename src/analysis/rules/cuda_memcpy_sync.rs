//! `cuda_memcpy_sync`: synchronous copy APIs (`cudaMemcpy*`, not `Async`),
//! which block the CPU until the copy is done, except copies within one device
//! and small host-to-device copies (staged, the call returns at once).

use super::memcpy::{self, Which};
use super::window::Window;
use crate::analysis::table::Table;
use crate::model::Trace;

/// The rule's table; which calls and copies it reports is [`Which::Sync`].
pub(super) fn run(trace: &Trace, window: Window) -> Table {
    memcpy::table(trace, window, Which::Sync)
}
