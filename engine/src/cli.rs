//! The engine's commands: `export`, `stats` (of a job, on the engine) and `cluster`. The
//! `sightline` binary hands them here (they run as `sightline-engine`, beside it).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};

use crate::cluster;
use crate::export::export_parquet;
use datafusion::prelude::SessionContext;
use sightline::analysis::ranks::{
    JobSummaries, StragglerThresholds, cross_rank_text, straggler_json,
};

use crate::query::cluster_jobs::ClusterJobs;
use crate::query::context::{Engine, cluster_error};
use crate::query::job_findings::analyze_job;
use crate::query::reports::EngineReport;
use crate::query::sources::JobSource;
use crate::query::summaries::job_summaries;

#[derive(Parser, Debug)]
#[command(
    name = "sightline",
    version,
    about = "A job of many ranks on Apache DataFusion (embedded) or Apache Ballista (a cluster)"
)]
pub struct EngineCli {
    #[command(subcommand)]
    pub command: EngineCommand,
}

#[derive(Subcommand, Debug)]
pub enum EngineCommand {
    /// Export a job's reports as a folder of Parquet tables, partitioned by rank (docs/parquet.md)
    Export(ExportArgs),
    /// The summary reports of a job, per rank, computed by DataFusion (or on a cluster)
    Stats(StatsArgs),
    /// The cross-rank findings of a job (the straggler), computed by DataFusion (or on a cluster)
    Analyze(AnalyzeArgs),
    /// What the window opens a job on without any rank's events: per rank its report, clock
    /// offset and span, the iterations and the straggler; one JSON document on standard output
    Summaries(SummariesArgs),
    /// Run a Ballista scheduler or executor
    #[command(subcommand)]
    Cluster(ClusterCommand),
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ExportFormat {
    Parquet,
}

#[derive(Parser, Debug)]
pub struct ExportArgs {
    /// The reports (.sqlite), or folders of them.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "parquet")]
    format: ExportFormat,
    /// The new folder to write (it must not exist).
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// Ranks exported at once (default: every core).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    Table,
    Csv,
}

/// Where a job is read and where its plans run (`stats`, `analyze`).
#[derive(clap::Args, Debug)]
pub struct EngineJobArgs {
    /// A Parquet job folder (from `export`), or the reports (.sqlite) or folders of them.
    #[arg(value_name = "DIR|FILE", required = true)]
    files: Vec<PathBuf>,
    /// What the engine's operators may hold (e.g. 2G, 512M); past it they spill to disk.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    memory_limit: Option<usize>,
    /// Run on the Ballista cluster whose scheduler is at df://HOST:PORT (a Parquet job folder
    /// every executor sees).
    #[arg(long, value_name = "df://HOST:PORT")]
    cluster: Option<String>,
    /// Accepted for `sightline stats --engine` (which is how this command is reached).
    #[arg(long, hide = true)]
    engine: bool,
}

#[derive(Parser, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    job: EngineJobArgs,
    /// Reports, comma separated: cuda_api_sum, cuda_gpu_kern_sum, nvtx_sum, osrt_sum, nccl_sum,
    /// rank_spread, gpu_time_util_map (default: all).
    #[arg(long = "report", value_delimiter = ',', value_parser = parse_report)]
    reports: Vec<EngineReport>,
    #[arg(long, value_enum, default_value = "table")]
    format: TableFormat,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingsFormat {
    Table,
    Json,
}

#[derive(Parser, Debug)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    job: EngineJobArgs,
    /// `table`: as `sightline analyze` prints a job's cross-rank findings; `json`: one line
    /// per finding.
    #[arg(long, value_enum, default_value = "table")]
    format: FindingsFormat,
}

#[derive(Parser, Debug)]
pub struct SummariesArgs {
    #[command(flatten)]
    job: EngineJobArgs,
    /// Lines `progress F` (F from 0 to 1) on standard error as the work goes (the window
    /// shows them).
    #[arg(long)]
    progress: bool,
    /// First a document from the NVTX ranges alone (`"complete": false`: no phase's GPU work;
    /// a second or so), then the whole one: one JSON document a line.
    #[arg(long)]
    early: bool,
}

#[derive(Subcommand, Debug)]
pub enum ClusterCommand {
    /// Run a Ballista scheduler
    Scheduler {
        #[arg(long, value_name = "IP:PORT", default_value = cluster::DEFAULT_SCHEDULER)]
        bind: String,
    },
    /// Run a Ballista executor (it uses the --bind port and the next one)
    Executor {
        #[arg(long, value_name = "HOST:PORT")]
        scheduler: String,
        #[arg(long, value_name = "IP:PORT", default_value = cluster::DEFAULT_EXECUTOR)]
        bind: String,
        /// Where its shuffle files go (default: a temporary folder).
        #[arg(long, value_name = "DIR")]
        work_dir: Option<String>,
    },
}

fn parse_report(name: &str) -> Result<EngineReport, String> {
    EngineReport::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = EngineReport::ALL.iter().map(|r| r.name()).collect();
        format!(
            "no report '{name}' on the engine (it has {})",
            names.join(", ")
        )
    })
}

/// `2G`, `512M`, `64K` or bytes.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (digits, unit) = match t
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit() && *c != '.')
    {
        Some((at, _)) => (&t[..at], t[at..].trim().to_ascii_uppercase()),
        None => (t, String::new()),
    };
    let scale: f64 = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        "T" => 1024.0_f64.powi(4),
        _ => {
            return Err(format!(
                "{text}: a size is a number with K, M, G or T (e.g. 2G)"
            ));
        }
    };
    let value: f64 = digits
        .parse()
        .map_err(|_| format!("{text}: a size is a number with K, M, G or T (e.g. 2G)"))?;
    if value <= 0.0 {
        return Err(format!("{text}: the limit must be more than 0"));
    }
    Ok((value * scale) as usize)
}

impl EngineCommand {
    pub fn run(self) -> ExitCode {
        let result = match self {
            EngineCommand::Export(args) => export(args),
            EngineCommand::Stats(args) => runtime().and_then(|rt| rt.block_on(stats(args))),
            EngineCommand::Analyze(args) => runtime().and_then(|rt| rt.block_on(analyze(args))),
            EngineCommand::Summaries(args) => runtime().and_then(|rt| rt.block_on(summaries(args))),
            EngineCommand::Cluster(ClusterCommand::Scheduler { bind }) => {
                runtime().and_then(|rt| rt.block_on(cluster::scheduler(&bind)))
            }
            EngineCommand::Cluster(ClusterCommand::Executor {
                scheduler,
                bind,
                work_dir,
            }) => {
                runtime().and_then(|rt| rt.block_on(cluster::executor(&scheduler, &bind, work_dir)))
            }
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("sightline: {message}");
                ExitCode::FAILURE
            }
        }
    }
}

/// `work` on the session `ctx`, or a line saying it was cancelled when Ctrl-C comes first:
/// dropping the query's future stops its plan (embedded, every operator; on a cluster, the
/// client), and the jobs it submitted to a cluster are cancelled there ([`ClusterJobs`]: Ballista
/// 55 would run them to their end). On a cluster, a line every while says that the answer is
/// still awaited: a scheduler without executors queues the job until one registers, which
/// would otherwise look like a hang.
async fn until_interrupted(
    ctx: &SessionContext,
    cluster: Option<String>,
    work: impl std::future::Future<Output = Result<(), String>>,
) -> Result<(), String> {
    let every = std::env::var("SIGHTLINE_CLUSTER_NOTICE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let waiting = async {
        let Some(url) = cluster else {
            return std::future::pending().await;
        };
        let started = Instant::now();
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(every)).await;
            eprintln!(
                "sightline: still waiting for the cluster at {url} after {} s (a long query; \
                 or a job waiting until an executor has registered: `sightline cluster \
                 executor --scheduler HOST:PORT`; or for a lost executor to be noticed, \
                 {} s, its tasks then run on the others); Ctrl-C stops",
                started.elapsed().as_secs(),
                crate::cluster::EXECUTOR_TIMEOUT_SECONDS
            );
        }
    };
    tokio::select! {
        done = work => done,
        _ = tokio::signal::ctrl_c() => Err(cancelled(ctx).await),
        () = waiting => Ok(()),
    }
}

/// Cancels the jobs submitted to a cluster; what to say of it.
async fn cancelled(ctx: &SessionContext) -> String {
    let Some(jobs) = ctx.state().config().get_extension::<ClusterJobs>() else {
        return "cancelled (Ctrl-C)".to_string();
    };
    match jobs.cancel_all().await {
        Ok(ids) if ids.is_empty() => "cancelled (Ctrl-C)".to_string(),
        Ok(ids) => format!(
            "cancelled (Ctrl-C); cancelled on the cluster: job {}",
            ids.join(", job ")
        ),
        Err(e) => format!("cancelled (Ctrl-C); the cluster's job could not be cancelled: {e}"),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the engine's threads: {e}"))
}

fn export(args: ExportArgs) -> Result<(), String> {
    let ExportFormat::Parquet = args.format;
    let workers = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let started = Instant::now();
    let done = export_parquet(&args.files, &args.output, workers)?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "sightline: exported {} events of {} ranks to {} in {seconds:.2} s ({:.0} events/s)",
        done.events,
        done.ranks,
        args.output.display(),
        done.events as f64 / seconds.max(1e-9)
    );
    Ok(())
}

/// A session holding the job's tables, and how to word a cluster's errors.
async fn job_session(
    args: &EngineJobArgs,
) -> Result<(SessionContext, impl Fn(String) -> String), String> {
    let engine = Engine {
        memory_limit: args.memory_limit,
        cluster: args.cluster.clone(),
    };
    let source = JobSource::of(&args.files);
    if engine.cluster.is_some() && !matches!(source, JobSource::Parquet(_)) {
        return Err("--cluster reads a Parquet job folder that every executor sees (make one with `sightline export --format parquet`)".into());
    }
    let ctx = engine.session().await?;
    let on_cluster = move |e: String| match &engine.cluster {
        Some(url) => cluster_error(url, &e),
        None => e,
    };
    source.register(&ctx).await.map_err(&on_cluster)?;
    Ok((ctx, on_cluster))
}

/// Writes `text` to standard output; a closed pipe ends the output quietly.
fn print(out: &mut impl Write, text: &str) -> Result<(), String> {
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write the output: {e}")),
        Ok(()) => Ok(()),
    }
}

async fn analyze(args: AnalyzeArgs) -> Result<(), String> {
    let (ctx, on_cluster) = job_session(&args.job).await?;
    let work = print_findings(&ctx, &args, on_cluster);
    until_interrupted(&ctx, args.job.cluster.clone(), work).await
}

async fn print_findings(
    ctx: &SessionContext,
    args: &AnalyzeArgs,
    on_cluster: impl Fn(String) -> String,
) -> Result<(), String> {
    let found = analyze_job(ctx, &StragglerThresholds::default())
        .await
        .map_err(on_cluster)?;
    let text = match (args.format, &found.straggler) {
        (FindingsFormat::Json, Ok(s)) => straggler_json(s, found.difference.as_ref()) + "\n",
        (FindingsFormat::Json, Err(_)) => String::new(),
        (FindingsFormat::Table, straggler) => {
            "cross-rank:\n".to_string() + &cross_rank_text(straggler, found.difference.as_ref())
        }
    };
    let mut out = std::io::stdout().lock();
    print(&mut out, &text)?;
    out.flush()
        .map_err(|e| format!("cannot write the output: {e}"))
}

/// How a line of progress starts (`summaries --progress`): the window reads the same prefix.
pub const PROGRESS_PREFIX: &str = sightline::engine_process::PROGRESS_PREFIX;

async fn summaries(args: SummariesArgs) -> Result<(), String> {
    let (ctx, on_cluster) = job_session(&args.job).await?;
    let work = async {
        let said = std::sync::Mutex::new(-1.0_f32);
        let on_progress = |done: f32| {
            let Ok(mut last) = said.lock() else { return };
            // A line per percent at most.
            if args.progress && done - *last >= 0.01 {
                *last = done;
                eprintln!("{PROGRESS_PREFIX}{done:.3}");
            }
        };
        let write = |summaries: &JobSummaries| {
            let mut out = std::io::stdout().lock();
            print(&mut out, &(summaries.to_json()? + "\n"))?;
            out.flush()
                .map_err(|e| format!("cannot write the output: {e}"))
        };
        let on_early = |early: &JobSummaries| if args.early { write(early) } else { Ok(()) };
        let summaries = job_summaries(&ctx, &on_progress, &on_early)
            .await
            .map_err(on_cluster)?;
        write(&summaries)
    };
    until_interrupted(&ctx, args.job.cluster.clone(), work).await
}

async fn stats(args: StatsArgs) -> Result<(), String> {
    let (ctx, on_cluster) = job_session(&args.job).await?;
    let work = print_reports(&ctx, &args, on_cluster);
    until_interrupted(&ctx, args.job.cluster.clone(), work).await
}

async fn print_reports(
    ctx: &SessionContext,
    args: &StatsArgs,
    on_cluster: impl Fn(String) -> String,
) -> Result<(), String> {
    let reports = if args.reports.is_empty() {
        EngineReport::ALL.to_vec()
    } else {
        args.reports.clone()
    };
    let mut out = std::io::stdout().lock();
    for (i, report) in reports.into_iter().enumerate() {
        let table = report.compute(ctx).await.map_err(&on_cluster)?;
        let text = match args.format {
            TableFormat::Csv => {
                // As `sightline stats`: a blank line between tables, an empty table nothing.
                let csv = table.to_csv();
                let separator = if i > 0 && !csv.is_empty() { "\n" } else { "" };
                format!("{separator}{csv}")
            }
            TableFormat::Table => {
                let body = if table.rows.is_empty() {
                    "(no data)\n".to_string()
                } else {
                    table.to_text()
                };
                format!("\n ** {} ({}):\n\n{body}", report.title(), report.name())
            }
        };
        print(&mut out, &text)?;
    }
    out.flush()
        .map_err(|e| format!("cannot write the output: {e}"))
}
