//! Values of the nsys export schema's enums (`ENUM_NSYS_EVENT_TYPE`,
//! `ENUM_NSYS_EVENT_CLASS`) that both the loader reads and the writer writes.

/// `NVTX_EVENTS.eventType` values.
pub mod event_type {
    pub const NVTX_CATEGORY: i64 = 33;
    pub const NVTX_MARK: i64 = 34;
    pub const NVTX_THREAD_NAME: i64 = 39;
    pub const NVTX_PUSHPOP: i64 = 59;
    pub const NVTX_STARTEND: i64 = 60;
    /// The NVTXT variants (ranges read from text annotations).
    pub const NVTXT_MARK: i64 = 65;
    pub const NVTXT_PUSHPOP: i64 = 70;
    pub const NVTXT_STARTEND: i64 = 71;
    pub const NVTX_DOMAIN_CREATE: i64 = 75;
}

/// `eventClass` values.
pub mod event_class {
    /// `TRACE_PROCESS_EVENT_CUDA_RUNTIME`.
    pub const CUDA_RUNTIME: i64 = 0;
    /// `TRACE_PROCESS_EVENT_OS_RUNTIME`: what `osrt_sum` counts.
    pub const OS_RUNTIME: i64 = 27;
    /// The class nsys gives CUDA graph node records.
    pub const GRAPH_NODE: i64 = 77;
}

/// The label of an `ENUM_CUDA_MEM_KIND` value (memory kinds of copies and
/// sets), as nsys's export schema has named them since 2021.
pub fn mem_kind_label(kind: u8) -> &'static str {
    match kind {
        0 => "Pageable",
        1 => "Pinned",
        2 => "Device",
        3 => "Array",
        4 => "Managed",
        5 => "Device Static",
        6 => "Managed Static",
        _ => "Unknown",
    }
}

/// A CUDA API name as `nsys stats` and the nsys GUI show it: a `_vNNNN`
/// version suffix (`cudaLaunchKernel_v7000`) goes when `_v` is exactly the 6th
/// and 5th characters from the end, as nsys's SQL decides (so
/// `cudaLaunchKernelExC_v11060` and `cuGetProcAddress_v2` keep theirs).
///
/// ```
/// use sightline::model::nsys::strip_version_suffix;
/// assert_eq!(strip_version_suffix("cudaMemcpy_v3020"), "cudaMemcpy");
/// assert_eq!(strip_version_suffix("cudaLaunchKernelExC_v11060"), "cudaLaunchKernelExC_v11060");
/// ```
pub fn strip_version_suffix(name: &str) -> &str {
    let mut from_end = name.char_indices().rev();
    if let Some((at, '_')) = from_end.nth(5)
        && name[at + 1..].starts_with('v')
    {
        return &name[..at];
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_only_four_character_suffixes() {
        assert_eq!(
            strip_version_suffix("cudaLaunchKernel_v7000"),
            "cudaLaunchKernel"
        );
        assert_eq!(
            strip_version_suffix("cudaLaunchKernelExC_v11060"),
            "cudaLaunchKernelExC_v11060"
        );
        assert_eq!(
            strip_version_suffix("cuGetProcAddress_v2"),
            "cuGetProcAddress_v2"
        );
        assert_eq!(strip_version_suffix("_vabcd"), "");
        assert_eq!(strip_version_suffix("_vab"), "_vab");
        assert_eq!(strip_version_suffix("é_vé234"), "é");
        assert_eq!(strip_version_suffix(""), "");
    }
}
