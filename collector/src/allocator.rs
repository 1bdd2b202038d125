//! mimalloc settings for the collector process, applied once at start-up by the binaries that
//! use mimalloc as their global allocator (`tripline`, `tripline-collector`, `examples/collect`,
//! `examples/request_path`).
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
//! An operator's `MIMALLOC_*` environment variable wins over the value set here, so each setting
//! can still be changed (or undone) without a rebuild.

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
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> c_long;
    fn mi_version() -> c_int;
}

/// Apply [`SETTINGS`] (each unless its `MIMALLOC_*` variable is set). Does nothing when the
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
    fn configure_sets_each_option_unless_the_environment_does() {
        configure();
        for (s, (env, value)) in SETTINGS.iter().zip(current()) {
            if std::env::var_os(env).is_none() {
                assert_eq!(value, s.value, "{env}");
            }
        }
    }
}
