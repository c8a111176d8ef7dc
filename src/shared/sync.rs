//! The atomics of the publish protocol, from `std` or, in loom model
//! checks (`RUSTFLAGS="--cfg loom" cargo test --lib`, see `.ci/loom.sh`),
//! from `loom`, which explores every interleaving and every value the C++
//! memory model lets each load see.

#[cfg(all(loom, test))]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU8, AtomicU64, Ordering};
#[cfg(not(all(loom, test)))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicU64, Ordering};
