//! `cuda_memcpy_async`: async copy APIs (`cudaMemcpy*Async*`) with pageable
//! memory on either side. Such a copy is staged through a pinned buffer and
//! the call returns only when it is done: it is not asynchronous at all.

use super::memcpy::{self, Which};
use super::window::Window;
use crate::analysis::table::Table;
use crate::model::Trace;

/// The rule's table; which calls and copies it reports is [`Which::AsyncPageable`].
pub(super) fn run(trace: &Trace, window: Window) -> Table {
    memcpy::table(trace, window, Which::AsyncPageable)
}
