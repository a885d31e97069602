//! How the process takes and gives back memory: the policies for the big
//! buffers a trace is made of (columns of millions of events), which glibc's
//! defaults serve badly. Process-wide, so here and not in any one user of them.

use std::alloc::{GlobalAlloc, Layout, System};

/// Buffers this big or bigger (a column of a big table) get pages of their
/// own, given back whole when freed, and are asked to sit on huge pages.
const BIG_BUFFER: usize = 8 << 20;

/// The system allocator, but a big buffer asks the kernel for huge pages.
///
/// Why: a load, and every snapshot of a live capture, fills hundreds of MB of
/// new columns, and the kernel faults them in and zeroes them one 4 KB page
/// at a time. On the development VM copying 300 MB into new memory took
/// 290 ms against 36 ms into memory already touched, and 80 ms on 2 MB pages
/// (BENCHMARKS.md). Only whole 2 MB stretches inside a buffer are advised,
/// so a buffer's ragged ends, and so its resident size, stay as they were.
/// A hint: where transparent huge pages are off, nothing changes.
pub struct BigBuffersOnHugePages;

// SAFETY: every call goes to `System` with the caller's arguments unchanged;
// the advice only changes how the kernel backs pages the buffer already owns.
unsafe impl GlobalAlloc for BigBuffersOnHugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let buffer = unsafe { System.alloc(layout) };
        advise_huge_pages(buffer, layout.size());
        buffer
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let buffer = unsafe { System.alloc_zeroed(layout) };
        advise_huge_pages(buffer, layout.size());
        buffer
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        let buffer = unsafe { System.realloc(ptr, layout, new_size) };
        advise_huge_pages(buffer, new_size);
        buffer
    }
}

/// Asks that the whole 2 MB stretches of a big buffer be backed by huge
/// pages (`madvise(MADV_HUGEPAGE)`); anything else is left alone.
fn advise_huge_pages(buffer: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        /// Linux's `MADV_HUGEPAGE` (the same on every architecture).
        const MADV_HUGEPAGE: std::ffi::c_int = 14;
        unsafe extern "C" {
            fn madvise(
                addr: *mut std::ffi::c_void,
                len: usize,
                advice: std::ffi::c_int,
            ) -> std::ffi::c_int;
        }
        if buffer.is_null() || len < BIG_BUFFER {
            return;
        }
        let from = (buffer as usize).next_multiple_of(HUGE_PAGE);
        let to = (buffer as usize + len) / HUGE_PAGE * HUGE_PAGE;
        if to > from {
            // SAFETY: [from, to) lies inside the buffer just handed out, and
            // is page aligned; the advice keeps its contents. A refusal
            // (no transparent huge pages) changes nothing, so it is ignored.
            unsafe {
                madvise(
                    buffer.wrapping_add(from - buffer as usize).cast(),
                    to - from,
                    MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (buffer, len);
}

/// Free memory at the top of a heap that glibc keeps rather than gives back
/// at once: a frame's meshes (several MB at a whole-report zoom) are freed
/// at its end and made again by the next one.
const FREED_KEPT: usize = 64 << 20;

/// Has glibc map every buffer of [`BIG_BUFFER`] bytes or more on its own,
/// and keep up to [`FREED_KEPT`] freed at a heap's top.
/// By default the size from which it does so follows the biggest buffer
/// freed so far (up to 32 MB): after the first columns of a load are freed,
/// columns of a few million events are carved from the reading threads'
/// arenas instead, and whether one of them (27 MB at 10M events) stays
/// resident after the load's `malloc_trim` depended on which arena it fell
/// in — 29.8 or 32.5 B an event, from one run to the next.
///
/// Setting that size fixes the one below which glibc gives the top of a
/// heap back (128 kB, where it otherwise follows the first): the window's
/// thread then gave its meshes' pages back at every frame and faulted them
/// in again at the next, a fifth of its time in a live capture on a
/// findings-heavy report. A load still gives back all it freed
/// ([`give_back_freed_memory`]).
pub fn set_allocator_thresholds() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        unsafe extern "C" {
            /// glibc: sets an allocator parameter; returns 1 on success.
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        /// glibc's `M_TRIM_THRESHOLD` and `M_MMAP_THRESHOLD` (malloc.h).
        const M_TRIM_THRESHOLD: std::ffi::c_int = -1;
        const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
        // SAFETY: mallopt takes no pointer; glibc takes its own lock.
        ONCE.call_once(|| unsafe {
            mallopt(M_MMAP_THRESHOLD, BIG_BUFFER as std::ffi::c_int);
            mallopt(M_TRIM_THRESHOLD, FREED_KEPT as std::ffi::c_int);
        });
    }
}

/// Returns to the system the pages the load's row buffers held. The readers'
/// buffers (rows as read, before grouping) are freed table by table; glibc
/// keeps freed pages that sit below live ones, which left ~9 bytes an event
/// resident for nothing once the GPU tables came to be read before the
/// (bigger) CUDA API table, whose buffers no longer fit in the holes.
pub fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            /// glibc: releases free memory at the heap's top and, since 2.8,
            /// free whole pages anywhere in every arena (madvise).
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointer and only touches the
        // allocator's free lists, under its own locks.
        unsafe {
            malloc_trim(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags of the mapping holding `address`, as /proc/self/smaps
    /// lists them (`hg`: huge pages advised).
    #[cfg(target_os = "linux")]
    fn mapping_flags(address: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = range.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = (lo..hi).contains(&address);
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return Some(flags.trim().to_string());
            }
        }
        None
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_big_buffer_is_advised_onto_huge_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            eprintln!("this kernel has no transparent huge pages: nothing to check");
            return;
        }
        // Through the global allocator, as every column is.
        let big = vec![1u8; 3 * BIG_BUFFER];
        let middle = big.as_ptr() as usize + big.len() / 2;
        let flags = mapping_flags(middle).expect("the buffer's mapping in smaps");
        assert!(
            flags.split_whitespace().any(|f| f == "hg"),
            "flags of a big buffer's mapping: {flags}"
        );
    }

    #[test]
    fn big_buffers_keep_what_is_written_through_growth_and_shrinking() {
        let a = BigBuffersOnHugePages;
        let layout = Layout::from_size_align(BIG_BUFFER + 12_345, 8).expect("layout");
        // SAFETY: a non-zero layout; every pointer is checked and freed once
        // with the layout it has.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            for i in 0..layout.size() {
                *p.add(i) = (i % 251) as u8;
            }
            let grown = 3 * BIG_BUFFER + 7;
            let q = a.realloc(p, layout, grown);
            assert!(!q.is_null());
            assert!((0..layout.size()).all(|i| *q.add(i) == (i % 251) as u8));
            let grown_layout = Layout::from_size_align(grown, 8).expect("layout");
            let small = 1000;
            let r = a.realloc(q, grown_layout, small);
            assert!((0..small).all(|i| *r.add(i) == (i % 251) as u8));
            a.dealloc(r, Layout::from_size_align(small, 8).expect("layout"));
            let z = a.alloc_zeroed(layout);
            assert!((0..layout.size()).all(|i| *z.add(i) == 0));
            a.dealloc(z, layout);
        }
    }
}
