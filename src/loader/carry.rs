//! What a growing report's loads keep from one to the next ([`Carry`]):
//! each table reader's kept state, stored by its type, so that this module
//! need not know the readers (each reader defines its state next to the code
//! that understands it, and reaches it with [`Carry::part`]); and what
//! belongs to no one reader: the correlation links, the rows they cover and
//! the report's lineage.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::Ordering;

use crate::model::grown_correlation::GrowingCorrelation;
use crate::model::{EventKind, Lineage};

/// What the loads of a report that only grows keep from one to the next:
/// its event tables (kernels, copies, memsets, synchronizations, graph
/// executions, CUDA API and OS runtime calls) as last built, with their
/// tracks and the first rowid not read, and the correlation links made so
/// far. See `loader::load_growing`.
#[derive(Default)]
pub struct Carry {
    /// Each reader's kept tables (`cpu::GrownApi`, `gpu::GrownKernels`,
    /// `nvtx::KeptNvtx`, …), one of each type.
    parts: HashMap<TypeId, Box<dyn Any + Send>>,
    pub(super) links: GrownLinks,
    /// API calls and GPU operations linked over all loads: what the links cost.
    pub(super) rows_linked: u64,
    /// The report's states so far (see [`Lineage`]).
    pub(super) lineage: Lineage,
}

/// What a growing report's loads keep of its correlation index: the links
/// made so far (see [`crate::model::grown_correlation`]) and how many rows
/// of the API table and of each GPU operation table they cover. Reset when
/// any of those tables is read afresh. Kept here, not in `gpu.rs` (which
/// makes them), because every growing table's reader drops them.
#[derive(Default)]
pub(super) struct GrownLinks {
    pub(super) links: GrowingCorrelation,
    pub(super) api_rows: u32,
    /// Rows linked of each of `gpu::LINKED_OPS`.
    pub(super) op_rows: [u32; 4],
    /// Ids too sparse for slots: the index is built whole at every load.
    pub(super) whole: bool,
}

/// Names each growing report's carry (0 names none).
static GROWING_REPORTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Carry {
    /// The kept state of type `T` (the state an earlier load left, or an
    /// empty one): a reader takes it out with `std::mem::take` and puts
    /// back what the next load is to extend.
    pub(super) fn part<T: Any + Send + Default>(&mut self) -> &mut T {
        let part = self
            .parts
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()));
        // The entry under `TypeId::of::<T>()` is only ever made from a `T`
        // (just above), so this downcast cannot fail.
        part.downcast_mut::<T>()
            .expect("a carried part is stored under its own type")
    }

    /// The kept state of type `T`, if a load left one.
    pub(super) fn part_ref<T: Any>(&self) -> Option<&T> {
        self.parts.get(&TypeId::of::<T>())?.downcast_ref::<T>()
    }

    /// A load begins: its number, and the report's on the first.
    pub(super) fn begin_load(&mut self) {
        if self.lineage.report == 0 {
            self.lineage.report = GROWING_REPORTS.fetch_add(1, Ordering::Relaxed);
        }
        self.lineage.load += 1;
    }

    /// This load numbers the events of `kind` anew.
    pub(super) fn numbered_anew(&mut self, kind: EventKind) {
        self.lineage.numbered_at[kind as usize] = self.lineage.load;
    }
}
