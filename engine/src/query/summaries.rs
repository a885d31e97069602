//! What the window opens a job on without any rank's events ([`JobSummaries`]): the ranks
//! table (number, source report, session start, offset), each rank's NVTX span on the job
//! clock, and the cross-rank analysis ([`analyze_job`]: iterations, straggler and its work).
//! Only the small results of the plans come back.

use std::collections::HashMap;
use std::path::PathBuf;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt32Type};
use datafusion::prelude::SessionContext;
use sightline::analysis::ranks::{
    JobAnalysis, JobSummaries, RankIterations, RankSummary, SUMMARIES_VERSION, StragglerThresholds,
};

use super::batches::{collect, column};
use super::iterations::{OnProgress, ranges_iterations, with_phase_work};
use super::job_findings::{EngineAnalysis, analyze_iterations};

/// The job's summaries, computed in `ctx`, telling `on_progress` how far it is (0 to 1). The
/// summaries as the NVTX ranges alone give them (no phase's GPU work, no difference; a second
/// or so) go to `on_early` first, the window's ranks panel answering from them meanwhile.
pub async fn job_summaries(
    ctx: &SessionContext,
    on_progress: OnProgress<'_>,
    on_early: &(dyn Fn(&JobSummaries) -> Result<(), String> + Sync),
) -> Result<JobSummaries, String> {
    let thresholds = StragglerThresholds::default();
    let ranges = ranges_iterations(ctx).await?;
    let early = ranges.iterations();
    let spans = nvtx_spans(ctx).await?;
    let pids = iteration_pids(ctx, &early.job.ranks).await?;
    let mut ranks = rank_rows(ctx).await?;
    for r in &mut ranks {
        r.span = spans.get(&r.number).copied();
        r.pid = pids.get(&r.number).copied();
    }
    on_progress(0.1);
    on_early(&summaries_of(
        ranks.clone(),
        analyze_iterations(early, &thresholds),
        false,
    ))?;
    let whole = with_phase_work(ctx, ranges, &|done| on_progress(0.1 + 0.9 * done)).await?;
    Ok(summaries_of(
        ranks,
        analyze_iterations(whole, &thresholds),
        true,
    ))
}

/// The document of `ranks` and the engine's analysis.
fn summaries_of(ranks: Vec<RankSummary>, found: EngineAnalysis, complete: bool) -> JobSummaries {
    JobSummaries {
        version: SUMMARIES_VERSION,
        complete,
        ranks,
        aligned: found.iterations.aligned,
        analysis: JobAnalysis {
            iterations: found.iterations.job,
            straggler: found.straggler,
            difference: found.difference,
        },
    }
}

/// The `ranks` table, in rank order (no spans yet).
async fn rank_rows(ctx: &SessionContext) -> Result<Vec<RankSummary>, String> {
    let sql = "SELECT rank, path, session_start_utc_ns, offset_ns FROM ranks ORDER BY rank";
    let mut out = Vec::new();
    for batch in collect(ctx, sql).await? {
        let rank = column(&batch, "rank", &DataType::UInt32)?;
        let path = column(&batch, "path", &DataType::Utf8)?;
        let start = column(&batch, "session_start_utc_ns", &DataType::Int64)?;
        let offset = column(&batch, "offset_ns", &DataType::Int64)?;
        let start = start.as_primitive::<Int64Type>();
        for i in 0..batch.num_rows() {
            out.push(RankSummary {
                number: rank.as_primitive::<UInt32Type>().value(i),
                path: PathBuf::from(path.as_string::<i32>().value(i)),
                session_start_utc_ns: (!start.is_null(i)).then(|| start.value(i)),
                offset_ns: offset.as_primitive::<Int64Type>().value(i),
                span: None,
                pid: None,
            });
        }
    }
    Ok(out)
}

/// Each rank's earliest NVTX start and latest end on the job clock (a rank without NVTX
/// ranges has none).
async fn nvtx_spans(ctx: &SessionContext) -> Result<HashMap<u32, (i64, i64)>, String> {
    let sql = "SELECT rank, MIN(start_job_ns) AS lo, MAX(end_job_ns) AS hi FROM nvtx GROUP BY rank";
    let mut out = HashMap::new();
    for batch in collect(ctx, sql).await? {
        let rank = column(&batch, "rank", &DataType::UInt32)?;
        let lo = column(&batch, "lo", &DataType::Int64)?;
        let hi = column(&batch, "hi", &DataType::Int64)?;
        let (lo, hi) = (
            lo.as_primitive::<Int64Type>(),
            hi.as_primitive::<Int64Type>(),
        );
        for i in 0..batch.num_rows() {
            if lo.is_null(i) || hi.is_null(i) {
                continue;
            }
            let r = rank.as_primitive::<UInt32Type>().value(i);
            out.insert(r, (lo.value(i), hi.value(i)));
        }
    }
    Ok(out)
}

/// The process of each rank's iterations' thread (the engine's `thread` is its thread id).
async fn iteration_pids(
    ctx: &SessionContext,
    found: &[RankIterations],
) -> Result<HashMap<u32, u32>, String> {
    if found.is_empty() {
        return Ok(HashMap::new());
    }
    let threads: Vec<String> = (found.iter())
        .map(|r| format!("({}, {})", r.rank, r.thread))
        .collect();
    let sql = format!(
        "WITH job_threads(rank, tid) AS (VALUES {}) \
         SELECT DISTINCT n.rank, n.pid FROM nvtx n \
         JOIN job_threads t ON n.rank = t.rank AND n.tid = t.tid WHERE n.depth = 0",
        threads.join(", ")
    );
    let mut out = HashMap::new();
    for batch in collect(ctx, &sql).await? {
        let rank = column(&batch, "rank", &DataType::UInt32)?;
        let pid = column(&batch, "pid", &DataType::UInt32)?;
        let pid = pid.as_primitive::<UInt32Type>();
        for i in 0..batch.num_rows() {
            if !pid.is_null(i) {
                out.insert(rank.as_primitive::<UInt32Type>().value(i), pid.value(i));
            }
        }
    }
    Ok(out)
}
