//! Zeroed allocations for the shared table's arrays of atomics: the id
//! index's segments, the hint cache's levels and the shards' block biases
//! all start as zeros (null pointers, empty entries), so they are taken
//! from `alloc_zeroed` (`calloc`), not written zero by zero.
//!
//! The allocator then clears only memory it cannot vouch for: a block
//! fresh from the kernel (a large one is mapped on its own) is already
//! zero and is not written at all, so its pages are touched only when
//! entries are written (the unused end of the index's last segment, half
//! of it on average, never is). Reused heap memory is cleared as before, inside
//! `calloc`: no more instructions either way. Measured (`benches/README.md`,
//! session 26), a fresh process interning 100k distinct strings into a
//! `SharedStringTable` (8 shards): 6,432-6,480 KiB more resident memory
//! before, 6,108-6,224 KiB after (three runs each, about 3 bytes per
//! string; 70k strings: 5,320 -> 4,860 KiB, 140k: 9,720 -> 8,880 KiB);
//! the heap bytes (`memory_usage`) are the same, and so are the
//! instructions of `profile thread-stream strtab-shared` (178.05M and
//! 177.97M), whose process had freed enough to be served from reused
//! memory.

use core::alloc::Layout;

/// Types whose value with all bytes zero is valid (and is their empty
/// value: a null pointer, an empty hint).
///
/// # Safety
///
/// An implementor must be valid, and hold no resource, when all its bytes
/// are zero.
pub(crate) unsafe trait Zeroable: Sized {}

// SAFETY: `AtomicPtr<T>` has the same in-memory representation as `*mut
// T`, and the all-zero pointer is null.
unsafe impl<T> Zeroable for std::sync::atomic::AtomicPtr<T> {}

/// `len` zeroed `T`s (`len > 0`), or `None` if the allocator refuses or
/// the size overflows `isize`.
pub(crate) fn zeroed_slice<T: Zeroable>(len: usize) -> Option<Box<[T]>> {
    let layout = Layout::array::<T>(len).ok()?;
    if layout.size() == 0 {
        // `alloc_zeroed` must not be asked for zero bytes; no caller does.
        return None;
    }
    // SAFETY: `layout` has a non-zero size.
    let first = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if first.is_null() {
        return None;
    }
    // SAFETY: `first` is a live allocation of the global allocator with
    // `Layout::array::<T>(len)`, the layout a `Box<[T]>` of `len` elements
    // is freed with; its bytes are all zero, a valid `T` for each of the
    // `len` elements (`Zeroable`); the box owns it from here.
    Some(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(first, len)) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicPtr, Ordering};

    #[test]
    fn zeroed_slices_read_as_zero_and_refuse_what_they_cannot_hold() {
        let s = zeroed_slice::<AtomicPtr<u8>>(1000).unwrap();
        assert_eq!(s.len(), 1000);
        assert!(s.iter().all(|p| p.load(Ordering::Relaxed).is_null()));
        // Larger than `isize::MAX` bytes: refused, not attempted.
        assert!(zeroed_slice::<AtomicPtr<u8>>(usize::MAX / 4).is_none());
    }
}
