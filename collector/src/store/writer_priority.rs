//! `--writer-nice`: the Parquet writer thread can yield the CPU to the acknowledgement path.
//!
//! Writing Parquet is off the acknowledgement path (a batch is acknowledged once it is in the
//! WAL), but it comes in bursts: closing a 64k-row row group is a few hundred milliseconds of
//! zstd and encoding on one core. On a small machine that burst takes a core from the requests
//! waiting to be decoded and written to the WAL, and their acknowledgements wait with them.
//! Run at a higher nice value, the writer loses those contests and uses what the requests leave.
//!
//! It is opt-in because it is a trade, measured on 2 cores (BENCHMARKS.md, session 7): at nice
//! 10 the p99 acknowledgement latency at 80% of peak fell from 51 to 27 ms, but at saturation the
//! starved writer let the bounded queue fill, and requests were refused with 429 that a writer
//! at nice 0 would have taken (16 connections x 1,000-span bodies: 2,124 refusals and 47.7k
//! acknowledged spans per CPU-second, against none and 64.4k). Nothing is lost either way: a
//! writer that falls behind fills the queue and new requests are refused until it catches up.

/// Raise the calling thread's nice value to `nice` (never lower it: a thread already nicer,
/// e.g. a collector run under `nice 19`, keeps its own). Best effort: where the platform has no
/// per-thread priority, or the call fails, the thread keeps its priority (a debug log says so);
/// nothing else depends on it.
pub fn lower_current_thread_priority(nice: i32) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid, getpriority and setpriority have no memory-safety preconditions; on
        // Linux a PRIO_PROCESS priority of a thread id applies to that thread only.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
        if unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) } >= nice {
            return;
        }
        let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) };
        if rc != 0 {
            tracing::debug!(
                error = %std::io::Error::last_os_error(),
                nice,
                "could not lower the parquet writer thread's priority; it keeps the default"
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The nice value of the calling thread, as the kernel reports it.
    fn own_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        testkit::proc::nice_in_stat(&stat).expect("a stat line")
    }

    #[test]
    fn lowers_only_the_calling_thread_and_never_raises_it() {
        let before = own_nice();
        let in_thread = |nice: i32| {
            std::thread::spawn(move || {
                lower_current_thread_priority(nice);
                own_nice()
            })
            .join()
            .unwrap()
        };
        assert_eq!(in_thread(10), 10.max(before));
        assert_eq!(in_thread(0), before, "nice 0 leaves the thread as it was");
        assert_eq!(own_nice(), before, "the spawning thread keeps its priority");
    }
}
