//! A Parquet job folder opened in the window (issue 46, "the window at fleet size"): on the
//! engine's summaries (this crate's `sightline-engine`, found beside the test binary, run as a
//! child process), the ranks panel, heatmap and straggler are those of the same job's `.sqlite`
//! reports opened in the window, without any rank's events; an expand reads the rank from its
//! source report, and a rank whose report is gone says so and stays on its summary.

mod common;

use std::path::{Path, PathBuf};

use eframe::egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::ranks::straggler_message;
use sightline::app::SightlineApp;
use sightline::app::panels::job_view::{JobView, RankEvents, missing_report_line};

/// The window with `path` opened as `sightline PATH` opens it, drawn until its job is in and
/// its heatmap drawn.
fn window_on(path: &Path) -> Harness<'static, SightlineApp> {
    let mut app = SightlineApp::default();
    app.open(path.to_path_buf());
    let view = app.job_view_mut().expect("a job tab");
    view.wait();
    assert_eq!(view.error, None, "{}", path.display());
    let mut h = Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

/// What the ranks panel shows of a job: each rank's number and offset, the heatmap's cells
/// (row, iteration) with each cell's duration, and the straggler's line.
type Shown = (Vec<(u32, i64)>, Vec<(usize, u64, i64)>, String);

fn shown(view: &JobView) -> Shown {
    let ranks = (view.ranks.iter())
        .map(|r| (r.rank.number, r.rank.offset_ns))
        .collect();
    let analysis = view.analysis.as_ref().expect("analysed");
    let cells = (view.cells.iter())
        .map(|&(row, n, _)| {
            let it = analysis
                .iterations
                .ranks
                .iter()
                .find(|r| r.rank == view.ranks[row].rank.number);
            let d = it
                .and_then(|r| r.iterations.get(&n))
                .map_or(-1, |i| i.end - i.start);
            (row, n, d)
        })
        .collect();
    let straggler = match &analysis.straggler {
        Ok(s) => straggler_message(s, analysis.difference.as_ref()),
        Err(why) => why.to_string(),
    };
    (ranks, cells, straggler)
}

#[test]
fn a_parquet_job_opens_on_the_engines_summaries_as_its_reports_do_and_an_expand_reads_one() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, folder) = common::many_ranks(dir.path());
    let reports = paths[0].parent().unwrap().to_path_buf();
    // The ranks panel answers first from the engine's early summaries (the NVTX ranges'), the
    // phases' GPU work and the straggler's difference coming after.
    let mut app = SightlineApp::default();
    app.open(folder.clone());
    let view = app.job_view_mut().unwrap();
    view.wait_for_analysis();
    assert!(view.analysis_early, "the early summaries first");
    assert_eq!(view.ranks.len(), paths.len());
    assert_eq!(view.analysis.as_ref().unwrap().difference, None);
    view.wait();
    assert!(!view.analysis_early);
    assert!(view.analysis.as_ref().unwrap().difference.is_some());

    let sqlite = window_on(&reports);
    let mut parquet = window_on(&folder);
    let (from_reports, from_parquet) = (
        sqlite.state().job_view().unwrap(),
        parquet.state().job_view().unwrap(),
    );
    assert_eq!(from_parquet.parquet.as_deref(), Some(folder.as_path()));
    assert_eq!(from_parquet.unread(), paths.len(), "no rank's events read");
    for r in &from_parquet.ranks {
        assert_eq!(r.events, RankEvents::Summary, "rank {}", r.rank.number);
        assert_eq!(r.rank.trace.kernels.correlation.len(), 0);
        assert!(
            r.iterations.is_some(),
            "rank {}: its iterations lane",
            r.rank.number
        );
        assert!(
            !r.rank.trace.nvtx.category.is_empty(),
            "rank {}: drawn",
            r.rank.number
        );
    }
    let (ranks, cells, straggler) = shown(from_parquet);
    assert_eq!(ranks.len(), common::MANY_RANKS as usize);
    assert!(
        cells.len() >= ranks.len() * 2,
        "a heatmap row per rank: {}",
        cells.len()
    );
    assert!(
        straggler.starts_with(&format!("rank {} reaches", common::MANY_RANKS - 2)),
        "{straggler}"
    );
    assert_eq!(shown(from_reports), (ranks, cells, straggler.clone()));
    // The window says where its ranks come from, and the straggler's line is drawn.
    parquet.get_by_label_contains("From the engine's summaries");
    parquet.get_by_label_contains(&format!("Straggler: {}", &straggler[..40]));

    // Expanding a rank reads its source report whole.
    let view = parquet.state_mut().job_view_mut().unwrap();
    let i = 3;
    view.set_expanded(i, true);
    view.wait_for_rank_reads();
    let whole = sqlite.state().job_view().unwrap();
    assert_eq!(view.ranks[i].events, RankEvents::Read);
    assert_eq!(view.ranks[i].rank.path, paths[i]);
    assert_eq!(
        view.ranks[i].rank.trace.event_count(),
        whole.ranks[i].rank.trace.event_count()
    );
    assert_eq!(view.unread(), paths.len() - 1);
}

#[test]
fn a_rank_whose_report_is_gone_says_where_it_is_not_and_stays_on_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let copies = dir.path().join("job");
    std::fs::create_dir(&copies).unwrap();
    let paths: Vec<PathBuf> = (common::reports("straggler").iter())
        .map(|source| {
            let to = copies.join(source.file_name().unwrap());
            std::fs::copy(source, &to).unwrap();
            to
        })
        .collect();
    let folder = common::export_reports(&paths, &dir.path().join("job.parquet"));
    std::fs::remove_file(&paths[1]).unwrap();
    let mut h = window_on(&folder);
    let view = h.state_mut().job_view_mut().unwrap();
    let i = (view.ranks.iter())
        .position(|r| r.rank.number == 1)
        .unwrap();
    view.set_expanded(i, true);
    view.wait_for_rank_reads();
    let gone = std::path::absolute(&paths[1]).unwrap();
    assert_eq!(view.ranks[i].events, RankEvents::Missing(gone.clone()));
    assert!(view.ranks[i].iterations.is_some(), "still on its summary");
    assert_eq!(view.ranks.len(), 4, "the job stays open");
    h.run_steps(3);
    h.get_by_label_contains(&missing_report_line(&gone));
}

/// A folder of nsys's own Parquet exports (`nsys export --type parquetdir`, a folder per rank)
/// opens in the window as the engine reads it: its ranks and the straggler the engine's
/// `analyze` names, without any rank's events; an expand looks for the rank's `.sqlite` export
/// beside its folder (nsys names both after the `.nsys-rep`) and says where it is not.
#[test]
fn a_folder_of_nsys_parquet_exports_opens_on_the_engines_summaries() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/jobs_parquetdir");
    let mut h = window_on(&folder);
    let view = h.state_mut().job_view_mut().unwrap();
    assert_eq!(view.ranks.len(), 2);
    assert_eq!(view.unread(), 2, "no rank's events read");
    let (_, cells, straggler) = shown(view);
    assert!(cells.len() >= 4, "a heatmap row per rank: {}", cells.len());
    let analyzed = common::engine_analyze(std::slice::from_ref(&folder), &[]);
    let named = straggler.split(':').next().unwrap_or_default().to_string();
    assert!(
        named.starts_with("rank ") && analyzed.contains(&named),
        "{straggler} / {analyzed}"
    );
    view.set_expanded(0, true);
    view.wait_for_rank_reads();
    let expected = std::path::absolute(folder.join("rank0.sqlite")).unwrap();
    assert_eq!(view.ranks[0].events, RankEvents::Missing(expected.clone()));
    h.run_steps(3);
    h.get_by_label_contains(&missing_report_line(&expected));
}
