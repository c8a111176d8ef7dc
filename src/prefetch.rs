//! A prefetch hint, the one `unsafe` outside the arena.

/// Asks the CPU to start loading the cache line at `p`.
///
/// A hint only: it never faults, never reads memory architecturally and
/// has no effect on results, so `p` may be any address (even a dangling
/// or wrongly guessed one). A no-op on targets other than x86-64 and under
/// Miri.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `_mm_prefetch` is `unsafe` only because it needs the SSE
    // target feature, which is part of the x86-64 baseline. The
    // instruction cannot fault and does not dereference `p` in the
    // language's sense, so any pointer value is acceptable.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}
