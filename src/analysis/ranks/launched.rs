//! The GPU work a thread launched in a span of its report's time: every kernel, copy and set
//! whose CUDA call started on that thread in the span (found through the call's correlation
//! id). What a phase put on the GPU, whenever it ran.

use crate::model::{GpuOp, GpuOpKind, Ns, Thread, Trace};

/// Calls `each` with every GPU operation `thread` launched from calls starting in `[from, to)`.
pub fn for_each_launched(
    trace: &Trace,
    thread: &Thread,
    from: Ns,
    to: Ns,
    each: &mut dyn FnMut(GpuOp),
) {
    let api = &trace.cuda_api.spans;
    let correlation = trace.correlation.of_process(thread.pid);
    for row in thread.cuda_api.starting_in(api, from, to) {
        if let Some(&id) = trace.cuda_api.correlation.get(row as usize) {
            correlation.gpu_ops(id).for_each(&mut *each);
        }
    }
}

/// When GPU operation `op` ended (its report's time); `None` for a sync record.
pub fn op_end(trace: &Trace, op: GpuOp) -> Option<Ns> {
    let i = op.index as usize;
    match op.kind {
        GpuOpKind::Kernel => (i < trace.kernels.spans.len()).then(|| trace.kernels.spans.end(i)),
        GpuOpKind::Memcpy => (i < trace.memcpys.spans.len()).then(|| trace.memcpys.spans.end(i)),
        GpuOpKind::Memset => (i < trace.memsets.spans.len()).then(|| trace.memsets.spans.end(i)),
        GpuOpKind::Sync => None,
    }
}
