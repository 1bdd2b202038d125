//! Findings that need not all be in memory: held up to a bound, then spilled as sorted runs to a
//! temporary directory and merged back in the report's order while they are printed.
//!
//! Why: a windowed `check` (`crate::window`) keeps each window small, but the findings of every
//! window used to be held until the end (2.4M findings, most of the 3.4 GiB peak at 100M spans:
//! BENCHMARKS.md, session 9). The order is [`report`](super::report)'s exactly: severity (worst
//! first), rule code, trace id, span id, then, for equal keys, the order the rule reported them
//! in (its window findings in window order, then what [`Rule::finish`] added), which the stable
//! sort of the in-memory report keeps. Each finding carries that position (`seq`), so a k-way
//! merge of sorted runs gives the same sequence as one sort of everything.
//!
//! A rule may drop its window findings in `finish` once it knows a store-wide fact (TL016, TL017:
//! [`Rule::keeps_window_findings`]); spilled findings of such a rule are skipped while merging.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use super::{Finding, Rule, Severity};
use crate::model::{SpanId, TraceId};

/// Findings held in memory before a windowed check spills them, unless
/// `TRIPLINE_SPILL_FINDINGS` says otherwise: about 30-60 MB of findings.
pub const DEFAULT_MAX_HELD: usize = 100_000;

/// When and where findings spill.
#[derive(Clone, Debug)]
pub struct SpillOptions {
    /// Findings held (across every rule) before they are written out as one sorted run.
    pub max_held: usize,
    /// Directory the temporary spill directory is created in (`None`: the system temp dir).
    pub dir: Option<PathBuf>,
}

impl Default for SpillOptions {
    /// [`DEFAULT_MAX_HELD`] (or `TRIPLINE_SPILL_FINDINGS`), under the system temp dir.
    fn default() -> Self {
        let max_held = std::env::var("TRIPLINE_SPILL_FINDINGS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(DEFAULT_MAX_HELD);
        Self {
            max_held: max_held.max(1),
            dir: None,
        }
    }
}

impl SpillOptions {
    /// Never spill: every finding stays in memory (tests, the incremental check).
    pub fn in_memory() -> Self {
        Self {
            max_held: usize::MAX,
            dir: None,
        }
    }

    /// Fails now, naming the directory, if a spill directory cannot be created there: before a
    /// long scan rather than at its first spill.
    pub fn check_writable(&self) -> Result<(), SpillError> {
        if self.max_held == usize::MAX {
            return Ok(());
        }
        let parent = self.parent();
        tempfile::Builder::new()
            .prefix("tripline-findings-")
            .tempdir_in(&parent)
            .map(drop)
            .map_err(|source| SpillError::Create {
                dir: parent,
                source,
            })
    }

    fn parent(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(std::env::temp_dir)
    }
}

/// Spilling or reading back findings failed.
#[derive(Debug, thiserror::Error)]
pub enum SpillError {
    #[error("cannot create a directory for spilled findings in {dir}: {source}; point TMPDIR (or --spill-dir) at a writable directory with room for the findings")]
    Create {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write spilled findings to {path}: {source}; point TMPDIR (or --spill-dir) at a writable directory with room for the findings")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read spilled findings back from {path}: {source}; was the temporary directory removed while check ran?")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// A finding with where it falls among its rule's findings.
#[derive(Debug)]
struct Entry {
    /// Index of the rule in the checked rule list.
    rule: u16,
    /// Position among the rule's findings, in the order the rule reported them.
    seq: u64,
    finding: Finding,
}

type Key = (Reverse<Severity>, &'static str, TraceId, SpanId, u16, u64);

impl Entry {
    fn key(&self) -> Key {
        let f = &self.finding;
        (
            Reverse(f.severity),
            f.rule,
            f.trace_id,
            f.span_id,
            self.rule,
            self.seq,
        )
    }
}

/// The findings of a windowed check: held, spilled runs, and how many of each rule went where.
pub struct FindingSpill {
    rules: Vec<&'static dyn Rule>,
    options: SpillOptions,
    held: Vec<Entry>,
    /// Per rule: findings numbered so far (spilled or held).
    next_seq: Vec<u64>,
    dir: Option<tempfile::TempDir>,
    runs: Vec<PathBuf>,
}

impl FindingSpill {
    pub fn new(rules: &[&'static dyn Rule], options: SpillOptions) -> Self {
        Self {
            rules: rules.to_vec(),
            options,
            held: Vec::new(),
            next_seq: vec![0; rules.len()],
            dir: None,
            runs: Vec::new(),
        }
    }

    /// Runs written so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Takes `findings` of rule `rule` (its index), in the order the rule reported them, after
    /// those it gave before; spills when more than the bound are held.
    pub fn push(&mut self, rule: usize, findings: Vec<Finding>) -> Result<(), SpillError> {
        for finding in findings {
            let seq = self.next_seq[rule];
            self.next_seq[rule] += 1;
            self.held.push(Entry {
                rule: rule as u16,
                seq,
                finding,
            });
        }
        if self.held.len() > self.options.max_held {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes the held findings as one sorted run.
    fn spill(&mut self) -> Result<(), SpillError> {
        if self.held.is_empty() {
            return Ok(());
        }
        if self.dir.is_none() {
            let parent = self.options.parent();
            let dir = tempfile::Builder::new()
                .prefix("tripline-findings-")
                .tempdir_in(&parent)
                .map_err(|source| SpillError::Create {
                    dir: parent.clone(),
                    source,
                })?;
            self.dir = Some(dir);
        }
        let dir = self.dir.as_ref().map(|d| d.path().to_path_buf());
        let path = dir
            .unwrap_or_default()
            .join(format!("run-{:05}.bin", self.runs.len()));
        self.held.sort_unstable_by_key(Entry::key);
        let write = |held: &[Entry]| -> io::Result<()> {
            let mut w = BufWriter::with_capacity(1 << 20, File::create(&path)?);
            for e in held {
                encode(&mut w, e)?;
            }
            w.into_inner()
                .map_err(io::IntoInnerError::into_error)
                .map(drop)
        };
        write(&self.held).map_err(|source| SpillError::Write {
            path: path.clone(),
            source,
        })?;
        self.held.clear();
        self.held.shrink_to(self.options.max_held.min(1 << 20));
        self.runs.push(path);
        Ok(())
    }

    /// The findings in report order; rules whose `keep[i]` is false lose their findings (see the
    /// module docs). What is still held (at most the bound) is merged from memory.
    pub fn finish(mut self, keep: Vec<bool>) -> Result<SortedFindings, SpillError> {
        let counts: Vec<(Severity, u64)> = self
            .rules
            .iter()
            .zip(&self.next_seq)
            .zip(&keep)
            .map(|((r, &n), &k)| (r.severity(), if k { n } else { 0 }))
            .collect();
        let mut sources: Vec<Source> = Vec::new();
        self.held.sort_by_key(Entry::key);
        let held = std::mem::take(&mut self.held);
        if !held.is_empty() {
            sources.push(Source::Held(held.into_iter()));
        }
        for path in &self.runs {
            let file = File::open(path).map_err(|source| SpillError::Read {
                path: path.clone(),
                source,
            })?;
            sources.push(Source::Run {
                path: path.clone(),
                reader: BufReader::with_capacity(1 << 16, file),
            });
        }
        let mut merged = SortedFindings {
            runs: self.runs.len(),
            rules: self.rules,
            keep,
            counts,
            sources,
            heap: BinaryHeap::new(),
            started: false,
            dir: self.dir,
        };
        merged.prime()?;
        Ok(merged)
    }
}

/// Where the merge reads from: the findings still held, or a spilled run.
enum Source {
    Held(std::vec::IntoIter<Entry>),
    Run {
        path: PathBuf,
        reader: BufReader<File>,
    },
}

struct Head {
    key: Key,
    source: usize,
    entry: Entry,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    /// Reversed: `BinaryHeap` is a max-heap, the merge takes the smallest key.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Every finding of a windowed check in report order, read from memory and spilled runs; the
/// temporary directory is removed when this is dropped.
pub struct SortedFindings {
    /// Sorted runs on disk.
    runs: usize,
    rules: Vec<&'static dyn Rule>,
    keep: Vec<bool>,
    counts: Vec<(Severity, u64)>,
    sources: Vec<Source>,
    heap: BinaryHeap<Head>,
    started: bool,
    /// The temporary directory of the runs, removed when this is dropped.
    dir: Option<tempfile::TempDir>,
}

impl SortedFindings {
    /// Findings at or above `threshold` (known before any is read).
    pub fn count_at_or_above(&self, threshold: Severity) -> u64 {
        self.counts
            .iter()
            .filter(|(s, _)| *s >= threshold)
            .map(|(_, n)| n)
            .sum()
    }

    /// Sorted runs on disk the findings are merged from (0 when none spilled).
    pub fn spilled_runs(&self) -> usize {
        self.runs
    }

    /// The temporary directory the runs were spilled to (None when none was made).
    pub fn spill_dir(&self) -> Option<&std::path::Path> {
        self.dir.as_ref().map(tempfile::TempDir::path)
    }

    /// All findings (known before any is read).
    pub fn len(&self) -> u64 {
        self.counts.iter().map(|(_, n)| n).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every finding, in report order, in memory (what the formats that group findings need).
    pub fn into_vec(self) -> Result<Vec<Finding>, SpillError> {
        self.collect()
    }

    fn prime(&mut self) -> Result<(), SpillError> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        for i in 0..self.sources.len() {
            self.refill(i)?;
        }
        Ok(())
    }

    /// The next kept entry of source `i` onto the heap.
    fn refill(&mut self, i: usize) -> Result<(), SpillError> {
        loop {
            let entry = match &mut self.sources[i] {
                Source::Held(it) => it.next(),
                Source::Run { path, reader } => {
                    decode(reader, &self.rules).map_err(|source| SpillError::Read {
                        path: path.clone(),
                        source,
                    })?
                }
            };
            let Some(entry) = entry else {
                return Ok(());
            };
            if self.keep[entry.rule as usize] {
                self.heap.push(Head {
                    key: entry.key(),
                    source: i,
                    entry,
                });
                return Ok(());
            }
        }
    }
}

impl Iterator for SortedFindings {
    type Item = Result<Finding, SpillError>;

    fn next(&mut self) -> Option<Self::Item> {
        let head = self.heap.pop()?;
        if let Err(e) = self.refill(head.source) {
            return Some(Err(e));
        }
        Some(Ok(head.entry.finding))
    }
}

impl std::fmt::Debug for SortedFindings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortedFindings")
            .field("findings", &self.len())
            .field("sources", &self.sources.len())
            .finish()
    }
}

// A run is a sequence of records: rule index (u16), seq (u64), trace id, span id, conversation
// and tool (optional strings), message, related span ids. Little-endian, lengths as u32.

fn put_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    let len = u32::try_from(s.len()).map_err(|_| io::Error::other("string over 4 GiB"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(s.as_bytes())
}

fn put_opt(w: &mut impl Write, s: Option<&str>) -> io::Result<()> {
    match s {
        None => w.write_all(&[0]),
        Some(s) => {
            w.write_all(&[1])?;
            put_str(w, s)
        }
    }
}

fn encode(w: &mut impl Write, e: &Entry) -> io::Result<()> {
    let f = &e.finding;
    w.write_all(&e.rule.to_le_bytes())?;
    w.write_all(&e.seq.to_le_bytes())?;
    w.write_all(&f.trace_id.0)?;
    w.write_all(&f.span_id.0)?;
    put_opt(w, f.conversation_id.as_deref())?;
    put_opt(w, f.tool.as_deref())?;
    put_str(w, &f.message)?;
    w.write_all(&(f.related.len() as u32).to_le_bytes())?;
    for s in &f.related {
        w.write_all(&s.0)?;
    }
    Ok(())
}

fn get<const N: usize>(r: &mut impl Read) -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn get_str(r: &mut impl Read) -> io::Result<String> {
    let len = u32::from_le_bytes(get(r)?) as usize;
    let mut b = vec![0u8; len];
    r.read_exact(&mut b)?;
    String::from_utf8(b).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn get_opt(r: &mut impl Read) -> io::Result<Option<String>> {
    match get::<1>(r)?[0] {
        0 => Ok(None),
        _ => get_str(r).map(Some),
    }
}

/// The next record of a run, `None` at its end.
fn decode(r: &mut BufReader<File>, rules: &[&'static dyn Rule]) -> io::Result<Option<Entry>> {
    use std::io::BufRead;
    if r.fill_buf()?.is_empty() {
        return Ok(None);
    }
    let rule = u16::from_le_bytes(get(r)?);
    let seq = u64::from_le_bytes(get(r)?);
    let trace_id = TraceId(get(r)?);
    let span_id = SpanId(get(r)?);
    let conversation_id = get_opt(r)?;
    let tool = get_opt(r)?;
    let message = get_str(r)?;
    let n = u32::from_le_bytes(get(r)?) as usize;
    let related = (0..n)
        .map(|_| get(r).map(SpanId))
        .collect::<io::Result<Vec<_>>>()?;
    let r = rules
        .get(rule as usize)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unknown rule index"))?;
    Ok(Some(Entry {
        rule,
        seq,
        finding: Finding {
            rule: r.code(),
            name: r.name(),
            severity: r.severity(),
            trace_id,
            span_id,
            conversation_id,
            tool,
            message,
            related,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{report, RuleOutcome, RULES};

    /// A small deterministic generator (no extra dependency).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    /// Findings of `rule` over few trace and span ids (many ties), each message unique so the
    /// order of tied findings shows.
    fn finding(rule: &dyn Rule, g: &mut Lcg, n: usize) -> Finding {
        Finding {
            rule: rule.code(),
            name: rule.name(),
            severity: rule.severity(),
            trace_id: TraceId([g.next(3) as u8; 16]),
            span_id: SpanId([g.next(2) as u8; 8]),
            conversation_id: (g.next(2) == 0).then(|| format!("conv-{}", g.next(5))),
            tool: (g.next(3) > 0).then(|| "tool é".to_string()),
            message: format!("{} #{n}", rule.code()),
            related: (0..g.next(3)).map(|i| SpanId([i as u8; 8])).collect(),
        }
    }

    /// Per window, per rule: findings, pushed as `check_windows` pushes them.
    fn windows(rules: &[&'static dyn Rule], seed: u64) -> Vec<Vec<Vec<Finding>>> {
        let mut g = Lcg(seed);
        let mut n = 0;
        (0..9)
            .map(|_| {
                rules
                    .iter()
                    .map(|r| {
                        (0..g.next(40))
                            .map(|_| {
                                n += 1;
                                finding(*r, &mut g, n)
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect()
    }

    fn spilled(
        rules: &[&'static dyn Rule],
        input: &[Vec<Vec<Finding>>],
        max_held: usize,
        keep: Vec<bool>,
    ) -> (Vec<Finding>, usize, u64) {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = FindingSpill::new(
            rules,
            SpillOptions {
                max_held,
                dir: Some(tmp.path().to_path_buf()),
            },
        );
        for window in input {
            for (i, f) in window.iter().enumerate() {
                s.push(i, f.clone()).unwrap();
            }
        }
        let runs = s.runs();
        let sorted = s.finish(keep).unwrap();
        let count = sorted.count_at_or_above(Severity::Info);
        let all = sorted.into_vec().unwrap();
        // Dropped with the merge: no spill directory is left behind.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        (all, runs, count)
    }

    #[test]
    fn merged_runs_give_the_order_of_the_in_memory_sort_ties_included() {
        let rules: Vec<&'static dyn Rule> = RULES[..4].to_vec();
        for seed in [1, 7, 42] {
            let input = windows(&rules, seed);
            let outcomes = (0..rules.len())
                .map(|i| {
                    RuleOutcome::new(
                        input.iter().flat_map(|w| w[i].clone()).collect(),
                        Default::default(),
                    )
                })
                .collect();
            let expected = report(&rules, outcomes).findings;
            assert!(expected.len() > 200, "{}", expected.len());
            for max_held in [1, 3, 50, 1_000_000, usize::MAX] {
                let (got, runs, count) = spilled(&rules, &input, max_held, vec![true; 4]);
                if max_held <= 50 {
                    assert!(runs > 3, "max_held {max_held}: {runs} runs");
                } else {
                    assert_eq!(runs, 0);
                }
                assert_eq!(count, expected.len() as u64);
                assert!(got == expected, "seed {seed}, max_held {max_held}");
            }
        }
    }

    #[test]
    fn a_rule_that_drops_its_findings_loses_the_spilled_ones_too() {
        let rules: Vec<&'static dyn Rule> = RULES[..3].to_vec();
        let input = windows(&rules, 3);
        let (got, runs, count) = spilled(&rules, &input, 5, vec![true, false, true]);
        assert!(runs > 3);
        assert!(!got.is_empty());
        assert!(got.iter().all(|f| f.rule != rules[1].code()));
        let expected: usize = input
            .iter()
            .flat_map(|w| [&w[0], &w[2]])
            .map(Vec::len)
            .sum();
        assert_eq!((got.len(), count), (expected, expected as u64));
    }

    #[test]
    fn an_unwritable_spill_dir_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("no-such-dir");
        let options = SpillOptions {
            max_held: 1,
            dir: Some(missing.clone()),
        };
        let e = options.check_writable().unwrap_err();
        assert!(
            e.to_string().contains(&missing.display().to_string()),
            "{e}"
        );
        let mut s = FindingSpill::new(&RULES[..1], options);
        let mut g = Lcg(5);
        let two = vec![finding(RULES[0], &mut g, 1), finding(RULES[0], &mut g, 2)];
        let e = s.push(0, two).unwrap_err();
        assert!(matches!(e, SpillError::Create { .. }), "{e}");
        assert!(e.to_string().contains("no-such-dir"), "{e}");
        // Never spilling, nothing is checked.
        assert!(SpillOptions {
            dir: Some(missing),
            ..SpillOptions::in_memory()
        }
        .check_writable()
        .is_ok());
    }
}
