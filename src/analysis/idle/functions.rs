//! Which code ran while the GPU idled: the stretches of a gap a thread
//! spent outside CUDA or blocked in a sync, gathered per cause and thread
//! as a summary walks its gaps ([`CpuWindows`]), then named by the
//! thread's CPU samples in them (`analysis::cpu_profile::top_functions`):
//! "4.2 ms outside CUDA: 61 % in `busy_until` (train.py:40) from
//! `build_batch` (train.py:47)". A report without samples names nothing.

use super::cause::Cause;
use crate::analysis::cpu_profile::{TopFunctions, top_functions};
use crate::model::{Ns, Trace};

/// The causes whose time is named by functions: the thread's own code
/// (outside CUDA) and where it blocked (in a sync, in an OS wait).
pub(super) const NAMED: [Cause; 3] = [Cause::Outside, Cause::Sync, Cause::OsWait];

/// How many functions a cause names at most.
const TOP: usize = 3;

/// A function under this share of a cause's samples is not named.
const MIN_PERCENT: f64 = 5.0;

/// The stretches of a summary's gaps per named cause and thread.
#[derive(Default)]
pub(super) struct CpuWindows {
    /// (cause, thread, start, end), in the order walked.
    stretches: Vec<(Cause, u32, Ns, Ns)>,
}

impl CpuWindows {
    /// Whether `thread` has samples worth gathering stretches for.
    pub(super) fn wanted(trace: &Trace, thread: u32) -> bool {
        trace.cpu.preferred_source(thread).is_some()
    }

    /// Notes `[start, start + ns)` of `thread` spent in `cause`.
    pub(super) fn note(&mut self, cause: Cause, thread: u32, start: Ns, ns: Ns) {
        if ns > 0 && NAMED.contains(&cause) {
            match self.stretches.last_mut() {
                Some(last) if last.0 == cause && last.1 == thread && last.3 == start => {
                    last.3 = start.saturating_add(ns)
                }
                _ => self
                    .stretches
                    .push((cause, thread, start, start.saturating_add(ns))),
            }
        }
    }

    /// The functions of `cause`'s time: those of the thread that spent the
    /// most of it, in its stretches. None without samples there.
    pub(super) fn name(&self, trace: &Trace, cause: Cause) -> Option<TopFunctions> {
        let mut per_thread: Vec<(u32, Ns)> = Vec::new();
        for &(c, t, s, e) in &self.stretches {
            if c != cause {
                continue;
            }
            match per_thread.iter_mut().find(|(pt, _)| *pt == t) {
                Some((_, total)) => *total = total.saturating_add(e - s),
                None => per_thread.push((t, e - s)),
            }
        }
        let (thread, _) = per_thread
            .into_iter()
            .max_by_key(|&(t, ns)| (ns, u32::MAX - t))?;
        // Gaps are walked in time order: the stretches are sorted already.
        let mut windows: Vec<(Ns, Ns)> = Vec::new();
        for &(_, _, s, e) in
            (self.stretches.iter()).filter(|&&(c, t, _, _)| c == cause && t == thread)
        {
            match windows.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => windows.push((s, e)),
            }
        }
        let mut top = top_functions(trace, thread, &windows, TOP);
        top.functions.retain(|f| f.percent >= MIN_PERCENT);
        (top.samples > 0 && !top.functions.is_empty()).then_some(top)
    }
}
