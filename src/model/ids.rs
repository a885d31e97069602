//! Names for single events that every layer can use: analysis names the events
//! a finding is about, the views highlight them.

/// Which columnar table of [`crate::model::Trace`] an event lives in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// `Trace::cuda_api`
    Api,
    /// `Trace::osrt`
    Osrt,
    /// `Trace::nvtx`
    Nvtx,
    /// `Trace::kernels`
    Kernel,
    /// `Trace::memcpys`
    Memcpy,
    /// `Trace::memsets`
    Memset,
    /// `Trace::syncs`
    Sync,
    /// `Trace::graph_execs`
    Graph,
}

impl EventKind {
    pub const ALL: [EventKind; 8] = [
        EventKind::Api,
        EventKind::Osrt,
        EventKind::Nvtx,
        EventKind::Kernel,
        EventKind::Memcpy,
        EventKind::Memset,
        EventKind::Sync,
        EventKind::Graph,
    ];

    /// A lower-case name for output formats (`kernel`, `api`, ...).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Api => "api",
            EventKind::Osrt => "osrt",
            EventKind::Nvtx => "nvtx",
            EventKind::Kernel => "kernel",
            EventKind::Memcpy => "memcpy",
            EventKind::Memset => "memset",
            EventKind::Sync => "sync",
            EventKind::Graph => "graph",
        }
    }
}

/// A set of event kinds, a bit each: which kinds a list of events holds, or
/// which kinds moved when a report grew.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct EventKinds(u8);

const _: () = assert!(EventKind::ALL.len() <= 8, "a bit per kind");

impl EventKinds {
    /// The kinds of `events`.
    pub fn of<'a>(events: impl IntoIterator<Item = &'a EventId>) -> Self {
        let mut kinds = EventKinds::default();
        for ev in events {
            kinds.insert(ev.kind);
        }
        kinds
    }

    pub fn insert(&mut self, kind: EventKind) {
        self.0 |= 1 << kind as u8;
    }

    pub fn remove(&mut self, kind: EventKind) {
        self.0 &= !(1 << kind as u8);
    }

    pub fn contains(self, kind: EventKind) -> bool {
        self.0 & (1 << kind as u8) != 0
    }

    /// Whether the two sets share a kind.
    pub fn meets(self, other: EventKinds) -> bool {
        self.0 & other.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// One event: its table and its row in that table.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    pub kind: EventKind,
    pub index: u32,
}

impl EventId {
    pub fn new(kind: EventKind, index: u32) -> Self {
        EventId { kind, index }
    }
}

impl From<super::GpuOp> for EventId {
    fn from(op: super::GpuOp) -> Self {
        let kind = match op.kind {
            super::GpuOpKind::Kernel => EventKind::Kernel,
            super::GpuOpKind::Memcpy => EventKind::Memcpy,
            super::GpuOpKind::Memset => EventKind::Memset,
            super::GpuOpKind::Sync => EventKind::Sync,
        };
        EventId::new(kind, op.index)
    }
}

/// Where a trace stands among the states of one growing report (a
/// capture's snapshots): which report, which of its loads, and from which
/// load on each kind of event has kept its indexes. A later state of the
/// same report holds every event of an earlier one at the same index, for
/// each kind not numbered anew in between ([`Lineage::keeps_indexes_of`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lineage {
    /// Names the growing report; 0 for a report loaded whole.
    pub report: u64,
    /// This state's load, counted from 1.
    pub load: u64,
    /// The load each kind's events were last numbered anew at, by
    /// [`EventKind`] as an index.
    pub numbered_at: [u64; 8],
}

impl Lineage {
    /// Whether every event of `kind` in `older` is at the same index in
    /// this state (true only for two states of one growing report).
    pub fn keeps_indexes_of(&self, older: &Lineage, kind: EventKind) -> bool {
        self.report != 0
            && self.report == older.report
            && older.load <= self.load
            && self.numbered_at[kind as usize] <= older.load
    }
}
