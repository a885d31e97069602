//! The functions an idle gap's CPU time went to, for its tooltip: the
//! launching thread's samples in the stretches of the gap a cause covers
//! (outside CUDA, or blocked in a synchronization), named by
//! `analysis::cpu_profile::top_functions` ("61 % in `build_batch`
//! (train.py:14) …").

use crate::analysis::cpu_profile::{TopFunctions, top_functions};
use crate::analysis::idle::{Cause, Classifier, Gap, WalkHints};
use crate::model::{Ns, Trace};

/// Functions named per cause line, at most.
pub const NAMED: usize = 3;

/// Whether a cause's time is worth naming functions for: the thread's own
/// CPU work, or its waits.
pub fn names_functions(cause: Cause) -> bool {
    matches!(cause, Cause::Outside | Cause::Sync)
}

/// The cause as the functions' line words it: "4.2 ms outside CUDA: …".
pub fn short_label(cause: Cause) -> &'static str {
    match cause {
        Cause::Outside => "outside CUDA",
        Cause::Sync => "blocked in syncs",
        other => other.label(),
    }
}

/// The stretches of `gap` in which its launching thread's time counts for
/// `cause`, in order (adjacent stretches merged).
pub fn windows(classifier: &Classifier, gap: &Gap, cause: Cause) -> Vec<(Ns, Ns)> {
    let Some(thread) = gap.thread else {
        return Vec::new();
    };
    let mut out: Vec<(Ns, Ns)> = Vec::new();
    let mut at = gap.start;
    let mut hints = WalkHints::default();
    // The walk's stretches add up to the gap in order: each starts where the last ended.
    classifier.walk(thread, gap.start, gap.end, &mut hints, |_, c, ns| {
        let (s, e) = (at, at.saturating_add(ns));
        at = e;
        if c != cause || e <= s {
            return;
        }
        match out.last_mut() {
            Some(last) if last.1 == s => last.1 = e,
            _ => out.push((s, e)),
        }
    });
    out
}

/// The top functions of `gap`'s launching thread during `cause`'s time in
/// it; None where the thread has no samples there.
pub fn of_cause(classifier: &Classifier, gap: &Gap, cause: Cause) -> Option<TopFunctions> {
    let thread = gap.thread?;
    let trace: &Trace = classifier.trace();
    trace.cpu.preferred_source(thread)?;
    let top = top_functions(trace, thread, &windows(classifier, gap, cause), NAMED);
    (top.samples > 0).then_some(top)
}
