//! Snapshots of a growing working file, loaded on a thread of their own.
//!
//! The thread that writes a capture's records ([`super::session`], or a
//! replay's copies) only tells this one what it has committed. A loading
//! thread takes the newest such word, loads the file as it then stands
//! ([`LiveReport`] keeps it in WAL mode: a load reads the last commit before
//! it began, and the writer never waits for it), and sends the snapshot.
//! Writing and loading overlap, so an event waits for one load, not for a
//! load and the writing queued behind it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::live::{Checkpointer, LiveCounts, LiveReport};
use super::messages::{CaptureMessage, LiveStatus, Outbox};
use crate::loader::{Carry, PhaseTimes};

/// The shortest time between the starts of two snapshots' loads: an event
/// reaches the screen within about this, a load, and CUPTI's flush period
/// ([`super::cupti::FLUSH_PERIOD`] says how the two were chosen). Shorter, a
/// load costs less (it reads what came since the last) but the window takes
/// in more snapshots; at 10–15 ms the writer fell behind in one run of two.
pub const MIN_SNAPSHOT_INTERVAL: Duration = Duration::from_millis(20);

/// The clock of the events recorded, to tell how old the newest one is.
#[derive(Clone, Copy)]
enum EventClock {
    /// A capture's: CUPTI's timestamps are CLOCK_REALTIME nanoseconds.
    Realtime,
    /// A replay's: the report's own session clock, which the replay runs
    /// from `first` at `speed` times its pace since it started.
    Replay { first: i64, speed: f64 },
}

/// Tells how old an event is, by the clock of the events recorded.
#[derive(Clone, Copy)]
struct Ages {
    started: Instant,
    clock: EventClock,
}

impl Ages {
    /// How old an event stamped `newest` (the recording's clock) is now.
    fn of(&self, newest: u64) -> Duration {
        match self.clock {
            EventClock::Realtime => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                Duration::from_nanos(now.saturating_sub(newest))
            }
            EventClock::Replay { first, speed } => {
                // How far the replay's clock is past the newest event, in
                // the report's nanoseconds, then in wall time at its pace.
                let elapsed = self.started.elapsed();
                let now = first as f64 + elapsed.as_nanos() as f64 * speed;
                Duration::from_secs_f64(((now - newest as f64) / speed / 1e9).max(0.0))
            }
        }
    }
}

/// What the writing thread says after a commit.
#[derive(Clone, Copy)]
struct Written {
    counts: LiveCounts,
    /// The newest timestamp committed (the recording's clock).
    newest: u64,
    /// The same instant on the report's clock.
    newest_at: crate::model::Ns,
    /// How old that event was when committed.
    age: Duration,
    /// Batches waiting to be written then.
    waiting: usize,
}

/// Follows what a capture writes and publishes snapshots of it.
pub(crate) struct Publisher {
    ages: Ages,
    /// How old the newest event was when it was last written (see
    /// [`LiveStatus::newest_event_age_written`]).
    age_written: Duration,
    loading: Option<LoadingThread>,
}

/// The thread that loads snapshots.
struct LoadingThread {
    written: Sender<Written>,
    ending: Arc<AtomicBool>,
    thread: JoinHandle<Carry>,
}

impl Publisher {
    /// A publisher of `live`'s snapshots to `to` (none unless `enabled` and
    /// the file can be read while written), timing events by CUPTI's clock.
    pub(crate) fn new(
        started: Instant,
        live: &mut LiveReport,
        enabled: bool,
        to: &Outbox,
    ) -> Publisher {
        Publisher::with(
            Ages {
                started,
                clock: EventClock::Realtime,
            },
            live,
            enabled,
            to,
        )
    }

    /// A publisher for a replay whose clock reads `first` at `started` and
    /// runs `speed` times the report's pace.
    pub(crate) fn replaying(
        started: Instant,
        first: i64,
        speed: f64,
        live: &mut LiveReport,
        to: &Outbox,
    ) -> Publisher {
        let clock = EventClock::Replay { first, speed };
        Publisher::with(Ages { started, clock }, live, true, to)
    }

    fn with(ages: Ages, live: &mut LiveReport, enabled: bool, to: &Outbox) -> Publisher {
        let loading = (enabled && live.readable_while_written())
            .then(|| LoadingThread::start(ages, live, to.clone()))
            .flatten();
        Publisher {
            ages,
            age_written: Duration::ZERO,
            loading,
        }
    }

    /// Notes that what was recorded so far is committed (with `waiting`
    /// batches still to write): how old its newest event is now, and that a
    /// snapshot may show it.
    pub(crate) fn written(&mut self, live: &LiveReport, waiting: usize) {
        self.age_written = self.ages.of(live.last_timestamp());
        if let Some(loading) = &self.loading {
            let _ = loading.written.send(Written {
                counts: live.counts(),
                newest: live.last_timestamp(),
                newest_at: live.last_event_time(),
                age: self.age_written,
                waiting,
            });
        }
    }

    /// Stops loading snapshots (waiting for a load under way) and gives what
    /// the loads kept back to `live`, for its last snapshot.
    pub(crate) fn finish(&mut self, live: &mut LiveReport) {
        if let Some(LoadingThread {
            written,
            ending,
            thread,
        }) = self.loading.take()
        {
            ending.store(true, Ordering::Relaxed);
            drop(written);
            // A load that panicked leaves nothing to go on from: the last
            // snapshot then reads the file whole.
            live.give_carry(thread.join().unwrap_or_default());
            // Nobody checkpoints for the writer any more. Should this fail,
            // the WAL only grows until the save copies the file whole.
            let _ = live.leave_checkpoints_to_loads(false);
        }
    }

    /// How far the capture has come (for its end: no snapshot's cost).
    pub(crate) fn status(&self, live: &LiveReport) -> LiveStatus {
        status(
            &self.ages,
            Written {
                counts: live.counts(),
                newest: live.last_timestamp(),
                newest_at: live.last_event_time(),
                age: self.age_written,
                waiting: 0,
            },
        )
    }
}

impl Drop for Publisher {
    /// A capture that fails midway: the loading thread ends after the load
    /// under way, without being waited for.
    fn drop(&mut self) {
        if let Some(loading) = &self.loading {
            loading.ending.store(true, Ordering::Relaxed);
        }
    }
}

fn status(ages: &Ages, written: Written) -> LiveStatus {
    let elapsed = ages.started.elapsed();
    LiveStatus {
        counts: written.counts,
        elapsed,
        events_per_second: written.counts.total() as f64 / elapsed.as_secs_f64().max(1e-9),
        snapshot_cost: Duration::ZERO,
        snapshot_phases: PhaseTimes::default(),
        newest_event_age: ages.of(written.newest),
        newest_event_at: written.newest_at,
        newest_event_age_written: written.age,
        batches_waiting: written.waiting,
        wal_bytes: 0,
    }
}

impl LoadingThread {
    /// None when no thread can be had: then no snapshots while the capture
    /// runs (it goes on; its end loads the file whole).
    fn start(ages: Ages, live: &mut LiveReport, to: Outbox) -> Option<LoadingThread> {
        let (written, heard) = crossbeam_channel::unbounded();
        let ending = Arc::new(AtomicBool::new(false));
        let path = live.path().to_path_buf();
        // The loads checkpoint, not the writer (see `Checkpointer`).
        let checkpointer =
            Checkpointer::open(&path).filter(|_| live.leave_checkpoints_to_loads(true).is_ok());
        let carry = live.take_carry();
        let stop = ending.clone();
        let spawned = std::thread::Builder::new()
            .name("sightline-snapshots".into())
            .spawn(move || {
                crate::threads::in_background();
                load_snapshots(&path, carry, &heard, &stop, ages, &to, checkpointer)
            });
        let Ok(thread) = spawned else {
            // No loads, so no checkpoints but the writer's.
            let _ = live.leave_checkpoints_to_loads(false);
            return None;
        };
        Some(LoadingThread {
            written,
            ending,
            thread,
        })
    }
}

/// The loading thread: a snapshot after each word of something new, spaced
/// by [`MIN_SNAPSHOT_INTERVAL`] from the last one's start, until told to end.
/// Loads run back to back when each takes longer: on this thread they hold
/// up nothing but the next load. After each snapshot is sent, the
/// `checkpointer` copies what was committed into the file.
fn load_snapshots(
    path: &Path,
    mut carry: Carry,
    heard: &Receiver<Written>,
    ending: &AtomicBool,
    ages: Ages,
    to: &Outbox,
    checkpointer: Option<Checkpointer>,
) -> Carry {
    let mut last_start: Option<Instant> = None;
    let mut last_total = None;
    while let Ok(mut newest) = heard.recv() {
        if let Some(wait) = last_start.map(|s| MIN_SNAPSHOT_INTERVAL.saturating_sub(s.elapsed())) {
            std::thread::sleep(wait);
        }
        // Only the newest word counts: the load reads all committed.
        while let Ok(later) = heard.try_recv() {
            newest = later;
        }
        if ending.load(Ordering::Relaxed) {
            break;
        }
        if last_total == Some(newest.counts.total()) {
            continue;
        }
        let t0 = Instant::now();
        last_start = Some(t0);
        // A failed load shows nothing new; the next one tries again (and
        // the capture's own end reports a file that cannot be read).
        let Ok((trace, phases)) = crate::loader::load_growing_timed(path, &mut carry) else {
            continue;
        };
        last_total = Some(newest.counts.total());
        let wal = crate::loader::companion(path, "-wal");
        let status = LiveStatus {
            snapshot_cost: t0.elapsed(),
            snapshot_phases: phases,
            wal_bytes: std::fs::metadata(wal).map_or(0, |m| m.len()),
            ..status(&ages, newest)
        };
        if !to.send(CaptureMessage::Snapshot(Arc::new(trace), status)) {
            break;
        }
        if let Some(checkpointer) = &checkpointer {
            checkpointer.run();
        }
    }
    carry
}
