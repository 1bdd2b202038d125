//! Pass 1's per-trace extents in bounded memory: a small hash map per scan task, flushed as a
//! sorted run whenever it fills, the runs written to temporary files, and merged once, in trace
//! order, at the end.
//!
//! Why: one hash map of every trace per scan task, merged into one at the end, peaked at
//! 1,637 MiB for 7.3M traces at 100M spans (BENCHMARKS.md, session 9): each task's table at its
//! capacity (a power of two, up to twice the entries), then the largest one grown while the
//! others were still alive. Sorted runs held in memory brought that down, but the runs alone are
//! 57 bytes per trace and were the largest part of pass 1's peak at 100M spans (1,323 MiB,
//! BENCHMARKS.md, session 19). A run cut because a task's map filled is therefore written to an
//! unlinked temporary file (in `--spill-dir` when given, else under `TMPDIR`: a user who points
//! the findings at a large disk because the temp dir is small means pass 1 too; the kernel
//! removes the file when the process ends, even on `kill -9`) and read back a chunk at a time
//! by the merge, so while pass 1 reads, what it holds per task is the map alone. The last, partial map of each task stays in memory (small stores
//! never touch the disk). The merge writes the trace-ordered list the plan needs (no table, no
//! sort of the result). A trace whose spans fall into several runs (it was open when a map was
//! flushed, or its spans are in the files of several tasks) is folded in the merge.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};
use std::path::Path;
use std::sync::Arc;

use super::index::TraceExtent;
use crate::model::span::TraceId;

/// [`Extent::conversation`] of a trace no span of which has a conversation id.
pub const NO_CONVERSATION: u64 = 0;

/// Traces a task's map holds before it is flushed as a run: about 34 MiB of table (64-byte
/// entries, a power-of-two table at most twice the entries).
const FLUSH_AT: usize = 1 << 18;

/// [`FLUSH_AT`], or `TRIPLINE_PASS1_RUN_TRACES` (at least 1): tests set it low to make small
/// stores write their runs to disk.
fn flush_at() -> usize {
    static AT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AT.get_or_init(|| {
        std::env::var("TRIPLINE_PASS1_RUN_TRACES")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .map_or(FLUSH_AT, |n| n.max(1))
    })
}

/// Records per chunk of a run: the merge frees a chunk once it has read it (and reads a spilled
/// run's next chunk from its file only then).
const CHUNK: usize = 1 << 14;

/// Bytes of one record in a spilled run's file: the trace id, first start, last start, end,
/// conversation hash and span count, then `has_end`.
const REC_BYTES: usize = 16 + 8 * 5 + 1;

type Fast = foldhash::fast::RandomState;

/// One trace's extent while pass 1 reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub first_ns: i64,
    pub last_start_ns: i64,
    pub end_ns: i64,
    /// The hash of the first conversation id seen on the trace, or [`NO_CONVERSATION`]. Almost
    /// every trace has one conversation at most, so its link lives here, in the entry the trace
    /// has anyway; another, different one goes to [`ExtentRuns`]'s links. (A set of every
    /// (trace, conversation) pair took 24 bytes per trace plus its table, about 400 MiB of pass
    /// 1's peak at 100M spans.)
    pub conversation: u64,
    pub has_end: bool,
    pub spans: u64,
}

impl Extent {
    /// Folds `o` (the same trace) in; a second distinct conversation goes to `links`.
    fn merge_with_links(
        &mut self,
        trace: TraceId,
        o: &Extent,
        links: &mut HashSet<(TraceId, u64), Fast>,
    ) {
        if o.conversation != NO_CONVERSATION && o.conversation != self.conversation {
            if self.conversation == NO_CONVERSATION {
                self.conversation = o.conversation;
            } else {
                links.insert((trace, o.conversation));
            }
        }
        self.first_ns = self.first_ns.min(o.first_ns);
        self.last_start_ns = self.last_start_ns.max(o.last_start_ns);
        if o.has_end {
            self.end_ns = if self.has_end {
                self.end_ns.max(o.end_ns)
            } else {
                o.end_ns
            };
            self.has_end = true;
        }
        self.spans += o.spans;
    }
}

type Rec = (TraceId, Extent);

/// What [`ExtentRuns::finish`] returns: every trace's extent in trace order, and the (trace,
/// conversation hash) links.
pub type Finished = (Vec<TraceExtent>, Vec<(TraceId, u64)>);

fn encode(out: &mut impl Write, (t, e): &Rec) -> io::Result<()> {
    let mut b = [0u8; REC_BYTES];
    b[..16].copy_from_slice(&t.0);
    let words = [
        e.first_ns as u64,
        e.last_start_ns as u64,
        e.end_ns as u64,
        e.conversation,
        e.spans,
    ];
    for (k, w) in words.iter().enumerate() {
        b[16 + 8 * k..24 + 8 * k].copy_from_slice(&w.to_le_bytes());
    }
    b[REC_BYTES - 1] = u8::from(e.has_end);
    out.write_all(&b)
}

fn decode(b: &[u8]) -> Rec {
    let word =
        |k: usize| u64::from_le_bytes(b[16 + 8 * k..24 + 8 * k].try_into().expect("8 bytes"));
    let mut t = [0u8; 16];
    t.copy_from_slice(&b[..16]);
    (
        TraceId(t),
        Extent {
            first_ns: word(0) as i64,
            last_start_ns: word(1) as i64,
            end_ns: word(2) as i64,
            conversation: word(3),
            spans: word(4),
            has_end: b[REC_BYTES - 1] != 0,
        },
    )
}

/// Where a run's records wait to be merged.
enum Stored {
    /// In memory, in chunks in reverse order (the next one is last).
    Memory(Vec<Vec<Rec>>),
    /// In an unlinked temporary file, `left` records not read yet.
    Disk { file: File, left: usize },
}

/// A sorted run and the chunk the merge is reading.
struct Run {
    stored: Stored,
    current: std::vec::IntoIter<Rec>,
}

/// What a failed write or read of a spilled run in `dir` (`None`: TMPDIR) says: where, and what
/// to do.
fn spill_error(e: io::Error, dir: Option<&Path>) -> io::Error {
    let (place, fix) = match dir {
        Some(d) => (d.display().to_string(), "--spill-dir"),
        None => (
            std::env::temp_dir().display().to_string(),
            "TMPDIR (or --spill-dir, where the command takes it)",
        ),
    };
    io::Error::new(
        e.kind(),
        format!(
            "pass 1 could not write or read back its sorted trace runs in a temporary file under \
             {place}: {e}; point {fix} at a writable directory with room (about 60 bytes per \
             trace)"
        ),
    )
}

impl Run {
    fn in_memory(sorted: Vec<Rec>) -> Self {
        let mut chunks: Vec<Vec<Rec>> = sorted.chunks(CHUNK).map(<[Rec]>::to_vec).collect();
        chunks.reverse();
        Self {
            stored: Stored::Memory(chunks),
            current: Vec::new().into_iter(),
        }
    }

    /// `sorted` written to an unlinked file in `dir` (`None`: TMPDIR).
    fn on_disk(sorted: &[Rec], dir: Option<&Path>) -> io::Result<Self> {
        let file = match dir {
            Some(d) => tempfile::tempfile_in(d)?,
            None => tempfile::tempfile()?,
        };
        let mut out = BufWriter::with_capacity(1 << 16, file);
        for r in sorted {
            encode(&mut out, r)?;
        }
        let mut file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.rewind()?;
        Ok(Self {
            stored: Stored::Disk {
                file,
                left: sorted.len(),
            },
            current: Vec::new().into_iter(),
        })
    }

    fn len(&self) -> usize {
        let stored = match &self.stored {
            Stored::Memory(chunks) => chunks.iter().map(Vec::len).sum(),
            Stored::Disk { left, .. } => *left,
        };
        stored + self.current.len()
    }

    /// The next record; `dir` only names the place in an error.
    fn next(&mut self, dir: Option<&Path>) -> io::Result<Option<Rec>> {
        loop {
            if let Some(r) = self.current.next() {
                return Ok(Some(r));
            }
            // The consumed chunk is freed here.
            self.current = match &mut self.stored {
                Stored::Memory(chunks) => match chunks.pop() {
                    Some(chunk) => chunk.into_iter(),
                    None => return Ok(None),
                },
                Stored::Disk { file, left } => {
                    if *left == 0 {
                        return Ok(None);
                    }
                    let n = (*left).min(CHUNK);
                    let mut bytes = vec![0u8; n * REC_BYTES];
                    file.read_exact(&mut bytes)
                        .map_err(|e| spill_error(e, dir))?;
                    *left -= n;
                    bytes
                        .chunks_exact(REC_BYTES)
                        .map(decode)
                        .collect::<Vec<_>>()
                        .into_iter()
                }
            };
        }
    }
}

/// Per-trace extents of one scan task (or of several, absorbed), in bounded maps and sorted runs.
#[derive(Default)]
pub struct ExtentRuns {
    map: HashMap<TraceId, Extent, Fast>,
    runs: Vec<Run>,
    /// Records in the runs held in memory (those on disk cost a file descriptor, not memory).
    in_memory: usize,
    /// Links beyond each trace's first conversation (rare).
    links: HashSet<(TraceId, u64), Fast>,
    /// Where full maps' runs are written (`--spill-dir`; `None`: TMPDIR).
    dir: Option<Arc<Path>>,
}

impl ExtentRuns {
    /// Empty, writing its runs to files in `dir` (`None`: TMPDIR).
    pub fn new(dir: Option<Arc<Path>>) -> Self {
        Self {
            dir,
            ..Self::default()
        }
    }

    /// Folds span extent `e` of `trace` in; a full map is written to disk as a sorted run.
    pub fn add(&mut self, trace: TraceId, e: Extent) -> io::Result<()> {
        let links = &mut self.links;
        self.map
            .entry(trace)
            .and_modify(|x| x.merge_with_links(trace, &e, links))
            .or_insert(e);
        if self.map.len() >= flush_at() {
            self.spill()?;
        }
        Ok(())
    }

    /// The map's traces, sorted; the map keeps its capacity for the next ones.
    fn drain_sorted(&mut self) -> Vec<Rec> {
        let mut run: Vec<Rec> = self.map.drain().collect();
        run.sort_unstable_by_key(|r| r.0);
        run
    }

    /// The map's traces as one sorted run on disk.
    fn spill(&mut self) -> io::Result<()> {
        if self.map.is_empty() {
            return Ok(());
        }
        let run = self.drain_sorted();
        let dir = self.dir.as_deref();
        self.runs
            .push(Run::on_disk(&run, dir).map_err(|e| spill_error(e, dir))?);
        Ok(())
    }

    /// The map's traces as one sorted run in memory (a task's last, partial map).
    fn flush(&mut self) {
        if self.map.is_empty() {
            return;
        }
        let run = self.drain_sorted();
        self.in_memory += run.len();
        self.runs.push(Run::in_memory(run));
    }

    /// Runs written to disk so far, and where (`None`: TMPDIR).
    pub fn spilled(&self) -> (usize, Option<&Path>) {
        let on_disk = self
            .runs
            .iter()
            .filter(|r| matches!(r.stored, Stored::Disk { .. }))
            .count();
        (on_disk, self.dir.as_deref())
    }

    /// Bytes held in memory: the map at its capacity, the runs not on disk, the links.
    pub fn bytes(&self) -> usize {
        self.map.capacity() * (std::mem::size_of::<Rec>() + 1)
            + self.in_memory * std::mem::size_of::<Rec>()
            + self.links.capacity() * (std::mem::size_of::<(TraceId, u64)>() + 1)
    }

    /// Takes `other`'s traces (another scan task's).
    pub fn absorb(&mut self, mut other: ExtentRuns) {
        other.flush();
        other.map = HashMap::default();
        self.in_memory += other.in_memory;
        self.runs.append(&mut other.runs);
        self.links.extend(other.links);
    }

    /// Every trace once, ordered by trace id, and the (trace, conversation hash) links, sorted
    /// and each once. Fails only when a spilled run cannot be read back.
    pub fn finish(mut self) -> io::Result<Finished> {
        self.flush();
        self.map = HashMap::default();
        let total: usize = self.runs.iter().map(Run::len).sum();
        let mut traces: Vec<TraceExtent> = Vec::with_capacity(total);
        let mut conversations: Vec<(TraceId, u64)> = Vec::new();
        let mut heads: BinaryHeap<Reverse<(TraceId, usize)>> = BinaryHeap::new();
        let mut current: Vec<Option<Extent>> = vec![None; self.runs.len()];
        let dir = self.dir.clone();
        let dir = dir.as_deref();
        for (i, run) in self.runs.iter_mut().enumerate() {
            if let Some((t, e)) = run.next(dir)? {
                current[i] = Some(e);
                heads.push(Reverse((t, i)));
            }
        }
        let mut open: Option<Rec> = None;
        let mut close = |(trace, e): Rec, traces: &mut Vec<TraceExtent>| {
            if e.conversation != NO_CONVERSATION {
                conversations.push((trace, e.conversation));
            }
            traces.push(TraceExtent {
                trace,
                first_ns: e.first_ns,
                last_start_ns: e.last_start_ns,
                end_ns: if e.has_end { e.end_ns } else { e.last_start_ns },
                spans: e.spans,
            });
        };
        while let Some(Reverse((trace, i))) = heads.pop() {
            let e = current[i].take().expect("a run's head");
            if let Some((t, next)) = self.runs[i].next(dir)? {
                current[i] = Some(next);
                heads.push(Reverse((t, i)));
            }
            match open.as_mut() {
                Some((t, x)) if *t == trace => x.merge_with_links(trace, &e, &mut self.links),
                _ => {
                    if let Some(done) = open.replace((trace, e)) {
                        close(done, &mut traces);
                    }
                }
            }
        }
        if let Some(done) = open {
            close(done, &mut traces);
        }
        conversations.extend(self.links);
        conversations.sort_unstable();
        conversations.dedup();
        conversations.shrink_to_fit();
        Ok((traces, conversations))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(first: i64, end: Option<i64>, conversation: u64) -> Extent {
        Extent {
            first_ns: first,
            last_start_ns: first,
            end_ns: end.unwrap_or(0),
            conversation,
            has_end: end.is_some(),
            spans: 1,
        }
    }

    /// The same spans folded in one map and in many flushed runs over several tasks give the
    /// same extents and links.
    #[test]
    fn runs_merge_to_what_one_map_gives() {
        let mut g: u64 = 9;
        let mut rnd = |n: u64| {
            g = g.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (g >> 33) % n
        };
        let spans: Vec<(TraceId, Extent)> = (0..20_000)
            .map(|_| {
                let t = TraceId([
                    rnd(200) as u8,
                    rnd(40) as u8,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                ]);
                let end = (rnd(4) > 0).then(|| rnd(1_000) as i64);
                (t, span(rnd(1_000) as i64, end, rnd(5)))
            })
            .collect();
        // One map, never flushed: the reference.
        let mut one = ExtentRuns::default();
        for &(t, e) in &spans {
            let links = &mut one.links;
            one.map
                .entry(t)
                .and_modify(|x| x.merge_with_links(t, &e, links))
                .or_insert(e);
        }
        let (want, want_links) = one.finish().unwrap();
        assert!(want.len() > 1_000 && want_links.len() > 1_000);
        // Three tasks, each writing a run to disk every 97 traces.
        let mut tasks: Vec<ExtentRuns> = (0..3).map(|_| ExtentRuns::default()).collect();
        for (k, &(t, e)) in spans.iter().enumerate() {
            let task = &mut tasks[k % 3];
            task.add(t, e).unwrap();
            if task.map.len() >= 97 {
                task.spill().unwrap();
            }
        }
        let mut all = ExtentRuns::default();
        for t in tasks {
            all.absorb(t);
        }
        assert!(all.runs.len() > 100);
        let on_disk = all
            .runs
            .iter()
            .filter(|r| matches!(r.stored, Stored::Disk { .. }))
            .count();
        assert!(on_disk > 100, "{on_disk} runs on disk");
        let (got, got_links) = all.finish().unwrap();
        assert_eq!(got, want);
        assert_eq!(got_links, want_links);
        assert!(got.windows(2).all(|w| w[0].trace < w[1].trace));
    }

    /// A record reads back from a spilled run as it was written, extremes included.
    #[test]
    fn spilled_records_read_back_exactly() {
        let recs: Vec<Rec> = (0..2 * CHUNK + 5)
            .map(|k| {
                let mut id = [0u8; 16];
                id[..8].copy_from_slice(&(k as u64).to_be_bytes());
                id[15] = 0xff;
                let e = Extent {
                    first_ns: if k % 2 == 0 { i64::MIN } else { -(k as i64) },
                    last_start_ns: i64::MAX - k as i64,
                    end_ns: k as i64,
                    conversation: u64::MAX - k as u64,
                    has_end: k % 3 == 0,
                    spans: u64::MAX / (k as u64 + 1),
                };
                (TraceId(id), e)
            })
            .collect();
        let mut run = Run::on_disk(&recs, None).unwrap();
        assert_eq!(run.len(), recs.len());
        let mut back = Vec::new();
        while let Some(r) = run.next(None).unwrap() {
            back.push(r);
        }
        assert_eq!(back, recs);
        assert_eq!(run.len(), 0);
    }

    /// Runs go to the directory asked for (`--spill-dir`), and one that cannot take them is an
    /// error naming it and the flag, never a silent fallback to TMPDIR.
    #[test]
    fn runs_go_to_the_spill_dir_and_an_unusable_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let mut runs = ExtentRuns::new(Some(Arc::from(gone.as_path())));
        runs.add(TraceId([1; 16]), span(1, Some(2), 0)).unwrap();
        let msg = runs.spill().unwrap_err().to_string();
        assert!(
            msg.contains(&gone.display().to_string()) && msg.contains("--spill-dir"),
            "{msg}"
        );

        let mut runs = ExtentRuns::new(Some(Arc::from(dir.path())));
        for k in 0..3u8 {
            runs.add(TraceId([k; 16]), span(i64::from(k), None, 0))
                .unwrap();
            runs.spill().unwrap();
        }
        // The unlinked files are open in the directory asked for (Linux names them there).
        let mut held_there = 0;
        for fd in std::fs::read_dir("/proc/self/fd").unwrap() {
            let target = std::fs::read_link(fd.unwrap().path()).unwrap_or_default();
            if target.starts_with(dir.path()) {
                held_there += 1;
            }
        }
        assert_eq!(held_there, 3);
        let (traces, _) = runs.finish().unwrap();
        assert_eq!(traces.len(), 3);
        assert!(traces.windows(2).all(|w| w[0].trace < w[1].trace));
    }
}
