//! How the Notes panel writes its sidecar: at once on the window's thread (a note added,
//! deleted or restyled, a text box let go, a tab closed, a quit), or, for typed text, a moment
//! after the last keystroke on a thread of its own. That thread needs no frame: a window that is
//! covered or minimised draws none (a repaint asked for at the save's time may never run), and
//! text typed just before is on disk a second later all the same, should the window then be
//! killed. One thread per report, started at its first keystroke; each keystroke hands it the
//! notes as they are and moves its deadline, so typing writes once, a second after it stops.
//!
//! Both writers go through one lock, behind which sit the notes as last on disk (what a save
//! merges against, [`annotations::save_merged`]): neither merges against a base the other has
//! just changed (which would read the other's write as a note added elsewhere, and keep both
//! texts). A write on the window's thread makes a delayed write asked for before it stale.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::annotations::{self, Note, NotesError};
use crate::app::job::{Emitter, Job, Wake};

/// What the window's thread and the delayed writer share, behind one lock.
#[derive(Default)]
pub(crate) struct Disk {
    /// The notes as last read from or written to the sidecar.
    pub(crate) base: Vec<Note>,
    /// The sidecar exists but could not be read: it is renamed aside before the next write, so
    /// its contents are never lost.
    pub(crate) unreadable: bool,
    /// Where the notes are kept, decided when the report was opened (the
    /// report's own folder may stop being writable, or vanish: the notes are
    /// then not saved elsewhere unasked). `None`: [`annotations::sidecar_path`].
    pub(crate) sidecar: Option<PathBuf>,
    /// Raised by each write on the window's thread: a delayed write asked for before is stale.
    generation: u64,
}

/// What one write did.
pub(crate) struct Written {
    /// The notes on disk now (this window's, merged with what others saved meanwhile), or why
    /// they are not.
    pub(crate) result: Result<Vec<Note>, String>,
    /// Said once, in the panel: an unreadable sidecar kept aside.
    pub(crate) notice: Option<String>,
}

/// A delayed write done.
pub(crate) struct Delayed {
    /// The keystroke whose notes it wrote (the panel counts them).
    pub(crate) edit: u64,
    generation: u64,
    pub(crate) written: Written,
}

/// A delayed write asked for.
struct Ask {
    notes: Vec<Note>,
    edit: u64,
    generation: u64,
    delay: Duration,
}

/// The sidecar's writers for one report.
#[derive(Default)]
pub(crate) struct Saver {
    disk: Arc<Mutex<Disk>>,
    /// The generation of the last write on the window's thread (the window's copy).
    generation: u64,
    /// To the delayed writer, once started.
    asks: Option<Sender<Ask>>,
    writer: Job<Delayed>,
}

impl Saver {
    /// The shared state, locked (a writer that panicked leaves it as it was: still usable).
    pub(crate) fn disk(&self) -> MutexGuard<'_, Disk> {
        self.disk.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes `notes` beside `report` now, on this thread; a delayed write still to come is
    /// made stale (these notes are as new as it, or newer).
    pub(crate) fn write_now(&mut self, report: &Path, notes: &[Note]) -> Written {
        let disk = &mut *self.disk.lock().unwrap_or_else(PoisonError::into_inner);
        disk.generation += 1;
        self.generation = disk.generation;
        write(disk, report, notes)
    }

    /// Writes `notes` (as of keystroke `edit`) beside `report` `delay` from now, on the
    /// writer's thread, replacing what was asked before; `wake` (made at the first ask) is
    /// called after each write. False where no thread could be had: the caller writes them
    /// itself.
    pub(crate) fn write_later(
        &mut self,
        report: &Path,
        notes: Vec<Note>,
        (edit, delay): (u64, Duration),
        wake: impl FnOnce() -> Wake,
    ) -> bool {
        let ask = Ask {
            notes,
            edit,
            generation: self.generation,
            delay,
        };
        let ask = match &self.asks {
            Some(to) => match to.send(ask) {
                Ok(()) => return true,
                // The writer is gone (it panicked): a new one.
                Err(returned) => returned.0,
            },
            None => ask,
        };
        let (to, from) = crossbeam_channel::unbounded();
        let (report, disk) = (report.to_path_buf(), self.disk.clone());
        let started = self
            .writer
            .start_stream("notes-writer", Some(wake()), move |_, emit| {
                delayed_writer(&report, &disk, &from, emit);
            });
        if !started || to.send(ask).is_err() {
            self.asks = None;
            return false;
        }
        self.asks = Some(to);
        true
    }

    /// The last delayed write done that is still current (no write on the window's thread
    /// since it was asked for), if one came in.
    pub(crate) fn take_delayed(&mut self) -> Option<Delayed> {
        let mut last = None;
        while let Some(done) = self.writer.take_next() {
            if done.generation == self.generation {
                last = Some(done);
            }
        }
        last
    }
}

/// The delayed writer: waits for the deadline of the last ask (each ask moves it), writes, and
/// waits again; ends when its panel is gone, first writing what was still to be written (the
/// tab closed or the window quit just after a keystroke).
fn delayed_writer(
    report: &Path,
    disk: &Mutex<Disk>,
    asks: &Receiver<Ask>,
    emit: &Emitter<Delayed>,
) {
    let mut due: Option<(Instant, Ask)> = None;
    loop {
        let next = match &due {
            Some((at, _)) => asks.recv_deadline(*at),
            None => asks.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        let gone = match next {
            Ok(ask) => {
                due = Some((Instant::now() + ask.delay, ask));
                continue;
            }
            Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => true,
        };
        if let Some((_, ask)) = due.take() {
            let disk = &mut *disk.lock().unwrap_or_else(PoisonError::into_inner);
            // Written on the window's thread since: as new, or newer.
            if disk.generation == ask.generation {
                let written = write(disk, report, &ask.notes);
                emit.send(Delayed {
                    edit: ask.edit,
                    generation: ask.generation,
                    written,
                });
            }
        }
        if gone {
            return;
        }
    }
}

/// Writes `notes` beside `report`, merged with what was saved meanwhile, `disk` held. An
/// unreadable sidecar is renamed aside first, and then there is nothing to merge against: every
/// note of this window is written (its notes as last read are not "deleted elsewhere" because
/// their file was set aside).
pub(crate) fn write(disk: &mut Disk, report: &Path, notes: &[Note]) -> Written {
    let mut notice = None;
    let sidecar = (disk.sidecar.clone()).unwrap_or_else(|| annotations::sidecar_path(report));
    if disk.unreadable {
        match set_aside(&sidecar) {
            Ok(kept) => {
                disk.unreadable = false;
                disk.base.clear();
                if kept != sidecar {
                    notice = Some(format!(
                        "The notes file that could not be read was kept as {}; the {} in this \
                         window were saved in a new one.",
                        kept.display(),
                        match notes.len() {
                            1 => "note".to_string(),
                            n => format!("{n} notes"),
                        }
                    ));
                }
            }
            Err(e) => {
                return Written {
                    result: Err(format!(
                        "not saved: the unreadable notes file could not be set aside ({e}); \
                         the notes stay in this window only"
                    )),
                    notice: None,
                };
            }
        }
    }
    let result = match annotations::save_merged_at(report, &sidecar, &disk.base, notes) {
        Ok(merged) => {
            disk.base = merged.clone();
            Ok(merged)
        }
        Err(e) => {
            if matches!(
                e,
                NotesError::Read { .. } | NotesError::Malformed { .. } | NotesError::Newer { .. }
            ) {
                // The sidecar turned unreadable since it was loaded: set it aside at the next
                // try rather than replace it.
                disk.unreadable = true;
            }
            Err(format!("{e} — the notes stay in this window only"))
        }
    };
    Written { result, notice }
}

/// Renames the unreadable sidecar `path` to `PATH.bad` (or `.bad2`, ..., never over an earlier
/// one); returns the new name (`path` itself when it is gone: nothing to keep).
pub(crate) fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    if !path.exists() {
        // Gone since it failed to load: nothing to keep.
        return Ok(path.to_path_buf());
    }
    for k in 1..100 {
        let mut name = path.as_os_str().to_owned();
        name.push(if k == 1 {
            ".bad".to_string()
        } else {
            format!(".bad{k}")
        });
        let dest = PathBuf::from(name);
        if !dest.exists() {
            std::fs::rename(path, &dest)?;
            return Ok(dest);
        }
    }
    Err(std::io::Error::other("too many set-aside notes files"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::Pin;

    fn note(text: &str) -> Note {
        Note {
            text: text.into(),
            color: [250, 204, 21],
            pin: Pin::Time(1_000),
        }
    }

    fn texts(report: &Path) -> Vec<String> {
        let notes = annotations::load(report).expect("reads");
        notes.into_iter().map(|n| n.text).collect()
    }

    fn no_wake() -> Wake {
        Arc::new(|| {})
    }

    /// A delayed write, then one on the window's thread of newer text: the
    /// second merges against what the first wrote (one note, not both texts).
    #[test]
    fn a_write_after_a_delayed_one_merges_against_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let report = dir.path().join("r.sqlite");
        std::fs::write(&report, "").expect("write");
        let mut saver = Saver::default();
        let asked = (1, Duration::from_millis(10));
        assert!(saver.write_later(&report, vec![note("typ")], asked, no_wake));
        let deadline = Instant::now() + Duration::from_secs(10);
        while texts(&report) != ["typ"] && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(texts(&report), ["typ"]);
        let done = saver.take_delayed().expect("its outcome");
        assert_eq!(done.edit, 1);
        assert!(done.written.result.is_ok());
        let written = saver.write_now(&report, &[note("typed")]);
        assert_eq!(written.result.map(|n| n.len()).ok(), Some(1));
        assert_eq!(texts(&report), ["typed"]);
    }

    /// A delayed write still to come when the window's thread writes is
    /// stale: never written over the newer text, never reported.
    #[test]
    fn a_write_on_the_windows_thread_makes_a_delayed_one_stale() {
        let dir = tempfile::tempdir().expect("temp dir");
        let report = dir.path().join("r.sqlite");
        std::fs::write(&report, "").expect("write");
        let mut saver = Saver::default();
        let asked = (1, Duration::from_millis(200));
        assert!(saver.write_later(&report, vec![note("older")], asked, no_wake));
        assert!(saver.write_now(&report, &[note("newer")]).result.is_ok());
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(texts(&report), ["newer"]);
        assert!(saver.take_delayed().is_none());
    }

    /// The panel gone with a write still to come (its tab closed just after
    /// a keystroke): written at once, not lost.
    #[test]
    fn a_delayed_write_is_done_when_its_panel_goes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let report = dir.path().join("r.sqlite");
        std::fs::write(&report, "").expect("write");
        let mut saver = Saver::default();
        let asked = (1, Duration::from_secs(3600));
        assert!(saver.write_later(&report, vec![note("last words")], asked, no_wake));
        drop(saver);
        let deadline = Instant::now() + Duration::from_secs(10);
        while texts(&report) != ["last words"] && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(texts(&report), ["last words"]);
    }
}
