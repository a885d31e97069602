//! What the launching thread was doing while the GPU idled ([`Cause`]), and
//! how the time of a gap per cause names the gap's cause ([`dominant`],
//! [`verdict`]). A leaf: the gaps, their blocks and the attribution use it.

use crate::model::Ns;

/// What the launching thread was doing while the GPU idled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cause {
    Sync,
    Alloc,
    PageableCopy,
    Launch,
    OtherCuda,
    Outside,
    /// Outside CUDA, inside an OS call the report records (`pthread_cond_wait`, `poll`,
    /// `recv`: nsys traces the calls that block): the thread waited for another thread,
    /// process or machine, as a rank of a job waits for its peers in a collective.
    OsWait,
    Unknown,
}

/// How many causes there are: the length of a per-cause array.
pub const CAUSES: usize = 8;

impl Cause {
    pub const ALL: [Cause; CAUSES] = [
        Cause::Sync,
        Cause::Alloc,
        Cause::PageableCopy,
        Cause::Launch,
        Cause::OtherCuda,
        Cause::Outside,
        Cause::OsWait,
        Cause::Unknown,
    ];

    /// Stable names, for tables and tests.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Sync => "sync",
            Cause::Alloc => "alloc",
            Cause::PageableCopy => "pageable-copy",
            Cause::Launch => "launch",
            Cause::OtherCuda => "other-cuda",
            Cause::Outside => "outside-cuda",
            Cause::OsWait => "os-wait",
            Cause::Unknown => "unknown",
        }
    }

    /// What the thread was doing, for sentences: "the thread spent 6.7 ms {label}".
    pub fn label(self) -> &'static str {
        match self {
            Cause::Sync => "waiting in syncs",
            Cause::Alloc => "allocating/freeing",
            Cause::PageableCopy => "in pageable copies",
            Cause::Launch => "launching",
            Cause::OtherCuda => "in other CUDA calls",
            Cause::Outside => "outside CUDA (CPU work)",
            Cause::OsWait => "waiting in OS calls (outside CUDA)",
            Cause::Unknown => "unknown (no launching call)",
        }
    }

    pub fn from_name(name: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.name() == name)
    }

    pub(super) fn slot(self) -> usize {
        self as usize
    }
}

/// Nanoseconds per cause, indexed by `Cause as usize`.
pub type CauseTimes = [Ns; CAUSES];

/// The cause with the most time (the first of equals), or None when all are 0.
pub fn dominant(times: &CauseTimes) -> Option<Cause> {
    let mut best: Option<Cause> = None;
    for c in Cause::ALL {
        if times[c.slot()] > 0 && best.is_none_or(|b| times[c.slot()] > times[b.slot()]) {
            best = Some(c);
        }
    }
    best
}

/// Why a gap happened, as opposed to where its time went: a gap in which the
/// thread blocked (in a sync, an allocation or a pageable copy) exists
/// because the thread blocked, even if relaunching afterwards took longer
/// (a sync drains the queue, so the next launch's latency is exposed). Only
/// gaps without blocking are the launches', the host code's or the OS waits'. (An OS
/// wait is not blocking here: a gap of host code takes short locks and reads too, and
/// only a wait that outweighs the rest makes the gap the wait's.)
pub fn verdict(times: &CauseTimes) -> Option<Cause> {
    let blocking = [Cause::Sync, Cause::Alloc, Cause::PageableCopy];
    let mut best: Option<Cause> = None;
    for c in blocking {
        if times[c.slot()] > 0 && best.is_none_or(|b| times[c.slot()] > times[b.slot()]) {
            best = Some(c);
        }
    }
    best.or_else(|| dominant(times))
}
