//! The GPU operations the `gpu_gaps` and `gpu_time_util` rules look at
//! (nsys's `gpustats` view): kernels, copies and sets with a positive start,
//! per process and device.
//!
//! nsys also adds its own "CUDA profiling ... overhead" rows from
//! `PROFILER_OVERHEAD`; Sightline does not load that table, and no reference
//! report has such rows, so they are left out (see the semantics doc, §9).

use std::collections::BTreeMap;

use super::Window;
use crate::model::{Ns, Trace};

/// One GPU operation: start, end, context id.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Op {
    pub start: Ns,
    pub end: Ns,
    pub context: u32,
}

/// Operations by (pid, device id), in key order.
pub(crate) type ByDevice = BTreeMap<(u32, u32), Vec<Op>>;

/// The operations overlapping `window`, by (pid, device id): gathered once
/// for both rules (a copy of every GPU operation; at 10M events a tenth of
/// a second).
pub(crate) fn by_device(trace: &Trace, window: Window) -> ByDevice {
    let mut groups: ByDevice = BTreeMap::new();
    for stream in &trace.streams {
        let ops = groups.entry((stream.pid, stream.device_id)).or_default();
        for (spans, track) in [
            (&trace.kernels.spans, &stream.kernels),
            (&trace.memcpys.spans, &stream.memcpys),
            (&trace.memsets.spans, &stream.memsets),
        ] {
            for i in track.rows() {
                let i = i as usize;
                let (start, end) = (spans.start[i], spans.end(i));
                if start > 0 && window.overlaps(start, end) {
                    ops.push(Op {
                        start,
                        end,
                        context: stream.context_id,
                    });
                }
            }
        }
    }
    groups.retain(|_, ops| !ops.is_empty());
    groups
}
