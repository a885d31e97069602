//! CUPTI's Activity API, live: buffers are handed to CUPTI, filled with
//! records of the kinds we enable, and handed back on a CUPTI-owned thread,
//! where they are decoded ([`super::records`]) and sent on as batches through a
//! crossbeam channel. Nothing here blocks the thread that runs CUDA work.
//!
//! CUPTI completes buffers only when they are full unless asked: a flusher
//! thread calls `cuptiActivityFlushAll(0)` every [`FLUSH_PERIOD`]. The probe
//! on the GPU machine, flushing every 50 ms, measured a median record age of
//! 19 ms for 0.4 ms a call (capture-notes.md).
//!
//! The buffer callbacks are plain C functions with no user pointer, so the
//! channel they send to lives in a process-wide slot; one capture runs at a
//! time ([`ActivityCapture::start`] refuses a second).

use std::alloc::Layout;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::Sender;
use cudarc::cupti::sys as cupti;

use super::environment::{self, CaptureError};
use super::records::{self, ApiDomain, Record, StringSource};

/// How often records are pushed out of CUPTI while a capture runs. An event
/// waits for the next flush, then for the next snapshot
/// ([`super::publisher::MIN_SNAPSHOT_INTERVAL`]): at 50 ms each an event
/// reached a snapshot after 134–287 ms at the 95th percentile, at 20 ms each
/// after 70–95 ms (H200, `capture launch-overhead --launches 100000
/// --iterations 35 --live`, BENCHMARKS.md). Host time per launch showed no
/// difference between 50, 20 and 10 ms (4.3–6.2 µs either way, noise).
pub const FLUSH_PERIOD: Duration = Duration::from_millis(20);

/// Size of each activity buffer. A buffer is a batch for the writer, and its
/// newest record waits for the whole batch: at the ~0.7M kernels/s of a
/// CUDA-graph replay an 8 MiB buffer (~40k records) is about what comes
/// between two flushes, and the newest event was ~130 ms old when written. With
/// 1 MiB events reached the screen 8–17 ms sooner (median) and the
/// p95 fell from 173–1,077 to 125–160 ms, with no records dropped and no
/// per-launch cost that the runs could tell from noise (H200, BENCHMARKS.md).
const BUFFER_BYTES: usize = 1 << 20;
/// CUPTI requires buffers aligned to 8 bytes.
const BUFFER_ALIGN: usize = 8;

/// The activity kinds a capture enables: what the viewer shows for an nsys
/// report (kernels, copies, memsets, runtime and driver API, synchronization,
/// NVTX ranges and their attributes).
const KINDS: [cupti::CUpti_ActivityKind; 8] = [
    cupti::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    cupti::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMCPY,
    cupti::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMSET,
    cupti::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_RUNTIME,
    cupti::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_DRIVER,
    cupti::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    cupti::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MARKER,
    cupti::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MARKER_DATA,
];

/// Records decoded from one completed buffer.
#[derive(Debug, Default)]
pub struct Batch {
    pub records: Vec<Record>,
    /// The buffer's raw records, for a record dump (see [`super::dump`]), when
    /// one was asked for.
    pub raw: Option<super::dump::RawBuffer>,
}

/// Where completed buffers go, and whether raw copies are wanted.
struct Sink {
    batches: Sender<Batch>,
    keep_raw: bool,
}

static SINK: Mutex<Option<Sink>> = Mutex::new(None);
/// Records CUPTI reported dropped (its buffers were full), over all captures.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// A running activity capture; [`ActivityCapture::stop`] ends it.
pub struct ActivityCapture {
    flusher: Option<JoinHandle<()>>,
    stop_flusher: Arc<AtomicBool>,
    dropped_at_start: u64,
}

impl ActivityCapture {
    /// Enables the activity kinds and starts delivering batches to `batches`.
    /// Must be called before the CUDA work to record starts.
    pub fn start(batches: Sender<Batch>, keep_raw: bool) -> Result<ActivityCapture, CaptureError> {
        environment::check_cupti()?;
        {
            let mut sink = SINK
                .lock()
                .map_err(|_| CaptureError::Cupti("the capture state was poisoned".into()))?;
            if sink.is_some() {
                return Err(CaptureError::Busy);
            }
            *sink = Some(Sink { batches, keep_raw });
        }
        let started = Self::enable();
        if let Err(e) = started {
            Self::disable();
            clear_sink();
            return Err(e);
        }
        let stop_flusher = Arc::new(AtomicBool::new(false));
        let stop = stop_flusher.clone();
        let flusher = std::thread::Builder::new()
            .name("sightline-cupti-flush".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(FLUSH_PERIOD);
                    // Not forced (0): a forced flush also hands over records
                    // of work still running, with zero timestamps (seen on
                    // the H100: kernels at 0 ns that nsys timed at 16 µs).
                    // SAFETY: CUPTI is loaded (checked in start) and the call
                    // takes no pointers.
                    let _ = unsafe { cupti::cuptiActivityFlushAll(0) };
                }
            })
            .ok();
        Ok(ActivityCapture {
            flusher,
            stop_flusher,
            dropped_at_start: DROPPED.load(Ordering::Relaxed),
        })
    }

    fn enable() -> Result<(), CaptureError> {
        // SAFETY: (all calls below) CUPTI is loaded (environment::check_cupti);
        // the callbacks are `extern "C"` functions that live for the whole
        // program and never unwind.
        unsafe {
            // Thread ids as the OS knows them (gettid), the ids nsys reports.
            cupti::cuptiSetThreadIdType(
                cupti::CUpti_ActivityThreadIdType::CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM,
            )
            .result()
            .map_err(|e| cupti_error("setting the thread id type", e))?;
            cupti::cuptiActivityRegisterCallbacks(Some(buffer_requested), Some(buffer_completed))
                .result()
                .map_err(|e| cupti_error("registering buffer callbacks", e))?;
            for kind in KINDS {
                cupti::cuptiActivityEnable(kind)
                    .result()
                    .map_err(|e| cupti_error(&format!("enabling {kind:?}"), e))?;
            }
            Self::skip_untraced_calls();
        }
        Ok(())
    }

    /// Asks CUPTI not to record the API calls nsys does not trace: they
    /// would be dropped on conversion anyway, and cudarc makes two of them
    /// per launch, so not recording them at all halves the records of a
    /// launch loop and the cost per launch (BENCHMARKS.md).
    ///
    /// # Safety
    /// CUPTI must be loaded.
    unsafe fn skip_untraced_calls() {
        use cupti::CUpti_CallbackDomain as D;
        // SAFETY: CUPTI is loaded (this function's contract).
        for (domain, cbid, name) in unsafe { api_callbacks() } {
            if records::untraced_by_nsys(&name) {
                // SAFETY: plain calls taking the id CUPTI just named.
                let _ = unsafe {
                    if domain == D::CUPTI_CB_DOMAIN_DRIVER_API {
                        cupti::cuptiActivityEnableDriverApi(cbid, 0)
                    } else {
                        cupti::cuptiActivityEnableRuntimeApi(cbid, 0)
                    }
                };
            }
        }
    }

    fn disable() {
        for kind in KINDS {
            // SAFETY: CUPTI is loaded; disabling a kind that is not enabled
            // is harmless.
            let _ = unsafe { cupti::cuptiActivityDisable(kind) };
        }
    }

    /// Stops recording and delivers every record still in CUPTI's buffers
    /// before returning. Returns how many records CUPTI dropped.
    pub fn stop(mut self) -> u64 {
        self.finish()
    }

    fn finish(&mut self) -> u64 {
        self.stop_flusher.store(true, Ordering::Relaxed);
        if let Some(flusher) = self.flusher.take() {
            let _ = flusher.join();
        }
        Self::disable();
        // The benchmark has finished its work; a forced flush delivers
        // every record that remains.
        // SAFETY: CUPTI is loaded.
        let _ = unsafe { cupti::cuptiActivityFlushAll(1) };
        clear_sink();
        DROPPED.load(Ordering::Relaxed) - self.dropped_at_start
    }
}

impl Drop for ActivityCapture {
    fn drop(&mut self) {
        if self.flusher.is_some() {
            self.finish();
        }
    }
}

/// Every function of the driver and runtime API that CUPTI has a callback
/// id for: `(domain, id, name)`.
///
/// # Safety
/// CUPTI must be loaded.
pub(crate) unsafe fn api_callbacks() -> Vec<(cupti::CUpti_CallbackDomain, u32, String)> {
    use cupti::CUpti_CallbackDomain as D;
    let mut out = Vec::new();
    for domain in [
        D::CUPTI_CB_DOMAIN_DRIVER_API,
        D::CUPTI_CB_DOMAIN_RUNTIME_API,
    ] {
        // Callback ids are small dense integers; 4096 covers every CUDA 13 API.
        for cbid in 1..4096u32 {
            let mut name: *const std::ffi::c_char = std::ptr::null();
            // SAFETY: CUPTI writes a pointer to a static string it owns.
            let status = unsafe { cupti::cuptiGetCallbackName(domain, cbid, &mut name) };
            if status != cupti::CUptiResult::CUPTI_SUCCESS || name.is_null() {
                continue;
            }
            // SAFETY: a static NUL-terminated string (see above).
            let text = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            out.push((domain, cbid, text.into_owned()));
        }
    }
    out
}

fn clear_sink() {
    if let Ok(mut sink) = SINK.lock() {
        *sink = None;
    }
}

fn cupti_error(what: &str, e: cudarc::cupti::result::CuptiError) -> CaptureError {
    environment::cupti_failure(what, e.0)
}

/// CUPTI asks for an empty buffer.
unsafe extern "C" fn buffer_requested(
    buffer: *mut *mut u8,
    size: *mut usize,
    max_records: *mut usize,
) {
    let layout = Layout::from_size_align(BUFFER_BYTES, BUFFER_ALIGN);
    // SAFETY: the layout has a non-zero size; CUPTI passes valid out-pointers.
    unsafe {
        let memory = match layout {
            Ok(layout) => std::alloc::alloc(layout),
            Err(_) => std::ptr::null_mut(),
        };
        *buffer = memory;
        // A null buffer with size 0 tells CUPTI to drop records instead.
        *size = if memory.is_null() { 0 } else { BUFFER_BYTES };
        *max_records = 0;
    }
}

/// CUPTI hands back a filled buffer: decode it, send the batch, free it.
unsafe extern "C" fn buffer_completed(
    context: cudarc::driver::sys::CUcontext,
    stream_id: u32,
    buffer: *mut u8,
    _size: usize,
    valid_size: usize,
) {
    if buffer.is_null() {
        return;
    }
    // Never unwind into C: a panic here would abort the process.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: CUPTI gives back a buffer we allocated, `valid_size` bytes
        // of which hold records.
        unsafe { deliver(buffer, valid_size) };
    });
    let mut dropped = 0usize;
    // SAFETY: plain query with CUPTI's own context and stream values.
    if unsafe { cupti::cuptiActivityGetNumDroppedRecords(context, stream_id, &mut dropped) }
        .result()
        .is_ok()
    {
        DROPPED.fetch_add(dropped as u64, Ordering::Relaxed);
    }
    if let Ok(layout) = Layout::from_size_align(BUFFER_BYTES, BUFFER_ALIGN) {
        // SAFETY: allocated in buffer_requested with this layout.
        unsafe { std::alloc::dealloc(buffer, layout) };
    }
}

/// Walks a completed buffer with `cuptiActivityGetNextRecord` (records grow
/// between CUDA versions: never step with fixed strides) and sends the batch.
unsafe fn deliver(buffer: *mut u8, valid_size: usize) {
    let keep_raw = match SINK.lock() {
        Ok(sink) => match sink.as_ref() {
            Some(s) => s.keep_raw,
            None => return,
        },
        Err(_) => return,
    };
    let mut starts: Vec<usize> = Vec::new();
    let mut record: *mut cupti::CUpti_Activity = std::ptr::null_mut();
    loop {
        // SAFETY: buffer and size come from CUPTI; `record` is the cursor
        // CUPTI itself advances.
        let status = unsafe { cupti::cuptiActivityGetNextRecord(buffer, valid_size, &mut record) };
        if status != cupti::CUptiResult::CUPTI_SUCCESS || record.is_null() {
            break;
        }
        starts.push(record as usize - buffer as usize);
    }
    let mut strings = LiveStrings {
        seen: keep_raw.then(Vec::new),
    };
    let mut batch = Batch::default();
    let mut raw = keep_raw.then(super::dump::RawBuffer::default);
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(valid_size);
        // SAFETY: [start, end) lies inside the valid part of the buffer.
        let bytes = unsafe { std::slice::from_raw_parts(buffer.add(start), end - start) };
        if let Some(record) = records::decode(bytes, &mut strings) {
            batch.records.push(record);
            if let Some(raw) = raw.as_mut() {
                raw.records.push(bytes.to_vec());
            }
        }
    }
    if let (Some(raw), Some(seen)) = (raw.as_mut(), strings.seen.take()) {
        raw.strings = seen;
    }
    batch.raw = raw;
    if let Ok(sink) = SINK.lock()
        && let Some(sink) = sink.as_ref()
    {
        let _ = sink.batches.send(batch);
    }
}

/// Reads the strings records point at, copying them at once (CUPTI owns them).
struct LiveStrings {
    /// Pointer → text of every string read, for a record dump.
    seen: Option<Vec<super::dump::StringEntry>>,
}

impl StringSource for LiveStrings {
    fn read(&mut self, pointer: u64) -> String {
        if pointer == 0 {
            return String::new();
        }
        // SAFETY: CUPTI's record fields point at NUL-terminated strings that
        // stay valid while the record is being processed.
        let text = unsafe { CStr::from_ptr(pointer as usize as *const std::ffi::c_char) }
            .to_string_lossy()
            .into_owned();
        if let Some(seen) = self.seen.as_mut() {
            seen.push(super::dump::StringEntry::Pointer(pointer, text.clone()));
        }
        text
    }

    fn api_name(&mut self, domain: ApiDomain, cbid: u32) -> String {
        let cb_domain = match domain {
            ApiDomain::Runtime => cupti::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RUNTIME_API,
            ApiDomain::Driver => cupti::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_DRIVER_API,
        };
        let mut name: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: CUPTI writes a pointer to a static string it owns.
        let status = unsafe { cupti::cuptiGetCallbackName(cb_domain, cbid, &mut name) };
        let text = if status == cupti::CUptiResult::CUPTI_SUCCESS && !name.is_null() {
            // SAFETY: a static NUL-terminated string (see above).
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        } else {
            format!("CUDA API {cbid}")
        };
        if let Some(seen) = self.seen.as_mut() {
            seen.push(super::dump::StringEntry::Api(domain, cbid, text.clone()));
        }
        text
    }
}
