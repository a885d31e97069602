//! An append-only column that snapshots share.
//!
//! A growing trace is published again and again while the window reads the
//! last snapshot: copying every column into each one is a pass over all the
//! events for a handful of new ones. A [`Column`] is a vector whose clones
//! share one buffer: a clone costs a reference count, and a `push` on one
//! clone writes past the end every other clone sees, so no clone ever sees
//! a value change. Only one clone can write past a given end (the first to
//! claim it); a push from any other, or past the buffer's room, moves that
//! clone to a buffer of its own, twice as big (amortized O(1) a value).
//!
//! Why not `Arc<Vec<T>>` and `make_mut`: the window always holds the last
//! snapshot, so `make_mut` would copy the whole column at every snapshot.
//!
//! Values are mostly `Copy` (event columns, appended many at a time); any
//! `Clone` value can be pushed one at a time (a track's runs, which own
//! their sampled starts): the buffer owns every value written to it and
//! drops them with itself.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The buffer clones share: `capacity` slots, of which the first `claimed`
/// are written and never written again (a slot is claimed and written in
/// one call that cannot fail between the two).
struct Buffer<T> {
    ptr: *mut T,
    capacity: usize,
    claimed: AtomicUsize,
}

// SAFETY: the buffer owns its values and drops them once, with itself, on
// whichever thread lets go of the last clone (hence `T: Send`); until then
// clones on other threads only read them (hence `T: Sync`). A slot is
// written at most once, by the one clone that claimed it through the atomic
// `claimed`, and read only below a length the reader was handed after the
// write (the handing over orders the write first): moving the buffer to
// another thread moves no unsynchronized state.
unsafe impl<T: Send + Sync> Send for Buffer<T> {}
// SAFETY: shared between threads, the buffer is read only in slots written
// before the reader learned of them, and claimed through an atomic, so two
// threads never write one slot nor read a slot being written (see `Send`).
unsafe impl<T: Send + Sync> Sync for Buffer<T> {}

impl<T> Drop for Buffer<T> {
    fn drop(&mut self) {
        let written = *self.claimed.get_mut();
        // SAFETY: `ptr` and `capacity` come from a `Vec<T>` this buffer took
        // apart (`Column::from`, through which every buffer is made), and its
        // first `claimed` slots are written, each once: the
        // vector is rebuilt with them, to drop them and free the allocation.
        // `drop` takes `&mut self`: no clone reads the buffer any more.
        unsafe { drop(Vec::from_raw_parts(self.ptr, written, self.capacity)) }
    }
}

/// A vector that only grows, whose clones share their values (see the
/// module's notes).
pub struct Column<T> {
    /// The buffer's values, kept here too: reading a value is one load, as
    /// in a `Vec`, not two through the `Arc`.
    ptr: *const T,
    len: usize,
    buffer: Arc<Buffer<T>>,
}

// SAFETY: a `Column` is an `Arc` of its buffer, a pointer into that buffer
// (kept alive by the `Arc`) and a length: it reads only the buffer's first
// `len` values, written before it was handed `len`, and writes only slots it
// claimed (see `Buffer`'s notes). So it may move to another thread as the
// `Arc<Buffer<T>>` may.
unsafe impl<T: Send + Sync> Send for Column<T> {}
// SAFETY: through `&Column` values are only read, below `len` (see `Send`);
// pushing takes `&mut self`.
unsafe impl<T: Send + Sync> Sync for Column<T> {}

impl<T> From<Vec<T>> for Column<T> {
    /// Takes the vector's allocation as it is (its spare room included):
    /// no copy.
    fn from(values: Vec<T>) -> Self {
        let mut values = ManuallyDrop::new(values);
        let (ptr, len, capacity) = (values.as_mut_ptr(), values.len(), values.capacity());
        Column {
            ptr,
            len,
            buffer: Arc::new(Buffer {
                ptr,
                capacity,
                claimed: AtomicUsize::new(len),
            }),
        }
    }
}

impl<T> Default for Column<T> {
    fn default() -> Self {
        Column::from(Vec::new())
    }
}

impl<T> Clone for Column<T> {
    fn clone(&self) -> Self {
        Column {
            ptr: self.ptr,
            len: self.len,
            buffer: self.buffer.clone(),
        }
    }
}

impl<T> Deref for Column<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // Safety: the first `len` slots were written before this clone was
        // made or grew to `len`, and are never written again.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for Column<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for Column<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        **self == other[..]
    }
}

impl<T: Copy> FromIterator<T> for Column<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Column::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T> Column<T> {
    pub fn new() -> Self {
        Column::default()
    }

    pub fn with_capacity(capacity: usize) -> Self {
        Column::from(Vec::with_capacity(capacity))
    }

    /// Slots of the buffer this clone writes to (shared with other clones).
    pub fn capacity(&self) -> usize {
        self.buffer.capacity
    }

    /// Claims the slots from this clone's length to `end` in its buffer:
    /// whether it could (it holds the buffer's last value, and there is
    /// room).
    fn claim_in_place(&self, end: usize) -> bool {
        end <= self.buffer.capacity
            && self
                .buffer
                .claimed
                .compare_exchange(self.len, end, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }
}

impl<T: Clone> Column<T> {
    /// Appends `value`: in place when this clone holds the buffer's last
    /// value and there is room, else into a buffer of its own.
    pub fn push(&mut self, value: T) {
        if self.claim_in_place(self.len + 1) {
            // Safety: slot `len` is within the buffer and this clone claimed
            // it; a move cannot fail, so it is written once claimed.
            unsafe { std::ptr::write(self.buffer.ptr.add(self.len), value) };
            self.len += 1;
            return;
        }
        // A buffer of its own, every value in it before the old one is let
        // go: dropping the old buffer's values (this clone may be its last
        // reader) may panic, and must not find a slot claimed and unwritten.
        let mut values = Vec::with_capacity((2 * self.len).max(16));
        values.extend_from_slice(self);
        values.push(value);
        *self = Column::from(values);
    }
}

impl<T: Copy> Column<T> {
    /// Appends `values`: in place when this clone holds the buffer's last
    /// value and there is room, else into a buffer of its own.
    pub fn extend_from_slice(&mut self, values: &[T]) {
        if values.is_empty() {
            return;
        }
        let end = self.len + values.len();
        if !self.claim_in_place(end) {
            // A buffer of its own, claimed to `end` (`Copy` values: nothing
            // is dropped on the way).
            let mut own = Vec::with_capacity(end.max(2 * self.len).max(16));
            own.extend_from_slice(self);
            let moved = Column::from(own);
            moved.buffer.claimed.store(end, Ordering::Relaxed);
            *self = moved;
        }
        // Safety: slots `len..end` are within the buffer and this clone
        // claimed them (or owns a new buffer whose `claimed` it set): no
        // other clone reads or writes them; a copy cannot fail.
        unsafe {
            std::ptr::copy_nonoverlapping(
                values.as_ptr(),
                self.buffer.ptr.add(self.len),
                values.len(),
            );
        }
        self.len = end;
    }
}

impl<'a, T> IntoIterator for &'a Column<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Copy> Extend<T> for Column<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let values: Vec<T> = iter.into_iter().collect();
        self.extend_from_slice(&values);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_keep_what_they_saw_while_another_grows() {
        let mut a: Column<u32> = Column::with_capacity(4);
        a.extend_from_slice(&[1, 2]);
        let before = a.clone();
        a.push(3);
        assert_eq!(&*before, &[1, 2], "a clone does not see a later push");
        assert_eq!(&*a, &[1, 2, 3]);
        assert!(std::ptr::eq(before.as_ptr(), a.as_ptr()), "in place");
        // `before` no longer holds the buffer's last value: its push moves it.
        let mut b = before.clone();
        b.push(9);
        assert_eq!(&*b, &[1, 2, 9]);
        assert_eq!(&*a, &[1, 2, 3], "a push from an older clone never shows");
        assert!(!std::ptr::eq(b.as_ptr(), a.as_ptr()));
        // Past the room: a new buffer, the values carried over.
        a.extend_from_slice(&[4, 5, 6]);
        assert_eq!(&*a, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(&*before, &[1, 2]);
        assert!(a.capacity() >= 6);
        let from_iter: Column<u32> = (0..3).collect();
        assert_eq!(from_iter, vec![0, 1, 2]);
    }

    /// Values that own something (an `Arc` here): pushed one at a time,
    /// shared by clones, copied by a clone that moves, and each dropped
    /// exactly once, when the last clone holding it goes.
    #[test]
    fn owned_values_are_shared_moved_and_dropped_once() {
        let value = Arc::new(7u32);
        let held = |n: usize| assert_eq!(Arc::strong_count(&value), n + 1);
        let mut a: Column<Arc<u32>> = Column::with_capacity(2);
        a.push(value.clone());
        let before = a.clone();
        a.push(value.clone());
        held(2);
        assert_eq!(before.len(), 1, "a clone does not see a later push");
        // Past the room: `a` moves to a buffer of its own, a copy of each.
        a.push(value.clone());
        held(2 + 3);
        assert_eq!(a.len(), 3);
        // An older clone's push moves it too, its one value copied.
        let mut b = before.clone();
        b.push(value.clone());
        held(2 + 3 + 2);
        // The first buffer goes with the last clone reading it, its two
        // values with it.
        drop(before);
        held(3 + 2);
        drop(a);
        held(2);
        assert_eq!(b.iter().map(|v| **v).sum::<u32>(), 14);
        drop(b);
        held(0);
    }

    /// A value whose drop panics, let go while a push moves the column to a
    /// buffer of its own: every value made is dropped once, none that was
    /// never written (the review's case; the first version dropped a slot
    /// it had claimed and not written).
    #[test]
    fn a_drop_that_panics_while_a_push_moves_leaves_nothing_unwritten() {
        use std::panic::{AssertUnwindSafe, catch_unwind};
        use std::sync::atomic::AtomicUsize;
        static MADE: AtomicUsize = AtomicUsize::new(0);
        static DROPPED: AtomicUsize = AtomicUsize::new(0);
        struct Bomb(bool);
        impl Bomb {
            fn new(armed: bool) -> Bomb {
                MADE.fetch_add(1, Ordering::SeqCst);
                Bomb(armed)
            }
        }
        impl Clone for Bomb {
            fn clone(&self) -> Bomb {
                Bomb::new(false)
            }
        }
        impl Drop for Bomb {
            fn drop(&mut self) {
                DROPPED.fetch_add(1, Ordering::SeqCst);
                if std::mem::take(&mut self.0) {
                    panic!("a drop that panics");
                }
            }
        }
        let mut column: Column<Bomb> = Column::with_capacity(1);
        column.push(Bomb::new(true));
        // No room: the push moves, and the old buffer's armed value goes.
        let pushed = catch_unwind(AssertUnwindSafe(|| column.push(Bomb::new(false))));
        assert!(pushed.is_err());
        assert_eq!(
            column.len(),
            2,
            "the push took place before the old value went"
        );
        drop(column);
        assert_eq!(DROPPED.load(Ordering::SeqCst), MADE.load(Ordering::SeqCst));
    }

    /// A reader on another thread holds snapshot after snapshot while the
    /// writer pushes: every snapshot reads back exactly what it had.
    #[test]
    fn snapshots_read_on_another_thread_stay_whole() {
        let (send, receive) = std::sync::mpsc::sync_channel::<Column<u64>>(4);
        let reader = std::thread::spawn(move || {
            let mut kept = Vec::new();
            for snapshot in receive {
                kept.push(snapshot);
                for s in &kept {
                    assert!(s.iter().enumerate().all(|(i, &v)| v == i as u64 * 3));
                }
                if kept.len() > 8 {
                    kept.remove(0);
                }
            }
            kept.len()
        });
        let mut column = Column::new();
        for round in 0..200u64 {
            for i in 0..round {
                let at = column.len() as u64;
                column.push(at * 3);
                let _ = i;
            }
            send.send(column.clone()).expect("reader alive");
        }
        drop(send);
        assert!(reader.join().expect("reader") > 0);
        assert_eq!(column.len(), (0..200).sum::<usize>());
    }
}
