//! Running a query and reading its result: what every plan of the engine shares.

use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;

use super::cluster_jobs::ClusterJobs;

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
