//! Issue 45, "the first hour, second pass", driven through the window (egui_kittest): exports that
//! follow the tab and never replace a file unasked, notes of a bundled report kept in the user's
//! data folder, every file dialog falling back to Sightline's own browser, the File ▸ Open path
//! box starting afresh, view toggles kept across a restart, Enter again in the search box, the
//! first start's welcome, and a report's own nsys diagnostics among its warnings.

mod common;
use common::{MemStorage, fixture, load, step_until};

use std::path::{Path, PathBuf};
use std::time::Duration;

use eframe::egui::{self, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use sightline::app::SightlineApp;

fn harness(app: SightlineApp) -> Harness<'static, SightlineApp> {
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

/// The app with `reports` opened as a user opens them (read in the background).
fn opened(reports: &[&Path]) -> Harness<'static, SightlineApp> {
    let mut app = SightlineApp::default();
    for r in reports {
        app.open(r.to_path_buf());
        app.wait_for_load();
    }
    harness(app)
}

fn copy_into(dir: &Path, name: &str) -> PathBuf {
    let report = dir.join(name);
    std::fs::copy(fixture(name), &report).expect("copy the report");
    report
}

fn open_file_menu(h: &mut Harness<'static, SightlineApp>) {
    h.get_by_label("File").click();
    h.run_steps(2);
}

fn export_box(h: &Harness<'_, SightlineApp>) -> PathBuf {
    PathBuf::from(h.get_by_label("Export image:").value().expect("a path box"))
}

/// Two reports of one name in two folders: the export path follows the tab shown.
#[test]
fn the_export_path_follows_the_tab() {
    let (a, b) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let first = copy_into(a.path(), "sync_timing.sqlite");
    let second = copy_into(b.path(), "streams.sqlite");
    let mut h = opened(&[&first, &second]);
    h.state_mut().switch_to(0);
    h.run_steps(2);
    open_file_menu(&mut h);
    assert_eq!(export_box(&h), a.path().join("sync_timing-timeline.png"));
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    h.state_mut().switch_to(1);
    h.run_steps(2);
    open_file_menu(&mut h);
    assert_eq!(
        export_box(&h),
        b.path().join("streams-timeline.png"),
        "the second tab's own file, not the first's"
    );
}

/// An image file that exists is replaced only once the user says so.
#[test]
fn an_existing_image_is_not_replaced_without_asking() {
    let dir = tempfile::tempdir().expect("dir");
    let report = copy_into(dir.path(), "sync_timing.sqlite");
    let image = dir.path().join("sync_timing-timeline.png");
    std::fs::write(&image, b"the user's slide").expect("write");
    let mut h = opened(&[&report]);
    open_file_menu(&mut h);
    h.get_by_label("Export").click();
    h.run_steps(3);
    assert!(
        h.query_by_label_contains("already exists").is_some(),
        "the window asks before replacing {}",
        image.display()
    );
    assert!(h.query_by_label("Replace").is_some());
    // Cancel keeps the file, and nothing is exported; the menu stays open for another name.
    h.get_by_label("Cancel").click();
    h.run_steps(3);
    assert_eq!(
        std::fs::read(&image).expect("still there"),
        b"the user's slide"
    );
    assert!(h.query_by_label_contains("already exists").is_none());
    assert!(
        h.query_all_by_label_contains("shown)").next().is_none(),
        "no export"
    );
    // Replace goes ahead with the export.
    h.get_by_label("Export").click();
    h.run_steps(3);
    h.get_by_label("Replace").click();
    h.run_steps(1);
    assert!(
        h.query_all_by_label_contains("shown)").next().is_some(),
        "the export runs (its caption is drawn)"
    );
}

/// Removes a file when dropped (a test that fails must not leave notes in the checkout).
struct RemoveOnDrop(PathBuf);
impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Notes on the bundled lesson report go to the user's data folder, not into `assets/`.
#[test]
fn notes_on_a_bundled_report_are_kept_in_the_users_data_folder() {
    let bundled = sightline::app::bundled_report().expect("the bundled report");
    let beside = sightline::annotations::sidecar_path(&bundled);
    let assets = std::fs::canonicalize(bundled.parent().expect("a folder")).expect("assets");
    let in_assets = RemoveOnDrop(assets.join("sync_timing.sqlite.notes.json"));
    let _ = beside;
    let mut h = opened(&[&bundled]);
    h.state_mut().doc_mut().expect("doc").notes.add_at(1_000);
    h.run_steps(3);
    h.get_by_label("Note 1")
        .type_text("a note on the lesson report");
    h.run_steps(2);
    let notes = &mut h.state_mut().doc_mut().expect("doc").notes;
    notes.save();
    let sidecar = notes.sidecar().expect("notes are on");
    let _written = RemoveOnDrop(sidecar.clone());
    assert!(
        !in_assets.0.exists(),
        "nothing written among the app's files: {}",
        in_assets.0.display()
    );
    let folder = std::fs::canonicalize(sidecar.parent().expect("a folder")).expect("exists");
    assert_ne!(folder, assets);
    assert!(sidecar.is_file(), "{} written", sidecar.display());
    let back = sightline::annotations::load(&bundled).expect("reads back");
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].text, "a note on the lesson report");
    assert!(!notes.has_unsaved());
}

/// File ▸ Attach Nsight Compute results… with no desktop portal (as here) opens the in-app
/// browser, as File ▸ Open does; so does File ▸ Open job….
#[test]
fn every_file_dialog_falls_back_to_the_browser() {
    for item in ["Attach Nsight Compute results…", "Open job…"] {
        let mut h = opened(&[&fixture("sync_timing.sqlite")]);
        open_file_menu(&mut h);
        h.get_by_label(item).click();
        let fell_back = step_until(&mut h, Duration::from_secs(10), |h| h.state().browser.open);
        assert!(fell_back, "{item}: the browser opens");
        h.run_steps(2);
        assert!(h.state().error.is_none(), "{item}: {:?}", h.state().error);
    }
}

/// The browser opened for an ncu file lists CSV files, and the one chosen is attached.
#[test]
fn the_browser_attaches_an_ncu_file() {
    let mut h = opened(&[&fixture("sync_timing.sqlite")]);
    open_file_menu(&mut h);
    h.get_by_label("Attach Nsight Compute results…").click();
    assert!(step_until(&mut h, Duration::from_secs(10), |h| h
        .state()
        .browser
        .open));
    h.run_steps(2);
    // In the report's folder, CSV files listed and reports not.
    assert!(
        h.query_by_label("streams.sqlite").is_none(),
        "only CSV files"
    );
    // (Among many folders, maybe out of the list's view: clicked as a screen reader would.)
    h.get_by_label("ncu/").click_accesskit();
    h.run_steps(2);
    h.get_by_label("sync_timing.ncu.csv").click_accesskit();
    let attached = step_until(&mut h, Duration::from_secs(20), |h| {
        h.state().doc().is_some_and(|d| {
            d.metric_sets
                .message
                .as_deref()
                .is_some_and(|m| m.contains("joined"))
        })
    });
    assert!(
        attached,
        "{:?}",
        h.state().doc().map(|d| &d.metric_sets.message)
    );
}

/// File ▸ Open path starts empty after opening what was typed: the next path typed is the
/// whole path, not the last one with more letters after it.
#[test]
fn the_open_path_box_starts_afresh() {
    let mut h = opened(&[&fixture("sync_timing.sqlite")]);
    for name in ["streams.sqlite", "timing_cases.sqlite"] {
        open_file_menu(&mut h);
        h.get_by_label("Open path:").click();
        h.run_steps(2);
        let path = fixture(name).display().to_string();
        h.get_by_label("Open path:").type_text(&path);
        h.run_steps(1);
        assert_eq!(
            h.get_by_label("Open path:").value().as_deref(),
            Some(path.as_str())
        );
        h.key_press(egui::Key::Enter);
        h.run_steps(2);
        h.state_mut().wait_for_load();
        h.run_steps(2);
        assert!(h.state().error.is_none(), "{:?}", h.state().error);
        assert!(h.state().doc().expect("doc").path.ends_with(name));
    }
    // Text left in the box (the menu closed without Enter) is selected when the box is clicked
    // again: typing replaces it.
    open_file_menu(&mut h);
    h.get_by_label("Open path:").click();
    h.run_steps(2);
    h.get_by_label("Open path:").type_text("/left/over.sqlite");
    h.run_steps(1);
    h.get_by_label("File").click();
    h.run_steps(2);
    assert!(h.query_by_label("Open path:").is_none(), "the menu closed");
    open_file_menu(&mut h);
    h.get_by_label("Open path:").click();
    h.run_steps(2);
    h.get_by_label("Open path:").type_text("/typed/anew.sqlite");
    h.run_steps(1);
    assert_eq!(
        h.get_by_label("Open path:").value().as_deref(),
        Some("/typed/anew.sqlite")
    );
}

/// NVTX on GPU, GPU idle — why and the metrics strip come back after a restart.
#[test]
fn view_toggles_survive_a_restart() {
    let report = fixture("torch_metrics_excerpt.sqlite");
    let mut h = opened(&[&report]);
    let has_sets = step_until(&mut h, Duration::from_secs(30), |h| {
        h.state()
            .doc()
            .is_some_and(|d| !d.metric_sets.sets.is_empty() && !d.metric_sets.is_busy())
    });
    assert!(has_sets, "the sampled metrics are in");
    let metric = {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.timeline.view.show_projection = true;
        doc.timeline.view.show_idle_why = true;
        let set = doc.metric_sets.sets[0].clone();
        let m = set.metrics.len() - 1;
        doc.metric_sets.strip = Some((0, m));
        doc.timeline.metrics_strip =
            sightline::app::timeline::metrics_strip::MetricsStrip::new(&doc.trace, &set, m)
                .map(std::sync::Arc::new);
        assert!(doc.timeline.metrics_strip.is_some());
        set.metrics[m].name.clone()
    };
    h.run_steps(2);
    let mut storage = MemStorage::default();
    eframe::App::save(h.state_mut(), &mut storage);

    let mut again = SightlineApp::restore(Some(&storage));
    again.open(report.clone());
    again.wait_for_load();
    let mut h = harness(again);
    let view = &h.state().doc().expect("doc").timeline.view;
    assert!(view.show_projection, "NVTX on GPU");
    assert!(view.show_idle_why, "GPU idle — why");
    let strip = step_until(&mut h, Duration::from_secs(30), |h| {
        h.state()
            .doc()
            .is_some_and(|d| d.timeline.metrics_strip.is_some())
    });
    assert!(strip, "the metrics strip ({metric}) is back");
    let doc = h.state().doc().expect("doc");
    let (s, m) = doc.metric_sets.strip.expect("chosen");
    assert_eq!(doc.metric_sets.sets[s].metrics[m].name, metric);
}

/// Enter in the search box finds; Enter again goes to the next match.
#[test]
fn enter_again_in_the_search_box_goes_to_the_next_match() {
    let mut h = harness(SightlineApp::with_trace(load("sync_timing.sqlite")));
    h.get_by_label("Search").click();
    h.run_steps(2);
    h.get_by_label("Search").type_text("cudaLaunchKernel");
    h.run_steps(1);
    h.key_press(egui::Key::Enter);
    h.run_steps(1);
    h.state_mut().wait_for_search();
    h.run_steps(2);
    let first = h.state().doc().expect("doc").search.current;
    assert_eq!(first, Some(0));
    h.key_press(egui::Key::Enter);
    h.run_steps(1);
    h.state_mut().wait_for_search();
    h.run_steps(2);
    let doc = h.state().doc().expect("doc");
    assert_eq!(doc.search.current, Some(1), "the second match");
    let second = doc.search.matches[1];
    assert_eq!(doc.selection().event, Some(second), "and it is selected");
    assert!(h.query_by_label_contains("2/").is_some());
}

const WELCOME: &str = "Welcome to Sightline";

/// The first start (nothing saved yet) shows a welcome; once dismissed it stays away after a
/// restart. An app made in code (tests, benchmarks) shows none.
#[test]
fn the_first_start_welcomes_once() {
    let h = harness(SightlineApp::default());
    assert!(h.query_by_label_contains(WELCOME).is_none());

    let first = SightlineApp::restore(Some(&MemStorage::default()));
    let mut h = harness(first);
    assert!(h.query_by_label_contains(WELCOME).is_some(), "first start");
    for what in ["Open a report…", "Lessons", "Recent"] {
        assert!(
            h.query_all_by_label_contains(what).next().is_some(),
            "the welcome points to {what}"
        );
    }
    // Quit without dismissing: it comes back.
    let mut storage = MemStorage::default();
    eframe::App::save(h.state_mut(), &mut storage);
    let mut h = harness(SightlineApp::restore(Some(&storage)));
    assert!(h.query_by_label_contains(WELCOME).is_some());
    h.get_by_label("Close the welcome").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains(WELCOME).is_none(), "dismissed");
    eframe::App::save(h.state_mut(), &mut storage);
    let h = harness(SightlineApp::restore(Some(&storage)));
    assert!(h.query_by_label_contains(WELCOME).is_none(), "not again");
}

/// The welcome's recent files open with a click.
#[test]
fn the_welcome_opens_a_recent_report() {
    let mut app = SightlineApp::restore(Some(&MemStorage::default()));
    let report = std::fs::canonicalize(fixture("streams.sqlite")).expect("fixture");
    app.recent = vec![report.clone()];
    let mut h = harness(app);
    h.get_by_label(&report.display().to_string()).click();
    h.run_steps(2);
    h.state_mut().wait_for_load();
    h.run_steps(2);
    assert!(h.query_by_label_contains(WELCOME).is_none());
    assert_eq!(h.state().doc().expect("opened").path, report);
}

/// Whitespace runs as one space (nsys writes tabs in some diagnostics).
fn squeezed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Each distinct diagnostic in `report`'s DIAGNOSTIC_EVENT, as (severity label, text), read with
/// SQL from nsys's own file; and how many rows each stands for.
fn diagnostics_of(report: &Path) -> Vec<(String, String, usize)> {
    let db = rusqlite::Connection::open(report).expect("open");
    let mut q = db
        .prepare(
            "SELECT s.label, d.text, COUNT(*) FROM DIAGNOSTIC_EVENT d \
             JOIN ENUM_DIAGNOSTIC_SEVERITY_LEVEL s ON s.id = d.severity \
             GROUP BY s.label, d.text",
        )
        .expect("the table");
    q.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)? as usize,
        ))
    })
    .expect("rows")
    .map(|r| r.expect("a row"))
    .collect()
}

/// A report's own diagnostics (nsys's DIAGNOSTIC_EVENT) are listed with the warnings, each
/// once, with its severity: a report with no CUDA events (all Info) and one whose diagnostics
/// repeat (torch_work: one message three times).
#[test]
fn the_reports_own_diagnostics_are_among_the_warnings() {
    for name in ["cpu_only/cpu_only.sqlite", "torch_work.sqlite"] {
        let report = fixture(name);
        let expected = diagnostics_of(&report);
        assert!(!expected.is_empty());
        let mut h = harness(SightlineApp::with_trace(load(name)));
        // The menu bar's button ("N warnings", "N nsys messages"), not any text that holds
        // the word (a finding of severity warning may be listed first once the engine is done).
        let is_badge = |label: &str| {
            label.split_once(' ').is_some_and(|(n, rest)| {
                n.parse::<usize>().is_ok()
                    && ["warning", "warnings", "nsys messages"].contains(&rest)
            })
        };
        // Background work (findings, idle attribution, CPU profile) finishing may lay the
        // window out again and close the menu: click until the list shows (a user clicks
        // again too), within a bound.
        let first = squeezed(&expected[0].1);
        let shows = |h: &Harness<'_, SightlineApp>| h.query_by_label_contains(&first).is_some();
        let mut open = false;
        for _ in 0..10 {
            let badge = h
                .query_all_by_label_contains("warning")
                .chain(h.query_all_by_label_contains("nsys messages"))
                .find(|n| n.accesskit_node().label().is_some_and(|l| is_badge(&l)))
                .unwrap_or_else(|| panic!("{name}: a warnings button"));
            badge.click();
            h.run_steps(2);
            if step_until(&mut h, std::time::Duration::from_millis(500), shows) {
                open = true;
                break;
            }
        }
        assert!(open, "{name}: the warnings list opens");
        for (severity, text, count) in &expected {
            let text = squeezed(text);
            let shown: Vec<String> = h
                .query_all_by_label_contains(&text)
                .filter_map(|n| {
                    let node = n.accesskit_node();
                    node.label().or_else(|| node.value())
                })
                .collect();
            assert_eq!(shown.len(), 1, "{name}: {text} once: {shown:?}");
            assert!(
                shown[0].starts_with(&format!("{severity}:")),
                "{name}: with its severity: {}",
                shown[0]
            );
            if *count > 1 {
                assert!(shown[0].contains(&format!("×{count}")), "{}", shown[0]);
            }
        }
    }
}
