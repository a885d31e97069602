//! What a capture tells its owner ([`CaptureMessage`]: output, snapshots
//! with their [`LiveStatus`], the finished [`CaptureResult`]) and the
//! [`Outbox`] it sends them through. Apart from `session.rs`, which runs a
//! capture, so that the publisher can send snapshots without reaching into
//! the session that starts it.

use std::sync::Arc;
use std::time::Duration;

use super::environment::CaptureError;
use super::live::{LiveCounts, LiveReport};
use crate::loader::PhaseTimes;
use crate::model::Trace;

/// What a running capture tells its owner.
pub enum CaptureMessage {
    /// A line the benchmark printed (its result table).
    Output(String),
    /// What it is doing before its first events, when that takes a while
    /// (a replay of a big report checks and indexes it: seconds at 10M
    /// events): shown until the first snapshot.
    Preparing(String),
    /// The report as it stands.
    Snapshot(Arc<Trace>, LiveStatus),
    /// The end: the final report, or why there is none.
    Finished(Result<Box<CaptureResult>, CaptureError>),
}

/// How far a capture has come.
#[derive(Debug, Clone, Default)]
pub struct LiveStatus {
    pub counts: LiveCounts,
    pub elapsed: Duration,
    /// Events per second over the capture so far.
    pub events_per_second: f64,
    /// How long the last snapshot took to load.
    pub snapshot_cost: Duration,
    /// And each phase of that load: where a snapshot's cost lies.
    pub snapshot_phases: PhaseTimes,
    /// How old the newest event of the snapshot was when it was published:
    /// the delay from an event happening to its being on screen (CUPTI's
    /// flush, the conversion and the snapshot together).
    pub newest_event_age: Duration,
    /// When that event happened, on the report's clock: with its age, when
    /// the snapshot came on that clock, so that any event's delay to the
    /// screen can be told from its own time.
    pub newest_event_at: crate::model::Ns,
    /// How old that event was when the capture had written it to its
    /// working file (before the snapshot's load): CUPTI's flush, the
    /// conversion and the writing, without the load.
    pub newest_event_age_written: Duration,
    /// Record batches that were waiting to be written when that event was:
    /// more than a few, and the writing is behind what CUPTI hands over.
    pub batches_waiting: usize,
    /// The working file's write-ahead log when the snapshot was loaded (it
    /// is folded into the file while no load reads it).
    pub wal_bytes: u64,
}

/// A finished capture: its report, and the working file it can be saved from.
pub struct CaptureResult {
    pub trace: Arc<Trace>,
    pub live: LiveReport,
    pub status: LiveStatus,
    /// Records CUPTI dropped because its buffers were full (0 in a good run).
    pub dropped_records: u64,
    /// The benchmark stopped early because Stop was asked for.
    pub stopped_early: bool,
    /// The benchmark failed; what it recorded until then is kept.
    pub benchmark_error: Option<String>,
    /// What became of the counters asked for (None: none were asked for).
    pub counters: Option<CounterOutcome>,
}

/// The counters of a capture, or the one line saying why it has none.
#[derive(Debug, Clone)]
pub enum CounterOutcome {
    /// Per kernel instance (also in `trace.kernel_metrics` and the working file).
    Collected(crate::model::KernelMetrics),
    /// The capture went on without counters.
    Skipped(String),
}

pub use crate::job::Wake;

/// Where a capture sends its messages, waking their reader if it asked to be: the one job
/// type's emitter. A window that only looked at its timer would show a snapshot up to a
/// repaint period (50 ms) after it came: a large part of an event's way to the screen.
pub type Outbox = crate::job::Emitter<CaptureMessage>;
