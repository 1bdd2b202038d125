//! The memory this process may use: the smallest of its cgroup's limits (v2 `memory.max`, v1
//! `memory.limit_in_bytes`, on its own cgroup and every parent) and the machine's RAM.
//!
//! Why: work sized in absolute bytes at start-up (the allocator's pre-touch,
//! [`crate::allocator::pretouch`]) must not by itself push a collector in a small container over
//! its limit and get it killed before it has accepted a request.

use std::path::{Path, PathBuf};

/// A limit at or above this many bytes means "no limit" (cgroup v1 writes `PAGE_COUNTER_MAX`
/// pages, about 2^63, when none is set).
const UNLIMITED: u64 = 1 << 60;

/// The memory limit of this process, if any is known: the smallest cgroup limit on the way from
/// its cgroup to the root, or the machine's RAM.
pub fn memory_limit() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let files = limit_files(&cgroups, Path::new("/sys/fs/cgroup"));
    let cgroup = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter_map(|text| parse_limit(&text))
        .min();
    [cgroup, mem_total(&meminfo)].into_iter().flatten().min()
}

/// A limit file's value: bytes, or `None` for `max` (v2) or a value that means no limit (v1).
fn parse_limit(text: &str) -> Option<u64> {
    let bytes: u64 = text.trim().parse().ok()?;
    (bytes < UNLIMITED).then_some(bytes)
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The limit files that apply to a process with this `/proc/self/cgroup`, under the cgroup
/// mount `root`: its own cgroup's and every parent's, for the v2 hierarchy (`0::/path`, mounted
/// at `root` or at `root/unified`) and the v1 memory controller (`N:memory:/path`, mounted at
/// `root/memory`). Files that do not exist are left to the reader.
fn limit_files(proc_self_cgroup: &str, root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for line in proc_self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (mounts, file): (Vec<PathBuf>, &str) = if controllers.is_empty() {
            (vec![root.to_path_buf(), root.join("unified")], "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            (vec![root.join("memory")], "memory.limit_in_bytes")
        } else {
            continue;
        };
        // The cgroup's own directory and each parent's, up to the mount's root. A path with
        // `..` in it (it comes from the kernel, but is not trusted) is not followed.
        let relative = path.trim_start_matches('/');
        if relative.split('/').any(|p| p == "..") {
            continue;
        }
        let mut levels: Vec<&str> = relative.split('/').filter(|p| !p.is_empty()).collect();
        loop {
            for mount in &mounts {
                let mut dir = mount.clone();
                dir.extend(&levels);
                files.push(dir.join(file));
            }
            if levels.pop().is_none() {
                break;
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_and_no_limit_is_none() {
        assert_eq!(parse_limit("536870912\n"), Some(512 << 20));
        assert_eq!(parse_limit("max\n"), None);
        // cgroup v1's "no limit" (PAGE_COUNTER_MAX pages).
        assert_eq!(parse_limit("9223372036854771712\n"), None);
        assert_eq!(parse_limit(""), None);
    }

    #[test]
    fn mem_total_is_read_in_bytes() {
        let meminfo = "MemTotal:       24634644 kB\nMemFree:        23000000 kB\n";
        assert_eq!(mem_total(meminfo), Some(24_634_644 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn every_level_of_both_hierarchies_is_consulted() {
        let root = Path::new("/cg");
        let cgroups = "4:memory:/a/b\n3:cpu:/x\n0::/c\n";
        let files: Vec<String> = limit_files(cgroups, root)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            files,
            [
                "/cg/memory/a/b/memory.limit_in_bytes",
                "/cg/memory/a/memory.limit_in_bytes",
                "/cg/memory/memory.limit_in_bytes",
                "/cg/c/memory.max",
                "/cg/unified/c/memory.max",
                "/cg/memory.max",
                "/cg/unified/memory.max",
            ]
        );
        assert!(limit_files("0::/../../etc\n", root).is_empty());
    }

    #[test]
    fn this_machine_has_a_limit() {
        // MemTotal at least: every Linux machine has one.
        assert!(memory_limit().is_some_and(|b| b > 0));
    }
}
