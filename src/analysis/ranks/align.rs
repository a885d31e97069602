//! Aligning a job's ranks on a shared event instead of their session starts: the end of the
//! Nth instance of an NVTX range every rank has (an iteration, the phase holding the collective).
//! Across hosts the session starts are only as close as NTP keeps the clocks (1 to tens of ms);
//! an event every rank leaves together (an all-reduce's end) lines them up to its own spread.

use crate::analysis::compare::nvtx_ranges_named;
use crate::model::{Alignment, Ns, Ranks};

/// Moves every rank so that the end of its `nth` (0-based, by start) NVTX range named `name`
/// falls where the first rank's does on the job clock; the first rank keeps its offset. Says
/// which rank lacks the event, and changes nothing then.
pub fn align_on_range_end(job: &mut Ranks, name: &str, nth: usize) -> Result<(), String> {
    let ends: Vec<Ns> = (job.ranks.iter())
        .map(|r| {
            let found = nvtx_ranges_named(&r.trace, name);
            let id = found.get(nth).ok_or_else(|| {
                format!(
                    "rank {} has {} instance(s) of '{name}', not {}",
                    r.number,
                    found.len(),
                    nth + 1
                )
            })?;
            let i = id.index as usize;
            Ok(r.trace.nvtx.spans.end(i))
        })
        .collect::<Result<_, String>>()?;
    let Some((first, first_end)) = job.ranks.first().zip(ends.first()) else {
        return Ok(());
    };
    let target = first.to_job(*first_end);
    for (r, end) in job.ranks.iter_mut().zip(ends) {
        r.offset_ns = target - end;
    }
    job.alignment = Alignment::SharedEvent;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Ranks;
    use std::path::PathBuf;
    use std::sync::Arc;

    #[test]
    fn the_chosen_ends_fall_together_and_a_missing_one_is_said() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jobs/straggler");
        let reports = (0..4)
            .map(|r| {
                let path = dir.join(format!("rank{r}.sqlite"));
                let trace = crate::loader::load_fixture(&format!("jobs/straggler/rank{r}.sqlite"));
                (path, Arc::new(trace))
            })
            .collect();
        let mut job = Ranks::new(reports);
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
}
