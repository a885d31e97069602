//! The `cpu_samples` table of one rank: one row per CPU or Python sample, with its thread, its
//! state, the sampled function and the whole stack in the folded form flame-graph tools read
//! (`outermost;…;innermost`). Each distinct stack is folded once and shared by its samples.

use std::collections::HashMap;
use std::sync::Arc;

use sightline::model::Trace;
use sightline::model::samples::{SampleSource, StackId};

use super::clock::RankClock;
use super::columns::{TableRows, Values};

/// Where row `i` is: (thread series, sample index in it).
fn locate(starts: &[usize], i: usize) -> (usize, usize) {
    let s = starts.partition_point(|&from| from <= i).saturating_sub(1);
    (s, i - starts[s])
}

/// The samples of every thread of `trace`, one row each.
pub fn samples_table(trace: &Trace, clock: RankClock) -> TableRows<'_> {
    let cpu = &trace.cpu;
    let mut starts = Vec::with_capacity(cpu.threads.len() + 1);
    let mut total = 0;
    for series in &cpu.threads {
        starts.push(total);
        total += series.len();
    }
    starts.push(total);
    // Each distinct stack folded once; `function` and `stack` list them by index.
    let mut index: HashMap<StackId, usize> = HashMap::new();
    let (mut stacks, mut leaves) = (Vec::new(), Vec::new());
    for series in &cpu.threads {
        for sample in series.stacks.iter() {
            index.entry(sample.stack()).or_insert_with(|| {
                let names: Vec<&str> = (cpu.stacks.frames(sample.stack()))
                    .filter_map(|f| cpu.frames.get(f as usize))
                    .map(|f| trace.name(f.function))
                    .collect();
                leaves.push(names.first().copied().unwrap_or("").to_string());
                stacks.push(names.iter().rev().copied().collect::<Vec<_>>().join(";"));
                stacks.len() - 1
            });
        }
    }
    let starts = Arc::new(starts);
    let index = Arc::new(index);
    let offset = clock.offset_ns;
    let at = {
        let starts = starts.clone();
        Arc::new(move |i: usize| locate(&starts, i))
    };
    let thread = Arc::new(move |i: usize| {
        let (s, _) = locate(&starts, i);
        cpu.threads
            .get(s)
            .and_then(|t| trace.threads.get(t.thread as usize))
    });
    let listed = {
        let at = at.clone();
        Arc::new(move |i: usize| {
            let (s, k) = at(i);
            (cpu.threads[s].stacks.get(k))
                .and_then(|sample| index.get(&sample.stack()).copied())
                .unwrap_or(usize::MAX)
        })
    };
    let (a, b, c, d) = (at.clone(), at.clone(), at.clone(), at);
    let (t1, t2) = (thread.clone(), thread);
    let (k1, k2) = (listed.clone(), listed);
    TableRows {
        name: "cpu_samples",
        rows: total,
        columns: vec![
            (
                "timestamp_ns",
                Values::I64(Box::new(move |i| {
                    let (s, k) = a(i);
                    cpu.threads[s].times[k]
                })),
            ),
            (
                "timestamp_job_ns",
                Values::I64(Box::new(move |i| {
                    let (s, k) = b(i);
                    cpu.threads[s].times[k].saturating_add(offset)
                })),
            ),
            (
                "pid",
                Values::OptU32(Box::new(move |i| t1(i).map(|t| t.pid))),
            ),
            (
                "tid",
                Values::OptU32(Box::new(move |i| t2(i).map(|t| t.tid))),
            ),
            (
                "source",
                Values::Str(Box::new(move |i| match cpu.threads[c(i).0].source {
                    SampleSource::Native => "native",
                    SampleSource::Python => "python",
                })),
            ),
            (
                "state",
                Values::Str(Box::new(move |i| {
                    let (s, k) = d(i);
                    (cpu.threads[s].stacks.get(k)).map_or("", |sample| sample.state().label())
                })),
            ),
            (
                "function",
                Values::Listed(Arc::new(leaves), Box::new(move |i| k1(i))),
            ),
            (
                "stack",
                Values::Listed(Arc::new(stacks), Box::new(move |i| k2(i))),
            ),
        ],
    }
}
