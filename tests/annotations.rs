//! Notes kept beside a report: the sidecar round trip on a copy of a real
//! report, event notes found again after a fresh load, and what happens with
//! a broken sidecar or a folder that cannot be written.

mod common;
use common::fixture;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sightline::annotations::{
    self, EventKey, FORMAT_VERSION, Note, NotesError, Pin, key_of, resolve, sidecar_path,
};
use sightline::app::panels::annotations_panel::AnnotationsPanel;
use sightline::app::state::events::{EventRef, Table};
use sightline::model::{EventId, EventKind, Trace};

fn load(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// A private copy of fixture `name` in a fresh temporary folder.
fn copy_of(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join(name);
    std::fs::copy(fixture(name), &report).expect("copy the report");
    (dir, report)
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A kernel in the middle of the report (not the first: an index of 0
/// resolving to 0 would prove little).
fn some_kernel(trace: &Trace) -> EventId {
    let n = trace.kernels.spans.len();
    assert!(n > 10, "the fixture has kernels");
    EventId::new(EventKind::Kernel, (n / 2) as u32)
}

#[test]
fn notes_round_trip_through_the_sidecar_and_find_their_events_again() {
    let (dir, report) = copy_of("sync_timing.sqlite");
    let trace = load(&report);
    let kernel = some_kernel(&trace);
    let nvtx = EventId::new(EventKind::Nvtx, (trace.nvtx.spans.len() / 3) as u32);
    let kernel_key = key_of(&trace, kernel).expect("the kernel exists");
    let nvtx_key = key_of(&trace, nvtx).expect("the range exists");
    assert_eq!(
        kernel_key.start,
        trace.kernels.spans.start[kernel.index as usize]
    );
    let (lo, hi) = trace.info.time_range;
    let notes = vec![
        Note {
            text: "warm-up ends here\nsecond line, \"quoted\" ✓".into(),
            color: [250, 204, 21],
            pin: Pin::Time(lo + (hi - lo) / 4),
        },
        Note {
            text: "this kernel is the slow one".into(),
            color: [59, 130, 246],
            pin: Pin::Event(kernel_key.clone()),
        },
        Note {
            text: "range".into(),
            color: [239, 68, 68],
            pin: Pin::Event(nvtx_key.clone()),
        },
    ];
    let written = annotations::save(&report, &notes).expect("saved");
    assert_eq!(written, sidecar_path(&report));
    assert_eq!(
        written.file_name().and_then(|n| n.to_str()),
        Some("sync_timing.sqlite.notes.json")
    );
    // Only the report and its sidecar: the temporary was renamed away.
    assert_eq!(
        files_in(dir.path()),
        vec!["sync_timing.sqlite", "sync_timing.sqlite.notes.json"]
    );
    let text = std::fs::read_to_string(&written).expect("readable");
    assert!(
        text.contains(&format!("\"sightline_notes\": {FORMAT_VERSION}")),
        "{text}"
    );
    assert!(text.contains("\"kind\": \"kernel\""), "{text}");

    // The report is untouched by all this.
    assert_eq!(
        std::fs::read(&report).expect("report"),
        std::fs::read(fixture("sync_timing.sqlite")).expect("fixture")
    );

    // Reopened: a fresh load of the report and of its notes.
    let again = load(&report);
    let back = annotations::load(&report).expect("reads back");
    assert_eq!(back, notes);
    let keys: Vec<&EventKey> = back
        .iter()
        .filter_map(|n| match &n.pin {
            Pin::Event(k) => Some(k),
            Pin::Time(_) => None,
        })
        .collect();
    assert_eq!(resolve(&again, &keys), vec![Some(kernel), Some(nvtx)]);
    assert_eq!(key_of(&again, kernel).as_ref(), Some(&kernel_key));

    // The panel, as a window opening the report does it.
    let panel = AnnotationsPanel::load(&report, &again);
    assert!(panel.error.is_none(), "{:?}", panel.error);
    assert_eq!(panel.notes.len(), 3);
    let times: Vec<i64> = panel.notes.iter().map(|e| e.note.time()).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "in time order: {times:?}"
    );
    let on_kernel = panel
        .notes
        .iter()
        .find(|e| e.note.text == "this kernel is the slow one")
        .expect("the kernel note");
    assert_eq!(
        on_kernel.event,
        Some(EventRef::new(Table::Kernel, kernel.index))
    );
    assert!(!on_kernel.is_orphan());
}

#[test]
fn an_event_note_on_another_report_stays_as_a_time_note() {
    let (_dir, report) = copy_of("sync_timing.sqlite");
    let trace = load(&report);
    let key = key_of(&trace, some_kernel(&trace)).expect("a kernel");
    // Same name, but a start no kernel has: as if the report was re-captured.
    let moved = EventKey {
        start: key.start + 1,
        ..key.clone()
    };
    let notes = vec![Note {
        text: "gone".into(),
        color: [34, 197, 94],
        pin: Pin::Event(moved.clone()),
    }];
    annotations::save(&report, &notes).expect("saved");
    let panel = AnnotationsPanel::load(&report, &trace);
    assert_eq!(panel.notes.len(), 1);
    let e = &panel.notes[0];
    assert!(e.is_orphan(), "not found, and says so");
    assert_eq!(e.note.time(), moved.start, "kept at its time");
    // Nothing in another report matches a kernel of this one either.
    let other = load(&fixture("streams.sqlite"));
    assert_eq!(resolve(&other, &[&key]), vec![None]);
}

#[test]
fn a_malformed_sidecar_is_an_error_and_the_report_still_opens() {
    let (dir, report) = copy_of("sync_timing.sqlite");
    let sidecar = sidecar_path(&report);
    let broken = "{\"sightline_notes\": 1, \"notes\": [{\"text\": \"half";
    std::fs::write(&sidecar, broken).expect("write");
    match annotations::load(&report) {
        Err(e @ NotesError::Malformed { .. }) => {
            let message = e.to_string();
            assert!(
                message.contains("sync_timing.sqlite.notes.json"),
                "{message}"
            );
            assert!(message.contains("line 1"), "says where: {message}");
        }
        other => panic!("expected a malformed-file error, got {other:?}"),
    }
    // The report loads regardless, and the panel says what happened.
    let trace = load(&report);
    let mut panel = AnnotationsPanel::load(&report, &trace);
    assert!(panel.notes.is_empty());
    assert!(panel.open, "the panel opens to show the error");
    let error = panel.error.clone().expect("an error is shown");
    assert!(error.contains("not valid"), "{error}");
    // The broken file is never overwritten by the next save: it is kept aside.
    panel.add_at(trace.info.time_range.0 + 1_000);
    panel.set_text(0, "fresh start");
    assert!(panel.error.is_none(), "{:?}", panel.error);
    let kept = dir.path().join("sync_timing.sqlite.notes.json.bad");
    assert_eq!(std::fs::read_to_string(&kept).expect("kept"), broken);
    assert_eq!(
        annotations::load(&report).expect("valid now")[0].text,
        "fresh start"
    );

    // A newer format is refused by name, not misread.
    std::fs::write(&sidecar, "{\"sightline_notes\": 99, \"notes\": {}}").expect("write");
    assert!(matches!(
        annotations::load(&report),
        Err(NotesError::Newer { version: 99, .. })
    ));
}

#[test]
fn notes_of_a_folder_that_cannot_be_written_go_to_the_data_folder_or_say_why() {
    let note = Note {
        text: "x".into(),
        color: [1, 2, 3],
        pin: Pin::Time(1),
    };
    // /proc takes no new files, whoever asks (root included): the notes of a
    // report there are kept in the user's data folder instead (issue 45).
    if cfg!(target_os = "linux") {
        let report = Path::new("/proc/report.sqlite");
        let sidecar = sidecar_path(report);
        assert!(!sidecar.starts_with("/proc"), "{}", sidecar.display());
        let written = annotations::save(report, std::slice::from_ref(&note))
            .expect("saved in the user's data folder");
        assert_eq!(written, sidecar);
        assert_eq!(
            annotations::load(report).expect("reads back"),
            std::slice::from_ref(&note)
        );
        annotations::save(report, &[]).expect("no notes: the sidecar is removed");
        assert!(!sidecar.exists());
    }

    // A read-only folder (permissions do not bind root: checked only when
    // they bind this process): the same.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let (dir, report) = copy_of("sync_timing.sqlite");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555))
            .expect("chmod");
        let probe = dir.path().join("probe");
        if std::fs::write(&probe, b"").is_err() {
            let written = annotations::save(&report, std::slice::from_ref(&note))
                .expect("saved in the user's data folder");
            assert!(!written.starts_with(dir.path()));
            annotations::save(&report, &[]).expect("removed");
        } else {
            let _ = std::fs::remove_file(&probe);
        }
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod back");
    }

    // Through the panel: the report's folder disappears after it was opened.
    let (dir, report) = copy_of("sync_timing.sqlite");
    let trace = load(&report);
    let mut panel = AnnotationsPanel::load(&report, &trace);
    std::fs::remove_dir_all(dir.path()).expect("remove the folder");
    panel.add_at(trace.info.time_range.0);
    let error = panel.error.clone().expect("the failed save is shown");
    assert!(error.contains("cannot save the notes"), "{error}");
    assert!(error.contains("stay in this window"), "{error}");
    assert_eq!(panel.notes.len(), 1, "the note is kept in the window");
}

#[test]
fn deleting_the_last_note_removes_the_sidecar() {
    let (dir, report) = copy_of("sync_timing.sqlite");
    let trace = load(&report);
    let mut panel = AnnotationsPanel::load(&report, &trace);
    panel.add_on(&trace, EventRef::from(some_kernel(&trace)));
    assert!(sidecar_path(&report).is_file());
    panel.delete(0);
    assert!(panel.error.is_none(), "{:?}", panel.error);
    assert_eq!(files_in(dir.path()), vec!["sync_timing.sqlite"]);
}

/// Finding one key by a search of its kind's tracks gives what reading every
/// row gives, for events of every kind of two real reports (the first of
/// alike events, the key's own event otherwise).
#[test]
fn finding_one_key_agrees_with_reading_every_row() {
    use sightline::annotations::find;
    for report in ["streams.sqlite", "sync_timing.sqlite"] {
        let trace = common::load(report);
        let kinds = [
            (EventKind::Api, trace.cuda_api.spans.len()),
            (EventKind::Osrt, trace.osrt.spans.len()),
            (EventKind::Nvtx, trace.nvtx.spans.len()),
            (EventKind::Kernel, trace.kernels.spans.len()),
            (EventKind::Memcpy, trace.memcpys.spans.len()),
            (EventKind::Memset, trace.memsets.spans.len()),
            (EventKind::Sync, trace.syncs.spans.len()),
        ];
        let mut checked = 0;
        for (kind, n) in kinds {
            for i in (0..n).step_by((n / 200).max(1)).chain(n.checked_sub(1)) {
                let key = key_of(&trace, EventId::new(kind, i as u32)).expect("a key");
                let by_rows = resolve(&trace, &[&key]).into_iter().next().flatten();
                assert_eq!(find(&trace, &key), by_rows, "{report}: {key:?}");
                assert!(by_rows.is_some());
                checked += 1;
            }
        }
        assert!(checked > 100, "{report}: {checked} keys");
        // A key the report does not hold is not found.
        let mut gone = key_of(&trace, EventId::new(EventKind::Kernel, 0)).expect("a kernel");
        gone.start -= 1;
        assert_eq!(find(&trace, &gone), None);
    }
}
