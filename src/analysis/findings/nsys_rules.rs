//! The findings of nsys's rules, with nsys's thresholds: pageable async copies,
//! synchronous copies and sets, GPU idle gaps, low GPU utilization. The rows
//! are the ones `sightline analyze --rule` prints (without the row limit).

use std::sync::atomic::AtomicBool;

use super::context::Context;
use super::finding::{Finding, FindingKind, Severity, Thresholds};
use crate::analysis::api_class::ApiClass;
use crate::analysis::cancel::{Cancelled, check};
use crate::analysis::format::binary_size;
use crate::analysis::format::human_ns;
use crate::analysis::rules::memcpy::{self, Which};
use crate::analysis::rules::sorted_ops::SortedOps;
use crate::analysis::rules::{Window, cuda_memset_sync, gpu_gaps, gpu_time_util};
use crate::model::nsys::mem_kind_label;
use crate::model::{EventId, EventKind, Ns};
use crate::threads;

const PAGEABLE_FIX: &str = "An async copy to or from pageable host memory is staged through a \
pinned buffer and does not overlap with other work. Allocate the host buffer pinned \
(cudaMallocHost / cudaHostAlloc, or cudaHostRegister).";

const SYNC_MEMCPY_FIX: &str = "A synchronous copy blocks the CPU until the GPU has finished it \
(and all earlier work on the stream). Use cudaMemcpyAsync with pinned memory on a stream, and \
synchronize only when the data is needed.";

const SYNC_MEMSET_FIX: &str = "A synchronous memset of pinned or managed memory blocks the \
CPU. Use cudaMemsetAsync on a stream.";

const GAP_FIX: &str = "The GPU ran nothing for this long. Look at what the CPU did meanwhile \
(I/O, data preparation, syncs) and overlap it with GPU work.";

const UTIL_FIX: &str = "The GPU was mostly idle in this stretch. Look for host work, syncs or \
small kernels there, and overlap or batch them.";

/// The rules' findings; `earlier`: the sorted operations of the last run
/// on an earlier state of a growing report, extended rather than sorted
/// again. Returns the sorted operations of `ctx`'s trace, for the next run.
pub(super) fn rule_findings(
    ctx: &Context,
    earlier: Option<SortedOps>,
    t: &Thresholds,
    out: &mut Vec<Finding>,
    cancel: &AtomicBool,
) -> Result<SortedOps, Cancelled> {
    let trace = ctx.trace;
    let sorted = || match earlier {
        Some(ops) => ops.extended(trace),
        None => SortedOps::of(trace, Window::ALL),
    };
    // These rules run beside the idle attribution. Where cores are left,
    // sorting every GPU operation (10M kernels) runs beside the copies' and
    // sets' rules (a pass over every API call each); on two cores the
    // threads only took turns (a run 8 % slower).
    let spare_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() > 2);
    let ops = if spare_cores {
        std::thread::scope(|s| {
            let ops = s.spawn(sorted);
            copy_findings(ctx, out, cancel)?;
            Ok::<_, Cancelled>(threads::joined(ops))
        })?
    } else {
        copy_findings(ctx, out, cancel)?;
        sorted()
    };
    let gaps = gpu_gaps::gaps_of(&ops, (t.gap_ms * 1e6) as Ns);
    let low_use = gpu_time_util::low_use_of(&ops, t.util_chunks, t.util_threshold);
    check(cancel)?;
    for (duration, start, pid, device, _) in gaps {
        out.push(Finding {
            kind: FindingKind::GpuIdleGap,
            severity: Severity::Info,
            start,
            end: start.saturating_add(duration),
            range: None,
            events: Vec::new(),
            message: format!(
                "GPU {device} ran nothing of process {pid} for {}",
                human_ns(duration)
            ),
            fix: GAP_FIX,
        });
    }
    check(cancel)?;
    for u in low_use {
        out.push(Finding {
            kind: FindingKind::LowGpuUtilization,
            severity: Severity::Info,
            start: u.start,
            end: u.start.saturating_add(u.duration),
            range: None,
            events: Vec::new(),
            message: format!(
                "GPU {} was in use {:.1}% of {} for process {}",
                u.device,
                crate::analysis::format::round1_value(u.in_use),
                human_ns(u.duration),
                u.pid
            ),
            fix: UTIL_FIX,
        });
    }
    Ok(ops)
}

/// The findings of nsys's copy and set rules: pageable async copies,
/// synchronous copies and sets.
fn copy_findings(
    ctx: &Context,
    out: &mut Vec<Finding>,
    cancel: &AtomicBool,
) -> Result<(), Cancelled> {
    let trace = ctx.trace;
    let api_threads = ctx.api_threads();
    check(cancel)?;
    let copies = [
        (
            Which::AsyncPageable,
            FindingKind::PageableMemcpy,
            PAGEABLE_FIX,
        ),
        (Which::Sync, FindingKind::SyncMemcpy, SYNC_MEMCPY_FIX),
    ];
    for (which, kind, fix) in copies {
        // The runtime and the driver API's forms alike (nsys's rules match
        // `cudaMemcpy*` only); which memory a copy touched comes from its record.
        let class = match which {
            Which::AsyncPageable => ApiClass::AsyncCopy,
            Which::Sync => ApiClass::BlockingCopy,
        };
        for m in memcpy::matches_by(trace, Window::ALL, which, |n| ApiClass::of(n) == class) {
            let spans = &trace.memcpys.spans;
            let (start, end) = (spans.start[m.op], spans.end(m.op));
            let thread = api_threads.get(m.api).copied().unwrap_or(0);
            let (api_start, api_end) = ctx.api_span(m.api);
            out.push(Finding {
                kind,
                severity: Severity::Info,
                start,
                end,
                range: ctx.enclosing_path(thread, api_start, api_end),
                events: vec![
                    EventId::new(EventKind::Api, m.api as u32),
                    EventId::new(EventKind::Memcpy, m.op as u32),
                ],
                message: format!(
                    "{} of {} ({}, {} to {}) took {} on the GPU, {} in the call",
                    ctx.api_name(m.api),
                    binary_size(trace.memcpys.bytes[m.op]),
                    trace.name(spans.name[m.op]),
                    mem_kind_label(trace.memcpys.src_kind[m.op]),
                    mem_kind_label(trace.memcpys.dst_kind[m.op]),
                    human_ns(end.saturating_sub(start)),
                    human_ns(api_end.saturating_sub(api_start))
                ),
                fix,
            });
        }
        check(cancel)?;
    }
    for m in cuda_memset_sync::matches_by(trace, Window::ALL, |n| {
        ApiClass::of(n) == ApiClass::BlockingSet
    }) {
        let spans = &trace.memsets.spans;
        let (start, end) = (spans.start[m.op], spans.end(m.op));
        let thread = api_threads.get(m.api).copied().unwrap_or(0);
        let (api_start, api_end) = ctx.api_span(m.api);
        out.push(Finding {
            kind: FindingKind::SyncMemset,
            severity: Severity::Info,
            start,
            end,
            range: ctx.enclosing_path(thread, api_start, api_end),
            events: vec![
                EventId::new(EventKind::Api, m.api as u32),
                EventId::new(EventKind::Memset, m.op as u32),
            ],
            message: format!(
                "{} of {} took {} on the GPU, {} in the call",
                ctx.api_name(m.api),
                binary_size(trace.memsets.bytes[m.op]),
                human_ns(end.saturating_sub(start)),
                human_ns(api_end.saturating_sub(api_start))
            ),
            fix: SYNC_MEMSET_FIX,
        });
    }
    Ok(())
}
