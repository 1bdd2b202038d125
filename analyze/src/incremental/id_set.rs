//! The ids of an increment's new spans and traces, in bounded memory.
//!
//! Why: a later `check --since last` keeps a finding only if it touches the new part files
//! ([`super::new_findings`]), so it asks "is this span (trace) id in the new files?" of every
//! candidate finding and of the spans of each window. Held in a hash set, those ids grew with
//! the increment: a day of spans between two runs is tens of millions of ids, hundreds of MB,
//! whatever `--window-spans` says. Here at most [`IdSet::max_held`] ids are in memory: past that
//! they go as sorted runs to the spill directory (`--spill-dir`, as spilled findings do), are
//! merged into one sorted file once every new file was read, and are looked up by binary search
//! in it: a sparse index of every [`BLOCK`]th id stays in memory, one block of the file is read
//! per lookup. An increment under the bound never touches the disk.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Ids held in memory per set before they spill, unless `TRIPLINE_SPILL_IDS` says otherwise:
/// 32 MB of trace ids, 16 MB of span ids.
pub const DEFAULT_MAX_HELD_IDS: usize = 2_000_000;

/// Ids per block of the merged file: the sparse index holds the first id of each block, a
/// lookup reads one block (16 KiB of trace ids).
pub const BLOCK: usize = 1024;

/// Spilling the ids or reading them back failed.
#[derive(Debug, thiserror::Error)]
pub enum IdSetError {
    #[error("cannot create a directory for the new spans' ids in {dir}: {source}; point TMPDIR (or --spill-dir) at a writable directory with room for them")]
    Create {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write the new spans' ids to {path}: {source}; point TMPDIR (or --spill-dir) at a writable directory with room for them")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read the new spans' ids back from {path}: {source}; was the temporary directory removed while check ran?")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The merged, sorted, duplicate-free ids on disk.
#[derive(Debug)]
struct OnDisk<const N: usize> {
    path: PathBuf,
    file: Mutex<File>,
    /// Ids in the file.
    len: usize,
    /// The first id of each block.
    index: Vec<[u8; N]>,
}

/// A set of `N`-byte ids: filled with [`IdSet::insert`], then [`IdSet::finish`]ed once, then
/// asked with [`IdSet::contains`].
#[derive(Debug)]
pub struct IdSet<const N: usize> {
    max_held: usize,
    parent: PathBuf,
    /// Unsorted while filling; sorted and duplicate-free once finished (when nothing spilled).
    held: Vec<[u8; N]>,
    dir: Option<tempfile::TempDir>,
    runs: Vec<PathBuf>,
    /// Runs written, merged or not.
    spilled: usize,
    disk: Option<OnDisk<N>>,
}

/// The 16-byte key of a conversation id (any length) in an [`IdSet`]: two 64-bit hashes of it
/// under fixed, different seeds. A run's set of conversations then costs what its span ids cost
/// and spills the same way. Two conversations that collide (odds about n² / 2¹²⁹) would only
/// make one's findings count as touching the new data (printed unless an earlier run reported
/// them).
pub fn conversation_key(id: &str) -> [u8; 16] {
    use std::hash::BuildHasher;
    let hash = |seed| foldhash::quality::FixedState::with_seed(seed).hash_one(id);
    let mut key = [0; 16];
    key[..8].copy_from_slice(&hash(0x7472_6970_6c69_6e65).to_be_bytes());
    key[8..].copy_from_slice(&hash(0x636f_6e76_6572_7361).to_be_bytes());
    key
}

/// `TRIPLINE_SPILL_IDS` when set to a number, else [`DEFAULT_MAX_HELD_IDS`].
pub fn max_held_from_env() -> usize {
    std::env::var("TRIPLINE_SPILL_IDS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(DEFAULT_MAX_HELD_IDS)
}

impl<const N: usize> IdSet<N> {
    /// An empty set holding at most `max_held` ids (at least 1) in memory, spilling into a
    /// temporary directory under `dir` (`None`: the system temp dir).
    pub fn new(max_held: usize, dir: Option<&Path>) -> Self {
        Self {
            max_held: max_held.max(1),
            parent: dir.map_or_else(std::env::temp_dir, Path::to_path_buf),
            held: Vec::new(),
            dir: None,
            runs: Vec::new(),
            spilled: 0,
            disk: None,
        }
    }

    /// The most ids held in memory.
    pub fn max_held(&self) -> usize {
        self.max_held
    }

    /// Sorted runs written so far (0: everything is in memory).
    pub fn spilled_runs(&self) -> usize {
        self.spilled
    }

    /// Add `id`; spills a sorted run when the bound is reached.
    pub fn insert(&mut self, id: [u8; N]) -> Result<(), IdSetError> {
        self.held.push(id);
        if self.held.len() >= self.max_held {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes the held ids as one sorted run and empties memory.
    fn spill(&mut self) -> Result<(), IdSetError> {
        self.held.sort_unstable();
        self.held.dedup();
        let path = self
            .spill_dir()?
            .join(format!("run-{:05}.bin", self.runs.len()));
        let write = || -> io::Result<()> {
            let mut w = BufWriter::with_capacity(1 << 16, File::create(&path)?);
            for id in &self.held {
                w.write_all(id)?;
            }
            // A temporary file: flushed, not synced (it is of no use after a crash).
            w.flush()
        };
        write().map_err(|source| IdSetError::Write {
            path: path.clone(),
            source,
        })?;
        self.runs.push(path);
        self.spilled += 1;
        self.held.clear();
        Ok(())
    }

    fn spill_dir(&mut self) -> Result<PathBuf, IdSetError> {
        if self.dir.is_none() {
            let dir = tempfile::Builder::new()
                .prefix("tripline-ids-")
                .tempdir_in(&self.parent)
                .map_err(|source| IdSetError::Create {
                    dir: self.parent.clone(),
                    source,
                })?;
            self.dir = Some(dir);
        }
        Ok(self
            .dir
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default())
    }

    /// Ends filling: sorts what is held, or (when anything spilled) merges every run into one
    /// sorted file and keeps only its sparse index in memory.
    pub fn finish(&mut self) -> Result<(), IdSetError> {
        if self.runs.is_empty() {
            self.held.sort_unstable();
            self.held.dedup();
            self.held.shrink_to_fit();
            return Ok(());
        }
        if !self.held.is_empty() {
            self.spill()?;
        }
        self.held = Vec::new();
        let path = self.spill_dir()?.join("ids.bin");
        let runs = std::mem::take(&mut self.runs);
        let (len, index) = merge(&runs, &path)?;
        for run in &runs {
            let _ = std::fs::remove_file(run);
        }
        let file = File::open(&path).map_err(|source| IdSetError::Read {
            path: path.clone(),
            source,
        })?;
        self.disk = Some(OnDisk {
            path,
            file: Mutex::new(file),
            len,
            index,
        });
        Ok(())
    }

    /// Whether `id` is in the set (call [`Self::finish`] first).
    pub fn contains(&self, id: &[u8; N]) -> Result<bool, IdSetError> {
        let Some(disk) = &self.disk else {
            return Ok(self.held.binary_search(id).is_ok());
        };
        let block = disk.index.partition_point(|first| first <= id);
        if block == 0 {
            return Ok(false);
        }
        let start = (block - 1) * BLOCK;
        let count = BLOCK.min(disk.len - start);
        let mut buf = vec![0u8; count * N];
        let mut read = || -> io::Result<()> {
            let mut file = disk
                .file
                .lock()
                .map_err(|_| io::Error::other("a lookup panicked while holding the file"))?;
            file.seek(SeekFrom::Start((start * N) as u64))?;
            file.read_exact(&mut buf)
        };
        read().map_err(|source| IdSetError::Read {
            path: disk.path.clone(),
            source,
        })?;
        let mut lo = 0;
        let mut hi = count;
        while lo < hi {
            let mid = (lo + hi) / 2;
            match buf[mid * N..(mid + 1) * N].cmp(id.as_slice()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(true),
            }
        }
        Ok(false)
    }
}

/// The next id of a run, `None` at its end.
fn next_id<const N: usize>(
    r: &mut BufReader<File>,
    path: &Path,
) -> Result<Option<[u8; N]>, IdSetError> {
    let mut id = [0u8; N];
    match r.read_exact(&mut id) {
        Ok(()) => Ok(Some(id)),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(source) => Err(IdSetError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// k-way merge of sorted runs into `out`, without duplicates: the number of ids written and the
/// first id of every [`BLOCK`].
fn merge<const N: usize>(
    runs: &[PathBuf],
    out: &Path,
) -> Result<(usize, Vec<[u8; N]>), IdSetError> {
    let mut readers = Vec::with_capacity(runs.len());
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (i, path) in runs.iter().enumerate() {
        let file = File::open(path).map_err(|source| IdSetError::Read {
            path: path.clone(),
            source,
        })?;
        let mut r = BufReader::with_capacity(1 << 16, file);
        if let Some(id) = next_id::<N>(&mut r, path)? {
            heap.push(Reverse((id, i)));
        }
        readers.push(r);
    }
    let write_err = |source| IdSetError::Write {
        path: out.to_path_buf(),
        source,
    };
    let mut w = BufWriter::with_capacity(1 << 16, File::create(out).map_err(write_err)?);
    let mut len = 0;
    let mut index = Vec::new();
    let mut last: Option<[u8; N]> = None;
    while let Some(Reverse((id, i))) = heap.pop() {
        if last != Some(id) {
            if len % BLOCK == 0 {
                index.push(id);
            }
            w.write_all(&id).map_err(write_err)?;
            len += 1;
            last = Some(id);
        }
        if let Some(next) = next_id::<N>(&mut readers[i], &runs[i])? {
            heap.push(Reverse((next, i)));
        }
    }
    w.flush().map_err(write_err)?;
    Ok((len, index))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random ids (splitmix64), with repeats.
    fn ids(n: usize, seed: u64) -> Vec<[u8; 16]> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                // Every 7th id repeats an earlier one: duplicates across runs.
                let v = if i % 7 == 6 { z % 1000 } else { z };
                let mut id = [0u8; 16];
                id[..8].copy_from_slice(&v.to_be_bytes());
                id[8..].copy_from_slice(&(!v).to_le_bytes());
                id
            })
            .collect()
    }

    fn filled(max_held: usize, dir: &Path, values: &[[u8; 16]]) -> IdSet<16> {
        let mut set = IdSet::new(max_held, Some(dir));
        for id in values {
            set.insert(*id).unwrap();
        }
        set.finish().unwrap();
        set
    }

    #[test]
    fn spilled_and_in_memory_sets_answer_alike() {
        let tmp = tempfile::tempdir().unwrap();
        let inserted = ids(20_000, 1);
        let absent = ids(5_000, 2);
        let memory = filled(1_000_000, tmp.path(), &inserted);
        assert_eq!(memory.spilled_runs(), 0, "under the bound nothing spills");
        // A bound of 700: about 29 runs, merged into one file of several blocks.
        let spilled = filled(700, tmp.path(), &inserted);
        assert!(spilled.spilled_runs() > 0);
        let on_disk = spilled.disk.as_ref().unwrap();
        let mut distinct = inserted.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(on_disk.len, distinct.len(), "duplicates merged away");
        assert_eq!(on_disk.index.len(), distinct.len().div_ceil(BLOCK));
        for id in &inserted {
            assert!(memory.contains(id).unwrap());
            assert!(spilled.contains(id).unwrap(), "{id:?}");
        }
        let mut misses = 0;
        for id in &absent {
            let expected = distinct.binary_search(id).is_ok();
            assert_eq!(memory.contains(id).unwrap(), expected);
            assert_eq!(spilled.contains(id).unwrap(), expected);
            misses += usize::from(!expected);
        }
        assert!(misses > 4_000, "the probe set is mostly absent: {misses}");
        // Below the smallest and above the largest id.
        assert!(!spilled.contains(&[0u8; 16]).unwrap() || distinct[0] == [0u8; 16]);
        assert!(!spilled.contains(&[0xff; 16]).unwrap());
    }

    #[test]
    fn conversation_keys_are_stable_distinct_and_spill_like_ids() {
        // The same id, the same key, in every call (the set is filled and asked in one run).
        assert_eq!(conversation_key("conv-1"), conversation_key("conv-1"));
        let names: Vec<String> = (0..50_000).map(|i| format!("conv-{i}")).collect();
        let mut keys: Vec<[u8; 16]> = names.iter().map(|n| conversation_key(n)).collect();
        keys.push(conversation_key(""));
        keys.push(conversation_key(&"x".repeat(10_000)));
        let mut distinct = keys.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            keys.len(),
            "no two of these ids share a key"
        );
        // Held and spilled sets of keys answer alike for present and absent conversations.
        let tmp = tempfile::tempdir().unwrap();
        let (held, absent) = keys.split_at(30_000);
        let spilled = filled(1_000, tmp.path(), held);
        assert!(spilled.spilled_runs() > 0);
        assert!(held.iter().all(|k| spilled.contains(k).unwrap()));
        assert!(!absent.iter().any(|k| spilled.contains(k).unwrap()));
    }

    #[test]
    fn the_runs_are_removed_once_merged_and_the_directory_on_drop() {
        let tmp = tempfile::tempdir().unwrap();
        let set = filled(100, tmp.path(), &ids(1_000, 3));
        let dir = set.dir.as_ref().unwrap().path().to_path_buf();
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["ids.bin".to_string()]);
        drop(set);
        assert!(!dir.exists());
    }

    #[test]
    fn an_unwritable_spill_dir_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        let not_a_dir = tmp.path().join("file");
        std::fs::write(&not_a_dir, b"x").unwrap();
        let mut set = IdSet::<8>::new(2, Some(&not_a_dir));
        set.insert([1; 8]).unwrap();
        let e = set.insert([2; 8]).unwrap_err();
        assert!(matches!(e, IdSetError::Create { .. }), "{e:?}");
        assert!(
            e.to_string().contains(&not_a_dir.display().to_string()),
            "{e}"
        );
        assert!(e.to_string().contains("--spill-dir"), "{e}");
    }

    #[test]
    fn a_removed_id_file_is_an_error_not_a_miss() {
        let tmp = tempfile::tempdir().unwrap();
        let set = filled(100, tmp.path(), &ids(1_000, 4));
        let path = set.disk.as_ref().unwrap().path.clone();
        // Cut the file under the open handle: a lookup past its end fails to read.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        let e = set.contains(&[0xff; 16]).unwrap_err();
        assert!(matches!(e, IdSetError::Read { .. }), "{e:?}");
    }
}
