//! The ranks of a job opened on the engine's summaries ([`JobSummaries`]), before any rank's
//! events are read: each rank a report of its iterations and their phases alone, as NVTX
//! ranges on its iterations' thread (the lane a collapsed rank draws), on its own clock, over
//! its span; the job on the clock the summaries give.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::analysis::ranks::{JobSummaries, RankIterations, RankSummary};
use crate::model::track::{Run, Track};
use crate::model::{
    Alignment, Ns, NvtxKind, NvtxRanges, NvtxTrack, Process, Rank, Ranks, SpanColumns, Strings,
    Thread, Trace,
};

/// The job the summaries describe, each rank's report at `report_of(summary)`.
pub fn summary_ranks(
    summaries: &JobSummaries,
    report_of: impl Fn(&RankSummary) -> PathBuf,
) -> Ranks {
    let found = &summaries.analysis.iterations.ranks;
    let ranks = (summaries.ranks.iter())
        .map(|s| {
            let own = found.iter().find(|it| it.rank == s.number);
            let path = report_of(s);
            Rank {
                number: s.number,
                trace: Arc::new(summary_trace(s, own, &path)),
                path,
                offset_ns: s.offset_ns,
            }
        })
        .collect();
    Ranks {
        ranks,
        alignment: if summaries.aligned {
            Alignment::SessionStart
        } else {
            Alignment::None
        },
    }
}

/// Where the rank's report is: as recorded when it is there; else, a relative path, beside
/// the job folder (an export made from the folder above it). A rank read from nsys's own
/// Parquet export (`rank0.parquetdir`) has its report in nsys's `.sqlite` export beside it
/// (`rank0.sqlite`: nsys names both after the `.nsys-rep`).
pub fn report_path(summary: &RankSummary, job_folder: &Path) -> PathBuf {
    let recorded = &summary.path;
    if crate::loader::ranks::is_nsys_parquet(recorded) {
        return recorded.with_extension("sqlite");
    }
    let beside = job_folder.parent().map(|p| p.join(recorded));
    if recorded.is_relative()
        && !recorded.exists()
        && let Some(beside) = beside.filter(|b| b.exists())
    {
        return beside;
    }
    recorded.clone()
}

/// The range of an iteration: its pattern with the number in place of its digits (`step #`
/// → `step 12`).
fn iteration_name(pattern: &str, number: u64) -> String {
    pattern.replace('#', &number.to_string())
}

/// A report of one rank's iterations and phases (on its own clock), spanning its summary's span.
fn summary_trace(s: &RankSummary, found: Option<&RankIterations>, path: &Path) -> Trace {
    let mut strings = Strings::new();
    let (mut starts, mut ends, mut names, mut depths) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let own = |t: Ns| t - s.offset_ns;
    for it in found.iter().flat_map(|r| r.iterations.values()) {
        let name = iteration_name(found.map_or("", |r| r.pattern.as_str()), it.number);
        starts.push(own(it.start));
        ends.push(own(it.end));
        names.push(strings.intern(&name));
        depths.push(0u8);
        let mut phases: Vec<_> = it.phases.iter().collect();
        phases.sort_by_key(|p| p.start);
        for p in phases {
            starts.push(own(p.start));
            ends.push(own(p.end));
            names.push(strings.intern(&p.name));
            depths.push(1u8);
        }
    }
    let count = starts.len();
    let spans = SpanColumns::from_columns(starts, &ends, names);
    let levels = depths.iter().max().map_or(1, |d| d + 1);
    let track = Track::whole(Run::of(0..count as u32, &spans), levels);
    let nvtx = NvtxRanges {
        spans,
        kind: vec![NvtxKind::PushPop; count].into(),
        depth: depths.into(),
        color: vec![0; count].into(),
        category: vec![0; count].into(),
        unended: vec![false; count].into(),
        row_id: (1..=count as i64).collect::<Vec<_>>().into(),
        ..NvtxRanges::default()
    };
    let pid = s.pid.unwrap_or(0);
    let tid = found.map_or(0, |r| r.thread);
    let mut trace = Trace {
        strings,
        nvtx: Arc::new(nvtx),
        ..Trace::default()
    };
    trace.info.path = path.display().to_string();
    trace.info.session_start_utc_ns = s.session_start_utc_ns;
    trace.info.time_range = s.own_span().unwrap_or((0, 0));
    if count > 0 {
        trace.processes = vec![Process {
            pid,
            name: String::new(),
            threads: vec![0],
        }];
        trace.threads = vec![Thread {
            global_tid: (i64::from(pid) << 24) | i64::from(tid),
            pid,
            tid,
            name: String::new(),
            priority: None,
            process: 0,
            cuda_api: Track::default(),
            osrt: Track::default(),
            nvtx: vec![NvtxTrack {
                domain: String::new(),
                track,
            }],
        }];
    }
    trace
}

/// The engine's summaries of the Parquet job folder `dir` (`sightline-engine summaries
/// --early DIR`, run as a child process that `cancel` kills; its progress to `on_progress`),
/// or the one line that says why not. The summaries from the NVTX ranges alone, which the
/// engine writes first, go to `on_early` as they come.
pub fn engine_summaries(
    dir: &Path,
    cancel: &AtomicBool,
    on_progress: &dyn Fn(f32),
    on_early: &dyn Fn(JobSummaries),
) -> Result<JobSummaries, String> {
    let engine = crate::engine_process::find_engine()?;
    let args = [
        OsString::from("summaries"),
        OsString::from("--progress"),
        OsString::from("--early"),
        dir.as_os_str().to_owned(),
    ];
    let on_line = |line: &str| {
        if let Ok(early) = JobSummaries::from_json(line)
            && !early.complete
        {
            on_early(early);
        }
    };
    let out = crate::engine_process::run_engine(&engine, &args, cancel, on_progress, &on_line)?;
    let last = out
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let whole = JobSummaries::from_json(last)?;
    if !whole.complete {
        return Err(
            "the engine ended before the phases' work (its summaries are not complete)".into(),
        );
    }
    Ok(whole)
}
