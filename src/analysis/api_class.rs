//! What a CUDA API call does, by its name, for the analyses that judge how a
//! thread spent its time: runtime and driver API alike, with their `_v2`,
//! `_ptsz`/`_ptds` and `_vNNNN` variants.

use crate::analysis::like::like;
use crate::model::Trace;
use crate::model::nsys::strip_version_suffix;

/// The class of every name of a trace, by `StrId`: each name classified
/// once, not once per call (millions per report).
#[derive(Clone, Debug, Default)]
pub struct ApiClasses(Vec<ApiClass>);

impl ApiClasses {
    pub fn of(trace: &Trace) -> ApiClasses {
        ApiClasses(
            trace
                .strings
                .iter()
                .map(|(_, name)| ApiClass::of(name))
                .collect(),
        )
    }

    /// The class of API call `api` of `trace`.
    pub fn of_call(&self, trace: &Trace, api: usize) -> ApiClass {
        let name = trace.cuda_api.spans.name[api];
        self.0
            .get(name.0 as usize)
            .copied()
            .unwrap_or(ApiClass::Other)
    }
}

/// What an API call does, as far as the analyses care.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ApiClass {
    Other,
    /// Waits for all work of the context (`cudaDeviceSynchronize`, `cuCtxSynchronize`).
    DeviceSync,
    /// Waits for one stream.
    StreamSync,
    /// Waits for one event.
    EventSync,
    /// A copy that returns when done (`cudaMemcpy`, `cuMemcpyDtoH_v2`; not `...Async`).
    BlockingCopy,
    /// A memset that nsys counts as synchronous (`cudaMemset`, `cuMemsetD8_v2`; not `...Async`).
    BlockingSet,
    /// An asynchronous copy (`cudaMemcpyAsync`, `cuMemcpyHtoDAsync_v2`): whether it waits
    /// depends on its memory, which its copy record tells.
    AsyncCopy,
    /// A kernel or graph launch.
    Launch,
    /// Device or pinned host allocation (not the stream-ordered `cudaMallocAsync`).
    Alloc,
    Free,
}

impl ApiClass {
    /// The class of an API name as the report spells it.
    ///
    /// ```
    /// use sightline::analysis::api_class::ApiClass;
    /// assert_eq!(ApiClass::of("cuMemcpyDtoH_v2"), ApiClass::BlockingCopy);
    /// assert_eq!(ApiClass::of("cuMemcpyHtoDAsync_v2"), ApiClass::AsyncCopy);
    /// assert_eq!(ApiClass::of("cudaMemcpyAsync_ptsz_v7000"), ApiClass::AsyncCopy);
    /// assert_eq!(ApiClass::of("cuLaunchKernelEx"), ApiClass::Launch);
    /// assert_eq!(ApiClass::of("cuMemFree_v2"), ApiClass::Free);
    /// assert_eq!(ApiClass::of("cudaStreamSynchronize_ptsz_v7000"), ApiClass::StreamSync);
    /// ```
    pub fn of(name: &str) -> ApiClass {
        let n = strip_version_suffix(name);
        let n = n.strip_suffix("_ptsz").unwrap_or(n);
        let n = n.strip_suffix("_ptds").unwrap_or(n);
        let any = |patterns: &[&str]| patterns.iter().any(|p| like(n, p));
        if any(&["cudaDeviceSynchronize", "cuCtxSynchronize%"]) {
            ApiClass::DeviceSync
        } else if any(&["cudaStreamSynchronize", "cuStreamSynchronize"]) {
            ApiClass::StreamSync
        } else if any(&["cudaEventSynchronize", "cuEventSynchronize"]) {
            ApiClass::EventSync
        } else if like(n, "cudaMemcpy%") || like(n, "cuMemcpy%") {
            if like(n, "%async%") {
                ApiClass::AsyncCopy
            } else {
                ApiClass::BlockingCopy
            }
        } else if like(n, "cudaMemset%") || like(n, "cuMemset%") {
            if like(n, "%async%") {
                ApiClass::Other
            } else {
                ApiClass::BlockingSet
            }
        } else if any(&[
            "cudaLaunch%",
            "cuLaunch%",
            "cudaGraphLaunch%",
            "cuGraphLaunch%",
        ]) {
            ApiClass::Launch
        } else if like(n, "%async%") {
            ApiClass::Other
        } else if any(&[
            "cudaMalloc%",
            "cudaHostAlloc",
            "cudaHostRegister",
            "cuMemAlloc%",
            "cuMemHostAlloc%",
            "cuMemHostRegister%",
        ]) {
            ApiClass::Alloc
        } else if any(&[
            "cudaFree%",
            "cudaHostUnregister",
            "cuMemFree%",
            "cuMemHostUnregister%",
        ]) {
            ApiClass::Free
        } else {
            ApiClass::Other
        }
    }

    /// Whether the calling thread waits for GPU work in it.
    pub fn is_sync(self) -> bool {
        matches!(
            self,
            ApiClass::DeviceSync
                | ApiClass::StreamSync
                | ApiClass::EventSync
                | ApiClass::BlockingCopy
        )
    }
}

#[cfg(test)]
mod tests {
    use super::ApiClass;

    #[test]
    fn runtime_and_driver_forms_agree() {
        for (runtime, driver) in [
            ("cudaMalloc_v3020", "cuMemAlloc_v2"),
            ("cudaFree_v3020", "cuMemFree_v2"),
            ("cudaMemcpy_v3020", "cuMemcpyHtoD_v2"),
            ("cudaMemcpyAsync_v3020", "cuMemcpyDtoHAsync_v2"),
            ("cudaDeviceSynchronize_v3020", "cuCtxSynchronize"),
            ("cudaStreamSynchronize_v3020", "cuStreamSynchronize"),
            ("cudaEventSynchronize_v3020", "cuEventSynchronize"),
            ("cudaLaunchKernel_v7000", "cuLaunchKernel"),
            ("cudaMemset_v3020", "cuMemsetD32_v2"),
            ("cudaHostAlloc_v3020", "cuMemHostAlloc"),
        ] {
            assert_eq!(
                ApiClass::of(runtime),
                ApiClass::of(driver),
                "{runtime} / {driver}"
            );
            assert_ne!(ApiClass::of(driver), ApiClass::Other, "{driver}");
        }
        assert_eq!(
            ApiClass::of("cudaLaunchKernel_ptsz_v7000"),
            ApiClass::Launch
        );
        assert_eq!(ApiClass::of("cudaMallocAsync_v11020"), ApiClass::Other);
        assert_eq!(ApiClass::of("cuKernelGetName"), ApiClass::Other);
    }
}
