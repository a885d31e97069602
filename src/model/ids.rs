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
