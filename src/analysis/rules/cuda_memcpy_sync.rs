//! `cuda_memcpy_sync`: synchronous copy APIs (`cudaMemcpy*`, not `Async`),
//! which block the CPU until the copy is done, except copies within one device
//! and small host-to-device copies (staged, the call returns at once).

use super::memcpy::{self, Which};
use super::{Window, like};
use crate::analysis::stats::Table;
use crate::model::{Memcpys, Trace};

/// `copyKind` Host-to-Device.
const HOST_TO_DEVICE: u8 = 1;
/// Host-to-device copies up to this size return at once: not reported.
const SMALL_H2D_BYTES: u64 = 64_000;

pub(super) fn api_matches(name: &str) -> bool {
    like(name, "cudaMemcpy%") && !like(name, "%Async%")
}

pub(super) fn copy_matches(m: &Memcpys, row: usize) -> bool {
    let small_h2d = m.bytes[row] <= SMALL_H2D_BYTES && m.copy_kind[row] == HOST_TO_DEVICE;
    let src_device = m.src_device.get(row).copied().unwrap_or(-1);
    let dst_device = m.dst_device.get(row).copied().unwrap_or(-1);
    let same_device = src_device >= 0 && src_device == dst_device;
    !small_h2d && !same_device
}

pub(super) fn run(trace: &Trace, window: Window) -> Table {
    memcpy::table(trace, window, Which::Sync)
}
