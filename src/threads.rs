//! Scoped threads, joined so that a panic in one goes on in the thread that
//! joins it (the model, the loader and the analysis each split work this way).

/// What a scoped thread returned; its panic, if it panicked, goes on here.
pub fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
