//! The details of a selected range show its GPU work from every thread
//! (issue 43): a PyTorch step lists the kernels its autograd thread
//! launched while the main thread waited in `loss.backward()`, each row
//! labelled with its launching thread, and say why they are the step's.

mod common;
use common::load;

use eframe::egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::app::SightlineApp;
use sightline::app::panels::nvtx_gpu::{RangeWork, thread_heading_text};
use sightline::app::state::events::{EventRef, Table, thread_label};

#[test]
fn a_steps_details_show_the_autograd_threads_kernels_with_the_thread() {
    let trace = load("torch_loop/torch_loop.sqlite");
    let step = (0..trace.nvtx.spans.len() as u32)
        .find(|&i| trace.name(trace.nvtx.spans.name[i as usize]) == "step 12")
        .expect("step 12");
    let autograd = trace
        .threads
        .iter()
        .position(|t| t.name == "pt_autograd_0")
        .expect("the autograd thread");
    let work = RangeWork::compute(&trace, step);
    let own = work.thread.expect("one thread") as usize;
    let autograd_label = thread_label(&trace, autograd);
    let own_label = thread_label(&trace, own);
    let rows_of = |t: usize| {
        work.rows
            .iter()
            .take(50)
            .filter(|r| r.thread as usize == t)
            .count()
    };
    assert!(
        rows_of(autograd) > 0 && rows_of(own) > 0,
        "both threads' work"
    );
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(1500.0, 1300.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h.state_mut()
        .doc_mut()
        .expect("doc")
        .show_event(EventRef::new(Table::Nvtx, step));
    h.run_steps(3);
    assert!(h.query_by_label("GPU work of this range").is_some());
    // A section per launching thread, the range's own first, each headed by it.
    let heading = |label: &str, own: bool| {
        h.query_by_label(&thread_heading_text(label, own))
            .unwrap_or_else(|| panic!("a heading for {label}"))
            .rect()
    };
    let (main_at, autograd_at) = (heading(&own_label, true), heading(&autograd_label, false));
    assert!(
        main_at.top() < autograd_at.top(),
        "the range's own thread first"
    );
    // Under each heading, its thread's rows: as many as it launched kinds of op.
    let counts_between = |top: f32, bottom: f32| {
        h.query_all_by_label_contains(" %")
            .filter(|n| n.rect().top() > top && n.rect().top() < bottom)
            .count()
    };
    assert_eq!(
        counts_between(main_at.top(), autograd_at.top()),
        rows_of(own)
    );
    // (The idle time's section, below, has shares of its own.)
    let idle_at = h
        .query_by_label("GPU idle — why")
        .map_or(f32::MAX, |n| n.rect().top());
    assert_eq!(
        counts_between(autograd_at.top(), idle_at),
        rows_of(autograd)
    );
    let why = format!(
        "launched by {autograd_label} while this range's thread waited in pthread_cond_wait"
    );
    assert!(
        h.query_all_by_label_contains(&why).next().is_some(),
        "the details say why the other thread's work is the step's"
    );
}
