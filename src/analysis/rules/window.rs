//! The time window a rule looks at ([`Window`]): the span its `start=`,
//! `end=` and `nvtx=` options leave, which events must overlap. A leaf, so
//! that the rules can share it while `mod.rs` dispatches to them.

use crate::model::Ns;

/// The time window events must overlap (both ends inclusive).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: Ns,
    pub end: Ns,
}

impl Window {
    pub(crate) const ALL: Window = Window {
        start: Ns::MIN,
        end: Ns::MAX,
    };

    pub fn overlaps(self, start: Ns, end: Ns) -> bool {
        start <= self.end && end >= self.start
    }
}
