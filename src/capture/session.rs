//! One capture from start to finish, off the caller's thread.
//!
//! A controller thread checks the machine, reads the GPU's properties, starts
//! CUPTI, then runs the benchmark on a thread of its own. CUPTI's thread
//! decodes buffers and sends record batches; the controller appends them to
//! the working file ([`LiveReport`]), while a thread of the
//! [`super::publisher`] loads snapshots of the report as it grows, so writing
//! never waits for a load.
//! The caller (the window or the CLI) only receives [`CaptureMessage`]s: it
//! never blocks on the capture.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::job::Job;

use super::benchmarks::{self, BenchError, BenchmarkSpec, Params};
use super::counters::{self, CounterError, CounterRequest};
use super::cupti::{ActivityCapture, Batch};
use super::dump::DumpWriter;
use super::environment::{self, CaptureError};
use super::live::LiveReport;
pub use super::messages::{
    CaptureMessage, CaptureResult, CounterOutcome, LiveStatus, Outbox, Wake,
};
use super::publisher::{MIN_SNAPSHOT_INTERVAL, Publisher};
use crate::model::Trace;
use crate::synth::rows::GpuRow;

/// Options of a capture besides the benchmark.
#[derive(Debug, Clone, Default)]
pub struct CaptureOptions {
    /// Also write the raw CUPTI records here (tests/fixtures material).
    pub dump_records: Option<PathBuf>,
    /// Publish snapshots while running (the window does; the CLI need not).
    pub live_snapshots: bool,
    /// Hardware counters per kernel, from a separate counter pass.
    pub counters: Option<CounterRequest>,
    /// Also write the counter pass's raw counter data here (test material).
    pub dump_counters: Option<PathBuf>,
}

/// A capture running in the background: the one job type, streaming the capture's messages.
pub struct CaptureJob {
    /// What is being captured: the benchmark, or `replay FILE`.
    pub label: String,
    job: Job<CaptureMessage>,
}

impl CaptureJob {
    /// Starts capturing `spec` with `params`.
    pub fn spawn(
        spec: &'static BenchmarkSpec,
        params: Params,
        options: CaptureOptions,
    ) -> CaptureJob {
        CaptureJob::spawn_with(&format!("capture {}", spec.name), move |stop, tx| {
            capture(spec, &params, &options, &stop, &tx)
        })
    }

    /// Runs `source` on a thread of its own, at the caller's priority (it must keep up with
    /// CUPTI); its result ends the job.
    pub(crate) fn spawn_with(
        label: &str,
        source: impl FnOnce(Arc<AtomicBool>, Outbox) -> Result<CaptureResult, CaptureError>
        + Send
        + 'static,
    ) -> CaptureJob {
        let mut job = Job::default();
        let started = job.start_stream_in_front("sightline-capture", None, move |stop, tx| {
            let result = source(stop.clone(), tx.clone());
            tx.send(CaptureMessage::Finished(result.map(Box::new)));
        });
        if !started {
            let (tx, rx) = crossbeam_channel::bounded(1);
            let _ = tx.send(CaptureMessage::Finished(Err(CaptureError::Benchmark(
                "could not start the capture thread".into(),
            ))));
            job = Job::from_receiver(rx);
        }
        CaptureJob {
            label: label.to_string(),
            job,
        }
    }

    /// Calls `wake` after each message from now on (the first waker given
    /// stays; a later one is ignored).
    pub fn wake_with(&self, wake: Wake) {
        self.job.wake_with(wake);
    }

    /// Whether a waker was given.
    pub fn wakes(&self) -> bool {
        self.job.wakes()
    }

    /// Asks the benchmark to stop; what was recorded until then is kept, and the capture's
    /// last messages still come.
    pub fn stop(&self) {
        self.job.ask_to_stop();
    }

    /// The next message, when one is in.
    pub fn take_next(&mut self) -> Option<CaptureMessage> {
        self.job.take_next()
    }

    /// The capture's messages, to wait on with a deadline (tests, the command line).
    pub fn messages(&self) -> crossbeam_channel::Receiver<CaptureMessage> {
        self.job.receiver()
    }
}

/// Runs a whole capture on this thread.
pub fn capture(
    spec: &'static BenchmarkSpec,
    params: &Params,
    options: &CaptureOptions,
    stop: &Arc<AtomicBool>,
    messages: &Outbox,
) -> Result<CaptureResult, CaptureError> {
    benchmarks::validate(spec, params).map_err(|e| CaptureError::Benchmark(e.to_string()))?;
    environment::check_cupti()?;
    // Counters are checked before anything runs: a misspelt metric stops the
    // capture here; any other problem only drops the counters.
    let prepared = match &options.counters {
        None => None,
        Some(request) => match counters::pass::prepare(request) {
            Ok(p) => Some(Ok(p)),
            Err(CounterError::UnknownMetric(why)) => return Err(CaptureError::Benchmark(why)),
            Err(e) => Some(Err(e.to_string())),
        },
    };
    let pid = std::process::id();
    let mut live = LiveReport::create(
        pid,
        &format!("sightline capture {}", spec.name),
        &format!(
            "sightline {}: live capture of `{}`",
            env!("CARGO_PKG_VERSION"),
            spec.name
        ),
    )
    .map_err(CaptureError::Save)?;
    // Device facts come from driver queries made before CUPTI starts, so
    // they add no API calls to the trace.
    for gpu in read_gpus() {
        live.add_gpu(&gpu.row()).map_err(CaptureError::Save)?;
    }
    let mut dump = match &options.dump_records {
        Some(path) => Some(
            DumpWriter::create(path)
                .map_err(|e| CaptureError::Save(format!("{}: {e}", path.display())))?,
        ),
        None => None,
    };
    // CUPTI stamps records with CLOCK_REALTIME nanoseconds (capture-notes.md).
    let origin = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    live.set_origin(origin);
    let (batch_tx, batches) = crossbeam_channel::unbounded::<Batch>();
    let activity = ActivityCapture::start(batch_tx, dump.is_some())?;
    let started = Instant::now();

    let (tid_tx, tid_rx) = crossbeam_channel::bounded(1);
    let bench_stop = stop.clone();
    let output_tx = messages.clone();
    let bench_params = params.clone();
    let bench = std::thread::Builder::new()
        .name(format!("bench {}", spec.name))
        .spawn(move || {
            let _ = tid_tx.send(current_tid());
            let mut out = LineSender {
                pending: Vec::new(),
                to: output_tx,
            };
            let result = benchmarks::run(spec, &bench_params, &mut out, &bench_stop);
            out.flush_line();
            result
        })
        .map_err(|e| CaptureError::Benchmark(format!("could not start the benchmark: {e}")))?;
    if let Ok(Some(tid)) = tid_rx.recv_timeout(Duration::from_secs(5)) {
        live.name_thread(tid, &format!("bench {}", spec.name));
    }

    let mut publisher = Publisher::new(started, &mut live, options.live_snapshots, messages);
    let mut append = |live: &mut LiveReport, batch: Batch| -> Result<(), CaptureError> {
        if let (Some(dump), Some(raw)) = (dump.as_mut(), batch.raw.as_ref()) {
            dump.write(raw)
                .map_err(|e| CaptureError::Save(format!("record dump: {e}")))?;
        }
        live.append(&batch.records).map_err(CaptureError::Save)
    };
    // Snapshots are loaded on the publisher's thread: this one only writes.
    while !bench.is_finished() {
        match batches.recv_timeout(MIN_SNAPSHOT_INTERVAL) {
            Ok(batch) => {
                append(&mut live, batch)?;
                publisher.written(&live, batches.len());
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        }
    }
    publisher.finish(&mut live);
    let bench_result = bench
        .join()
        .unwrap_or_else(|_| Err(BenchError::Internal("the benchmark thread panicked".into())));
    // Everything still in CUPTI's buffers arrives before stop returns.
    let dropped_records = activity.stop();
    while let Ok(batch) = batches.try_recv() {
        append(&mut live, batch)?;
    }
    if let Some(mut dump) = dump {
        dump.write_started_ranges(&super::nvtx::started_range_ids())
            .and_then(|()| dump.finish())
            .map_err(|e| CaptureError::Save(format!("record dump: {e}")))?;
    }
    live.close_open_ranges().map_err(CaptureError::Save)?;
    let mut trace = Arc::new(live.snapshot().map_err(CaptureError::Save)?);
    let status = publisher.status(&live);
    let (stopped_early, benchmark_error) = match bench_result {
        Ok(()) => (false, None),
        Err(BenchError::Cancelled) => (true, None),
        Err(e) => (false, Some(e.to_string())),
    };
    let counters = match prepared {
        None => None,
        Some(Err(why)) => Some(CounterOutcome::Skipped(why)),
        // A run that failed or was stopped is not run again.
        Some(Ok(_)) if stopped_early || benchmark_error.is_some() => Some(CounterOutcome::Skipped(
            "the benchmark did not finish: no counter pass".into(),
        )),
        Some(Ok(prepared)) => 'pass: {
            let replay = counters::pass::replay_for(&trace);
            let max_ranges = match counters::pass::range_room(&trace, replay, prepared.passes) {
                Ok(room) => room,
                Err(why) => break 'pass Some(CounterOutcome::Skipped(why)),
            };
            let how = match replay {
                counters::Replay::User => "once per pass",
                counters::Replay::Kernel => {
                    "once, each kernel replayed per pass (it launches CUDA graphs)"
                }
            };
            messages.send(CaptureMessage::Output(format!(
                "counter pass: running {} again under CUPTI's range profiler, {how} ({} metrics, \
                 {} pass{}) …",
                spec.name,
                prepared.request.metrics.len(),
                prepared.passes,
                if prepared.passes == 1 { "" } else { "es" }
            )));
            let pass = CounterPass { replay, max_ranges };
            let outcome = counter_pass(spec, params, options, &prepared, &trace, pass, stop);
            if let CounterOutcome::Collected(set) = &outcome {
                live.write_kernel_metrics(&trace, set)
                    .map_err(CaptureError::Save)?;
                trace = Arc::new(live.snapshot().map_err(CaptureError::Save)?);
            }
            Some(outcome)
        }
    };
    // The window shows a report's warnings: a capture without the counters
    // asked for says why there, and one that could not be shown live.
    if let Some(t) = Arc::get_mut(&mut trace) {
        if let Some(CounterOutcome::Skipped(why)) = &counters {
            t.warnings.push(format!("no counters: {why}"));
        }
        if options.live_snapshots {
            t.warnings.extend(live.not_shown_live());
        }
    }
    Ok(CaptureResult {
        trace,
        live,
        status,
        dropped_records,
        stopped_early,
        benchmark_error,
        counters,
    })
}

/// How the counter pass runs: its replay mode and the ranges it has room for.
struct CounterPass {
    replay: counters::Replay,
    max_ranges: usize,
}

/// Runs the benchmark a second time, on this thread, under the range
/// profiler, and joins its counters to the timeline's kernels.
fn counter_pass(
    spec: &'static BenchmarkSpec,
    params: &Params,
    options: &CaptureOptions,
    prepared: &counters::pass::Prepared,
    trace: &Trace,
    CounterPass { replay, max_ranges }: CounterPass,
    stop: &Arc<AtomicBool>,
) -> CounterOutcome {
    let ran = counters::pass::run_pass(prepared, max_ranges, replay, || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            benchmarks::run(spec, params, &mut std::io::sink(), stop).map_err(|e| e.to_string())
        }))
        .unwrap_or_else(|_| Err("the benchmark panicked".into()))
    });
    let ranges = match ran {
        Ok(r) => r,
        Err(e) => return CounterOutcome::Skipped(e.to_string()),
    };
    if let Some(dir) = &options.dump_counters
        && let Err(e) = counters::pass::dump(dir, prepared, &ranges)
    {
        return CounterOutcome::Skipped(format!("writing {}: {e}", dir.display()));
    }
    CounterOutcome::Collected(counters::pass::to_kernel_metrics(
        &prepared.request,
        &ranges,
        prepared.passes,
        trace,
    ))
}

/// Forwards what the benchmark prints, a line at a time.
struct LineSender {
    pending: Vec<u8>,
    to: Outbox,
}

impl LineSender {
    fn flush_line(&mut self) {
        if !self.pending.is_empty() {
            let line = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            self.to.send(CaptureMessage::Output(line));
        }
    }
}

impl Write for LineSender {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            if b == b'\n' {
                self.flush_line();
            } else {
                self.pending.push(b);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The OS thread id of the calling thread (what CUPTI and nsys report).
fn current_tid() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// A device's properties, as `TARGET_INFO_GPU` stores them.
struct GpuFacts {
    ordinal: u32,
    name: String,
    bus: String,
    attributes: [i64; 9],
}

impl GpuFacts {
    fn row(&self) -> GpuRow<'_> {
        let [
            sms,
            major,
            minor,
            clock_khz,
            l2,
            mem_clock_khz,
            bus_width,
            total,
            _,
        ] = self.attributes;
        GpuRow {
            device_id: self.ordinal,
            name: &self.name,
            bus_location: &self.bus,
            l2_cache_bytes: l2.max(0) as u64,
            memory_bytes: total.max(0) as u64,
            // Double data rate: two transfers per memory clock.
            memory_bandwidth: (mem_clock_khz.max(0) as u64 * 1000 * 2 * bus_width.max(0) as u64)
                / 8,
            clock_rate_hz: clock_khz.max(0) as u64 * 1000,
            sm_count: sms.max(0) as u32,
            compute_capability: (major.max(0) as u32, minor.max(0) as u32),
        }
    }
}

/// Every device's properties, read with plain driver queries (no context).
/// A device that cannot be read is left out; the loader then names it by id.
fn read_gpus() -> Vec<GpuFacts> {
    use cudarc::driver::result::device;
    use cudarc::driver::sys::CUdevice_attribute as A;
    if cudarc::driver::result::init().is_err() {
        return Vec::new();
    }
    let count = device::get_count().unwrap_or(0).max(0);
    let mut gpus = Vec::new();
    for ordinal in 0..count {
        let Ok(dev) = device::get(ordinal) else {
            continue;
        };
        let attr = |a: A| -> i64 {
            // SAFETY: a valid device handle from cuDeviceGet.
            unsafe { device::get_attribute(dev, a) }.map_or(0, i64::from)
        };
        let pci = (
            attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
            attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
            attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
        );
        // SAFETY: a valid device handle from cuDeviceGet.
        let total = unsafe { device::total_mem(dev) }.map_or(0, |t| t as i64);
        gpus.push(GpuFacts {
            ordinal: ordinal as u32,
            name: device::get_name(dev).unwrap_or_else(|_| format!("GPU {ordinal}")),
            bus: format!("{:04x}:{:02x}:{:02x}.0", pci.0, pci.1, pci.2),
            attributes: [
                attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
                attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
                attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
                attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
                total,
                0,
            ],
        });
    }
    gpus
}
