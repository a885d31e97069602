//! Each rank's GPU time, split into NCCL (communication) and other kernels (compute), with
//! how far its compute lies from the median rank's: the per-rank spread a straggler shows in
//! (the slowest rank computes longest; the others wait in NCCL for it).

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt32Type};
use datafusion::prelude::SessionContext;
use sightline::analysis::{Cell, Table};

use super::batches::{collect, column};

struct RankTime {
    rank: u32,
    kernels: i64,
    total: i64,
    nccl: i64,
}

/// The `rank_spread` table: Rank, Kernels, GPU Time, NCCL Time, Compute Time, Compute vs Median.
pub async fn rank_spread(ctx: &SessionContext) -> Result<Table, String> {
    let sql = "SELECT rank, COUNT(*) AS n, SUM(duration_ns) AS total, \
               SUM(CASE WHEN lower(name) LIKE '%nccl%' THEN duration_ns ELSE 0 END) AS nccl \
               FROM kernels GROUP BY rank ORDER BY rank";
    let mut ranks = Vec::new();
    for batch in collect(ctx, sql).await? {
        let rank = column(&batch, "rank", &DataType::UInt32)?;
        let n = column(&batch, "n", &DataType::Int64)?;
        let total = column(&batch, "total", &DataType::Int64)?;
        let nccl = column(&batch, "nccl", &DataType::Int64)?;
        for i in 0..batch.num_rows() {
            ranks.push(RankTime {
                rank: rank.as_primitive::<UInt32Type>().value(i),
                kernels: n.as_primitive::<Int64Type>().value(i),
                total: total.as_primitive::<Int64Type>().value(i),
                nccl: nccl.as_primitive::<Int64Type>().value(i),
            });
        }
    }
    let mut compute: Vec<i64> = ranks.iter().map(|r| r.total - r.nccl).collect();
    compute.sort_unstable();
    let median = match compute.len() {
        0 => 0.0,
        n if n % 2 == 1 => compute[n / 2] as f64,
        n => (compute[n / 2 - 1] as f64 + compute[n / 2] as f64) / 2.0,
    };
    let rows = ranks
        .iter()
        .map(|r| {
            let own = r.total - r.nccl;
            vec![
                Cell::Int(i64::from(r.rank)),
                Cell::Int(r.kernels),
                Cell::Int(r.total),
                Cell::Int(r.nccl),
                Cell::Int(own),
                if median > 0.0 {
                    Cell::Round1((own as f64 - median) * 100.0 / median)
                } else {
                    Cell::Empty
                },
            ]
        })
        .collect();
    Ok(Table {
        columns: [
            "Rank",
            "Kernels",
            "GPU Time (ns)",
            "NCCL Time (ns)",
            "Compute Time (ns)",
            "Compute vs Median (%)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })
}
