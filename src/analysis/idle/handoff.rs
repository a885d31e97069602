//! Work handed from one thread to another: the gap before work that a
//! thread launched while another thread of its process waited for it is,
//! up to the moment that thread began to wait, the waiting thread's doing.
//!
//! PyTorch's `loss.backward()`: the main thread runs Python, then hands the
//! backward pass to the autograd thread and waits in `pthread_cond_wait`;
//! the autograd thread, itself blocked until then, launches backward's
//! kernels. A gap before the first of them walked on the autograd thread
//! alone reads "outside CUDA (CPU work)" for time it spent blocked, and
//! names the wrong thread's CPU time. Walked on the main thread until its
//! wait began and on the autograd thread after, each part is the time of
//! the thread that held the work up.
//!
//! The handing thread is found by the same rule as a range's work across
//! threads (`analysis::range_work`): another CUDA thread of the process in a
//! wait for a thread ([`crate::analysis::range_work::is_wait_call`]) that
//! holds the launching call wholly and lies inside an NVTX range of the
//! waiting thread (the work is that range's). The range tells a thread that
//! waits for work it handed off from a worker that waits for work to come:
//! PyTorch's autograd thread sits in `pthread_cond_wait` between steps while
//! the main thread launches the forward pass, and that is no hand-off.
//! Without OS runtime calls in the report nothing is handed, and a gap is
//! walked on its launching thread alone.

use crate::analysis::range_work::is_wait_call;
use crate::model::{Ns, NvtxKind, StrId, Trace};

/// One waiting thread: its pid, its index, its waits as (start, end) by start.
type WaitingThread = (u32, u32, Vec<(Ns, Ns)>);

/// Per process, its CUDA threads' waits for a thread, by start: the only
/// places work can be handed off from.
#[derive(Clone, Debug, Default)]
pub struct Waiters {
    /// By pid.
    threads: Vec<WaitingThread>,
}

impl Waiters {
    pub fn of(trace: &Trace) -> Waiters {
        // The names of waits among the report's strings (a handful), so
        // that each call is a comparison of ids, not of text.
        let names: Vec<StrId> = (trace.strings.iter())
            .filter(|(_, s)| is_wait_call(s))
            .map(|(id, _)| id)
            .collect();
        let osrt = &trace.osrt.spans;
        let mut threads = Vec::new();
        if names.is_empty() {
            return Waiters { threads };
        }
        for (i, t) in trace.threads.iter().enumerate() {
            if t.cuda_api.is_empty() || t.osrt.is_empty() {
                continue;
            }
            let ranges = range_cover(trace, i);
            let waits: Vec<(Ns, Ns)> = (t.osrt.rows())
                .map(|row| row as usize)
                .filter(|&row| osrt.name.get(row).is_some_and(|n| names.contains(n)))
                .map(|row| (osrt.start[row], osrt.end(row)))
                .filter(|&(s, e)| {
                    let at = ranges.partition_point(|&(rs, _)| rs <= s);
                    at > 0 && e <= ranges[at - 1].1
                })
                .collect();
            if !waits.is_empty() {
                threads.push((t.pid, i as u32, waits));
            }
        }
        threads.sort_by_key(|&(pid, t, _)| (pid, t));
        Waiters { threads }
    }

    /// Whether any thread of the report waits where work can be handed off.
    pub fn any(&self) -> bool {
        !self.threads.is_empty()
    }

    /// The thread that handed API call `api` of thread `launcher` off, and
    /// when its wait began: another CUDA thread of the process in a wait
    /// that holds the call wholly (the latest-starting such wait).
    pub fn handed_by(&self, trace: &Trace, launcher: u32, api: usize) -> Option<(u32, Ns)> {
        if self.threads.is_empty() {
            return None;
        }
        let pid = trace.threads.get(launcher as usize)?.pid;
        let (s, e) = (
            *trace.cuda_api.spans.start.get(api)?,
            trace.cuda_api.spans.end(api),
        );
        let from = self.threads.partition_point(|(p, _, _)| *p < pid);
        let mut best: Option<(u32, Ns)> = None;
        for (_, t, waits) in self.threads[from..]
            .iter()
            .take_while(|(p, _, _)| *p == pid)
        {
            if *t == launcher {
                continue;
            }
            // A thread waits in one call at a time: the holder, if any, is
            // among the last to start by the call's start.
            let after = waits.partition_point(|&(ws, _)| ws <= s);
            for &(ws, we) in waits[after.saturating_sub(2)..after].iter() {
                if e <= we && best.is_none_or(|(_, b)| ws > b) {
                    best = Some((*t, ws));
                }
            }
        }
        best
    }
}

/// The time thread `t` spends inside its NVTX ranges (push/pop, and
/// start/end ranges it also ended), as sorted, disjoint intervals.
fn range_cover(trace: &Trace, t: usize) -> Vec<(Ns, Ns)> {
    let spans = &trace.nvtx.spans;
    let mut ranges: Vec<(Ns, Ns)> = Vec::new();
    for track in &trace.threads[t].nvtx {
        for i in track.track.rows() {
            let kind = trace.nvtx.kind.get(i as usize);
            if matches!(kind, Some(NvtxKind::PushPop | NvtxKind::StartEnd))
                && !trace.nvtx.end_thread.contains_key(&i)
            {
                ranges.push((spans.start[i as usize], spans.end(i as usize)));
            }
        }
    }
    // Nested ranges merge into their outermost ones (not
    // `idle::merge_windows`: this file is below `idle/mod.rs`).
    ranges.sort_unstable();
    let mut cover: Vec<(Ns, Ns)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match cover.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => cover.push((s, e)),
        }
    }
    cover
}
