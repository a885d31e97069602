//! What a rank's thread did during one phase of an iteration: the kernels it launched then and
//! their GPU time, and the time it spent outside any CUDA call (host code: Python, data, a
//! CPU-side collective). Two ranks' phases compared this way say why one took longer.

use crate::model::{GpuOpKind, Ns, Rank, ThreadIdx};

use super::iterations::Phase;
use super::launched::for_each_launched;

/// One phase instance's work on one rank.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct PhaseWork {
    /// Kernels launched by the thread during the phase.
    pub kernels: usize,
    /// Their time on the GPU (whenever they ran).
    pub gpu_ns: Ns,
    /// The phase's time in which the thread was in no CUDA call.
    pub outside_cuda_ns: Ns,
}

/// `phase` (on the job clock) of `rank`, run by its thread `thread`.
pub fn phase_work(rank: &Rank, thread: ThreadIdx, phase: &Phase) -> PhaseWork {
    let trace = &rank.trace;
    let (from, to) = (phase.start - rank.offset_ns, phase.end - rank.offset_ns);
    let Some(thread) = trace.threads.get(thread as usize) else {
        return PhaseWork::default();
    };
    let api = &trace.cuda_api.spans;
    // The union of the calls' time inside the phase (nested calls count once).
    let mut in_cuda: Ns = 0;
    let mut covered_to = from;
    for window in thread.cuda_api.windows(api, from, to) {
        for row in window {
            let i = row as usize;
            let (start, end) = (api.start[i].max(covered_to), api.end(i).min(to));
            if end > start {
                in_cuda += end - start;
                covered_to = end;
            }
        }
    }
    let mut work = PhaseWork {
        outside_cuda_ns: (to - from - in_cuda).max(0),
        ..PhaseWork::default()
    };
    for_each_launched(trace, thread, from, to, &mut |op| {
        if op.kind == GpuOpKind::Kernel {
            work.kernels += 1;
            work.gpu_ns += trace.kernels.spans.duration(op.index as usize);
        }
    });
    work
}
