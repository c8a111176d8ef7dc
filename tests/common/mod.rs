//! Helpers shared by the test files (each includes this module with
//! `mod common;` and uses what it needs).

#![allow(dead_code)]

use strtab::StringId;

/// A small deterministic PRNG (splitmix64): the tests' random sequences
/// are the same on every run.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (not 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Whether the suite runs under `.ci/valgrind.sh` (which sets
/// `STRTAB_VALGRIND=1`).
pub(crate) fn under_valgrind() -> bool {
    std::env::var_os("STRTAB_VALGRIND").is_some()
}

/// `native` normally, `small` under valgrind, `tiny` under Miri.
pub(crate) fn scaled(native: usize, small: usize, tiny: usize) -> usize {
    if cfg!(miri) {
        tiny
    } else if under_valgrind() {
        small
    } else {
        native
    }
}

/// The id with index `i`.
pub(crate) fn id(i: usize) -> StringId {
    StringId::from_u32(u32::try_from(i).unwrap())
}
