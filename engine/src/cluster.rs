//! `sightline cluster scheduler|executor`: Apache Ballista's own scheduler and executor, from
//! its library crates at the versions the lock holds, so that a cluster is any number of
//! machines running this binary over a folder they all see.

use std::net::SocketAddr;
use std::sync::Arc;

use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;

/// The scheduler's default address: Ballista's port, this machine only.
pub const DEFAULT_SCHEDULER: &str = "127.0.0.1:50050";
/// After how long without a heartbeat the scheduler counts an executor lost and runs its tasks
/// on the others (Ballista's default is 180 s).
pub const EXECUTOR_TIMEOUT_SECONDS: u64 = 20;

/// The executor's default address (its Arrow Flight port; its gRPC port is the next one).
pub const DEFAULT_EXECUTOR: &str = "127.0.0.1:50051";

fn socket(text: &str, what: &str) -> Result<SocketAddr, String> {
    text.parse()
        .map_err(|_| format!("{text}: {what} is IP:PORT (e.g. {DEFAULT_SCHEDULER})"))
}

/// Runs a scheduler at `bind` until the process is stopped.
pub async fn scheduler(bind: &str) -> Result<(), String> {
    let address = socket(bind, "--bind")?;
    let config = SchedulerConfig {
        bind_host: address.ip().to_string(),
        bind_port: address.port(),
        external_host: address.ip().to_string(),
        // A lost executor is noticed in seconds, not minutes.
        executor_timeout_seconds: EXECUTOR_TIMEOUT_SECONDS,
        expire_dead_executor_interval_seconds: 5,
        ..SchedulerConfig::default()
    };
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(|e| e.to_string())?;
    eprintln!(
        "sightline: Ballista {} scheduler (DataFusion {}) listening on {address}",
        ballista_core::BALLISTA_VERSION,
        datafusion::DATAFUSION_VERSION
    );
    start_server(cluster, address, Arc::new(config))
        .await
        .map_err(|e| format!("the scheduler at {address}: {e}"))
}

/// Runs an executor at `bind` (Flight; gRPC on the next port) for the scheduler at
/// `scheduler` until the process is stopped.
pub async fn executor(scheduler: &str, bind: &str, work_dir: Option<String>) -> Result<(), String> {
    let address = socket(bind, "--bind")?;
    let (host, port) = scheduler
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h.to_string(), p.parse::<u16>().ok()?)))
        .ok_or_else(|| format!("{scheduler}: --scheduler is HOST:PORT"))?;
    let grpc_port = address
        .port()
        .checked_add(1)
        .ok_or_else(|| format!("{bind}: the executor needs this port and the next"))?;
    let config = ExecutorProcessConfig {
        bind_host: address.ip().to_string(),
        external_host: Some(address.ip().to_string()),
        port: address.port(),
        grpc_port,
        scheduler_host: host,
        scheduler_port: port,
        scheduler_connect_timeout_seconds: 10,
        work_dir,
        executor_heartbeat_interval_seconds: 5,
        print_thread_info: false,
        ..ExecutorProcessConfig::default()
    };
    eprintln!(
        "sightline: Ballista {} executor on {address} (gRPC {grpc_port}) for the scheduler at {scheduler}",
        ballista_core::BALLISTA_VERSION
    );
    start_executor_process(Arc::new(config)).await.map_err(|e| {
        let text = e.to_string();
        if text.to_lowercase().contains("connect") {
            format!(
                "cannot reach the scheduler at {scheduler}: {}",
                text.lines().next().unwrap_or("")
            )
        } else {
            format!("the executor on {address}: {text}")
        }
    })
}
