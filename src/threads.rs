//! Scoped threads, joined so that a panic in one goes on in the thread that
//! joins it (the model, the loader and the analysis each split work this way).

/// What a scoped thread returned; its panic, if it panicked, goes on here.
pub fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Lowers the calling thread's priority (nice 10) and that of the threads it
/// starts: background work (a snapshot's load, the findings engine, a range
/// summary) gives way to the window's thread where cores are few. A 2-core
/// machine running a live capture's loads and the engine beside the window
/// dropped its frames to the loads otherwise. Nothing happens elsewhere than
/// on Linux, or when the system refuses.
pub fn in_background() {
    #[cfg(target_os = "linux")]
    // Safety: `gettid` and `setpriority` take and return plain integers; a
    // thread may always lower its own priority (a refusal is only ignored).
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
    }
}
