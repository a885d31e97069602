//! A job given as nsys's own Parquet exports (`nsys export --type parquetdir`: a folder per
//! rank, a file per nsys table, text as `StringIds` ids, threads as `globalTid`). Each rank's
//! files are registered as they are, and the job's tables are views over them in the columns
//! of Sightline's export (docs/parquet.md): names resolved, pids and tids split out of the
//! global ids, times also on the job clock, the rank as a column. Every plan then runs on them
//! unchanged. NVTX depth is the number of same-thread, same-domain ranges that enclose a range
//! (the nesting nsys's push/pop ranges have; the window packs start/end ranges into lanes
//! instead).

use std::path::PathBuf;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use sightline::model::ranks::rank_numbers;

use super::batches::{collect, column};

/// A column of a view: its name, its type where no rank has the table, and its expression
/// over the rank's table `t` (`{s}`: the rank's string table; `{off}`: its offset on the job
/// clock).
type ViewColumn = (&'static str, &'static str, &'static str);

const PID: &str = "arrow_cast((t.globalPid / 16777216) % 16777216, 'UInt32')";
const THREAD_PID: &str = "arrow_cast((t.globalTid / 16777216) % 16777216, 'UInt32')";
const THREAD_TID: &str = "arrow_cast(t.globalTid % 16777216, 'UInt32')";

fn span_columns(name: &'static str) -> Vec<ViewColumn> {
    vec![
        ("start_ns", "BIGINT", "t.start"),
        ("end_ns", "BIGINT", "t.\"end\""),
        ("duration_ns", "BIGINT", "t.\"end\" - t.start"),
        ("start_job_ns", "BIGINT", "t.start + {off}"),
        ("end_job_ns", "BIGINT", "t.\"end\" + {off}"),
        ("name", "VARCHAR", name),
    ]
}

fn gpu_columns(name: &'static str) -> Vec<ViewColumn> {
    let mut columns = span_columns(name);
    columns.extend([
        (
            "device_id",
            "INT UNSIGNED",
            "arrow_cast(t.deviceId, 'UInt32')",
        ),
        (
            "context_id",
            "INT UNSIGNED",
            "arrow_cast(t.contextId, 'UInt32')",
        ),
        (
            "stream_id",
            "INT UNSIGNED",
            "arrow_cast(t.streamId, 'UInt32')",
        ),
        ("pid", "INT UNSIGNED", PID),
        (
            "correlation_id",
            "INT UNSIGNED",
            "arrow_cast(t.correlationId, 'UInt32')",
        ),
    ]);
    columns
}

fn thread_columns(name: &'static str) -> Vec<ViewColumn> {
    let mut columns = span_columns(name);
    columns.extend([
        ("pid", "INT UNSIGNED", THREAD_PID),
        ("tid", "INT UNSIGNED", THREAD_TID),
    ]);
    columns
}

/// A join on the rank's string table `{s}` for the id column `id`, as `s`.
fn strings_on(id: &str) -> String {
    format!("LEFT JOIN {{s}} s ON CAST(s.id AS BIGINT) = CAST({id} AS BIGINT)")
}

/// One view: its name, the nsys tables it reads (each rank's that it has, as `t`), its
/// columns, and the joins that resolve them.
struct View {
    name: &'static str,
    sources: &'static [&'static str],
    columns: Vec<(&'static str, &'static str, String)>,
    joins: String,
}

fn views() -> Vec<View> {
    let owned = |c: Vec<ViewColumn>| -> Vec<(&'static str, &'static str, String)> {
        c.into_iter()
            .map(|(n, t, e)| (n, t, e.to_string()))
            .collect()
    };
    let kernels = owned(gpu_columns("s.value"));
    let mut memcpys = owned(gpu_columns("concat('[CUDA memcpy ', e.label, ']')"));
    memcpys.push(("bytes", "BIGINT UNSIGNED", "t.bytes".into()));
    let mut memsets = owned(gpu_columns("'[CUDA memset]'"));
    memsets.push(("bytes", "BIGINT UNSIGNED", "t.bytes".into()));
    let mut syncs = owned(gpu_columns("'[CUDA sync]'"));
    syncs.push((
        "sync_type",
        "INT UNSIGNED",
        "arrow_cast(t.syncType, 'UInt32')".into(),
    ));
    let mut cuda_api = owned(thread_columns("s.value"));
    cuda_api.push((
        "correlation_id",
        "INT UNSIGNED",
        "arrow_cast(t.correlationId, 'UInt32')".into(),
    ));
    let mut os_runtime = owned(thread_columns("s.value"));
    os_runtime.push(("is_call", "BOOLEAN", "t.eventClass = 27".into()));
    vec![
        View {
            name: "kernels",
            sources: &["CUPTI_ACTIVITY_KIND_KERNEL"],
            columns: kernels,
            joins: strings_on("t.demangledName"),
        },
        View {
            name: "memcpys",
            sources: &["CUPTI_ACTIVITY_KIND_MEMCPY"],
            columns: memcpys,
            joins: "LEFT JOIN {enum} e ON CAST(e.id AS BIGINT) = CAST(t.copyKind AS BIGINT)".into(),
        },
        View {
            name: "memsets",
            sources: &["CUPTI_ACTIVITY_KIND_MEMSET"],
            columns: memsets,
            joins: String::new(),
        },
        View {
            name: "syncs",
            sources: &["CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"],
            columns: syncs,
            joins: String::new(),
        },
        View {
            name: "cuda_api",
            sources: &["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"],
            columns: cuda_api,
            joins: strings_on("t.nameId"),
        },
        View {
            name: "os_runtime",
            sources: &["OSRT_API"],
            columns: os_runtime,
            joins: strings_on("t.nameId"),
        },
    ]
}

/// The name rank `i`'s nsys table `table` is registered under.
fn rank_table(i: usize, table: &str) -> String {
    format!("r{i}_{}", table.to_lowercase())
}

/// Registers the job of nsys Parquet exports `ranks` (folders) in `ctx`.
pub async fn register_nsys_parquet(ctx: &SessionContext, ranks: &[PathBuf]) -> Result<(), String> {
    // nsys's tables and columns are camelCase (`globalTid`): names kept as written.
    collect(
        ctx,
        "SET datafusion.sql_parser.enable_ident_normalization = false",
    )
    .await?;
    let numbers = rank_numbers(ranks.iter().map(PathBuf::as_path));
    let mut tables: Vec<Vec<String>> = Vec::new();
    let mut starts: Vec<Option<i64>> = Vec::new();
    for (i, dir) in ranks.iter().enumerate() {
        let dir = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut have = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            let Some(table) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".parquet"))
            else {
                continue;
            };
            let name = rank_table(i, table);
            ctx.register_parquet(
                &name,
                &path.display().to_string(),
                ParquetReadOptions::default(),
            )
            .await
            .map_err(|e| format!("{}: {e}", path.display()))?;
            have.push(table.to_string());
        }
        let sql = format!(
            "SELECT CAST(\"utcEpochNs\" AS BIGINT) AS s FROM {}",
            rank_table(i, "TARGET_INFO_SESSION_START_TIME")
        );
        let start = collect(ctx, &sql).await?.first().and_then(|b| {
            let s = column(b, "s", &DataType::Int64).ok()?;
            (b.num_rows() > 0).then(|| s.as_primitive::<Int64Type>().value(0))
        });
        starts.push(start);
        tables.push(have);
    }
    let earliest = (starts.iter().all(Option::is_some))
        .then(|| starts.iter().flatten().copied().min())
        .flatten();
    let offsets: Vec<i64> = (starts.iter())
        .map(|s| match (s, earliest) {
            (Some(s), Some(e)) => s - e,
            _ => 0,
        })
        .collect();
    for view in views() {
        let mut parts = Vec::new();
        for (i, have) in tables.iter().enumerate() {
            let place = |text: &str| {
                text.replace("{s}", &rank_table(i, "StringIds"))
                    .replace("{enum}", &rank_table(i, "ENUM_CUDA_MEMCPY_OPER"))
                    .replace("{off}", &offsets[i].to_string())
            };
            for source in view.sources.iter().filter(|s| have.iter().any(|h| h == *s)) {
                let columns: Vec<String> = (view.columns.iter())
                    .map(|(name, _, expr)| format!("{} AS {name}", place(expr)))
                    .collect();
                parts.push(format!(
                    "SELECT {}, arrow_cast({}, 'UInt32') AS rank FROM {} t {}",
                    columns.join(", "),
                    numbers[i],
                    rank_table(i, source),
                    place(&view.joins)
                ));
            }
        }
        if parts.is_empty() {
            let columns: Vec<String> = (view.columns.iter())
                .map(|(name, ty, _)| format!("CAST(NULL AS {ty}) AS {name}"))
                .collect();
            parts.push(format!(
                "SELECT {}, arrow_cast(0, 'UInt32') AS rank WHERE false",
                columns.join(", ")
            ));
        }
        create_view(ctx, view.name, &parts.join(" UNION ALL ")).await?;
    }
    create_view(ctx, "nvtx", &nvtx_sql(&tables, &numbers, &offsets)).await?;
    let ranks_rows: Vec<String> = (0..ranks.len())
        .map(|i| {
            let start = starts[i].map_or("CAST(NULL AS BIGINT)".to_string(), |s| s.to_string());
            let path = ranks[i].display().to_string().replace('\'', "''");
            format!("({}, '{path}', {start}, {})", numbers[i], offsets[i])
        })
        .collect();
    create_view(
        ctx,
        "ranks",
        &format!(
            "SELECT arrow_cast(column1, 'UInt32') AS rank, column2 AS path, \
             column3 AS session_start_utc_ns, column4 AS offset_ns FROM (VALUES {})",
            ranks_rows.join(", ")
        ),
    )
    .await?;
    for (name, columns) in [
        (
            "gpu_metrics",
            "CAST(NULL AS BIGINT) AS timestamp_ns, CAST(NULL AS BIGINT) AS timestamp_job_ns, \
             CAST(NULL AS INT UNSIGNED) AS device_id, CAST(NULL AS VARCHAR) AS metric, \
             CAST(NULL AS REAL) AS value",
        ),
        (
            "cpu_samples",
            "CAST(NULL AS BIGINT) AS timestamp_ns, CAST(NULL AS BIGINT) AS timestamp_job_ns, \
             CAST(NULL AS INT UNSIGNED) AS pid, CAST(NULL AS INT UNSIGNED) AS tid, \
             CAST(NULL AS VARCHAR) AS source, CAST(NULL AS VARCHAR) AS state, \
             CAST(NULL AS VARCHAR) AS function, CAST(NULL AS VARCHAR) AS stack",
        ),
    ] {
        let sql = format!("SELECT {columns}, arrow_cast(0, 'UInt32') AS rank WHERE false");
        create_view(ctx, name, &sql).await?;
    }
    Ok(())
}

/// The `nvtx` view: push/pop, start/end ranges and marks with their text (inline or by id),
/// domain name, style and depth.
fn nvtx_sql(tables: &[Vec<String>], numbers: &[u32], offsets: &[i64]) -> String {
    let mut parts = Vec::new();
    for (i, have) in tables.iter().enumerate() {
        if !have.iter().any(|h| h == "NVTX_EVENTS") {
            continue;
        }
        let (rank, off) = (numbers[i], offsets[i]);
        let events = rank_table(i, "NVTX_EVENTS");
        let strings = strings_on("t.textId").replace("{s}", &rank_table(i, "StringIds"));
        parts.push(format!(
            "SELECT t.start AS start_ns, COALESCE(t.\"end\", t.start) AS end_ns, \
               COALESCE(t.\"end\", t.start) - t.start AS duration_ns, \
               t.start + {off} AS start_job_ns, COALESCE(t.\"end\", t.start) + {off} AS end_job_ns, \
               COALESCE(t.text, s.value, '') AS name, \
               {THREAD_PID} AS pid, {THREAD_TID} AS tid, COALESCE(d.text, '') AS domain, \
               CASE t.eventType WHEN 59 THEN 'PushPop' WHEN 60 THEN 'StartEnd' ELSE 'Mark' END \
                 AS style, \
               arrow_cast(COUNT(o.start), 'UInt32') AS depth, arrow_cast({rank}, 'UInt32') AS rank \
             FROM {events} t {strings} \
             LEFT JOIN (SELECT domainId, MIN(text) AS text FROM {events} WHERE eventType = 75 \
                        GROUP BY domainId) d ON d.domainId = t.domainId \
             LEFT JOIN {events} o ON o.globalTid = t.globalTid AND o.domainId = t.domainId \
               AND o.eventType IN (59, 60) AND o.start <= t.start \
               AND o.\"end\" >= COALESCE(t.\"end\", t.start) \
               AND (o.start < t.start OR o.\"end\" > COALESCE(t.\"end\", t.start)) \
             WHERE t.eventType IN (34, 59, 60) \
             GROUP BY t.start, t.\"end\", t.text, s.value, t.globalTid, d.text, t.eventType, \
               t.domainId, t.rangeId"
        ));
    }
    if parts.is_empty() {
        return "SELECT CAST(NULL AS BIGINT) AS start_ns, CAST(NULL AS BIGINT) AS end_ns, \
                CAST(NULL AS BIGINT) AS duration_ns, CAST(NULL AS BIGINT) AS start_job_ns, \
                CAST(NULL AS BIGINT) AS end_job_ns, CAST(NULL AS VARCHAR) AS name, \
                CAST(NULL AS INT UNSIGNED) AS pid, CAST(NULL AS INT UNSIGNED) AS tid, \
                CAST(NULL AS VARCHAR) AS domain, CAST(NULL AS VARCHAR) AS style, \
                CAST(NULL AS INT UNSIGNED) AS depth, arrow_cast(0, 'UInt32') AS rank WHERE false"
            .to_string();
    }
    parts.join(" UNION ALL ")
}

async fn create_view(ctx: &SessionContext, name: &str, sql: &str) -> Result<(), String> {
    collect(ctx, &format!("CREATE VIEW {name} AS {sql}"))
        .await
        .map(|_| ())
        .map_err(|e| format!("the nsys Parquet job's {name}: {e}"))
}
