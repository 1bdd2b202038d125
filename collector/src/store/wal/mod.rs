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
//! Nothing slow runs under the state lock, because every request's append waits for it: a new
//! segment's directory entry is made durable by the next fsync (before anything in the segment
//! is acknowledged), not by the append that created it, and a release writes the checkpoint and
//! deletes segments outside it (under its own lock), taking the state lock only to update the
//! bookkeeping.

pub mod checkpoint;
pub mod frame;
pub mod ipc;
mod page_cache;
pub mod record;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use checkpoint::Checkpoint;

use crate::config::FsyncPolicy;
use crate::store::durable_files::fsync_dir;
use schemas::layout;

/// What can go wrong in the WAL. All are storage problems on the collector's side.
#[derive(Debug, thiserror::Error)]
pub enum WalError {
    #[error("wal i/o on {path}: {source}; check the data directory is writable and has space")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("wal checkpoint {path} is unreadable: {reason}; it is rebuilt from the parquet files on the next start")]
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

/// An injected i/o error (fault-injection builds only).
#[cfg(feature = "failpoints")]
pub(crate) fn injected(point: &str) -> std::io::Error {
    std::io::Error::other(format!("injected fault at {point}"))
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
    /// The segment being appended to: always the last of `segments`.
    current: Option<OpenSegment>,
    /// Segments closed (rotated out, or abandoned after a failed write) whose records may not be
    /// fsynced yet: the next [`Wal::sync_through`] syncs them before it counts their records as
    /// durable.
    unsynced: Vec<(File, PathBuf)>,
    next_seq: u64,
    durable_below: u64,
    /// Highest sequence number written to the current file (for the fsync bookkeeping).
    written_below: u64,
    /// A segment was created since the last fsync: its directory entry is not durable yet, so the
    /// next [`Wal::sync_through`] fsyncs the directory before it counts any record as durable.
    dir_unsynced: bool,
}

/// The write-ahead log of one data directory.
pub struct Wal {
    dir: PathBuf,
    epoch: String,
    policy: FsyncPolicy,
    segment_bytes: u64,
    state: Mutex<State>,
    sync_lock: Mutex<()>,
    /// Serialises [`Wal::release_below`] (checkpoint write and segment deletion run outside the
    /// state lock).
    release_lock: Mutex<()>,
    /// Every record with a smaller sequence number is fsynced.
    synced_below: AtomicU64,
    bytes_on_disk: AtomicU64,
    /// Ranges of sequence numbers (inclusive) that damage made unreadable at open.
    lost: Vec<(u64, u64)>,
}

impl Wal {
    /// Open (or create) the WAL under `dir`, calling `replay(seq, payload)` for every intact
    /// record not yet durable in Parquet, in sequence order.
    ///
    /// A damaged frame costs that frame only: the scan resynchronises on the next intact frame
    /// and the sequence numbers in between are reported as lost ([`Wal::lost_records`], an error
    /// log). Only damage with no intact frame after it in the last segment is a torn tail (a
    /// crash mid-append: never acknowledged), which is truncated. New records always go to a
    /// new segment, never after damaged bytes.
    pub fn open(
        dir: &Path,
        policy: FsyncPolicy,
        segment_bytes: u64,
        mut replay: impl FnMut(u64, Vec<u8>),
    ) -> Result<Wal, WalError> {
        let checkpoint = Checkpoint::load_or_create(dir)?;
        let names = segment_names(dir)?;
        let count = names.len();
        let mut segments = Vec::with_capacity(count);
        let durable_below = checkpoint.durable_below;
        let mut next_seq = durable_below;
        let mut last_good: Option<u64> = None;
        let mut lost = Vec::new();
        let mut total = 0u64;
        for (i, (first, path)) in names.into_iter().enumerate() {
            let is_last = i + 1 == count;
            let bytes = std::fs::read(&path).map_err(|e| WalError::io(&path, e))?;
            let scan = scan_frames(&bytes, first, last_good, |seq, payload| {
                if seq >= durable_below {
                    if seq > next_seq {
                        lost.push((next_seq, seq - 1));
                    }
                    replay(seq, payload.to_vec());
                }
                next_seq = next_seq.max(seq + 1);
            });
            for d in &scan.skipped {
                tracing::error!(segment = %path.display(), offset = d.offset, bytes = d.len, reason = d.reason, "wal: damaged frame skipped; replay resumed at the next intact frame");
            }
            let mut size = bytes.len() as u64;
            if let Some((offset, reason)) = scan.tail {
                if is_last {
                    tracing::warn!(segment = %path.display(), offset, reason, "wal: truncating torn tail (a record that was never acknowledged)");
                    let f = OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .map_err(|e| WalError::io(&path, e))?;
                    f.set_len(offset as u64)
                        .map_err(|e| WalError::io(&path, e))?;
                    f.sync_all().map_err(|e| WalError::io(&path, e))?;
                    size = offset as u64;
                } else {
                    tracing::error!(segment = %path.display(), offset, reason, "wal: damaged end of a segment; records lost there are reported by sequence number");
                }
            }
            last_good = scan.last_seq.or(last_good);
            match scan.last_seq {
                Some(_) => {}
                None if size == 0 => {
                    // Created but never written (a crash right after rotation): its name could
                    // be reused by the next segment, so remove it.
                    std::fs::remove_file(&path).map_err(|e| WalError::io(&path, e))?;
                    continue;
                }
                None => {
                    // Nothing readable in it: keep the bytes for inspection, out of the way.
                    tracing::error!(segment = %path.display(), "wal: segment without one intact record; left on disk, not replayed");
                    continue;
                }
            }
            total += size;
            segments.push(Segment {
                path,
                last_seq: scan.last_seq,
                bytes: size,
            });
        }
        if !lost.is_empty() {
            let n: u64 = lost.iter().map(|(a, b)| b - a + 1).sum();
            let ranges = lost
                .iter()
                .map(|(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}..={b}")
                    }
                })
                .collect::<Vec<_>>()
                .join(",");
            tracing::error!(records = n, seqs = %ranges, dir = %dir.display(), "wal: acknowledged records lost to damaged frames; the other records are replayed");
        }
        Ok(Wal {
            dir: dir.to_path_buf(),
            epoch: checkpoint.epoch,
            policy,
            segment_bytes,
            state: Mutex::new(State {
                segments,
                current: None,
                unsynced: Vec::new(),
                next_seq,
                durable_below,
                written_below: next_seq,
                dir_unsynced: false,
            }),
            sync_lock: Mutex::new(()),
            release_lock: Mutex::new(()),
            synced_below: AtomicU64::new(next_seq),
            bytes_on_disk: AtomicU64::new(total),
            lost,
        })
    }

    /// This WAL's identity (see [`Checkpoint::epoch`]).
    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    /// The directory holding the segments (named in messages about rows kept there).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Sequence ranges (inclusive) found unreadable when the WAL was opened.
    pub fn lost_records(&self) -> &[(u64, u64)] {
        &self.lost
    }

    /// Bytes currently held in WAL segments.
    pub fn bytes_on_disk(&self) -> u64 {
        self.bytes_on_disk.load(Ordering::Relaxed)
    }

    /// Append one record and, still holding the append lock, call `then(seq)`, so whatever
    /// `then` enqueues is in exactly WAL order. Does not fsync: call [`Wal::commit`].
    ///
    /// On a failed write nothing is enqueued, the partial frame is cut off and the segment is
    /// closed; the next append starts a new segment (or reuses the same, still empty, one).
    pub fn append<T>(
        &self,
        payload: &[u8],
        then: impl FnOnce(u64) -> T,
    ) -> Result<(u64, T), WalError> {
        self.append_parts(&[payload], then)
    }

    /// [`Wal::append`] of a payload made of `parts`, written one after the other: the record is
    /// their concatenation, read back as one payload. A request record's small header and its
    /// body go in as they are, so the body is not first copied into one buffer (1.5% of the
    /// instructions of a span's request path and write, BENCHMARKS.md session 42).
    pub fn append_parts<T>(
        &self,
        parts: &[&[u8]],
        then: impl FnOnce(u64) -> T,
    ) -> Result<(u64, T), WalError> {
        let mut st = self.state.lock().map_err(|_| WalError::Poisoned)?;
        let seq = st.next_seq;
        let rotate = st
            .current
            .as_ref()
            .is_some_and(|c| c.bytes >= self.segment_bytes);
        if rotate {
            self.close_current(&mut st);
        }
        if st.current.is_none() {
            let path = self.dir.join(layout::wal_segment_name(seq));
            let file = self.create_segment(&path)?;
            // A segment abandoned empty after a failed write has this very name: reuse its entry.
            if st.segments.last().map(|s| &s.path) != Some(&path) {
                st.segments.push(Segment {
                    path,
                    last_seq: None,
                    bytes: 0,
                });
            }
            st.current = Some(OpenSegment { file, bytes: 0 });
            st.dir_unsynced = true;
        }
        let seg_path = st
            .segments
            .last()
            .map(|s| s.path.clone())
            .unwrap_or_default();
        // Header and payload are written as they are: no copy of the payload into a frame buffer.
        let header =
            frame::frame_header_parts(seq, parts).map_err(|e| WalError::io(&seg_path, e))?;
        let payload_len: usize = parts.iter().map(|p| p.len()).sum();
        let frame_len = (frame::HEADER_LEN + payload_len) as u64;
        let Some(cur) = st.current.as_mut() else {
            return Err(WalError::Poisoned);
        };
        let written = write_frame(&mut cur.file, &header, parts);
        if let Err(e) = written {
            // Cut the partial record off; whether or not that works, stop using the segment:
            // the next append starts a new one, so no record ever follows damaged bytes.
            if let Err(cut) = cur.file.set_len(cur.bytes) {
                tracing::warn!(segment = %seg_path.display(), error = %cut, "wal: cannot cut a partial record off; it is skipped on replay");
            }
            self.close_current(&mut st);
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

    /// Create (or empty: a file named for the next sequence number holds no record) a segment.
    /// Its directory entry is made durable by the next fsync ([`State::dir_unsynced`]), which
    /// runs before any record in it is acknowledged, and not here, under the state lock.
    fn create_segment(&self, path: &Path) -> Result<File, WalError> {
        let create = || -> std::io::Result<File> {
            #[cfg(feature = "failpoints")]
            fail::fail_point!("wal::rotate", |_| Err(injected("wal::rotate")));
            let file = OpenOptions::new().create(true).append(true).open(path)?;
            if file.metadata()?.len() > 0 {
                file.set_len(0)?;
            }
            Ok(file)
        };
        create().map_err(|e| WalError::io(path, e))
    }

    /// Stop appending to the current segment. Its records may not be synced yet: it is kept for
    /// the next fsync (unless nothing is ever synced). A segment left without records is removed.
    fn close_current(&self, st: &mut State) {
        let Some(old) = st.current.take() else {
            return;
        };
        let Some(seg) = st.segments.last() else {
            return;
        };
        if seg.last_seq.is_none() {
            let path = seg.path.clone();
            drop(old);
            if std::fs::remove_file(&path).is_ok() {
                st.segments.pop();
            }
            return;
        }
        if self.policy != FsyncPolicy::Never {
            st.unsynced.push((old.file, seg.path.clone()));
        }
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
        // Every record below `upto` is in the current segment or in one of `closed`.
        let (closed, current, upto, new_segment) = {
            let mut st = self.state.lock().map_err(|_| WalError::Poisoned)?;
            let mut closed = Vec::with_capacity(st.unsynced.len());
            for (f, p) in &st.unsynced {
                closed.push((f.try_clone().map_err(|e| WalError::io(p, e))?, p.clone()));
            }
            let current = match (&st.current, st.segments.last()) {
                (Some(c), Some(s)) => Some((
                    c.file.try_clone().map_err(|e| WalError::io(&s.path, e))?,
                    s.path.clone(),
                )),
                _ => None,
            };
            let new_segment = std::mem::take(&mut st.dir_unsynced);
            (closed, current, st.written_below, new_segment)
        };
        if new_segment {
            if let Err(e) = sync_wal_dir(&self.dir) {
                // Still owed: the next fsync tries again before it acknowledges anything.
                if let Ok(mut st) = self.state.lock() {
                    st.dir_unsynced = true;
                }
                return Err(WalError::io(&self.dir, e));
            }
        }
        for (file, path) in closed.iter().chain(current.iter()) {
            sync_segment(file).map_err(|e| WalError::io(path, e))?;
        }
        if !closed.is_empty() {
            // Only this function removes entries (under the sync lock): the first ones are ours.
            let mut st = self.state.lock().map_err(|_| WalError::Poisoned)?;
            st.unsynced.drain(..closed.len()).for_each(drop);
        }
        self.synced_below.fetch_max(upto, Ordering::AcqRel);
        Ok(())
    }

    /// Call `f(seq, payload)` for every intact record with `from <= seq < to`, read back from
    /// the segments on disk (the batcher rewrites records whose Parquet write failed).
    pub fn read_records(
        &self,
        from: u64,
        to: u64,
        mut f: impl FnMut(u64, &[u8]),
    ) -> Result<(), WalError> {
        let paths: Vec<(u64, PathBuf)> = {
            let st = self.state.lock().map_err(|_| WalError::Poisoned)?;
            st.segments
                .iter()
                .filter(|s| s.last_seq.is_some_and(|l| l >= from))
                .filter_map(|s| segment_first_seq(&s.path).map(|n| (n, s.path.clone())))
                .filter(|(first, _)| *first < to)
                .collect()
        };
        let mut last = None;
        for (first, path) in paths {
            let bytes = std::fs::read(&path).map_err(|e| WalError::io(&path, e))?;
            let scan = scan_frames(&bytes, first, last, |seq, payload| {
                if (from..to).contains(&seq) {
                    f(seq, payload);
                }
            });
            last = scan.last_seq.or(last);
        }
        Ok(())
    }

    /// Every record below `durable_below` is in committed Parquet: advance the checkpoint, then
    /// delete the segments it fully covers. The checkpoint's fsyncs and the deletions run
    /// outside the state lock, so appends (every request) do not wait for them.
    pub fn release_below(&self, durable_below: u64) -> Result<(), WalError> {
        let _release = self.release_lock.lock().map_err(|_| WalError::Poisoned)?;
        if durable_below
            <= self
                .state
                .lock()
                .map_err(|_| WalError::Poisoned)?
                .durable_below
        {
            return Ok(());
        }
        // Durable before any segment goes: a crash in between replays nothing twice.
        Checkpoint {
            epoch: self.epoch.clone(),
            durable_below,
        }
        .store(&self.dir)?;
        let doomed = {
            let mut st = self.state.lock().map_err(|_| WalError::Poisoned)?;
            st.durable_below = durable_below;
            let last_index = st.segments.len().saturating_sub(1);
            let has_current = st.current.is_some();
            let mut keep = Vec::with_capacity(st.segments.len());
            let mut doomed = Vec::new();
            let mut dropped_current = false;
            for (i, seg) in std::mem::take(&mut st.segments).into_iter().enumerate() {
                let covered = seg.last_seq.is_none_or(|l| l < durable_below);
                // An empty current segment is kept: it is where the next record goes.
                let is_current = i == last_index && has_current;
                if covered && !(is_current && seg.last_seq.is_none()) {
                    dropped_current |= is_current;
                    doomed.push(seg);
                } else {
                    keep.push(seg);
                }
            }
            st.segments = keep;
            if dropped_current {
                // The next append starts a segment named for its own (higher) sequence number.
                st.current = None;
            }
            doomed
        };
        let mut undeleted = Vec::new();
        for seg in doomed {
            match std::fs::remove_file(&seg.path) {
                Ok(()) => {
                    self.bytes_on_disk.fetch_sub(seg.bytes, Ordering::Relaxed);
                }
                Err(e) => {
                    // Harmless: replay skips it by the checkpoint; retried on the next release.
                    tracing::warn!(segment = %seg.path.display(), error = %e, "wal: cannot delete a released segment");
                    undeleted.push(seg);
                }
            }
        }
        if !undeleted.is_empty() {
            // Back at the front of the list (they are the oldest), for the next release.
            let mut st = self.state.lock().map_err(|_| WalError::Poisoned)?;
            undeleted.append(&mut st.segments);
            st.segments = undeleted;
        }
        Ok(())
    }
}

fn write_frame(file: &mut File, header: &[u8], parts: &[&[u8]]) -> std::io::Result<()> {
    file.write_all(header)?;
    // Injected after the header: a disk that fills up mid-record.
    #[cfg(feature = "failpoints")]
    fail::fail_point!("wal::write", |_| Err(injected("wal::write")));
    write_all_parts(file, parts)
}

/// Every byte of `parts`, in order, with as few `writev` calls as the kernel allows.
fn write_all_parts(file: &mut File, parts: &[&[u8]]) -> std::io::Result<()> {
    let mut slices: Vec<std::io::IoSlice<'_>> = parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| std::io::IoSlice::new(p))
        .collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        match file.write_vectored(rest) {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::WriteZero,
                    "failed to write the whole wal record",
                ))
            }
            Ok(n) => std::io::IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn sync_wal_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(feature = "failpoints")]
    fail::fail_point!("wal::dir_fsync", |_| Err(injected("wal::dir_fsync")));
    fsync_dir(dir)
}

/// Fsync a segment, then drop its now durable pages from the page cache ([`page_cache`]).
fn sync_segment(file: &File) -> std::io::Result<()> {
    #[cfg(feature = "failpoints")]
    fail::fail_point!("wal::fsync", |_| Err(injected("wal::fsync")));
    file.sync_data()?;
    page_cache::drop_synced_pages(file);
    Ok(())
}

/// The first sequence number a segment was created for (its file name).
fn segment_first_seq(path: &Path) -> Option<u64> {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(layout::wal_segment_first_seq)
}

/// The segments under `dir`, by first sequence number.
fn segment_names(dir: &Path) -> Result<Vec<(u64, PathBuf)>, WalError> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| WalError::io(dir, e))? {
        let entry = entry.map_err(|e| WalError::io(dir, e))?;
        let path = entry.path();
        if let Some(first) = segment_first_seq(&path) {
            names.push((first, path));
        }
    }
    names.sort();
    Ok(names)
}

/// Call `f(seq, payload)` for the intact records of the WAL under `dir`, in order, until it
/// returns false (read-only: nothing is truncated or reported).
pub fn for_each_record(dir: &Path, mut f: impl FnMut(u64, &[u8]) -> bool) -> Result<(), WalError> {
    let mut last = None;
    let mut go_on = true;
    for (first, path) in segment_names(dir)? {
        let bytes = std::fs::read(&path).map_err(|e| WalError::io(&path, e))?;
        let scan = scan_frames(&bytes, first, last, |seq, payload| {
            if go_on {
                go_on = f(seq, payload);
            }
        });
        last = scan.last_seq.or(last);
        if !go_on {
            break;
        }
    }
    Ok(())
}

/// Lowest first sequence number of the segments under `dir` (by their names).
pub fn first_segment_seq(dir: &Path) -> Result<Option<u64>, WalError> {
    if !dir.exists() {
        return Ok(None);
    }
    Ok(segment_names(dir)?.first().map(|(n, _)| *n))
}

/// A run of bytes skipped between two intact frames.
/// Bytes of a segment skipped over by a resynchronising scan.
pub struct Skipped {
    pub offset: usize,
    pub len: usize,
    pub reason: &'static str,
}

/// What a scan of one segment found.
pub struct Scan {
    pub last_seq: Option<u64>,
    pub skipped: Vec<Skipped>,
    /// Damage with no intact frame after it: offset and reason.
    pub tail: Option<(usize, &'static str)>,
}

/// Walk the frames of one segment held in memory, calling `record` for each intact one in
/// order. A frame is intact when its magic, length and CRC are right and its sequence number is
/// above the previous intact one (`before`, or at least the segment's `first` sequence number)
/// and plausible (no more records skipped than the bytes in between could hold). After damage
/// the scan resumes at the next intact frame.
pub fn scan_frames(
    buf: &[u8],
    first: u64,
    before: Option<u64>,
    mut record: impl FnMut(u64, &[u8]),
) -> Scan {
    let mut last = before;
    let mut seg_last = None;
    let mut off = 0usize;
    let mut skipped = Vec::new();
    let min_seq = |last: Option<u64>| last.map_or(first, |l| (l + 1).max(first));
    let acceptable = |at: usize, last: Option<u64>| -> Option<(u64, &[u8], usize)> {
        let (seq, payload, len) = frame::decode_frame(&buf[at..]).ok()?;
        let lo = min_seq(last);
        let hi = lo.saturating_add((at / frame::HEADER_LEN) as u64 + 1);
        (lo..=hi).contains(&seq).then_some((seq, payload, len))
    };
    while off < buf.len() {
        if let Some((seq, payload, len)) = frame::decode_frame(&buf[off..])
            .ok()
            .filter(|(seq, _, _)| *seq >= min_seq(last))
        {
            record(seq, payload);
            last = Some(seq);
            seg_last = Some(seq);
            off += len;
            continue;
        }
        let reason = match frame::decode_frame(&buf[off..]) {
            Ok(_) => "sequence number out of order",
            Err(r) => r,
        };
        let next = frame::magic_offsets(buf, off + 1).find(|at| acceptable(*at, last).is_some());
        match next {
            Some(at) => {
                skipped.push(Skipped {
                    offset: off,
                    len: at - off,
                    reason,
                });
                off = at;
            }
            None => {
                return Scan {
                    last_seq: seg_last,
                    skipped,
                    tail: Some((off, reason)),
                }
            }
        }
    }
    Scan {
        last_seq: seg_last,
        skipped,
        tail: None,
    }
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
    fn a_record_appended_in_parts_replays_as_one_payload() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (wal, _) = replayed(dir.path());
            let body = vec![7u8; 100_000];
            let (seq, ()) = wal.append_parts(&[b"header:", &[], &body], |_| ()).unwrap();
            wal.commit(seq).unwrap();
            let (seq, ()) = wal.append(b"whole", |_| ()).unwrap();
            wal.commit(seq).unwrap();
            assert_eq!(
                wal.bytes_on_disk(),
                (2 * frame::HEADER_LEN + 7 + 100_000 + 5) as u64
            );
        }
        let (_, got) = replayed(dir.path());
        assert_eq!(got.len(), 2);
        let mut expected = b"header:".to_vec();
        expected.extend_from_slice(&[7u8; 100_000]);
        assert_eq!(got[0], (0, expected));
        assert_eq!(got[1], (1, b"whole".to_vec()));
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
                    .is_some_and(|x| x == layout::WAL_SEGMENT_EXTENSION)
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
        let seg = dir.path().join(layout::wal_segment_name(0));
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

    #[test]
    fn damage_costs_only_the_damaged_frames_even_across_segments() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (wal, _) = replayed(dir.path());
            for i in 0..6u8 {
                let (seq, ()) = wal.append(&[i; 40], |_| ()).unwrap();
                wal.commit(seq).unwrap();
            }
        }
        // 60-byte frames, two per 64-byte segment: 0.wal (0, 1), 2.wal (2, 3), 4.wal (4, 5).
        let flip = |first: u64, at: usize| {
            let path = dir.path().join(layout::wal_segment_name(first));
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[at] ^= 0x40;
            std::fs::write(&path, bytes).unwrap();
        };
        flip(0, 60 + 30); // record 1, the end of the first segment
        flip(2, 30); // record 2, the start of the second
        let (wal, got) = replayed(dir.path());
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            vec![0, 3, 4, 5]
        );
        assert_eq!(got[1].1, vec![3u8; 40]);
        assert_eq!(wal.lost_records(), &[(1, 2)]);
        let (seq, ()) = wal.append(b"next", |_| ()).unwrap();
        assert_eq!(seq, 6);
        drop(wal);
        let (wal, got) = replayed(dir.path());
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            vec![0, 3, 4, 5, 6],
            "the damaged bytes stay skipped and the new record is readable"
        );
        assert_eq!(wal.lost_records(), &[(1, 2)]);
    }
}
