//! CUPTI's Range Profiler on a context: counters collected per kernel (auto
//! range) with kernel replay, into a counter-data image the host API then
//! evaluates ([`super::host`]).

use std::ffi::CStr;

use cudarc::cupti::sys as cupti;
use cudarc::driver::sys as driver;

use super::CounterError;
use super::host::{check, params};

/// The libraries CUPTI loads to collect and evaluate counters. Each is looked
/// for by name (the loader's path) and beside libcupti.so, where CUDA puts it.
pub const NVPERF_LIBRARIES: [&str; 2] = ["libnvperf_host.so", "libnvperf_target.so"];

/// Whether CUPTI and the libnvperf libraries can be loaded: cudarc panics on a
/// missing CUPTI and CUPTI fails on a missing libnvperf, so this is asked
/// before any counter call.
pub fn libraries_present() -> Result<(), CounterError> {
    // SAFETY: only tries to dlopen the library by its usual names.
    if !unsafe { cupti::is_culib_present() } {
        return Err(CounterError::LibraryMissing("libcupti.so".into()));
    }
    let beside_cupti = crate::capture::environment::cupti_library_path()
        .and_then(|p| std::path::Path::new(&p).parent().map(|d| d.to_path_buf()));
    for lib in NVPERF_LIBRARIES {
        if !library_loads(lib, beside_cupti.as_deref()) {
            return Err(CounterError::LibraryMissing(lib.into()));
        }
    }
    Ok(())
}

/// Whether `name` loads, by name or from `folder`.
pub fn library_loads(name: &str, folder: Option<&std::path::Path>) -> bool {
    // SAFETY: loading a shared library runs its initialisers; the NVIDIA
    // libraries probed here have none with side effects on this process.
    let by_name = unsafe { libloading::Library::new(name) }.is_ok();
    by_name
        || folder.is_some_and(|f| {
            // SAFETY: as above.
            unsafe { libloading::Library::new(f.join(name)) }.is_ok()
        })
}

/// `cuptiProfilerInitialize`; harmless when already done.
pub fn initialise_profiler() -> Result<(), CounterError> {
    let mut p = params!(cupti::CUpti_Profiler_Initialize_Params, pPriv);
    // SAFETY: CUPTI is present (libraries_present).
    check("initialising the profiler", unsafe {
        cupti::cuptiProfilerInitialize(&mut p)
    })
}

pub fn deinitialise_profiler() {
    let mut p = params!(cupti::CUpti_Profiler_DeInitialize_Params, pPriv);
    // SAFETY: CUPTI is present.
    let _ = unsafe { cupti::cuptiProfilerDeInitialize(&mut p) };
}

/// The chip name of device `ordinal` (`GH100`), as the host API wants it.
pub fn chip_name(ordinal: usize) -> Result<String, CounterError> {
    let mut p = params!(cupti::CUpti_Device_GetChipName_Params, pChipName);
    p.deviceIndex = ordinal;
    // SAFETY: CUPTI is present and the profiler initialised.
    check("reading the chip name", unsafe {
        cupti::cuptiDeviceGetChipName(&mut p)
    })?;
    if p.pChipName.is_null() {
        return Err(CounterError::Cupti("no chip name".into()));
    }
    // SAFETY: a static NUL-terminated string from CUPTI.
    Ok(unsafe { CStr::from_ptr(p.pChipName) }
        .to_string_lossy()
        .into_owned())
}

/// The primary context of device 0, retained for as long as this lives (the
/// benchmarks use the same one: cudarc retains the primary context).
pub struct PrimaryContext {
    pub ctx: driver::CUcontext,
    device: driver::CUdevice,
}

impl PrimaryContext {
    pub fn retain() -> Result<PrimaryContext, CounterError> {
        let fail =
            |what: &str, r: driver::CUresult| CounterError::Cupti(format!("{what} failed: {r:?}"));
        // SAFETY: the driver is present (the capture checked it first); plain
        // calls with out-pointers to locals.
        unsafe {
            let r = driver::cuInit(0);
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(fail("cuInit", r));
            }
            let mut device: driver::CUdevice = 0;
            let r = driver::cuDeviceGet(&mut device, 0);
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(fail("cuDeviceGet", r));
            }
            let mut ctx: driver::CUcontext = std::ptr::null_mut();
            let r = driver::cuDevicePrimaryCtxRetain(&mut ctx, device);
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(fail("retaining the primary context", r));
            }
            let _ = driver::cuCtxSetCurrent(ctx);
            Ok(PrimaryContext { ctx, device })
        }
    }

    /// The size of the device's L2 cache, in bytes.
    pub fn l2_bytes(&self) -> Result<usize, CounterError> {
        let mut bytes: i32 = 0;
        // SAFETY: a plain query with an out-pointer to a local.
        let r = unsafe {
            driver::cuDeviceGetAttribute(
                &mut bytes,
                driver::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
                self.device,
            )
        };
        if r != driver::CUresult::CUDA_SUCCESS || bytes <= 0 {
            return Err(CounterError::Cupti(format!(
                "reading the L2 cache size failed: {r:?}"
            )));
        }
        Ok(bytes as usize)
    }

    /// The device's compute capability (major, minor) and SM count.
    pub fn compute_capability(&self) -> Result<(i32, i32, u32), CounterError> {
        use driver::CUdevice_attribute as A;
        let mut values = [0i32; 3];
        for (value, attribute) in values.iter_mut().zip([
            A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        ]) {
            // SAFETY: a plain query with an out-pointer to a local.
            let r = unsafe { driver::cuDeviceGetAttribute(value, attribute, self.device) };
            if r != driver::CUresult::CUDA_SUCCESS {
                return Err(CounterError::Cupti(format!(
                    "reading the device's {attribute:?} failed: {r:?}"
                )));
            }
        }
        Ok((values[0], values[1], values[2].max(0) as u32))
    }

    /// The device's counter availability image (where the driver refuses
    /// counters to this user, this is where it says so).
    pub fn counter_availability(&self) -> Result<Vec<u8>, CounterError> {
        let mut p = params!(
            cupti::CUpti_Profiler_GetCounterAvailability_Params,
            pCounterAvailabilityImage
        );
        p.ctx = self.ctx.cast();
        // SAFETY: a retained context; first call asks the size only.
        check("reading counter availability", unsafe {
            cupti::cuptiProfilerGetCounterAvailability(&mut p)
        })?;
        let mut image = vec![0u8; p.counterAvailabilityImageSize];
        p.pCounterAvailabilityImage = image.as_mut_ptr();
        // SAFETY: the buffer has the size CUPTI asked for.
        check("reading counter availability", unsafe {
            cupti::cuptiProfilerGetCounterAvailability(&mut p)
        })?;
        Ok(image)
    }
}

impl Drop for PrimaryContext {
    fn drop(&mut self) {
        // SAFETY: releases the reference taken in retain.
        unsafe {
            let _ = driver::cuCtxSetCurrent(std::ptr::null_mut());
            let _ = driver::cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}

/// How the passes a metric set needs are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Replay {
    /// The caller runs the whole workload once per pass (`start`, work,
    /// `stop`, until every pass is submitted). Preferred: kernel replay's
    /// save and restore of the memory a kernel touches showed in its DRAM
    /// write counts on the H100 (10 MB for a GEMM whose 4 MB result ncu sees
    /// stay in L2).
    #[default]
    User,
    /// CUPTI replays each kernel alone, once per pass, within one run. The
    /// only per-kernel mode for kernels a CUDA graph launches: CUPTI's release
    /// notes (Known Issues, "Range Profiling API") say user and application
    /// replay with auto range do not support them; `cuptiRangeProfilerStop`
    /// then fails with CUPTI_ERROR_UNKNOWN (seen on the H200 with
    /// `launch-overhead`).
    Kernel,
}

/// A range profiler enabled on a context, with its counter-data image.
pub struct RangeProfiler {
    object: *mut cupti::CUpti_RangeProfiler_Object,
    pub image: Vec<u8>,
    started: bool,
}

impl RangeProfiler {
    /// Enables the profiler on `ctx` and configures it: one range per kernel
    /// (auto range), room for `max_ranges` ranges, and `replay` (see
    /// [`Replay`]).
    pub fn enable(
        ctx: &PrimaryContext,
        config: &[u8],
        metrics: &[String],
        max_ranges: usize,
        replay: Replay,
    ) -> Result<RangeProfiler, CounterError> {
        let mut en = params!(
            cupti::CUpti_RangeProfiler_Enable_Params,
            pRangeProfilerObject
        );
        en.ctx = ctx.ctx.cast();
        // SAFETY: a retained, current context.
        check("enabling the range profiler", unsafe {
            cupti::cuptiRangeProfilerEnable(&mut en)
        })?;
        let mut profiler = RangeProfiler {
            object: en.pRangeProfilerObject,
            image: Vec::new(),
            started: false,
        };
        let names: Vec<std::ffi::CString> = metrics
            .iter()
            .filter_map(|m| std::ffi::CString::new(m.as_str()).ok())
            .collect();
        let pointers: Vec<*const std::ffi::c_char> = names.iter().map(|c| c.as_ptr()).collect();
        let mut size = params!(
            cupti::CUpti_RangeProfiler_GetCounterDataSize_Params,
            counterDataSize
        );
        size.pRangeProfilerObject = profiler.object;
        size.pMetricNames = pointers.as_ptr().cast_mut();
        size.numMetrics = pointers.len();
        size.maxNumOfRanges = max_ranges;
        size.maxNumRangeTreeNodes = max_ranges.min(u32::MAX as usize) as u32;
        // SAFETY: names outlive the call.
        check("sizing the counter data", unsafe {
            cupti::cuptiRangeProfilerGetCounterDataSize(&mut size)
        })?;
        profiler.image = vec![0u8; size.counterDataSize];
        let mut init = params!(
            cupti::CUpti_RangeProfiler_CounterDataImage_Initialize_Params,
            pCounterData
        );
        init.pRangeProfilerObject = profiler.object;
        init.counterDataSize = profiler.image.len();
        init.pCounterData = profiler.image.as_mut_ptr();
        // SAFETY: the buffer has the size CUPTI asked for.
        check("initialising the counter data", unsafe {
            cupti::cuptiRangeProfilerCounterDataImageInitialize(&mut init)
        })?;
        let mut set = params!(
            cupti::CUpti_RangeProfiler_SetConfig_Params,
            targetNestingLevel
        );
        set.pRangeProfilerObject = profiler.object;
        set.configSize = config.len();
        set.pConfig = config.as_ptr();
        set.counterDataImageSize = profiler.image.len();
        set.pCounterDataImage = profiler.image.as_mut_ptr();
        set.range = cupti::CUpti_ProfilerRange::CUPTI_AutoRange;
        set.replayMode = match replay {
            Replay::User => cupti::CUpti_ProfilerReplayMode::CUPTI_UserReplay,
            Replay::Kernel => cupti::CUpti_ProfilerReplayMode::CUPTI_KernelReplay,
        };
        set.maxRangesPerPass = max_ranges;
        set.numNestingLevels = 1;
        set.minNestingLevel = 1;
        set.passIndex = 0;
        set.targetNestingLevel = 1;
        // SAFETY: the configuration and the image live as long as the
        // profiler (the image is owned by it and never reallocated).
        check("configuring the range profiler", unsafe {
            cupti::cuptiRangeProfilerSetConfig(&mut set)
        })?;
        Ok(profiler)
    }

    pub fn start(&mut self) -> Result<(), CounterError> {
        let mut p = params!(
            cupti::CUpti_RangeProfiler_Start_Params,
            pRangeProfilerObject
        );
        p.pRangeProfilerObject = self.object;
        // SAFETY: an enabled, configured profiler.
        check("starting the range profiler", unsafe {
            cupti::cuptiRangeProfilerStart(&mut p)
        })?;
        self.started = true;
        Ok(())
    }

    /// Stops one pass; true once every pass the configuration needs has been
    /// submitted.
    pub fn stop(&mut self) -> Result<bool, CounterError> {
        let mut stop = params!(cupti::CUpti_RangeProfiler_Stop_Params, isAllPassSubmitted);
        stop.pRangeProfilerObject = self.object;
        // SAFETY: a started profiler.
        check("stopping the range profiler", unsafe {
            cupti::cuptiRangeProfilerStop(&mut stop)
        })?;
        self.started = false;
        Ok(stop.isAllPassSubmitted != 0)
    }

    /// Decodes the collected counters into the image; returns how many ranges
    /// were dropped (no room left).
    pub fn decode(&mut self) -> Result<usize, CounterError> {
        let mut decode = params!(
            cupti::CUpti_RangeProfiler_DecodeData_Params,
            numOfRangeDropped
        );
        decode.pRangeProfilerObject = self.object;
        // SAFETY: a stopped profiler whose image is alive.
        check("decoding the counters", unsafe {
            cupti::cuptiRangeProfilerDecodeData(&mut decode)
        })?;
        Ok(decode.numOfRangeDropped)
    }
}

impl Drop for RangeProfiler {
    fn drop(&mut self) {
        if self.started {
            let mut stop = params!(cupti::CUpti_RangeProfiler_Stop_Params, isAllPassSubmitted);
            stop.pRangeProfilerObject = self.object;
            // SAFETY: a started profiler.
            let _ = unsafe { cupti::cuptiRangeProfilerStop(&mut stop) };
        }
        let mut p = params!(
            cupti::CUpti_RangeProfiler_Disable_Params,
            pRangeProfilerObject
        );
        p.pRangeProfilerObject = self.object;
        // SAFETY: the object came from cuptiRangeProfilerEnable.
        let _ = unsafe { cupti::cuptiRangeProfilerDisable(&mut p) };
    }
}
