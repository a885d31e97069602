//! The GPU operations the `gpu_gaps` and `gpu_time_util` rules look at
//! (nsys's `gpustats` view): kernels, copies and sets with a positive start,
//! per process and device.
//!
//! nsys also adds its own "CUDA profiling ... overhead" rows from
//! `PROFILER_OVERHEAD`; Sightline does not load that table, and no reference
//! report has such rows, so they are left out (see the semantics doc, §9).

use std::collections::BTreeMap;

use super::window::Window;
use crate::model::{Ns, Trace};

/// One GPU operation: start, end, context id.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Op {
    pub start: Ns,
    pub end: Ns,
    pub context: u32,
}

/// The operations of streams `streams` overlapping the window, read in
/// place: stream by stream, kernels, then copies, then sets, each in start
/// order.
pub(crate) struct Group<'a> {
    trace: &'a Trace,
    window: Window,
    streams: Vec<usize>,
}

impl<'a> Group<'a> {
    pub fn ops(&self) -> impl Iterator<Item = Op> + '_ {
        let trace = self.trace;
        let window = self.window;
        self.streams.iter().flat_map(move |&s| {
            let stream = &trace.streams[s];
            stream
                .work_tracks()
                .into_iter()
                .flat_map(move |(kind, track)| {
                    let spans = trace.gpu_spans(kind);
                    track.rows().filter_map(move |i| {
                        let i = i as usize;
                        let (start, end) = (spans.start[i], spans.end(i));
                        (start > 0 && window.overlaps(start, end)).then_some(Op {
                            start,
                            end,
                            context: stream.context_id,
                        })
                    })
                })
        })
    }

    /// At most how many operations [`Group::ops`] gives.
    pub fn most(&self) -> usize {
        (self.streams.iter())
            .flat_map(|&s| self.trace.streams[s].work_tracks())
            .map(|(_, track)| track.len())
            .sum()
    }
}

/// The operations overlapping `window` by (pid, device id), in key order.
/// Read where they are, by both rules: gathered into one list they were a
/// copy of every operation (a quarter of a gigabyte at 10M kernels).
pub(crate) fn by_device(trace: &Trace, window: Window) -> BTreeMap<(u32, u32), Group<'_>> {
    let mut groups: BTreeMap<(u32, u32), Group> = BTreeMap::new();
    for (s, stream) in trace.streams.iter().enumerate() {
        (groups.entry((stream.pid, stream.device_id)))
            .or_insert_with(|| Group {
                trace,
                window,
                streams: Vec::new(),
            })
            .streams
            .push(s);
    }
    groups
}
