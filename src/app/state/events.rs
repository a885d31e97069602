//! One name for "an event of any kind", and what a person wants to know about it.

use serde::{Deserialize, Serialize};

use crate::app::widgets::format;
use crate::model::{EventId, EventKind, GpuOp, GpuOpKind, Ns, Payload, SpanColumns, Trace};

/// Which columnar table an event lives in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Table {
    Api,
    Osrt,
    Nvtx,
    Kernel,
    Memcpy,
    Memset,
    Sync,
    Graph,
}

impl Table {
    pub const ALL: [Table; 8] = [
        Table::Api,
        Table::Osrt,
        Table::Nvtx,
        Table::Kernel,
        Table::Memcpy,
        Table::Memset,
        Table::Sync,
        Table::Graph,
    ];

    pub fn spans(self, trace: &Trace) -> &SpanColumns {
        match self {
            Table::Api => &trace.cuda_api.spans,
            Table::Osrt => &trace.osrt.spans,
            Table::Nvtx => &trace.nvtx.spans,
            Table::Kernel => &trace.kernels.spans,
            Table::Memcpy => &trace.memcpys.spans,
            Table::Memset => &trace.memsets.spans,
            Table::Sync => &trace.syncs.spans,
            Table::Graph => &trace.graph_execs.spans,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Table::Api => "CUDA API",
            Table::Osrt => "OS runtime",
            Table::Nvtx => "NVTX",
            Table::Kernel => "Kernels",
            Table::Memcpy => "Memcpy",
            Table::Memset => "Memset",
            Table::Sync => "Sync",
            Table::Graph => "CUDA graphs",
        }
    }

    fn gpu_kind(self) -> Option<GpuOpKind> {
        match self {
            Table::Kernel => Some(GpuOpKind::Kernel),
            Table::Memcpy => Some(GpuOpKind::Memcpy),
            Table::Memset => Some(GpuOpKind::Memset),
            Table::Sync => Some(GpuOpKind::Sync),
            _ => None,
        }
    }
}

// The app's `Table`/`EventRef` predate the model's `EventKind`/`EventId` and
// are serialized in saved state; they stay, and convert one to one, so views
// can highlight the events that analysis names.
impl From<EventKind> for Table {
    fn from(kind: EventKind) -> Self {
        match kind {
            EventKind::Api => Table::Api,
            EventKind::Osrt => Table::Osrt,
            EventKind::Nvtx => Table::Nvtx,
            EventKind::Kernel => Table::Kernel,
            EventKind::Memcpy => Table::Memcpy,
            EventKind::Memset => Table::Memset,
            EventKind::Sync => Table::Sync,
            EventKind::Graph => Table::Graph,
        }
    }
}

impl From<Table> for EventKind {
    fn from(table: Table) -> Self {
        match table {
            Table::Api => EventKind::Api,
            Table::Osrt => EventKind::Osrt,
            Table::Nvtx => EventKind::Nvtx,
            Table::Kernel => EventKind::Kernel,
            Table::Memcpy => EventKind::Memcpy,
            Table::Memset => EventKind::Memset,
            Table::Sync => EventKind::Sync,
            Table::Graph => EventKind::Graph,
        }
    }
}

impl From<EventId> for EventRef {
    fn from(id: EventId) -> Self {
        EventRef::new(id.kind.into(), id.index)
    }
}

impl From<EventRef> for EventId {
    fn from(ev: EventRef) -> Self {
        EventId::new(ev.table.into(), ev.index)
    }
}

/// An event: its table and its row in that table.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EventRef {
    pub table: Table,
    pub index: u32,
}

impl EventRef {
    pub fn new(table: Table, index: u32) -> Self {
        EventRef { table, index }
    }

    pub fn start(self, trace: &Trace) -> Ns {
        self.table.spans(trace).start[self.index as usize]
    }

    pub fn end(self, trace: &Trace) -> Ns {
        self.table.spans(trace).end(self.index as usize)
    }

    pub fn name(self, trace: &Trace) -> &str {
        trace.name(self.table.spans(trace).name[self.index as usize])
    }

    /// The name as nsys shows it: CUDA API names without their `_vNNNN`
    /// version suffix (`cudaLaunchKernel_v7000` → `cudaLaunchKernel`).
    pub fn display_name(self, trace: &Trace) -> &str {
        let name = self.name(trace);
        if self.table == Table::Api {
            format::display_name(name)
        } else {
            name
        }
    }

    /// The name drawn inside the box: kernels use their short name, as Nsight
    /// does; API calls their display name.
    pub fn short_name(self, trace: &Trace) -> &str {
        match self.table {
            Table::Kernel => match trace.kernels.short_name(self.index as usize) {
                Some(id) if id.0 != 0 => trace.name(id),
                _ => self.name(trace),
            },
            _ => self.display_name(trace),
        }
    }

    fn as_gpu_op(self) -> Option<GpuOp> {
        self.table.gpu_kind().map(|kind| GpuOp {
            kind,
            index: self.index,
        })
    }

    /// Where it ran: "thread name [tid]" or "GPU n, stream m".
    pub fn place(self, trace: &Trace) -> String {
        if let Some(op) = self.as_gpu_op() {
            return match trace.stream_of(op) {
                Some(s) => stream_label(trace, s as usize),
                None => "unknown stream".into(),
            };
        }
        if self.table == Table::Graph {
            return trace
                .streams
                .iter()
                .position(|s| s.graphs.contains(self.index))
                .map_or("unknown stream".into(), |s| stream_label(trace, s));
        }
        let thread = trace.threads.iter().position(|t| match self.table {
            Table::Api => t.cuda_api.contains(self.index),
            Table::Osrt => t.osrt.contains(self.index),
            _ => t.nvtx.iter().any(|n| n.track.contains(self.index)),
        });
        thread.map_or("unknown thread".into(), |t| thread_label(trace, t))
    }

    /// The events this one is correlated with: an API call's GPU work, or the
    /// API call that launched a GPU operation.
    pub fn related(self, trace: &Trace) -> Vec<EventRef> {
        let corr = |v: &[u32]| v.get(self.index as usize).copied();
        if self.table == Table::Api {
            let (Some(t), Some(c)) = (
                trace.thread_of_api_call(self.index),
                corr(&trace.cuda_api.correlation),
            ) else {
                return Vec::new();
            };
            let pid = trace.threads[t as usize].pid;
            return trace
                .correlation
                .gpu_ops(pid, c)
                .map(|op| {
                    let table = match op.kind {
                        GpuOpKind::Kernel => Table::Kernel,
                        GpuOpKind::Memcpy => Table::Memcpy,
                        GpuOpKind::Memset => Table::Memset,
                        GpuOpKind::Sync => Table::Sync,
                    };
                    EventRef::new(table, op.index)
                })
                .collect();
        }
        let c = match self.table {
            Table::Kernel => corr(&trace.kernels.correlation),
            Table::Memcpy => corr(&trace.memcpys.correlation),
            Table::Memset => corr(&trace.memsets.correlation),
            Table::Sync => corr(&trace.syncs.correlation),
            Table::Graph => corr(&trace.graph_execs.correlation),
            _ => None,
        };
        let Some(c) = c else { return Vec::new() };
        let stream = match self.as_gpu_op() {
            Some(op) => trace.stream_of(op),
            None => trace
                .streams
                .iter()
                .position(|s| s.graphs.contains(self.index))
                .map(|s| s as u32),
        };
        let Some(s) = stream else { return Vec::new() };
        let pid = trace.streams[s as usize].pid;
        trace
            .correlation
            .api_call(pid, c)
            .map(|i| vec![EventRef::new(Table::Api, i)])
            .unwrap_or_default()
    }

    /// Every field, for the tooltip and the details panel.
    pub fn fields(self, trace: &Trace) -> Vec<(&'static str, String)> {
        let i = self.index as usize;
        let (start, end) = (self.start(trace), self.end(trace));
        let mut f = vec![("Name", self.display_name(trace).to_string())];
        if self.display_name(trace) != self.name(trace) {
            f.push(("Full name", self.name(trace).to_string()));
        }
        f.extend([
            ("Kind", self.table.label().to_string()),
            ("Start", format::exact(start)),
            ("Duration", format::exact(end - start)),
            ("End", format::exact(end)),
            ("On", self.place(trace)),
        ]);
        match self.table {
            Table::Api => {
                if let Some(rv) = trace.cuda_api.return_value.get(i) {
                    f.push(("Return value", rv.to_string()));
                }
                if let Some(c) = trace.cuda_api.correlation.get(i) {
                    f.push(("Correlation ID", c.to_string()));
                }
            }
            Table::Osrt => {
                if let Some(rv) = trace.osrt.return_value.get(i) {
                    f.push(("Return value", rv.to_string()));
                }
            }
            Table::Nvtx => {
                let n = &trace.nvtx;
                if let Some(k) = n.kind.get(i) {
                    f.push(("NVTX kind", format!("{k:?}")));
                }
                if let Some(d) = n.depth.get(i) {
                    f.push(("Depth", d.to_string()));
                }
                if let Some(&c) = n.color.get(i).filter(|&&c| c != 0) {
                    f.push(("Color", format!("#{:06X}", c & 0xFF_FFFF)));
                }
                if let Some(c) = n.category.get(i).filter(|&&c| c != 0) {
                    f.push(("Category", c.to_string()));
                }
                if let Some(p) = n.payload.get(&self.index) {
                    let v = match p {
                        Payload::Int(v) => v.to_string(),
                        Payload::Uint(v) => v.to_string(),
                        Payload::Float(v) => v.to_string(),
                        Payload::Json(v) => v.clone(),
                    };
                    f.push(("Payload", v));
                }
                if n.is_unended(i) {
                    // A capture's range still open, or one its program
                    // never ended: the report cannot tell them apart.
                    f.push((
                        "Ended",
                        "not yet, or never: counted to the report's last NVTX time, \
                         drawn faded on to its end"
                            .into(),
                    ));
                }
            }
            Table::Kernel => {
                Self::kernel_fields(trace, i, &mut f);
            }
            Table::Memcpy => {
                let m = &trace.memcpys;
                if let Some(&b) = m.bytes.get(i) {
                    f.push(("Size", format::bytes(b)));
                    f.push(("Bandwidth", format::bandwidth(b, end - start)));
                }
                if let Some(&k) = m.copy_kind.get(i) {
                    f.push(("Direction", copy_kind(k).into()));
                }
                if let (Some(&s), Some(&d)) = (m.src_kind.get(i), m.dst_kind.get(i)) {
                    f.push(("Source memory", mem_kind(s).into()));
                    f.push(("Destination memory", mem_kind(d).into()));
                }
                if let Some(c) = m.correlation.get(i) {
                    f.push(("Correlation ID", c.to_string()));
                }
            }
            Table::Memset => {
                let m = &trace.memsets;
                if let Some(&b) = m.bytes.get(i) {
                    f.push(("Size", format::bytes(b)));
                    f.push(("Bandwidth", format::bandwidth(b, end - start)));
                }
                if let Some(v) = m.value.get(i) {
                    f.push(("Value", v.to_string()));
                }
                if let Some(&k) = m.mem_kind.get(i) {
                    f.push(("Memory", mem_kind(k).into()));
                }
            }
            Table::Sync => {
                if let Some(&t) = trace.syncs.sync_type.get(i) {
                    let name = match t {
                        1 => "Event synchronize",
                        2 => "Stream wait event",
                        3 => "Stream synchronize",
                        4 => "Context synchronize",
                        _ => "Unknown",
                    };
                    f.push(("Sync type", name.into()));
                }
                if let Some(e) = trace.syncs.event_id.get(i) {
                    f.push(("Event ID", e.to_string()));
                }
            }
            Table::Graph => {
                let g = &trace.graph_execs;
                if let Some(id) = g.graph_id.get(i) {
                    f.push(("Graph ID", id.to_string()));
                }
                if let Some(id) = g.graph_exec_id.get(i) {
                    f.push(("Graph exec ID", id.to_string()));
                }
            }
        }
        f
    }

    /// A kernel's own fields: its launch configuration, names, correlation and graph node.
    fn kernel_fields(trace: &Trace, i: usize, f: &mut Vec<(&'static str, String)>) {
        let k = &trace.kernels;
        if let Some(c) = k.config.get(i).and_then(|&c| k.configs.get(c as usize)) {
            let [gx, gy, gz] = c.grid;
            let [bx, by, bz] = c.block;
            f.push(("Grid", format!("{gx} × {gy} × {gz}")));
            f.push(("Block", format!("{bx} × {by} × {bz}")));
            f.push(("Registers/thread", c.registers_per_thread.to_string()));
            f.push((
                "Static shared mem",
                format::bytes(c.static_shared_memory as u64),
            ));
            f.push((
                "Dynamic shared mem",
                format::bytes(c.dynamic_shared_memory as u64),
            ));
            f.push((
                "Local mem/thread",
                format::bytes(c.local_memory_per_thread as u64),
            ));
            f.push((
                "Shared mem executed",
                format::bytes(c.shared_memory_executed as u64),
            ));
        }
        if let Some(s) = k.short_name(i) {
            f.push(("Short name", trace.name(s).to_string()));
        }
        if let Some(m) = k.mangled_name(i).filter(|m| m.0 != 0) {
            f.push(("Mangled name", trace.name(m).to_string()));
        }
        if let Some(c) = k.correlation.get(i) {
            f.push(("Correlation ID", c.to_string()));
        }
        if let Some(g) = k.graph_node_id.get(i).filter(|&g| g != 0) {
            f.push(("Graph node", g.to_string()));
        }
    }
}

pub fn copy_kind(k: u8) -> &'static str {
    match k {
        1 => "Host to Device",
        2 => "Device to Host",
        3 => "Host to Array",
        4 => "Array to Host",
        8 => "Device to Device",
        10 => "Peer to Peer",
        _ => "Other",
    }
}

pub fn mem_kind(k: u8) -> &'static str {
    match k {
        0 => "Pageable",
        1 => "Pinned",
        2 => "Device",
        3 => "Array",
        4 => "Managed",
        5 => "Device static",
        6 => "Managed static",
        _ => "Unknown",
    }
}

pub fn thread_label(trace: &Trace, t: usize) -> String {
    let th = &trace.threads[t];
    let name = if th.name.is_empty() {
        "thread"
    } else {
        &th.name
    };
    format!("{name} [{}]", th.tid)
}

/// The stream id CUPTI gives synchronizations of a whole context
/// (`cudaDeviceSynchronize`, `cuCtxSynchronize`): 0xFFFFFFFF, no real stream.
pub const CONTEXT_WIDE_STREAM: u32 = u32::MAX;

pub fn stream_label(trace: &Trace, s: usize) -> String {
    let st = &trace.streams[s];
    if st.stream_id == CONTEXT_WIDE_STREAM {
        format!("GPU {} · Context-wide sync", st.device_id)
    } else {
        format!("GPU {} · Stream {}", st.device_id, st.stream_id)
    }
}
