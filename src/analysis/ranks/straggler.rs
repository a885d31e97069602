//! The straggler: the rank that reaches the synchronizing phase of an iteration last, so that
//! every other rank waits for it there.
//!
//! The rule, for NCCL and gloo alike: the synchronizing phase is the one that absorbs the
//! ranks' spread ([`synchronizing_phase`]: it begins apart and ends together, the collective
//! inside it waiting for the last rank). Per iteration, each rank arrives at it when it starts
//! it (on the job clock); the latest rank's excess is how much later it arrives than the
//! median rank. An iteration is slowed when that excess is at least `min_excess_ns` and
//! `min_excess_share` of the median iteration; a straggler is the rank latest in the longest
//! run of consecutive slowed iterations, at least `min_iterations` long. The wait it causes on
//! each other rank is the time that rank is held in the synchronizing phase (to the end of the
//! phase or of its GPU work, whichever is later: NCCL's kernels wait on the GPU) beyond its
//! typical length (its median over the iterations no rank slowed; with none, the straggler's
//! own).

use std::collections::BTreeSet;

use super::iterations::JobIterations;
use super::spread::synchronizing_phase;
use crate::analysis::group::median;
use crate::model::Ns;

/// What makes a straggler (see the module's note).
#[derive(Clone, Debug, PartialEq)]
pub struct StragglerThresholds {
    pub min_excess_ns: Ns,
    pub min_excess_share: f64,
    pub min_iterations: usize,
}

impl Default for StragglerThresholds {
    /// 1 ms and 20 % of an iteration, twice in a row: on the recorded balanced DDP job the
    /// ranks reach `backward` within 0.6 ms of each other (about 4 % of a 14 ms step), so a
    /// late rank must stand well clear of that noise, and more than once.
    fn default() -> Self {
        StragglerThresholds {
            min_excess_ns: 1_000_000,
            min_excess_share: 0.2,
            min_iterations: 2,
        }
    }
}

/// The wait a straggler causes on another rank.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Wait {
    pub rank: u32,
    /// `(iteration, wait)` over the straggler's iterations.
    pub per_iteration: Vec<(u64, Ns)>,
    pub total: Ns,
}

/// A straggler found (see the module's note).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Straggler {
    pub rank: u32,
    /// Index of the straggler in [`JobIterations::ranks`].
    pub rank_index: usize,
    /// Where the others wait for it.
    pub sync_phase: String,
    /// The phase before the synchronizing one whose length exceeds the other ranks' median the
    /// most, summed over its iterations: where its extra time lies.
    pub excess_phase: String,
    /// `(iteration, how much later than the median rank it reached the sync)`, consecutive.
    pub excess: Vec<(u64, Ns)>,
    pub excess_median: Ns,
    pub excess_max: Ns,
    /// The straggler's excess phase less the other ranks' median of it, median over its
    /// iterations.
    pub phase_excess_median: Ns,
    /// Every other rank, in rank order.
    pub waits: Vec<Wait>,
    /// The iterations' span on the job clock (first start to last end, over the ranks).
    pub start: Ns,
    pub end: Ns,
    /// Slowed iterations outside the run (another rank latest, or apart from it).
    pub other_slowed: usize,
}

impl Straggler {
    pub fn first(&self) -> u64 {
        self.excess.first().map_or(0, |e| e.0)
    }

    pub fn last(&self) -> u64 {
        self.excess.last().map_or(0, |e| e.0)
    }

    pub fn iterations(&self) -> impl Iterator<Item = u64> + '_ {
        self.excess.iter().map(|e| e.0)
    }
}

/// Why no straggler was named.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum NoStraggler {
    /// Fewer than two ranks with iterations.
    TooFewRanks(usize),
    /// The ranks are not on one clock (a report lacks its session start): who came late
    /// cannot be told.
    Unaligned,
    /// No iteration number common to every rank, or no phases inside them.
    NoIterations,
    /// The ranks reach the synchronizing phase together (the largest excess seen).
    Balanced {
        sync_phase: String,
        largest_excess: Ns,
    },
}

impl std::fmt::Display for NoStraggler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::analysis::format::human_ns;
        match self {
            NoStraggler::TooFewRanks(n) => {
                write!(
                    f,
                    "{n} rank(s) with repeated numbered NVTX ranges: nothing to compare"
                )
            }
            NoStraggler::Unaligned => f.write_str(
                "no straggler analysis: the ranks are not on one clock (a report has no session start)",
            ),
            NoStraggler::NoIterations => f.write_str(
                "no numbered top-level NVTX range with child phases common to every rank",
            ),
            NoStraggler::Balanced {
                sync_phase,
                largest_excess,
            } => write!(
                f,
                "no straggler: the ranks reach '{sync_phase}' together (the latest at most {} after the median rank, below the thresholds)",
                human_ns(*largest_excess)
            ),
        }
    }
}

/// Rank `r`'s arrival at `phase` of iteration `number`, on the job clock.
fn arrival(job: &JobIterations, r: usize, number: u64, phase: &str) -> Option<Ns> {
    Some(job.get(r, number)?.phase(phase)?.start)
}

/// Rank `r`'s length of `phase` in iteration `number`, as recorded.
fn duration(job: &JobIterations, r: usize, number: u64, phase: &str) -> Option<Ns> {
    Some(job.get(r, number)?.phase(phase)?.duration())
}

/// How long rank `r` was held in `phase` of iteration `number`, its GPU work included.
fn held(job: &JobIterations, r: usize, number: u64, phase: &str) -> Option<Ns> {
    Some(job.get(r, number)?.phase(phase)?.until_done())
}

fn median_ns(values: &mut [Ns]) -> Ns {
    if values.is_empty() {
        return 0;
    }
    median(values).round() as Ns
}

/// One iteration's latest rank (index) and its excess over the median rank's arrival.
fn latest(job: &JobIterations, number: u64, sync: &str) -> Option<(usize, Ns)> {
    let arrivals: Option<Vec<Ns>> = (0..job.ranks.len())
        .map(|r| arrival(job, r, number, sync))
        .collect();
    let mut arrivals = arrivals?;
    let (at, &last) = arrivals.iter().enumerate().max_by_key(|(_, a)| **a)?;
    let middle = median_ns(&mut arrivals);
    Some((at, last - middle))
}

/// The job's straggler, or why there is none (see the module's note).
pub fn find_straggler(
    job: &JobIterations,
    thresholds: &StragglerThresholds,
) -> Result<Straggler, NoStraggler> {
    if job.ranks.len() < 2 {
        return Err(NoStraggler::TooFewRanks(job.ranks.len()));
    }
    let sync = synchronizing_phase(job).ok_or(NoStraggler::NoIterations)?;
    let mut lengths: Vec<Ns> = (job.common.iter())
        .flat_map(|&n| (0..job.ranks.len()).filter_map(move |r| job.get(r, n)))
        .map(|it| it.end - it.start)
        .collect();
    let typical = median_ns(&mut lengths);
    let bar = thresholds
        .min_excess_ns
        .max((thresholds.min_excess_share * typical as f64) as Ns);
    // Each common iteration's latest rank and excess; slowed where the excess clears the bar.
    let latest: Vec<(u64, Option<(usize, Ns)>)> = (job.common.iter())
        .map(|&n| (n, latest(job, n, &sync)))
        .collect();
    let largest_excess = latest
        .iter()
        .filter_map(|l| l.1)
        .map(|l| l.1)
        .max()
        .unwrap_or(0);
    let slowed = |l: &Option<(usize, Ns)>| l.filter(|(_, excess)| *excess >= bar);
    // The longest run of consecutive iterations slowed by one rank.
    let mut best: Option<(usize, usize)> = None; // (first position, length)
    let mut at = 0;
    while at < latest.len() {
        let Some((rank, _)) = slowed(&latest[at].1) else {
            at += 1;
            continue;
        };
        let run = latest[at..]
            .iter()
            .take_while(|l| slowed(&l.1).is_some_and(|s| s.0 == rank))
            .count();
        if best.is_none_or(|b| run > b.1) {
            best = Some((at, run));
        }
        at += run;
    }
    let balanced = || NoStraggler::Balanced {
        sync_phase: sync.clone(),
        largest_excess,
    };
    let (first, run) = best
        .filter(|b| b.1 >= thresholds.min_iterations)
        .ok_or_else(balanced)?;
    let run_latest = &latest[first..first + run];
    let rank_index = run_latest[0].1.map_or(0, |l| l.0);
    let excess: Vec<(u64, Ns)> = run_latest
        .iter()
        .filter_map(|(n, l)| Some((*n, l.as_ref()?.1)))
        .collect();
    let numbers: Vec<u64> = excess.iter().map(|e| e.0).collect();
    let slowed_anywhere: BTreeSet<u64> = (latest.iter())
        .filter(|l| slowed(&l.1).is_some())
        .map(|l| l.0)
        .collect();
    let (excess_phase, phase_excess_median) = excess_phase(job, rank_index, &numbers, &sync);
    let waits = waits(job, rank_index, &numbers, &slowed_anywhere, &sync);
    let spans = numbers
        .iter()
        .flat_map(|&n| (0..job.ranks.len()).filter_map(move |r| job.get(r, n)));
    let start = spans.clone().map(|it| it.start).min().unwrap_or(0);
    let end = spans.map(|it| it.end).max().unwrap_or(0);
    let mut excesses: Vec<Ns> = excess.iter().map(|e| e.1).collect();
    Ok(Straggler {
        rank: job.ranks[rank_index].rank,
        rank_index,
        sync_phase: sync,
        excess_phase,
        excess_max: excesses.iter().copied().max().unwrap_or(0),
        excess_median: median_ns(&mut excesses),
        excess,
        phase_excess_median,
        waits,
        start,
        end,
        other_slowed: slowed_anywhere.len() - numbers.len(),
    })
}

/// The phase before `sync` where the straggler's length exceeds the others' median the most
/// over `numbers`, and that excess's median per iteration; the time before the first phase
/// when no phase comes before `sync`.
fn excess_phase(
    job: &JobIterations,
    straggler: usize,
    numbers: &[u64],
    sync: &str,
) -> (String, Ns) {
    let before: Vec<&String> = job.phase_names.iter().take_while(|p| *p != sync).collect();
    let excess_of = |phase: &str| -> Vec<Ns> {
        numbers
            .iter()
            .filter_map(|&n| {
                let own = duration(job, straggler, n, phase)?;
                let mut others: Vec<Ns> = (0..job.ranks.len())
                    .filter(|&r| r != straggler)
                    .filter_map(|r| duration(job, r, n, phase))
                    .collect();
                (!others.is_empty()).then(|| own - median_ns(&mut others))
            })
            .collect()
    };
    let best = before
        .into_iter()
        .map(|p| (excess_of(p), p))
        .max_by_key(|(e, _)| e.iter().sum::<Ns>());
    match best {
        Some((mut e, name)) => (name.clone(), median_ns(&mut e)),
        None => (format!("(before {sync})"), 0),
    }
}

/// The wait the straggler causes on every other rank over `numbers` (see the module's note).
fn waits(
    job: &JobIterations,
    straggler: usize,
    numbers: &[u64],
    slowed: &BTreeSet<u64>,
    sync: &str,
) -> Vec<Wait> {
    (0..job.ranks.len())
        .filter(|&r| r != straggler)
        .map(|r| {
            let mut calm: Vec<Ns> = (job.common.iter())
                .filter(|n| !slowed.contains(n))
                .filter_map(|&n| held(job, r, n, sync))
                .collect();
            let typical = (!calm.is_empty()).then(|| median_ns(&mut calm));
            let per_iteration: Vec<(u64, Ns)> = numbers
                .iter()
                .filter_map(|&n| {
                    let own = held(job, r, n, sync)?;
                    let base = typical.or_else(|| held(job, straggler, n, sync))?;
                    Some((n, (own - base).max(0)))
                })
                .collect();
            Wait {
                rank: job.ranks[r].rank,
                total: per_iteration.iter().map(|w| w.1).sum(),
                per_iteration,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ranks::iterations::{Iteration, Phase, RankIterations};

    const MS: Ns = 1_000_000;

    fn phase(name: &str, start: Ns, end: Ns, gpu_end: Option<Ns>) -> Phase {
        Phase {
            name: name.into(),
            start,
            end,
            gpu_end,
        }
    }

    /// NCCL-like: `backward` launches the all-reduce and returns after 2 ms; its kernels end
    /// together on every rank, 9 ms after the last rank launched them. Rank 3's `forward`
    /// takes 9 ms instead of 1 on iterations 3..=5.
    fn nccl_job() -> JobIterations {
        let numbers = 1..=6u64;
        let slow = |r: u32, n: u64| r == 3 && (3..=5).contains(&n);
        let ranks = (0..4u32)
            .map(|r| {
                let iterations = numbers
                    .clone()
                    .map(|n| {
                        let t0 = n as Ns * 30 * MS;
                        let forward = if slow(r, n) { 9 * MS } else { MS };
                        let last_launch = t0 + if (3..=5).contains(&n) { 9 * MS } else { MS };
                        let done = last_launch + 9 * MS;
                        let b = t0 + forward;
                        let phases = vec![
                            phase("forward", t0, b, None),
                            phase("backward", b, b + 2 * MS, Some(done)),
                            phase("optimizer", done, done + MS, None),
                        ];
                        let it = Iteration {
                            number: n,
                            start: t0,
                            end: done + MS,
                            phases,
                        };
                        (n, it)
                    })
                    .collect();
                RankIterations {
                    rank: r,
                    pattern: "step #".into(),
                    thread: 0,
                    iterations,
                }
            })
            .collect();
        JobIterations {
            ranks,
            without: Vec::new(),
            common: numbers.collect(),
            phase_names: ["forward", "backward", "optimizer"]
                .map(String::from)
                .to_vec(),
        }
    }

    #[test]
    fn a_straggler_held_up_on_the_gpu_is_found_from_the_collectives_end() {
        let s = find_straggler(&nccl_job(), &StragglerThresholds::default()).expect("found");
        assert_eq!((s.rank, s.sync_phase.as_str()), (3, "backward"));
        assert_eq!(s.excess_phase, "forward");
        assert_eq!((s.first(), s.last()), (3, 5));
        assert_eq!(s.excess_median, 8 * MS);
        for wait in &s.waits {
            assert_eq!(
                wait.per_iteration,
                vec![(3, 8 * MS), (4, 8 * MS), (5, 8 * MS)]
            );
        }
    }

    #[test]
    fn one_slow_iteration_is_not_a_straggler() {
        let mut job = nccl_job();
        job.common.retain(|n| *n != 4 && *n != 5);
        let found = find_straggler(&job, &StragglerThresholds::default());
        assert!(
            matches!(found, Err(NoStraggler::Balanced { .. })),
            "{found:?}"
        );
    }
}
