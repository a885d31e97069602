//! The cross-rank findings on the engine: the straggler, found from the iterations and phase
//! work that [`super::iterations`] computes, by the rule and in the words of a job opened in
//! the window (`sightline::analysis::ranks`), so both give the same finding.

use datafusion::prelude::SessionContext;
use sightline::analysis::ranks::{
    NoStraggler, Straggler, StragglerThresholds, WorkDifference, find_straggler,
    work_difference_with,
};

use super::iterations::{EngineIterations, OnProgress, engine_iterations_with};

/// The job's straggler (or why there is none) and what it did differently.
#[derive(Debug)]
pub struct EngineAnalysis {
    pub iterations: EngineIterations,
    pub straggler: Result<Straggler, NoStraggler>,
    pub difference: Option<WorkDifference>,
}

/// The cross-rank analysis of the job whose tables `ctx` holds.
pub async fn analyze_job(
    ctx: &SessionContext,
    thresholds: &StragglerThresholds,
) -> Result<EngineAnalysis, String> {
    analyze_job_with(ctx, thresholds, &|_| {}).await
}

/// [`analyze_job`], telling `on_progress` how far it is (0 to 1).
pub async fn analyze_job_with(
    ctx: &SessionContext,
    thresholds: &StragglerThresholds,
    on_progress: OnProgress<'_>,
) -> Result<EngineAnalysis, String> {
    let iterations = engine_iterations_with(ctx, on_progress).await?;
    Ok(analyze_iterations(iterations, thresholds))
}

/// The straggler (or why there is none) and what it did differently, from the job's
/// iterations and their phases' work (none: no difference said).
pub fn analyze_iterations(
    iterations: EngineIterations,
    thresholds: &StragglerThresholds,
) -> EngineAnalysis {
    let ranks = iterations.job.ranks.len() + iterations.job.without.len();
    let straggler = if !iterations.aligned && ranks > 1 {
        Err(NoStraggler::Unaligned)
    } else {
        find_straggler(&iterations.job, thresholds)
    };
    let difference = (straggler.as_ref().ok())
        .filter(|_| !iterations.work.is_empty())
        .map(|s| {
            work_difference_with(&iterations.job, s, |r, n| {
                iterations
                    .work
                    .get(&(r, n, s.excess_phase.clone()))
                    .copied()
            })
        });
    EngineAnalysis {
        iterations,
        straggler,
        difference,
    }
}
