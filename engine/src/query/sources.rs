//! The job's tables, registered in a session: a Parquet job folder's tables (their `rank=N`
//! folders read as the `rank` column), or the `.sqlite` reports' tables made into Arrow in
//! memory (a rank at a time, the same columns as the export writes).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt32Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::datasource::MemTable;
use datafusion::prelude::{ParquetReadOptions, SessionContext};

use sightline::loader::ranks::is_parquet_job;

use super::batches::{collect, column};
use super::nsys_parquet::register_nsys_parquet;
use crate::export::job::{JobPlan, ranks_batch};
use crate::export::tables::rank_tables;
use sightline::loader::ranks::nsys_parquet_ranks;

/// The tables every job has, by folder name.
pub const TABLES: [&str; 9] = [
    "kernels",
    "memcpys",
    "memsets",
    "syncs",
    "cuda_api",
    "os_runtime",
    "nvtx",
    "gpu_metrics",
    "cpu_samples",
];

/// Where a job's tables come from.
#[derive(Clone, Debug)]
pub enum JobSource {
    /// An exported folder (`TABLE/rank=N/*.parquet`).
    Parquet(PathBuf),
    /// nsys's own Parquet exports (`nsys export --type parquetdir`), a folder per rank.
    NsysParquet(Vec<PathBuf>),
    /// `.sqlite` reports (or folders of them).
    Reports(Vec<PathBuf>),
}

impl JobSource {
    /// A single Parquet job folder: an export; nsys Parquet exports (or a folder of
    /// them); anything else: reports.
    pub fn of(given: &[PathBuf]) -> JobSource {
        match given {
            [one] if is_parquet_job(one) => JobSource::Parquet(one.clone()),
            _ => match nsys_parquet_ranks(given) {
                Some(ranks) => JobSource::NsysParquet(ranks),
                None => JobSource::Reports(given.to_vec()),
            },
        }
    }

    /// Registers the job's tables in `ctx`.
    pub async fn register(&self, ctx: &SessionContext) -> Result<(), String> {
        match self {
            JobSource::Parquet(dir) => register_parquet(ctx, dir).await,
            JobSource::NsysParquet(ranks) => register_nsys_parquet(ctx, ranks).await,
            JobSource::Reports(paths) => register_reports(ctx, paths),
        }
    }
}

/// Each table folder of the export at `dir` as a table, partitioned by rank.
async fn register_parquet(ctx: &SessionContext, dir: &Path) -> Result<(), String> {
    // Absolute: on a cluster the executors read the folder, not this process.
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for table in TABLES {
        let folder = dir.join(table);
        if !folder.is_dir() {
            return Err(format!(
                "{}: not a Parquet job folder (no {table}/ in it; `sightline export --format parquet` makes one)",
                dir.display()
            ));
        }
        let options = ParquetReadOptions::default()
            .table_partition_cols(vec![("rank".to_string(), DataType::UInt32)]);
        let url = format!("{}/", folder.display());
        ctx.register_parquet(table, &url, options)
            .await
            .map_err(|e| format!("{}: {e}", folder.display()))?;
    }
    let ranks = dir.join("ranks");
    ctx.register_parquet(
        "ranks",
        &format!("{}/", ranks.display()),
        ParquetReadOptions::default(),
    )
    .await
    .map_err(|e| format!("{}: {e}", ranks.display()))?;
    Ok(())
}

/// The reports' tables in memory: one partition per rank, the rank as the last column (where
/// a Parquet folder's partition column is).
fn register_reports(ctx: &SessionContext, paths: &[PathBuf]) -> Result<(), String> {
    let plan = JobPlan::of(paths)?;
    ctx.register_batch("ranks", ranks_batch(&plan)?)
        .map_err(|e| e.to_string())?;
    let mut partitions: Vec<Vec<Vec<RecordBatch>>> = vec![Vec::new(); TABLES.len()];
    let mut schemas: Vec<Option<SchemaRef>> = vec![None; TABLES.len()];
    for (i, rank) in plan.ranks.iter().enumerate() {
        let trace = plan.load(i)?;
        for (t, table) in rank_tables(&trace, rank.clock).into_iter().enumerate() {
            let schema = with_rank(&table.schema());
            let mut batches = Vec::new();
            table.each_batch(|batch| {
                batches.push(add_rank(&schema, batch, rank.clock.rank)?);
                Ok(())
            })?;
            partitions[t].push(batches);
            schemas[t] = Some(schema);
        }
    }
    for ((name, schema), parts) in TABLES.iter().zip(schemas).zip(partitions) {
        let Some(schema) = schema else {
            continue;
        };
        let table = MemTable::try_new(schema, parts).map_err(|e| e.to_string())?;
        ctx.register_table(*name, Arc::new(table))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn with_rank(schema: &SchemaRef) -> SchemaRef {
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("rank", DataType::UInt32, false));
    Arc::new(Schema::new(fields))
}

fn add_rank(schema: &SchemaRef, batch: RecordBatch, rank: u32) -> Result<RecordBatch, String> {
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    columns.push(Arc::new(UInt32Array::from(vec![rank; batch.num_rows()])));
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
}

/// Every rank of the job whose tables `ctx` holds, in order (its `ranks` table).
pub async fn job_ranks(ctx: &SessionContext) -> Result<Vec<u32>, String> {
    let mut ranks = Vec::new();
    for batch in collect(ctx, "SELECT rank FROM ranks ORDER BY rank").await? {
        let rank = column(&batch, "rank", &DataType::UInt32)?;
        ranks.extend(rank.as_primitive::<UInt32Type>().values().iter().copied());
    }
    Ok(ranks)
}
