//! How far apart the ranks are at the start and at the end of each iteration's phase, on the
//! job clock. A phase that synchronizes the ranks (a collective inside it) ends together on
//! every rank however far apart they began it: it absorbs the spread.

use super::iterations::JobIterations;
use crate::model::Ns;

/// The ranks at one phase of one iteration: latest minus earliest, of starts, of the ranges'
/// ends, and of when their work was done (GPU work included: [`super::Phase::done`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PhaseSpread {
    pub number: u64,
    pub start_spread: Ns,
    pub end_spread: Ns,
    pub done_spread: Ns,
}

/// Latest minus earliest of `values` (0 for none).
pub fn spread(values: impl IntoIterator<Item = Ns>) -> Ns {
    let (lo, hi) = values
        .into_iter()
        .fold((Ns::MAX, Ns::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi { 0 } else { hi - lo }
}

/// Phase `phase`'s spreads over the common iterations in which every rank ran it.
pub fn phase_spreads(job: &JobIterations, phase: &str) -> Vec<PhaseSpread> {
    let mut out = Vec::new();
    for &number in &job.common {
        let phases: Option<Vec<(Ns, Ns, Ns)>> = (0..job.ranks.len())
            .map(|r| {
                let p = job.get(r, number)?.phase(phase)?;
                Some((p.start, p.end, p.done()))
            })
            .collect();
        let Some(phases) = phases.filter(|p| !p.is_empty()) else {
            continue;
        };
        out.push(PhaseSpread {
            number,
            start_spread: spread(phases.iter().map(|p| p.0)),
            end_spread: spread(phases.iter().map(|p| p.1)),
            done_spread: spread(phases.iter().map(|p| p.2)),
        });
    }
    out
}

/// The phase that synchronizes the ranks: the one that absorbs the most spread (the mean of
/// its start spread less the spread of when its work was done, over the iterations). With
/// NCCL or gloo alike, the phase that holds the collective begins apart and its work ends
/// together (gloo: the range itself; NCCL: its collective kernels).
pub fn synchronizing_phase(job: &JobIterations) -> Option<String> {
    let absorbed = |name: &str| -> Option<f64> {
        let spreads = phase_spreads(job, name);
        if spreads.is_empty() {
            return None;
        }
        let sum: f64 = spreads
            .iter()
            .map(|s| (s.start_spread - s.done_spread) as f64)
            .sum();
        Some(sum / spreads.len() as f64)
    };
    (job.phase_names.iter())
        .filter_map(|name| Some((absorbed(name)?, name)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_latest_less_earliest() {
        assert_eq!(spread([5, 2, 9]), 7);
        assert_eq!(spread([]), 0);
    }
}
