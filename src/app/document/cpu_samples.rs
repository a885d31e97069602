//! The report's CPU samples and scheduling, read after the rest of it: the window's load leaves
//! them (`loader::LoadOptions::WITHOUT_CPU_SAMPLING`; decoding them costs as much again as the
//! rest of a sampled report's load), and the document reads them as soon as that load is done,
//! in the background, as the load's last step: while they are read the trace lists them as
//! still to come (the CPU rows and the CPU profile say "reading CPU samples…", the findings
//! wait for the whole report as they wait for a load's), then the trace with them replaces it.

use std::sync::Arc;

use super::{Document, Loading};
use crate::loader::{CPU_SAMPLING, LoadError, LoadJob, Problem, Progress, READING_CPU_SAMPLES};
use crate::model::Trace;

/// `trace` (a whole load) as the window shows it until its CPU samples are in: listing them
/// as still to come where its load left them (the views and the findings then wait as they
/// wait for a load's last phase). Any other comes back as it is.
pub(crate) fn awaiting_cpu_samples(mut trace: Trace) -> Trace {
    if trace.cpu_sampling_not_read() && trace.info.still_loading.is_empty() {
        trace.info.still_loading = vec![CPU_SAMPLING];
    }
    trace
}

impl Loading {
    /// The reading of `trace`'s CPU samples (load attempt `attempt`), from `path`.
    fn cpu_samples(path: std::path::PathBuf, trace: Arc<Trace>, attempt: usize) -> Loading {
        Loading {
            job: LoadJob::read_cpu_sampling(path, trace, attempt),
            progress: Progress {
                phase: READING_CPU_SAMPLES,
                fraction: 0.0,
            },
            began: std::time::Instant::now(),
            latest: None,
            shown_attempt: attempt,
        }
    }
}

impl Document {
    /// Starts reading the CPU samples the report's load left (none where it read them, or
    /// where nsys did not sample). `attempt` is the load's.
    pub(crate) fn read_cpu_samples_later(&mut self, attempt: usize) {
        if self.loading.is_none() && self.awaits_cpu_samples() {
            self.loading = Some(Loading::cpu_samples(
                self.path.clone(),
                self.trace.clone(),
                attempt,
            ));
        }
    }

    /// Whether the trace shown waits for its CPU samples (being read, or to be).
    pub fn awaits_cpu_samples(&self) -> bool {
        self.trace.cpu_sampling_not_read() && crate::loader::cpu_samples_to_come(&self.trace)
    }

    /// Whether the document's background reading is its CPU samples' (not a load's).
    pub fn reading_cpu_samples(&self) -> bool {
        self.loading.is_some() && self.awaits_cpu_samples()
    }

    /// The CPU samples could not be read (or the user stopped their reading): the report stays
    /// open without them, whole otherwise (the findings run on it), and `why` is given back to
    /// be said, unless it was the user's cancel.
    pub(crate) fn cpu_samples_not_read(&mut self, why: LoadError) -> Option<String> {
        self.loading = None;
        let whole = self.trace.share(Vec::new());
        self.grow(Arc::new(whole), true);
        (why.problem != Problem::Cancelled).then(|| format!("CPU samples not read: {why}"))
    }
}
