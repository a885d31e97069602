//! Cancelling a long analysis: a flag the caller raises, checked between steps.

use std::sync::atomic::{AtomicBool, Ordering};

/// An analysis was cancelled.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cancelled;

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("analysis cancelled")
    }
}

impl std::error::Error for Cancelled {}

pub(crate) fn check(cancel: &AtomicBool) -> Result<(), Cancelled> {
    if cancel.load(Ordering::Relaxed) {
        Err(Cancelled)
    } else {
        Ok(())
    }
}
