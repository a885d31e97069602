//! A job of more ranks than the window reads whole (issue 46, "the window at fleet size"): it
//! opens on its ranks' NVTX ranges alone (the ranks panel, the straggler, each rank's
//! iterations lane), and a rank's events are read when it is expanded or clicked. The jobs are
//! real DDP ranks (tests/fixtures/jobs) or `synth --ranks` copies of one; expected values come
//! from the same reports read whole.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use eframe::egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use sightline::analysis::ranks::JobAnalysis;
use sightline::app::SightlineApp;
use sightline::app::panels::job_view::{FULL_LOAD_MAX_RANKS, JobView, RankEvents};
use sightline::synth::job::{JobSpec, StragglerSpec, write_job};

fn job_reports(name: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jobs")
        .join(name);
    sightline::loader::ranks::reports_in(&dir).expect("the job's reports")
}

/// The reports of job `name` copied into `dir` (to be spoiled by a test); the copies.
fn copied_reports(name: &str, dir: &Path) -> Vec<PathBuf> {
    (job_reports(name).iter())
        .map(|source| {
            let to = dir.join(source.file_name().expect("a name"));
            std::fs::copy(source, &to).expect("copied");
            to
        })
        .collect()
}

/// The straggler as the analysis names it: rank, phase, iterations.
fn named(a: &JobAnalysis) -> Option<(u32, String, Vec<u64>)> {
    (a.straggler.as_ref().ok()).map(|s| (s.rank, s.excess_phase.clone(), s.iterations().collect()))
}

/// `paths` read whole, as a job of few ranks opens.
fn read_whole(paths: Vec<PathBuf>) -> JobView {
    let mut view = JobView::open(paths, None);
    view.wait();
    assert_eq!(view.error, None);
    view
}

#[test]
fn a_job_past_the_limit_opens_on_nvtx_ranges_and_reads_a_rank_when_expanded() {
    let paths = job_reports("straggler");
    let whole = read_whole(paths.clone());
    let mut view = JobView::open_reading_at_most(paths.clone(), None, 2);
    view.wait();
    assert_eq!(view.error, None);
    assert!(
        !view.is_loading(),
        "opened without reading any rank's events"
    );
    assert_eq!(view.ranks.len(), 4);
    for r in &view.ranks {
        assert_eq!(r.events, RankEvents::RangesOnly, "rank {}", r.rank.number);
        assert_eq!(
            r.rank.trace.kernels.correlation.len(),
            0,
            "rank {}",
            r.rank.number
        );
        assert_eq!(
            r.rank.trace.cuda_api.correlation.len(),
            0,
            "rank {}",
            r.rank.number
        );
        assert!(
            !r.rank.trace.nvtx.category.is_empty(),
            "rank {}: its ranges",
            r.rank.number
        );
    }
    // The ranks panel and the straggler: the whole job's, from the ranges alone.
    let early = view.analysis.clone().expect("the ranks' analysis");
    let full = whole.analysis.clone().expect("the whole job's");
    assert_eq!(early.iterations.common, full.iterations.common);
    assert_eq!(named(&early), named(&full));
    assert!(named(&early).is_some(), "the recorded straggler is found");
    assert!(
        view.analysis_early,
        "the window says its events are not read"
    );
    let offsets = |v: &JobView| v.ranks.iter().map(|r| r.rank.offset_ns).collect::<Vec<_>>();
    assert_eq!(offsets(&view), offsets(&whole), "one job clock");
    // The view opens on the ranks' ranges: each rank spans them (its time axis is theirs).
    for r in &view.ranks {
        let nvtx = &r.rank.trace.nvtx.spans;
        let (start, end) = nvtx.bounds().expect("ranges");
        assert_eq!(
            r.rank.trace.info.time_range,
            (start, end),
            "rank {}",
            r.rank.number
        );
        let on_job = (r.rank.to_job(start) as f64, r.rank.to_job(end) as f64);
        assert!(
            view.axis.0 <= on_job.0 && on_job.1 <= view.axis.1,
            "rank {}",
            r.rank.number
        );
    }

    // Expanding rank 1 reads its report whole; the others stay as they are.
    view.set_expanded(1, true);
    view.wait_for_rank_reads();
    for (i, (r, w)) in view.ranks.iter().zip(&whole.ranks).enumerate() {
        if i == 1 {
            assert_eq!(r.events, RankEvents::Read);
            assert_eq!(r.rank.trace.event_count(), w.rank.trace.event_count());
            assert_eq!(r.rank.offset_ns, w.rank.offset_ns, "where it was");
            assert!(!r.timeline.compact, "still expanded");
        } else {
            assert_eq!(r.events, RankEvents::RangesOnly, "rank {i}");
        }
    }
    assert_eq!(view.unread(), 3);

    // Every rank read: the job is analysed whole, as if opened whole.
    for i in 0..4 {
        view.set_expanded(i, true);
    }
    view.wait_for_rank_reads();
    assert_eq!(view.unread(), 0);
    assert!(!view.analysis_early);
    let last = view.analysis.clone().expect("analysed");
    assert_eq!(named(&last), named(&full));
    assert_eq!(
        last.difference, full.difference,
        "what the straggler does differently"
    );
    assert!(last.difference.is_some());
}

#[test]
fn a_rank_whose_report_went_bad_says_why_and_the_job_stays() {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = copied_reports("balanced", dir.path());
    let mut view = JobView::open_reading_at_most(paths.clone(), None, 1);
    view.wait();
    assert_eq!(view.error, None);
    // The report is cut short after the job opened on its ranges.
    let bad = &paths[3];
    let len = std::fs::metadata(bad).expect("size").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(bad)
        .and_then(|f| f.set_len(len / 3))
        .expect("truncated");
    let i = (view.ranks.iter())
        .position(|r| r.rank.path == *bad)
        .expect("its rank");
    view.set_expanded(i, true);
    view.wait_for_rank_reads();
    match &view.ranks[i].events {
        RankEvents::Failed(why) => assert!(!why.is_empty()),
        other => panic!("a bad report's read: {other:?}"),
    }
    assert_eq!(view.ranks.len(), 4, "the job stays open");
    assert!(
        !view.ranks[i].rank.trace.nvtx.category.is_empty(),
        "with its ranges"
    );
}

/// At the real limit: a job of more ranks than `FULL_LOAD_MAX_RANKS` (copies of a recorded
/// rank, one slowed) opens as `sightline DIR` opens it, on its ranges; the heatmap shows every
/// rank, names the slowed one, and a click on its cell reads it and the fastest rank.
#[test]
fn a_job_of_many_ranks_opens_on_its_ranks_panel_and_a_click_reads_two_ranks() {
    let ranks = FULL_LOAD_MAX_RANKS as u32 + 1;
    let source = &job_reports("balanced")[0];
    let trace = sightline::loader::load(source, &mut |_| {}, &AtomicBool::new(false))
        .expect("the source rank loads");
    let dir = tempfile::tempdir().expect("temp dir");
    let slowed = ranks - 3;
    let spec = JobSpec {
        ranks,
        clock_spread_ns: 0,
        straggler: Some(StragglerSpec {
            rank: slowed,
            phase: "forward".into(),
            extra_ns: 20_000_000,
        }),
    };
    write_job(
        &trace,
        &spec,
        dir.path(),
        &mut |_| {},
        &AtomicBool::new(false),
    )
    .expect("the job is written");

    let mut app = SightlineApp::default();
    app.open(dir.path().to_path_buf());
    let view = app.job_view_mut().expect("a job tab");
    view.wait();
    assert_eq!(view.error, None);
    assert_eq!(view.ranks.len(), ranks as usize);
    assert_eq!(view.unread(), ranks as usize, "no rank's events read");
    let straggler = named(view.analysis.as_ref().expect("analysed")).expect("a straggler");
    assert_eq!((straggler.0, straggler.1.as_str()), (slowed, "forward"));

    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h.get_by_label_contains("ranks' events are not read");
    let view = h.state().job_view().expect("job");
    let rows: std::collections::BTreeSet<usize> = view.cells.iter().map(|c| c.0).collect();
    assert_eq!(rows.len(), ranks as usize, "a heatmap row per rank");
    let step = straggler.2[0];
    let (_, _, cell) = *(view.cells.iter())
        .find(|(r, n, _)| *r == slowed as usize && *n == step)
        .expect("the slowed rank's cell");
    // Its duration on hover (one response for the whole grid: the cell from the pointer).
    common::hover(&mut h, cell.center());
    let hover = format!("rank {slowed} · ");
    let tip = h
        .query_all_by(|n| n.label().is_some_and(|l| l.contains(&hover)))
        .filter_map(|n| n.accesskit_node().label())
        .find(|l| l.contains(&format!(", iteration {step}: ")));
    assert!(
        tip.is_some(),
        "no tooltip for rank {slowed}'s cell of step {step}"
    );
    common::click(&mut h, cell.center(), 3);
    let view = h.state_mut().job_view_mut().expect("job");
    view.wait_for_rank_reads();
    let read: Vec<u32> = (view.ranks.iter())
        .filter(|r| r.events == RankEvents::Read)
        .map(|r| r.rank.number)
        .collect();
    assert_eq!(read.len(), 2, "the clicked rank and the fastest: {read:?}");
    assert!(read.contains(&slowed));
    for r in view.ranks.iter().filter(|r| r.events == RankEvents::Read) {
        assert_eq!(
            r.rank.trace.kernels.correlation.len(),
            trace.kernels.correlation.len()
        );
        assert!(!r.timeline.compact, "rank {} expanded", r.rank.number);
    }
    // The rank clicked is brought into view among the others.
    h.run_steps(3);
    let view = h.state().job_view().expect("job");
    let i = (view.ranks.iter())
        .position(|r| r.rank.number == slowed)
        .expect("its rank");
    let shown = view.rank_rects[i];
    assert!(
        (0.0..1000.0).contains(&shown.min.y),
        "rank {slowed} drawn at {shown:?}"
    );
}

/// A job opened on its NVTX ranges whose report is broken from the start: the open says which
/// report and why, as a job read whole does, and nothing is shown half.
#[test]
fn a_broken_report_fails_the_open_on_ranges_with_its_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = copied_reports("balanced", dir.path());
    std::fs::write(&paths[2], b"not an nsys report").expect("written");
    let mut view = JobView::open_reading_at_most(paths.clone(), None, 1);
    view.wait();
    let error = view.error.clone().expect("the open fails");
    assert!(error.contains("rank2.sqlite"), "{error}");
    assert!(view.ranks.is_empty());
    assert!(!view.is_loading());
}

/// A job opens on its loop, from its first iteration to its last over every rank (on the
/// job clock), not on the start-up around it; a view the user moved to stays when ranks'
/// events come in later.
#[test]
fn a_job_opens_on_its_work_and_keeps_the_view_moved_to() {
    let paths = job_reports("straggler");
    let whole = read_whole(paths.clone());
    let found = &whole.analysis.as_ref().expect("analysed").iterations.ranks;
    let work = (found.iter())
        .flat_map(|r| r.iterations.values())
        .map(|it| (it.start, it.end))
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
        .expect("the job has a loop");
    let (first, last) = (whole.ranks.iter())
        .map(|r| {
            let (a, b) = r.rank.trace.info.time_range;
            (a + r.rank.offset_ns, b + r.rank.offset_ns)
        })
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
        .expect("ranks");
    assert!(first < work.0, "the sessions start before the work");
    assert_eq!(whole.axis, (work.0 as f64, work.1 as f64));

    let mut view = JobView::open_reading_at_most(paths, None, 2);
    view.wait();
    assert_eq!(
        view.axis,
        (work.0 as f64, work.1 as f64),
        "opened on ranges alone"
    );
    let moved = (work.0 as f64 + 1e6, work.0 as f64 + 5e6);
    view.set_axis(moved);
    for i in 0..view.ranks.len() {
        view.set_expanded(i, true);
    }
    view.wait_for_rank_reads();
    assert_eq!(view.unread(), 0);
    assert_eq!(
        view.axis, moved,
        "the view moved to stays ({first}..{last} is the sessions')"
    );
}
