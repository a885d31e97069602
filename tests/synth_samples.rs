//! `sightline synth` copies the CPU side too: a report scaled N times holds
//! N times its source's native samples, Python samples and scheduling
//! switches, each copy's with the source's stacks (the same functions, files
//! and lines) and states, shifted by the copy's time; the stack tree and the
//! frames are shared by the copies, not repeated.

mod common;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use sightline::model::{CpuSampling, SampleSource, Trace};
use sightline::synth::write_report;

/// The real reports with CPU samples (nsys 2025.3.1): Python frames in the
/// first two, native samples of a C++ program in the third.
const FIXTURES: [&str; 3] = [
    "torch_loop_py/torch_loop",
    "cpu_only_py/cpu_only",
    "native_burn/native_burn",
];

const COPIES: usize = 3;

/// A stack by what it names, innermost first: (function, file or module, line).
fn named_stack(t: &Trace, stack: u32) -> Vec<(String, String, u32)> {
    let cpu = &t.cpu;
    cpu.stacks
        .frames(stack)
        .filter_map(|f| cpu.frame(f))
        .map(|f| {
            (
                t.name(f.function).to_string(),
                t.name(f.location).to_string(),
                f.line,
            )
        })
        .collect()
}

/// Per (thread, sampler): each sample's time, state and named stack.
type Samples = HashMap<(i64, SampleSource), Vec<(i64, String, Vec<(String, String, u32)>)>>;

fn samples(t: &Trace) -> Samples {
    let tid = |thread: u32| t.threads[thread as usize].global_tid;
    t.cpu
        .threads
        .iter()
        .map(|s| {
            let list = s
                .times
                .iter()
                .zip(s.stacks.iter())
                .map(|(&at, st)| {
                    (
                        at,
                        st.state().label().to_string(),
                        named_stack(t, st.stack()),
                    )
                })
                .collect();
            ((tid(s.thread), s.source), list)
        })
        .collect()
}

/// Per thread: each switch's time and state.
fn switches(t: &Trace) -> HashMap<i64, Vec<(i64, &'static str)>> {
    let cpu: &CpuSampling = &t.cpu;
    cpu.sched
        .iter()
        .map(|s| {
            let list = s.at.iter().zip(&s.state).map(|(&at, st)| (at, st.label()));
            (t.threads[s.thread as usize].global_tid, list.collect())
        })
        .collect()
}

#[test]
fn a_scaled_report_holds_n_copies_of_its_samples_and_switches() {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in FIXTURES {
        let source = common::load(&format!("{name}.sqlite"));
        assert!(
            source.cpu.sample_count() > 0,
            "{name}: a report with samples"
        );
        let out = dir
            .path()
            .join(format!("{}.sqlite", name.replace('/', "_")));
        let summary = write_report(&source, COPIES, &out, &mut |_| {}, &AtomicBool::new(false))
            .unwrap_or_else(|e| panic!("{name}: write failed: {e}"));
        let copy = common::load_path(&out);
        let shift = summary.copy_shift;

        let (before, after) = (samples(&source), samples(&copy));
        assert_eq!(
            before.keys().collect::<std::collections::BTreeSet<_>>(),
            after.keys().collect(),
            "{name}: the same threads and samplers"
        );
        for (key, list) in &before {
            let copied = &after[key];
            assert_eq!(copied.len(), COPIES * list.len(), "{name} {key:?}: samples");
            for (k, chunk) in copied.chunks(list.len()).enumerate() {
                for (orig, got) in list.iter().zip(chunk) {
                    assert_eq!(got.0, orig.0 + k as i64 * shift, "{name} {key:?}: time");
                    assert_eq!((&got.1, &got.2), (&orig.1, &orig.2), "{name} {key:?}");
                }
            }
        }

        let (before, after) = (switches(&source), switches(&copy));
        assert_eq!(before.len(), after.len(), "{name}: threads with switches");
        for (tid, list) in &before {
            let copied = &after[tid];
            assert_eq!(copied.len(), COPIES * list.len(), "{name} {tid}: switches");
            for (k, chunk) in copied.chunks(list.len()).enumerate() {
                for (orig, got) in list.iter().zip(chunk) {
                    assert_eq!(*got, (orig.0 + k as i64 * shift, orig.1), "{name} {tid}");
                }
            }
        }

        // The copies share one stack tree and one frame table.
        assert_eq!(copy.cpu.frames.len(), source.cpu.frames.len(), "{name}");
        assert_eq!(copy.cpu.stacks.len(), source.cpu.stacks.len(), "{name}");
    }
}
