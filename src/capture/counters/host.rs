//! CUPTI's Profiler Host API: the chip's metric list, the configuration image
//! for a metric set, how many passes it needs, and the evaluation of a
//! counter-data image into metric values. None of it touches a GPU: a
//! recorded counter-data image can be evaluated on any machine with CUPTI and
//! libnvperf_host (the tests do, where those libraries are present).
//!
//! Callers check [`super::target::libraries_present`] first: cudarc panics
//! when CUPTI is missing, and CUPTI fails when libnvperf is.

use std::ffi::{CStr, CString, c_char};

use cudarc::cupti::sys as cupti;

use super::CounterError;
use super::names::SupportedMetrics;

/// A zeroed CUPTI parameter struct with `structSize` set as CUPTI's
/// `*_STRUCT_SIZE` macros set it: up to the end of its last field.
macro_rules! params {
    ($ty:ty, $last:ident) => {{
        // SAFETY: CUPTI parameter structs are plain C structs of integers and
        // pointers, for which all-zero is the documented initial state.
        let mut p: $ty = unsafe { std::mem::zeroed() };
        p.structSize = std::mem::offset_of!($ty, $last) + {
            fn size_of_field<T>(_: *const T) -> usize {
                std::mem::size_of::<T>()
            }
            size_of_field(std::ptr::addr_of!(p.$last))
        };
        p
    }};
}
pub(crate) use params;

/// Turns a CUPTI status into a [`CounterError`].
pub(crate) fn check(what: &str, status: cupti::CUptiResult) -> Result<(), CounterError> {
    use cupti::CUptiResult as R;
    match status {
        R::CUPTI_SUCCESS => Ok(()),
        R::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES => Err(CounterError::NotPermitted),
        R::CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
        | R::CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED => {
            Err(CounterError::OtherProfiler("another profiler".into()))
        }
        other => Err(CounterError::Cupti(format!("{what} failed: {other:?}"))),
    }
}

/// A host object for one chip.
pub struct Host {
    object: *mut cupti::CUpti_Profiler_Host_Object,
    chip: String,
}

impl Host {
    /// A host object for `chip` (`GH100`), with the device's counter
    /// availability image when there is one.
    pub fn new(chip: &str, availability: Option<&[u8]>) -> Result<Host, CounterError> {
        let chip_c = CString::new(chip).map_err(|_| CounterError::UnknownChip(chip.into()))?;
        let mut p = params!(cupti::CUpti_Profiler_Host_Initialize_Params, pHostObject);
        p.profilerType = cupti::CUpti_ProfilerType::CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        p.pChipName = chip_c.as_ptr();
        p.pCounterAvailabilityImage = availability.map_or(std::ptr::null(), <[u8]>::as_ptr);
        // SAFETY: valid parameter struct; strings and images outlive the call.
        let status = unsafe { cupti::cuptiProfilerHostInitialize(&mut p) };
        match check("initialising the profiler host", status) {
            Ok(()) if !p.pHostObject.is_null() => Ok(Host {
                object: p.pHostObject,
                chip: chip.to_string(),
            }),
            Ok(()) => Err(CounterError::UnknownChip(chip.into())),
            Err(CounterError::Cupti(_)) => Err(CounterError::UnknownChip(chip.into())),
            Err(e) => Err(e),
        }
    }

    pub fn chip(&self) -> &str {
        &self.chip
    }

    /// Every base metric of the chip with its sub-metrics.
    pub fn supported_metrics(&self) -> Result<SupportedMetrics, CounterError> {
        use cupti::CUpti_MetricType as T;
        let mut out = SupportedMetrics {
            chip: self.chip.clone(),
            ..SupportedMetrics::default()
        };
        for kind in [
            T::CUPTI_METRIC_TYPE_COUNTER,
            T::CUPTI_METRIC_TYPE_RATIO,
            T::CUPTI_METRIC_TYPE_THROUGHPUT,
        ] {
            let mut p = params!(cupti::CUpti_Profiler_Host_GetBaseMetrics_Params, numMetrics);
            p.pHostObject = self.object;
            p.metricType = kind;
            // SAFETY: valid struct; CUPTI fills a name array it owns.
            check("listing metrics", unsafe {
                cupti::cuptiProfilerHostGetBaseMetrics(&mut p)
            })?;
            // SAFETY: CUPTI returned `numMetrics` NUL-terminated names.
            let bases = unsafe { c_strings(p.ppMetricNames, p.numMetrics) };
            for base in bases {
                let subs = self.sub_metrics(&base, kind).unwrap_or_default();
                out.bases.insert(base, subs);
            }
        }
        Ok(out)
    }

    fn sub_metrics(
        &self,
        base: &str,
        kind: cupti::CUpti_MetricType,
    ) -> Result<Vec<String>, CounterError> {
        let name = CString::new(base).map_err(|_| CounterError::Cupti("bad name".into()))?;
        let mut p = params!(
            cupti::CUpti_Profiler_Host_GetSubMetrics_Params,
            ppSubMetrics
        );
        p.pHostObject = self.object;
        p.metricType = kind;
        p.pMetricName = name.as_ptr();
        // SAFETY: valid struct; CUPTI fills a name array it owns.
        check("listing sub-metrics", unsafe {
            cupti::cuptiProfilerHostGetSubMetrics(&mut p)
        })?;
        // SAFETY: CUPTI returned `numOfSubmetrics` NUL-terminated names.
        let subs = unsafe { c_strings(p.ppSubMetrics, p.numOfSubmetrics) };
        Ok(subs
            .into_iter()
            .map(|s| s.trim_start_matches('.').to_string())
            .collect())
    }

    /// The configuration image for `metrics` and the passes it needs.
    pub fn config_image(&self, metrics: &[String]) -> Result<(Vec<u8>, usize), CounterError> {
        let names = CNames::new(metrics)?;
        let mut add = params!(
            cupti::CUpti_Profiler_Host_ConfigAddMetrics_Params,
            numMetrics
        );
        add.pHostObject = self.object;
        add.ppMetricNames = names.pointers.as_ptr().cast_mut();
        add.numMetrics = metrics.len();
        // SAFETY: valid struct; the names outlive the call.
        let status = unsafe { cupti::cuptiProfilerHostConfigAddMetrics(&mut add) };
        if let Err(CounterError::Cupti(_)) = check("adding metrics", status) {
            return Err(CounterError::UnknownMetric(format!(
                "CUPTI refused the metric list {} for {} ({status:?})",
                metrics.join(","),
                self.chip
            )));
        }
        check("adding metrics", status)?;
        let mut size = params!(
            cupti::CUpti_Profiler_Host_GetConfigImageSize_Params,
            configImageSize
        );
        size.pHostObject = self.object;
        // SAFETY: valid struct.
        check("sizing the configuration", unsafe {
            cupti::cuptiProfilerHostGetConfigImageSize(&mut size)
        })?;
        let mut image = vec![0u8; size.configImageSize];
        let mut get = params!(
            cupti::CUpti_Profiler_Host_GetConfigImage_Params,
            pConfigImage
        );
        get.pHostObject = self.object;
        get.configImageSize = image.len();
        get.pConfigImage = image.as_mut_ptr();
        // SAFETY: the buffer has the size CUPTI asked for.
        check("building the configuration", unsafe {
            cupti::cuptiProfilerHostGetConfigImage(&mut get)
        })?;
        let mut passes = params!(
            cupti::CUpti_Profiler_Host_GetNumOfPasses_Params,
            numOfPasses
        );
        passes.configImageSize = image.len();
        passes.pConfigImage = image.as_mut_ptr();
        // SAFETY: a configuration image CUPTI just wrote.
        check("counting passes", unsafe {
            cupti::cuptiProfilerHostGetNumOfPasses(&mut passes)
        })?;
        Ok((image, passes.numOfPasses))
    }

    /// The values of `metrics` in range `range` of a decoded counter-data image.
    pub fn evaluate(
        &self,
        image: &[u8],
        range: usize,
        metrics: &[String],
    ) -> Result<Vec<f64>, CounterError> {
        let names = CNames::new(metrics)?;
        let mut values = vec![0f64; metrics.len()];
        let mut p = params!(
            cupti::CUpti_Profiler_Host_EvaluateToGpuValues_Params,
            pMetricValues
        );
        p.pHostObject = self.object;
        p.pCounterDataImage = image.as_ptr();
        p.counterDataImageSize = image.len();
        p.rangeIndex = range;
        p.ppMetricNames = names.pointers.as_ptr().cast_mut();
        p.numMetrics = metrics.len();
        p.pMetricValues = values.as_mut_ptr();
        // SAFETY: image, names and the value buffer outlive the call; the
        // buffer holds one value per name.
        check("evaluating counters", unsafe {
            cupti::cuptiProfilerHostEvaluateToGpuValues(&mut p)
        })?;
        Ok(values)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let mut p = params!(cupti::CUpti_Profiler_Host_Deinitialize_Params, pHostObject);
        p.pHostObject = self.object;
        // SAFETY: the object came from cuptiProfilerHostInitialize.
        let _ = unsafe { cupti::cuptiProfilerHostDeinitialize(&mut p) };
    }
}

/// How many ranges a counter-data image holds.
pub fn range_count(image: &[u8]) -> Result<usize, CounterError> {
    let mut p = params!(
        cupti::CUpti_RangeProfiler_GetCounterDataInfo_Params,
        numTotalRanges
    );
    p.pCounterDataImage = image.as_ptr();
    p.counterDataImageSize = image.len();
    // SAFETY: the image outlives the call.
    check("reading the counter data", unsafe {
        cupti::cuptiRangeProfilerGetCounterDataInfo(&mut p)
    })?;
    Ok(p.numTotalRanges)
}

/// The name of range `range` (nested ranges joined with `/`).
pub fn range_name(image: &[u8], range: usize) -> Result<String, CounterError> {
    let mut p = params!(
        cupti::CUpti_RangeProfiler_CounterData_GetRangeInfo_Params,
        rangeName
    );
    p.pCounterDataImage = image.as_ptr();
    p.counterDataImageSize = image.len();
    p.rangeIndex = range;
    p.rangeDelimiter = c"/".as_ptr();
    // SAFETY: the image outlives the call; CUPTI returns a string it allocated.
    check("reading a range name", unsafe {
        cupti::cuptiRangeProfilerCounterDataGetRangeInfo(&mut p)
    })?;
    if p.rangeName.is_null() {
        return Ok(String::new());
    }
    // SAFETY: a NUL-terminated string from CUPTI.
    Ok(unsafe { CStr::from_ptr(p.rangeName) }
        .to_string_lossy()
        .into_owned())
}

/// Metric names as a C array.
struct CNames {
    _owned: Vec<CString>,
    pointers: Vec<*const c_char>,
}

impl CNames {
    fn new(metrics: &[String]) -> Result<CNames, CounterError> {
        let owned = metrics
            .iter()
            .map(|m| CString::new(m.as_str()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| CounterError::UnknownMetric("a metric name holds a NUL byte".into()))?;
        let pointers = owned.iter().map(|c| c.as_ptr()).collect();
        Ok(CNames {
            _owned: owned,
            pointers,
        })
    }
}

/// Copies `n` C strings from a CUPTI-owned array.
///
/// # Safety
/// `array` is null or points at `n` valid NUL-terminated strings.
unsafe fn c_strings(array: *mut *const c_char, n: usize) -> Vec<String> {
    if array.is_null() {
        return Vec::new();
    }
    (0..n)
        .filter_map(|i| {
            // SAFETY: within the array CUPTI returned (see contract).
            let p = unsafe { *array.add(i) };
            // SAFETY: NUL-terminated (see contract).
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        })
        .collect()
}
