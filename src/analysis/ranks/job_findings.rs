//! The cross-rank findings of a job: the straggler ([`find_straggler`]) worded with what it
//! does differently in the phase where its extra time lies ([`phase_work`]), and the wait it
//! causes on every other rank. Rows for the command line's table and lines for its JSON.

use super::iterations::{JobIterations, job_iterations};
use super::phase_work::{PhaseWork, phase_work};
use super::straggler::{NoStraggler, Straggler, StragglerThresholds, find_straggler};
use crate::analysis::format::human_ns;
use crate::analysis::group::median;
use crate::analysis::{Cell, Table};
use crate::model::{Alignment, Ns, Ranks};

/// What the cross-rank analysis found, or why it found nothing.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct JobAnalysis {
    pub iterations: JobIterations,
    pub straggler: Result<Straggler, NoStraggler>,
    /// The straggler's work in its excess phase less the other ranks' (medians over its
    /// iterations), when there is one.
    pub difference: Option<WorkDifference>,
}

/// The straggler's work in a phase less the other ranks' (per iteration, medians).
#[derive(Copy, Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorkDifference {
    pub kernels: f64,
    pub gpu_ns: Ns,
    pub outside_cuda_ns: Ns,
}

/// Why a straggler matters and what to do.
pub const STRAGGLER_FIX: &str = "Every other rank waits for the straggler in the collective: \
    make its extra work in that phase go away, move it out of the iteration, or give the same \
    work to every rank (a skewed data shard, an extra logging or checkpoint step, a slower \
    GPU or host).";

/// The job's iterations and straggler.
pub fn analyze_job(job: &Ranks, thresholds: &StragglerThresholds) -> JobAnalysis {
    let iterations = job_iterations(job);
    let straggler = if job.alignment == Alignment::None && job.len() > 1 {
        Err(NoStraggler::Unaligned)
    } else {
        find_straggler(&iterations, thresholds)
    };
    let difference = straggler
        .as_ref()
        .ok()
        .map(|s| work_difference(job, &iterations, s));
    JobAnalysis {
        iterations,
        straggler,
        difference,
    }
}

/// The straggler's work in its excess phase less the other ranks' median, median over its
/// iterations.
fn work_difference(job: &Ranks, iterations: &JobIterations, s: &Straggler) -> WorkDifference {
    work_difference_with(iterations, s, |r, n| {
        let ranked = iterations.ranks.get(r)?;
        let rank = job.ranks.iter().find(|k| k.number == ranked.rank)?;
        let phase = ranked.iterations.get(&n)?.phase(&s.excess_phase)?;
        Some(phase_work(rank, ranked.thread, phase))
    })
}

/// [`work_difference`] from each phase's work, given by `work_of(rank index, iteration)` for the
/// straggler's excess phase: from the traces in memory, or from an engine's per-phase sums.
pub fn work_difference_with(
    iterations: &JobIterations,
    s: &Straggler,
    work_of: impl Fn(usize, u64) -> Option<PhaseWork>,
) -> WorkDifference {
    let (mut kernels, mut gpu, mut outside): (Vec<i64>, Vec<Ns>, Vec<Ns>) = Default::default();
    for n in s.iterations() {
        let Some(own) = work_of(s.rank_index, n) else {
            continue;
        };
        let others: Vec<PhaseWork> = (0..iterations.ranks.len())
            .filter(|&r| r != s.rank_index)
            .filter_map(|r| work_of(r, n))
            .collect();
        if others.is_empty() {
            continue;
        }
        // Twice the differences, so that a median of two stays whole.
        let twice_less =
            |own: i64, mut values: Vec<i64>| own * 2 - (median(&mut values) * 2.0) as i64;
        kernels.push(twice_less(
            own.kernels as i64,
            others.iter().map(|w| w.kernels as i64).collect(),
        ));
        gpu.push(twice_less(
            own.gpu_ns,
            others.iter().map(|w| w.gpu_ns).collect(),
        ));
        outside.push(twice_less(
            own.outside_cuda_ns,
            others.iter().map(|w| w.outside_cuda_ns).collect(),
        ));
    }
    let half_median = |values: &mut Vec<i64>| {
        if values.is_empty() {
            0.0
        } else {
            median(values) / 2.0
        }
    };
    WorkDifference {
        kernels: half_median(&mut kernels),
        gpu_ns: half_median(&mut gpu).round() as Ns,
        outside_cuda_ns: half_median(&mut outside).round() as Ns,
    }
}

/// A signed duration: `+1.2 ms`, `-300 ns`.
fn signed(ns: Ns) -> String {
    if ns < 0 {
        format!("-{}", human_ns(-ns))
    } else {
        format!("+{}", human_ns(ns))
    }
}

/// The straggler finding's one line, with the numbers.
pub fn straggler_message(s: &Straggler, difference: Option<&WorkDifference>) -> String {
    let count = s.excess.len();
    let mut text = format!(
        "rank {} reaches '{}' last on iterations {}–{} ({count} in a row): {} later than the \
         median rank (median; max {}); its '{}' is {} longer than the other ranks' (median)",
        s.rank,
        s.sync_phase,
        s.first(),
        s.last(),
        human_ns(s.excess_median),
        human_ns(s.excess_max),
        s.excess_phase,
        human_ns(s.phase_excess_median),
    );
    if let Some(d) = difference {
        let kernels = d.kernels.round() as i64;
        let more = if kernels >= 0 { "more" } else { "fewer" };
        let (outside, more_or_less) = if d.outside_cuda_ns >= 0 {
            (d.outside_cuda_ns, "more")
        } else {
            (-d.outside_cuda_ns, "less")
        };
        text += &format!(
            ": it ran {} {more} kernels ({} GPU) and spent {} {more_or_less} outside CUDA (CPU work)",
            kernels.abs(),
            signed(d.gpu_ns),
            human_ns(outside),
        );
    }
    text += &format!("; the others wait in '{}':", s.sync_phase);
    for (i, wait) in s.waits.iter().enumerate() {
        let mut per: Vec<Ns> = wait.per_iteration.iter().map(|w| w.1).collect();
        let typical = if per.is_empty() {
            0
        } else {
            median(&mut per).round() as Ns
        };
        let separator = if i == 0 { " " } else { ", " };
        text += &format!(
            "{separator}rank {} {} per iteration ({} in all)",
            wait.rank,
            human_ns(typical),
            human_ns(wait.total)
        );
    }
    if s.other_slowed > 0 {
        text += &format!(
            "; {} other iteration(s) slowed apart from this run",
            s.other_slowed
        );
    }
    text
}

/// The cross-rank findings as `analyze` prints them after the ranks' own: the straggler's row,
/// or the line that says why there is none.
pub fn cross_rank_text(
    straggler: &Result<Straggler, NoStraggler>,
    difference: Option<&WorkDifference>,
) -> String {
    match straggler {
        Ok(s) => Table {
            columns: ["Rank", "Kind", "Severity", "Message"]
                .map(String::from)
                .to_vec(),
            rows: vec![vec![
                Cell::Int(i64::from(s.rank)),
                Cell::Text("straggler".into()),
                Cell::Text("warning".into()),
                Cell::Text(straggler_message(s, difference)),
            ]],
        }
        .to_text(),
        Err(why) => format!("{why}\n"),
    }
}

/// The straggler as one JSON line: `rank` is the straggler's, the others' waits per iteration
/// in `waits`; otherwise the shape of a report's findings.
pub fn straggler_json(s: &Straggler, difference: Option<&WorkDifference>) -> String {
    let waits: Vec<serde_json::Value> = (s.waits.iter())
        .map(|w| {
            serde_json::json!({
                "rank": w.rank.to_string(),
                "per_iteration": w.per_iteration.iter()
                    .map(|(n, ns)| serde_json::json!({"iteration": n, "wait_ns": ns}))
                    .collect::<Vec<_>>(),
                "total_ns": w.total,
            })
        })
        .collect();
    serde_json::json!({
        "rank": s.rank.to_string(),
        "kind": "straggler",
        "severity": "warning",
        "start": s.start,
        "end": s.end,
        "range": s.excess_phase,
        "message": straggler_message(s, difference),
        "fix": STRAGGLER_FIX,
        "iterations": [s.first(), s.last()],
        "sync_phase": s.sync_phase,
        "excess_median_ns": s.excess_median,
        "excess_max_ns": s.excess_max,
        "waits": waits,
    })
    .to_string()
}
