//! A report's main loop: the repeated top-level NVTX range (`step 12`, `iteration 3`,
//! `epoch 2 batch 5`), whose instances are one range once their numbers are set aside, and the
//! phases inside each instance (`forward`, `backward`, …). Several ranks of a job are compared
//! iteration by iteration through it; a training loop's findings are grouped by it.

use std::collections::HashMap;

use crate::model::{Ns, Trace};

/// One instance of the loop's range.
#[derive(Clone, Debug, PartialEq)]
pub struct Iteration {
    /// The last number in its name (`step 12` → 12).
    pub number: u64,
    /// The NVTX range (index into `trace.nvtx`).
    pub range: u32,
    pub start: Ns,
    pub end: Ns,
}

/// A phase inside an iteration: a range one level down, on the same thread.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub name: String,
    pub start: Ns,
    pub end: Ns,
}

/// The loop: its name pattern (`step #`), its thread, its iterations by start.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    pub pattern: String,
    /// Index into `trace.threads`.
    pub thread: usize,
    pub iterations: Vec<Iteration>,
}

/// A name with each run of digits replaced by `#`, and the last number in it.
pub fn masked(name: &str) -> (String, Option<u64>) {
    let mut pattern = String::with_capacity(name.len());
    let mut last = None;
    let mut digits = String::new();
    for ch in name.chars().chain(std::iter::once('\0')) {
        if ch.is_ascii_digit() {
            digits.push(ch);
            continue;
        }
        if !digits.is_empty() {
            pattern.push('#');
            last = digits.parse().ok();
            digits.clear();
        }
        if ch != '\0' {
            pattern.push(ch);
        }
    }
    (pattern, last)
}

/// The report's main loop: of the top-level NVTX ranges of each thread whose names carry a
/// number, the name pattern with the most instances (at least two) on one thread.
pub fn main_loop(trace: &Trace) -> Option<Loop> {
    let nvtx = &trace.nvtx;
    let mut best: Option<Loop> = None;
    for (t, thread) in trace.threads.iter().enumerate() {
        let mut groups: HashMap<String, Vec<Iteration>> = HashMap::new();
        for track in &thread.nvtx {
            for i in track.track.rows() {
                let row = i as usize;
                if nvtx.depth.get(row).copied().unwrap_or(0) != 0 {
                    continue;
                }
                let Some(&name) = nvtx.spans.name.get(row) else {
                    continue;
                };
                let (pattern, Some(number)) = masked(trace.name(name)) else {
                    continue;
                };
                let Some((start, end)) = nvtx.spans.get(row) else {
                    continue;
                };
                groups.entry(pattern).or_default().push(Iteration {
                    number,
                    range: i,
                    start,
                    end,
                });
            }
        }
        for (pattern, mut iterations) in groups {
            if iterations.len() < 2
                || best
                    .as_ref()
                    .is_some_and(|b| b.iterations.len() >= iterations.len())
            {
                continue;
            }
            iterations.sort_by_key(|it| (it.start, it.number));
            best = Some(Loop {
                pattern,
                thread: t,
                iterations,
            });
        }
    }
    best
}

/// The phases of `iteration` of `main`: the ranges one level below it on its thread, in order.
pub fn phases(trace: &Trace, main: &Loop, iteration: &Iteration) -> Vec<Phase> {
    let nvtx = &trace.nvtx;
    let Some(thread) = trace.threads.get(main.thread) else {
        return Vec::new();
    };
    let depth = nvtx
        .depth
        .get(iteration.range as usize)
        .copied()
        .unwrap_or(0);
    let mut out = Vec::new();
    for track in &thread.nvtx {
        if !track.track.contains(iteration.range) {
            continue;
        }
        for i in track.track.starting_in(
            &nvtx.spans,
            iteration.start,
            iteration.end.max(iteration.start + 1),
        ) {
            let row = i as usize;
            if nvtx.depth.get(row).copied().unwrap_or(0) != depth + 1 {
                continue;
            }
            let (Some(&name), Some((start, end))) = (nvtx.spans.name.get(row), nvtx.spans.get(row))
            else {
                continue;
            };
            if end <= iteration.end {
                out.push(Phase {
                    name: trace.name(name).to_string(),
                    start,
                    end,
                });
            }
        }
    }
    out.sort_by_key(|p| p.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_set_aside_and_the_last_is_kept() {
        assert_eq!(masked("step 12"), ("step #".to_string(), Some(12)));
        assert_eq!(
            masked("epoch 2 batch 5"),
            ("epoch # batch #".to_string(), Some(5))
        );
        assert_eq!(masked("forward"), ("forward".to_string(), None));
    }

    #[test]
    fn a_ddp_ranks_loop_is_its_steps_with_their_phases() {
        let trace = crate::loader::load_fixture("jobs/straggler/rank2.sqlite");
        let main = main_loop(&trace).expect("a loop");
        assert_eq!(main.pattern, "step #");
        let numbers: Vec<u64> = main.iterations.iter().map(|it| it.number).collect();
        assert_eq!(numbers, (6..=21).collect::<Vec<u64>>());
        let phases = phases(&trace, &main, &main.iterations[4]);
        let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, vec!["forward", "backward", "optimizer"]);
    }
}
