//! Sightline's engine: a job of many ranks exported to Parquet and analysed on Apache
//! DataFusion (embedded) or Apache Ballista (a cluster). A crate of its own so that the
//! viewer's build and start-up do not carry DataFusion (docs/parquet.md, BENCHMARKS.md).

#![deny(clippy::unwrap_used, clippy::too_many_lines)]

pub mod cli;
pub mod cluster;
pub mod export;
pub mod query;
