//! nsys SQLite report → [`Trace`].
//!
//! [`load`] does the work on the calling thread, reporting progress and
//! checking for cancellation; [`LoadJob::spawn`] runs it on a worker thread and
//! talks over a channel, which is what the GUI uses.

mod apart;
mod builder;
mod carry;
mod cells;
mod cpu;
mod cpu_sampling;
mod db;
mod diagnostics;
mod error;
mod gpu;
mod group;
mod grow;
mod kernel_metrics;
mod nvtx;
mod parallel;
mod python_payload;
mod python_samples;
pub mod ranks;
mod rows;
mod samples;
mod sampling;
mod sched;
mod session;
mod share;
mod snapshot;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

pub(crate) use db::check_file;
pub use db::{configure_sqlite, open_read_only, read_only_uri};
pub use error::{LoadError, Problem};
pub(crate) use snapshot::companion;

use crate::job::Job;
use crate::model::{CpuSamplingRead, Trace};
pub use builder::Progress;
use builder::{Builder, EVENT_TABLES};
pub use carry::Carry;
use db::Report;

/// What a load reads of a report besides its events.
///
/// A sampled report's CPU samples and scheduling can hold more rows than all
/// its other tables, and decoding them costs as much again as the rest of the
/// load (BENCHMARKS.md, issue 43); most of what Sightline does with a report
/// needs none of them. A load that leaves them says so
/// ([`crate::model::CpuSamplingRead::NotRead`]) and [`read_cpu_sampling`]
/// reads them later, for the trace already loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Read the CPU samples (native and Python) and the thread scheduling
    /// nsys's sampling recorded.
    pub cpu_sampling: bool,
}

impl LoadOptions {
    /// Every table Sightline reads: what [`load`] reads.
    pub const WHOLE: LoadOptions = LoadOptions { cpu_sampling: true };
    /// Everything but the CPU samples and scheduling, read later by
    /// [`read_cpu_sampling`] where something asks for them.
    pub const WITHOUT_CPU_SAMPLING: LoadOptions = LoadOptions {
        cpu_sampling: false,
    };
}

/// Wall time of each load phase, for `sightline bench`.
#[derive(Clone, Debug, Default)]
pub struct PhaseTimes(pub Vec<(&'static str, Duration)>);

/// A whole load: the trace, the time each phase took, and which attempt gave
/// it (see [`load_progressive`]).
pub struct Loaded {
    pub trace: Trace,
    pub phases: PhaseTimes,
    pub attempt: usize,
}

/// Called with each snapshot a progressive load publishes: the attempt it
/// belongs to, and the trace so far (see [`Trace::share`]).
pub type OnPartial<'a> = &'a mut dyn FnMut(usize, Trace);

/// `tests/fixtures/NAME` loaded whole: what unit tests across the crate
/// read their real reports with.
#[cfg(test)]
pub(crate) fn load_fixture(name: &str) -> Trace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    load(&path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// Loads a whole report on this thread (its CPU samples too: see
/// [`load_with`] for a load without them). `on_progress` is called now and
/// then; set `cancel` from another thread to stop early with [`Problem::Cancelled`].
///
/// ```
/// use std::sync::atomic::AtomicBool;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/streams.sqlite");
/// let mut phases = Vec::new();
/// let trace = sightline::loader::load(path.as_ref(), &mut |p| phases.push(p.phase), &AtomicBool::new(false))?;
/// assert_eq!(trace.gpus[0].name, "NVIDIA H100 80GB HBM3");
/// assert!(phases.contains(&"GPU events"));
///
/// // A file that is no report gets one clear error naming it.
/// let err = sightline::loader::load("Cargo.toml".as_ref(), &mut |_| {}, &AtomicBool::new(false))
///     .unwrap_err();
/// assert!(err.to_string().starts_with("Cargo.toml: not an SQLite file"));
/// # Ok::<(), sightline::loader::LoadError>(())
/// ```
pub fn load(
    path: &Path,
    on_progress: &mut dyn FnMut(Progress),
    cancel: &AtomicBool,
) -> Result<Trace, LoadError> {
    load_timed(path, on_progress, cancel).map(|(trace, _)| trace)
}

/// [`load`], reading what `options` ask.
pub fn load_with(
    path: &Path,
    options: LoadOptions,
    on_progress: &mut dyn FnMut(Progress),
    cancel: &AtomicBool,
) -> Result<Trace, LoadError> {
    load_timed_with(path, options, on_progress, cancel).map(|(trace, _)| trace)
}

/// [`load`], also returning the time each phase took.
pub fn load_timed(
    path: &Path,
    on_progress: &mut dyn FnMut(Progress),
    cancel: &AtomicBool,
) -> Result<(Trace, PhaseTimes), LoadError> {
    load_timed_with(path, LoadOptions::WHOLE, on_progress, cancel)
}

/// [`load_timed`], reading what `options` ask.
pub fn load_timed_with(
    path: &Path,
    options: LoadOptions,
    on_progress: &mut dyn FnMut(Progress),
    cancel: &AtomicBool,
) -> Result<(Trace, PhaseTimes), LoadError> {
    load_attempts(path, options, on_progress, None, cancel).map(|l| (l.trace, l.phases))
}

/// The CPU samples and scheduling of the report at `path`, for `trace`, a
/// load of it that left them ([`LoadOptions::WITHOUT_CPU_SAMPLING`]): the
/// trace with them, its event tables shared with `trace` (not copied), the
/// threads and names only the sampling has added as the whole load adds
/// them. The result is the trace one load with [`LoadOptions::WHOLE`] gives.
/// A trace that holds them already (or whose report has none) comes back as
/// it is. Progress and cancel as [`load`]'s.
pub fn read_cpu_sampling(
    path: &Path,
    trace: &Trace,
    on_progress: &mut dyn FnMut(Progress),
    cancel: &AtomicBool,
) -> Result<Trace, LoadError> {
    if !trace.cpu_sampling_not_read() {
        return Ok(trace.share(trace.info.still_loading.clone()));
    }
    db::check_file(path)?;
    // Its samples must be the report's whose other tables the trace holds.
    if (trace.info.read_as.as_ref()).is_some_and(|was| *was != snapshot::Stamp::of(path).words()) {
        return Err(LoadError::new(path, Problem::ChangedSinceOpened));
    }
    let source = prepare_source(path, false)?;
    let report = Report::open(&source.read_from).map_err(|mut e| {
        e.path = path.to_path_buf();
        e
    })?;
    let mut builder = Builder::new(path, report, on_progress, cancel);
    builder.source = source.read_from.clone();
    builder.phase = READING_CPU_SAMPLES;
    cpu_sampling::read_later(builder, trace)
}

/// [`load_timed`], also publishing the trace as it is read: after each phase
/// `on_partial` gets the tables read so far, each whole, so
/// that a window can show a big report long before its last row is in. The
/// first comes before any event is read: the GPUs and the time axis. The
/// order of the phases, and why, is at `PHASES`.
///
/// Every snapshot of one attempt numbers its events as the final trace does:
/// an event shown early keeps its index. A file that changed while it was
/// read is read again (see [`load_timed`]); that attempt's snapshots and
/// trace carry the next attempt number, and their events are numbered afresh.
pub fn load_progressive(
    path: &Path,
    options: LoadOptions,
    on_progress: &mut dyn FnMut(Progress),
    on_partial: OnPartial,
    cancel: &AtomicBool,
) -> Result<Loaded, LoadError> {
    load_attempts(path, options, on_progress, Some(on_partial), cancel)
}

/// A report's layout (threads, session start, host) and its NVTX ranges, nothing else: no GPU
/// row, CUDA API or OS runtime call. What a job's ranks panel needs to match the ranks'
/// iterations while their events are still read (`loader::ranks::load_nvtx_of_ranks`): the
/// NVTX table is a report's smallest by far. The phases' GPU work is unknown here.
pub fn load_nvtx_ranges(path: &Path, cancel: &AtomicBool) -> Result<Trace, LoadError> {
    db::check_file(path)?;
    let report = Report::open(path)?;
    if !report.has_table("StringIds") {
        return Err(LoadError::new(
            path,
            Problem::NotNsysReport("it has no StringIds table".into()),
        ));
    }
    let mut quiet = |_: Progress| {};
    let mut builder = Builder::new(path, report, &mut quiet, cancel);
    for read in [read_layout as Phase, nvtx::read_nvtx] {
        if cancel.load(Ordering::Relaxed) {
            return Err(LoadError::new(path, Problem::Cancelled));
        }
        read(&mut builder).map_err(|e| builder.error(&e))?;
    }
    Ok(builder.take_partial())
}

/// The checks a load makes before it reads any event (the file is a
/// healthy SQLite file, an Nsight Systems export, with its GPUs and time
/// axis readable), without reading the events: what a replay asks of a
/// report before it starts, where a whole load of 10M events took seconds.
pub fn check_report(path: &Path) -> Result<(), LoadError> {
    let stop = AtomicBool::new(false);
    let mut laid_out = false;
    // The first snapshot of a progressive load comes before any event is
    // read: the checks are done then, and the load stops there.
    let result = load_progressive(
        path,
        LoadOptions::WITHOUT_CPU_SAMPLING,
        &mut |_| {},
        &mut |_, _| {
            laid_out = true;
            stop.store(true, Ordering::Relaxed);
        },
        &stop,
    );
    match result {
        Ok(_) => Ok(()),
        Err(e) if laid_out && e.problem == Problem::Cancelled => Ok(()),
        Err(e) => Err(e),
    }
}

fn load_attempts(
    path: &Path,
    options: LoadOptions,
    on_progress: &mut dyn FnMut(Progress),
    mut on_partial: Option<OnPartial>,
    cancel: &AtomicBool,
) -> Result<Loaded, LoadError> {
    // A writer may commit while the report is read (its stamp then changes):
    // the rows would come from two states, so the load is done again; the
    // last try reads a private copy taken while nothing changed.
    const TRIES: usize = 3;
    for attempt in 0..TRIES {
        let copy = attempt + 1 == TRIES;
        let before = snapshot::Stamp::of(path);
        let mut publish = on_partial
            .as_mut()
            .map(|f| move |trace: Trace| f(attempt, trace));
        let result = load_committed(
            path,
            copy,
            options,
            on_progress,
            publish.as_mut().map(|f| f as &mut dyn FnMut(Trace)),
            cancel,
            None,
        )
        .map(|(mut trace, phases)| {
            trace.info.read_as = Some(before.words());
            Loaded {
                trace,
                phases,
                attempt,
            }
        });
        if copy || snapshot::Stamp::of(path) == before {
            return result;
        }
        if cancel.load(Ordering::Relaxed) {
            return Err(LoadError::new(path, Problem::Cancelled));
        }
    }
    Err(LoadError::new(path, Problem::Changing))
}

/// Loads a report that grows only by rows added to its tables (a capture's
/// working file): its kernels and CUDA API calls are the last load's (same
/// `carry`) with the rows added since appended, each thread or stream that
/// gained some given a new run of rows ([`crate::model::track`]), so those
/// tables cost what was added and rows already shown keep their index. The
/// trace holds the events [`load`] would give, track by track, in the same
/// order (not at the same indexes). Another connection may append to the
/// file meanwhile (a capture writes it in WAL mode while another thread
/// loads): the load reads the last commit before it began, in one read
/// transaction, and its pieces stop at that commit's last rowids.
pub fn load_growing(path: &Path, carry: &mut Carry) -> Result<Trace, LoadError> {
    load_growing_timed(path, carry).map(|(trace, _)| trace)
}

/// [`load_growing`], also returning the time each phase took.
pub fn load_growing_timed(
    path: &Path,
    carry: &mut Carry,
) -> Result<(Trace, PhaseTimes), LoadError> {
    let never = AtomicBool::new(false);
    // A capture's report, reloaded as it grows: read whole each time (see
    // `cpu_sampling::start`: a live report's sampling is read in the phase).
    let loaded = load_committed(
        path,
        false,
        LoadOptions::WHOLE,
        &mut |_| {},
        None,
        &never,
        Some(&mut *carry),
    );
    // A load that failed may have taken some tables out of the carry and
    // not put them back: the next one starts the report over (a new
    // lineage: no index of the states before is taken to hold).
    if loaded.is_err() {
        *carry = Carry::default();
    }
    loaded
}

/// One load of the report's committed state (see [`snapshot`]); `carry`
/// for a growing report's (see [`load_growing`]).
fn load_committed(
    path: &Path,
    always_copy: bool,
    options: LoadOptions,
    on_progress: &mut dyn FnMut(Progress),
    on_partial: Option<&mut dyn FnMut(Trace)>,
    cancel: &AtomicBool,
    carry: Option<&mut Carry>,
) -> Result<(Trace, PhaseTimes), LoadError> {
    db::check_file(path)?;
    crate::memory::set_allocator_thresholds();
    // A growing report is being written (by a capture, in WAL mode): read
    // in place, in one read transaction (see [`Report::open_live`]).
    if carry.is_some() {
        let report = Report::open_live(path)?;
        return build(
            path,
            report,
            (path, None),
            options,
            on_progress,
            on_partial,
            cancel,
            carry,
        );
    }
    let source = prepare_source(path, always_copy)?;
    // Errors name the user's file, not the private copy.
    let named = |mut e: LoadError| {
        e.path = path.to_path_buf();
        e
    };
    let report = Report::open(&source.read_from).map_err(named)?;
    build(
        path,
        report,
        (&source.read_from, source.note.clone()),
        options,
        on_progress,
        on_partial,
        cancel,
        carry,
    )
}

/// The committed state of the report at `path` to read (see [`snapshot`]).
fn prepare_source(path: &Path, always_copy: bool) -> Result<snapshot::Source, LoadError> {
    snapshot::Source::prepare(path, always_copy).map_err(|why| {
        LoadError::new(
            path,
            if why.contains("changed") {
                Problem::Changing
            } else {
                Problem::Unreadable(why)
            },
        )
    })
}

/// Builds the trace of `report` (opened from `read_from`, the report at
/// `path` or a copy of it, with `note` saying why a copy), reading what
/// `options` ask.
#[allow(clippy::too_many_arguments)]
fn build(
    path: &Path,
    report: Report,
    (read_from, note): (&Path, Option<String>),
    options: LoadOptions,
    on_progress: &mut dyn FnMut(Progress),
    mut on_partial: Option<&mut dyn FnMut(Trace)>,
    cancel: &AtomicBool,
    carry: Option<&mut Carry>,
) -> Result<(Trace, PhaseTimes), LoadError> {
    if !report.has_table("StringIds") {
        let why = if report.has_table("sqlite_sequence") || !report.has_table("META_DATA_EXPORT") {
            "it has no StringIds table (is it from another program?)"
        } else {
            "its StringIds table is missing"
        };
        return Err(LoadError::new(path, Problem::NotNsysReport(why.into())));
    }
    let mut builder = Builder::new(path, report, on_progress, cancel);
    let mut carry = carry;
    if let Some(carry) = carry.as_deref_mut() {
        carry.begin_load();
    }
    builder.carry = carry;
    builder.publishes = on_partial.is_some();
    builder.source = read_from.to_path_buf();
    if let Some(note) = note {
        builder.warn(note);
    }
    // Unified-memory events are not loaded: say so, since `um_sum` then
    // prints nothing where nsys would print a summary.
    for table in [
        "CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER",
        "CUDA_UM_CPU_PAGE_FAULT_EVENTS",
        "CUDA_UM_GPU_PAGE_FAULT_EVENTS",
    ] {
        if builder.report.has_table(table) {
            builder.warn(format!(
                "{table}: unified-memory events are not loaded (um_sum stays empty)"
            ));
        }
    }
    // A sampled report's sampling tables are read meanwhile (read last), or
    // not at all.
    let phases = plan(&mut builder, options);
    let mut times = PhaseTimes::default();
    for (i, &(phase, run, _)) in phases.iter().enumerate() {
        let t0 = Instant::now();
        builder.phase = phase;
        builder.report_progress(true);
        if cancel.load(Ordering::Relaxed) {
            return Err(LoadError::new(path, Problem::Cancelled));
        }
        run(&mut builder).map_err(|e| builder.error(&e))?;
        times.0.push((phase, t0.elapsed()));
        let later = &phases[i + 1..];
        if let (Some(publish), false) = (on_partial.as_mut(), later.is_empty()) {
            publish(builder.snapshot(later.iter().map(|p| p.2).collect()));
        }
    }
    if let Some(carry) = builder.carry.as_deref() {
        builder.trace.lineage = carry.lineage.clone();
    }
    let trace = builder.finish();
    Ok((trace, times))
}

/// The phases of a load that reads what `options` ask, the sampling's
/// reading started where it is read (see the module), and what the trace
/// will say of it ([`CpuSamplingRead`]). A sampled report loaded without
/// it has no sampling phase; one nsys did not sample keeps the phase (it
/// reads any Python samples, and costs nothing else).
fn plan(b: &mut Builder, options: LoadOptions) -> Vec<PhaseStep> {
    let sampled = cpu_sampling::sampled(b);
    b.trace.info.cpu_sampling = match (sampled, options.cpu_sampling) {
        (false, _) => CpuSamplingRead::NotRecorded,
        (true, true) => CpuSamplingRead::Read,
        (true, false) => CpuSamplingRead::NotRead,
    };
    if sampled && !options.cpu_sampling {
        // Where they lie, about: a report of samples alone has no other time.
        b.axis_of_unread = cpu_sampling::time_hint(b);
        return (PHASES.iter())
            .filter(|(_, _, adds)| *adds != CPU_SAMPLING)
            .copied()
            .collect();
    }
    cpu_sampling::start(b);
    PHASES.to_vec()
}

/// One step of a load.
type Phase = fn(&mut Builder) -> rusqlite::Result<()>;

/// A phase of a load: its name for progress, its step, what it adds.
type PhaseStep = (&'static str, Phase, &'static str);

/// The phases of a load: a name for progress, the step, and what it adds
/// (what a snapshot lists as still to come). Ordered for a user opening a big
/// report: first what the report says about its machine (threads, GPUs, the
/// time axis), read in moments; then the GPU rows, what a CUDA profile is
/// opened for; then the NVTX ranges that name that work (few rows); then the
/// CUDA API and OS runtime calls, the most rows of a report and the least
/// looked at; then the links between calls and GPU work, which need both;
/// then the kernel metrics; last the CPU samples and scheduling nsys's
/// sampling recorded, which nothing before needs: a sampled report's
/// switches can outnumber its other events, and its timeline is whole and
/// usable (a snapshot) while they are read. (A sampled report's are read on
/// threads of their own from the start: see `cpu_sampling`.)
pub(super) const PHASES: [PhaseStep; 8] = [
    ("strings and threads", read_layout, "threads and GPUs"),
    ("GPU events", gpu::read_gpu_events, GPU_ROWS),
    ("NVTX", nvtx::read_nvtx, "NVTX ranges"),
    ("CUDA API", cpu::read_api_events, "CUDA API calls"),
    ("OS runtime", cpu::read_osrt, "OS runtime calls"),
    (
        "indexes",
        gpu::build_correlation,
        "links between CUDA API calls and GPU work",
    ),
    (
        "kernel metrics",
        kernel_metrics::read_kernel_metrics,
        "kernel metrics",
    ),
    ("CPU samples", cpu_sampling::read_cpu_sampling, CPU_SAMPLING),
];

/// What a snapshot lists as still to come until the GPU events are read.
pub const GPU_ROWS: &str = "GPU rows";

/// What a snapshot lists as still to come until the CPU samples and
/// scheduling are read (the load's last phase, or [`read_cpu_sampling`]).
pub const CPU_SAMPLING: &str = "CPU samples and scheduling";

/// What the views that show them say while they are read.
pub const READING_CPU_SAMPLES: &str = "reading CPU samples…";

/// Whether `trace` (a snapshot of a load, or a load that left them) has CPU
/// samples and scheduling still to come: listed as still to come, in a
/// report nsys sampled.
pub fn cpu_samples_to_come(trace: &Trace) -> bool {
    trace.info.still_loading.contains(&CPU_SAMPLING)
        && trace.info.cpu_sampling != CpuSamplingRead::NotRecorded
}

/// The first phase: names, threads' names, GPUs, and a first guess at the
/// time axis, so that the first snapshot can draw one.
fn read_layout(b: &mut Builder) -> rusqlite::Result<()> {
    cpu::read_names(b)?;
    session::read_session(b)?;
    diagnostics::read_diagnostics(b);
    gpu::read_devices(b)?;
    // Only a load that publishes the trace as read draws from it (a few
    // thousand rows read per table: a live snapshot's fifth, for nothing).
    if b.publishes {
        b.axis_hint = EVENT_TABLES
            .iter()
            .filter_map(|t| b.report.time_hint(t))
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
    }
    Ok(())
}

/// A message from a background load. `attempt` is [`Loaded::attempt`].
pub enum LoadMessage {
    Progress(Progress),
    /// The report so far, shared (see [`load_progressive`]).
    Partial {
        trace: Arc<Trace>,
        attempt: usize,
    },
    Done {
        result: Box<Result<Trace, LoadError>>,
        attempt: usize,
    },
}

/// A load running on a worker thread.
pub struct LoadJob {
    pub path: PathBuf,
    /// The load's progress, snapshots and result, in order: the one job type.
    pub job: Job<LoadMessage>,
}

impl LoadJob {
    /// Loads `path`, reading what `options` ask.
    pub fn spawn(path: PathBuf, options: LoadOptions) -> LoadJob {
        let job_path = path.clone();
        Self::start(path, move |cancel, emit| {
            let mut send = |p: Progress| {
                emit.send(LoadMessage::Progress(p));
            };
            let mut publish = |attempt, trace| {
                emit.send(LoadMessage::Partial {
                    trace: Arc::new(trace),
                    attempt,
                });
            };
            let (result, attempt) =
                match load_progressive(&job_path, options, &mut send, &mut publish, cancel) {
                    Ok(l) => (Ok(l.trace), l.attempt),
                    Err(e) => (Err(e), 0),
                };
            emit.send(LoadMessage::Done {
                result: Box::new(result),
                attempt,
            });
        })
    }

    /// Reads the CPU samples and scheduling of `trace` (a load of `path`
    /// without them, attempt `attempt`): progress, then `Done` with the trace
    /// with them ([`read_cpu_sampling`]), as a load's last phase would.
    pub fn read_cpu_sampling(path: PathBuf, trace: Arc<Trace>, attempt: usize) -> LoadJob {
        let job_path = path.clone();
        Self::start(path, move |cancel, emit| {
            let mut send = |p: Progress| {
                emit.send(LoadMessage::Progress(p));
            };
            let result = read_cpu_sampling(&job_path, &trace, &mut send, cancel);
            emit.send(LoadMessage::Done {
                result: Box::new(result),
                attempt,
            });
        })
    }

    /// Runs `work` on a worker thread, its messages the job's; a job that
    /// could not start says so as its result.
    fn start(
        path: PathBuf,
        work: impl FnOnce(&Arc<AtomicBool>, &crate::job::Emitter<LoadMessage>) + Send + 'static,
    ) -> LoadJob {
        let mut job = Job::default();
        let started = job.start_stream("sightline-loader", None, work);
        if !started {
            // No thread, no load: report it as the result.
            let (tx, rx) = crossbeam_channel::bounded(1);
            let err = LoadError::new(&path, Problem::Unreadable("no thread to load on".into()));
            let _ = tx.send(LoadMessage::Done {
                result: Box::new(Err(err)),
                attempt: 0,
            });
            job = Job::from_receiver(rx);
        }
        LoadJob { path, job }
    }

    /// A load whose messages someone else sends (a test that feeds a real
    /// load's messages at its own pace).
    pub fn from_channel(path: PathBuf, messages: Receiver<LoadMessage>) -> LoadJob {
        LoadJob {
            path,
            job: Job::from_receiver(messages),
        }
    }

    /// The load's messages, to wait on with a deadline (tests).
    pub fn messages(&self) -> Receiver<LoadMessage> {
        self.job.receiver()
    }

    /// The next message of the load, when one is in.
    pub fn take_next(&mut self) -> Option<LoadMessage> {
        self.job.take_next()
    }

    /// Asks the load to stop (it ends at its next check, saying so).
    pub fn cancel(&self) {
        self.job.ask_to_stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy of fixture `name` to change (named after `tag`), and a
    /// connection to it.
    fn working_copy(name: &str, tag: &str) -> (std::path::PathBuf, rusqlite::Connection) {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let path =
            std::env::temp_dir().join(format!("sightline-{tag}-{}.sqlite", std::process::id()));
        std::fs::copy(&source, &path).expect("copy");
        let conn = rusqlite::Connection::open(&path).expect("open");
        (path, conn)
    }

    /// Puts the rows saved in table `saved` (with their rowid as `r`) back
    /// into `table`, at their rowids.
    fn put_back(conn: &rusqlite::Connection, table: &str, saved: &str) {
        let columns: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("columns");
        let columns = columns.join(", ");
        conn.execute_batch(&format!(
            "INSERT INTO {table} (rowid, {columns}) SELECT r, {columns} FROM \"{saved}\" ORDER BY r"
        ))
        .expect("rows put back");
    }

    /// The rows a trace's correlation links cover: API calls and GPU
    /// operations.
    fn linked_rows(t: &Trace) -> u64 {
        (t.cuda_api.spans.len()
            + t.kernels.spans.len()
            + t.memcpys.spans.len()
            + t.memsets.spans.len()
            + t.syncs.spans.len()) as u64
    }

    /// A growing report whose other tables stay empty (a capture's OS runtime
    /// table: it never gets a row) links each API call and kernel once, not
    /// again at every load: an empty table read afresh each load does not
    /// make the links start over. (It did: a 17.6M-event capture's loads took
    /// 70 ms instead of 8.)
    #[test]
    fn an_empty_table_does_not_make_the_links_start_over() {
        let (path, conn) = working_copy("streams.sqlite", "links");
        let half = |table: &str| {
            format!(
                "CREATE TABLE \"later {table}\" AS SELECT rowid AS r, * FROM {table} \
                 WHERE rowid > (SELECT max(rowid) / 2 FROM {table});
                 DELETE FROM {table} WHERE rowid > (SELECT max(rowid) / 2 FROM {table});"
            )
        };
        conn.execute_batch(&format!(
            "DELETE FROM OSRT_API; {} {}",
            half("CUPTI_ACTIVITY_KIND_KERNEL"),
            half("CUPTI_ACTIVITY_KIND_RUNTIME")
        ))
        .expect("first half");
        let mut carry = Carry::default();
        let first = load_growing(&path, &mut carry).expect("first load");
        for table in ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"] {
            put_back(&conn, table, &format!("later {table}"));
        }
        let second = load_growing(&path, &mut carry).expect("second load");
        drop(conn);
        let _ = std::fs::remove_file(&path);
        assert!(first.cuda_api.spans.len() < second.cuda_api.spans.len());
        assert_eq!(
            carry.rows_linked,
            linked_rows(&second),
            "each API call and GPU operation linked once"
        );
    }

    /// A table whose first rows come at a later load (a capture's first
    /// copy, long after its kernels began) renumbers nothing: the links made
    /// so far stay, and the other tables keep their indexes.
    #[test]
    fn a_tables_first_rows_coming_late_do_not_make_the_links_start_over() {
        let (path, conn) = working_copy("streams.sqlite", "late");
        conn.execute_batch(
            "CREATE TABLE later AS SELECT rowid AS r, * FROM CUPTI_ACTIVITY_KIND_MEMCPY;
             DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY;",
        )
        .expect("no copies yet");
        let mut carry = Carry::default();
        let first = load_growing(&path, &mut carry).expect("first load");
        assert!(first.memcpys.spans.is_empty());
        let linked = carry.rows_linked;
        put_back(&conn, "CUPTI_ACTIVITY_KIND_MEMCPY", "later");
        let second = load_growing(&path, &mut carry).expect("second load");
        drop(conn);
        let _ = std::fs::remove_file(&path);
        assert!(!second.memcpys.spans.is_empty());
        assert_eq!(
            carry.rows_linked - linked,
            second.memcpys.spans.len() as u64,
            "only the copies were linked"
        );
        for kind in crate::model::EventKind::ALL {
            assert!(
                second.lineage.keeps_indexes_of(&first.lineage, kind)
                    || kind == crate::model::EventKind::Nvtx,
                "{kind:?} numbered anew"
            );
        }
    }

    /// A load that fails leaves nothing half kept: the next one reads the
    /// report from its first row, as a new lineage.
    #[test]
    fn after_a_failed_load_the_next_starts_the_report_over() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/streams.sqlite");
        let mut carry = Carry::default();
        let first = load_growing(&path, &mut carry).expect("first load");
        assert!(load_growing(&path.with_extension("missing"), &mut carry).is_err());
        let again = load_growing(&path, &mut carry).expect("load after the failure");
        assert_eq!(again.event_count(), first.event_count());
        assert_ne!(again.lineage.report, first.lineage.report);
        for kind in crate::model::EventKind::ALL {
            assert!(!again.lineage.keeps_indexes_of(&first.lineage, kind));
        }
        assert_eq!(
            carry.rows_linked,
            linked_rows(&again),
            "linked from nothing"
        );
    }
}
