//! Reading the state SQLite has committed, and only that.
//!
//! Reports are opened `immutable` (no locks, no journal, no WAL looked at):
//! the fastest way to read a finished export, and one that never writes
//! beside the user's file. But immutable also means SQLite trusts the file as
//! it lies on disk, which is wrong in three cases this module handles:
//!
//! - a `-journal` is there: a writer died mid-transaction (a hot journal), or
//!   is writing now. The file holds pages of a state never committed.
//! - a `-wal` is there with frames: committed transactions live in it, not
//!   yet in the file.
//! - the file changes while it is read (a writer commits in between): the
//!   rows read come from two states.
//!
//! For the first two the report and its journal or WAL are copied into a
//! private directory and opened there as SQLite normally opens a database,
//! which rolls the journal back or applies the WAL's committed frames; the
//! copy is then read as usual. The user's files are never opened for writing.
//! For the third, [`Stamp`]s taken before and after a load differ and the
//! load is done again (see `load_timed`).
//!
//! A finished export pays three `stat`s and a 100-byte read per stamp.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// What the report and its companions look like on disk at one moment: any
/// commit changes it (the file's size or time, the change counter in its
/// header, or the journal or WAL beside it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    file: Option<(u64, Option<SystemTime>)>,
    change_counter: Option<[u8; 4]>,
    journal: Option<(u64, Option<SystemTime>)>,
    wal: Option<(u64, Option<SystemTime>)>,
}

impl Stamp {
    /// The stamp as words, to keep beside what was read ([`crate::model::ReportInfo::read_as`]).
    pub fn words(&self) -> String {
        format!("{self:?}")
    }

    pub fn of(path: &Path) -> Stamp {
        let path = &real_path(path);
        let meta = |p: &Path| {
            std::fs::metadata(p)
                .ok()
                .map(|m| (m.len(), m.modified().ok()))
        };
        Stamp {
            file: meta(path),
            change_counter: change_counter(path),
            journal: meta(&companion(path, "-journal")),
            wal: meta(&companion(path, "-wal")),
        }
    }
}

/// The header's file change counter (bytes 24..28), bumped by every commit
/// in rollback mode.
fn change_counter(path: &Path) -> Option<[u8; 4]> {
    // Only a regular file is opened: a FIFO would block here, before the
    // loader's own check names it.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut header = [0u8; 28];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .ok()?;
    Some([header[24], header[25], header[26], header[27]])
}

/// The file `path` names, links followed: SQLite keeps a database's journal
/// and WAL beside that file, not beside a link to it. `path` itself where it
/// cannot be resolved (the open that follows says why).
fn real_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `REPORT-journal`, `REPORT-wal`.
pub fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Where a load reads from: the report itself, or a private copy with its
/// journal rolled back or its WAL applied (deleted when dropped).
pub struct Source {
    pub read_from: PathBuf,
    /// What the copy changed, said as a loader warning.
    pub note: Option<String>,
    copy_dir: Option<PathBuf>,
}

impl Drop for Source {
    fn drop(&mut self) {
        if let Some(dir) = &self.copy_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Source {
    /// The report as it should be read: itself when no journal or WAL with
    /// content lies beside it (the usual case, no copy), else a private copy
    /// brought to its last committed state.
    pub fn prepare(path: &Path, always_copy: bool) -> Result<Source, String> {
        let non_empty = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() > 0);
        let linked = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let path = &real_path(path);
        // Through a link the companions read are the target's: named, so
        // that the user sees which files the numbers come from.
        let read = if linked {
            format!(" (the report is a link to {})", path.display())
        } else {
            String::new()
        };
        let journal = companion(path, "-journal");
        let wal = companion(path, "-wal");
        let note = if non_empty(&journal) {
            Some(format!(
                "{}: a writer did not finish (or is still writing); shown is the last \
                 committed state, with the journal rolled back in a private copy (the report \
                 is not touched){read}",
                journal.display()
            ))
        } else if non_empty(&wal) {
            Some(format!(
                "{}: its committed transactions are included (applied in a private copy; the \
                 report is not touched){read}",
                wal.display()
            ))
        } else {
            None
        };
        if note.is_none() && !always_copy {
            return Ok(Source {
                read_from: path.to_path_buf(),
                note: None,
                copy_dir: None,
            });
        }
        // Forced by a change during a load: say so, the numbers are of one
        // moment and a reload shows later ones.
        let note = note.or_else(|| {
            Some(
                "the report changed while it was read (is a program still writing it?): shown \
                 is one committed state, read from a private copy; open it again to see later \
                 changes"
                    .to_string(),
            )
        });
        let dir = private_dir().map_err(|e| format!("cannot make a private copy: {e}"))?;
        let source = Source {
            read_from: dir.join("report.sqlite"),
            note,
            copy_dir: Some(dir),
        };
        // A copy taken while nothing changed (same stamp before and after):
        // the report first, then its journal, so that pages a writer changes
        // between the two are restored from the journal copy.
        const TRIES: usize = 50;
        for _ in 0..TRIES {
            let before = Stamp::of(path);
            let _ = std::fs::remove_file(companion(&source.read_from, "-journal"));
            let _ = std::fs::remove_file(companion(&source.read_from, "-wal"));
            let mut copied = std::fs::copy(path, &source.read_from).map(|_| ());
            for suffix in ["-journal", "-wal"] {
                let from = companion(path, suffix);
                if copied.is_ok() && non_empty(&from) {
                    copied = match std::fs::copy(&from, companion(&source.read_from, suffix)) {
                        Ok(_) => Ok(()),
                        // Committed and deleted since it was seen: the stamp says so.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                        Err(e) => Err(e),
                    };
                }
            }
            if let Err(e) = copied {
                return Err(format!(
                    "a private copy to read its committed state could not be made: {e}"
                ));
            }
            if Stamp::of(path) == before {
                settle(&source.read_from)
                    .map_err(|e| format!("its committed state could not be read: {e}"))?;
                return Ok(source);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Err("it changed during every copy (is a program still writing it?)".into())
    }
}

/// Opens the copy as SQLite normally does (a hot journal is rolled back, a
/// WAL recovered), folds a WAL into the file and leaves it in rollback mode,
/// so that the immutable readers see exactly the committed state.
fn settle(copy: &Path) -> rusqlite::Result<()> {
    let conn = rusqlite::Connection::open(copy)?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    if mode.eq_ignore_ascii_case("wal") {
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        conn.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()))?;
    }
    conn.close().map_err(|(_, e)| e)
}

/// What the private copies' directories are called: `PREFIX-PID-N`.
const COPY_DIR_PREFIX: &str = "sightline-committed-";

/// A new directory of ours under the system's temporary directory. Those
/// that loads killed before they could remove theirs left are removed first.
fn private_dir() -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let temp = std::env::temp_dir();
    #[cfg(unix)]
    remove_copies_of_ended_processes(&temp);
    let dir = temp.join(format!(
        "{COPY_DIR_PREFIX}{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

/// Removes the private copies (whole reports) of processes no longer
/// running: a load ended by SIGKILL or a crash runs no destructor, and its
/// copy would stay in `temp` for good. SQLite cannot give a report's
/// committed state without one (rolling a journal back writes the file; a
/// WAL is read through a shared-memory file beside it), so the copy stays,
/// and what is left of it goes at the next load that makes one. Only
/// directories of this user, named as ours, with no process of their pid
/// (where /proc says which run).
#[cfg(unix)]
fn remove_copies_of_ended_processes(temp: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(us) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(COPY_DIR_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        let Some(pid) = pid else { continue };
        if pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        let path = entry.path();
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == us) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}
