//! What the table readers share while a trace is built: the [`Builder`]
//! (the report, the trace so far, progress, cancellation, and a growing
//! report's [`Carry`]), and the map of nsys string ids to ours. `mod.rs`
//! runs the phases; each reader (`cpu.rs`, `gpu.rs`, `nvtx.rs`, …) fills the
//! builder's trace.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::apart::{Apart, PartsProgress};
use super::carry::Carry;
use super::db::{self, Report};
use super::error::{LoadError, NOT_A_REPORT, Problem, cancelled};
use crate::model::{StrId, Strings, Trace};

/// Where the loader is: a phase name and the overall fraction done (0..=1).
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub phase: &'static str,
    pub fraction: f32,
}

/// The tables of timed events.
pub(super) const EVENT_TABLES: [&str; 7] = [
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
    "OSRT_API",
];

/// State shared by the table readers while a trace is built.
pub(crate) struct Builder<'a> {
    /// The report, as the user named it (in messages and the trace).
    pub(super) path: PathBuf,
    /// The file read: the report, or a private copy of its committed state.
    pub(super) source: PathBuf,
    pub(super) report: std::rc::Rc<Report>,
    pub(super) on_progress: &'a mut dyn FnMut(Progress),
    pub(super) cancel: &'a AtomicBool,
    pub(super) phase: &'static str,
    pub(super) rows_total: u64,
    pub(super) rows_done: u64,
    pub(super) last_progress: Instant,
    /// nsys `StringIds.id` → our id.
    pub(super) string_ids: IdMap,
    pub(super) trace: Trace,
    pub(super) threads_by_tid: HashMap<i64, u32>,
    pub(super) processes_by_pid: HashMap<u32, usize>,
    pub(super) process_names: HashMap<u32, String>,
    pub(super) thread_names: HashMap<i64, String>,
    pub(super) thread_priorities: HashMap<i64, i32>,
    /// A first guess at the time axis (see [`Report::time_hint`]), for
    /// snapshots taken before the tables that bound it are read.
    pub(super) axis_hint: Option<(i64, i64)>,
    /// The load publishes the trace as it is read (a progressive opening).
    pub(super) publishes: bool,
    /// The rows earlier loads of a growing report read (see [`Carry`]).
    pub(super) carry: Option<&'a mut Carry>,
    /// The CPU samples and the scheduling, each read on a thread of its own
    /// since the load began (`cpu_sampling`), each as a trace of its own.
    pub(super) samples_apart: Option<Apart<Result<Trace, LoadError>>>,
    pub(super) sched_apart: Option<Apart<Result<Trace, LoadError>>>,
    /// How far those are.
    pub(super) parts_progress: PartsProgress,
    /// Where the CPU samples a load leaves lie, about (see `mod.rs`'s `plan`).
    pub(super) axis_of_unread: Option<(i64, i64)>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(
        path: &Path,
        report: Report,
        on_progress: &'a mut dyn FnMut(Progress),
        cancel: &'a AtomicBool,
    ) -> Self {
        let rows_total = EVENT_TABLES
            .iter()
            .chain(&["GPU_METRICS"])
            .map(|t| report.estimated_rows(t))
            .sum::<u64>()
            .max(1);
        let mut trace = Trace {
            strings: Strings::new(),
            ..Trace::default()
        };
        trace.info.path = path.display().to_string();
        Builder {
            path: path.to_path_buf(),
            source: path.to_path_buf(),
            report: std::rc::Rc::new(report),
            on_progress,
            cancel,
            phase: "opening",
            rows_total,
            rows_done: 0,
            last_progress: Instant::now(),
            string_ids: IdMap::default(),
            trace,
            threads_by_tid: HashMap::new(),
            processes_by_pid: HashMap::new(),
            process_names: HashMap::new(),
            thread_names: HashMap::new(),
            thread_priorities: HashMap::new(),
            axis_hint: None,
            publishes: false,
            carry: None,
            samples_apart: None,
            sched_apart: None,
            parts_progress: Default::default(),
            axis_of_unread: None,
        }
    }

    pub(super) fn error(&self, err: &rusqlite::Error) -> LoadError {
        if self.cancel.load(Ordering::Relaxed) {
            return LoadError::new(&self.path, Problem::Cancelled);
        }
        if let rusqlite::Error::SqliteFailure(_, Some(message)) = err
            && let Some(why) = message.strip_prefix(NOT_A_REPORT)
        {
            return LoadError::new(&self.path, Problem::NotNsysReport(why.into()));
        }
        LoadError::from_sqlite(&self.path, err)
    }

    pub(super) fn report_progress(&mut self, force: bool) {
        if force || self.last_progress.elapsed() > Duration::from_millis(50) {
            self.last_progress = Instant::now();
            let fraction = (self.rows_done as f64 / self.rows_total as f64).min(1.0) as f32;
            (self.on_progress)(Progress {
                phase: self.phase,
                fraction,
            });
        }
    }

    /// Called every row: counts it, reports progress now and then, and turns a
    /// cancel request into an error that unwinds the load.
    pub(super) fn tick(&mut self, rows: u64) -> rusqlite::Result<()> {
        self.rows_done += rows;
        if self.rows_done % 8192 < rows {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(cancelled());
            }
            self.report_progress(false);
        }
        Ok(())
    }

    pub(super) fn warn(&mut self, message: String) {
        self.trace.warnings.push(message);
    }

    /// [`Report::select`], its warnings the trace's: every reader asks
    /// through here, so a table without a column its rows need, or a column
    /// taken as unknown, is always said (a report that lost its GPUs' limits
    /// without a word would give occupancy silently wrong).
    pub(super) fn select(&mut self, table: &str, cols: &[db::Col], tail: &str) -> Option<String> {
        self.report
            .select(table, cols, tail, &mut self.trace.warnings)
    }

    /// Our id of an nsys string id (missing ids read as the empty string).
    pub(super) fn string(&self, nsys_id: i64) -> StrId {
        self.string_ids.get(nsys_id).unwrap_or_default()
    }

    /// The trace so far, for a progressive load to publish; its time axis
    /// spans the events read and the first guess (the final trace's spans
    /// exactly its events).
    pub(super) fn snapshot(&self, still_loading: Vec<&'static str>) -> Trace {
        let mut trace = self.trace.share(still_loading);
        let read = time_range(&self.trace);
        trace.info.time_range = match (read, self.axis_hint) {
            (Some((a, b)), Some((c, d))) => (a.min(c), b.max(d)),
            (Some(r), None) | (None, Some(r)) => r,
            (None, None) => (0, 0),
        };
        // Worked out here, off the window's thread.
        trace.activity_span();
        trace
    }

    /// What a partial read made (the NVTX ranges alone), its time axis spanning what it read:
    /// not [`Builder::finish`], whose trim of every arena is for a whole load's buffers.
    pub(super) fn take_partial(&mut self) -> Trace {
        self.trace.info.time_range = time_range(&self.trace).unwrap_or((0, 0));
        std::mem::take(&mut self.trace)
    }

    pub(super) fn finish(mut self) -> Trace {
        (self.on_progress)(Progress {
            phase: "done",
            fraction: 1.0,
        });
        // A report whose CPU samples are left for later spans them already,
        // about (their tables' first and last rows): one of samples and no
        // CUDA has no other time, and its axis would be 0 ns long.
        self.trace.info.time_range = match (time_range(&self.trace), self.axis_of_unread) {
            (Some((a, b)), Some((c, d))) => (a.min(c), b.max(d)),
            (Some(r), None) | (None, Some(r)) => r,
            (None, None) => (0, 0),
        };
        self.trace.activity_span();
        // A growing report's snapshot reads a few rows: their buffers are
        // kept for the next one's (trimming walks every free chunk of every
        // arena: a tenth of a live snapshot's time).
        // One report of a job leaves it to the job (`share::gives_back_memory`).
        let whole_load = self.carry.is_none() || self.rows_done >= GIVE_BACK_AFTER_ROWS;
        if whole_load && super::share::gives_back_memory() {
            crate::memory::give_back_freed_memory();
        }
        self.trace
    }
}

/// A load of a growing report that read this many rows gives the memory
/// its buffers held back, as a whole load does.
const GIVE_BACK_AFTER_ROWS: u64 = 1 << 20;

/// From the earliest start to the latest end of the events read.
fn time_range(t: &Trace) -> Option<(i64, i64)> {
    let mut lo = i64::MAX;
    let mut hi = i64::MIN;
    for spans in [
        &t.cuda_api.spans,
        &t.osrt.spans,
        &t.nvtx.spans,
        &t.kernels.spans,
        &t.memcpys.spans,
        &t.memsets.spans,
        &t.syncs.spans,
    ] {
        if let Some((s, e)) = spans.bounds() {
            lo = lo.min(s);
            hi = hi.max(e);
        }
    }
    // A report of CPU samples and no CUDA is as long as its samples.
    if let Some((s, e)) = t.cpu.bounds() {
        lo = lo.min(s);
        hi = hi.max(e);
    }
    (lo <= hi).then_some((lo, hi))
}

/// nsys ids → our ids: a vector when the ids are dense (the usual case), a hash
/// map otherwise, so an odd report cannot make us allocate gigabytes.
#[derive(Default)]
pub(crate) struct IdMap {
    dense: Vec<Option<StrId>>,
    sparse: HashMap<i64, StrId>,
}

impl IdMap {
    pub(super) fn insert(&mut self, key: i64, value: StrId) {
        if (0..(1 << 24)).contains(&key) {
            let k = key as usize;
            if k >= self.dense.len() {
                self.dense.resize(k + 1, None);
            }
            self.dense[k] = Some(value);
        } else {
            self.sparse.insert(key, value);
        }
    }

    pub(super) fn get(&self, key: i64) -> Option<StrId> {
        if key >= 0 && (key as usize) < self.dense.len() {
            self.dense[key as usize]
        } else {
            self.sparse.get(&key).copied()
        }
    }
}
