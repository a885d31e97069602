//! Background work for the window, one shape for every job: it runs on a
//! thread of its own, a newer request replaces (and cancels) the one before,
//! the window polls for the result each frame and never waits on it, and
//! dropping the job cancels it. A job gives one result ([`Job::start`],
//! [`Job::take`]) or a stream of them, each shown as it comes
//! ([`Job::start_stream`], [`Job::take_next`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, TryRecvError};
use eframe::egui;

/// A job producing a `T`, or nothing when cancelled.
pub struct Job<T> {
    cancel: Arc<AtomicBool>,
    result: Option<Receiver<T>>,
}

impl<T> Default for Job<T> {
    fn default() -> Self {
        Job {
            cancel: Arc::new(AtomicBool::new(false)),
            result: None,
        }
    }
}

impl<T> Drop for Job<T> {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// Drops `value` on a thread of its own. The last reference to a big report
/// frees what it holds (84 ms of the window's thread at 10M events when its
/// tab was closed; ten times that at 100M), which the window must not wait
/// for. When no thread can be had, `value` is dropped here.
pub fn drop_off_thread<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("sightline-free".into())
        .spawn(move || drop(value));
}

impl<T: Send + 'static> Job<T> {
    /// Starts `work` on a thread named `name`, after cancelling the job
    /// before it (whose result, if it still comes, is dropped). `work` gets
    /// the cancel flag and returns None when it saw it raised. `repaint`
    /// wakes the window when the result is in. False when no thread could be
    /// had (the window goes on without the result).
    pub fn start(
        &mut self,
        name: &str,
        repaint: Option<egui::Context>,
        work: impl FnOnce(&AtomicBool) -> Option<T> + Send + 'static,
    ) -> bool {
        self.cancel();
        let (tx, rx) = crossbeam_channel::bounded(1);
        let cancel = self.cancel.clone();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                crate::threads::in_background();
                if let Some(result) = work(&cancel) {
                    let _ = tx.send(result);
                    if let Some(ctx) = repaint {
                        ctx.request_repaint();
                    }
                }
            });
        self.result = spawned.is_ok().then_some(rx);
        spawned.is_ok()
    }

    /// Starts `work` on a thread named `name` after cancelling the job
    /// before it; `work` sends each result through `emit` (false once nobody
    /// listens: stop then) and ends when it has no more. `repaint` wakes the
    /// window at each result.
    pub fn start_stream(
        &mut self,
        name: &str,
        repaint: Option<egui::Context>,
        work: impl FnOnce(&AtomicBool, &dyn Fn(T) -> bool) + Send + 'static,
    ) -> bool {
        self.cancel();
        let (tx, rx) = crossbeam_channel::unbounded();
        let cancel = self.cancel.clone();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                crate::threads::in_background();
                let emit = |result: T| {
                    let sent = tx.send(result).is_ok();
                    if let Some(ctx) = &repaint {
                        ctx.request_repaint();
                    }
                    sent
                };
                work(&cancel, &emit);
            });
        self.result = spawned.is_ok().then_some(rx);
        spawned.is_ok()
    }

    /// The next result of a stream, when one is in; the job stops running
    /// once the stream has ended and every result was taken.
    pub fn take_next(&mut self) -> Option<T> {
        let rx = self.result.as_ref()?;
        match rx.try_recv() {
            Ok(result) => Some(result),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                self.result = None;
                None
            }
        }
    }

    /// Blocks for the next result of a stream; None once it has ended.
    pub fn wait_next(&mut self) -> Option<T> {
        let rx = self.result.as_ref()?;
        match rx.recv() {
            Ok(result) => Some(result),
            Err(_) => {
                self.result = None;
                None
            }
        }
    }

    /// The result, once, when it is in.
    pub fn take(&mut self) -> Option<T> {
        let rx = self.result.as_ref()?;
        match rx.try_recv() {
            Ok(result) => {
                self.result = None;
                Some(result)
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                // Cancelled, or the work panicked: nothing will come.
                self.result = None;
                None
            }
        }
    }

    /// Whether a result is still to come.
    pub fn is_running(&self) -> bool {
        self.result.is_some()
    }

    /// Stops the job under way; its result will not be taken.
    pub fn cancel(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.cancel = Arc::new(AtomicBool::new(false));
        self.result = None;
    }

    /// The running job's cancel flag (tests check that closing raises it).
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    /// Blocks until the result is in (tests, screenshots, lesson steps).
    pub fn wait(&mut self) -> Option<T> {
        let rx = self.result.take()?;
        rx.recv().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_newer_request_replaces_the_older_and_drop_cancels() {
        let mut job: Job<u32> = Job::default();
        assert!(job.start("slow", None, |cancel| {
            while !cancel.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Some(1)
        }));
        let first = job.cancel_flag();
        assert!(job.start("fast", None, |_| Some(2)));
        assert!(first.load(Ordering::Relaxed), "the older job was cancelled");
        assert_eq!(job.wait(), Some(2));
        assert!(!job.is_running());
        assert_eq!(job.take(), None);
        let mut job: Job<u32> = Job::default();
        job.start("forever", None, |cancel| {
            while !cancel.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            None
        });
        let flag = job.cancel_flag();
        drop(job);
        assert!(flag.load(Ordering::Relaxed));
    }

    #[test]
    fn a_stream_gives_every_result_in_order_then_ends() {
        let mut job: Job<u32> = Job::default();
        assert!(job.start_stream("stream", None, |_, emit| {
            for i in 0..5 {
                if !emit(i) {
                    return;
                }
            }
        }));
        let mut got = Vec::new();
        while let Some(i) = job.wait_next() {
            got.push(i);
        }
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        assert!(!job.is_running());
        assert_eq!(job.take_next(), None);
    }

    #[test]
    fn a_value_dropped_off_thread_is_freed_on_another_thread() {
        /// Says which thread dropped it.
        struct Witness(crossbeam_channel::Sender<Option<String>>);
        impl Drop for Witness {
            fn drop(&mut self) {
                let name = std::thread::current().name().map(str::to_string);
                let _ = self.0.send(name);
            }
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        drop_off_thread(Witness(tx));
        let dropped_on = rx.recv_timeout(Duration::from_secs(10)).expect("dropped");
        assert_eq!(dropped_on.as_deref(), Some("sightline-free"));
    }
}
