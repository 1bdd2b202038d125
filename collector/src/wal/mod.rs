//! The write-ahead log: a request is acknowledged only once its converted batch is here (and,
//! under `--fsync always`, synced), so Parquet can be written later, off the request path, and a
//! crash loses nothing that was acknowledged.
//!
//! Layout: `<data>/wal/<first-seq, 20 digits>.wal` segments of framed records ([`frame`]) plus a
//! [`checkpoint`]. Each record has a sequence number, increasing across segments. The batcher
//! reports the lowest sequence number that is not yet in a committed Parquet file; everything
//! below is released: the checkpoint is advanced first, then whole segments below it are deleted.
//!
//! Group commit: appends take the state lock only to write; fsync happens under a separate lock
//! on a duplicate file handle, so requests arriving while one fsync runs are covered by the next.

pub mod checkpoint;
pub mod frame;
pub mod ipc;

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use checkpoint::Checkpoint;
use frame::Frame;

use crate::config::FsyncPolicy;
use crate::layout::fsync_dir;

/// What can go wrong in the WAL. All are storage problems on the collector's side.
#[derive(Debug, thiserror::Error)]
pub enum WalError {
    #[error("wal i/o on {path}: {source}; check the data directory is writable and has space")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("wal checkpoint {path} is unreadable: {reason}; restore it or move the wal directory away to start a new one")]
    Checkpoint { path: String, reason: String },
    #[error("wal state lock poisoned by an earlier panic; restart the collector")]
    Poisoned,
}

impl WalError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> WalError {
        WalError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

#[derive(Debug)]
struct Segment {
    path: PathBuf,
    last_seq: Option<u64>,
    bytes: u64,
}

struct OpenSegment {
    file: File,
    bytes: u64,
}

struct State {
    segments: Vec<Segment>,
    current: Option<OpenSegment>,
    next_seq: u64,
    durable_below: u64,
    /// Highest sequence number written to the current file (for the fsync bookkeeping).
    written_below: u64,
}

/// The write-ahead log of one data directory.
pub struct Wal {
    dir: PathBuf,
    epoch: String,
    policy: FsyncPolicy,
    segment_bytes: u64,
    state: Mutex<State>,
    sync_lock: Mutex<()>,
    /// Every record with a smaller sequence number is fsynced.
    synced_below: AtomicU64,
    bytes_on_disk: AtomicU64,
}

impl Wal {
    /// Open (or create) the WAL under `dir`, calling `replay(seq, payload)` for every intact
    /// record not yet durable in Parquet, in sequence order. A torn tail of the last segment
    /// (a crash mid-append: never acknowledged) is truncated.
    pub fn open(
        dir: &Path,
        policy: FsyncPolicy,
        segment_bytes: u64,
        mut replay: impl FnMut(u64, Vec<u8>),
    ) -> Result<Wal, WalError> {
        let checkpoint = Checkpoint::load_or_create(dir)?;
        let mut names: Vec<(u64, PathBuf)> = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| WalError::io(dir, e))? {
            let entry = entry.map_err(|e| WalError::io(dir, e))?;
            let path = entry.path();
            let first = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".wal"))
                .and_then(|n| n.parse::<u64>().ok());
            if let Some(first) = first {
                names.push((first, path));
            }
        }
        names.sort();
        let count = names.len();
        let mut segments = Vec::with_capacity(count);
        let mut next_seq = checkpoint.durable_below;
        let mut total = 0u64;
        for (i, (_, path)) in names.into_iter().enumerate() {
            let is_last = i + 1 == count;
            let seg = scan_segment(&path, is_last, checkpoint.durable_below, &mut replay)?;
            match seg.last_seq {
                Some(last) => next_seq = next_seq.max(last + 1),
                None => {
                    // Created but never written (a crash right after rotation): its name could
                    // be reused by the next segment, so remove it.
                    std::fs::remove_file(&seg.path).map_err(|e| WalError::io(&seg.path, e))?;
                    continue;
                }
            }
            total += seg.bytes;
            segments.push(seg);
        }
        Ok(Wal {
            dir: dir.to_path_buf(),
            epoch: checkpoint.epoch,
            policy,
            segment_bytes,
            state: Mutex::new(State {
                segments,
                current: None,
                next_seq,
                durable_below: checkpoint.durable_below,
                written_below: next_seq,
            }),
            sync_lock: Mutex::new(()),
            synced_below: AtomicU64::new(next_seq),
            bytes_on_disk: AtomicU64::new(total),
        })
    }

    /// This WAL's identity (see [`Checkpoint::epoch`]).
    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    /// Bytes currently held in WAL segments.
    pub fn bytes_on_disk(&self) -> u64 {
        self.bytes_on_disk.load(Ordering::Relaxed)
    }

    /// Append one record and, still holding the append lock, call `then(seq)`, so whatever
    /// `then` enqueues is in exactly WAL order. Does not fsync: call [`Wal::commit`].
    pub fn append<T>(
        &self,
        payload: &[u8],
        then: impl FnOnce(u64) -> T,
    ) -> Result<(u64, T), WalError> {
        let mut st = self.state.lock().map_err(|_| WalError::Poisoned)?;
        let seq = st.next_seq;
        let rotate = st
            .current
            .as_ref()
            .is_some_and(|c| c.bytes >= self.segment_bytes);
        if rotate {
            if let Some(old) = st.current.take() {
                if self.policy != FsyncPolicy::Never {
                    let path = st
                        .segments
                        .last()
                        .map(|s| s.path.clone())
                        .unwrap_or_default();
                    old.file.sync_data().map_err(|e| WalError::io(&path, e))?;
                }
            }
        }
        if st.current.is_none() {
            let path = self.dir.join(format!("{seq:020}.wal"));
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| WalError::io(&path, e))?;
            fsync_dir(&self.dir).map_err(|e| WalError::io(&self.dir, e))?;
            st.segments.push(Segment {
                path,
                last_seq: None,
                bytes: 0,
            });
            st.current = Some(OpenSegment { file, bytes: 0 });
        }
        let seg_path = st
            .segments
            .last()
            .map(|s| s.path.clone())
            .unwrap_or_default();
        // Header and payload are written as they are: no copy of the payload into a frame buffer.
        let header = frame::frame_header(seq, payload).map_err(|e| WalError::io(&seg_path, e))?;
        let frame_len = (frame::HEADER_LEN + payload.len()) as u64;
        let Some(cur) = st.current.as_mut() else {
            return Err(WalError::Poisoned);
        };
        let written = cur
            .file
            .write_all(&header)
            .and_then(|()| cur.file.write_all(payload));
        if let Err(e) = written {
            // Cut the partial record off so later records in this segment stay readable; if even
            // that fails, stop using the segment (the scan stops at its torn tail).
            let _ = cur.file.set_len(cur.bytes);
            st.current = None;
            return Err(WalError::io(&seg_path, e));
        }
        cur.bytes += frame_len;
        st.next_seq = seq + 1;
        st.written_below = seq + 1;
        if let Some(seg) = st.segments.last_mut() {
            seg.last_seq = Some(seq);
            seg.bytes += frame_len;
        }
        self.bytes_on_disk.fetch_add(frame_len, Ordering::Relaxed);
        let out = then(seq);
        Ok((seq, out))
    }

    /// Make record `seq` as durable as the fsync policy promises before it is acknowledged:
    /// under `always` this returns once an fsync covering it has completed.
    pub fn commit(&self, seq: u64) -> Result<(), WalError> {
        if self.policy == FsyncPolicy::Always {
            self.sync_through(seq)?;
        }
        Ok(())
    }

    /// Fsync whatever has been appended (used by the interval syncer and at shutdown).
    pub fn sync_all(&self) -> Result<(), WalError> {
        let written = self
            .state
            .lock()
            .map_err(|_| WalError::Poisoned)?
            .written_below;
        if written == 0 {
            return Ok(());
        }
        self.sync_through(written - 1)
    }

    fn sync_through(&self, seq: u64) -> Result<(), WalError> {
        if self.synced_below.load(Ordering::Acquire) > seq {
            return Ok(());
        }
        let _guard = self.sync_lock.lock().map_err(|_| WalError::Poisoned)?;
        if self.synced_below.load(Ordering::Acquire) > seq {
            return Ok(()); // another request's fsync covered us while we waited
        }
        let (file, upto, path) = {
            let st = self.state.lock().map_err(|_| WalError::Poisoned)?;
            let path = st
                .segments
                .last()
                .map(|s| s.path.clone())
                .unwrap_or_default();
            let file = match &st.current {
                Some(c) => Some(c.file.try_clone().map_err(|e| WalError::io(&path, e))?),
                None => None,
            };
            (file, st.written_below, path)
        };
        // Earlier segments were synced when they were rotated out.
        if let Some(file) = file {
            file.sync_data().map_err(|e| WalError::io(&path, e))?;
        }
        self.synced_below.fetch_max(upto, Ordering::AcqRel);
        Ok(())
    }

    /// Every record below `durable_below` is in committed Parquet: advance the checkpoint, then
    /// delete the segments it fully covers.
    pub fn release_below(&self, durable_below: u64) -> Result<(), WalError> {
        let mut st = self.state.lock().map_err(|_| WalError::Poisoned)?;
        if durable_below <= st.durable_below {
            return Ok(());
        }
        Checkpoint {
            epoch: self.epoch.clone(),
            durable_below,
        }
        .store(&self.dir)?;
        st.durable_below = durable_below;
        let last_index = st.segments.len().saturating_sub(1);
        let mut keep = Vec::with_capacity(st.segments.len());
        let mut dropped_current = false;
        let segments = std::mem::take(&mut st.segments);
        for (i, seg) in segments.into_iter().enumerate() {
            let covered = seg.last_seq.is_none_or(|l| l < durable_below);
            // An empty current segment is kept: it is where the next record goes.
            let is_current = i == last_index && st.current.is_some();
            if covered && !(is_current && seg.last_seq.is_none()) {
                match std::fs::remove_file(&seg.path) {
                    Ok(()) => {
                        self.bytes_on_disk.fetch_sub(seg.bytes, Ordering::Relaxed);
                        dropped_current |= is_current;
                        continue;
                    }
                    Err(e) => {
                        // Harmless: replay skips it by the checkpoint; retried on the next release.
                        tracing::warn!(segment = %seg.path.display(), error = %e, "wal: cannot delete a released segment");
                    }
                }
            }
            keep.push(seg);
        }
        st.segments = keep;
        if dropped_current {
            st.current = None;
        }
        Ok(())
    }
}

fn scan_segment(
    path: &Path,
    is_last: bool,
    durable_below: u64,
    replay: &mut impl FnMut(u64, Vec<u8>),
) -> Result<Segment, WalError> {
    let file = File::open(path).map_err(|e| WalError::io(path, e))?;
    let mut reader = BufReader::new(file);
    let mut good_bytes = 0u64;
    let mut last_seq = None;
    loop {
        match frame::read_frame(&mut reader).map_err(|e| WalError::io(path, e))? {
            Frame::Record { seq, payload } => {
                good_bytes += (frame::HEADER_LEN + payload.len()) as u64;
                last_seq = Some(seq);
                if seq >= durable_below {
                    replay(seq, payload);
                }
            }
            Frame::End => break,
            Frame::Torn { reason } => {
                if is_last {
                    tracing::warn!(segment = %path.display(), offset = good_bytes, reason, "wal: truncating torn tail (a record that was never acknowledged)");
                    let f = OpenOptions::new()
                        .write(true)
                        .open(path)
                        .map_err(|e| WalError::io(path, e))?;
                    f.set_len(good_bytes).map_err(|e| WalError::io(path, e))?;
                    f.sync_all().map_err(|e| WalError::io(path, e))?;
                } else {
                    tracing::error!(segment = %path.display(), offset = good_bytes, reason, "wal: damaged segment; records after this offset cannot be replayed");
                }
                break;
            }
        }
    }
    Ok(Segment {
        path: path.to_path_buf(),
        last_seq,
        bytes: good_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replayed(dir: &Path) -> (Wal, Vec<(u64, Vec<u8>)>) {
        let mut got = Vec::new();
        let wal = Wal::open(dir, FsyncPolicy::Always, 64, |s, p| got.push((s, p))).unwrap();
        (wal, got)
    }

    #[test]
    fn records_replay_until_released() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (wal, got) = replayed(dir.path());
            assert!(got.is_empty());
            for i in 0..5u8 {
                let (seq, ()) = wal.append(&[i; 40], |_| ()).unwrap();
                wal.commit(seq).unwrap();
                assert_eq!(seq, u64::from(i));
            }
            wal.release_below(2).unwrap();
        }
        let (wal, got) = replayed(dir.path());
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), vec![2, 3, 4]);
        assert_eq!(got[0].1, vec![2u8; 40]);
        let (seq, ()) = wal.append(b"x", |_| ()).unwrap();
        assert_eq!(seq, 5, "sequence numbers continue after a restart");
        wal.release_below(6).unwrap();
        drop(wal);
        let (wal, got) = replayed(dir.path());
        assert!(got.is_empty());
        // Segments fully below the checkpoint are gone.
        let wal_files = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "wal")
            })
            .count();
        assert_eq!(wal_files, 0);
        assert_eq!(wal.bytes_on_disk(), 0);
        let (seq, ()) = wal.append(b"y", |_| ()).unwrap();
        assert_eq!(
            seq, 6,
            "the checkpoint keeps the sequence when no segment is left"
        );
    }

    #[test]
    fn torn_tail_is_truncated_and_not_replayed() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (wal, _) = replayed(dir.path());
            wal.append(b"good", |_| ()).unwrap();
            wal.sync_all().unwrap();
        }
        let seg = dir.path().join(format!("{:020}.wal", 0));
        let mut f = OpenOptions::new().append(true).open(&seg).unwrap();
        f.write_all(&[0x57, 0x4c, 0x50, 0x54, 9, 0, 0]).unwrap();
        drop(f);
        let (wal, got) = replayed(dir.path());
        assert_eq!(got, vec![(0, b"good".to_vec())]);
        let (seq, ()) = wal.append(b"next", |_| ()).unwrap();
        assert_eq!(seq, 1);
        drop(wal);
        let (_, got) = replayed(dir.path());
        assert_eq!(got.len(), 2);
    }
}
