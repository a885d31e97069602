//! What the job view opens on without reading any rank's events: per rank its number, its
//! source report, its clock offset and the span of its NVTX ranges on the job clock; the job's
//! iterations and the straggler. The engine computes it over a Parquet job folder
//! (`sightline-engine summaries`, one JSON document on its standard output) and the window
//! reads it; [`JobSummaries::of_job`] is the same document from a job in memory (the window's
//! own pass), which the engine's must equal.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::job_findings::JobAnalysis;
use crate::model::{Alignment, Ns, Ranks};

/// The version of the document: a window reading another one says so rather than guess.
pub const SUMMARIES_VERSION: u32 = 1;

/// One rank of the job, without its events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    pub number: u32,
    /// The report the rank was exported from, as the export recorded it.
    pub path: PathBuf,
    /// When its session began (UTC ns), where the report recorded it.
    pub session_start_utc_ns: Option<i64>,
    /// Added to its own times to put them on the job clock.
    pub offset_ns: Ns,
    /// The earliest start and latest end of its NVTX ranges, on the job clock (none without
    /// any): the span a job opened on its NVTX ranges draws.
    pub span: Option<(Ns, Ns)>,
    /// The process of its iterations' thread (none without iterations): the rank's label.
    pub pid: Option<u32>,
}

impl RankSummary {
    /// [`RankSummary::span`] on the rank's own clock.
    pub fn own_span(&self) -> Option<(Ns, Ns)> {
        self.span
            .map(|(a, b)| (a - self.offset_ns, b - self.offset_ns))
    }
}

/// The job's summaries (see the module's note).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobSummaries {
    pub version: u32,
    /// With each phase's GPU work (the straggler's words whole); `false`: the first document
    /// of `summaries --early`, from the NVTX ranges alone (as the window's own NVTX pass).
    pub complete: bool,
    /// In rank order.
    pub ranks: Vec<RankSummary>,
    /// Whether every rank's report had its session start (the ranks are on one clock).
    pub aligned: bool,
    /// The iterations, the straggler (or why none) and what it did differently.
    pub analysis: JobAnalysis,
}

impl JobSummaries {
    /// The summaries of a job in memory (its NVTX ranges at least) and its analysis.
    pub fn of_job(job: &Ranks, analysis: JobAnalysis) -> JobSummaries {
        let ranks = (job.ranks.iter())
            .map(|r| RankSummary {
                pid: (analysis.iterations.ranks.iter())
                    .find(|it| it.rank == r.number)
                    .and_then(|it| r.trace.threads.get(it.thread as usize))
                    .map(|t| t.pid),
                number: r.number,
                path: r.path.clone(),
                session_start_utc_ns: r.trace.info.session_start_utc_ns,
                offset_ns: r.offset_ns,
                span: (r.trace.nvtx.spans.bounds()).map(|(a, b)| (r.to_job(a), r.to_job(b))),
            })
            .collect();
        JobSummaries {
            version: SUMMARIES_VERSION,
            complete: true,
            ranks,
            aligned: job.alignment != Alignment::None,
            analysis,
        }
    }

    /// The document as the engine writes it.
    pub fn to_json(&self) -> Result<String, String> {
        serde_json::to_string(self).map_err(|e| format!("cannot write the job's summaries: {e}"))
    }

    /// The document the engine wrote, or why it is not one this window reads.
    pub fn from_json(text: &str) -> Result<JobSummaries, String> {
        let version = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("version")?.as_u64());
        match version {
            Some(v) if v != u64::from(SUMMARIES_VERSION) => {
                return Err(format!(
                    "the engine's summaries are of version {v}, this window reads version \
                     {SUMMARIES_VERSION} (a sightline-engine of another release)"
                ));
            }
            _ => {}
        }
        serde_json::from_str(text)
            .map_err(|e| format!("the engine's summaries are not understood: {e}"))
    }
}
