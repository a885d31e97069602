//! A real Ballista cluster from the built binary: a scheduler and two executors on
//! 127.0.0.1 (free ports), bounded in time and killed at the end even when the test fails;
//! the same answers as embedded. An unreachable scheduler is one clear line; Ctrl-C cancels the
//! query's job on the cluster.

mod common;

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{engine, engine_analyze, engine_output, engine_stats, export};

/// Children killed when dropped (a failed assertion too).
struct Cluster(Vec<Child>);

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Cluster {
    /// A scheduler and `executors` executors on 127.0.0.1 (free ports), each listening before
    /// this returns (within a minute); the scheduler's port.
    fn start(executors: usize) -> (Cluster, u16) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let scheduler = free_port();
        let mut cluster = Cluster(vec![start(&[
            "cluster",
            "scheduler",
            "--bind",
            &format!("127.0.0.1:{scheduler}"),
        ])]);
        wait_listening(scheduler, deadline);
        for _ in 0..executors {
            let port = free_pair();
            cluster.0.push(start(&[
                "cluster",
                "executor",
                "--scheduler",
                &format!("127.0.0.1:{scheduler}"),
                "--bind",
                &format!("127.0.0.1:{port}"),
            ]));
            wait_listening(port + 1, deadline);
        }
        (cluster, scheduler)
    }
}

/// Sends `signal` (`INT`, `STOP`) to process `pid` by the shell's own `kill` (a minimal Debian
/// has no procps).
fn send_signal(pid: u32, signal: &str) {
    let sent = Command::new("sh")
        .args(["-c", &format!("kill -{signal} {pid}")])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// A port no one listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A port free with the next one (an executor takes both).
fn free_pair() -> u16 {
    loop {
        let port = free_port();
        if port < u16::MAX && TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
}

fn start(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_sightline-engine"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_listening(port: u16, deadline: Instant) {
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "port {port} never opened");
        std::thread::sleep(Duration::from_millis(100));
    }
}

const REPORTS: &str =
    "cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum,osrt_sum,rank_spread,gpu_time_util_map";

#[test]
fn a_local_cluster_gives_the_embedded_answers() {
    let dir = tempfile::tempdir().unwrap();
    let folder = export("straggler", dir.path());
    let (cluster, scheduler) = Cluster::start(2);
    let url = format!("df://127.0.0.1:{scheduler}");
    let embedded = engine_stats(std::slice::from_ref(&folder), REPORTS, &[]);
    let on_cluster = engine_stats(std::slice::from_ref(&folder), REPORTS, &["--cluster", &url]);
    assert_eq!(on_cluster, embedded);
    let found = engine_analyze(std::slice::from_ref(&folder), &[]);
    assert!(found.contains("rank 2 reaches"), "{found}");
    assert_eq!(
        engine_analyze(std::slice::from_ref(&folder), &["--cluster", &url]),
        found
    );
    // What the window opens a Parquet job on, from the cluster as embedded.
    let summaries = engine_output("summaries", &[], std::slice::from_ref(&folder));
    assert!(summaries.contains("\"straggler\""), "{summaries}");
    assert_eq!(
        engine_output(
            "summaries",
            &["--cluster", &url],
            std::slice::from_ref(&folder)
        ),
        summaries
    );
    drop(cluster);
}

/// An executor that stops answering mid-job (frozen: it is registered and takes tasks, then
/// never finishes them, as a machine that fell off the network) costs the scheduler's timeout,
/// not the answer: its tasks run again on the other executor.
#[test]
fn a_lost_executor_costs_time_not_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let folder = export("balanced", dir.path());
    let (cluster, scheduler) = Cluster::start(2);
    // Registered (its heartbeat is 5 s), then frozen.
    std::thread::sleep(Duration::from_secs(6));
    send_signal(cluster.0[1].id(), "STOP");
    let url = format!("df://127.0.0.1:{scheduler}");
    let reports = "cuda_gpu_kern_sum,osrt_sum";
    let on_cluster = engine_stats(std::slice::from_ref(&folder), reports, &["--cluster", &url]);
    let embedded = engine_stats(std::slice::from_ref(&folder), reports, &[]);
    assert_eq!(on_cluster, embedded);
    drop(cluster);
}

#[test]
fn an_unreachable_scheduler_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let folder = export("balanced", dir.path());
    let url = format!("df://127.0.0.1:{}", free_port());
    let out = engine(&[
        "stats".as_ref(),
        "--cluster".as_ref(),
        url.as_ref(),
        folder.as_os_str(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot reach the scheduler"), "{err}");
}

#[test]
fn a_scheduler_without_executors_is_said_and_ctrl_c_stops_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    let folder = export("balanced", dir.path());
    let (_cluster, scheduler) = Cluster::start(0);
    let mut query = Command::new(env!("CARGO_BIN_EXE_sightline-engine"))
        .args(["stats", "--cluster", &format!("df://127.0.0.1:{scheduler}")])
        .arg(&folder)
        .env("SIGHTLINE_CLUSTER_NOTICE_SECS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    // Ctrl-C, as a terminal sends it.
    send_signal(query.id(), "INT");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = query.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = query.kill();
            panic!("the query did not stop on Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut query.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!status.success());
    assert!(err.contains("still waiting for the cluster"), "{err}");
    assert!(err.contains("sightline cluster executor"), "{err}");
    // The job it queued is cancelled on the cluster, not left for the first executor to run.
    let last = err.trim_end().lines().last().unwrap_or_default();
    let ids = last
        .split_once("cancelled (Ctrl-C); cancelled on the cluster: job ")
        .map(|(_, ids)| ids.split(", job ").map(String::from).collect::<Vec<_>>())
        .unwrap_or_else(|| panic!("no job cancelled on the cluster: {err}"));
    for id in ids {
        let status = job_status(scheduler, &id);
        assert!(status.contains("Cancelled"), "job {id}: {status}");
    }
}

/// Job `id`'s status on the scheduler at 127.0.0.1:`port`, as its gRPC call gives it.
fn job_status(port: u16, id: &str) -> String {
    use ballista_core::serde::protobuf::GetJobStatusParams;
    use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut client = SchedulerGrpcClient::connect(format!("http://127.0.0.1:{port}"))
            .await
            .unwrap();
        // The scheduler's event loop takes the cancel a moment after it answered.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let status = client
                .get_job_status(GetJobStatusParams {
                    job_id: id.to_string(),
                })
                .await
                .unwrap()
                .into_inner();
            let text = format!("{status:?}");
            if text.contains("Failed") || Instant::now() > deadline {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}
