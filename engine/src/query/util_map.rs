//! `gpu_time_util_map`: the ranks × time map of GPU use (as `nsys recipe
//! cuda_gpu_time_util_map` draws it). The job's span, from its first GPU operation's start to
//! its last one's end on the job clock, is cut into `chunks` chunks of `ceil(span / chunks)` ns
//! (the last one shorter), the same on every rank. A chunk's use on a rank is the time that
//! rank's kernels, copies and sets overlap it over its length, as nsys's `gpu_time_util` rule
//! counts it (overlapping operations add up, so it can pass 100 %). One row per rank and chunk,
//! empty chunks at 0, so the table pivots into the map in any tool.

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt32Type};
use datafusion::prelude::SessionContext;
use sightline::analysis::{Cell, Table};

use super::batches::{collect, column};
use super::sources::job_ranks;

/// The chunks of the map when none are asked for (nsys's `gpu_time_util` default).
pub const DEFAULT_CHUNKS: u32 = 30;

const OPS: &str = "SELECT rank, start_job_ns AS s, end_job_ns AS e FROM kernels \
                   UNION ALL SELECT rank, start_job_ns, end_job_ns FROM memcpys \
                   UNION ALL SELECT rank, start_job_ns, end_job_ns FROM memsets";

/// The map over `chunks` chunks.
pub async fn gpu_time_util_map(ctx: &SessionContext, chunks: u32) -> Result<Table, String> {
    let mut table = Table {
        columns: ["Rank", "Chunk", "Start (ns)", "Duration (ns)", "In-Use (%)"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
    };
    let Some((lo, hi)) = span(ctx).await? else {
        return Ok(table);
    };
    let n = i64::from(chunks.max(1));
    let chunk = ((hi - lo) + n - 1) / n;
    if chunk <= 0 {
        return Ok(table);
    }
    // An operation's time in its first chunk and in its last; the chunks wholly inside one
    // (an operation longer than a chunk: rare) are added from the few such operations.
    let chunked = format!(
        "SELECT rank, s, e, (s - {lo}) / {chunk} AS c1, \
                (GREATEST(e, s + 1) - 1 - {lo}) / {chunk} AS c2 FROM ({OPS})"
    );
    let sql = format!(
        "SELECT rank, c, SUM(t) AS busy FROM ( \
           SELECT rank, c1 AS c, LEAST(e, {lo} + (c1 + 1) * {chunk}) - s AS t FROM ({chunked}) \
           UNION ALL \
           SELECT rank, c2, e - ({lo} + c2 * {chunk}) FROM ({chunked}) WHERE c2 > c1) \
         GROUP BY rank, c"
    );
    let mut busy = std::collections::HashMap::new();
    for batch in collect(ctx, &sql).await? {
        let rank = column(&batch, "rank", &DataType::UInt32)?;
        let c = column(&batch, "c", &DataType::Int64)?;
        let b = column(&batch, "busy", &DataType::Int64)?;
        for i in 0..batch.num_rows() {
            busy.insert(
                (
                    rank.as_primitive::<UInt32Type>().value(i),
                    c.as_primitive::<Int64Type>().value(i),
                ),
                b.as_primitive::<Int64Type>().value(i),
            );
        }
    }
    let long = format!("SELECT rank, c1, c2 FROM ({chunked}) WHERE c2 > c1 + 1");
    for batch in collect(ctx, &long).await? {
        let rank = column(&batch, "rank", &DataType::UInt32)?;
        let c1 = column(&batch, "c1", &DataType::Int64)?;
        let c2 = column(&batch, "c2", &DataType::Int64)?;
        for i in 0..batch.num_rows() {
            let r = rank.as_primitive::<UInt32Type>().value(i);
            let (from, to) = (
                c1.as_primitive::<Int64Type>().value(i),
                c2.as_primitive::<Int64Type>().value(i),
            );
            for c in from + 1..to {
                *busy.entry((r, c)).or_insert(0) += chunk;
            }
        }
    }
    for rank in job_ranks(ctx).await? {
        for c in 0..n {
            let start = lo + c * chunk;
            let length = (start + chunk).min(hi) - start;
            if length <= 0 {
                continue;
            }
            let used = busy.get(&(rank, c)).copied().unwrap_or(0);
            table.rows.push(vec![
                Cell::Int(i64::from(rank)),
                Cell::Int(c),
                Cell::Int(start),
                Cell::Int(length),
                Cell::Round1(used as f64 * 100.0 / length as f64),
            ]);
        }
    }
    Ok(table)
}

/// The job's GPU span on the job clock; None without GPU operations.
async fn span(ctx: &SessionContext) -> Result<Option<(i64, i64)>, String> {
    let sql = format!("SELECT MIN(s) AS lo, MAX(e) AS hi FROM ({OPS})");
    let batches = collect(ctx, &sql).await?;
    let Some(batch) = batches.first().filter(|b| b.num_rows() > 0) else {
        return Ok(None);
    };
    let lo = column(batch, "lo", &DataType::Int64)?;
    let hi = column(batch, "hi", &DataType::Int64)?;
    let (lo, hi) = (
        lo.as_primitive::<Int64Type>(),
        hi.as_primitive::<Int64Type>(),
    );
    if lo.is_null(0) || hi.is_null(0) {
        return Ok(None);
    }
    Ok(Some((lo.value(0), hi.value(0))))
}
