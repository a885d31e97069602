//! A capture whose working file SQLite cannot put in WAL mode (a temporary
//! folder on a file system without shared memory for SQLite's WAL index, as
//! some network file systems are): nothing is shown while it runs — a
//! loading thread would meet the writer's locks — but nothing is lost
//! either, and the report says why it was not shown live.
//!
//! A test binary of its own: it makes SQLite's `unix-dotfile` VFS (real
//! SQLite, which refuses WAL mode as such a file system does) the default
//! for the whole process, which other tests must not see.

mod common;
use common::{fixture, load};

use std::ffi::CStr;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use sightline::capture::session::{CaptureJob, CaptureMessage};

/// Makes `name` SQLite's default VFS for every connection opened after.
fn default_vfs(name: &CStr) {
    // SAFETY: sqlite3_vfs_find returns a VFS SQLite owns for the process's
    // life (or null); registering it again only changes which is default.
    unsafe {
        let vfs = rusqlite::ffi::sqlite3_vfs_find(name.as_ptr());
        assert!(!vfs.is_null(), "SQLite has the {name:?} VFS");
        assert_eq!(
            rusqlite::ffi::sqlite3_vfs_register(vfs, 1),
            rusqlite::ffi::SQLITE_OK
        );
    }
}

#[test]
fn a_replay_that_cannot_be_shown_live_loses_nothing_and_says_why() {
    default_vfs(c"unix-dotfile");
    let probe = tempfile::NamedTempFile::new().expect("temp file");
    let conn = rusqlite::Connection::open(probe.path()).expect("open");
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .expect("pragma");
    assert_eq!(mode, "delete", "this VFS refuses WAL mode");

    let full = load("streams.sqlite");
    let span = (full.info.time_range.1 - full.info.time_range.0) as f64;
    let job = CaptureJob::replay(fixture("streams.sqlite"), span / 2e9);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut snapshots = 0;
    let result = loop {
        assert!(Instant::now() < deadline, "the replay ends");
        match job.messages().recv_timeout(Duration::from_millis(100)) {
            Ok(CaptureMessage::Snapshot(..)) => snapshots += 1,
            Ok(CaptureMessage::Finished(end)) => break end.expect("the replay ended cleanly"),
            _ => {}
        }
    };
    assert_eq!(snapshots, 0, "no snapshot is loaded beside the writer");
    let trace = &result.trace;
    assert_eq!(trace.event_count(), full.event_count(), "every event is in");
    assert_eq!(trace.kernels.spans.len(), full.kernels.spans.len());
    assert_eq!(trace.cuda_api.spans.len(), full.cuda_api.spans.len());
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.starts_with("not shown while it ran") && w.contains("WAL")),
        "the report says why it was not live: {:?}",
        trace.warnings
    );
    // And it saves as a report that loads whole.
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = dir.path().join("replay.sqlite");
    result.live.save(&saved).expect("save");
    let back = sightline::loader::load(&saved, &mut |_| {}, &AtomicBool::new(false))
        .expect("the saved report loads");
    assert_eq!(back.event_count(), full.event_count());
}
