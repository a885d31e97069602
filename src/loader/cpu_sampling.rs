//! The load's last phase: the CPU samples and scheduling nsys's sampling
//! recorded (native samples, Python samples, switches; the readers are
//! [`super::samples`], [`super::python_samples`], [`super::sched`]).
//!
//! A sampled report's sampling tables can hold more rows than all its other
//! tables, and nothing else of the load needs them: so they are read from
//! the start of the load ([`start`]), on connections and threads of their
//! own, while the other phases read the rest; the phase then waits for them
//! and adopts what they made ([`read_cpu_sampling`]). Two threads: the
//! samples (native, then Python: one stack tree), and the switches. Each
//! runs the very readers the phase would, into a trace of its own (the
//! samples' thread reads the names of `StringIds` again: its frames name
//! ids into them); their threads and frames' names are then given the
//! load's ids in the order the readers met them, samples first, which is
//! the order the phase would have made them in: the result is the one
//! reading them in the phase gives. A live report (read in one transaction
//! on one connection) or one nsys did not sample is read in the phase.
//!
//! A load may leave them ([`super::LoadOptions`]: decoding them costs as
//! much again as the rest of a sampled report): it has no such phase and
//! the trace says so ([`CpuSamplingRead::NotRead`]); [`read_later`] then
//! reads them for that trace with the same two threads and the same
//! adoption, after the threads and names the load made, which is where the
//! phase would have put them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use super::apart::Apart;
use super::builder::{Builder, Progress};
use super::error::{LoadError, cancelled};
use super::{cpu, python_samples, samples, sampling, sched};
use crate::model::{CpuSampling, CpuSamplingRead, StrId, ThreadIdx, Trace};

/// The tables only nsys's sampling writes: a report with one was sampled.
const SAMPLED: [&str; 2] = ["COMPOSITE_EVENTS", "SCHED_EVENTS"];

/// A part of the sampling read apart: a trace holding it, or the error.
type Part = Apart<Result<Trace, LoadError>>;

/// The tables the sampling is read from, for the progress of a later read.
const SAMPLING_TABLES: [&str; 3] = ["COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS", "SCHED_EVENTS"];

/// Whether nsys sampled the report.
pub(super) fn sampled(b: &Builder) -> bool {
    SAMPLED.iter().any(|t| b.report.has_table(t))
}

/// Where the sampling of a report lies, about: its tables' first and last
/// rows ([`super::db::Report::time_hint`]).
pub(super) fn time_hint(b: &Builder) -> Option<(i64, i64)> {
    (SAMPLED.iter())
        .filter_map(|t| b.report.time_hint(t))
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
}

/// The sampling of `loaded` (a load without it) read now, into a trace
/// sharing `loaded`'s event tables: `b` is a builder of the same report.
/// The sampling's threads and names are adopted after the ones the load
/// made, as the load's last phase would have: the trace is the one a load
/// with the sampling gives.
pub(super) fn read_later(mut b: Builder, loaded: &Trace) -> Result<Trace, LoadError> {
    b.trace = loaded.share(Vec::new());
    b.rows_total = (SAMPLING_TABLES.iter())
        .map(|t| b.report.estimated_rows(t))
        .sum::<u64>()
        .max(1);
    b.report_progress(true);
    // The maps from nsys's ids to the load's: its names read again (the
    // same ids: they were the load's first), its threads and processes.
    let said = b.trace.warnings.len();
    cpu::read_names(&mut b).map_err(|e| b.error(&e))?;
    b.trace.warnings.truncate(said);
    for (i, thread) in b.trace.threads.iter().enumerate() {
        b.threads_by_tid.insert(thread.global_tid, i as ThreadIdx);
    }
    for (i, process) in b.trace.processes.iter().enumerate() {
        b.processes_by_pid.insert(process.pid, i);
    }
    start(&mut b);
    // The parts' progress is this reading's.
    b.parts_progress.1 = true;
    read_cpu_sampling(&mut b).map_err(|e| b.error(&e))?;
    b.trace.info.cpu_sampling = CpuSamplingRead::Read;
    Ok(b.finish())
}

/// Starts reading the sampling tables of a sampled report on threads of
/// their own (see the module); nothing for any other.
pub(super) fn start(b: &mut Builder) {
    if b.report.live || !sampled(b) {
        return;
    }
    let samples = ["COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS"];
    b.samples_apart = spawn_part(b, "sightline-samples", &samples, read_samples_apart);
    b.sched_apart = spawn_part(b, "sightline-sched", &["SCHED_EVENTS"], |b| {
        b.trace.cpu = Arc::new(CpuSampling {
            sched: sched::read_sched(b)?,
            ..CpuSampling::default()
        });
        Ok(())
    });
}

/// Runs `read` on a thread of its own, into a builder of its own on a
/// connection of its own; None where either could not be made (the phase
/// then reads it, and says what is wrong).
/// Its progress, of the rows of `tables`, is kept in the load's
/// [`super::apart::PartsProgress`].
fn spawn_part(
    b: &mut Builder,
    name: &str,
    tables: &[&str],
    read: fn(&mut Builder) -> rusqlite::Result<()>,
) -> Option<Part> {
    let report = b.report.reopen(&b.source).ok()?;
    let (path, source) = (b.path.clone(), b.source.clone());
    let rows: u64 = tables.iter().map(|t| report.estimated_rows(t)).sum();
    let fraction = Arc::new(AtomicU32::new(0));
    b.parts_progress.0.push((rows, fraction.clone()));
    Apart::spawn(name, move |stop| {
        let mut told = |p: Progress| fraction.store(p.fraction.to_bits(), Ordering::Relaxed);
        let mut b = Builder::new(&path, report, &mut told, stop);
        b.rows_total = rows.max(1);
        b.source = source;
        read(&mut b).map_err(|e| b.error(&e))?;
        Ok(std::mem::take(&mut b.trace))
    })
}

/// The samples' part: the names (the frames name them), then the samples.
fn read_samples_apart(b: &mut Builder) -> rusqlite::Result<()> {
    cpu::read_names(b)?;
    // What reading the names said, the load's own first phase says too.
    let said_before = b.trace.warnings.len();
    b.trace.cpu = Arc::new(read_samples(b)?);
    b.trace.warnings.drain(..said_before);
    Ok(())
}

/// The phase: the parts read apart, adopted in the order the phase would
/// read them; a part not read apart is read here (a live report, no thread
/// to read it on, or its reading failed: read again here, it fails the
/// load with the error the phase gives).
pub(super) fn read_cpu_sampling(b: &mut Builder) -> rusqlite::Result<()> {
    let samples_apart = b.samples_apart.take();
    let mut cpu = match waited(b, samples_apart)? {
        Some(part) => adopt(b, part),
        None => read_samples(b)?,
    };
    let sched_apart = b.sched_apart.take();
    cpu.sched = match waited(b, sched_apart)? {
        Some(part) => adopt(b, part).sched,
        None => sched::read_sched(b)?,
    };
    b.trace.cpu = Arc::new(cpu);
    Ok(())
}

/// The trace `part` read, waited for; None when it failed or there is none.
fn waited(b: &mut Builder, part: Option<Part>) -> rusqlite::Result<Option<Trace>> {
    let Some(part) = part else {
        return Ok(None);
    };
    let read = part.wait(|| {
        if b.parts_progress.1 {
            let fraction = b.parts_progress.fraction();
            (b.on_progress)(Progress {
                phase: b.phase,
                fraction,
            });
        } else {
            b.report_progress(false);
        }
        !b.cancel.load(Ordering::Relaxed)
    });
    if b.cancel.load(Ordering::Relaxed) {
        return Err(cancelled());
    }
    Ok(read.and_then(Result::ok))
}

/// Native samples, then Python samples, into one stack tree.
fn read_samples(b: &mut Builder) -> rusqlite::Result<CpuSampling> {
    let mut s = sampling::Sampling::default();
    samples::read_native(b, &mut s)?;
    python_samples::read_python(b, &mut s)?;
    Ok(s.finish(Vec::new()))
}

/// `part`'s sampling with the load's threads and names, given in the order
/// the readers met them (see the module); its warnings said.
fn adopt(b: &mut Builder, part: Trace) -> CpuSampling {
    let Trace {
        strings,
        threads,
        cpu,
        warnings,
        ..
    } = part;
    let thread_of: Vec<ThreadIdx> = threads.iter().map(|t| b.thread(t.global_tid)).collect();
    let mut cpu = Arc::unwrap_or_clone(cpu);
    // The part's ids of names made while reading follow the order they were
    // made in: interned in that order, new ones get the ids the phase's would.
    let mut named: Vec<StrId> = (cpu.frames.iter())
        .flat_map(|f| [f.function, f.location])
        .collect();
    named.sort_unstable();
    named.dedup();
    let name_of: HashMap<StrId, StrId> = (named.into_iter())
        .map(|id| (id, b.trace.strings.intern(strings.get(id))))
        .collect();
    for frame in &mut cpu.frames {
        frame.function = name_of.get(&frame.function).copied().unwrap_or_default();
        frame.location = name_of.get(&frame.location).copied().unwrap_or_default();
    }
    let ours = |thread: ThreadIdx| thread_of.get(thread as usize).copied().unwrap_or(thread);
    for series in &mut cpu.threads {
        series.thread = ours(series.thread);
    }
    cpu.threads.sort_by_key(|s| (s.thread, s.source));
    for switches in &mut cpu.sched {
        switches.thread = ours(switches.thread);
    }
    cpu.sched.sort_by_key(|s| s.thread);
    b.trace.warnings.extend(warnings);
    cpu
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::atomic::AtomicBool;

    use super::super::{PHASES, load_fixture};
    use super::*;
    use crate::model::ThreadSched;

    /// The fixture `name` (its path) loaded without its CPU samples.
    fn load_without_samples(name: &str) -> (std::path::PathBuf, Trace) {
        use super::super::{LoadOptions, load_with};
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let never = AtomicBool::new(false);
        let trace = load_with(
            &path,
            LoadOptions::WITHOUT_CPU_SAMPLING,
            &mut |_| {},
            &never,
        )
        .expect("load without the sampling");
        (path, trace)
    }

    /// `name` loaded with every phase on this thread, its sampling read in
    /// the phase (what the load did before the sampling was read apart).
    fn load_in_phases(name: &str) -> Trace {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let report = super::super::db::Report::open(&path).expect("report");
        let never = AtomicBool::new(false);
        let mut quiet = |_: Progress| {};
        let mut b = Builder::new(&path, report, &mut quiet, &never);
        for (_, run, _) in PHASES {
            run(&mut b).expect("phase");
        }
        assert!(b.samples_apart.is_none() && b.sched_apart.is_none());
        b.finish()
    }

    fn switches(t: &Trace) -> Vec<(ThreadIdx, Vec<i64>, Vec<&'static str>)> {
        let of = |s: &ThreadSched| {
            let states = s.state.iter().map(|st| st.label()).collect();
            (s.thread, s.at.clone(), states)
        };
        t.cpu.sched.iter().map(of).collect()
    }

    #[test]
    fn sampling_read_apart_is_what_the_phase_reads() {
        for name in [
            "torch_loop_py/torch_loop.sqlite",
            "cpu_only_py/cpu_only.sqlite",
            "native_burn/native_burn.sqlite",
            "fuser_like/fuser_like.sqlite",
        ] {
            let apart = load_fixture(name);
            let here = load_in_phases(name);
            assert_same_sampling(name, &apart, &here);
        }
    }

    /// A load without the sampling, then the sampling read for it, gives
    /// what one whole load gives: the sampling (threads, names, frames,
    /// stacks, switches), the threads and processes the sampling alone
    /// names, the warnings, the time axis; the events shared, not copied.
    #[test]
    fn sampling_read_later_is_what_one_whole_load_reads() {
        use super::super::read_cpu_sampling;
        use crate::model::CpuSamplingRead;
        for name in [
            "torch_loop_py/torch_loop.sqlite",
            "torch_loop/torch_loop.sqlite",
            "cpu_only/cpu_only.sqlite",
            "cpu_only_py/cpu_only.sqlite",
            "native_burn/native_burn.sqlite",
            "fuser_like/fuser_like.sqlite",
            "streams.sqlite",
        ] {
            let never = AtomicBool::new(false);
            let whole = load_fixture(name);
            let (path, without) = load_without_samples(name);
            assert_eq!(whole.info.cpu_sampling, CpuSamplingRead::Read, "{name}");
            assert_eq!(
                without.info.cpu_sampling,
                CpuSamplingRead::NotRead,
                "{name}"
            );
            assert_eq!(
                without.cpu.sample_count() + without.cpu.sched.len(),
                0,
                "{name}"
            );
            let mut phases = Vec::new();
            let later = read_cpu_sampling(&path, &without, &mut |p| phases.push(p), &never)
                .expect("the sampling read later");
            assert!(!phases.is_empty(), "{name}: progress");
            assert_eq!(later.info.cpu_sampling, CpuSamplingRead::Read, "{name}");
            assert!(later.is_complete(), "{name}");
            assert!(
                Arc::ptr_eq(&later.cuda_api, &without.cuda_api),
                "{name}: shared"
            );
            assert!(Arc::ptr_eq(&later.nvtx, &without.nvtx), "{name}: shared");
            assert_same_sampling(name, &later, &whole);
            let threads = |t: &Trace| {
                (t.threads.iter())
                    .map(|t| (t.global_tid, t.name.clone(), t.process, t.priority))
                    .collect::<Vec<_>>()
            };
            assert_eq!(threads(&later), threads(&whole), "{name}");
            let processes = |t: &Trace| {
                (t.processes.iter())
                    .map(|p| (p.pid, p.name.clone(), p.threads.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(processes(&later), processes(&whole), "{name}");
            assert_eq!(later.info.time_range, whole.info.time_range, "{name}");
            assert_eq!(later.event_count(), whole.event_count(), "{name}");
        }
    }

    /// The later reading stops when asked, saying so.
    #[test]
    fn a_later_reading_cancelled_says_so() {
        use super::super::{Problem, read_cpu_sampling};
        let (path, without) = load_without_samples("torch_loop_py/torch_loop.sqlite");
        let stop = AtomicBool::new(true);
        let read = read_cpu_sampling(&path, &without, &mut |_| {}, &stop);
        assert_eq!(read.err().map(|e| e.problem), Some(Problem::Cancelled));
    }

    /// A report nsys did not sample says so, loaded with or without.
    #[test]
    fn a_report_without_sampling_says_nsys_did_not_sample() {
        use super::super::{LoadOptions, load_with};
        use crate::model::CpuSamplingRead;
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sync_timing.sqlite");
        for options in [LoadOptions::WHOLE, LoadOptions::WITHOUT_CPU_SAMPLING] {
            let trace =
                load_with(&path, options, &mut |_| {}, &AtomicBool::new(false)).expect("load");
            assert_eq!(trace.info.cpu_sampling, CpuSamplingRead::NotRecorded);
        }
    }

    /// `a` and `b` hold the same sampling, names and warnings.
    fn assert_same_sampling(name: &str, apart: &Trace, here: &Trace) {
        {
            let (a, h) = (&apart.cpu, &here.cpu);
            assert!(!h.threads.is_empty() && !h.sched.is_empty(), "{name}");
            assert_eq!(a.frames, h.frames, "{name}");
            assert_eq!(a.stacks.len(), h.stacks.len(), "{name}");
            for node in 0..h.stacks.len() as u32 {
                assert!(a.stacks.frames(node).eq(h.stacks.frames(node)), "{name}");
            }
            assert_eq!(a.threads.len(), h.threads.len(), "{name}");
            for (x, y) in a.threads.iter().zip(&h.threads) {
                assert_eq!(
                    (x.thread, x.source, &x.times),
                    (y.thread, y.source, &y.times)
                );
                assert_eq!(x.stacks, y.stacks, "{name}");
            }
            assert_eq!(switches(apart), switches(here), "{name}");
            let tids = |t: &Trace| t.threads.iter().map(|t| t.global_tid).collect::<Vec<_>>();
            assert_eq!(tids(apart), tids(here), "{name}: threads in the same order");
            let names = |t: &Trace| {
                t.strings
                    .iter()
                    .map(|(_, s)| s.to_string())
                    .collect::<Vec<_>>()
            };
            assert_eq!(names(apart), names(here), "{name}: names in the same order");
            assert_eq!(apart.warnings, here.warnings, "{name}");
        }
    }
}
