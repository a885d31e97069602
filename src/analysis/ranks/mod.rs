//! Cross-rank analysis of a job of reports ([`crate::model::Ranks`]): tables on the job clock,
//! the iterations each rank repeats matched across ranks, how far apart the ranks' phases end,
//! and the rank that holds the others back.

mod align;
mod clock;
mod iterations;
mod job_findings;
mod launched;
mod phase_work;
mod spread;
mod straggler;
mod summaries;

pub use align::{align_on_kernel_end, align_on_range_end, first_collective_kernel, is_collective};
pub use clock::{
    RANK_COLUMN, RankRows, is_timestamp_column, rank_by_rank, timestamp_columns, with_rank_column,
};
pub use iterations::{
    Iteration, JobIterations, Phase, RankIterations, job_iterations, mask_digits, rank_iterations,
    repeated_range_order,
};
pub use job_findings::{
    JobAnalysis, STRAGGLER_FIX, WorkDifference, analyze_job, cross_rank_text, straggler_json,
    straggler_message, work_difference_with,
};
pub use phase_work::{PhaseWork, phase_work};
pub use spread::{PhaseSpread, phase_spreads, spread, synchronizing_phase};
pub use straggler::{NoStraggler, Straggler, StragglerThresholds, Wait, find_straggler};
pub use summaries::{JobSummaries, RankSummary, SUMMARIES_VERSION};
