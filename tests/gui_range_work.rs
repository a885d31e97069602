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
use sightline::app::panels::nvtx_gpu::RangeWork;
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
    let panel_left = h.state().doc().expect("doc").timeline.canvas.right();
    let in_panel = |label: &str| {
        h.query_all_by_label(label)
            .filter(|n| n.rect().left() >= panel_left)
            .count()
    };
    assert_eq!(
        in_panel(&autograd_label),
        rows_of(autograd),
        "each autograd row labelled"
    );
    // (The range's own fields name its thread too.)
    assert!(
        in_panel(&own_label) >= rows_of(own),
        "each main-thread row labelled"
    );
    let why = format!(
        "launched by {autograd_label} while this range's thread waited in pthread_cond_wait"
    );
    assert!(
        h.query_all_by_label_contains(&why).next().is_some(),
        "the details say why the other thread's work is the step's"
    );
}
