//! A job of many reports in the window (egui_kittest), on a real job: the four ranks of a
//! PyTorch DDP run recorded rank by rank with nsys (tests/fixtures/jobs/README.md), rank 2
//! slowed in `forward` on steps 10..19. Expected values come from the reports themselves.

mod common;

use std::path::{Path, PathBuf};

use eframe::egui::{Pos2, vec2};
use egui_kittest::Harness;
use sightline::analysis::ranks::rank_iterations;
use sightline::app::SightlineApp;
use sightline::app::panels::job_view::OVERLAY_SOURCE;
use sightline::model::Alignment;

fn job_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jobs")
        .join(name)
}

/// A window showing the job of `name`, opened as `sightline DIR` opens it, loaded whole.
fn job_harness(name: &str, size: (f32, f32)) -> Harness<'static, SightlineApp> {
    let mut app = SightlineApp::default();
    app.open(job_dir(name));
    let view = app.job_view_mut().expect("a job tab is shown");
    view.wait();
    assert_eq!(view.error, None);
    let mut h = Harness::builder()
        .with_size(vec2(size.0, size.1))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(4);
    h
}

fn click(h: &mut Harness<'_, SightlineApp>, pos: Pos2) {
    common::click(h, pos, 3);
}

#[test]
fn a_folder_of_rank_reports_opens_as_one_job_on_one_clock() {
    let h = job_harness("straggler", (1600.0, 1000.0));
    let view = h.state().job_view().expect("job");
    let numbers: Vec<u32> = view.ranks.iter().map(|r| r.rank.number).collect();
    assert_eq!(
        numbers,
        vec![0, 1, 2, 3],
        "numbered from rankN in the names"
    );
    assert_eq!(view.alignment, Alignment::SessionStart);
    // The offsets are the reports' own session starts, counted from the earliest.
    let starts: Vec<i64> = (view.ranks.iter())
        .map(|r| {
            r.rank
                .trace
                .info
                .session_start_utc_ns
                .expect("a session start")
        })
        .collect();
    let earliest = starts.iter().copied().min().expect("ranks");
    for (r, start) in view.ranks.iter().zip(&starts) {
        assert_eq!(r.rank.offset_ns, start - earliest);
    }
    // Collapsed, the four ranks fit the window without scrolling.
    assert_eq!(view.rank_rects.len(), 4);
    let bottom = view
        .rank_rects
        .iter()
        .map(|r| r.bottom())
        .fold(0.0, f32::max);
    assert!(
        bottom < 1000.0,
        "every rank on screen: last ends at {bottom}"
    );
    assert!(view.ranks.iter().all(|r| r.timeline.compact));
}

/// Aligned on the session starts, the ranks leave each iteration's `backward` (where the
/// all-reduce holds them) within a millisecond of each other.
#[test]
fn aligned_the_ranks_end_each_all_reduce_together() {
    for name in ["balanced", "straggler"] {
        let h = job_harness(name, (1600.0, 1000.0));
        let view = h.state().job_view().expect("job");
        // On the job clock: the iterations' times are the rank's own plus its offset.
        let ends: Vec<Vec<(u64, i64)>> = (view.ranks.iter())
            .map(|r| {
                let found = rank_iterations(&r.rank).expect("a loop");
                (found.iterations.values())
                    .filter_map(|it| Some((it.number, it.phase("backward")?.end)))
                    .collect()
            })
            .collect();
        let steps: Vec<u64> = ends[0].iter().map(|(n, _)| *n).collect();
        assert!(steps.len() >= 10, "{name}: iterations found");
        for step in steps {
            let at: Vec<i64> = (ends.iter())
                .filter_map(|e| e.iter().find(|(n, _)| *n == step).map(|(_, t)| *t))
                .collect();
            assert_eq!(at.len(), 4, "{name}, step {step}: every rank has it");
            let spread = at.iter().max().expect("ends") - at.iter().min().expect("ends");
            assert!(
                spread < 1_000_000,
                "{name}, step {step}: spread {spread} ns"
            );
        }
    }
}

#[test]
fn the_heatmap_marks_the_slow_rank_and_a_click_zooms_to_its_iteration() {
    let mut h = job_harness("straggler", (1600.0, 1000.0));
    h.state_mut().job_view_mut().expect("job").heatmap_phase = Some("forward".into());
    h.run_steps(3);
    let found: Vec<_> = (h.state().job_view().expect("job").ranks.iter())
        .map(|r| rank_iterations(&r.rank).expect("a loop"))
        .collect();
    // Of `forward`, on the slowed steps, rank 2's is the longest: from the reports.
    let forward = |r: usize, step: u64| -> i64 {
        let it = found[r].iterations.get(&step).expect("step");
        it.phase("forward").expect("forward").duration()
    };
    for step in 10..=19 {
        let slowest = (0..4).max_by_key(|&r| forward(r, step)).expect("ranks");
        assert_eq!(slowest, 2, "step {step}");
    }
    let view = h.state().job_view().expect("job");
    assert_eq!(view.cells.len(), 4 * 16, "4 ranks × steps 6..21");
    let (_, _, cell) = *view
        .cells
        .iter()
        .find(|(r, n, _)| *r == 2 && *n == 12)
        .expect("rank 2's cell of step 12");
    click(&mut h, cell.center());
    let view = h.state().job_view().expect("job");
    // Every rank shows step 12 whole.
    for r in &view.ranks {
        let mut found = rank_iterations(&r.rank).expect("a loop");
        let it = found.iterations.remove(&12).expect("step 12");
        let (s, e) = (it.start as f64, it.end as f64);
        assert!(
            view.axis.0 <= s && e <= view.axis.1,
            "rank {}: step 12 shown",
            r.rank.number
        );
        assert!(
            view.axis.1 - view.axis.0 < 2.0 * (e - s) + 5e6,
            "zoomed to it"
        );
    }
    // That rank and the fastest one expanded, the others collapsed.
    let fastest = (0..4).min_by_key(|&r| forward(r, 12)).expect("ranks");
    for (i, r) in view.ranks.iter().enumerate() {
        assert_eq!(!r.timeline.compact, i == 2 || i == fastest, "rank {i}");
    }
}

#[test]
fn several_files_dropped_are_asked_about_and_open_as_one_job() {
    let mut app = SightlineApp::default();
    app.dropped = (0..4)
        .map(|r| job_dir("balanced").join(format!("rank{r}.sqlite")))
        .collect();
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(2);
    use egui_kittest::kittest::Queryable;
    h.get_by_label("One job").click();
    h.run_steps(2);
    let view = h.state_mut().job_view_mut().expect("one job tab");
    view.wait();
    assert_eq!(view.ranks.len(), 4);
    assert_eq!(h.state().tab_count(), 1);
}

/// The job's straggler is named above the ranks and marked on their timelines: its excess
/// phase on its own, the wait on every other rank's; none on the balanced job.
#[test]
fn the_straggler_is_named_and_marked_on_every_rank() {
    let h = job_harness("straggler", (1600.0, 1000.0));
    let view = h.state().job_view().expect("job");
    let analysis = view.analysis.as_ref().expect("analysed");
    let s = analysis.straggler.as_ref().expect("a straggler");
    assert_eq!((s.rank, s.excess_phase.as_str()), (2, "forward"));
    for r in &view.ranks {
        let marks: Vec<_> = r.timeline.overlays_of(OVERLAY_SOURCE).collect();
        if r.rank.number == 2 {
            assert_eq!(marks.len(), s.excess.len(), "one mark per slowed iteration");
            assert!(
                marks
                    .iter()
                    .all(|m| m.label.starts_with("straggler: rank 2"))
            );
        } else {
            let wait = s
                .waits
                .iter()
                .find(|w| w.rank == r.rank.number)
                .expect("a wait");
            assert_eq!(
                marks.len(),
                wait.per_iteration.len(),
                "rank {}",
                r.rank.number
            );
            assert!(marks.iter().all(|m| m.label.contains("for rank 2")));
        }
    }
    let h = job_harness("balanced", (1600.0, 1000.0));
    let view = h.state().job_view().expect("job");
    assert!(view.analysis.as_ref().expect("analysed").straggler.is_err());
    assert!(
        view.ranks
            .iter()
            .all(|r| r.timeline.overlays_of(OVERLAY_SOURCE).next().is_none())
    );
}

/// Eight ranks (a synthetic job of `synth --ranks 8` from a recorded rank), collapsed, fit a
/// 1600×1000 window above the heatmap, without scrolling.
#[test]
fn eight_ranks_fit_the_window_collapsed() {
    let dir = tempfile::TempDir::new().expect("a temporary folder");
    let out = dir.path().join("job");
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args([
            "synth",
            "--ranks",
            "8",
            "--straggler",
            "5:forward:15",
            "--from",
        ])
        .arg(job_dir("balanced").join("rank0.sqlite"))
        .arg("--output")
        .arg(&out)
        .output()
        .expect("synth runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let mut app = SightlineApp::default();
    app.open(out);
    app.job_view_mut().expect("a job tab").wait();
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(4);
    let view = h.state().job_view().expect("job");
    assert_eq!(view.rank_rects.len(), 8);
    let last = view
        .rank_rects
        .iter()
        .map(|r| r.bottom())
        .fold(0.0, f32::max);
    let heatmap_top = (view.cells.iter())
        .map(|(_, _, c)| c.top())
        .fold(f32::INFINITY, f32::min);
    assert!(
        last <= heatmap_top,
        "the last rank ends at {last}, the heatmap begins at {heatmap_top}"
    );
    let s = view
        .analysis
        .as_ref()
        .and_then(|a| a.straggler.as_ref().ok());
    assert_eq!(s.map(|s| s.rank), Some(5), "the slowed rank is named");
}

/// A job being opened can be cancelled: its loads stop, the tab says so.
#[test]
fn opening_a_job_can_be_cancelled() {
    use egui_kittest::kittest::Queryable;
    // Sixty ranks (one report given sixty times): long enough to read that the click lands
    // while they are read, whatever the machine.
    let report = job_dir("straggler").join("rank0.sqlite");
    let mut app = SightlineApp::default();
    app.open_ranks(vec![report; 60], None);
    let flag = app.job_view().expect("a job tab").load_cancel_flag();
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.step();
    assert!(h.state().job_view().expect("job").is_loading());
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(
        flag.load(std::sync::atomic::Ordering::Relaxed),
        "the loads are told to stop"
    );
    let view = h.state().job_view().expect("job");
    assert!(!view.is_loading());
    assert_eq!(view.error.as_deref(), Some("opening the job was cancelled"));
}

/// A span selected in the job is aggregated on every rank over the same span of the job clock:
/// each rank's rows are its report's alone over its own span, and the spread names the rank
/// whose `forward` took longest (the straggler's).
#[test]
fn a_span_gives_every_ranks_tables_and_the_spread() {
    use sightline::analysis::stats::{RangeRule, Report, compute_in};
    use sightline::model::TimeRange;
    let mut h = job_harness("straggler", (1600.0, 1000.0));
    let view = h.state_mut().job_view_mut().expect("job");
    let found = rank_iterations(&view.ranks[0].rank).expect("a loop");
    let (first, last) = (&found.iterations[&10], &found.iterations[&19]);
    let span = (first.start, last.end);
    view.select_span(Some(span));
    view.span.wait();
    assert_eq!(view.span.tables.len(), 4);
    for (r, (number, table)) in view.ranks.iter().zip(&view.span.tables) {
        assert_eq!(*number, r.rank.number);
        let own = TimeRange {
            start: span.0 - r.rank.offset_ns,
            end: span.1 - r.rank.offset_ns,
        };
        let alone = compute_in(
            &r.rank.trace,
            Report::NvtxSum,
            Some(own),
            RangeRule::StartsInside,
        )
        .expect("nvtx_sum");
        assert_eq!(table, &alone, "rank {}", r.rank.number);
        assert_eq!(
            r.selection.range,
            Some(own),
            "shaded on rank {}",
            r.rank.number
        );
    }
    let joined = view.span.joined();
    assert_eq!(joined.columns[0], "Rank");
    let rows: usize = view.span.tables.iter().map(|(_, t)| t.rows.len()).sum();
    assert_eq!(joined.rows.len(), rows);
    let spread = view.span.spread();
    let forward = spread
        .iter()
        .find(|s| s.name.ends_with("forward"))
        .expect("forward");
    assert_eq!(forward.max_rank, 2, "{forward:?}");
    assert!(forward.max > 3.0 * forward.median, "{forward:?}");
    h.run_steps(2);
}

/// Aligned on a shared event (the end of the 6th `backward`), every rank's instance ends at one
/// time of the job clock; a nudge moves one rank by hand; back on the session starts, the
/// offsets are the reports' own again. The window says which alignment is in use.
#[test]
fn ranks_align_on_a_shared_event_and_can_be_nudged() {
    use sightline::analysis::compare::nvtx_ranges_named;
    let mut h = job_harness("straggler", (1600.0, 1000.0));
    let view = h.state_mut().job_view_mut().expect("job");
    let session: Vec<i64> = view.ranks.iter().map(|r| r.rank.offset_ns).collect();
    view.align(Some(("backward", 6)));
    assert_eq!(view.align_error, None);
    assert_eq!(view.alignment, Alignment::SharedEvent);
    let ends: Vec<i64> = (view.ranks.iter())
        .map(|r| {
            let id = nvtx_ranges_named(&r.rank.trace, "backward")[5];
            r.rank
                .to_job(r.rank.trace.nvtx.spans.end(id.index as usize))
        })
        .collect();
    assert!(ends.iter().all(|&e| e == ends[0]), "{ends:?}");
    // One host: the session starts were already within a millisecond of the event.
    for (r, s) in view.ranks.iter().zip(&session) {
        assert!(
            (r.rank.offset_ns - s).abs() < 1_000_000,
            "rank {}",
            r.rank.number
        );
    }
    let before = view.ranks[1].rank.offset_ns;
    view.nudge(1, 2_000_000);
    assert_eq!(view.ranks[1].rank.offset_ns, before + 2_000_000);
    view.align(Some(("no such range", 1)));
    assert!(
        view.align_error
            .as_deref()
            .is_some_and(|e| e.contains("no such range"))
    );
    view.align(None);
    assert_eq!(view.alignment, Alignment::SessionStart);
    let back: Vec<i64> = view.ranks.iter().map(|r| r.rank.offset_ns).collect();
    assert_eq!(back, session);
    h.run_steps(2);
}

/// The alignment offers a kernel as the shared event (a collective's end is where the ranks of a
/// data-parallel job meet): chosen in the window, the ranks' Nth kernel of that name ends at
/// one time on the job clock, and the window says so.
#[test]
fn ranks_align_on_the_nth_kernel_of_a_name() {
    use egui_kittest::kittest::Queryable;
    let mut h = job_harness("straggler", (1600.0, 1000.0));
    h.get_by_label("Alignment").click();
    h.run_steps(2);
    h.get_by_label("kernel").click();
    h.run_steps(2);
    let view = h.state_mut().job_view_mut().expect("job");
    assert!(view.align_on_kernel, "the kernel choice took");
    // gloo's job has no NCCL kernel to offer: the box stays empty for the user to fill.
    assert_eq!(view.align_on.0, "");
    // A kernel every rank runs every step (PyTorch's elementwise kernel).
    let name = "vectorized_elementwise_kernel";
    view.align_on = (name.to_string(), 12);
    h.run_steps(1);
    h.get_by_label("Align").click();
    h.run_steps(2);
    let view = h.state_mut().job_view_mut().expect("job");
    assert_eq!(view.align_error, None);
    assert_eq!(view.alignment, Alignment::SharedKernel);
    let ends: Vec<i64> = (view.ranks.iter())
        .map(|r| {
            let t = &r.rank.trace;
            let mut kernels: Vec<(i64, i64)> = (0..t.kernels.spans.len())
                .filter(|&i| t.strings.get(t.kernels.spans.name[i]).contains(name))
                .filter_map(|i| t.kernels.spans.get(i))
                .collect();
            kernels.sort_unstable();
            r.rank.to_job(kernels[11].1)
        })
        .collect();
    assert!(ends.iter().all(|&e| e == ends[0]), "{ends:?}");
    h.run_steps(1);
    h.get_by_label_contains("aligned on a shared kernel");
}

/// The ranks panel answers from the ranks' NVTX ranges, read before any rank's events (issue
/// 42: "64 ranks: the ranks panel answers within 1 s", which waiting for every rank's events
/// missed): the iterations, the slow rank of each and the straggler are there while no rank is
/// drawn yet, drawn in the window, and the same once the whole job is in.
#[test]
fn the_ranks_panel_answers_before_the_ranks_events_are_read() {
    for (job, straggler) in [("straggler", Some((2, "forward"))), ("balanced", None)] {
        let mut app = SightlineApp::default();
        app.open(job_dir(job));
        let view = app.job_view_mut().expect("a job tab");
        view.wait_for_analysis();
        assert!(
            view.ranks.is_empty() && view.is_loading(),
            "{job}: answered only after {} ranks' events were read",
            view.ranks.len()
        );
        assert!(view.analysis_early);
        let early = view.analysis.clone().expect("an early answer");
        let named = |a: &sightline::analysis::ranks::JobAnalysis| {
            (a.straggler.as_ref().ok()).map(|s| {
                (
                    s.rank,
                    s.excess_phase.clone(),
                    s.iterations().collect::<Vec<_>>(),
                )
            })
        };
        assert_eq!(
            named(&early).as_ref().map(|(r, p, _)| (*r, p.as_str())),
            straggler,
            "{job}"
        );
        // Every rank's row of the heatmap, drawn while the events are read.
        let mut h = Harness::builder()
            .with_size(vec2(1600.0, 1000.0))
            .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
        h.step();
        let view = h.state().job_view().expect("job");
        let rows: std::collections::BTreeSet<usize> = view.cells.iter().map(|c| c.0).collect();
        assert_eq!(rows.len(), 4, "{job}: the heatmap's rows while loading");
        let common = early.iterations.common.len();
        assert!(view.cells.len() >= 4 * common, "{job}");
        // The whole job's answer: the same iterations, the same straggler.
        let view = h.state_mut().job_view_mut().expect("job");
        view.wait();
        assert!(!view.analysis_early);
        let full = view.analysis.as_ref().expect("the whole job's answer");
        assert_eq!(full.iterations.common, early.iterations.common, "{job}");
        assert_eq!(named(full), named(&early), "{job}");
    }
}
