//! The memory report's burst scenario under jemalloc or mimalloc (one per
//! build, chosen by cargo feature): prints markdown rows like
//! `cargo run --release --example memory`'s burst section. Each run is a
//! child process of its own, so one run's freed memory does not blur the
//! next one's RSS.
//!
//! "trim" is the allocator's own call to return free memory to the OS:
//! jemalloc's `arena.<all>.purge` mallctl, mimalloc's `mi_collect(true)`.
#![allow(unsafe_code)] // the allocators' C entry points

#[path = "../../examples/common/burst.rs"]
#[allow(dead_code)]
mod burst;

#[cfg(all(feature = "jemalloc", feature = "mimalloc"))]
compile_error!("choose one of the features jemalloc and mimalloc");

#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "jemalloc")]
const NAME: &str = "jemalloc";
#[cfg(feature = "mimalloc")]
const NAME: &str = "mimalloc";
#[cfg(not(any(feature = "jemalloc", feature = "mimalloc")))]
const NAME: &str = "system";

fn trim() {
    #[cfg(feature = "jemalloc")]
    {
        // MALLCTL_ARENAS_ALL is 4096.
        let name = c"arena.4096.purge";
        // SAFETY: a documented mallctl that takes no arguments.
        unsafe {
            tikv_jemalloc_sys::mallctl(
                name.as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            );
        }
    }
    #[cfg(feature = "mimalloc")]
    // SAFETY: mi_collect only releases free memory.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [n, mode] = args.as_slice() {
        let n: usize = n.parse().expect("a burst size");
        let shrink = mode == "shrink";
        let b = burst::run(n, shrink, &trim);
        println!("{}", burst::row(NAME, n, shrink, &b));
        return;
    }
    println!("{}", burst::HEADER);
    let exe = std::env::current_exe().expect("current_exe");
    for n in [50_000, 500_000] {
        for mode in ["clear", "shrink"] {
            let out = std::process::Command::new(&exe)
                .args([n.to_string(), mode.to_owned()])
                .output()
                .expect("spawn child");
            assert!(out.status.success(), "child failed");
            print!("{}", String::from_utf8_lossy(&out.stdout));
        }
    }
}
