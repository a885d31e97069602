//! The cross-rank reports as DataFusion plans: over a Parquet job folder (the export's
//! layout, docs/parquet.md) or over Arrow tables made from the `.sqlite` reports given; run
//! embedded (every core, within a memory limit, spilling to disk past it) or on a Ballista
//! cluster (`df://HOST:PORT`), the same SQL either way.

pub mod batches;
pub mod cluster_jobs;
pub mod context;
pub mod iterations;
pub mod job_findings;
pub mod nsys_parquet;
pub mod reports;
pub mod sources;
pub mod spread;
pub mod summaries;
pub mod util_map;
