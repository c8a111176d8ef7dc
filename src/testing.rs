//! Helpers shared by the crate's unit tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A hasher that panics on `"boom"` once armed: for the tests that a
/// panicking user hasher leaves a table as it was.
#[derive(Clone, Default)]
pub(crate) struct Armed(Arc<AtomicBool>);

impl Armed {
    /// Makes every later hash of `"boom"` panic (or not).
    pub(crate) fn arm(&self, armed: bool) {
        self.0.store(armed, Ordering::Relaxed);
    }
}

pub(crate) struct ArmedHasher(std::hash::DefaultHasher, bool, bool);

impl core::hash::BuildHasher for Armed {
    type Hasher = ArmedHasher;
    fn build_hasher(&self) -> ArmedHasher {
        ArmedHasher(
            std::hash::DefaultHasher::new(),
            self.0.load(Ordering::Relaxed),
            false,
        )
    }
}

impl core::hash::Hasher for ArmedHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.2 |= bytes == b"boom";
        self.0.write(bytes);
    }
    fn finish(&self) -> u64 {
        assert!(!(self.1 && self.2), "armed hasher saw \"boom\"");
        self.0.finish()
    }
}
