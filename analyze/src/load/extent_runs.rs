//! Pass 1's per-trace extents in bounded memory: a small hash map per scan task, flushed as a
//! sorted run whenever it fills, and the runs merged once, in trace order, at the end.
//!
//! Why: one hash map of every trace per scan task, merged into one at the end, peaked at
//! 1,637 MiB for 7.3M traces at 100M spans (BENCHMARKS.md, session 9): each task's table at its
//! capacity (a power of two, up to twice the entries), then the largest one grown while the
//! others were still alive. A run is a sorted `Vec` at its exact size, in chunks freed as the
//! final merge consumes them, and the merge writes the trace-ordered list the plan needs (no
//! table, no sort of the result). A trace whose spans fall into several runs (it was open when a
//! map was flushed, or its spans are in the files of several tasks) is folded in the merge.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use super::index::TraceExtent;
use crate::model::span::TraceId;

/// [`Extent::conversation`] of a trace no span of which has a conversation id.
pub const NO_CONVERSATION: u64 = 0;

/// Traces a task's map holds before it is flushed as a run: about 34 MiB of table (64-byte
/// entries, a power-of-two table at most twice the entries).
const FLUSH_AT: usize = 1 << 18;

/// Records per chunk of a run: the merge frees a chunk once it has read it.
const CHUNK: usize = 1 << 14;

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

/// A sorted run: chunks in reverse order (the next one is last), the current chunk's records.
struct Run {
    chunks: Vec<Vec<Rec>>,
    current: std::vec::IntoIter<Rec>,
}

impl Run {
    fn new(sorted: Vec<Rec>) -> Self {
        let mut chunks: Vec<Vec<Rec>> = sorted.chunks(CHUNK).map(<[Rec]>::to_vec).collect();
        chunks.reverse();
        Self {
            chunks,
            current: Vec::new().into_iter(),
        }
    }

    fn len(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum::<usize>() + self.current.len()
    }

    fn next(&mut self) -> Option<Rec> {
        loop {
            if let Some(r) = self.current.next() {
                return Some(r);
            }
            // The consumed chunk is freed here.
            self.current = self.chunks.pop()?.into_iter();
        }
    }
}

/// Per-trace extents of one scan task (or of several, absorbed), in bounded maps and sorted runs.
#[derive(Default)]
pub struct ExtentRuns {
    map: HashMap<TraceId, Extent, Fast>,
    runs: Vec<Run>,
    /// Records in `runs`.
    in_runs: usize,
    /// Links beyond each trace's first conversation (rare).
    links: HashSet<(TraceId, u64), Fast>,
}

impl ExtentRuns {
    /// Folds span extent `e` of `trace` in.
    pub fn add(&mut self, trace: TraceId, e: Extent) {
        let links = &mut self.links;
        self.map
            .entry(trace)
            .and_modify(|x| x.merge_with_links(trace, &e, links))
            .or_insert(e);
        if self.map.len() >= FLUSH_AT {
            self.flush();
        }
    }

    /// The map's traces as one sorted run; the map keeps its capacity for the next ones.
    fn flush(&mut self) {
        if self.map.is_empty() {
            return;
        }
        let mut run: Vec<Rec> = self.map.drain().collect();
        run.sort_unstable_by_key(|r| r.0);
        self.in_runs += run.len();
        self.runs.push(Run::new(run));
    }

    /// Bytes held: the map at its capacity, the runs, the links.
    pub fn bytes(&self) -> usize {
        self.map.capacity() * (std::mem::size_of::<Rec>() + 1)
            + self.in_runs * std::mem::size_of::<Rec>()
            + self.links.capacity() * (std::mem::size_of::<(TraceId, u64)>() + 1)
    }

    /// Takes `other`'s traces (another scan task's).
    pub fn absorb(&mut self, mut other: ExtentRuns) {
        other.flush();
        other.map = HashMap::default();
        self.in_runs += other.in_runs;
        self.runs.append(&mut other.runs);
        self.links.extend(other.links);
    }

    /// Every trace once, ordered by trace id, and the (trace, conversation hash) links, sorted
    /// and each once.
    pub fn finish(mut self) -> (Vec<TraceExtent>, Vec<(TraceId, u64)>) {
        self.flush();
        self.map = HashMap::default();
        let total: usize = self.runs.iter().map(Run::len).sum();
        let mut traces: Vec<TraceExtent> = Vec::with_capacity(total);
        let mut conversations: Vec<(TraceId, u64)> = Vec::new();
        let mut heads: BinaryHeap<Reverse<(TraceId, usize)>> = BinaryHeap::new();
        let mut current: Vec<Option<Extent>> = vec![None; self.runs.len()];
        for (i, run) in self.runs.iter_mut().enumerate() {
            if let Some((t, e)) = run.next() {
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
            if let Some((t, next)) = self.runs[i].next() {
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
        (traces, conversations)
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
        let (want, want_links) = one.finish();
        assert!(want.len() > 1_000 && want_links.len() > 1_000);
        // Three tasks, each flushing every 97 traces.
        let mut tasks: Vec<ExtentRuns> = (0..3).map(|_| ExtentRuns::default()).collect();
        for (k, &(t, e)) in spans.iter().enumerate() {
            let task = &mut tasks[k % 3];
            task.add(t, e);
            if task.map.len() >= 97 {
                task.flush();
            }
        }
        let mut all = ExtentRuns::default();
        for t in tasks {
            all.absorb(t);
        }
        assert!(all.runs.len() > 100);
        let (got, got_links) = all.finish();
        assert_eq!(got, want);
        assert_eq!(got_links, want_links);
        assert!(got.windows(2).all(|w| w[0].trace < w[1].trace));
    }
}
