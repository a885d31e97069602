//! The summary reports across ranks (`stats` of a job): nsys's `cuda_gpu_kern_sum`,
//! `cuda_api_sum`, `nvtx_sum` and `osrt_sum` with a first column `Rank`, each rank's rows
//! those of `sightline stats` on that rank alone; and `nccl_sum`, the NCCL kernels of each
//! rank as `nsys recipe nccl_sum` sums them. The grouping, sums, medians and deviations are
//! the plan's (one SQL query each); the percentages are made from its exact integer sums.

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, UInt32Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;
use sightline::analysis::{Cell, Table};

use super::batches::{collect, column, rank_groups, ranks_between};
use sightline::model::nsys::strip_version_suffix;

/// A report the engine computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineReport {
    CudaGpuKernSum,
    CudaApiSum,
    NvtxSum,
    OsrtSum,
    NcclSum,
    RankSpread,
    GpuTimeUtilMap,
}

impl EngineReport {
    pub const ALL: [EngineReport; 7] = [
        EngineReport::CudaApiSum,
        EngineReport::CudaGpuKernSum,
        EngineReport::NvtxSum,
        EngineReport::OsrtSum,
        EngineReport::NcclSum,
        EngineReport::RankSpread,
        EngineReport::GpuTimeUtilMap,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EngineReport::CudaGpuKernSum => "cuda_gpu_kern_sum",
            EngineReport::CudaApiSum => "cuda_api_sum",
            EngineReport::NvtxSum => "nvtx_sum",
            EngineReport::OsrtSum => "osrt_sum",
            EngineReport::NcclSum => "nccl_sum",
            EngineReport::RankSpread => "rank_spread",
            EngineReport::GpuTimeUtilMap => "gpu_time_util_map",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            EngineReport::CudaGpuKernSum => "CUDA GPU Kernel Summary",
            EngineReport::CudaApiSum => "CUDA API Summary",
            EngineReport::NvtxSum => "NVTX Range Summary",
            EngineReport::OsrtSum => "OS Runtime Summary",
            EngineReport::NcclSum => "NCCL Kernel Summary per Rank",
            EngineReport::RankSpread => "GPU Time per Rank and its Spread",
            EngineReport::GpuTimeUtilMap => "GPU Use per Rank and Time Chunk",
        }
    }

    pub fn from_name(name: &str) -> Option<EngineReport> {
        EngineReport::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The report's table, computed in `ctx` (whose job tables are registered).
    pub async fn compute(self, ctx: &SessionContext) -> Result<Table, String> {
        match self {
            EngineReport::CudaGpuKernSum => {
                let summary = Summary::new("kernels", "name", "Instances", "Name");
                summary.table(ctx, |name| name.to_string()).await
            }
            EngineReport::NcclSum => {
                let mut summary = Summary::new("kernels", "name", "Instances", "Name");
                summary.filter = Some("lower(name) LIKE '%nccl%'");
                summary.table(ctx, |name| name.to_string()).await
            }
            EngineReport::CudaApiSum => {
                let summary = Summary::new("cuda_api", "name", "Num Calls", "Name");
                summary
                    .table(ctx, |name| strip_version_suffix(name).to_string())
                    .await
            }
            EngineReport::OsrtSum => {
                let mut summary = Summary::new("os_runtime", "name", "Num Calls", "Name");
                summary.filter = Some("is_call");
                summary.table(ctx, |name| name.to_string()).await
            }
            EngineReport::NvtxSum => nvtx_sum(ctx).await,
            EngineReport::RankSpread => super::spread::rank_spread(ctx).await,
            EngineReport::GpuTimeUtilMap => {
                super::util_map::gpu_time_util_map(ctx, super::util_map::DEFAULT_CHUNKS).await
            }
        }
    }
}

/// The eight duration columns of nsys's summaries.
const DURATION_COLUMNS: [&str; 8] = [
    "Time (%)",
    "Total Time (ns)",
    "",
    "Avg (ns)",
    "Med (ns)",
    "Min (ns)",
    "Max (ns)",
    "StdDev (ns)",
];

/// A summary of durations per rank and key: the query, and how its rows become cells.
struct Summary {
    table: &'static str,
    /// The SQL expression grouped by (a text).
    key: &'static str,
    count_column: &'static str,
    key_column: &'static str,
    filter: Option<&'static str>,
}

/// One group of a summary, as the plan returns it.
struct Group {
    rank: u32,
    key: String,
    total: i64,
    count: i64,
    min: i64,
    max: i64,
    median: f64,
    stddev: f64,
}

impl Summary {
    fn new(
        table: &'static str,
        key: &'static str,
        count_column: &'static str,
        key_column: &'static str,
    ) -> Summary {
        Summary {
            table,
            key,
            count_column,
            key_column,
            filter: None,
        }
    }

    /// The query over the ranks `ranks` selects (an SQL condition).
    fn sql(&self, ranks: &str) -> String {
        let filter = self.filter.map_or(String::new(), |f| format!("AND {f}"));
        // Ties on Total: fewer instances first, then the key in byte order (nsys's order for
        // kernels; for API and OS calls nsys breaks ties by string id, which no export keeps).
        format!(
            "SELECT rank, {key} AS key, SUM(duration_ns) AS total, COUNT(*) AS n, \
             MIN(duration_ns) AS mn, MAX(duration_ns) AS mx, \
             median(CAST(duration_ns AS DOUBLE)) AS med, \
             stddev(CAST(duration_ns AS DOUBLE)) AS sd \
             FROM {table} WHERE {ranks} {filter} GROUP BY rank, {key} \
             ORDER BY rank, total DESC, n ASC, key ASC",
            key = self.key,
            table = self.table,
        )
    }

    async fn table(
        &self,
        ctx: &SessionContext,
        display: impl Fn(&str) -> String,
    ) -> Result<Table, String> {
        let batches = collect_by_ranks(ctx, |ranks| self.sql(ranks)).await?;
        let groups = groups(&batches)?;
        let mut columns = vec!["Rank".to_string()];
        columns.extend(DURATION_COLUMNS.iter().map(|c| {
            if c.is_empty() {
                self.count_column.to_string()
            } else {
                c.to_string()
            }
        }));
        columns.push(self.key_column.to_string());
        Ok(Table {
            columns,
            rows: summary_rows(&groups, |g| vec![Cell::Text(display(&g.key))]),
        })
    }
}

/// The batches of `sql` (given a condition on `rank`) over every rank of the job, asked
/// [`super::batches::RANKS_PER_QUERY`] ranks at a time, in rank order.
async fn collect_by_ranks(
    ctx: &SessionContext,
    sql: impl Fn(&str) -> String,
) -> Result<Vec<RecordBatch>, String> {
    let ranks = super::sources::job_ranks(ctx).await?;
    let mut batches = Vec::new();
    for group in rank_groups(&ranks) {
        batches.extend(collect(ctx, &sql(&ranks_between(group))).await?);
    }
    Ok(batches)
}

/// Rows of groups ordered by rank, Time (%) of each against its rank's total.
fn summary_rows(groups: &[Group], key_cells: impl Fn(&Group) -> Vec<Cell>) -> Vec<Vec<Cell>> {
    let mut rows = Vec::with_capacity(groups.len());
    let mut at = 0;
    while at < groups.len() {
        let rank = groups[at].rank;
        let end = at + groups[at..].iter().take_while(|g| g.rank == rank).count();
        let grand: i128 = groups[at..end].iter().map(|g| i128::from(g.total)).sum();
        for g in &groups[at..end] {
            let mut row = vec![
                Cell::Int(i64::from(g.rank)),
                if grand == 0 {
                    Cell::Empty
                } else {
                    Cell::Round1(g.total as f64 * 100.0 / grand as f64)
                },
                Cell::Int(g.total),
                Cell::Int(g.count),
                Cell::Round1(g.total as f64 / g.count as f64),
                Cell::Round1(g.median),
                Cell::Int(g.min),
                Cell::Int(g.max),
                Cell::Round1(g.stddev),
            ];
            row.extend(key_cells(g));
            rows.push(row);
        }
        at = end;
    }
    rows
}

/// nsys's `nvtx_sum`: push/pop and start/end ranges by `DOMAIN:NAME` and style.
async fn nvtx_sum(ctx: &SessionContext) -> Result<Table, String> {
    let sql = |ranks: &str| {
        format!(
            "SELECT rank, concat(domain, ':', name, '\u{1}', style) AS key, \
             SUM(duration_ns) AS total, COUNT(*) AS n, \
             MIN(duration_ns) AS mn, MAX(duration_ns) AS mx, \
             median(CAST(duration_ns AS DOUBLE)) AS med, \
             stddev(CAST(duration_ns AS DOUBLE)) AS sd \
             FROM nvtx WHERE {ranks} AND style IN ('PushPop', 'StartEnd') \
             GROUP BY rank, domain, name, style \
             ORDER BY rank, total DESC, concat(domain, ':', name) ASC, style ASC"
        )
    };
    let batches = collect_by_ranks(ctx, sql).await?;
    let groups = groups(&batches)?;
    let mut columns = vec!["Rank".to_string()];
    columns.extend(
        DURATION_COLUMNS
            .iter()
            .map(|c| if c.is_empty() { "Instances" } else { c }.to_string()),
    );
    columns.extend(["Style".to_string(), "Range".to_string()]);
    Ok(Table {
        columns,
        rows: summary_rows(&groups, |g| {
            let (range, style) = g.key.split_once('\u{1}').unwrap_or((&g.key, ""));
            vec![Cell::Text(style.to_string()), Cell::Text(range.to_string())]
        }),
    })
}

fn groups(batches: &[RecordBatch]) -> Result<Vec<Group>, String> {
    let mut groups = Vec::new();
    for batch in batches {
        let rank = column(batch, "rank", &DataType::UInt32)?;
        let key = column(batch, "key", &DataType::Utf8)?;
        let ints: Vec<ArrayRef> = ["total", "n", "mn", "mx"]
            .iter()
            .map(|c| column(batch, c, &DataType::Int64))
            .collect::<Result<_, _>>()?;
        let floats: Vec<ArrayRef> = ["med", "sd"]
            .iter()
            .map(|c| column(batch, c, &DataType::Float64))
            .collect::<Result<_, _>>()?;
        let rank = rank.as_primitive::<UInt32Type>();
        let key = key.as_string::<i32>();
        let int = |c: usize, i: usize| ints[c].as_primitive::<Int64Type>().value(i);
        let float = |c: usize, i: usize| {
            let a = floats[c].as_primitive::<Float64Type>();
            // One value has no sample deviation: nsys prints 0.
            if a.is_null(i) { 0.0 } else { a.value(i) }
        };
        for i in 0..batch.num_rows() {
            groups.push(Group {
                rank: rank.value(i),
                key: key.value(i).to_string(),
                total: int(0, i),
                count: int(1, i),
                min: int(2, i),
                max: int(3, i),
                median: float(0, i),
                stddev: float(1, i),
            });
        }
    }
    Ok(groups)
}
