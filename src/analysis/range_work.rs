//! The GPU work an NVTX range owns across the threads of its process: its
//! own thread's launches, and the launches another thread made for it while
//! its thread waited (PyTorch's backward: the main thread waits in
//! `loss.backward()` while the autograd thread `pt_autograd_0` launches).
//!
//! # The rule
//! A range owns the GPU operations (kernels, copies, sets; not sync records)
//! of:
//! 1. every CUDA API call of **its own thread** that lies wholly inside it
//!    (nsys's projection rule, [`crate::analysis::projection`]); and
//! 2. every CUDA API call of **another thread of the same process** that
//!    lies wholly inside a **wait** of the range's thread that lies inside
//!    the range. A wait is an OS runtime call (nsys's `--trace=osrt`, event
//!    class 27) in which a thread blocks until another thread of its process
//!    wakes it: a condition-variable wait, a semaphore wait, a thread join,
//!    a barrier ([`WAIT_CALLS`]).
//!
//! # Why this rule, and what it leaves out
//! A thread blocked in such a call is doing nothing but waiting for another
//! thread; work another thread launches meanwhile is what the range waits
//! for, as much as the kernels it launches itself (`loss.backward()` returns
//! when the autograd thread is done). A thread that merely runs at the same
//! time (a data loader, a logger) launches its work whether the range waits
//! or not: while the range's thread is running, or is blocked on I/O, a lock
//! or a CUDA sync (waiting for the GPU, not for a thread), another thread's
//! launches are not its work, even when they fall inside it. A mutex wait is
//! left out too: a lock another thread holds says only that it held it.
//!
//! Without OS runtime calls in the report nothing says that the range's
//! thread waited, so nothing of another thread is counted
//! ([`other_threads_launches`] tells how much that leaves out). The report
//! does not say which thread ended a wait: any thread of the process that
//! launched during it counts, each op labelled with its launching thread, so
//! the views show whose work it is.
//!
//! nsys's own NVTX reports (`nvtx_gpu_proj_*`, `nvtx_kern_sum`) keep nsys's
//! per-thread rule (1 alone): their numbers are nsys's.

use crate::model::{GpuOp, GpuOpKind, Ns, ThreadIdx, Trace};

/// OS runtime calls in which a thread waits for another thread of its
/// process (glibc's names, as nsys records them).
pub const WAIT_CALLS: [&str; 10] = [
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "pthread_cond_clockwait",
    "pthread_join",
    "pthread_timedjoin_np",
    "pthread_clockjoin_np",
    "pthread_barrier_wait",
    "sem_wait",
    "sem_timedwait",
    "sem_clockwait",
];

/// Whether OS runtime call `name` is a wait for another thread ([`WAIT_CALLS`];
/// a versioned symbol, `pthread_cond_wait@GLIBC_2.3.2`, counts as its name).
pub fn is_wait_call(name: &str) -> bool {
    let name = name.split('@').next().unwrap_or(name);
    WAIT_CALLS.contains(&name)
}

/// One GPU operation a range owns, with the call and thread that launched it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OwnedOp {
    pub op: GpuOp,
    /// Index into `Trace::cuda_api`.
    pub api: u32,
    /// The launching thread.
    pub thread: ThreadIdx,
    /// For an op of another thread: the wait of the range's thread (index
    /// into `Trace::osrt`) it was launched in. None for the range's own.
    pub wait: Option<u32>,
}

/// The thread that recorded NVTX range `nvtx`, unless it was ended on
/// another thread (such a range has no one thread: nsys leaves it out).
pub fn range_thread(trace: &Trace, nvtx: u32) -> Option<ThreadIdx> {
    if nvtx as usize >= trace.nvtx.spans.len() || trace.nvtx.end_thread.contains_key(&nvtx) {
        return None;
    }
    let t = trace
        .threads
        .iter()
        .position(|th| th.nvtx.iter().any(|n| n.track.contains(nvtx)))?;
    Some(t as ThreadIdx)
}

/// The waits ([`is_wait_call`]) of `thread` that lie inside `[start, end]`:
/// `(row in Trace::osrt, start, end)`, by start.
pub fn waits_in(
    trace: &Trace,
    thread: ThreadIdx,
    start: Ns,
    end: Ns,
) -> impl Iterator<Item = (u32, Ns, Ns)> + '_ {
    let osrt = &trace.osrt;
    let track = trace.threads.get(thread as usize).map(|t| &t.osrt);
    track
        .into_iter()
        .flat_map(move |track| track.starting_in(&osrt.spans, start, end.saturating_add(1)))
        .filter(move |&row| {
            let i = row as usize;
            osrt.spans.end(i) <= end
                && osrt
                    .event_class
                    .get(i)
                    .is_none_or(|&c| c == crate::model::nsys::event_class::OS_RUNTIME as u8)
                && is_wait_call(trace.name(osrt.spans.name[i]))
        })
        .map(move |row| {
            (
                row,
                osrt.spans.start[row as usize],
                osrt.spans.end(row as usize),
            )
        })
}

/// The other threads of `thread`'s process that made CUDA calls.
fn sibling_threads(trace: &Trace, thread: ThreadIdx) -> impl Iterator<Item = ThreadIdx> + '_ {
    let pid = trace.threads.get(thread as usize).map(|t| t.pid);
    (0..trace.threads.len() as ThreadIdx).filter(move |&t| {
        let th = &trace.threads[t as usize];
        t != thread && Some(th.pid) == pid && !th.cuda_api.is_empty()
    })
}

/// The CUDA calls of `thread` that lie wholly inside `[start, end]`.
fn calls_within(
    trace: &Trace,
    thread: ThreadIdx,
    start: Ns,
    end: Ns,
) -> impl Iterator<Item = u32> + '_ {
    let api = &trace.cuda_api.spans;
    trace.threads[thread as usize]
        .cuda_api
        .starting_in(api, start, end.saturating_add(1))
        .filter(move |&i| api.end(i as usize) <= end)
}

/// The GPU operations (not sync records) CUDA call `api` of `thread` caused.
fn ops_of(trace: &Trace, thread: ThreadIdx, api: u32) -> impl Iterator<Item = GpuOp> + '_ {
    let pid = trace.threads[thread as usize].pid;
    let correlation = trace.cuda_api.correlation.get(api as usize).copied();
    correlation
        .into_iter()
        .flat_map(move |c| trace.correlation.gpu_ops(pid, c))
        .filter(|op| op.kind != GpuOpKind::Sync)
}

/// Rule 2 for a range of `thread` over `[start, end]`: the CUDA calls of the
/// process's other threads made while `thread` waited inside it, each with
/// the launching thread and the wait, by wait then thread.
pub fn handed_off_calls(
    trace: &Trace,
    thread: ThreadIdx,
    start: Ns,
    end: Ns,
) -> Vec<(u32, ThreadIdx, u32)> {
    let mut out = Vec::new();
    for (wait, ws, we) in waits_in(trace, thread, start, end) {
        for other in sibling_threads(trace, thread) {
            out.extend(calls_within(trace, other, ws, we).map(|api| (api, other, wait)));
        }
    }
    out
}

/// Every GPU operation NVTX range `nvtx` owns by the rule above: its own
/// thread's first (in call order), then those handed off. Empty for a range
/// ended on another thread or an unknown index.
pub fn range_ops(trace: &Trace, nvtx: u32) -> Vec<OwnedOp> {
    let Some(thread) = range_thread(trace, nvtx) else {
        return Vec::new();
    };
    let i = nvtx as usize;
    let (start, end) = (trace.nvtx.spans.start[i], trace.nvtx.spans.end(i));
    let mut out: Vec<OwnedOp> = Vec::new();
    for api in calls_within(trace, thread, start, end) {
        out.extend(ops_of(trace, thread, api).map(|op| OwnedOp {
            op,
            api,
            thread,
            wait: None,
        }));
    }
    for (api, other, wait) in handed_off_calls(trace, thread, start, end) {
        out.extend(ops_of(trace, other, api).map(|op| OwnedOp {
            op,
            api,
            thread: other,
            wait: Some(wait),
        }));
    }
    out
}

/// What rule 2 leaves out of range `nvtx`: per other thread of its process,
/// the GPU operations whose calls lie inside the range but in none of its
/// thread's waits (work of a thread that merely ran at the same time, or of
/// a report without OS runtime calls). By thread.
pub fn other_threads_launches(trace: &Trace, nvtx: u32) -> Vec<(ThreadIdx, usize)> {
    let Some(thread) = range_thread(trace, nvtx) else {
        return Vec::new();
    };
    let i = nvtx as usize;
    let (start, end) = (trace.nvtx.spans.start[i], trace.nvtx.spans.end(i));
    let waits: Vec<(Ns, Ns)> = waits_in(trace, thread, start, end)
        .map(|(_, s, e)| (s, e))
        .collect();
    let api = &trace.cuda_api.spans;
    let in_a_wait = |call: u32| {
        let (s, e) = (api.start[call as usize], api.end(call as usize));
        waits.iter().any(|&(ws, we)| ws <= s && e <= we)
    };
    sibling_threads(trace, thread)
        .map(|other| {
            let ops = calls_within(trace, other, start, end)
                .filter(|&call| !in_a_wait(call))
                .map(|call| ops_of(trace, other, call).count())
                .sum();
            (other, ops)
        })
        .filter(|&(_, ops)| ops > 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_thread_waits_only() {
        for name in [
            "pthread_cond_wait",
            "sem_timedwait",
            "pthread_join@GLIBC_2.34",
        ] {
            assert!(is_wait_call(name), "{name}");
        }
        for name in [
            "pthread_mutex_lock",
            "poll",
            "read",
            "ioctl",
            "nanosleep",
            "",
        ] {
            assert!(!is_wait_call(name), "{name}");
        }
    }
}
