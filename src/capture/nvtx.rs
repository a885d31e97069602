//! A small safe layer over `nvtx-sys` for the benchmarks: one `sightline` domain, push/pop and
//! start/end ranges with an ARGB color and an optional payload (the work size: FLOPs or bytes,
//! which the kernel panel turns into TFLOP/s or GB/s), and instant marks.
//!
//! Every call is a no-op unless a tool (nsys, or Sightline's own CUPTI capture through
//! `NVTX_INJECTION64_PATH`) has injected itself, so the benchmarks can call these freely.

use std::ffi::CString;
use std::sync::OnceLock;

use nvtx_sys::ffi::{nvtxEventAttributes_v2_payload_t, nvtxMessageValue_t};
use nvtx_sys::{ColorType, DomainHandle, EventAttributes, MessageType, PayloadType};

/// The NVTX domain every benchmark range lives in (nsys shows it as its own row).
pub const DOMAIN_NAME: &str = "sightline";

/// Colors for the benchmark phases, as 0xAARRGGBB.
pub mod colors {
    pub const SETUP: u32 = 0xFF9E9E9E;
    pub const WARMUP: u32 = 0xFFFFB300;
    pub const TIMED: u32 = 0xFF43A047;
    pub const VARIANT: u32 = 0xFF1E88E5;
    pub const COPY: u32 = 0xFF8E24AA;
    pub const COMPUTE: u32 = 0xFFE53935;
    pub const CHECK: u32 = 0xFF00897B;
}

/// The size of the work a range covers, attached as the NVTX payload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Payload {
    /// An unsigned count: FLOPs or bytes.
    U64(u64),
    /// A signed count.
    I64(i64),
    /// A fractional amount.
    F64(f64),
}

impl Payload {
    /// The payload type tag and value union as the event attributes carry them.
    fn to_raw(self) -> (PayloadType, nvtxEventAttributes_v2_payload_t) {
        match self {
            Payload::U64(v) => (
                PayloadType::NVTX_PAYLOAD_TYPE_UNSIGNED_INT64,
                nvtxEventAttributes_v2_payload_t { ullValue: v },
            ),
            Payload::I64(v) => (
                PayloadType::NVTX_PAYLOAD_TYPE_INT64,
                nvtxEventAttributes_v2_payload_t { llValue: v },
            ),
            Payload::F64(v) => (
                PayloadType::NVTX_PAYLOAD_TYPE_DOUBLE,
                nvtxEventAttributes_v2_payload_t { dValue: v },
            ),
        }
    }
}

/// The message text as NVTX wants it: NUL-terminated. An interior NUL (which no benchmark
/// writes) would truncate the C string, so the text is cut there rather than rejected: a range
/// name must never make a benchmark fail.
fn c_message(message: &str) -> CString {
    let visible = message.split('\0').next().unwrap_or_default();
    CString::new(visible).unwrap_or_default()
}

/// Builds the Ex attributes for one event. `message` must outlive the NVTX call that reads
/// the attributes, which is why it is borrowed rather than built here.
fn attributes(message: &CString, color: u32, payload: Option<Payload>) -> EventAttributes {
    let (payload_type, payload_value) = match payload {
        Some(p) => {
            let (t, v) = p.to_raw();
            (i32::from(t), v)
        }
        None => (
            i32::from(PayloadType::NVTX_PAYLOAD_UNKNOWN),
            nvtxEventAttributes_v2_payload_t { ullValue: 0 },
        ),
    };
    EventAttributes {
        version: nvtx_sys::NVTX_VERSION as u16,
        size: nvtx_sys::NVTX_EVENT_ATTRIBUTES_SIZE as u16,
        category: 0,
        colorType: i32::from(ColorType::NVTX_COLOR_ARGB),
        color,
        payloadType: payload_type,
        reserved0: 0,
        payload: payload_value,
        messageType: i32::from(MessageType::NVTX_MESSAGE_TYPE_ASCII),
        message: nvtxMessageValue_t {
            ascii: message.as_ptr(),
        },
    }
}

/// The `sightline` NVTX domain, created once per process on first use and never destroyed
/// (NVTX domains are meant to live as long as the process).
pub fn domain() -> DomainHandle {
    static DOMAIN: OnceLock<DomainHandle> = OnceLock::new();
    *DOMAIN.get_or_init(|| nvtx_sys::domain_create_ascii(&c_message(DOMAIN_NAME)))
}

/// Pushes a range on this thread's stack in the `sightline` domain; [`pop`] closes it.
/// Prefer [`push_range`], whose guard pops even on an early return.
pub fn push(name: &str, color: u32, payload: Option<Payload>) {
    let message = c_message(name);
    // The returned depth is only informative (negative when no tool is attached).
    let _depth = nvtx_sys::domain_range_push_ex(domain(), &attributes(&message, color, payload));
}

/// Pops the innermost range that [`push`] opened on this thread.
pub fn pop() {
    let _depth = nvtx_sys::domain_range_pop(domain());
}

/// Closes its push/pop range when dropped.
#[must_use = "the range closes when this guard is dropped"]
#[derive(Debug)]
pub struct RangeGuard {
    // Push/pop ranges belong to the thread that pushed them: the guard must not move to
    // another thread, which this marker enforces (raw pointers are neither Send nor Sync).
    _same_thread: std::marker::PhantomData<*const ()>,
}

impl Drop for RangeGuard {
    fn drop(&mut self) {
        pop();
    }
}

/// Pushes a range that pops when the returned guard drops.
pub fn push_range(name: &str, color: u32, payload: Option<Payload>) -> RangeGuard {
    push(name, color, payload);
    RangeGuard {
        _same_thread: std::marker::PhantomData,
    }
}

/// A start/end range: unlike push/pop it may end on another thread and may overlap others.
#[must_use = "call end() to close the range"]
#[derive(Debug)]
pub struct StartedRange {
    id: nvtx_sys::RangeId,
}

/// Starts a start/end range in the `sightline` domain.
pub fn start_range(name: &str, color: u32, payload: Option<Payload>) -> StartedRange {
    let message = c_message(name);
    let id = nvtx_sys::domain_range_start_ex(domain(), &attributes(&message, color, payload));
    if let Ok(mut ids) = STARTED_IDS.lock() {
        ids.insert(id);
    }
    StartedRange { id }
}

/// Ids of the start/end ranges this process opened. CUPTI's marker records
/// carry the same id but not which API opened the range (push/pop or
/// start/end); a capture asks here, as nsys tells them apart.
static STARTED_IDS: std::sync::Mutex<std::collections::BTreeSet<u64>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The ids of every start/end range this process opened (for record dumps).
pub fn started_range_ids() -> Vec<u64> {
    STARTED_IDS
        .lock()
        .map(|ids| ids.iter().copied().collect())
        .unwrap_or_default()
}

/// Was range `id` opened with [`start_range`] (start/end) in this process?
pub fn was_started_range(id: u64) -> bool {
    STARTED_IDS.lock().is_ok_and(|ids| ids.contains(&id))
}

impl StartedRange {
    /// Ends the range.
    pub fn end(self) {
        nvtx_sys::domain_range_end(domain(), self.id);
    }
}

/// An instant marker in the `sightline` domain.
pub fn mark(name: &str, color: u32, payload: Option<Payload>) {
    let message = c_message(name);
    nvtx_sys::domain_mark_ex(domain(), &attributes(&message, color, payload));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_nul_terminated_and_cut_at_interior_nul() {
        assert_eq!(c_message("warmup").as_bytes(), b"warmup");
        assert_eq!(c_message("a\0b").as_bytes(), b"a");
        assert_eq!(c_message("").as_bytes(), b"");
    }

    #[test]
    fn attributes_carry_color_and_payload() {
        let message = c_message("timed");
        let attrs = attributes(&message, colors::TIMED, Some(Payload::U64(42)));
        assert_eq!(attrs.color, colors::TIMED);
        assert_eq!(attrs.colorType, i32::from(ColorType::NVTX_COLOR_ARGB));
        assert_eq!(
            attrs.payloadType,
            i32::from(PayloadType::NVTX_PAYLOAD_TYPE_UNSIGNED_INT64)
        );
        // SAFETY: the payload type above says the union holds its u64 member.
        assert_eq!(unsafe { attrs.payload.ullValue }, 42);
        assert_eq!(
            usize::from(attrs.size),
            nvtx_sys::NVTX_EVENT_ATTRIBUTES_SIZE
        );

        let none = attributes(&message, colors::SETUP, None);
        assert_eq!(
            none.payloadType,
            i32::from(PayloadType::NVTX_PAYLOAD_UNKNOWN)
        );
        let float = attributes(&message, colors::SETUP, Some(Payload::F64(1.5)));
        // SAFETY: the payload is the f64 member, as the type tag says.
        assert_eq!(unsafe { float.payload.dValue }, 1.5);
    }

    #[test]
    fn calls_without_a_tool_are_harmless() {
        // No tool injects here: every call must be a silent no-op.
        {
            let _outer = push_range("outer", colors::VARIANT, Some(Payload::I64(-1)));
            mark("instant", colors::CHECK, None);
        }
        start_range("started", colors::COPY, Some(Payload::F64(2.0))).end();
    }
}
