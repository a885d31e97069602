//! Where the plans run: an embedded DataFusion session, or a Ballista cluster.

use std::sync::Arc;

use datafusion::execution::memory_pool::FairSpillPool;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

use super::cluster_jobs::ClusterJobs;

/// How to run the plans.
#[derive(Clone, Debug, Default)]
pub struct Engine {
    /// Bytes the embedded engine's operators may hold before they spill to disk; None: no
    /// limit.
    pub memory_limit: Option<usize>,
    /// `df://HOST:PORT` of a Ballista scheduler; None: embedded.
    pub cluster: Option<String>,
}

impl Engine {
    /// A session: embedded on every core, or connected to the cluster.
    pub async fn session(&self) -> Result<SessionContext, String> {
        match &self.cluster {
            Some(url) => remote(url).await,
            None => embedded(self.memory_limit),
        }
    }
}

/// An embedded session over every core; with a limit, a fair pool that makes the sorts and
/// aggregations spill to the OS's temporary folder past it.
pub fn embedded(memory_limit: Option<usize>) -> Result<SessionContext, String> {
    let mut runtime = RuntimeEnvBuilder::new();
    if let Some(limit) = memory_limit {
        runtime = runtime.with_memory_pool(Arc::new(FairSpillPool::new(limit)));
    }
    let runtime = runtime.build_arc().map_err(|e| e.to_string())?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let config = SessionConfig::new().with_target_partitions(cores);
    Ok(SessionContext::new_with_config_rt(config, runtime))
}

/// A session whose plans run on the Ballista cluster whose scheduler is at `url`.
async fn remote(url: &str) -> Result<SessionContext, String> {
    use ballista::prelude::SessionContextExt;
    let Some(address) = url.strip_prefix("df://") else {
        return Err(format!(
            "{url}: a cluster is named df://HOST:PORT (the scheduler's address)"
        ));
    };
    if address
        .rsplit_once(':')
        .is_none_or(|(_, p)| p.parse::<u16>().is_err())
    {
        return Err(format!("{url}: a cluster is named df://HOST:PORT"));
    }
    let ctx = SessionContext::remote(url)
        .await
        .map_err(|e| cluster_error(url, &e.to_string()))?;
    // The plans it runs are watched, so that Ctrl-C can cancel their jobs on the cluster. Their
    // status is asked for (Ballista's "pull" mode) rather than pushed: a pushed job's id comes
    // with its first update, which a job queued for want of executors never gets.
    {
        let state = ctx.state_ref();
        let mut state = state.write();
        let config = state.config_mut();
        config.set_extension(Arc::new(ClusterJobs::new(address)));
        config
            .options_mut()
            .set(ballista_core::config::BALLISTA_CLIENT_PULL, "true")
            .map_err(|e| cluster_error(url, &e.to_string()))?;
    }
    Ok(ctx)
}

/// One line for what went wrong with the cluster, from DataFusion's or Ballista's message.
pub fn cluster_error(url: &str, message: &str) -> String {
    let lower = message.to_lowercase();
    if lower.contains("connection refused")
        || lower.contains("error connecting")
        || lower.contains("dns error")
        || lower.contains("transport error")
        || lower.contains("could not connect")
    {
        format!(
            "cannot reach the scheduler at {url} (is `sightline cluster scheduler` running there?)"
        )
    } else if lower.contains("executor lost")
        || lower.contains("executor")
            && (lower.contains("dead") || lower.contains("lost") || lower.contains("terminated"))
    {
        format!(
            "an executor of the cluster at {url} was lost while the query ran: {}",
            first_line(message)
        )
    } else if lower.contains("version") {
        format!(
            "the cluster at {url} runs another version: {}",
            first_line(message)
        )
    } else {
        format!("the cluster at {url}: {}", first_line(message))
    }
}

fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or(message)
}

#[cfg(test)]
mod tests {
    use super::cluster_error;

    /// A scheduler of another major version refuses the job with Ballista's own words (its
    /// `version::check_compatibility`, which both sides run): one line that says so, naming both.
    #[test]
    fn a_scheduler_of_another_version_is_one_line_naming_both() {
        let client = ballista_core::BALLISTA_VERSION;
        let refusal =
            ballista_core::version::check_compatibility(Some(client), Some("56.0.0")).unwrap_err();
        let as_datafusion_says_it =
            datafusion::error::DataFusionError::Execution(refusal).to_string();
        let line = cluster_error("df://sched:50050", &as_datafusion_says_it);
        assert!(
            line.starts_with("the cluster at df://sched:50050 runs another version"),
            "{line}"
        );
        assert!(line.contains("56.0.0") && line.contains(client), "{line}");
        assert_eq!(line.lines().count(), 1);
    }
}
