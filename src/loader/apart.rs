//! Work of a load done on a thread of its own while the load goes on, its
//! result taken later ([`Apart::wait`]). A leaf: it knows nothing of what
//! the work is (the CPU samples' reading, `cpu_sampling`).
//!
//! The work gets a stop flag of its own: set when the load no longer wants
//! the result (it failed, was cancelled, or finished without asking), so
//! that dropping an [`Apart`] ends its thread soon and waits for it: no
//! thread of a load outlives the load.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

/// Work running on its own thread; its result is a `T`.
pub(crate) struct Apart<T> {
    result: Receiver<T>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Apart<T> {
    /// Starts `work` (given its stop flag) on a thread named `name`; None
    /// when no thread could be made (the caller then does the work itself).
    pub(crate) fn spawn(
        name: &str,
        work: impl FnOnce(&AtomicBool) -> T + Send + 'static,
    ) -> Option<Apart<T>> {
        let (send, result) = crossbeam_channel::bounded(1);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let _ = send.send(work(&flag));
            })
            .ok()?;
        Some(Apart {
            result,
            stop,
            thread: Some(thread),
        })
    }

    /// The work's result, waited for; `poll` is called every few tens of
    /// milliseconds meanwhile (progress) and stops the wait (and the work)
    /// when it returns false. None when stopped, or when the work's thread
    /// ended without a result (it panicked).
    pub(crate) fn wait(self, mut poll: impl FnMut() -> bool) -> Option<T> {
        loop {
            match self.result.recv_timeout(Duration::from_millis(25)) {
                Ok(result) => return Some(result),
                Err(RecvTimeoutError::Timeout) if poll() => {}
                Err(_) => return None,
            }
        }
    }
}

impl<T> Drop for Apart<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How far the parts read apart are: each part's rows and the fraction of
/// them read (an `f32`'s bits), and whether it is the progress said (a
/// later reading of the sampling, which reads nothing else).
#[derive(Default)]
pub(crate) struct PartsProgress(pub Vec<(u64, Arc<AtomicU32>)>, pub bool);

impl PartsProgress {
    /// The share of all the parts' rows read.
    pub(crate) fn fraction(&self) -> f32 {
        let total: u64 = self.0.iter().map(|(rows, _)| rows).sum();
        let read: f64 = (self.0.iter())
            .map(|(rows, f)| *rows as f64 * f32::from_bits(f.load(Ordering::Relaxed)) as f64)
            .sum();
        (read / total.max(1) as f64).min(1.0) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_comes_back_and_a_dropped_one_stops_its_work() {
        let done = Apart::spawn("test", |_| 6 * 7).expect("a thread");
        assert_eq!(done.wait(|| true), Some(42));

        // Work that runs until told to stop: dropping it stops and joins it.
        let stopped = Arc::new(AtomicBool::new(false));
        let seen = stopped.clone();
        let endless = Apart::spawn("test", move |stop| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            seen.store(true, Ordering::Relaxed);
        })
        .expect("a thread");
        drop(endless);
        assert!(stopped.load(Ordering::Relaxed), "joined after its stop");

        // A wait given up stops the work too.
        let endless = Apart::spawn("test", |stop| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
        })
        .expect("a thread");
        assert_eq!(endless.wait(|| false), None);
    }
}
