//! Notes driven through the window headlessly (egui_kittest + AccessKit): a
//! note added from the timeline's context menu and with N shows in the panel,
//! on the timeline and in the sidecar, and comes back when the report is
//! opened again. Text typed just before a quit, or before the window stops
//! being drawn (covered, minimised), still reaches the sidecar. Plus the
//! image export's crop and PNG encoding.

mod common;
use common::{Closes, fixture, press_close_button};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, ColorImage, Rect, pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::annotations::{self, Pin, sidecar_path};
use sightline::app::SightlineApp;
use sightline::app::panels::annotations_panel::OVERLAY_SOURCE;
use sightline::app::state::events::{EventRef, Table};
use sightline::app::timeline::Anchor;
use sightline::app::widgets::export_image::{crop, default_path, encode_png, write_png};

/// The app with `report` opened as a user opens it (read in the background).
fn open(report: &Path) -> Harness<'static, SightlineApp> {
    open_watched(report).0
}

/// [`open`], and what the window asks of its own window (close, refuse a close).
fn open_watched(report: &Path) -> (Harness<'static, SightlineApp>, Closes) {
    let mut app = SightlineApp::default();
    app.open(report.to_path_buf());
    app.wait_for_load();
    let closes = Closes::default();
    let seen = closes.clone();
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(
            move |ui, app: &mut SightlineApp| {
                app.ui(ui);
                seen.record(ui.ctx());
            },
            app,
        );
    h.run_steps(2);
    // The findings badge changes width when they arrive, moving the notes
    // badge beside it: let them arrive before anything is clicked.
    h.state_mut()
        .doc_mut()
        .expect("the report is open")
        .wait_for_findings();
    h.run_steps(3);
    (h, closes)
}

fn copy_of(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join(name);
    std::fs::copy(fixture(name), &report).expect("copy the report");
    (dir, report)
}

fn text_of(h: &Harness<'_, SightlineApp>, label: &str) -> Option<String> {
    h.get_by_label(label).value()
}

#[test]
fn notes_added_in_the_window_are_saved_and_come_back() {
    let (_dir, report) = copy_of("sync_timing.sqlite");
    let mut h = open(&report);
    assert!(
        h.query_by_label("Note 1").is_none(),
        "no notes, panel closed"
    );

    // Right-click the rows → Add note here → type.
    let view = {
        let d = h.state().doc().expect("doc");
        (d.timeline.view.start, d.timeline.view.end)
    };
    h.get_by_label_contains("Timeline,").click_secondary();
    h.run_steps(2);
    h.get_by_label("Add note here").click();
    h.run_steps(3);
    let first = "warm-up ends here";
    h.get_by_label("Note 1").type_text(first);
    h.run_steps(2);
    // Escape gives the keyboard back: the text is written then.
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    let saved = annotations::load(&report).expect("the sidecar reads");
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].text, first);
    let Pin::Time(t) = saved[0].pin else {
        panic!("a time note: {:?}", saved[0].pin)
    };
    assert!(
        (view.0..=view.1).contains(&(t as f64)),
        "at the time right-clicked: {t} in {view:?}"
    );

    // On the timeline: a flag labelled with the text.
    let flags: Vec<_> = h
        .state()
        .doc()
        .expect("doc")
        .timeline
        .overlays_of(OVERLAY_SOURCE)
        .filter(|m| m.anchor == Anchor::Flag)
        .map(|m| (m.start, m.label.clone()))
        .collect();
    assert_eq!(flags, vec![(t, first.to_string())]);

    // N with a kernel selected: a note on that kernel, outlined. (N toggles the notes: with
    // the panel open, the first N closes it, the second adds the note.)
    let kernel = {
        let d = h.state_mut().doc_mut().expect("doc");
        let ev = EventRef::new(Table::Kernel, (d.trace.kernels.spans.len() / 2) as u32);
        d.select_event(Some(ev));
        ev
    };
    h.run_steps(2);
    assert!(h.state().doc().expect("doc").notes.open);
    h.key_press(egui::Key::N);
    h.run_steps(2);
    assert!(!h.state().doc().expect("doc").notes.open, "N closed them");
    h.key_press(egui::Key::N);
    h.run_steps(3);
    let kernel_start =
        h.state().doc().expect("doc").trace.kernels.spans.start[kernel.index as usize];
    // The notes are in time order: find the kernel note's number.
    let label = if kernel_start < t { "Note 1" } else { "Note 2" };
    let second = "the slow kernel";
    h.get_by_label(label).type_text(second);
    h.run_steps(2);
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    // A colour, picked from the palette.
    let number = label.trim_start_matches("Note ");
    h.get_by_label(&format!("Note {number} blue")).click();
    h.run_steps(2);
    let saved = annotations::load(&report).expect("the sidecar reads");
    assert_eq!(saved.len(), 2);
    let on_kernel = saved
        .iter()
        .find(|n| n.text == second)
        .expect("the kernel note is saved");
    assert_eq!(on_kernel.color, [59, 130, 246]);
    match &on_kernel.pin {
        Pin::Event(key) => assert_eq!(key.start, kernel_start),
        other => panic!("pinned to the kernel: {other:?}"),
    }
    assert!(
        h.state()
            .doc()
            .expect("doc")
            .timeline
            .overlays_of(OVERLAY_SOURCE)
            .any(|m| m.anchor == Anchor::Outline(kernel)),
        "the kernel is outlined"
    );
    drop(h);

    // Reopened: the notes are back, the kernel note on the same kernel.
    let mut h = open(&report);
    {
        let notes = &h.state().doc().expect("doc").notes;
        assert_eq!(notes.notes.len(), 2);
        let e = notes
            .notes
            .iter()
            .find(|e| e.note.text == second)
            .expect("kernel note back");
        assert_eq!(e.event, Some(kernel));
    }
    h.get_by_label("2 notes").click();
    h.run_steps(3);
    assert_eq!(
        text_of(&h, "Note 1").as_deref(),
        Some(if kernel_start < t { second } else { first })
    );

    // The time link zooms there (from the whole report: the findings may
    // have zoomed the view already).
    h.key_press(egui::Key::Home);
    h.run_steps(2);
    let before = h.state().doc().expect("doc").timeline.view.span();
    let when = sightline::app::widgets::format::duration(t);
    h.get_by_label(&when).click();
    h.run_steps(2);
    let v = &h.state().doc().expect("doc").timeline.view;
    assert!(v.start <= t as f64 && t as f64 <= v.end, "shows the note");
    assert!(v.span() < before, "zoomed in from the whole report");

    // Delete the time note in the panel: the sidecar follows.
    let time_label = if kernel_start < t {
        "Delete note 2"
    } else {
        "Delete note 1"
    };
    h.get_by_label(time_label).click();
    h.run_steps(2);
    let saved = annotations::load(&report).expect("the sidecar reads");
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].text, second);
}

#[test]
fn a_broken_sidecar_is_shown_and_the_report_still_opens() {
    let (_dir, report) = copy_of("sync_timing.sqlite");
    std::fs::write(sidecar_path(&report), "not json at all").expect("write");
    let h = open(&report);
    let doc = h.state().doc().expect("the report opened");
    assert!(!doc.trace.kernels.spans.is_empty());
    assert!(doc.notes.open, "the panel opens to say so");
    // Labels (a wrapped label's lines are text runs of it, not more errors).
    let shown = h
        .query_all_by(|n| {
            n.role() == egui::accesskit::Role::Label
                && n.value().is_some_and(|v| v.contains("is not valid"))
        })
        .count();
    assert_eq!(shown, 1, "the error is on screen");
    assert!(
        h.query_by_label("Notes (not saved)").is_some(),
        "the badge says the notes are not saved"
    );
}

/// A time note added at `at` and `text` typed into its box, which keeps the
/// keyboard (nothing takes it away: no save on losing it).
fn type_note(h: &mut Harness<'static, SightlineApp>, at: i64, text: &str) {
    h.state_mut().doc_mut().expect("doc").notes.add_at(at);
    h.run_steps(3);
    h.get_by_label("Note 1").type_text(text);
    h.run_steps(2);
}

/// The texts of the notes in `report`'s sidecar.
fn saved_texts(report: &Path) -> Vec<String> {
    let notes = annotations::load(report).expect("the sidecar reads");
    notes.into_iter().map(|n| n.text).collect()
}

/// Text typed just before Ctrl+Q, or the window's close button, reaches the
/// sidecar: the quit writes it, not the delayed save (which never comes
/// here), and the window then closes (issue 44 (b)).
#[test]
fn text_typed_just_before_quitting_is_saved() {
    for how in ["Ctrl+Q", "the close button"] {
        let (_dir, report) = copy_of("sync_timing.sqlite");
        let (mut h, closes) = open_watched(&report);
        let notes = &mut h.state_mut().doc_mut().expect("doc").notes;
        notes.set_text_save_delay(Duration::from_secs(3600));
        let text = format!("typed, then {how}");
        type_note(&mut h, 1_000, &text);
        assert_eq!(saved_texts(&report), [""], "not written before the quit");
        match how {
            "Ctrl+Q" => h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q),
            _ => press_close_button(&mut h),
        }
        h.run_steps(1);
        assert_eq!(saved_texts(&report), [text], "{how}");
        assert!(!h.state().doc().expect("doc").notes.has_unsaved());
        match how {
            "Ctrl+Q" => assert!(closes.closed(), "Ctrl+Q closes the window"),
            _ => assert!(!closes.cancelled(), "the close goes ahead"),
        }
    }
}

/// Text typed, then no frame drawn (the window covered or minimised: egui
/// runs no frame, so no timer of the frame fires): the sidecar has it after
/// the delay all the same (issue 44 (c)).
#[test]
fn text_typed_is_saved_with_no_frame_drawn() {
    let (_dir, report) = copy_of("sync_timing.sqlite");
    let mut h = open(&report);
    let text = "typed, then the window was covered";
    type_note(&mut h, 1_000, text);
    let typed = Instant::now();
    // No h.run or h.step from here: time passes, no frame runs.
    let delay =
        Duration::from_secs_f64(sightline::app::panels::annotations_panel::TEXT_SAVE_DELAY_S);
    std::thread::sleep(delay + Duration::from_millis(200));
    let deadline = typed + delay + Duration::from_secs(10);
    while saved_texts(&report) != [text] && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(saved_texts(&report), [text], "written with no frame drawn");
    // Drawn again: the window agrees that nothing waits to be written.
    h.run_steps(2);
    assert!(!h.state().doc().expect("doc").notes.has_unsaved());
    assert_eq!(saved_texts(&report), [text]);
}

#[test]
fn export_image_defaults_beside_the_report() {
    let (dir, report) = copy_of("sync_timing.sqlite");
    let mut h = open(&report);
    h.get_by_label("File").click();
    h.run_steps(2);
    let path = text_of(&h, "Export image:").expect("a path box");
    assert_eq!(
        PathBuf::from(&path),
        dir.path().join("sync_timing-timeline.png")
    );
    assert_eq!(PathBuf::from(path), default_path(&report));
}

/// The bundled lesson report lives among the app's files: its image goes to
/// a folder of the user's, which takes a file, and so does one of a report
/// in a folder nobody can write (here /proc, read-only even for root).
#[test]
fn export_image_defaults_to_a_users_folder_for_a_bundled_report() {
    let bundled = sightline::app::bundled_report().expect("the bundled report");
    let mut h = open(&bundled);
    h.get_by_label("File").click();
    h.run_steps(2);
    let path = PathBuf::from(text_of(&h, "Export image:").expect("a path box"));
    let assets = std::fs::canonicalize(bundled.parent().expect("a folder")).expect("assets");
    let folder = std::fs::canonicalize(path.parent().expect("a folder")).expect("exists");
    assert_ne!(folder, assets, "{}", path.display());
    assert_eq!(
        path.file_name().and_then(|n| n.to_str()),
        Some("sync_timing-timeline.png")
    );
    let probe = folder.join("sightline-export-test.tmp");
    std::fs::write(&probe, b"x").expect("the default folder takes a file");
    std::fs::remove_file(&probe).expect("removed");

    let unwritable = default_path(Path::new("/proc/report.sqlite"));
    assert_ne!(unwritable.parent(), Some(Path::new("/proc")));
    assert!(unwritable.parent().is_some_and(Path::is_dir));
}

/// File ▸ Export image takes the rows shown, not the empty canvas under
/// them, and while it is taken the timeline carries a caption: the report's
/// name, the span shown and a scale bar.
#[test]
fn export_image_is_cropped_to_the_rows_and_captioned() {
    let (_dir, report) = copy_of("sync_timing.sqlite");
    let mut h = open(&report);
    {
        let doc = h.state().doc().expect("doc");
        let area = doc.export_area.expect("measured");
        let last_row = doc
            .timeline
            .layout
            .iter()
            .map(|(_, r)| r.bottom())
            .fold(f32::MIN, f32::max);
        assert!(
            area.bottom() < doc.timeline.area.bottom() - 50.0,
            "a few rows in a tall window: the image stops at {} (rows end at {last_row}, \
             canvas at {})",
            area.bottom(),
            doc.timeline.area.bottom()
        );
        assert!((area.bottom() - last_row).abs() < 2.0 || area.bottom() >= last_row);
    }
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Export").click();
    h.run_steps(1);
    let (start, end) = {
        let v = &h.state().doc().expect("doc").timeline.view;
        (v.start, v.end)
    };
    let span = sightline::app::widgets::format::duration((end - start).round() as i64);
    assert!(
        h.query_all_by_label_contains(&format!("({span} shown)"))
            .next()
            .is_some(),
        "the caption gives the span ({span})"
    );
    let scale = sightline::app::widgets::export_image::scale_bar(end - start);
    assert!(scale <= (end - start) / 5.0 && scale * 10.0 > (end - start) / 5.0);
    let scale_text = format!(
        "= {}",
        sightline::app::widgets::format::short_duration(scale)
    );
    assert!(
        h.query_by_label(&scale_text).is_some(),
        "and a scale: {scale_text}"
    );
    let doc = h.state().doc().expect("doc");
    let area = doc.export_area.expect("measured");
    let rows_top = doc.timeline.area.top();
    assert!(area.top() < rows_top, "the caption is in the image");
    assert!(
        h.query_all_by_label("sync_timing.sqlite")
            .any(|n| n.rect().top() >= area.top() - 1.0 && n.rect().bottom() <= rows_top + 1.0),
        "the caption names the report"
    );
}

/// A window capture whose every pixel says where it is.
fn gradient(w: usize, h: usize) -> ColorImage {
    let pixels = (0..h)
        .flat_map(|y| (0..w).map(move |x| Color32::from_rgb((x * 5) as u8, (y * 7) as u8, 100)))
        .collect();
    ColorImage::new([w, h], pixels)
}

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).expect("the PNG exists");
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a valid PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn the_timeline_rect_is_cropped_and_written_as_png() {
    let window = gradient(40, 30);
    // Points (5, 4)–(15, 10) at 2 pixels per point: pixels (10, 8)–(30, 20).
    let cropped = crop(
        &window,
        Rect::from_min_max(pos2(5.0, 4.0), pos2(15.0, 10.0)),
        2.0,
    );
    assert_eq!(cropped.size, [20, 12]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("view.png");
    write_png(&path, &cropped).expect("written");
    let (w, h, rgba) = decode(&path);
    assert_eq!((w, h), (20, 12));
    let px = |x: usize, y: usize| &rgba[(y * 20 + x) * 4..(y * 20 + x) * 4 + 4];
    assert_eq!(px(0, 0), [50, 56, 100, 255]);
    assert_eq!(px(19, 11), [145, 133, 100, 255]);
    // Written aside, then renamed: nothing else is left in the folder.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("view.png")]);

    // A rect partly off the window keeps the part on it; wholly off, nothing.
    let edge = crop(
        &window,
        Rect::from_min_max(pos2(30.0, -5.0), pos2(60.0, 5.0)),
        1.0,
    );
    assert_eq!(edge.size, [10, 5]);
    let off = crop(
        &window,
        Rect::from_min_max(pos2(50.0, 50.0), pos2(60.0, 60.0)),
        1.0,
    );
    assert_eq!(off.size, [0, 0]);
    assert!(encode_png(&edge).is_ok());
}

#[test]
fn an_image_that_cannot_be_written_is_an_error() {
    let image = gradient(4, 4);
    let dir = tempfile::tempdir().expect("temp dir");
    let err = write_png(dir.path(), &image).expect_err("a directory is not a file");
    assert!(err.contains("is a directory"), "{err}");
    let err = write_png(&dir.path().join("missing/dir/x.png"), &image).expect_err("no folder");
    assert!(err.contains("cannot write the image"), "{err}");
    if cfg!(target_os = "linux") {
        assert!(write_png(Path::new("/proc/x.png"), &image).is_err());
    }
}
