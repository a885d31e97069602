//! Aligning a job's ranks on a shared event instead of their session starts: the end of the
//! Nth instance of an NVTX range every rank has (an iteration, the phase holding the collective),
//! or of the Nth kernel of one name (the collective itself: `ncclDevKernel_AllReduce…`).
//! Across hosts the session starts are only as close as NTP keeps the clocks (1 to tens of ms);
//! an event every rank leaves together (an all-reduce's end) lines them up to its own spread.

use crate::analysis::compare::nvtx_ranges_named;
use crate::model::{Alignment, Ns, Ranks, Trace};

/// Moves every rank so that the end of its `nth` (0-based, by start) NVTX range named `name`
/// falls where the first rank's does on the job clock; the first rank keeps its offset. Says
/// which rank lacks the event, and changes nothing then.
pub fn align_on_range_end(job: &mut Ranks, name: &str, nth: usize) -> Result<(), String> {
    let ends = nth_ends(job, nth, |trace| {
        let found = nvtx_ranges_named(trace, name);
        let ends: Vec<Ns> = (found.iter())
            .map(|id| trace.nvtx.spans.end(id.index as usize))
            .collect();
        (ends, format!("'{name}'"))
    })?;
    move_to_first(job, &ends);
    job.alignment = Alignment::SharedEvent;
    Ok(())
}

/// Moves every rank so that the end of its `nth` (0-based, by start) kernel whose name
/// contains `name` falls where the first rank's does; as [`align_on_range_end`] otherwise.
/// Every rank of a data-parallel job runs its collectives in one order, so the Nth all-reduce
/// kernel is the same collective on every rank, and they all leave it together.
pub fn align_on_kernel_end(job: &mut Ranks, name: &str, nth: usize) -> Result<(), String> {
    if name.is_empty() {
        return Err("name a kernel to align on".into());
    }
    let ends = nth_ends(job, nth, |trace| {
        (
            kernels_containing(trace, name),
            format!("kernels named *{name}*"),
        )
    })?;
    move_to_first(job, &ends);
    job.alignment = Alignment::SharedKernel;
    Ok(())
}

/// The name of the first collective kernel (NCCL's `ncclDevKernel_*` / `ncclKernel_*`) in
/// `trace`, cut before its argument list: what the window offers to align on.
pub fn first_collective_kernel(trace: &Trace) -> Option<String> {
    let kernels = &trace.kernels.spans;
    (0..kernels.len())
        .filter_map(|i| kernels.name.get(i).map(|&n| trace.strings.get(n)))
        .find(|name| is_collective(name))
        .map(|name| name.split('(').next().unwrap_or(name).to_string())
}

/// Whether a kernel's name is one of NCCL's collective or point-to-point kernels.
pub fn is_collective(kernel_name: &str) -> bool {
    kernel_name.starts_with("ncclDevKernel_") || kernel_name.starts_with("ncclKernel_")
}

/// The ends of `trace`'s kernels whose (demangled) name contains `name`, in start order.
fn kernels_containing(trace: &Trace, name: &str) -> Vec<Ns> {
    let spans = &trace.kernels.spans;
    let mut found: Vec<(Ns, Ns)> = (0..spans.len())
        .filter(|&i| (spans.name.get(i)).is_some_and(|&n| trace.strings.get(n).contains(name)))
        .filter_map(|i| spans.get(i))
        .collect();
    found.sort_unstable();
    found.into_iter().map(|(_, end)| end).collect()
}

/// Each rank's end of instance `nth` of what `ends_of` finds in its trace (ends in start
/// order, and how to name them), or which rank lacks it.
fn nth_ends(
    job: &Ranks,
    nth: usize,
    ends_of: impl Fn(&Trace) -> (Vec<Ns>, String),
) -> Result<Vec<Ns>, String> {
    (job.ranks.iter())
        .map(|r| {
            let (ends, what) = ends_of(&r.trace);
            ends.get(nth).copied().ok_or_else(|| {
                format!(
                    "rank {} has {} instance(s) of {what}, not {}",
                    r.number,
                    ends.len(),
                    nth + 1
                )
            })
        })
        .collect()
}

/// Offsets every rank so that its `ends[i]` falls where the first rank's does.
fn move_to_first(job: &mut Ranks, ends: &[Ns]) {
    let Some((first, first_end)) = job.ranks.first().zip(ends.first()) else {
        return;
    };
    let target = first.to_job(*first_end);
    for (r, end) in job.ranks.iter_mut().zip(ends) {
        r.offset_ns = target - end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Ranks;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn straggler_job() -> Ranks {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jobs/straggler");
        let reports = (0..4)
            .map(|r| {
                let path = dir.join(format!("rank{r}.sqlite"));
                let trace = crate::loader::load_fixture(&format!("jobs/straggler/rank{r}.sqlite"));
                (path, Arc::new(trace))
            })
            .collect();
        Ranks::new(reports)
    }

    #[test]
    fn the_chosen_ends_fall_together_and_a_missing_one_is_said() {
        let mut job = straggler_job();
        align_on_range_end(&mut job, "backward", 5).expect("every rank has it");
        assert_eq!(job.alignment, Alignment::SharedEvent);
        let ends: Vec<Ns> = (job.ranks.iter())
            .map(|r| {
                let id = nvtx_ranges_named(&r.trace, "backward")[5];
                r.to_job(r.trace.nvtx.spans.end(id.index as usize))
            })
            .collect();
        assert!(ends.iter().all(|&e| e == ends[0]), "{ends:?}");
        let before: Vec<Ns> = job.ranks.iter().map(|r| r.offset_ns).collect();
        let missing = align_on_range_end(&mut job, "backward", 1000).expect_err("not there");
        assert!(missing.contains("not 1001"), "{missing}");
        assert_eq!(
            before,
            job.ranks.iter().map(|r| r.offset_ns).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_nth_kernel_of_a_name_ends_together_on_every_rank() {
        let mut job = straggler_job();
        // A kernel every rank runs in every step: the most frequent name of rank 0.
        let trace = &job.ranks[0].trace;
        let mut counts = std::collections::HashMap::<&str, usize>::new();
        for i in 0..trace.kernels.spans.len() {
            let name = trace.strings.get(trace.kernels.spans.name[i]);
            *counts
                .entry(name.split('(').next().unwrap_or(name))
                .or_default() += 1;
        }
        let name = (counts.into_iter())
            .max_by_key(|&(n, c)| (c, std::cmp::Reverse(n)))
            .map(|(n, _)| n.to_string())
            .expect("kernels");
        align_on_kernel_end(&mut job, &name, 7).expect("every rank has it");
        assert_eq!(job.alignment, Alignment::SharedKernel);
        let ends: Vec<Ns> = (job.ranks.iter())
            .map(|r| r.to_job(kernels_containing(&r.trace, &name)[7]))
            .collect();
        assert!(ends.iter().all(|&e| e == ends[0]), "{ends:?}");
        let missing = align_on_kernel_end(&mut job, "no such kernel", 0).expect_err("none");
        assert!(missing.contains("0 instance(s)"), "{missing}");
        assert!(align_on_kernel_end(&mut job, "", 0).is_err());
    }

    #[test]
    fn nccl_kernels_are_collectives_and_others_are_not() {
        assert!(is_collective(
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
        ));
        assert!(is_collective(
            "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)"
        ));
        assert!(!is_collective(
            "void at::native::vectorized_elementwise_kernel<4>"
        ));
        // The recorded jobs use gloo: no NCCL kernel to offer.
        let job = straggler_job();
        assert_eq!(first_collective_kernel(&job.ranks[0].trace), None);
    }
}
