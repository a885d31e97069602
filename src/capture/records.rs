//! CUPTI activity records, decoded from the bytes CUPTI hands over into owned
//! values that can cross threads.
//!
//! Decoding reads each field at its offset in the record layout of the CUPTI
//! this build targets (CUDA 13.0: Kernel10, Memcpy6, Memset4, API,
//! Synchronization2, Marker2, MarkerData2), as plain integers. cudarc's record
//! structs hold Rust enums, and reading an unexpected value into one is
//! undefined behaviour, so they are used only for their offsets, never read.
//! Records shorter than the layout, or of kinds we do not use, are skipped.
//!
//! The decoder takes bytes and a way to read the C strings records point at,
//! so the same code decodes live buffers and the record dumps kept under
//! `tests/fixtures/` (recorded on a real GPU, replayed in CI without one).

use std::mem::offset_of;

use cudarc::cupti::sys::{
    CUpti_ActivityAPI as Api, CUpti_ActivityKernel10 as Kernel, CUpti_ActivityKind,
    CUpti_ActivityMarker2 as Marker, CUpti_ActivityMarkerData2 as MarkerData,
    CUpti_ActivityMemcpy6 as Memcpy, CUpti_ActivityMemset4 as Memset,
    CUpti_ActivitySynchronization2 as Sync,
};

/// `CUpti_ActivityKind` values we decode.
pub mod kind {
    use super::CUpti_ActivityKind as K;
    pub const MEMCPY: u32 = K::CUPTI_ACTIVITY_KIND_MEMCPY as u32;
    pub const MEMSET: u32 = K::CUPTI_ACTIVITY_KIND_MEMSET as u32;
    pub const DRIVER: u32 = K::CUPTI_ACTIVITY_KIND_DRIVER as u32;
    pub const RUNTIME: u32 = K::CUPTI_ACTIVITY_KIND_RUNTIME as u32;
    pub const KERNEL: u32 = K::CUPTI_ACTIVITY_KIND_KERNEL as u32;
    pub const CONCURRENT_KERNEL: u32 = K::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32;
    pub const MARKER: u32 = K::CUPTI_ACTIVITY_KIND_MARKER as u32;
    pub const MARKER_DATA: u32 = K::CUPTI_ACTIVITY_KIND_MARKER_DATA as u32;
    pub const SYNCHRONIZATION: u32 = K::CUPTI_ACTIVITY_KIND_SYNCHRONIZATION as u32;
}

/// `CUpti_ActivityFlag` bits of marker records.
pub mod marker_flag {
    pub const INSTANTANEOUS: u32 = 1;
    pub const START: u32 = 2;
    pub const END: u32 = 4;
}

/// Where a GPU operation ran and which API call launched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpPlace {
    pub start: u64,
    pub end: u64,
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub correlation: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelRecord {
    pub place: OpPlace,
    /// As CUPTI gives it: plain for `extern "C"` and cuBLAS kernels, mangled
    /// for C++ ones.
    pub name: String,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub registers_per_thread: u16,
    pub static_shared_memory: i32,
    pub dynamic_shared_memory: i32,
    pub local_memory_per_thread: u32,
    pub local_memory_total: u32,
    pub grid_id: i64,
    pub launch_type: u8,
    pub cache_config: u8,
    pub shared_memory_executed: u32,
    pub shared_memory_limit_config: u32,
    pub graph_node_id: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemcpyRecord {
    pub place: OpPlace,
    pub copy_kind: u8,
    pub src_kind: u8,
    pub dst_kind: u8,
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemsetRecord {
    pub place: OpPlace,
    pub value: u32,
    pub bytes: u64,
    pub memory_kind: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncRecord {
    pub sync_type: u32,
    pub start: u64,
    pub end: u64,
    pub correlation: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub cuda_event_id: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiDomain {
    Runtime,
    Driver,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiRecord {
    pub domain: ApiDomain,
    pub cbid: u32,
    /// CUPTI's name for the call, with its version suffix (`cudaMalloc_v3020`),
    /// as nsys stores it.
    pub name: String,
    pub start: u64,
    pub end: u64,
    pub process_id: u32,
    pub thread_id: u32,
    pub correlation: u32,
    pub return_value: u32,
}

/// One end of an NVTX range, or a mark.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerRecord {
    pub flags: u32,
    pub timestamp: u64,
    pub id: u32,
    pub process_id: u32,
    pub thread_id: u32,
    /// Empty on END records.
    pub name: String,
    /// Empty for the default domain.
    pub domain: String,
}

/// Attributes of an NVTX range or mark, by marker id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MarkerDataRecord {
    pub id: u32,
    pub payload: Option<MarkerPayload>,
    /// ARGB; 0 when none was given.
    pub color: u32,
    pub category: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MarkerPayload {
    Int(i64),
    Uint(u64),
    Float(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Kernel(KernelRecord),
    Memcpy(MemcpyRecord),
    Memset(MemsetRecord),
    Sync(SyncRecord),
    Api(ApiRecord),
    Marker(MarkerRecord),
    MarkerData(MarkerDataRecord),
}

/// CUDA API calls that nsys (2025.3, `--trace=cuda`) does not trace, while
/// CUPTI reports them: found by capturing each benchmark and profiling the
/// same benchmark with nsys on the H100 (BENCHMARKS.md). cudarc asks for the
/// current context before every call; keeping those would count twice the
/// calls nsys counts. Dropping them keeps `cuda_api_sum` of a capture equal to
/// nsys's.
const UNTRACED_API_CALLS: &[&str] = &[
    "cuCtxGetCurrent",
    "cuCtxGetDevice",
    "cuCtxGetLimit",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDeviceGetUuid",
    "cuDevicePrimaryCtxRelease_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDeviceTotalMem_v2",
    "cuDriverGetVersion",
    "cuEventElapsedTime_v2",
    "cuGetProcAddress",
    "cuModuleGetFunction",
    "cudaDeviceGetAttribute",
    "cudaFuncGetAttributes",
    "cudaFuncSetAttribute",
    "cudaGetDevice",
    "cudaGetLastError",
    "cudaGetSymbolAddress",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
];

/// Is `name` a call nsys does not trace? Names are compared as `nsys stats`
/// shows them: runtime calls without their `_vNNNN` suffix, driver calls
/// with a `_v2` one.
pub fn untraced_by_nsys(name: &str) -> bool {
    let shown = crate::model::nsys::strip_version_suffix(name);
    UNTRACED_API_CALLS.contains(&shown)
}

/// Reads the C string a record points at. Live: the pointer is dereferenced
/// (CUPTI owns the memory, so it is copied at once); from a dump: looked up.
pub trait StringSource {
    fn read(&mut self, pointer: u64) -> String;
    /// The name of API call `cbid` of `domain`.
    fn api_name(&mut self, domain: ApiDomain, cbid: u32) -> String;
}

/// A field of type `T` at `offset`, if the record is long enough.
fn field<T: FromLe>(bytes: &[u8], offset: usize) -> Option<T> {
    bytes.get(offset..offset + T::SIZE).map(T::from_le)
}

/// Little-endian integers, the byte order of every CUDA platform.
trait FromLe: Sized {
    const SIZE: usize;
    fn from_le(bytes: &[u8]) -> Self;
}

macro_rules! from_le {
    ($($t:ty),*) => {$(
        impl FromLe for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn from_le(bytes: &[u8]) -> Self {
                let mut raw = [0u8; std::mem::size_of::<$t>()];
                raw.copy_from_slice(bytes);
                <$t>::from_le_bytes(raw)
            }
        }
    )*};
}
from_le!(u8, u16, u32, u64, i32, i64, f64);

/// The activity kind of a record (its first four bytes).
pub fn record_kind(bytes: &[u8]) -> Option<u32> {
    field::<u32>(bytes, 0)
}

/// Decodes one record; `None` for kinds we do not use and for records too
/// short for their layout.
pub fn decode(bytes: &[u8], strings: &mut dyn StringSource) -> Option<Record> {
    let kind = record_kind(bytes)?;
    match kind {
        kind::KERNEL | kind::CONCURRENT_KERNEL => decode_kernel(bytes, strings).map(Record::Kernel),
        kind::MEMCPY => decode_memcpy(bytes).map(Record::Memcpy),
        kind::MEMSET => decode_memset(bytes).map(Record::Memset),
        kind::SYNCHRONIZATION => decode_sync(bytes).map(Record::Sync),
        kind::RUNTIME | kind::DRIVER => decode_api(bytes, kind, strings).map(Record::Api),
        kind::MARKER => decode_marker(bytes, strings).map(Record::Marker),
        kind::MARKER_DATA => decode_marker_data(bytes).map(Record::MarkerData),
        _ => None,
    }
}

/// The size of the layout a record of `kind` must at least have.
pub fn layout_size(kind: u32) -> Option<usize> {
    Some(match kind {
        kind::KERNEL | kind::CONCURRENT_KERNEL => std::mem::size_of::<Kernel>(),
        kind::MEMCPY => std::mem::size_of::<Memcpy>(),
        kind::MEMSET => std::mem::size_of::<Memset>(),
        kind::SYNCHRONIZATION => std::mem::size_of::<Sync>(),
        kind::RUNTIME | kind::DRIVER => std::mem::size_of::<Api>(),
        kind::MARKER => std::mem::size_of::<Marker>(),
        kind::MARKER_DATA => std::mem::size_of::<MarkerData>(),
        _ => return None,
    })
}

fn long_enough(bytes: &[u8]) -> Option<()> {
    let needed = layout_size(record_kind(bytes)?)?;
    (bytes.len() >= needed).then_some(())
}

fn decode_kernel(b: &[u8], strings: &mut dyn StringSource) -> Option<KernelRecord> {
    long_enough(b)?;
    let name_ptr = field::<u64>(b, offset_of!(Kernel, name))?;
    // cacheConfig is a byte of two 4-bit fields: requested (low), executed (high).
    let cache = field::<u8>(b, offset_of!(Kernel, cacheConfig))?;
    Some(KernelRecord {
        place: OpPlace {
            start: field(b, offset_of!(Kernel, start))?,
            end: field(b, offset_of!(Kernel, end))?,
            device_id: field(b, offset_of!(Kernel, deviceId))?,
            context_id: field(b, offset_of!(Kernel, contextId))?,
            stream_id: field(b, offset_of!(Kernel, streamId))?,
            correlation: field(b, offset_of!(Kernel, correlationId))?,
        },
        name: strings.read(name_ptr),
        grid: [
            field(b, offset_of!(Kernel, gridX))?,
            field(b, offset_of!(Kernel, gridY))?,
            field(b, offset_of!(Kernel, gridZ))?,
        ],
        block: [
            field(b, offset_of!(Kernel, blockX))?,
            field(b, offset_of!(Kernel, blockY))?,
            field(b, offset_of!(Kernel, blockZ))?,
        ],
        registers_per_thread: field(b, offset_of!(Kernel, registersPerThread))?,
        static_shared_memory: field(b, offset_of!(Kernel, staticSharedMemory))?,
        dynamic_shared_memory: field(b, offset_of!(Kernel, dynamicSharedMemory))?,
        local_memory_per_thread: field(b, offset_of!(Kernel, localMemoryPerThread))?,
        local_memory_total: field(b, offset_of!(Kernel, localMemoryTotal))?,
        grid_id: field(b, offset_of!(Kernel, gridId))?,
        launch_type: field(b, offset_of!(Kernel, launchType))?,
        cache_config: cache >> 4,
        shared_memory_executed: field(b, offset_of!(Kernel, sharedMemoryExecuted))?,
        shared_memory_limit_config: field(b, offset_of!(Kernel, shmemLimitConfig))?,
        graph_node_id: field(b, offset_of!(Kernel, graphNodeId))?,
    })
}

fn decode_memcpy(b: &[u8]) -> Option<MemcpyRecord> {
    long_enough(b)?;
    Some(MemcpyRecord {
        place: OpPlace {
            start: field(b, offset_of!(Memcpy, start))?,
            end: field(b, offset_of!(Memcpy, end))?,
            device_id: field(b, offset_of!(Memcpy, deviceId))?,
            context_id: field(b, offset_of!(Memcpy, contextId))?,
            stream_id: field(b, offset_of!(Memcpy, streamId))?,
            correlation: field(b, offset_of!(Memcpy, correlationId))?,
        },
        copy_kind: field(b, offset_of!(Memcpy, copyKind))?,
        src_kind: field(b, offset_of!(Memcpy, srcKind))?,
        dst_kind: field(b, offset_of!(Memcpy, dstKind))?,
        bytes: field(b, offset_of!(Memcpy, bytes))?,
    })
}

fn decode_memset(b: &[u8]) -> Option<MemsetRecord> {
    long_enough(b)?;
    Some(MemsetRecord {
        place: OpPlace {
            start: field(b, offset_of!(Memset, start))?,
            end: field(b, offset_of!(Memset, end))?,
            device_id: field(b, offset_of!(Memset, deviceId))?,
            context_id: field(b, offset_of!(Memset, contextId))?,
            stream_id: field(b, offset_of!(Memset, streamId))?,
            correlation: field(b, offset_of!(Memset, correlationId))?,
        },
        value: field(b, offset_of!(Memset, value))?,
        bytes: field(b, offset_of!(Memset, bytes))?,
        memory_kind: field(b, offset_of!(Memset, memoryKind))?,
    })
}

fn decode_sync(b: &[u8]) -> Option<SyncRecord> {
    long_enough(b)?;
    Some(SyncRecord {
        sync_type: field(b, offset_of!(Sync, type_))?,
        start: field(b, offset_of!(Sync, start))?,
        end: field(b, offset_of!(Sync, end))?,
        correlation: field(b, offset_of!(Sync, correlationId))?,
        context_id: field(b, offset_of!(Sync, contextId))?,
        stream_id: field(b, offset_of!(Sync, streamId))?,
        cuda_event_id: field(b, offset_of!(Sync, cudaEventId))?,
    })
}

fn decode_api(b: &[u8], kind: u32, strings: &mut dyn StringSource) -> Option<ApiRecord> {
    long_enough(b)?;
    let domain = if kind == kind::RUNTIME {
        ApiDomain::Runtime
    } else {
        ApiDomain::Driver
    };
    let cbid = field(b, offset_of!(Api, cbid))?;
    Some(ApiRecord {
        domain,
        cbid,
        name: strings.api_name(domain, cbid),
        start: field(b, offset_of!(Api, start))?,
        end: field(b, offset_of!(Api, end))?,
        process_id: field(b, offset_of!(Api, processId))?,
        thread_id: field(b, offset_of!(Api, threadId))?,
        correlation: field(b, offset_of!(Api, correlationId))?,
        return_value: field(b, offset_of!(Api, returnValue))?,
    })
}

fn decode_marker(b: &[u8], strings: &mut dyn StringSource) -> Option<MarkerRecord> {
    long_enough(b)?;
    // objectId is a union; for thread markers it holds (processId, threadId).
    let object = offset_of!(Marker, objectId);
    let name_ptr = field::<u64>(b, offset_of!(Marker, name))?;
    let domain_ptr = field::<u64>(b, offset_of!(Marker, domain))?;
    Some(MarkerRecord {
        flags: field(b, offset_of!(Marker, flags))?,
        timestamp: field(b, offset_of!(Marker, timestamp))?,
        id: field(b, offset_of!(Marker, id))?,
        process_id: field(b, object)?,
        thread_id: field(b, object + 4)?,
        name: strings.read(name_ptr),
        domain: strings.read(domain_ptr),
    })
}

fn decode_marker_data(b: &[u8]) -> Option<MarkerDataRecord> {
    long_enough(b)?;
    let payload_at = offset_of!(MarkerData, payload);
    // CUpti_MetricValueKind: 0 double, 1 uint64, 4 int64; others carry no
    // number an NVTX payload column holds. A range given no payload
    // (NVTX_PAYLOAD_UNKNOWN) comes as an unsigned 0 (H100, CUDA 13), which
    // nsys's report of the same range leaves empty: an unsigned 0 is taken
    // for none (a real payload of 0 cannot be told from it here).
    let payload = match field::<u32>(b, offset_of!(MarkerData, payloadKind))? {
        0 => Some(MarkerPayload::Float(field(b, payload_at)?)),
        1 => match field::<u64>(b, payload_at)? {
            0 => None,
            v => Some(MarkerPayload::Uint(v)),
        },
        4 => Some(MarkerPayload::Int(field(b, payload_at)?)),
        _ => None,
    };
    Some(MarkerDataRecord {
        id: field(b, offset_of!(MarkerData, id))?,
        payload,
        color: field(b, offset_of!(MarkerData, color))?,
        category: field(b, offset_of!(MarkerData, category))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoStrings;
    impl StringSource for NoStrings {
        fn read(&mut self, pointer: u64) -> String {
            format!("str@{pointer:x}")
        }
        fn api_name(&mut self, _: ApiDomain, cbid: u32) -> String {
            format!("api{cbid}")
        }
    }

    fn put<T: Copy>(buf: &mut [u8], offset: usize, value: T) {
        let size = std::mem::size_of::<T>();
        // SAFETY: `value` is a plain integer of `size` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(&value as *const T as *const u8, size) };
        buf[offset..offset + size].copy_from_slice(bytes);
    }

    #[test]
    fn layouts_are_the_cuda_13_sizes() {
        // The sizes a probe measured on the GPU machine (capture-notes.md).
        assert_eq!(layout_size(kind::CONCURRENT_KERNEL), Some(216));
        assert_eq!(layout_size(kind::MEMCPY), Some(96));
        assert_eq!(layout_size(kind::MEMSET), Some(88));
        assert_eq!(layout_size(kind::RUNTIME), Some(40));
        assert_eq!(layout_size(kind::SYNCHRONIZATION), Some(56));
        assert_eq!(layout_size(kind::MARKER), Some(56));
        assert_eq!(layout_size(kind::MARKER_DATA), Some(40));
    }

    #[test]
    fn decodes_a_kernel_and_refuses_a_short_one() {
        let mut b = vec![0u8; 216];
        put(&mut b, 0, kind::CONCURRENT_KERNEL);
        put(&mut b, offset_of!(Kernel, start), 1_000u64);
        put(&mut b, offset_of!(Kernel, end), 3_500u64);
        put(&mut b, offset_of!(Kernel, streamId), 7u32);
        put(&mut b, offset_of!(Kernel, correlationId), 42u32);
        put(&mut b, offset_of!(Kernel, gridX), 128i32);
        put(&mut b, offset_of!(Kernel, blockX), 256i32);
        put(&mut b, offset_of!(Kernel, registersPerThread), 32u16);
        put(&mut b, offset_of!(Kernel, name), 0xabcdu64);
        let Some(Record::Kernel(k)) = decode(&b, &mut NoStrings) else {
            panic!("not a kernel");
        };
        assert_eq!((k.place.start, k.place.end), (1_000, 3_500));
        assert_eq!((k.place.stream_id, k.place.correlation), (7, 42));
        assert_eq!(
            (k.grid[0], k.block[0], k.registers_per_thread),
            (128, 256, 32)
        );
        assert_eq!(k.name, "str@abcd");
        assert_eq!(decode(&b[..100], &mut NoStrings), None);
    }

    #[test]
    fn unknown_kinds_and_garbage_decode_to_nothing() {
        let mut b = vec![0u8; 64];
        put(&mut b, 0, 9999u32);
        assert_eq!(decode(&b, &mut NoStrings), None);
        assert_eq!(decode(&[1, 2], &mut NoStrings), None);
        assert_eq!(decode(&[], &mut NoStrings), None);
    }

    #[test]
    fn marker_payload_kinds() {
        let mut b = vec![0u8; 40];
        put(&mut b, 0, kind::MARKER_DATA);
        put(&mut b, offset_of!(MarkerData, id), 5u32);
        put(&mut b, offset_of!(MarkerData, payloadKind), 1u32);
        put(&mut b, offset_of!(MarkerData, payload), 1u64 << 40);
        put(&mut b, offset_of!(MarkerData, color), 0xff00ff00u32);
        let Some(Record::MarkerData(d)) = decode(&b, &mut NoStrings) else {
            panic!("not marker data");
        };
        assert_eq!(d.payload, Some(MarkerPayload::Uint(1 << 40)));
        assert_eq!((d.id, d.color), (5, 0xff00ff00));
        // How CUPTI hands over a range given no payload.
        put(&mut b, offset_of!(MarkerData, payload), 0u64);
        let Some(Record::MarkerData(d)) = decode(&b, &mut NoStrings) else {
            panic!("not marker data");
        };
        assert_eq!(d.payload, None);
    }
}
