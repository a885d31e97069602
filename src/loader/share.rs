//! How a load shares the process with the other loads of a job read at once
//! ([`super::ranks`]): its share of the cores for its big tables, and the freed memory given
//! back once by the job rather than by each load.
//!
//! Kept per thread (the thread that runs the load, whose builder splits the tables and trims at
//! its end) rather than passed through every load's signature: a report loaded alone, the
//! window's or the command line's, has no share and loads as it always did.

use std::cell::Cell;

thread_local! {
    /// The cores of the job's load on this thread, when it is one report of a job.
    static SHARE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The cores a load on this thread reads a big table on: its share of a job's ([`in_job`]),
/// else every core.
pub(super) fn table_cores() -> usize {
    SHARE
        .get()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// Whether a load on this thread gives the allocator's freed memory back at its end: not as one
/// report of a job, whose load gives it back once when every report is in. Each load's trim
/// walked every arena while the job's other loads were filling them, and gave back pages the
/// next report's load faulted in again (8 reports of 1.25M events on 2 cores: 2–5% of the
/// job's CPU time, and 40% of its page faults; BENCHMARKS.md).
pub(super) fn gives_back_memory() -> bool {
    SHARE.get().is_none()
}

/// Runs `load` as one report of a job read at once, with its big tables read on `cores` threads
/// at most (at least one), leaving the freed memory to the job ([`gives_back_memory`]).
pub(super) fn in_job<T>(cores: usize, load: impl FnOnce() -> T) -> T {
    /// Puts the thread's share back however `load` ends.
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SHARE.set(self.0);
        }
    }
    let _restore = Restore(SHARE.replace(Some(cores.max(1))));
    load()
}
