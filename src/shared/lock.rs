//! The shard lock: a mutex whose common unlock is a plain `Release`
//! store, not a read-modify-write.
//!
//! An insertion writes its record, hash slot, index entry and hint to
//! lines that are often not in the cache. On x86 any atomic
//! read-modify-write (the `lock`-prefixed compare-exchange or add that
//! `parking_lot`'s unlock is) waits until all of those stores have
//! reached the cache; a plain store does not. With `parking_lot`'s mutex
//! the unlock was a quarter of the locked path's time (`perf`, one
//! thread of the concurrent stream); `benches/README.md` has the
//! measured effect of this lock.
//!
//! The price is that an unlock cannot learn, without a read-modify-write,
//! whether a thread sleeps on the lock. So waiters sleep only while the
//! holder has said, with [`RawShardLock::mark_slow`], that it may take
//! long: before it allocates (hash-table growth, a new arena chunk, an
//! index segment), all of which go through the table's growth lock and
//! may wait for it. Otherwise the holder only compares strings and
//! writes a few words, and waiters spin briefly, then yield their time
//! slice until the lock is free (`parking_lot_core`'s `SpinWait`, then
//! `yield_now`). Waiters on a slow holder also spin first (the same
//! `SpinWait` rounds) and sleep only after: most "slow" sections are a
//! chunk or segment allocation that ends within the spin, and a sleep
//! costs two context switches (on the replay stream with two threads,
//! spinning first halved the switches and raised throughput 1-3%,
//! `benches/README.md`).
//!
//! The state is a byte: `UNLOCKED`, `LOCKED`, or `SLOW` (held, marked
//! slow), to which a waiter about to sleep adds `SLEEPERS`. While the
//! lock is held and not marked slow, only its holder writes the state
//! (waiters compare-exchange only from `UNLOCKED`, or from `SLOW`), so
//! the holder's own load of `LOCKED` tells it that nobody sleeps and its
//! unlock can be a store. A slow holder unlocks with a swap and, if
//! `SLEEPERS` was set, wakes every sleeper (`parking_lot_core::unpark_all`);
//! a sleeper re-checks the state under `parking_lot_core`'s queue lock
//! before it sleeps, so no wake-up is lost. `parking_lot_core` allocates
//! its queue table the first time a thread sleeps, as `parking_lot`'s
//! own mutex does; a lock no thread slept on never calls it.
//!
//! The protocol is model-checked with loom (`loom_tests` below,
//! `.ci/loom.sh`; under loom a sleeper yields instead of sleeping).

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};

use super::sync::{AtomicU8, Ordering};

/// The state when no thread holds the lock.
const UNLOCKED: u8 = 0;
/// Held.
const LOCKED: u8 = 1;
/// Held by a thread that may take long: waiters sleep.
const SLOW: u8 = 2;
/// Added to [`SLOW`] by a waiter about to sleep: the unlock must wake it.
const SLEEPERS: u8 = 4;

/// A mutex around a shard: see the module docs. `#[repr(C)]`, the lock
/// word first, so that the value's first bytes share its cache line
/// ([`ShardMutex::VALUE_OFFSET`]).
#[repr(C)]
pub(crate) struct ShardMutex<T> {
    raw: RawShardLock,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through a `ShardGuard`, and one
// thread at a time holds one (`RawShardLock::lock`), so sharing the mutex
// shares `T` only as a `Mutex<T>` does: `T: Send` suffices.
#[allow(unsafe_code)]
unsafe impl<T: Send> Sync for ShardMutex<T> {}

impl<T> ShardMutex<T> {
    /// An unlocked mutex around `value`.
    pub(crate) fn new(value: T) -> ShardMutex<T> {
        ShardMutex {
            raw: RawShardLock::new(),
            value: UnsafeCell::new(value),
        }
    }

    /// Where the value starts in the mutex: after the lock word.
    pub(crate) const VALUE_OFFSET: usize = core::mem::offset_of!(ShardMutex<T>, value);

    /// Waits for the lock and takes it.
    #[inline]
    pub(crate) fn lock(&self) -> ShardGuard<'_, T> {
        self.raw.lock();
        ShardGuard {
            mutex: self,
            _marker: PhantomData,
        }
    }

    /// The value, consuming the mutex.
    pub(crate) fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: core::fmt::Debug> core::fmt::Debug for ShardMutex<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ShardMutex")
            .field("raw", &self.raw)
            .finish_non_exhaustive()
    }
}

/// The holder's access to a [`ShardMutex`]'s value; unlocks when dropped.
/// Neither `Send` nor `Sync` (the marker; `std`'s guard is `Sync` when
/// `T` is): a guard shared between threads would hand each a `&T`.
pub(crate) struct ShardGuard<'a, T> {
    mutex: &'a ShardMutex<T>,
    _marker: PhantomData<*mut T>,
}

impl<T> ShardGuard<'_, T> {
    /// Tells waiters that this holder may take long (it is about to
    /// allocate), so that they sleep rather than spin until it unlocks.
    #[inline]
    pub(crate) fn mark_slow(&self) {
        self.mutex.raw.mark_slow();
    }

    /// The value and a [`SlowMarker`] at once, for a holder that must be
    /// able to [`mark_slow`](Self::mark_slow) while it holds the value
    /// mutably (from a callback called in the middle of a change).
    #[inline]
    pub(crate) fn split(&mut self) -> (&mut T, SlowMarker<'_>) {
        let marker = SlowMarker(&self.mutex.raw);
        (&mut **self, marker)
    }
}

/// [`ShardGuard::mark_slow`] for the holder of a guard borrowed by
/// [`ShardGuard::split`].
pub(crate) struct SlowMarker<'g>(&'g RawShardLock);

impl SlowMarker<'_> {
    /// As [`ShardGuard::mark_slow`].
    #[inline]
    pub(crate) fn mark_slow(&self) {
        self.0.mark_slow();
    }
}

impl<T> Deref for ShardGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard's thread holds the lock, so no other thread
        // reaches the value until the guard is dropped.
        #[allow(unsafe_code)]
        unsafe {
            &*self.mutex.value.get()
        }
    }
}

impl<T> DerefMut for ShardGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and the guard is borrowed mutably, so this
        // is the only reference made through it.
        #[allow(unsafe_code)]
        unsafe {
            &mut *self.mutex.value.get()
        }
    }
}

impl<T> Drop for ShardGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.mutex.raw.unlock();
    }
}

/// The lock word of a [`ShardMutex`]: see the module docs. One thread at
/// a time returns from `lock` (a compare-exchange from `UNLOCKED`, with
/// `Acquire`) until it calls `unlock` (a `Release` store), so each holder
/// sees every write of the ones before. Model-checked in `loom_tests`.
#[derive(Debug)]
pub(crate) struct RawShardLock {
    state: AtomicU8,
}

impl RawShardLock {
    fn new() -> RawShardLock {
        RawShardLock {
            state: AtomicU8::new(UNLOCKED),
        }
    }

    /// Waits for the lock and takes it.
    #[inline]
    fn lock(&self) {
        if self
            .state
            .compare_exchange_weak(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
    }

    /// Releases the lock, which this thread holds.
    #[inline]
    fn unlock(&self) {
        // While the lock is held and not marked slow, only the holder
        // writes the state (waiters add `SLEEPERS` only to `SLOW`), so
        // `LOCKED` here means that no thread sleeps or can start to.
        if self.state.load(Ordering::Relaxed) == LOCKED {
            self.state.store(UNLOCKED, Ordering::Release);
        } else {
            self.unlock_slow();
        }
    }

    /// [`unlock`](Self::unlock) by a holder that marked itself slow:
    /// wakes the threads that went to sleep meanwhile.
    #[cold]
    #[inline(never)]
    fn unlock_slow(&self) {
        if self.state.swap(UNLOCKED, Ordering::Release) & SLEEPERS != 0 {
            self.wake_sleepers();
        }
    }

    /// Whether some thread holds the lock.
    fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) != UNLOCKED
    }

    /// Tells waiters that the holder may take long, so that they sleep
    /// rather than spin. Only the lock's holder may call it; again is a
    /// no-op.
    #[inline]
    fn mark_slow(&self) {
        debug_assert!(self.is_locked());
        // `LOCKED`: no other thread writes the state (as in `unlock`).
        // Already slow: waiters may have added `SLEEPERS`, which a store
        // would erase.
        if self.state.load(Ordering::Relaxed) == LOCKED {
            self.state.store(SLOW, Ordering::Relaxed);
        }
    }

    /// The key of this lock's sleepers in `parking_lot_core`'s queues.
    #[cfg(not(all(loom, test)))]
    fn key(&self) -> usize {
        core::ptr::from_ref(self).addr()
    }

    /// Waits until the lock is free and takes it.
    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let mut spin = parking_lot_core::SpinWait::new();
        loop {
            let state = self.state.load(Ordering::Relaxed);
            if state == UNLOCKED {
                if self
                    .state
                    .compare_exchange_weak(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
            } else if state & SLOW != 0 {
                if spin.spin() {
                    continue;
                }
                // Announce the sleep first, so that the unlock wakes it.
                if state & SLEEPERS != 0
                    || self
                        .state
                        .compare_exchange_weak(
                            SLOW,
                            SLOW | SLEEPERS,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        )
                        .is_ok()
                {
                    self.sleep();
                    spin.reset();
                }
            } else if !spin.spin() {
                yield_now();
            }
        }
    }

    /// Sleeps until the slow holder unlocks (or returns at once if it
    /// already has).
    #[cfg(not(all(loom, test)))]
    fn sleep(&self) {
        // SAFETY: the key is this lock's address, which no other
        // synchronisation primitive uses as its key while the lock lives
        // (`parking_lot_core`'s condition); `validate` and `timed_out` do
        // not panic and do not call into `parking_lot_core`. `validate`
        // runs under the queue lock, which `unpark_all` takes after the
        // unlock's swap saw `SLEEPERS`: either `validate` sees the swap's
        // `UNLOCKED` and does not sleep, or this thread is queued before
        // `unpark_all` looks, so no wake-up is lost.
        #[allow(unsafe_code)]
        unsafe {
            parking_lot_core::park(
                self.key(),
                || self.state.load(Ordering::Relaxed) == SLOW | SLEEPERS,
                || {},
                |_, _| {},
                parking_lot_core::DEFAULT_PARK_TOKEN,
                None,
            );
        }
    }

    /// Under loom, which cannot run `parking_lot_core`: yields until the
    /// slow holder unlocks.
    #[cfg(all(loom, test))]
    fn sleep(&self) {
        while self.state.load(Ordering::Relaxed) == SLOW | SLEEPERS {
            yield_now();
        }
    }

    /// Wakes every thread sleeping on this lock.
    fn wake_sleepers(&self) {
        #[cfg(not(all(loom, test)))]
        // SAFETY: the key is this lock's address, as in `sleep`.
        #[allow(unsafe_code)]
        unsafe {
            parking_lot_core::unpark_all(self.key(), parking_lot_core::DEFAULT_UNPARK_TOKEN);
        }
    }
}

/// Gives up the rest of the time slice: from loom under loom, so that its
/// scheduler runs the other threads.
#[inline]
fn yield_now() {
    #[cfg(all(loom, test))]
    loom::thread::yield_now();
    #[cfg(not(all(loom, test)))]
    std::thread::yield_now();
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;
    use std::time::Duration;

    /// Threads that take the lock, some marking themselves slow and
    /// sleeping meanwhile, lose no increment, and no waiter stays asleep.
    #[test]
    fn mutual_exclusion_with_slow_holders() {
        // Fewer rounds under Miri, which interprets every step.
        let (rounds, slow_every) = if cfg!(miri) { (40, 8) } else { (2_000, 64) };
        let m = Arc::new(ShardMutex::new(0u64));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let m = Arc::clone(&m);
                thread::spawn(move || {
                    for i in 0..rounds {
                        let mut g = m.lock();
                        if (i + t) % slow_every == 0 {
                            g.mark_slow();
                            thread::sleep(Duration::from_micros(50));
                        }
                        // A read and a write apart: a second holder in
                        // between would lose an increment.
                        let v = *g;
                        thread::yield_now();
                        *g = v + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(!m.raw.is_locked());
        assert_eq!(*m.lock(), 4 * rounds);
    }
}

/// Model checks of the lock: mutual exclusion, each holder's writes
/// visible to the next, and waiters of a holder that marked itself slow
/// getting the lock. Run by `.ci/loom.sh`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use loom::thread;

    #[test]
    fn holders_exclude_each_other() {
        loom::model(|| {
            let shared = Arc::new((RawShardLock::new(), UnsafeCell::new(0u32)));
            let threads: Vec<_> = (0..2)
                .map(|t| {
                    let shared = Arc::clone(&shared);
                    thread::spawn(move || {
                        let (lock, cell) = &*shared;
                        lock.lock();
                        if t == 0 {
                            lock.mark_slow();
                        }
                        // loom fails the model if another thread's access
                        // to the cell is not ordered with this one.
                        // SAFETY: loom checks the exclusion.
                        cell.with_mut(|v| unsafe { *v += 1 });
                        lock.unlock();
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            let (lock, cell) = &*shared;
            lock.lock();
            // SAFETY: loom checks the exclusion.
            assert_eq!(cell.with(|v| unsafe { *v }), 2);
            lock.unlock();
        });
    }
}
