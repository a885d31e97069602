//! The idle attribution names the code that ran while the GPU idled, from
//! the report's CPU samples (nsys 2025.3.1 recordings, `tests/fixtures/*`):
//! Python functions where Python samples carry frames, native ones
//! otherwise, and nothing (the sentence as before) without samples.

mod common;

use std::sync::atomic::AtomicBool;

use sightline::analysis::idle::{self, Cause, Classifier, IdleSummary, Lanes};
use sightline::model::{FrameKind, Trace};

fn summaries(trace: &Trace) -> Vec<IdleSummary> {
    let attribution =
        idle::attribute(trace, Lanes::Device, &AtomicBool::new(false)).expect("not cancelled");
    idle::summarize(&Classifier::new(trace), &attribution, None)
}

fn outside(s: &IdleSummary) -> &idle::CauseTotal {
    s.causes
        .iter()
        .find(|c| c.cause == Cause::Outside)
        .expect("time outside CUDA")
}

/// The PyTorch loop whose GPU idles while pure-Python `build_batch` runs:
/// the time outside CUDA names it (the function itself, or as the caller of
/// the function sampled), as Python with its file.
#[test]
fn python_frames_name_build_batch() {
    let trace = common::load("torch_loop_py/torch_loop.sqlite");
    let all = summaries(&trace);
    let s = &all[0];
    let named = outside(s).functions.as_ref().expect("functions named");
    assert!(
        named.source == Some(sightline::model::SampleSource::Python),
        "Python samples are preferred"
    );
    let phrase = named.phrase();
    assert!(phrase.contains("`build_batch` (torch_loop.py:"), "{phrase}");
    let sentence = s.sentence();
    assert!(
        sentence.contains(&format!("{}: ", Cause::Outside.label())) && sentence.contains("% in `"),
        "{sentence}"
    );
}

/// The same loop exported without Python frames: the native samples name
/// the interpreter's functions, shown as native (module in brackets).
#[test]
fn native_samples_name_native_functions() {
    let trace = common::load("torch_loop/torch_loop.sqlite");
    let all = summaries(&trace);
    let named = outside(&all[0])
        .functions
        .as_ref()
        .expect("functions named");
    assert_eq!(named.source, Some(sightline::model::SampleSource::Native));
    assert!(!named.functions.is_empty());
    for f in &named.functions {
        assert!(f.label.starts_with('`'), "{}", f.label);
        assert!(!f.label.contains(".py:"), "no Python frames: {}", f.label);
    }
    // Native frames of the sampled functions are in the file as native.
    assert!(trace.cpu.frames.iter().all(|f| f.kind == FrameKind::Native));
}

/// A C++ program burning the CPU in `checksum_rows` (calling `mix_row`)
/// between launches: the time outside CUDA names one of them.
#[test]
fn a_native_program_names_its_burning_function() {
    let trace = common::load("native_burn/native_burn.sqlite");
    let all = summaries(&trace);
    let phrase = outside(&all[0])
        .functions
        .as_ref()
        .expect("functions named")
        .phrase();
    assert!(
        phrase.contains("checksum_rows") || phrase.contains("mix_row"),
        "{phrase}"
    );
}

/// Without samples the sentence is what it was: no function named.
#[test]
fn without_samples_nothing_is_named() {
    let trace = common::load("sync_timing.sqlite");
    assert!(trace.cpu.is_empty());
    for s in summaries(&trace) {
        assert!(s.causes.iter().all(|c| c.functions.is_none()));
        assert!(!s.sentence().contains("% in `"), "{}", s.sentence());
    }
}
