//! Columnar event tables.
//!
//! Each table holds one kind of event for the whole trace, grouped by track (a
//! thread or a stream) and sorted by start time inside each track, so a track is
//! a `Range<u32>` into the table and a visible window is two binary searches.
//! Columns are plain vectors: nothing per event that is not needed.

use std::collections::HashMap;
use std::ops::Range;

use super::column::Column;
use super::columns::{IdColumn, SparseColumn};
use super::strings::StrId;

/// Nanoseconds on the session clock.
pub type Ns = i64;

/// A half-open time span `[start, end)` in session nanoseconds: a range the
/// user selected, or the span a summary covers. Which events belong to it is
/// the analysis's rule (`analysis::stats::RangeRule`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeRange {
    pub start: Ns,
    pub end: Ns,
}

/// A slice of a table: the events of one track.
pub type Span = Range<u32>;

/// Start, end and name: the columns every duration event has.
///
/// The end is kept as a 4-byte duration from the start, not as an 8-byte
/// timestamp: that is a tenth of a model's memory. The few events that do not
/// fit (4.29 s and longer, or ending before they start in a damaged report)
/// keep their exact end in a side table, so every end reads back exactly.
/// Columns only grow: `push` appends, and an event's index never changes.
#[derive(Debug, Default, Clone)]
pub struct SpanColumns {
    pub start: Column<Ns>,
    /// `end - start`, or [`LONG`] when the end is in `long_ends`.
    durations: Column<u32>,
    /// `(index, end)` of the events whose duration does not fit, by index.
    long_ends: Column<(u32, Ns)>,
    pub name: Column<StrId>,
    /// The earliest start and the latest end, kept as the columns grow, so
    /// that a report's time axis is not a pass over every event (a loader
    /// publishing snapshots asks for it after each table).
    bounds: Option<(Ns, Ns)>,
}

/// A column of ends as [`SpanColumns`] keeps it, made apart from its starts
/// and names ([`SpanColumns::from_parts`]).
#[derive(Debug, Default)]
pub struct EncodedEnds {
    durations: Vec<u32>,
    long_ends: Vec<(u32, Ns)>,
    bounds: Option<(Ns, Ns)>,
}

impl EncodedEnds {
    /// The ends `end` of events starting at `start` (of one length).
    pub fn new(start: &[Ns], end: &[Ns]) -> Self {
        debug_assert_eq!(start.len(), end.len());
        let mut durations = Vec::with_capacity(start.len());
        let mut long_ends = Vec::new();
        let mut bounds = None;
        for (i, (&s, &e)) in start.iter().zip(end).enumerate() {
            durations.push(encode(i, s, e, &mut long_ends));
            bounds = widen(bounds, s, e);
        }
        EncodedEnds {
            durations,
            long_ends,
            bounds,
        }
    }
}

/// The duration that says "look the end up in the side table".
const LONG: u32 = u32::MAX;

impl SpanColumns {
    /// Columns from whole start, end and name columns (of one length); the
    /// ends are read, not kept (durations are).
    pub fn from_columns(start: Vec<Ns>, end: &[Ns], name: Vec<StrId>) -> Self {
        let ends = EncodedEnds::new(&start, end);
        SpanColumns::from_parts(start, ends, name)
    }

    /// Columns from whole start and name columns and the ends encoded from
    /// them ([`EncodedEnds::new`] of the same starts): the three can be made
    /// on threads of their own.
    pub fn from_parts(start: Vec<Ns>, ends: EncodedEnds, name: Vec<StrId>) -> Self {
        debug_assert_eq!(start.len(), ends.durations.len());
        debug_assert_eq!(start.len(), name.len());
        SpanColumns {
            start: start.into(),
            durations: ends.durations.into(),
            long_ends: ends.long_ends.into(),
            name: name.into(),
            bounds: ends.bounds,
        }
    }

    /// The earliest start and the latest end of the events, `None` for none.
    pub fn bounds(&self) -> Option<(Ns, Ns)> {
        self.bounds
    }

    /// Appends one event; its index is the previous length.
    pub fn push(&mut self, start: Ns, end: Ns, name: StrId) {
        let i = self.start.len();
        let mut long = Vec::new();
        self.durations.push(encode(i, start, end, &mut long));
        self.long_ends.extend_from_slice(&long);
        self.start.push(start);
        self.name.push(name);
        self.bounds = widen(self.bounds, start, end);
    }

    /// Appends events `start[i]..end[i]` named `name[i]` (of one length):
    /// their indexes follow the last, and every earlier index keeps its
    /// event (shared columns are written past their ends only).
    pub fn append(&mut self, start: &[Ns], end: &[Ns], name: &[StrId]) {
        debug_assert!(start.len() == end.len() && start.len() == name.len());
        let base = self.start.len();
        let mut long = Vec::new();
        let durations: Vec<u32> = (start.iter().zip(end).enumerate())
            .map(|(i, (&s, &e))| {
                self.bounds = widen(self.bounds, s, e);
                encode(base + i, s, e, &mut long)
            })
            .collect();
        self.durations.extend_from_slice(&durations);
        self.long_ends.extend_from_slice(&long);
        self.start.extend_from_slice(start);
        self.name.extend_from_slice(name);
    }

    /// Moves the ends of events already there (`(index, end)`, each index
    /// once, no end earlier than the event's start or its end before: the
    /// bounds only widen): the durations are copied for this clone, other
    /// clones keep theirs (a growing report's NVTX ranges still open end at
    /// its latest time, which moves).
    pub fn move_ends(&mut self, moved: &[(usize, Ns)]) {
        if moved.is_empty() {
            return;
        }
        let mut durations = self.durations.to_vec();
        let mut long_ends = self.long_ends.to_vec();
        for &(i, end) in moved {
            let start = self.start[i];
            if durations[i] == LONG
                && let Ok(at) = long_ends.binary_search_by_key(&(i as u32), |l| l.0)
            {
                long_ends.remove(at);
            }
            let mut long = Vec::new();
            durations[i] = encode(i, start, end, &mut long);
            for l in long {
                let at = long_ends.partition_point(|x| x.0 < l.0);
                long_ends.insert(at, l);
            }
            self.bounds = widen(self.bounds, start, end);
        }
        self.durations = durations.into();
        self.long_ends = long_ends.into();
    }

    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// The end of event `i` (panics past the end, as indexing does).
    #[inline]
    pub fn end(&self, i: usize) -> Ns {
        match self.durations[i] {
            LONG => self.long_end(i),
            d => self.start[i] + d as Ns,
        }
    }

    /// The start and end of event `i`, None past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<(Ns, Ns)> {
        (i < self.len()).then(|| (self.start[i], self.end(i)))
    }

    /// Every end, in index order.
    pub fn ends(&self) -> impl ExactSizeIterator<Item = Ns> + Clone + '_ {
        (0..self.len()).map(|i| self.end(i))
    }

    fn long_end(&self, i: usize) -> Ns {
        let at = self.long_ends.partition_point(|&(j, _)| (j as usize) < i);
        self.long_ends[at].1
    }

    #[inline]
    pub fn duration(&self, i: usize) -> Ns {
        match self.durations[i] {
            // Saturating: a damaged report may hold any pair of timestamps.
            LONG => self.long_end(i).saturating_sub(self.start[i]),
            d => d as Ns,
        }
    }

    /// The events of `track` that may overlap `[from, to)`: those starting
    /// before `to` and, thanks to `max_duration`, possibly ending after `from`.
    /// `max_duration` is the longest event of the track (see [`Track`]).
    pub fn window(&self, track: &Span, from: Ns, to: Ns, max_duration: Ns) -> Span {
        let starts = &self.start[track.start as usize..track.end as usize];
        let lo = starts.partition_point(|&s| s < from.saturating_sub(max_duration));
        let hi = starts.partition_point(|&s| s < to);
        track.start + lo as u32..track.start + hi as u32
    }

    /// The events of `track` whose start lies in `[from, to)`.
    pub fn starting_in(&self, track: &Span, from: Ns, to: Ns) -> Span {
        let starts = &self.start[track.start as usize..track.end as usize];
        let lo = starts.partition_point(|&s| s < from);
        let hi = starts.partition_point(|&s| s < to);
        track.start + lo as u32..track.start + hi as u32
    }

    pub fn heap_bytes(&self) -> usize {
        self.start.capacity() * 8
            + self.durations.capacity() * 4
            + self.long_ends.capacity() * 16
            + self.name.capacity() * 4
    }
}

/// `bounds` taking in an event `[start, end]`.
#[inline]
fn widen(bounds: Option<(Ns, Ns)>, start: Ns, end: Ns) -> Option<(Ns, Ns)> {
    Some(match bounds {
        Some((lo, hi)) => (lo.min(start), hi.max(end)),
        None => (start, end),
    })
}

/// The stored duration of event `i`, noting its end aside when it does not fit.
fn encode(i: usize, start: Ns, end: Ns, long_ends: &mut Vec<(u32, Ns)>) -> u32 {
    match end.checked_sub(start).map(u32::try_from) {
        Some(Ok(d)) if d != LONG => d,
        _ => {
            long_ends.push((i as u32, end));
            LONG
        }
    }
}

/// CUDA runtime and driver API calls (`CUPTI_ACTIVITY_KIND_RUNTIME`), by thread.
/// A clone shares the columns (see [`Column`]).
#[derive(Debug, Default, Clone)]
pub struct ApiCalls {
    pub spans: SpanColumns,
    pub correlation: Column<u32>,
    /// The CUDA result code: 0 for nearly every call, so stored sparse.
    pub return_value: SparseColumn<i32>,
}

/// OS runtime library calls (`OSRT_API`), by thread.
#[derive(Debug, Default, Clone)]
pub struct OsCalls {
    pub spans: SpanColumns,
    pub return_value: Column<i64>,
    /// nsys's event class: 27 is an ordinary OS runtime call (what `osrt_sum` counts).
    pub event_class: Column<u8>,
}

/// How an NVTX event was made.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum NvtxKind {
    PushPop = 0,
    StartEnd = 1,
    Mark = 2,
}

/// An NVTX payload value (the union in `NVTX_EVENTS`).
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    Int(i64),
    Uint(u64),
    Float(f64),
    Json(String),
}

/// The NVTX ranges that have a payload (most have none), each with it, by
/// range: kept in a [`Column`] that a growing report's snapshots share (a
/// capture's next table appends the payloads of its new ranges).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Payloads(Column<(u32, Payload)>);

impl Payloads {
    /// From `(range, payload)` sorted by range, each range once.
    pub fn from_sorted(entries: Vec<(u32, Payload)>) -> Self {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        Payloads(entries.into())
    }

    /// Range `range`'s payload, if it has one.
    pub fn get(&self, range: &u32) -> Option<&Payload> {
        let at = self.0.binary_search_by_key(range, |e| e.0).ok()?;
        Some(&self.0[at].1)
    }

    /// Adds the payload of `range`, which follows every range here.
    pub fn push(&mut self, range: u32, payload: Payload) {
        debug_assert!(self.0.last().is_none_or(|e| e.0 < range));
        self.0.push((range, payload));
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// NVTX ranges and marks, by thread and domain.
#[derive(Debug, Default)]
pub struct NvtxRanges {
    pub spans: SpanColumns,
    /// Columns that snapshots of a growing report share (see
    /// [`Column`]): a capture's next table appends to them.
    pub kind: Column<NvtxKind>,
    /// Nesting level inside its track, rebuilt from containment (0 = outermost).
    pub depth: Column<u8>,
    /// ARGB; 0 when the range has no color of its own.
    pub color: Column<u32>,
    pub category: Column<u32>,
    /// Ranges nsys recorded without an end: their end is the last NVTX timestamp
    /// of the report, as `nsys stats` counts them.
    pub unended: Column<bool>,
    /// The `NVTX_EVENTS` rowid: nsys's range id (`RangeId` in its NVTX
    /// projection reports), and the order nsys breaks ties in.
    pub row_id: Column<i64>,
    /// Sparse columns: most ranges have neither.
    pub payload: Payloads,
    /// Start/end ranges that ended on another thread: index of that thread.
    pub end_thread: HashMap<u32, u32>,
    /// Names given to categories (`nvtxNameCategory`): (domain name, category) → name.
    pub category_names: HashMap<(String, u32), String>,
}

impl NvtxRanges {
    /// Whether range `i` was recorded without an end (a capture's range
    /// still open, or one its program never ended); false for a row that is
    /// not there.
    pub fn is_unended(&self, i: usize) -> bool {
        self.unended.get(i).copied().unwrap_or(false)
    }
}

/// Launch attributes that kernels of one launch site share, stored once.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers_per_thread: u32,
    pub static_shared_memory: u32,
    pub dynamic_shared_memory: u32,
    pub local_memory_per_thread: u32,
    pub local_memory_total: u64,
    pub shared_memory_executed: u32,
    pub launch_type: u8,
    pub cache_config: u8,
    pub shared_memory_limit_config: u8,
}

/// Kernels (`CUPTI_ACTIVITY_KIND_KERNEL`), by stream. `spans.name` is the
/// demangled name, the one `nsys stats` reports. A clone shares the columns
/// (see [`Column`]).
#[derive(Debug, Default, Clone)]
pub struct Kernels {
    pub spans: SpanColumns,
    /// The short and mangled names, read through [`Kernels::short_name`] and
    /// [`Kernels::mangled_name`].
    pub names: KernelNames,
    pub correlation: Column<u32>,
    pub config: Column<u32>,
    pub grid_id: IdColumn,
    /// 0 when the kernel was not launched from a CUDA graph.
    pub graph_node_id: SparseColumn<u64>,
    pub configs: Vec<LaunchConfig>,
}

impl Kernels {
    /// The short name of kernel `i` (`shortName`), None past the end.
    pub fn short_name(&self, i: usize) -> Option<StrId> {
        Some(self.names.get(i, *self.spans.name.get(i)?).0)
    }

    /// The mangled name of kernel `i` (`StrId(0)` when the report has none),
    /// None past the end.
    pub fn mangled_name(&self, i: usize) -> Option<StrId> {
        Some(self.names.get(i, *self.spans.name.get(i)?).1)
    }
}

/// Kernels' short and mangled names. Every instance of one kernel function
/// has the same pair, so it is kept once per demangled name rather than 8
/// bytes per instance; an instance whose pair differs from its name's first
/// is kept aside.
#[derive(Debug, Default, Clone)]
pub struct KernelNames {
    by_name: HashMap<StrId, (StrId, StrId)>,
    unusual: SparseColumn<Option<(StrId, StrId)>>,
}

impl KernelNames {
    /// Names for kernels whose demangled names are `names`, in index order.
    pub fn from_columns(names: &[StrId], short: &[StrId], mangled: &[StrId]) -> Self {
        let mut kept = KernelNames::default();
        // The last pairs seen, by the name's low bits: a few kernels make up
        // most of a stream, and a hash per kernel was most of this loop.
        let mut recent = [(StrId::default(), None::<(StrId, StrId)>); 16];
        for ((&name, &short), &mangled) in names.iter().zip(short).zip(mangled) {
            let slot = &mut recent[(name.0 & 15) as usize];
            let usual = match *slot {
                (n, Some(pair)) if n == name => pair,
                _ => {
                    let pair = *kept.by_name.entry(name).or_insert((short, mangled));
                    *slot = (name, Some(pair));
                    pair
                }
            };
            kept.unusual
                .push((usual != (short, mangled)).then_some((short, mangled)));
        }
        kept
    }

    /// Appends the names of the next kernel, whose demangled name is `name`.
    pub fn push(&mut self, name: StrId, short: StrId, mangled: StrId) {
        let usual = *self.by_name.entry(name).or_insert((short, mangled));
        self.unusual
            .push((usual != (short, mangled)).then_some((short, mangled)));
    }

    /// Each demangled name with its usual (short, mangled) pair.
    pub fn usual(&self) -> impl Iterator<Item = (StrId, (StrId, StrId))> + '_ {
        self.by_name.iter().map(|(&name, &pair)| (name, pair))
    }

    /// Whether some instance's names differ from its demangled name's usual pair.
    pub fn has_unusual(&self) -> bool {
        self.unusual.others() > 0
    }

    /// The (short, mangled) names of kernel `i`, whose demangled name is `name`.
    fn get(&self, i: usize, name: StrId) -> (StrId, StrId) {
        match self.unusual.get(i).flatten() {
            Some(pair) => pair,
            None => self.by_name.get(&name).copied().unwrap_or_default(),
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.by_name.capacity() * 16 + self.unusual.heap_bytes()
    }
}

/// Memory copies (`CUPTI_ACTIVITY_KIND_MEMCPY`), by stream. `spans.name` is
/// nsys's operation label, e.g. `[CUDA memcpy Host-to-Device]`.
#[derive(Debug, Default, Clone)]
pub struct Memcpys {
    pub spans: SpanColumns,
    pub correlation: Column<u32>,
    pub bytes: Column<u64>,
    /// `ENUM_CUDA_MEMCPY_OPER` (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, ...).
    pub copy_kind: Column<u8>,
    /// `ENUM_CUDA_MEM_KIND` (0 Pageable, 1 Pinned, 2 Device, 4 Managed, ...).
    pub src_kind: Column<u8>,
    pub dst_kind: Column<u8>,
    /// Whether the report's `ENUM_CUDA_MEMCPY_OPER` names the copy kind
    /// (`nsys stats` leaves the other copies out of its summaries).
    pub kind_known: Column<bool>,
    /// `srcDeviceId` / `dstDeviceId`, -1 where the report leaves them NULL
    /// (`nsys analyze cuda_memcpy_sync` skips copies within one device).
    pub src_device: Column<i32>,
    pub dst_device: Column<i32>,
    /// `greenContextId`, 0 when none (the rules print 0 and NULL as an empty cell).
    pub green_context: Column<u32>,
}

/// Memory sets (`CUPTI_ACTIVITY_KIND_MEMSET`), by stream.
#[derive(Debug, Default, Clone)]
pub struct Memsets {
    pub spans: SpanColumns,
    pub correlation: Column<u32>,
    pub bytes: Column<u64>,
    pub value: Column<u32>,
    pub mem_kind: Column<u8>,
    /// `greenContextId`, 0 when none.
    pub green_context: Column<u32>,
}

/// Synchronization records (`CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`), by stream.
/// `spans.name` is the sync type's label.
#[derive(Debug, Default, Clone)]
pub struct Syncs {
    pub spans: SpanColumns,
    pub correlation: Column<u32>,
    /// `ENUM_CUPTI_SYNC_TYPE`: 1 event sync, 2 stream wait event, 3 stream sync, 4 context sync.
    pub sync_type: Column<u8>,
    pub event_id: Column<u32>,
}

/// Whole-graph executions on a stream (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE`).
#[derive(Debug, Default, Clone)]
pub struct GraphExecs {
    pub spans: SpanColumns,
    pub correlation: Column<u32>,
    pub graph_id: Column<u32>,
    pub graph_exec_id: Column<u32>,
}

/// CPU-side CUDA graph records (`CUDA_GRAPH_NODE_EVENTS`, `CUDA_GRAPH_EVENTS`):
/// few, kept row by row.
#[derive(Clone, Debug)]
pub struct GraphRecord {
    pub start: Ns,
    pub end: Ns,
    pub thread: u32,
    pub name: StrId,
    /// The node id (node records) or graph id (graph records).
    pub id: u64,
    pub original_id: Option<u64>,
    pub is_node: bool,
}

/// A CUDA event record (`CUPTI_ACTIVITY_KIND_CUDA_EVENT`): no timestamps, only
/// which API call recorded which event on which stream.
#[derive(Clone, Debug)]
pub struct CudaEventRecord {
    pub stream: u32,
    pub correlation: u32,
    pub event_id: u32,
}

/// One sampled GPU metric (`GPU_METRICS`), e.g. `SMs Active [Throughput %]`.
#[derive(Debug, Default)]
pub struct MetricSeries {
    /// Index into `Trace::gpus`; `u32::MAX` when the report lists no GPU with
    /// the sampled device's id.
    pub gpu: u32,
    /// The sampled device (the low byte of the metric's `typeId`).
    pub device_id: u32,
    /// Position of the metric in `TARGET_INFO_GPU_METRICS` (nsys's order).
    pub order: usize,
    pub name: StrId,
    pub timestamp: Vec<Ns>,
    pub value: Vec<f32>,
}

impl MetricSeries {
    pub fn max_value(&self) -> f32 {
        self.value.iter().copied().fold(0.0, f32::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_end_reads_back_exactly_whatever_its_duration() {
        // Durations that fit in 4 bytes, the first that does not, an hour,
        // an end before its start (a damaged report) and extreme timestamps.
        let cases: [(Ns, Ns); 7] = [
            (100, 100),
            (100, 5_000),
            (0, u32::MAX as Ns - 1),
            (7, 7 + u32::MAX as Ns),
            (1_000, 1_000 + 3_600_000_000_000),
            (500, 400),
            (i64::MIN, i64::MAX),
        ];
        let (starts, ends): (Vec<Ns>, Vec<Ns>) = cases.iter().copied().unzip();
        let names = vec![StrId(1); cases.len()];
        let whole = SpanColumns::from_columns(starts, &ends, names);
        let mut grown = SpanColumns::default();
        for &(s, e) in &cases {
            grown.push(s, e, StrId(1));
        }
        for spans in [&whole, &grown] {
            assert_eq!(spans.ends().collect::<Vec<_>>(), ends);
            for (i, &(s, e)) in cases.iter().enumerate() {
                assert_eq!(spans.get(i), Some((s, e)));
                assert_eq!(spans.duration(i), e.saturating_sub(s));
            }
            assert_eq!(spans.get(cases.len()), None);
        }
        // Four of seven went aside: 4 bytes each for the rest.
        assert_eq!(whole.long_ends.len(), 4);
    }

    #[test]
    fn bounds_kept_as_columns_grow_equal_a_pass_over_every_event() {
        // In no order, one ending before it starts (a damaged report), one
        // whose end went aside, and the extremes last.
        let cases: [(Ns, Ns); 6] = [
            (500, 900),
            (100, 5_000),
            (7_000, 6_000),
            (50, 50 + u32::MAX as Ns + 9),
            (3_000, 3_001),
            (i64::MIN, i64::MAX),
        ];
        let mut grown = SpanColumns::default();
        assert_eq!(grown.bounds(), None);
        for (n, &(s, e)) in cases.iter().enumerate() {
            grown.push(s, e, StrId(1));
            let seen = &cases[..=n];
            let lo = seen.iter().map(|c| c.0).min();
            let hi = seen.iter().map(|c| c.1).max();
            assert_eq!(grown.bounds(), lo.zip(hi), "after {} events", n + 1);
        }
        let (starts, ends): (Vec<Ns>, Vec<Ns>) = cases[..5].iter().copied().unzip();
        let whole = SpanColumns::from_columns(starts, &ends, vec![StrId(1); 5]);
        assert_eq!(whole.bounds(), Some((50, 50 + u32::MAX as Ns + 9)));
    }

    #[test]
    fn a_kernel_keeps_its_own_names_when_they_differ_from_its_kind() {
        let name = StrId(1);
        let pairs = [
            (StrId(3), StrId(4)),
            (StrId(3), StrId(4)),
            (StrId(5), StrId(0)),
        ];
        let names = [name, name, name];
        let kept = KernelNames::from_columns(&names, &pairs.map(|p| p.0), &pairs.map(|p| p.1));
        let kernels = Kernels {
            spans: SpanColumns::from_columns(vec![0; 3], &[1; 3], names.to_vec()),
            names: kept,
            ..Kernels::default()
        };
        for (i, &(short, mangled)) in pairs.iter().enumerate() {
            assert_eq!(kernels.short_name(i), Some(short));
            assert_eq!(kernels.mangled_name(i), Some(mangled));
        }
        assert!(kernels.names.has_unusual());
        assert_eq!(kernels.short_name(3), None);
    }
}
