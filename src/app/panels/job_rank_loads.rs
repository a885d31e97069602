//! A rank's events read when the user asks for them. A job of more ranks than one window should
//! hold opens on its ranks' NVTX ranges alone (the ranks panel's iterations and straggler come
//! from them); a rank's whole report is read when it is expanded or clicked, one rank per core
//! at a time, off the window's thread.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_channel::Sender;

use crate::app::job::{Job, Wake};
use crate::loader::LoadError;
use crate::model::Trace;

/// A rank's report read whole (or why not), by its path.
pub type RankRead = (PathBuf, Result<Arc<Trace>, LoadError>);

/// The reads asked for and their results.
pub struct RankLoads {
    asks: Sender<PathBuf>,
    results: Job<RankRead>,
}

impl RankLoads {
    /// Workers that read the reports asked for, `parallel` at a time; each result wakes `wake`.
    /// They stop when this is dropped (the tab closed).
    pub fn start(parallel: usize, wake: Option<Wake>) -> RankLoads {
        let (asks, asked) = crossbeam_channel::unbounded::<PathBuf>();
        let mut results = Job::default();
        results.start_stream("sightline-rank-loads", wake, move |cancel, emit| {
            // How many reads are under way: each takes its share of the cores.
            let reading = AtomicUsize::new(0);
            std::thread::scope(|scope| {
                for _ in 0..parallel.max(1) {
                    let (asked, reading) = (asked.clone(), &reading);
                    scope.spawn(move || {
                        // Ends when every ask's sender is gone: the tab was closed.
                        while let Ok(path) = asked.recv() {
                            if cancel.load(Ordering::Relaxed) {
                                return;
                            }
                            let now = reading.fetch_add(1, Ordering::Relaxed) + 1;
                            let read = crate::loader::ranks::load_rank(&path, now, cancel);
                            reading.fetch_sub(1, Ordering::Relaxed);
                            if !emit.send((path, read.map(Arc::new))) {
                                return;
                            }
                        }
                    });
                }
            });
        });
        RankLoads { asks, results }
    }

    /// Asks for the report at `path` to be read whole.
    pub fn ask(&self, path: PathBuf) {
        // The workers only stop once this is dropped: a send cannot fail before.
        let _ = self.asks.send(path);
    }

    /// The next report read, if one is in.
    pub fn take_next(&mut self) -> Option<RankRead> {
        self.results.take_next()
    }

    /// Blocks until the next report is read (tests, screenshots).
    pub fn wait_next(&mut self) -> Option<RankRead> {
        self.results.wait_next()
    }
}
