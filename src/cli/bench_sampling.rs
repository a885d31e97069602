//! `sightline bench`'s CPU sampling lines: a sampled report loaded whole, against the same
//! report loaded without its CPU samples and scheduling and those read afterwards (what every
//! command but those needing them, and the window, do: `loader::LoadOptions`). Each timed by
//! the wall clock and by the process's CPU time (all its threads): on a few busy cores the
//! wall clock says little of what the samples cost.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::loader::{self, LoadOptions};

/// One step's wall-clock and CPU time.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Cost {
    pub wall: Duration,
    /// None where the process's CPU clock cannot be read.
    pub cpu: Option<Duration>,
}

impl Cost {
    /// `work` run and timed.
    pub(super) fn of<T>(work: impl FnOnce() -> T) -> (T, Cost) {
        let (t0, c0) = (Instant::now(), process_cpu());
        let out = work();
        let cost = Cost {
            wall: t0.elapsed(),
            cpu: c0.zip(process_cpu()).map(|(a, b)| b.saturating_sub(a)),
        };
        (out, cost)
    }

    fn ms(d: Option<Duration>) -> String {
        d.map_or("null".into(), |d| format!("{:.3}", d.as_secs_f64() * 1e3))
    }

    /// "12.3 ms wall, 20.1 ms CPU".
    pub(super) fn text(&self) -> String {
        format!(
            "{:.1} ms wall, {} ms CPU",
            self.wall.as_secs_f64() * 1e3,
            Self::ms(self.cpu).replace("null", "?")
        )
    }

    /// `{"wall_ms":…,"cpu_ms":…}`.
    pub(super) fn json(&self) -> String {
        format!(
            "{{\"wall_ms\":{:.3},\"cpu_ms\":{}}}",
            self.wall.as_secs_f64() * 1e3,
            Self::ms(self.cpu)
        )
    }
}

/// The load without the CPU samples, then their reading for that trace.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Deferred {
    pub load: Cost,
    pub read_later: Cost,
}

/// `path` loaded without its CPU samples, then those read (None for a report nsys did not
/// sample: both would be the whole load).
pub(super) fn deferred(path: &Path) -> Result<Option<Deferred>, String> {
    let cancel = AtomicBool::new(false);
    let (loaded, load) = Cost::of(|| {
        loader::load_with(
            path,
            LoadOptions::WITHOUT_CPU_SAMPLING,
            &mut |_| {},
            &cancel,
        )
    });
    let trace = loaded.map_err(|e| e.to_string())?;
    if !trace.cpu_sampling_not_read() {
        return Ok(None);
    }
    let (read, read_later) =
        Cost::of(|| loader::read_cpu_sampling(path, &trace, &mut |_| {}, &cancel));
    read.map_err(|e| e.to_string())?;
    Ok(Some(Deferred { load, read_later }))
}

/// The CPU time of the process, all its threads.
fn process_cpu() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // Safety: `clock_gettime` writes only the `timespec` it is given.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } == 0;
        ok.then(|| Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
    }
    #[cfg(not(target_os = "linux"))]
    None
}
