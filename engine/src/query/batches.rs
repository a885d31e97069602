//! Running a query and reading its result: what every plan of the engine shares.

use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;

use super::cluster_jobs::ClusterJobs;

/// Ranks per query of the plans that would otherwise hold every rank's rows at once: a
/// summary's exact medians (DataFusion's median keeps every value of its group until the group
/// ends and cannot spill: 5.4 GB at 256 ranks × 1M events, BENCHMARKS.md) and the phases' work
/// of `analyze` (every CUDA call sorted, every GPU operation grouped by launch: 2.4 GB). Asked a
/// few ranks at a time (`rank BETWEEN a AND b`), a plan holds theirs only, and a Parquet job's
/// `rank=N` folders outside the range are not even opened.
pub const RANKS_PER_QUERY: usize = 16;

/// `ranks` (in order) in groups of [`RANKS_PER_QUERY`]: each group's first and last rank.
pub fn rank_groups(ranks: &[u32]) -> Vec<(u32, u32)> {
    (ranks.chunks(RANKS_PER_QUERY))
        .filter_map(|group| Some((*group.first()?, *group.last()?)))
        .collect()
}

/// The SQL condition on `rank` that selects the group `(first, last)`.
pub fn ranks_between((first, last): (u32, u32)) -> String {
    format!("rank BETWEEN {first} AND {last}")
}

/// Runs `sql` in `ctx`; its batches. On a cluster the plan is watched while it runs
/// ([`ClusterJobs`]), so that Ctrl-C can cancel its job there.
pub async fn collect(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>, String> {
    let frame = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let task = Arc::new(frame.task_ctx());
    let plan = frame
        .create_physical_plan()
        .await
        .map_err(|e| e.to_string())?;
    if let Some(jobs) = ctx.state().config().get_extension::<ClusterJobs>() {
        jobs.watch(plan.clone());
    }
    datafusion::physical_plan::collect(plan, task)
        .await
        .map_err(|e| e.to_string())
}

/// A result column by name, cast to `to` (Parquet strings may come as views, counts in
/// another width).
pub fn column(batch: &RecordBatch, name: &str, to: &DataType) -> Result<ArrayRef, String> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| format!("the plan returned no column {name}"))?;
    cast(array, to).map_err(|e| e.to_string())
}
