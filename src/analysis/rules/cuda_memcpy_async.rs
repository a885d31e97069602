//! `cuda_memcpy_async`: async copy APIs (`cudaMemcpy*Async*`) with pageable
//! memory on either side. Such a copy is staged through a pinned buffer and
//! the call returns only when it is done: it is not asynchronous at all.

use super::memcpy::{self, Which};
use super::{Window, like};
use crate::analysis::stats::Table;
use crate::model::{Memcpys, Trace};

/// `ENUM_CUDA_MEM_KIND` Pageable.
const PAGEABLE: u8 = 0;

pub(super) fn api_matches(name: &str) -> bool {
    like(name, "cudaMemcpy%Async%")
}

pub(super) fn copy_matches(m: &Memcpys, row: usize) -> bool {
    m.src_kind[row] == PAGEABLE || m.dst_kind[row] == PAGEABLE
}

pub(super) fn run(trace: &Trace, window: Window) -> Table {
    memcpy::table(trace, window, Which::AsyncPageable)
}
