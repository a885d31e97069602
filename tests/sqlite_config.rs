//! SQLite's count of its memory is off in Sightline's processes (`loader::configure_sqlite`):
//! every allocation of every connection would take one process-wide mutex for it, which the
//! threads reading a job's reports queue on. One test in this binary: the configuration must
//! come before the process's first connection.

use std::sync::atomic::AtomicBool;

#[test]
fn sqlite_counts_no_memory_once_configured() {
    sightline::loader::configure_sqlite();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sync_timing.sqlite");
    let trace = sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false))
        .expect("a report loads");
    assert!(trace.event_count() > 0);
    // The most SQLite ever held (its connections are closed by now): 0 when not counted.
    // SAFETY: a plain query of SQLite's counters (0: without resetting them).
    let counted = unsafe { rusqlite::ffi::sqlite3_memory_highwater(0) };
    assert_eq!(counted, 0, "SQLite counted its memory");
}
