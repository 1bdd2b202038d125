//! The Parquet writer thread yields the CPU to the acknowledgement path.
//!
//! Writing Parquet is off the acknowledgement path (a batch is acknowledged once it is in the
//! WAL), but it comes in bursts: closing a 64k-row row group means a few hundred milliseconds of
//! zstd and encoding on one core. On a small machine that burst took a core away from the
//! requests waiting to be decoded and written to the WAL, and their acknowledgements waited with
//! them (the tail of the acknowledgement latency). The writer therefore runs at a lower CPU
//! priority (a higher nice value) than the request threads: when both want the CPU the requests
//! win, and the writer uses what is left. It cannot be starved into losing data: a writer that
//! falls behind fills the bounded queue, and new requests are then refused (429) until it has
//! caught up, as under any overload.

/// The writer thread's nice value (the request threads keep the process's, normally 0). CFS
/// gives a nice-10 thread about a tenth of a nice-0 thread's share when they compete.
pub const WRITER_NICE: i32 = 10;

/// Lower the calling thread's CPU priority to [`WRITER_NICE`] (never raise it). Best effort: where the platform
/// has no per-thread priority, or the call fails, the thread keeps its priority (a debug log
/// says so); nothing else depends on it.
pub fn lower_current_thread_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid and setpriority have no memory-safety preconditions; on Linux a
        // PRIO_PROCESS priority set on a thread id applies to that thread only.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
        // A thread already nicer than that (the whole collector run under `nice 19`) keeps its
        // priority: this only ever lowers it.
        if unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) } >= WRITER_NICE {
            return;
        }
        let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, WRITER_NICE) };
        if rc != 0 {
            tracing::debug!(
                error = %std::io::Error::last_os_error(),
                "could not lower the parquet writer thread's priority; it keeps the default"
            );
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The nice value of the calling thread, as the kernel reports it (field 19 of
    /// /proc/thread-self/stat, counted after the command name).
    fn own_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
        // fields from the 3rd (state) on; nice is the 19th field overall
        after_comm.split(' ').nth(19 - 3).unwrap().parse().unwrap()
    }

    #[test]
    fn lowers_only_the_calling_thread() {
        let before = own_nice();
        let in_thread = std::thread::spawn(|| {
            lower_current_thread_priority();
            own_nice()
        })
        .join()
        .unwrap();
        assert_eq!(in_thread, WRITER_NICE.max(before));
        assert_eq!(own_nice(), before, "the spawning thread keeps its priority");
    }
}
