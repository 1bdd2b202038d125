//! mimalloc settings, applied once at start-up by the binaries that use mimalloc as their global
//! allocator (`tripline collect`, `tripline-collector`, `examples/collect`,
//! `examples/request_path`), and by the analyzer's windowed commands once their first pass is over
//! ([`release_then_keep`]).
//!
//! Why: a whole-process profile of `tripline collect` under load (BENCHMARKS.md, session 7)
//! spent 9.6% of the request threads' CPU in the kernel zeroing fresh transparent huge pages that
//! mimalloc had just been handed, and 3% more on the writer thread: each request allocates a few
//! megabytes (column builders, the WAL record, the Parquet pages) and frees them; mimalloc gives
//! the freed memory back to the OS after its purge delay and faults fresh (zeroed) pages in for
//! the next requests. The settings below keep freed memory for reuse instead: 3.3× fewer page
//! faults under a fixed load (BENCHMARKS.md, session 8; the CPU change was inside a busy
//! machine's noise). Peak RSS stayed within run-to-run noise; what changes is that the process
//! keeps its high-water mark instead of returning it to the OS between bursts.
//!
//! The analyzer has the same pattern at a larger grain: each window of a `check` builds a few
//! hundred megabytes of rows and model and frees them before the next. With mimalloc's default
//! purge delay the freed memory went back to the OS and the next window faulted fresh huge pages in
//! (the kernel's `clear_page_rep` was 3.5% of a 10M-span `check`'s CPU samples). Keeping it cut
//! that `check` from 18.40-18.71 s to 17.55-17.79 s and its system time from 1.8-2.7 s to 1.2 s
//! (BENCHMARKS.md, session 51). But pass 1, before the windows, grows with the store, and kept from
//! the start its freed memory stayed resident beside the windows': 1,770 MiB through the windows of
//! a 100M-span `check`, against a 1,238 MiB peak before. So the analyzer keeps the default until
//! pass 1 is over, then [`release_then_keep`] gives back what was freed and keeps what is freed
//! from then on.
//!
//! An operator's `MIMALLOC_*` environment variable wins over the value set here, so each setting
//! can still be changed (or undone) without a rebuild.
//!
//! C code in the process does not allocate through mimalloc: zstd makes and frees a
//! decompression context for every column chunk the Parquet reader opens, from glibc's heap,
//! about 2,300 file openings in a 10M-span `check`. Page faults under `sysmalloc` and zstd's
//! context set-up were 0.8% of that `check`'s CPU samples: glibc gives the top of its heap back
//! to the OS once enough of it is free, and faults it in again for the next contexts. So
//! [`release_then_keep`] also tells glibc to keep its heap ([`keep_glibc_heap`]): over seven
//! alternated runs system time went from 1.18–2.03 s to 0.87–1.09 s and the median wall from
//! 17.55 s to 17.10 s (BENCHMARKS.md, session 54). `glibc.malloc.*` tunables in `GLIBC_TUNABLES`
//! win here too.
//!
//! [`pretouch`] is the other half: since freed memory stays with the process, the memory the
//! request path will need can be faulted in once at start-up, before the listeners accept,
//! instead of on the first requests. On the benchmark VM (a Firecracker guest whose balloon
//! hands freed pages back to the host) the first touch of a fresh 2 MiB huge page costs about
//! ten times a later touch (256 MiB: 0.35–0.88 s the first time, 0.03–0.04 s again), and a
//! collector started into full load spent 37% of its first 1.5 s there, which was the whole tail
//! of its acknowledgement latency (BENCHMARKS.md, session 36). Java's `-XX:+AlwaysPreTouch`
//! does the same for its heap.

use std::ffi::{c_int, c_long};

// The crate that builds and links mimalloc: the functions declared below are its symbols.
use libmimalloc_sys as _;

/// One mimalloc option this module sets: its number in mimalloc's `mi_option_t` (v3), the
/// environment variable mimalloc reads it from, and the value.
#[derive(Debug, Clone, Copy)]
struct Setting {
    option: c_int,
    env: &'static str,
    value: c_long,
}

/// `mi_option_purge_delay` in mimalloc 3.x (`include/mimalloc.h`).
const PURGE_DELAY: c_int = 15;

/// The settings applied by [`configure`].
const SETTINGS: &[Setting] = &[
    // Never purge (decommit) freed memory: reuse it. mimalloc's default is 1,000 ms, which under
    // a steady load decommitted and re-faulted the same megabytes over and over.
    Setting {
        option: PURGE_DELAY,
        env: "MIMALLOC_PURGE_DELAY",
        value: -1,
    },
];

/// The mimalloc version whose option numbers [`SETTINGS`] uses (`MI_MALLOC_VERSION` / 100).
const MIMALLOC_MAJOR_MINOR: c_int = 303;

unsafe extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_collect(force: bool);
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> c_long;
    fn mi_version() -> c_int;
}

/// Apply `SETTINGS` (each unless its `MIMALLOC_*` variable is set). Does nothing when the
/// linked mimalloc is not the version the option numbers were written for.
pub fn configure() {
    // SAFETY: `mi_version` takes no argument and only returns a constant.
    if unsafe { mi_version() } / 100 != MIMALLOC_MAJOR_MINOR {
        return;
    }
    for s in SETTINGS {
        if std::env::var_os(s.env).is_none() {
            // SAFETY: a valid option number of this mimalloc version (checked above); setting
            // an option is a plain store mimalloc reads on its next purge decision.
            unsafe { mi_option_set(s.option, s.value) };
        }
    }
}

/// Gives the memory freed so far back to the OS, then keeps what is freed from now on
/// ([`configure`], and glibc's heap: [`keep_glibc_heap`]). For a process whose first phase grows
/// with its input and is over, and whose next phases free and allocate the same amounts again:
/// `check` and `report` after pass 1
/// (`analyze::phase`). Only ranges freed under a purge delay can be given back (mimalloc
/// schedules a purge when memory is freed, and a forced collection runs what is scheduled), so
/// only the process's first call gives memory back: a process that checks again and again
/// (`check --follow`, the MCP server) does not call it and keeps mimalloc's default, so that it
/// does not hold its first check's high-water mark while it waits (the `tripline` binary's
/// `main`).
pub fn release_then_keep() {
    keep_glibc_heap();
    // SAFETY: as in `configure`.
    if unsafe { mi_version() } / 100 != MIMALLOC_MAJOR_MINOR {
        return;
    }
    // SAFETY: takes a flag only; collects the calling thread's heap and runs the purges that are
    // scheduled, whatever their expiry.
    unsafe { mi_collect(true) };
    configure();
}

/// glibc malloc's settings for [`keep_glibc_heap`]: (`mallopt` parameter, value).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const GLIBC_SETTINGS: &[(c_int, c_int)] = &[
    // Free memory at the top of the heap is given back only beyond 256 MiB (default: 128 KiB,
    // raised as large blocks are freed).
    (libc::M_TRIM_THRESHOLD, 256 << 20),
    // Blocks up to 32 MiB come from the heap, not from an `mmap` of their own that `free`
    // unmaps. Set by hand, glibc no longer moves either threshold as large blocks are freed.
    (libc::M_MMAP_THRESHOLD, 32 << 20),
    // The heap grows by 16 MiB more than asked, so growing it is rare.
    (libc::M_TOP_PAD, 16 << 20),
];

/// Tells glibc malloc to keep the memory C code frees for reuse (see the module's docs), unless
/// `GLIBC_TUNABLES` sets any `glibc.malloc.*` tunable. Returns how many settings glibc accepted
/// (none off glibc).
pub fn keep_glibc_heap() -> usize {
    if operator_sets_malloc_tunables() {
        return 0;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        GLIBC_SETTINGS
            .iter()
            // SAFETY: `mallopt` takes two integers and changes glibc's own parameters; every
            // parameter here is one glibc documents, with a value in its range.
            .filter(|&&(param, value)| unsafe { libc::mallopt(param, value) } == 1)
            .count()
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        0
    }
}

/// Whether `GLIBC_TUNABLES` sets any `glibc.malloc.*` tunable, which [`keep_glibc_heap`] leaves
/// alone.
fn operator_sets_malloc_tunables() -> bool {
    std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc."))
}

/// What [`pretouch`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pretouched {
    /// Bytes allocated, written and freed again.
    pub bytes: usize,
    /// How long it took.
    pub elapsed: std::time::Duration,
}

/// Size of each block [`pretouch`] allocates: a huge page, so each block is one fault, and
/// well under mimalloc's singleton-page size, so the blocks come from (and go back to) the
/// arena the request path allocates from.
const PRETOUCH_BLOCK: usize = 2 << 20;

/// The share of the process's memory limit ([`crate::memory_limit`]) a pre-touch may take: a
/// quarter, so that in a small container the start-up leaves the request path most of the room.
const PRETOUCH_SHARE_OF_LIMIT: u64 = 4;

/// What to pre-touch when `asked` is asked for under a memory limit of `limit` bytes: at most
/// a quarter of the limit.
pub fn pretouch_budget(asked: usize, limit: Option<u64>) -> usize {
    limit.map_or(asked, |l| {
        asked.min(usize::try_from(l / PRETOUCH_SHARE_OF_LIMIT).unwrap_or(usize::MAX))
    })
}

/// Allocates `bytes` (rounded up to whole 2 MiB blocks) through the global allocator, writes
/// every page of it, and frees it again, so the process's allocator holds that much memory
/// already faulted in. Called once by `collect`, after [`configure`] (whose never-purge setting
/// is what keeps the memory) and before the listeners accept. Allocation failure is not an
/// error: whatever was touched before it still counts.
pub fn pretouch(bytes: usize) -> Pretouched {
    let start = std::time::Instant::now();
    let blocks = bytes.div_ceil(PRETOUCH_BLOCK);
    let mut held: Vec<Vec<u8>> = Vec::with_capacity(blocks);
    for _ in 0..blocks {
        let mut block: Vec<u8> = Vec::new();
        if block.try_reserve_exact(PRETOUCH_BLOCK).is_err() {
            break;
        }
        // One write per 4 KiB page faults the page in (a zeroing allocation might skip fresh
        // memory it knows is zero, and the fault with it); nothing is read back.
        for byte in block.spare_capacity_mut().iter_mut().step_by(4096) {
            byte.write(0xA5);
        }
        held.push(block);
    }
    let touched = held.len() * PRETOUCH_BLOCK;
    // All blocks are held until here, so they are distinct memory; freed together.
    drop(std::hint::black_box(held));
    Pretouched {
        bytes: touched,
        elapsed: start.elapsed(),
    }
}

/// The current value of each setting.
#[cfg(test)]
fn current() -> Vec<(&'static str, c_long)> {
    SETTINGS
        .iter()
        // SAFETY: as in `configure`.
        .map(|s| (s.env, unsafe { mi_option_get(s.option) }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_numbers_are_those_of_the_linked_mimalloc() {
        // A new mimalloc may renumber `mi_option_t`: this fails first, so SETTINGS is checked
        // against the new header before it is used.
        // SAFETY: as in `configure`.
        assert_eq!(unsafe { mi_version() } / 100, MIMALLOC_MAJOR_MINOR);
    }

    #[test]
    fn pretouch_rounds_up_to_whole_blocks_and_touches_nothing_for_zero() {
        assert_eq!(pretouch(0).bytes, 0);
        assert_eq!(pretouch(1).bytes, PRETOUCH_BLOCK);
        assert_eq!(pretouch(3 * PRETOUCH_BLOCK).bytes, 3 * PRETOUCH_BLOCK);
        assert_eq!(pretouch(3 * PRETOUCH_BLOCK + 1).bytes, 4 * PRETOUCH_BLOCK);
    }

    #[test]
    fn a_pretouch_takes_at_most_a_quarter_of_the_memory_limit() {
        const MIB: usize = 1 << 20;
        assert_eq!(pretouch_budget(256 * MIB, None), 256 * MIB);
        assert_eq!(pretouch_budget(256 * MIB, Some(24 << 30)), 256 * MIB);
        assert_eq!(pretouch_budget(256 * MIB, Some(512 << 20)), 128 * MIB);
        assert_eq!(pretouch_budget(256 * MIB, Some(0)), 0);
    }

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_takes_every_heap_setting_unless_the_environment_sets_malloc_tunables() {
        let expected = if operator_sets_malloc_tunables() {
            0
        } else {
            GLIBC_SETTINGS.len()
        };
        assert_eq!(keep_glibc_heap(), expected);
    }

    #[test]
    fn configure_sets_each_option_unless_the_environment_does() {
        configure();
        for (s, (env, value)) in SETTINGS.iter().zip(current()) {
            if std::env::var_os(env).is_none() {
                assert_eq!(value, s.value, "{env}");
            }
        }
    }
}
