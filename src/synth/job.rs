//! A synthetic job: N ranks made of one report, each written as `rankK.sqlite` with its own
//! session start, for scale tests of the cross-rank analysis.
//!
//! Each rank's session starts `d_K` earlier (`d_K` spread evenly over `clock_spread_ns`) and its
//! times are `d_K` later, so that on the job clock (UTC start + time) the ranks line up, as the
//! ranks of a real job do whatever their sessions' starts. A straggler (`rank:phase:extra`)
//! lengthens every instance of that NVTX phase on its rank by `extra`, shifting what follows;
//! every other rank waits as long at the start of the phase that follows it in the same
//! iteration (the collective the straggler holds up), so every rank's iteration grows alike.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::warp::TimeWarp;
use super::{ReportWriter, WriteError};
use crate::model::{Ns, Trace};

/// The UTC session start of rank 0 when the source report has none (2026-01-01).
const DEFAULT_SESSION_START_UTC_NS: i64 = 1_767_225_600_000_000_000;

/// One rank slowed in one NVTX phase.
#[derive(Clone, Debug, PartialEq)]
pub struct StragglerSpec {
    pub rank: u32,
    pub phase: String,
    pub extra_ns: Ns,
}

/// What job to make.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    pub ranks: u32,
    /// The latest rank's session starts this much before the earliest's.
    pub clock_spread_ns: Ns,
    pub straggler: Option<StragglerSpec>,
}

/// `(point, extra)`: time inserted into a rank's clock (see [`TimeWarp::new`]).
type Insertions = Vec<(Ns, Ns)>;

/// The points where time is inserted on each rank for `spec`'s straggler: on the straggler at
/// each instance's end; on the others at the start of the next phase of the same iteration
/// (or at the iteration's end, where none follows).
fn straggler_points(trace: &Trace, spec: &StragglerSpec) -> (Insertions, Insertions) {
    let nvtx = &trace.nvtx;
    let (mut own, mut others) = (Vec::new(), Vec::new());
    let depth = |i: usize| nvtx.depth.get(i).copied().unwrap_or(0);
    for thread in &trace.threads {
        for track in &thread.nvtx {
            let rows: Vec<usize> = track.track.rows().map(|r| r as usize).collect();
            for &i in &rows {
                if trace.strings.get(nvtx.spans.name[i]) != spec.phase {
                    continue;
                }
                let (start, end) = (nvtx.spans.start[i], nvtx.spans.end(i));
                own.push((end, spec.extra_ns));
                let d = depth(i);
                let parent_end = (rows.iter().copied())
                    .filter(|&p| d > 0 && depth(p) == d - 1)
                    .filter(|&p| nvtx.spans.start[p] <= start && nvtx.spans.end(p) >= end)
                    .map(|p| nvtx.spans.end(p))
                    .min()
                    .unwrap_or(end);
                let next = (rows.iter().copied())
                    .filter(|&n| depth(n) == d && nvtx.spans.start[n] >= end)
                    .map(|n| nvtx.spans.start[n])
                    .filter(|&s| s < parent_end)
                    .min();
                // Inside the next phase (after its first nanosecond), so that it, not its
                // predecessor, grows; else the iteration's own end.
                let at = next.map_or(parent_end.max(end), |s| s + 1);
                others.push((at, spec.extra_ns));
            }
        }
    }
    (own, others)
}

/// Writes the job's `rankK.sqlite` files into `dir` (which must exist); their paths, by rank.
pub fn write_job(
    trace: &Trace,
    spec: &JobSpec,
    dir: &Path,
    progress: &mut dyn FnMut(f32),
    cancel: &AtomicBool,
) -> Result<Vec<PathBuf>, WriteError> {
    if spec.ranks == 0 {
        return Err(WriteError::Invalid("a job needs at least one rank".into()));
    }
    if let Some(s) = &spec.straggler
        && s.rank >= spec.ranks
    {
        return Err(WriteError::Invalid(format!(
            "the straggler is rank {}, but the job has ranks 0 to {}",
            s.rank,
            spec.ranks - 1
        )));
    }
    let (own, others) = match &spec.straggler {
        Some(s) => straggler_points(trace, s),
        None => (Vec::new(), Vec::new()),
    };
    if let Some(s) = &spec.straggler
        && own.is_empty()
    {
        return Err(WriteError::Invalid(format!(
            "no NVTX range named '{}' in the report to slow",
            s.phase
        )));
    }
    let start = trace
        .info
        .session_start_utc_ns
        .unwrap_or(DEFAULT_SESSION_START_UTC_NS);
    let mut paths = Vec::with_capacity(spec.ranks as usize);
    for k in 0..spec.ranks {
        let d = match spec.ranks {
            1 => 0,
            n => (spec.clock_spread_ns as i128 * k as i128 / (n as i128 - 1)) as Ns,
        };
        let slowed = spec.straggler.as_ref().is_some_and(|s| s.rank == k);
        let points = if slowed { own.clone() } else { others.clone() };
        let path = dir.join(format!("rank{k}.sqlite"));
        let done = k as f32 / spec.ranks as f32;
        let mut rank_progress = |f: f32| progress(done + f / spec.ranks as f32);
        ReportWriter::new(trace, 1)?
            .with_time_warp(TimeWarp::new(d, points))
            .with_session_start(start - d)
            .write(&path, &mut rank_progress, cancel)?;
        paths.push(path);
    }
    Ok(paths)
}
