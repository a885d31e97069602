//! The jobs a command submitted to a Ballista cluster, so that Ctrl-C cancels them there.
//! Ballista 55's client stops waiting for a job whose future is dropped, but its scheduler
//! runs the job to its end (or keeps it queued until an executor registers); a query stopped
//! by the user must not keep a cluster busy. Each plan run on the cluster is watched here
//! (its job id is known once the scheduler accepted it) and cancelled through the
//! scheduler's own `CancelJob` call.

use std::sync::{Arc, Mutex};

use ballista_core::execution_plans::DistributedQueryExec;
use ballista_core::serde::protobuf::CancelJobParams;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::protobuf::LogicalPlanNode;

/// The plans run on the cluster whose scheduler is at `scheduler` (`HOST:PORT`).
pub struct ClusterJobs {
    scheduler: String,
    plans: Mutex<Vec<Arc<dyn ExecutionPlan>>>,
}

impl ClusterJobs {
    pub fn new(scheduler: &str) -> ClusterJobs {
        ClusterJobs {
            scheduler: scheduler.to_string(),
            plans: Mutex::new(Vec::new()),
        }
    }

    /// Remembers `plan`, about to run on the cluster.
    pub fn watch(&self, plan: Arc<dyn ExecutionPlan>) {
        if let Ok(mut plans) = self.plans.lock() {
            plans.push(plan);
        }
    }

    /// The ids of the jobs the scheduler accepted for the plans watched.
    pub fn job_ids(&self) -> Vec<String> {
        let plans = self.plans.lock().map(|p| p.clone()).unwrap_or_default();
        (plans.iter())
            .filter_map(|plan| {
                let exec = plan.downcast_ref::<DistributedQueryExec<LogicalPlanNode>>()?;
                exec.job_id().map(|id| id.as_str().to_string())
            })
            .collect()
    }

    /// Cancels every job accepted for the plans watched (a finished job's cancel does
    /// nothing); the ids cancelled.
    pub async fn cancel_all(&self) -> Result<Vec<String>, String> {
        let ids = self.job_ids();
        if ids.is_empty() {
            return Ok(ids);
        }
        let url = format!("http://{}", self.scheduler);
        let endpoint = ballista_core::utils::create_grpc_client_endpoint(url, None)
            .map_err(|e| e.to_string())?;
        let channel = endpoint.connect().await.map_err(|e| e.to_string())?;
        let mut scheduler = SchedulerGrpcClient::new(channel);
        for id in &ids {
            scheduler
                .cancel_job(CancelJobParams { job_id: id.clone() })
                .await
                .map_err(|e| format!("job {id}: {}", e.message()))?;
        }
        Ok(ids)
    }
}
