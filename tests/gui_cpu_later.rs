//! The window opens a sampled report without its CPU samples and scheduling, then reads them
//! in the background (`app::document::cpu_samples`): until they are in, the timeline and the
//! CPU profile say "reading CPU samples…"; then the CPU rows come. A report of samples alone
//! is never a blank 0 ns timeline meanwhile.

mod common;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use common::{empty_window, fixture, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::cpu_profile::{SampleScope, flat_profile};
use sightline::app::SightlineApp;
use sightline::loader::{LoadJob, LoadMessage, LoadOptions, READING_CPU_SAMPLES};
use sightline::model::{CpuSamplingRead, Trace};

/// How long a debug build may take to read a fixture's samples on a busy machine.
const PATIENCE: Duration = Duration::from_secs(60);

/// The window given `name`'s load without its CPU samples (as its own load makes it), and one
/// frame drawn: the frame that takes the load's end, before the samples can be in.
fn opened_without_samples(path: PathBuf) -> Harness<'static, SightlineApp> {
    let trace = sightline::loader::load_with(
        &path,
        LoadOptions::WITHOUT_CPU_SAMPLING,
        &mut |_| {},
        &AtomicBool::new(false),
    )
    .expect("loads");
    assert_eq!(trace.info.cpu_sampling, CpuSamplingRead::NotRead);
    let (tx, rx) = crossbeam_channel::unbounded();
    tx.send(LoadMessage::Done {
        result: Box::new(Ok(trace)),
        attempt: 0,
    })
    .expect("send");
    let mut h = empty_window();
    h.state_mut().open_job(LoadJob::from_channel(path, rx));
    h.step();
    h
}

fn shows(h: &Harness<'_, SightlineApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

fn samples_in(h: &Harness<'_, SightlineApp>) -> bool {
    h.state()
        .doc()
        .is_some_and(|d| d.trace.info.cpu_sampling == CpuSamplingRead::Read && !d.is_loading())
}

/// The row labels of `whole`'s sampled threads ("[tid]"); in a CUDA report, those with
/// other events (one known only from its samples has no row there); not nsys's own.
fn sampled_threads(whole: &Trace) -> Vec<String> {
    let cuda = !whole.cuda_api.spans.is_empty();
    let mut tids: Vec<String> = (whole.cpu.threads.iter())
        .filter(|s| !s.is_empty())
        .filter(|s| !cuda || !whole.threads[s.thread as usize].is_empty())
        // nsys's own threads (its sampler) get no rows (tests/timeline_sampling_rows.rs).
        .filter(|s| !whole.threads[s.thread as usize].is_profilers_own())
        .map(|s| format!("[{}]", whole.threads[s.thread as usize].tid))
        .collect();
    tids.dedup();
    tids
}

#[test]
fn a_sampled_report_shows_reading_then_its_cpu_rows_and_profile() {
    let name = "torch_loop_py/torch_loop.sqlite";
    let whole = common::load(name);
    let mut h = opened_without_samples(fixture(name));
    {
        let doc = h.state().doc().expect("the report is open");
        assert!(doc.reading_cpu_samples(), "its samples are being read");
        assert!(!doc.trace.is_complete(), "the findings wait for them");
    }
    assert!(shows(&h, READING_CPU_SAMPLES), "the timeline says so");
    assert!(!shows(&h, "CPU samples ("), "no sample row yet");
    // A range selected meanwhile: its CPU profile waits for the samples.
    let (lo, hi) = whole.info.time_range;
    if let Some(doc) = h.state_mut().doc_mut() {
        doc.select_range(lo, hi);
    }
    h.step();
    {
        let doc = h.state().doc().expect("open");
        assert!(doc.cpu_profile.is_shown() && doc.cpu_profile.reading_samples);
    }

    assert!(step_until(&mut h, PATIENCE, samples_in), "the samples came");
    h.run_steps(3);
    assert!(!shows(&h, READING_CPU_SAMPLES));
    for thread in sampled_threads(&whole) {
        assert!(shows(&h, &thread), "a row for sampled thread {thread}");
    }
    assert!(shows(&h, "CPU samples ("), "sample rows");
    assert!(shows(&h, "CPU state"), "state rows");
    let doc = h.state_mut().doc_mut().expect("open");
    assert!(doc.trace.is_complete());
    assert_eq!(doc.trace.cpu.sample_count(), whole.cpu.sample_count());
    assert!(!doc.cpu_profile.reading_samples);
    doc.cpu_profile.wait();
    let profile = doc
        .cpu_profile
        .profile
        .as_ref()
        .expect("the range's profile");
    // What the whole load's samples give for the range.
    let scope = SampleScope::range(profile.range.start, profile.range.end);
    let expected = flat_profile(&whole, &scope);
    assert!(expected.samples > 0);
    assert_eq!(profile.flat.samples, expected.samples);
}

/// Samples and scheduling alone (no CUDA, no OS runtime calls, no NVTX, as a Julia trace
/// recorded with `--sample` only): before its samples are in, the time axis is theirs (not
/// 0 ns) and the timeline says they are being read; then its threads' rows come.
#[test]
fn a_report_of_samples_alone_is_never_blank() {
    let dir = tempfile::TempDir::new().expect("a temporary folder");
    let path = dir.path().join("samples_only.sqlite");
    std::fs::copy(fixture("cpu_only/cpu_only.sqlite"), &path).expect("copy");
    rusqlite::Connection::open(&path)
        .expect("open")
        .execute_batch("DELETE FROM OSRT_API; DELETE FROM NVTX_EVENTS;")
        .expect("edit");
    let whole = common::load_path(&path);
    let bounds = whole.cpu.bounds().expect("samples");
    let mut h = opened_without_samples(path);
    let span = h.state().doc().map_or(0.0, |d| d.timeline.view.span());
    assert!(
        span >= 0.5 * (bounds.1 - bounds.0) as f64,
        "the view spans the samples to come ({span} ns of {} ns)",
        bounds.1 - bounds.0
    );
    assert!(shows(&h, READING_CPU_SAMPLES), "the timeline says so");
    assert!(step_until(&mut h, PATIENCE, samples_in), "the samples came");
    h.run_steps(3);
    for thread in sampled_threads(&whole) {
        assert!(shows(&h, &thread), "a row for sampled thread {thread}");
    }
    let doc = h.state().doc().expect("open");
    assert_eq!(doc.trace.info.time_range, whole.info.time_range);
}

/// Opened as a user opens it (File ▸ Open): the load, then the samples, by themselves.
#[test]
fn an_opened_report_gets_its_samples_by_itself() {
    let mut h = empty_window();
    h.state_mut()
        .open(fixture("native_burn/native_burn.sqlite"));
    assert!(step_until(&mut h, PATIENCE, samples_in), "the samples came");
    h.run_steps(3);
    assert!(shows(&h, "CPU samples ("), "sample rows");
    assert!(!shows(&h, READING_CPU_SAMPLES));
}

/// Samples that cannot be read (the switches' table damaged) leave the report open, whole
/// otherwise (its findings run), and say why.
#[test]
fn samples_that_cannot_be_read_leave_the_report_open() {
    let dir = tempfile::TempDir::new().expect("a temporary folder");
    let path = dir.path().join("torch_loop.sqlite");
    std::fs::copy(fixture("torch_loop_py/torch_loop.sqlite"), &path).expect("copy");
    common::garble_table(&path, "SCHED_EVENTS");

    let mut h = empty_window();
    h.state_mut().open(path);
    let settled = |h: &Harness<'_, SightlineApp>| {
        h.state()
            .doc()
            .is_some_and(|d| !d.is_loading() && d.trace.is_complete())
    };
    assert!(step_until(&mut h, PATIENCE, settled), "the report is open");
    h.run_steps(2);
    assert!(shows(&h, "CPU samples not read"), "said why");
    assert!(!shows(&h, READING_CPU_SAMPLES));
    let doc = h.state_mut().doc_mut().expect("still open");
    assert_eq!(doc.trace.info.cpu_sampling, CpuSamplingRead::NotRead);
    doc.wait_for_findings();
    assert!(!doc.findings.is_pending(), "its findings ran");
}
