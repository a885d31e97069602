//! `dx12_mem_ops`: DirectX 12 memory operations. Sightline reads the CUDA
//! side of reports only (the loader keeps no DX12 tables), and nsys prints
//! nothing for a report without DX12 data, so the rule's output is always
//! nsys's empty file.

use super::window::Window;
use crate::analysis::table::Table;
use crate::model::Trace;

pub(super) fn run(_trace: &Trace, _window: Window) -> Table {
    Table::default()
}
