//! Background work, one shape for every job the window (or a command) waits on: loading a
//! report, a capture and its snapshots, an analysis, an export. A job runs on a thread of its
//! own and gives one result ([`Job::start`], [`Job::take`]) or a stream of them, each taken as
//! it comes ([`Job::start_stream`], [`Job::take_next`]). Its reader never waits on it: it takes
//! what is in, and may ask to be woken ([`Wake`]) after each result. A newer start replaces
//! (and cancels) the job before, and dropping a job cancels it.
//!
//! Here, below every stage, so that the loader and the capture produce the same job the window
//! polls; the window's own wake (an egui repaint) is made in `app::job`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};

/// Called after each result a job sends: the window's repaint.
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// A job producing `T`s, or nothing when cancelled.
pub struct Job<T> {
    cancel: Arc<AtomicBool>,
    result: Option<Receiver<T>>,
    /// Set once, at the start or later by [`Job::wake_with`]; the sender reads it after each
    /// result.
    wake: Arc<OnceLock<Wake>>,
}

impl<T> Default for Job<T> {
    fn default() -> Self {
        Job {
            cancel: Arc::new(AtomicBool::new(false)),
            result: None,
            wake: Arc::default(),
        }
    }
}

impl<T> Drop for Job<T> {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// Where a streaming job sends its results, waking their reader if it asked to be. Cloned
/// freely: a job's helper threads send through it too.
pub struct Emitter<T> {
    to: Sender<T>,
    wake: Arc<OnceLock<Wake>>,
}

impl<T> Clone for Emitter<T> {
    fn clone(&self) -> Self {
        Emitter {
            to: self.to.clone(),
            wake: self.wake.clone(),
        }
    }
}

impl<T> Emitter<T> {
    /// An emitter into `to` that wakes nobody (a caller that reads the channel itself).
    pub fn new(to: Sender<T>) -> Emitter<T> {
        Emitter {
            to,
            wake: Arc::default(),
        }
    }

    /// Sends `result`, then wakes the reader; false once nobody listens (stop then).
    pub fn send(&self, result: T) -> bool {
        let sent = self.to.send(result).is_ok();
        if let Some(wake) = self.wake.get().filter(|_| sent) {
            wake();
        }
        sent
    }
}

impl<T: Send + 'static> Job<T> {
    /// Starts `work` on a thread named `name`, after cancelling the job before it (whose
    /// result, if it still comes, is dropped). `work` gets the cancel flag and returns None
    /// when it saw it raised. `wake` is called when the result is in. False when no thread
    /// could be had (the reader goes on without the result).
    pub fn start(
        &mut self,
        name: &str,
        wake: Option<Wake>,
        work: impl FnOnce(&AtomicBool) -> Option<T> + Send + 'static,
    ) -> bool {
        self.start_stream(name, wake, move |cancel, emit| {
            if let Some(result) = work(cancel) {
                emit.send(result);
            }
        })
    }

    /// Starts `work` on a thread named `name` after cancelling the job before it; `work` sends
    /// each result through its [`Emitter`] and ends when it has no more. `wake` is called after
    /// each result. False when no thread could be had.
    pub fn start_stream(
        &mut self,
        name: &str,
        wake: Option<Wake>,
        work: impl FnOnce(&Arc<AtomicBool>, &Emitter<T>) + Send + 'static,
    ) -> bool {
        self.spawn_stream(name, wake, true, work)
    }

    /// [`Job::start_stream`] at the caller's priority, not lowered as background work is: for
    /// work that has to keep up with something happening now (a capture keeping up with
    /// CUPTI's records).
    pub fn start_stream_in_front(
        &mut self,
        name: &str,
        wake: Option<Wake>,
        work: impl FnOnce(&Arc<AtomicBool>, &Emitter<T>) + Send + 'static,
    ) -> bool {
        self.spawn_stream(name, wake, false, work)
    }

    fn spawn_stream(
        &mut self,
        name: &str,
        wake: Option<Wake>,
        in_background: bool,
        work: impl FnOnce(&Arc<AtomicBool>, &Emitter<T>) + Send + 'static,
    ) -> bool {
        self.cancel();
        if let Some(wake) = wake {
            let _ = self.wake.set(wake);
        }
        let (to, rx) = crossbeam_channel::unbounded();
        let emit = Emitter {
            to,
            wake: self.wake.clone(),
        };
        let cancel = self.cancel.clone();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                if in_background {
                    crate::threads::in_background();
                }
                work(&cancel, &emit);
            });
        self.result = spawned.is_ok().then_some(rx);
        spawned.is_ok()
    }

    /// A job whose results someone else sends through `results` (a test that feeds a real
    /// load's messages at its own pace), or that failed to start and says so in one message.
    pub fn from_receiver(results: Receiver<T>) -> Job<T> {
        Job {
            cancel: Arc::new(AtomicBool::new(false)),
            result: Some(results),
            wake: Arc::default(),
        }
    }

    /// Calls `wake` after each result from now on (the first waker given stays; a later one is
    /// ignored).
    pub fn wake_with(&self, wake: Wake) {
        let _ = self.wake.set(wake);
    }

    /// Whether a waker was given.
    pub fn wakes(&self) -> bool {
        self.wake.get().is_some()
    }

    /// The next result of a stream, when one is in; the job stops running once the stream has
    /// ended and every result was taken.
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

    /// Blocks for the next result of a stream for at most `timeout`: `Ok(None)` once the
    /// stream has ended, `Err(())` when nothing came in time.
    #[allow(clippy::result_unit_err)]
    pub fn wait_next_for(&mut self, timeout: std::time::Duration) -> Result<Option<T>, ()> {
        let Some(rx) = self.result.as_ref() else {
            return Ok(None);
        };
        match rx.recv_timeout(timeout) {
            Ok(result) => Ok(Some(result)),
            Err(RecvTimeoutError::Timeout) => Err(()),
            Err(RecvTimeoutError::Disconnected) => {
                self.result = None;
                Ok(None)
            }
        }
    }

    /// The results' channel, to wait on with a deadline (tests); a channel that never
    /// delivers once the job has ended.
    pub fn receiver(&self) -> Receiver<T> {
        self.result.clone().unwrap_or_else(crossbeam_channel::never)
    }

    /// Results sent and not taken yet.
    pub fn waiting(&self) -> usize {
        self.result.as_ref().map_or(0, Receiver::len)
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

    /// Stops the job under way; its results will not be taken.
    pub fn cancel(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.cancel = Arc::new(AtomicBool::new(false));
        self.wake = Arc::default();
        self.result = None;
    }

    /// Asks the work to stop and still takes what it sends until it ends (a capture keeps
    /// what it recorded until then).
    pub fn ask_to_stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
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

/// Drops `value` on a thread of its own. The last reference to a big report
/// frees what it holds (84 ms of the window's thread at 10M events when its
/// tab was closed; ten times that at 100M), which the window must not wait
/// for. When no thread can be had, `value` is dropped here.
pub fn drop_off_thread<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("sightline-free".into())
        .spawn(move || drop(value));
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
                if !emit.send(i) {
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
    fn a_waker_given_late_is_called_after_each_later_result() {
        let mut job: Job<u32> = Job::default();
        let (sent_first, first_sent) = crossbeam_channel::bounded::<()>(1);
        let (go, wait) = crossbeam_channel::bounded::<()>(0);
        assert!(job.start_stream("late-wake", None, move |_, emit| {
            emit.send(0);
            let _ = sent_first.send(());
            let _ = wait.recv();
            emit.send(1);
            emit.send(2);
        }));
        first_sent.recv().expect("the first result is sent");
        let woken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = woken.clone();
        job.wake_with(Arc::new(move || {
            count.fetch_add(1, Ordering::Relaxed);
        }));
        assert!(job.wakes());
        let _ = go.send(());
        let mut got = Vec::new();
        while let Some(i) = job.wait_next() {
            got.push(i);
        }
        assert_eq!(got, vec![0, 1, 2]);
        assert_eq!(
            woken.load(Ordering::Relaxed),
            2,
            "woken for the two results after"
        );
    }

    #[test]
    fn asked_to_stop_a_stream_still_gives_what_it_sends_until_it_ends() {
        let mut job: Job<u32> = Job::default();
        assert!(job.start_stream("stoppable", None, |stop, emit| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            emit.send(7);
        }));
        job.ask_to_stop();
        assert_eq!(job.wait_next(), Some(7));
        assert_eq!(job.wait_next(), None);
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
