//! Cold caches for the counter runs, as Nsight Compute's default
//! `--cache-control all` gives: before every kernel launch of a counter run,
//! the GPU finishes its work and then runs a kernel of ours
//! (`kernels/l2_flush.cu`) that reads a buffer twice the size of the L2.
//!
//! Why a kernel that reads:
//! - Reading replaces every line the L2 held with a clean one, so the next
//!   kernel's first accesses miss (its DRAM reads are those of a cold cache),
//!   and the lines it evicts cost no write-back (its DRAM writes are its
//!   own). The dirty lines of the kernel before are written back during the
//!   flush, inside the flush's own counter range.
//! - A copy-engine read (a device-to-host copy of the buffer) was tried
//!   first: it left the L2 as it was (the DRAM reads of a GEMM's second
//!   launch stayed at 0 where ncu counts its whole 8.5 MB input; H200).
//! - A write (a memset) would leave dirty lines whose write-backs the next
//!   kernel's range would count.
//!
//! The flush kernels get counter ranges of their own (auto range counts
//! every kernel). Every launch is recorded in order, ours and the
//! benchmark's ([`CacheFlush::flush_ranges`]), so those ranges are dropped
//! before the counters are joined to the timeline.
//!
//! CUPTI 13.0's range profiler has no cache control of its own (it comes with
//! CUDA 13.4); this is done from a CUPTI callback on the launch calls, which
//! CUPTI allows to call the CUDA API. Launches into a stream being captured
//! into a graph run nothing and are left alone (a flush there would break
//! the capture). A flush that fails is counted and said in the counters'
//! notes; it never stops the benchmark.

use std::cell::Cell;
use std::ffi::{CStr, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use cudarc::cupti::sys as cupti;
use cudarc::driver::sys as driver;
use cudarc::runtime::sys as runtime;

use super::CounterError;
use super::host::check;
use super::target::PrimaryContext;

/// Whether a CUDA API function launches a kernel (and only that): the
/// runtime's `cudaLaunch*` and the driver's `cuLaunch*`, in every variant,
/// but not graph launches (many kernels, flushed once would be wrong for
/// all but the first) or host functions.
pub fn launches_a_kernel(name: &str) -> bool {
    (name.starts_with("cudaLaunch") || name.starts_with("cuLaunch"))
        && !name.contains("Graph")
        && !name.contains("Host")
}

/// Threads per block of the flush kernel, and blocks per SM.
const FLUSH_BLOCK: u32 = 256;
const FLUSH_BLOCKS_PER_SM: u32 = 4;

/// State the callback reads: CUPTI hands it back as the user pointer.
struct FlushState {
    buffer: driver::CUdeviceptr,
    /// 16-byte elements in `buffer`.
    elements: u64,
    sink: driver::CUdeviceptr,
    module: driver::CUmodule,
    function: driver::CUfunction,
    grid: u32,
    bytes: usize,
    flushes: AtomicUsize,
    failures: AtomicUsize,
    /// The kernels of the run under way, in launch order: true for a flush.
    launches: Mutex<Vec<bool>>,
    /// The same for each finished run.
    runs: Mutex<Vec<Vec<bool>>>,
}

thread_local! {
    /// How deep this thread is in launch calls: a runtime launch calls the
    /// driver's, and the flush launches a kernel itself; only the outermost
    /// call flushes and counts.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Whether the outermost launch under way runs a kernel (its stream is
    /// not being captured into a graph).
    static RUNS_A_KERNEL: Cell<bool> = const { Cell::new(false) };
}

/// A CUPTI subscriber that flushes the L2 cache before every kernel launch,
/// for as long as it lives.
pub struct CacheFlush {
    subscriber: cupti::CUpti_SubscriberHandle,
    state: Box<FlushState>,
}

impl CacheFlush {
    /// Compiles and loads the flush kernel, allocates its buffer in `ctx`
    /// (current on this thread) and subscribes to every kernel-launch call
    /// of the runtime and driver API.
    pub fn install(ctx: &PrimaryContext) -> Result<CacheFlush, CounterError> {
        let fail =
            |what: &str, r: driver::CUresult| CounterError::Cupti(format!("{what} failed: {r:?}"));
        let l2 = ctx.l2_bytes()?;
        let (major, minor, sms) = ctx.compute_capability()?;
        let cubin = crate::capture::benchmarks::compile_kernel(
            crate::capture::benchmarks::L2_FLUSH,
            &format!("sm_{major}{minor}"),
        )
        .map_err(|e| CounterError::Cupti(format!("compiling the cache flush: {e}")))?;
        // Twice the L2, in whole 16-byte elements: every line is replaced
        // even with the hashing of addresses over the L2's slices.
        let bytes = (l2 * 2).max(1 << 20) / 16 * 16;
        let mut flush = CacheFlush {
            subscriber: std::ptr::null_mut(),
            state: Box::new(FlushState {
                buffer: 0,
                elements: (bytes / 16) as u64,
                sink: 0,
                module: std::ptr::null_mut(),
                function: std::ptr::null_mut(),
                grid: sms.max(1) * FLUSH_BLOCKS_PER_SM,
                bytes,
                flushes: AtomicUsize::new(0),
                failures: AtomicUsize::new(0),
                launches: Mutex::new(Vec::new()),
                runs: Mutex::new(Vec::new()),
            }),
        };
        let s = &mut flush.state;
        // SAFETY: plain driver calls in the current context with
        // out-pointers into the state; whatever was made is released by
        // Drop (null or 0 means not made), on this path's errors too.
        unsafe {
            let r = driver::cuModuleLoadData(&mut s.module, cubin.as_ptr().cast());
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(fail("loading the cache-flush kernel", r));
            }
            let r = driver::cuModuleGetFunction(&mut s.function, s.module, c"l2_flush".as_ptr());
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(fail("finding the cache-flush kernel", r));
            }
            let r = driver::cuMemAlloc_v2(&mut s.buffer, bytes);
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(fail("allocating the cache-flush buffer", r));
            }
            let r = driver::cuMemAlloc_v2(&mut s.sink, 16);
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(fail("allocating the cache-flush buffer", r));
            }
            // Zeroed, so the flush kernel never writes (see l2_flush.cu).
            let r = driver::cuMemsetD8_v2(s.buffer, 0, bytes);
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(fail("clearing the cache-flush buffer", r));
            }
            let r = driver::cuCtxSynchronize();
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(fail("clearing the cache-flush buffer", r));
            }
        }
        let user = (&*flush.state as *const FlushState)
            .cast_mut()
            .cast::<c_void>();
        let mut subscriber: cupti::CUpti_SubscriberHandle = std::ptr::null_mut();
        // SAFETY: the callback is an `extern "C"` fn living for the process;
        // the state is boxed, so its address (the user pointer) stays valid
        // until Drop unsubscribes.
        check("subscribing to launch callbacks", unsafe {
            cupti::cuptiSubscribe(&mut subscriber, Some(on_api_call), user)
        })?;
        flush.subscriber = subscriber;
        let mut enabled = 0;
        // SAFETY: CUPTI is loaded (the subscription above succeeded).
        for (domain, cbid, name) in unsafe { crate::capture::cupti::api_callbacks() } {
            if launches_a_kernel(&name) {
                // SAFETY: a live subscriber and an id CUPTI just named.
                check("enabling a launch callback", unsafe {
                    cupti::cuptiEnableCallback(1, subscriber, domain, cbid)
                })?;
                enabled += 1;
            }
        }
        if enabled == 0 {
            return Err(CounterError::Cupti(
                "CUPTI names no kernel-launch call to flush the caches before".into(),
            ));
        }
        Ok(flush)
    }

    /// Closes a run of the benchmark: its launches are kept, and the next
    /// run's start afresh.
    pub fn end_run(&self) {
        let launches = match self.state.launches.lock() {
            Ok(mut l) => std::mem::take(&mut *l),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        if let Ok(mut runs) = self.state.runs.lock() {
            runs.push(launches);
        }
    }

    /// Which counter ranges are flushes (true) and which the benchmark's
    /// kernels, in range order: the launches of the first run, once every
    /// run launched the same sequence (the ranges of user replay are one
    /// run's).
    pub fn flush_ranges(&self) -> Result<Vec<bool>, String> {
        let runs = self
            .state
            .runs
            .lock()
            .map_err(|_| "the record of launches was lost".to_string())?;
        let first = runs.first().cloned().unwrap_or_default();
        if let Some(n) = runs.iter().position(|r| *r != first) {
            return Err(format!(
                "the counter runs launched different kernels (run 1: {}, run {}: {})",
                first.len(),
                n + 1,
                runs[n].len()
            ));
        }
        Ok(first)
    }

    /// Flushes done, and flushes that failed.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.state.flushes.load(Ordering::Relaxed),
            self.state.failures.load(Ordering::Relaxed),
        )
    }

    /// The bytes read per flush.
    pub fn bytes(&self) -> usize {
        self.state.bytes
    }
}

impl Drop for CacheFlush {
    fn drop(&mut self) {
        let s = &self.state;
        // SAFETY: unsubscribing first, so no callback uses the kernel or the
        // buffers after they are released; each came from `install`, and
        // null or 0 means it was never made.
        unsafe {
            if !self.subscriber.is_null() {
                let _ = cupti::cuptiUnsubscribe(self.subscriber);
            }
            if s.sink != 0 {
                let _ = driver::cuMemFree_v2(s.sink);
            }
            if s.buffer != 0 {
                let _ = driver::cuMemFree_v2(s.buffer);
            }
            if !s.module.is_null() {
                let _ = driver::cuModuleUnload(s.module);
            }
        }
    }
}

impl FlushState {
    /// Waits for the GPU, runs the flush kernel and waits for it, allowed
    /// even while another thread captures a graph. Records the flush's
    /// launch (its counter range) when the kernel was launched.
    ///
    /// # Safety
    /// Called on a thread whose current context holds the buffers.
    unsafe fn flush(&self) {
        let mut mode = driver::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        // SAFETY: plain driver calls; the kernel's parameters point to locals
        // that outlive the (synchronised) launch.
        unsafe {
            let _ = driver::cuThreadExchangeStreamCaptureMode(&mut mode);
            let ok = driver::cuCtxSynchronize() == driver::CUresult::CUDA_SUCCESS;
            let mut buffer = self.buffer;
            let mut elements = self.elements;
            let mut sink = self.sink;
            let mut params: [*mut c_void; 3] = [
                (&mut buffer as *mut driver::CUdeviceptr).cast(),
                (&mut elements as *mut u64).cast(),
                (&mut sink as *mut driver::CUdeviceptr).cast(),
            ];
            let launched = ok
                && driver::cuLaunchKernel(
                    self.function,
                    self.grid,
                    1,
                    1,
                    FLUSH_BLOCK,
                    1,
                    1,
                    0,
                    std::ptr::null_mut(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ) == driver::CUresult::CUDA_SUCCESS;
            if launched {
                self.record(true);
            }
            let done = launched && driver::cuCtxSynchronize() == driver::CUresult::CUDA_SUCCESS;
            let counter = if done { &self.flushes } else { &self.failures };
            counter.fetch_add(1, Ordering::Relaxed);
            let _ = driver::cuThreadExchangeStreamCaptureMode(&mut mode);
        }
    }

    fn record(&self, is_flush: bool) {
        match self.launches.lock() {
            Ok(mut l) => l.push(is_flush),
            Err(poisoned) => poisoned.into_inner().push(is_flush),
        }
    }
}

/// The stream a launch call goes to, from its parameters, for the forms
/// whose parameters are known (None for the others).
///
/// # Safety
/// `params` must be the `functionParams` CUPTI passed for the call `name`.
unsafe fn launch_stream(name: &str, params: *const c_void) -> Option<driver::CUstream> {
    if params.is_null() {
        return None;
    }
    // A per-thread-default-stream form's null stream is that thread's stream.
    let per_thread = name.contains("_ptsz");
    // SAFETY: each branch reads the parameter struct CUPTI documents for the
    // function; config pointers are checked for null.
    let stream = unsafe {
        if name.starts_with("cuLaunchKernelEx") {
            let p = &*params.cast::<cupti::cuLaunchKernelEx_params_st>();
            p.config.as_ref()?.hStream
        } else if name.starts_with("cuLaunchKernel") {
            (*params.cast::<cupti::cuLaunchKernel_params_st>()).hStream
        } else if name.starts_with("cudaLaunchKernelExC") {
            let p = &*params.cast::<cupti::cudaLaunchKernelExC_v11060_params_st>();
            let config: *const runtime::cudaLaunchConfig_t = p.config.cast();
            config.as_ref()?.stream.cast()
        } else if name.starts_with("cudaLaunchKernel") {
            (*params.cast::<cupti::cudaLaunchKernel_v7000_params_st>())
                .stream
                .cast()
        } else {
            return None;
        }
    };
    Some(if stream.is_null() && per_thread {
        // CU_STREAM_PER_THREAD.
        2usize as driver::CUstream
    } else {
        stream
    })
}

/// Whether `stream` is being captured into a graph (a launch there runs no
/// kernel).
fn capturing(stream: driver::CUstream) -> bool {
    let mut status = driver::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: a plain query with an out-pointer to a local.
    let r = unsafe { driver::cuStreamIsCapturing(stream, &mut status) };
    r != driver::CUresult::CUDA_SUCCESS
        || status != driver::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// The CUPTI callback: on entering an outermost launch call into a stream
/// not being captured, flush; on leaving it, record the benchmark's kernel
/// when the call succeeded.
unsafe extern "C" fn on_api_call(
    user: *mut c_void,
    _domain: cupti::CUpti_CallbackDomain,
    _cbid: cupti::CUpti_CallbackId,
    data: *const c_void,
) {
    if user.is_null() || data.is_null() {
        return;
    }
    // SAFETY: for the API domains CUPTI passes a CUpti_CallbackData.
    let data = unsafe { &*data.cast::<cupti::CUpti_CallbackData>() };
    // SAFETY: the user pointer is the state of a live CacheFlush.
    let state = unsafe { &*user.cast::<FlushState>() };
    if data.callbackSite == cupti::CUpti_ApiCallbackSite::CUPTI_API_ENTER {
        let depth = DEPTH.with(|d| d.replace(d.get() + 1));
        if depth > 0 {
            return;
        }
        let name = if data.functionName.is_null() {
            String::new()
        } else {
            // SAFETY: CUPTI's static NUL-terminated name of the function.
            unsafe { CStr::from_ptr(data.functionName) }
                .to_string_lossy()
                .into_owned()
        };
        // SAFETY: the parameters CUPTI passed for this very call.
        let stream = unsafe { launch_stream(&name, data.functionParams) };
        let runs = !stream.is_some_and(capturing);
        RUNS_A_KERNEL.with(|r| r.set(runs));
        if runs {
            // SAFETY: the launching thread's current context is the
            // benchmark's, the primary context the buffers live in.
            unsafe { state.flush() };
        }
    } else {
        let depth = DEPTH.with(|d| {
            let left = d.get().saturating_sub(1);
            d.set(left);
            left
        });
        if depth > 0 {
            return;
        }
        // Both APIs return 0 for success (CUresult, cudaError_t).
        let succeeded = !data.functionReturnValue.is_null()
            // SAFETY: CUPTI points it at the call's return value on exit.
            && unsafe { *data.functionReturnValue.cast::<i32>() } == 0;
        if succeeded && RUNS_A_KERNEL.with(|r| r.get()) {
            state.record(false);
        }
    }
}

/// The counter ranges of the benchmark's kernels: `is_flush` says, range by
/// range, which ones were flushes (dropped).
pub fn keep_kernels<T>(ranges: Vec<T>, is_flush: &[bool]) -> Result<Vec<T>, String> {
    if ranges.len() != is_flush.len() {
        return Err(format!(
            "{} counter ranges for {} recorded launches: the flushes cannot be told from the \
             kernels (kernels launched from CUDA graphs?); use --metrics-warm-caches",
            ranges.len(),
            is_flush.len()
        ));
    }
    Ok(ranges
        .into_iter()
        .zip(is_flush)
        .filter(|(_, flush)| !**flush)
        .map(|(r, _)| r)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::{keep_kernels, launches_a_kernel};

    #[test]
    fn launch_calls_are_the_kernel_launches_only() {
        for name in [
            "cudaLaunchKernel",
            "cudaLaunchKernel_ptsz",
            "cudaLaunchKernelExC_v11060",
            "cudaLaunchCooperativeKernel",
            "cuLaunchKernel",
            "cuLaunchKernel_ptsz",
            "cuLaunchKernelEx",
            "cuLaunchCooperativeKernel",
            "cuLaunchGrid",
        ] {
            assert!(launches_a_kernel(name), "{name}");
        }
        for name in [
            "cudaGraphLaunch",
            "cuGraphLaunch",
            "cudaLaunchHostFunc",
            "cuLaunchHostFunc",
            "cudaMemcpyAsync",
            "cuMemAlloc_v2",
        ] {
            assert!(!launches_a_kernel(name), "{name}");
        }
    }

    #[test]
    fn flush_ranges_are_dropped_and_a_mismatch_is_said() {
        let ranges = vec!["f1", "k1", "f2", "k2", "k3"];
        let is_flush = [true, false, true, false, false];
        assert_eq!(
            keep_kernels(ranges.clone(), &is_flush),
            Ok(vec!["k1", "k2", "k3"])
        );
        let err = keep_kernels(ranges, &is_flush[..4]).expect_err("mismatch");
        assert!(err.contains("5 counter ranges for 4"), "{err}");
    }
}
