//! Kernel instances indexed by kernel: each instance's device, and a set of
//! picked instances ([`Selection`]) found by index rather than by search.
//! A leaf the metric sources and the statistics share.

use crate::model::Trace;

/// The device id of every kernel instance (through its stream); `None` for a
/// kernel no stream lists.
pub fn kernel_devices(trace: &Trace) -> Vec<Option<u32>> {
    let mut devices = vec![None; trace.kernels.spans.len()];
    for s in &trace.streams {
        for k in s.kernels.rows() {
            if let Some(d) = devices.get_mut(k as usize) {
                *d = Some(s.device_id);
            }
        }
    }
    devices
}

/// Kernel instances picked out of a metric set: each gets a slot, found by
/// indexing a table by kernel rather than searching for every row (a set
/// holds a row per instance and metric: 30 million at 3.4M kernels).
pub(crate) struct Selection {
    /// Kernel index → its slot, [`Selection::NONE`] if not picked.
    slot_of: Vec<u32>,
    /// How many distinct instances were picked.
    pub len: usize,
}

impl Selection {
    const NONE: u32 = u32::MAX;

    pub fn new(kernels: &[u32]) -> Selection {
        let size = kernels.iter().max().map_or(0, |&k| k as usize + 1);
        let mut slot_of = vec![Self::NONE; size];
        let mut len = 0;
        for &k in kernels {
            let slot = &mut slot_of[k as usize];
            if *slot == Self::NONE {
                *slot = len as u32;
                len += 1;
            }
        }
        Selection { slot_of, len }
    }

    /// The slot of `kernel`, if it was picked.
    #[inline]
    pub fn slot(&self, kernel: u32) -> Option<usize> {
        match self.slot_of.get(kernel as usize) {
            Some(&s) if s != Self::NONE => Some(s as usize),
            _ => None,
        }
    }
}
