//! What a capture needs from the machine, checked before anything can panic:
//! cudarc loads CUDA libraries on first use and panics when one is missing, so
//! every capture path asks here first and turns the answer into one clear
//! message.

use std::fmt;

/// Why a capture (or a benchmark run) cannot go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureError {
    NoDriver,
    NoCupti,
    /// A library loads but lacks a function (a stub, an old driver): the
    /// message names both ([`missing_symbol_message`]).
    BrokenLibrary(String),
    /// Nsight Systems, Nsight Compute or another CUPTI client owns the process.
    OtherProfiler(String),
    /// The CUPTI found speaks another record layout than this build reads.
    CuptiVersion(u32),
    Cupti(String),
    /// A capture is already running in this process.
    Busy,
    Benchmark(String),
    Save(String),
    Cancelled,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::NoDriver => f.write_str(NO_DRIVER),
            CaptureError::NoCupti => f.write_str(
                "CUPTI (libcupti.so) not found: live capture needs it; add the CUDA toolkit's \
                 library folder (…/targets/x86_64-linux/lib or extras/CUPTI/lib64) to \
                 LD_LIBRARY_PATH. `sightline run` works without it",
            ),
            CaptureError::BrokenLibrary(why) => f.write_str(why),
            CaptureError::OtherProfiler(who) => write!(
                f,
                "{who} is already tracing this process: a second CUPTI client would break its \
                 trace. Profile `sightline run BENCH` with it instead, or capture without it"
            ),
            CaptureError::CuptiVersion(v) => write!(
                f,
                "CUPTI API version {v}: this build reads the record layouts of CUDA 13.0 \
                 (CUPTI API 130000–130099); records of another version would be misread"
            ),
            CaptureError::Cupti(why) => write!(f, "CUPTI: {why}"),
            CaptureError::Busy => f.write_str("a capture is already running"),
            CaptureError::Benchmark(why) => f.write_str(why),
            CaptureError::Save(why) => write!(f, "saving the capture failed: {why}"),
            CaptureError::Cancelled => f.write_str("the capture was cancelled"),
        }
    }
}

impl std::error::Error for CaptureError {}

/// The message for a machine without the NVIDIA driver.
pub const NO_DRIVER: &str = "no NVIDIA driver found (libcuda.so.1): live capture needs an NVIDIA \
                             GPU; you can still open reports";

/// Where the CUPTI library this process would load is, when it and the driver are there:
/// what `NVTX_INJECTION64_PATH` must name for NVTX ranges to reach CUPTI.
pub fn cupti_library_path() -> Option<String> {
    if !driver_present() {
        return None;
    }
    // SAFETY: only tries to dlopen the library by its usual names; culib()
    // is called only once it is known to load, so it cannot panic.
    unsafe {
        if !cudarc::cupti::sys::is_culib_present() {
            return None;
        }
        let _ = cudarc::cupti::sys::culib();
    }
    loaded_library_path("libcupti.so")
}

/// Is the CUDA driver library there? (Loading it does not touch a GPU.)
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library by its usual names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

pub fn check_driver() -> Result<(), CaptureError> {
    if !driver_present() {
        return Err(CaptureError::NoDriver);
    }
    driver_symbols().map_err(CaptureError::BrokenLibrary)
}

/// Functions every CUDA driver since 11 exports that a capture or a
/// benchmark calls first: a library without them is a stub or no driver.
pub const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuDevicePrimaryCtxRetain",
    "cuCtxSetCurrent",
    "cuModuleLoadData",
    "cuLaunchKernel",
    "cuMemAlloc_v2",
    "cuStreamCreate",
    "cuEventCreate",
];

/// Functions of CUPTI a capture calls (present in every CUPTI since 11).
const CUPTI_SYMBOLS: &[&str] = &[
    "cuptiGetVersion",
    "cuptiSubscribe",
    "cuptiActivityEnable",
    "cuptiActivityRegisterCallbacks",
    "cuptiActivityFlushAll",
    "cuptiGetTimestamp",
];

/// `Err` with one line naming the library and the first symbol it lacks.
/// Call only when the driver library is present (it is loaded here).
pub fn driver_symbols() -> Result<(), String> {
    // SAFETY: the library is present (checked by the caller), so culib()
    // loads it rather than panicking; looking a symbol up runs no code.
    let lib = unsafe { cudarc::driver::sys::culib() };
    // SAFETY: the symbol is only looked up, never called.
    let missing = |name: &&str| unsafe { lib.get::<*const ()>(*name) }.is_err();
    DRIVER_SYMBOLS
        .iter()
        .copied()
        .find(missing)
        .map_or(Ok(()), |symbol| Err(missing_symbol_message(symbol)))
}

/// As [`driver_symbols`], for CUPTI.
fn cupti_symbols() -> Result<(), String> {
    // SAFETY: as in driver_symbols: CUPTI is present (checked by the caller).
    let lib = unsafe { cudarc::cupti::sys::culib() };
    // SAFETY: the symbol is only looked up, never called.
    let missing = |name: &&str| unsafe { lib.get::<*const ()>(*name) }.is_err();
    CUPTI_SYMBOLS
        .iter()
        .copied()
        .find(missing)
        .map_or(Ok(()), |symbol| Err(missing_symbol_message(symbol)))
}

/// One line for a CUDA library without `symbol` (cudarc's "Missing symbol"
/// panic, or found before it): the library, where it was loaded from, and
/// what still works.
pub fn missing_symbol_message(symbol: &str) -> String {
    let (library, stem) = if symbol.starts_with("cupti") {
        ("CUPTI", "libcupti.so")
    } else if symbol.starts_with("nvrtc") {
        ("NVRTC", "libnvrtc.so")
    } else if symbol.starts_with("cublas") {
        ("cuBLAS", "libcublas.so")
    } else {
        ("the NVIDIA driver", "libcuda.so")
    };
    let file = loaded_library_path(stem).unwrap_or_else(|| stem.to_string());
    format!(
        "{library} library {file} has no function {symbol} (a stub, or a version too old): \
         live capture needs a working NVIDIA driver and CUDA libraries; you can still open reports"
    )
}

/// The symbol of a cudarc "Missing symbol NAME: ..." panic message.
pub fn missing_symbol_in_panic(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("Missing symbol ")?;
    Some(rest.split([':', ' ']).next().unwrap_or(rest))
}

/// The profiler that is injected into this process, if one is: nsys and ncu
/// set these variables for the programs they run (capture-notes.md).
pub fn external_profiler() -> Option<String> {
    external_profiler_in(|name| std::env::var_os(name).filter(|v| !v.is_empty()))
}

fn external_profiler_in(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<String> {
    if var("NSYS_PROFILING_SESSION_ID").is_some() {
        return Some("Nsight Systems (nsys)".into());
    }
    if let Some(path) = var("CUDA_INJECTION64_PATH") {
        let path = path.to_string_lossy().to_lowercase();
        let who = if path.contains("nsight-compute") || path.contains("ncu") {
            "Nsight Compute (ncu)"
        } else if path.contains("nsys") || path.contains("nsight-systems") {
            "Nsight Systems (nsys)"
        } else {
            "a CUDA profiler (CUDA_INJECTION64_PATH is set)"
        };
        return Some(who.into());
    }
    None
}

/// Everything a live capture needs: the driver, no other profiler, and a
/// CUPTI whose records this build can read.
pub fn check_cupti() -> Result<(), CaptureError> {
    check_driver()?;
    if let Some(who) = external_profiler() {
        return Err(CaptureError::OtherProfiler(who));
    }
    // SAFETY: only tries to dlopen the library by its usual names.
    if !unsafe { cudarc::cupti::sys::is_culib_present() } {
        return Err(CaptureError::NoCupti);
    }
    cupti_symbols().map_err(CaptureError::BrokenLibrary)?;
    let mut version = 0u32;
    // SAFETY: CUPTI is present (checked above); writes one integer.
    unsafe { cudarc::cupti::sys::cuptiGetVersion(&mut version) }
        .result()
        .map_err(|e| cupti_failure("reading its version", e.0))?;
    if !(130000..130100).contains(&version) {
        return Err(CaptureError::CuptiVersion(version));
    }
    Ok(())
}

/// Turns a CUPTI status into an error that says what to do.
pub fn cupti_failure(what: &str, code: cudarc::cupti::sys::CUptiResult) -> CaptureError {
    use cudarc::cupti::sys::CUptiResult as R;
    match code {
        R::CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED => {
            CaptureError::OtherProfiler("another profiler (it owns CUPTI)".into())
        }
        R::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES => CaptureError::Cupti(format!(
            "{what}: not permitted (the driver restricts GPU performance counters and tracing \
             to admin users: NVreg_RestrictProfilingToAdminUsers)"
        )),
        other => CaptureError::Cupti(format!("{what} failed: {other:?}")),
    }
}

/// Makes NVTX ranges reach CUPTI: NVTX sends its calls to the library named
/// by `NVTX_INJECTION64_PATH`, read once, at the first NVTX call. Call this at
/// the start of `main`, before any thread starts (it sets an environment
/// variable) and only in modes that capture. Does nothing under another
/// profiler (it set the variable for itself) or without CUPTI. Returns the
/// library path when it was set.
pub fn prepare_nvtx_injection() -> Option<String> {
    if std::env::var_os("NVTX_INJECTION64_PATH").is_some() || external_profiler().is_some() {
        return None;
    }
    let path = cupti_library_path()?;
    // SAFETY: called at the start of main, before any other thread exists
    // (documented contract), so nothing reads the environment concurrently.
    unsafe { std::env::set_var("NVTX_INJECTION64_PATH", &path) };
    Some(path)
}

/// The absolute path of a loaded shared library, from /proc/self/maps.
fn loaded_library_path(stem: &str) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            std::path::Path::new(path)
                .file_name()
                .is_some_and(|f| f.to_string_lossy().starts_with(stem))
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn recognises_nsys_and_ncu_by_their_variables() {
        let none = |_: &str| None;
        assert_eq!(external_profiler_in(none), None);
        let nsys = |n: &str| (n == "NSYS_PROFILING_SESSION_ID").then(|| OsString::from("7"));
        assert_eq!(
            external_profiler_in(nsys).as_deref(),
            Some("Nsight Systems (nsys)")
        );
        let ncu = |n: &str| {
            (n == "CUDA_INJECTION64_PATH").then(|| {
                OsString::from("/opt/nvidia/nsight-compute/2025.3.1/target/linux-desktop-glibc_2_11_3-x64/libTreeLauncherTargetInjection.so")
            })
        };
        assert_eq!(
            external_profiler_in(ncu).as_deref(),
            Some("Nsight Compute (ncu)")
        );
    }

    #[test]
    fn a_missing_symbol_panic_names_the_symbol() {
        let message = "Missing symbol cuInit: /x/libcuda.so: undefined symbol: cuInit";
        assert_eq!(missing_symbol_in_panic(message), Some("cuInit"));
        assert_eq!(missing_symbol_in_panic("index out of bounds"), None);
        let line = missing_symbol_message("cuptiGetVersion");
        assert!(
            line.contains("CUPTI") && line.contains("cuptiGetVersion"),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn the_no_driver_message_says_what_still_works() {
        assert!(
            CaptureError::NoDriver
                .to_string()
                .contains("you can still open reports")
        );
    }
}
