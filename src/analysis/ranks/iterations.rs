//! The iterations of a job: the top-level NVTX range each rank repeats (`step 12`, `iteration
//! 3`: names equal once their digits are masked) with its child phases (`forward`, …), matched
//! across ranks by the iteration's number and the phases by name, on the job clock.

use std::collections::{BTreeMap, HashMap};

use super::launched::{for_each_launched, op_end};
use crate::model::{Ns, NvtxKind, Rank, Ranks, ThreadIdx, Trace};

/// One phase of an iteration (a child range), on the job clock.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Phase {
    pub name: String,
    pub start: Ns,
    /// The range's own (CPU-side) end.
    pub end: Ns,
    /// When the GPU work it launched ended, if it launched any.
    pub gpu_end: Option<Ns>,
}

impl Phase {
    /// When the phase's work was done: its end, or its GPU work's if that ends later. A phase
    /// that only launches a collective (NCCL) ends on the CPU before it; its kernels finish
    /// together on every rank.
    pub fn done(&self) -> Ns {
        self.gpu_end.map_or(self.end, |g| g.max(self.end))
    }

    /// The range's own length, as NVTX recorded it.
    pub fn duration(&self) -> Ns {
        self.end - self.start
    }

    /// From its start to [`Phase::done`]: how long a rank was held in it.
    pub fn until_done(&self) -> Ns {
        self.done() - self.start
    }
}

/// One instance of a rank's repeated range, on the job clock.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Iteration {
    /// The number in its name (the last one, for names with several).
    pub number: u64,
    pub start: Ns,
    pub end: Ns,
    /// Its child ranges in start order; a name repeated inside keeps its first instance.
    pub phases: Vec<Phase>,
}

impl Iteration {
    pub fn phase(&self, name: &str) -> Option<&Phase> {
        self.phases.iter().find(|p| p.name == name)
    }
}

/// A rank's iterations.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RankIterations {
    pub rank: u32,
    /// The repeated name with its digits masked (`step #`).
    pub pattern: String,
    /// The thread they run on (index into the rank's `Trace::threads`).
    pub thread: ThreadIdx,
    /// By number; a number seen twice keeps its first instance.
    pub iterations: BTreeMap<u64, Iteration>,
}

/// The job's iterations: each rank's, and the numbers every rank has.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct JobIterations {
    /// In rank order; ranks without a repeated range are left out (see `without`).
    pub ranks: Vec<RankIterations>,
    /// Ranks in which no repeated numbered top-level range was found.
    pub without: Vec<u32>,
    /// The iteration numbers every rank in `ranks` has, ascending.
    pub common: Vec<u64>,
    /// The phase names in the order of the first common iteration of the first rank.
    pub phase_names: Vec<String>,
}

impl JobIterations {
    /// Rank `rank`'s iteration `number`.
    pub fn get(&self, rank_index: usize, number: u64) -> Option<&Iteration> {
        self.ranks.get(rank_index)?.iterations.get(&number)
    }
}

/// `name` with every run of digits as `#`, and the last run's value.
pub fn mask_digits(name: &str) -> (String, Option<u64>) {
    let mut masked = String::with_capacity(name.len());
    let mut last = None;
    let mut digits = String::new();
    let mut flush = |digits: &mut String, masked: &mut String| {
        if !digits.is_empty() {
            masked.push('#');
            last = digits.parse().ok();
            digits.clear();
        }
    };
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            flush(&mut digits, &mut masked);
            masked.push(c);
        }
    }
    flush(&mut digits, &mut masked);
    (masked, last)
}

/// The job's iterations (see the module's note).
pub fn job_iterations(job: &Ranks) -> JobIterations {
    let mut found = Vec::new();
    let mut without = Vec::new();
    for rank in &job.ranks {
        match rank_iterations(rank) {
            Some(iterations) => found.push(iterations),
            None => without.push(rank.number),
        }
    }
    JobIterations::of_ranks(found, without)
}

impl JobIterations {
    /// The job's iterations from each rank's (in rank order), wherever they were found: the
    /// numbers every rank has, and the phase names of the first.
    pub fn of_ranks(ranks: Vec<RankIterations>, without: Vec<u32>) -> JobIterations {
        let mut out = JobIterations {
            ranks,
            without,
            ..JobIterations::default()
        };
        let mut common: Option<Vec<u64>> = None;
        for rank in &out.ranks {
            let numbers: Vec<u64> = rank.iterations.keys().copied().collect();
            common = Some(match common {
                None => numbers,
                Some(c) => c
                    .into_iter()
                    .filter(|n| rank.iterations.contains_key(n))
                    .collect(),
            });
        }
        out.common = common.unwrap_or_default();
        if let (Some(first), Some(&number)) = (out.ranks.first(), out.common.first()) {
            out.phase_names = (first.iterations.get(&number))
                .map(|it| it.phases.iter().map(|p| p.name.clone()).collect())
                .unwrap_or_default();
        }
        out
    }
}

/// Which of two candidate repeated ranges of a rank is its iterations' (the greater): more
/// instances, then the process's main thread, then the masked name first in byte order.
pub fn repeated_range_order(a: (usize, bool, &str), b: (usize, bool, &str)) -> std::cmp::Ordering {
    (a.0, a.1, b.2).cmp(&(b.0, b.1, a.2))
}

/// A top-level NVTX range, by its track: the thread, the domain's track, and the range's row.
struct TopLevel {
    thread: ThreadIdx,
    track: usize,
    row: u32,
    number: u64,
}

/// One rank's repeated numbered top-level range: the masked name with the most instances on
/// one thread's track (at least two), the process's main thread (tid = pid) winning ties.
pub fn rank_iterations(rank: &Rank) -> Option<RankIterations> {
    let trace = &rank.trace;
    let nvtx = &trace.nvtx;
    let mut groups: HashMap<(ThreadIdx, usize, String), Vec<TopLevel>> = HashMap::new();
    for (t, thread) in trace.threads.iter().enumerate() {
        for (k, track) in thread.nvtx.iter().enumerate() {
            for row in track.track.rows() {
                let i = row as usize;
                let top = nvtx.depth.get(i).copied() == Some(0);
                let ranged = nvtx.kind.get(i).copied() != Some(NvtxKind::Mark);
                if !top || !ranged {
                    continue;
                }
                let Some(&name) = nvtx.spans.name.get(i) else {
                    continue;
                };
                let (pattern, Some(number)) = mask_digits(trace.strings.get(name)) else {
                    continue;
                };
                let entry = TopLevel {
                    thread: t as ThreadIdx,
                    track: k,
                    row,
                    number,
                };
                groups
                    .entry((t as ThreadIdx, k, pattern))
                    .or_default()
                    .push(entry);
            }
        }
    }
    let is_main = |t: ThreadIdx| {
        trace
            .threads
            .get(t as usize)
            .is_some_and(|th| th.tid == th.pid)
    };
    let ((thread, _, pattern), ranges) =
        groups
            .into_iter()
            .filter(|(_, v)| v.len() >= 2)
            .max_by(|(a, va), (b, vb)| {
                repeated_range_order(
                    (va.len(), is_main(a.0), a.2.as_str()),
                    (vb.len(), is_main(b.0), b.2.as_str()),
                )
            })?;
    let mut iterations = BTreeMap::new();
    for top in &ranges {
        iterations
            .entry(top.number)
            .or_insert_with(|| iteration(rank, trace, top));
    }
    Some(RankIterations {
        rank: rank.number,
        pattern,
        thread,
        iterations,
    })
}

/// The iteration `top` is, with its phases, on the job clock.
fn iteration(rank: &Rank, trace: &Trace, top: &TopLevel) -> Iteration {
    let nvtx = &trace.nvtx;
    let i = top.row as usize;
    let (start, end) = (nvtx.spans.start[i], nvtx.spans.end(i));
    let mut phases: Vec<Phase> = Vec::new();
    if let Some(track) =
        (trace.threads.get(top.thread as usize)).and_then(|t| t.nvtx.get(top.track))
    {
        for child in track
            .track
            .starting_in(&nvtx.spans, start, end.saturating_add(1))
        {
            let c = child as usize;
            if c == i || nvtx.depth.get(c).copied() != Some(1) || nvtx.spans.end(c) > end {
                continue;
            }
            let name = trace.strings.get(nvtx.spans.name[c]).to_string();
            if phases.iter().any(|p| p.name == name) {
                continue;
            }
            let (from, to) = (nvtx.spans.start[c], nvtx.spans.end(c));
            let thread = &trace.threads[top.thread as usize];
            let mut gpu_end: Option<Ns> = None;
            for_each_launched(trace, thread, from, to, &mut |op| {
                if let Some(e) = op_end(trace, op) {
                    gpu_end = Some(gpu_end.map_or(e, |g| g.max(e)));
                }
            });
            phases.push(Phase {
                name,
                start: rank.to_job(from),
                end: rank.to_job(to),
                gpu_end: gpu_end.map(|g| rank.to_job(g)),
            });
        }
    }
    Iteration {
        number: top.number,
        start: rank.to_job(start),
        end: rank.to_job(end),
        phases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_masked_and_the_last_number_kept() {
        assert_eq!(mask_digits("step 12"), ("step #".into(), Some(12)));
        assert_eq!(
            mask_digits("epoch 2 iter 30"),
            ("epoch # iter #".into(), Some(30))
        );
        assert_eq!(mask_digits("forward"), ("forward".into(), None));
    }
}
