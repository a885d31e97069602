//! The GPU side shared by every benchmark: checking that the CUDA libraries are there before
//! cudarc touches them, opening the device, and turning driver errors into [`BenchError`]s.

use std::sync::Arc;

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, cudaError_enum};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DeviceRepr, DriverError, PinnedHostSlice,
    ValidAsZeroBits,
};

use super::spec::{BenchError, format_bytes};

/// Which CUDA libraries a benchmark uses besides the driver.
#[derive(Debug, Clone, Copy)]
pub(super) struct Libraries {
    pub nvrtc: bool,
    pub cublas: bool,
}

/// Fails with a clear message when a library `benchmark` needs cannot be loaded. This must
/// come before any other cudarc call: with dynamic loading, cudarc panics on first use of a
/// missing library.
pub(super) fn check_libraries(needs: Libraries, benchmark: &'static str) -> Result<(), BenchError> {
    // SAFETY: is_culib_present only tries to dlopen the library by its usual names and drops
    // the handle; it runs no library code besides the loader's.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(BenchError::NoDriver);
    }
    // A library by that name without the functions (a stub): cudarc would panic.
    crate::capture::environment::driver_symbols().map_err(BenchError::BrokenLibrary)?;
    // SAFETY: as above, a dlopen probe.
    if needs.nvrtc && !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(BenchError::LibraryMissing {
            library: "NVRTC (libnvrtc.so)",
            needed_for: if benchmark == "gemm" {
                "compiling the gemm kernels"
            } else {
                "compiling the benchmark kernels at run time"
            },
        });
    }
    // SAFETY: as above, a dlopen probe.
    if needs.cublas && !unsafe { cudarc::cublas::sys::is_culib_present() } {
        return Err(BenchError::LibraryMissing {
            library: "cuBLAS (libcublas.so)",
            needed_for: "the cuBLAS GEMMs of the gemm benchmark",
        });
    }
    Ok(())
}

/// The device the benchmarks run on (GPU 0) and what they need to know about it.
pub(super) struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub name: String,
    /// (major, minor), e.g. (9, 0) for an H100.
    pub compute_capability: (i32, i32),
    pub sm_count: i32,
    /// The maximum (boost) SM clock in kHz, where the driver reports it.
    pub clock_khz: Option<i32>,
}

impl Gpu {
    /// Opens GPU 0. Call only after [`check_libraries`].
    pub fn open() -> Result<Gpu, BenchError> {
        let ctx = CudaContext::new(0).map_err(|e| match e.0 {
            cudaError_enum::CUDA_ERROR_NO_DEVICE => BenchError::Driver {
                during: "opening GPU 0".into(),
                error: "the NVIDIA driver sees no CUDA device".into(),
            },
            _ => driver_error("opening GPU 0", e),
        })?;
        // SAFETY: no CudaSlice exists yet. Without tracking, cudarc adds no event records and
        // waits around every copy and launch: the timeline then shows only the benchmark's own
        // work, and the benchmarks order their streams themselves (each synchronizes before it
        // frees or reuses a buffer).
        unsafe { ctx.disable_event_tracking() };
        let name = ctx
            .name()
            .map_err(|e| driver_error("reading the device name", e))?;
        let compute_capability = ctx
            .compute_capability()
            .map_err(|e| driver_error("reading the compute capability", e))?;
        let attribute = |attribute, what: &str| {
            ctx.attribute(attribute)
                .map_err(|e| driver_error(&format!("reading the {what}"), e))
        };
        let sm_count = attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "SM count",
        )?;
        // Only the peak-FLOP/s lines need the clock, and newer CUDA versions deprecate this
        // attribute: a driver that no longer answers costs the peak, not the benchmark.
        let clock_khz = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
            .ok()
            .filter(|khz| *khz > 0);
        Ok(Gpu {
            ctx,
            name,
            compute_capability,
            sm_count,
            clock_khz,
        })
    }

    /// The legacy default stream (stream 0), which synchronizes with every blocking stream.
    pub fn legacy_default_stream(&self) -> Arc<CudaStream> {
        self.ctx.default_stream()
    }

    /// A new non-blocking stream.
    pub fn new_stream(&self) -> Result<Arc<CudaStream>, BenchError> {
        self.ctx
            .new_stream()
            .map_err(|e| driver_error("creating a stream", e))
    }

    /// An event that records timestamps.
    pub fn timing_event(&self) -> Result<CudaEvent, BenchError> {
        self.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| driver_error("creating an event", e))
    }

    /// Waits for all work on the device (cudaDeviceSynchronize).
    pub fn synchronize(&self, during: &str) -> Result<(), BenchError> {
        self.ctx.synchronize().map_err(|e| driver_error(during, e))
    }

    /// `sm_90` for an H100: the real architecture NVRTC compiles for, so the module loads as a
    /// CUBIN with no JIT step.
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }

    /// One line naming the device, printed above every result table.
    pub fn describe(&self) -> String {
        let clock = self.clock_khz.map_or(String::new(), |khz| {
            format!(", {:.0} MHz", f64::from(khz) / 1000.0)
        });
        format!(
            "GPU 0: {} (sm_{}{}, {} SMs{clock})",
            self.name, self.compute_capability.0, self.compute_capability.1, self.sm_count
        )
    }
}

/// Waits for the whole device when dropped. Declared after a benchmark's buffers, it drops
/// first, so a benchmark that leaves early with work still queued on several streams frees
/// nothing that a queued copy or kernel still uses (cudarc frees in the order of the stream a
/// buffer was allocated on, which need not be the stream that uses it).
pub(super) struct DrainOnDrop<'a>(pub &'a Gpu);

impl Drop for DrainOnDrop<'_> {
    fn drop(&mut self) {
        // An error here (a faulted context) was already reported by the call that met it.
        let _ = self.0.ctx.synchronize();
    }
}

/// Allocates `len` elements on `stream`, uninitialised; `what` names the buffer in an
/// out-of-memory message.
pub(super) fn alloc<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    len: usize,
    what: &str,
) -> Result<CudaSlice<T>, BenchError> {
    let bytes = checked_bytes::<T>(len, what)?;
    // SAFETY: the buffer starts uninitialised; every benchmark writes (copies into or zeroes)
    // a buffer before any kernel or copy reads it, and DeviceRepr types have no invalid bit
    // patterns that a stray read could produce.
    unsafe { stream.alloc::<T>(len) }.map_err(|e| alloc_error(what, bytes, e))
}

/// Allocates `len` elements of page-locked (pinned) host memory, zeroed, so the GPU's copy
/// engines can reach it directly and copies can run asynchronously.
pub(super) fn alloc_pinned<T: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    len: usize,
    what: &str,
) -> Result<PinnedHostSlice<T>, BenchError> {
    let bytes = checked_bytes::<T>(len, what)?;
    // SAFETY: the size was checked for overflow above (cudarc would panic on it). Flags 0:
    // plain pinned memory, not write-combined, since the benchmarks read results back on the
    // host. The memory is zeroed below before anything reads it.
    let mut pinned = unsafe { gpu.ctx.alloc_pinned_with_flags::<T>(len, 0) }
        .map_err(|e| alloc_error(&format!("pinned host memory for {what}"), bytes, e))?;
    let start = pinned
        .as_mut_ptr()
        .map_err(|e| driver_error("waiting for pinned memory", e))?;
    // SAFETY: `start` points at `len` elements this allocation owns, nothing else refers to
    // them yet, and all-zero bytes are a valid `T` (ValidAsZeroBits).
    unsafe { std::ptr::write_bytes(start, 0, len) };
    Ok(pinned)
}

/// A host vector of `len` copies of `value`. Large host buffers go through here: a failed
/// `vec!` aborts the process, while this reports which buffer did not fit.
pub(super) fn host_vec<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>, BenchError> {
    let bytes = checked_bytes::<T>(len, what)?;
    let mut values = Vec::new();
    values
        .try_reserve_exact(len)
        .map_err(|_| BenchError::OutOfMemory {
            what: format!("{what} in host memory ({})", format_bytes(bytes)),
        })?;
    values.resize(len, value);
    Ok(values)
}

/// The size of `len` elements of `T`, or a clear error where it overflows.
pub(super) fn checked_bytes<T>(len: usize, what: &str) -> Result<u64, BenchError> {
    len.checked_mul(std::mem::size_of::<T>())
        .filter(|b| *b < isize::MAX as usize)
        .map(|b| b as u64)
        .ok_or_else(|| BenchError::OutOfMemory {
            what: format!("{what}: {len} elements overflow the address space"),
        })
}

/// Maps an allocation failure: out of memory names the size.
pub(super) fn alloc_error(what: &str, bytes: u64, e: DriverError) -> BenchError {
    match e.0 {
        cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY => BenchError::OutOfMemory {
            what: format!("{what} ({})", format_bytes(bytes)),
        },
        _ => driver_error(&format!("allocating {what} ({})", format_bytes(bytes)), e),
    }
}

/// Maps a driver error: faults from a kernel (which poison the context) apart from the rest.
pub(super) fn driver_error(during: &str, e: DriverError) -> BenchError {
    use cudaError_enum::*;
    let error = describe_driver_error(&e);
    match e.0 {
        CUDA_ERROR_ILLEGAL_ADDRESS
        | CUDA_ERROR_LAUNCH_FAILED
        | CUDA_ERROR_MISALIGNED_ADDRESS
        | CUDA_ERROR_ILLEGAL_INSTRUCTION
        | CUDA_ERROR_INVALID_ADDRESS_SPACE
        | CUDA_ERROR_INVALID_PC
        | CUDA_ERROR_HARDWARE_STACK_ERROR
        | CUDA_ERROR_ASSERT
        | CUDA_ERROR_LAUNCH_TIMEOUT => BenchError::KernelFault {
            during: during.to_string(),
            error,
        },
        CUDA_ERROR_OUT_OF_MEMORY => BenchError::OutOfMemory {
            what: during.to_string(),
        },
        _ => BenchError::Driver {
            during: during.to_string(),
            error,
        },
    }
}

/// `CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)`.
fn describe_driver_error(e: &DriverError) -> String {
    match e.error_string() {
        Ok(text) => format!("{:?} ({})", e.0, text.to_string_lossy()),
        Err(_) => format!("{:?}", e.0),
    }
}
