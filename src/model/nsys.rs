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
