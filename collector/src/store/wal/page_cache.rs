//! Dropping the WAL's synced bytes from the page cache.
//!
//! Why: the WAL is written once and read back only after a crash or a failed Parquet write, yet
//! every byte written stays in the page cache until its segment is released, up to a part file's
//! age later (60 s by default: gigabytes at full load). Each append then lands on a page the
//! kernel has to find afresh, and on the 2-core VM of BENCHMARKS.md ("Collector CPU in the
//! kernel, session 11") the kernel's copy into those pages (`copy_folio_from_iter_atomic`) was
//! 31% of the collector's CPU under load; `dd` shows the same VM writing a new file 10-30x
//! slower than rewriting pages it used a moment ago. Once an fsync has made them durable, the
//! pages are of no further use: telling the kernel so (`POSIX_FADV_DONTNEED`) frees them at
//! once, and the next appends reuse them. It also stops the WAL from pushing out of the cache
//! the Parquet files the analyzer reads.
//!
//! Only clean pages are dropped, so nothing unsynced is touched; the call is advice, and a
//! failure changes nothing but the cache.

use std::fs::File;

/// Ask the kernel to drop `file`'s cached pages (the synced ones; dirty pages are left).
#[cfg(target_os = "linux")]
pub(crate) fn drop_synced_pages(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor; offset 0 and length 0 mean the whole file; the call only
    // advises the kernel and touches no memory of ours.
    let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
}

/// Elsewhere the page cache is left alone.
#[cfg(not(target_os = "linux"))]
pub(crate) fn drop_synced_pages(_file: &File) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    /// Pages of `file` resident in the page cache (mincore over a read-only mapping).
    fn resident_pages(file: &File, len: usize) -> usize {
        let page = 4096;
        // SAFETY: a read-only shared mapping of `len` bytes of an open file, unmapped below;
        // mincore writes one byte per page into `vec`, which has that many.
        unsafe {
            let addr = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            assert_ne!(addr, libc::MAP_FAILED);
            let mut vec = vec![0u8; len.div_ceil(page)];
            assert_eq!(libc::mincore(addr, len, vec.as_mut_ptr()), 0);
            libc::munmap(addr, len);
            vec.iter().filter(|b| **b & 1 == 1).count()
        }
    }

    fn on_tmpfs(file: &File) -> bool {
        // SAFETY: fstatfs fills the zeroed struct for an open descriptor.
        unsafe {
            let mut s: libc::statfs = std::mem::zeroed();
            libc::fstatfs(file.as_raw_fd(), &mut s) == 0 && s.f_type == libc::TMPFS_MAGIC
        }
    }

    #[test]
    fn synced_pages_leave_the_cache_and_the_bytes_stay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("segment.wal");
        // Readable too: the mapping that counts resident pages needs it.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let data: Vec<u8> = (0..(4 << 20)).map(|i| (i % 251) as u8).collect();
        file.write_all(&data).unwrap();
        file.sync_data().unwrap();
        if on_tmpfs(&file) {
            // tmpfs has no backing store: its pages cannot be dropped. Nothing to measure.
            eprintln!("skipped: {} is on tmpfs", path.display());
            return;
        }
        let before = resident_pages(&file, data.len());
        assert!(before > 0, "a file just written is in the page cache");
        drop_synced_pages(&file);
        let after = resident_pages(&file, data.len());
        assert!(
            after < before / 10,
            "{after} of {before} pages still cached"
        );
        assert_eq!(std::fs::read(&path).unwrap(), data);
    }
}
