//! The findings `check --since last` already reported, kept on disk as one sorted file per rule
//! and merged with each run's findings as they stream out, so no run holds them in memory.
//!
//! Why sorted files and a merge: a first run over a large store reports millions of findings
//! (2.4M at 100M spans of the benchmark store), and a later run must not repeat any of them. A
//! set of every key held in memory (and in the JSON state) grew with the store. But every run's
//! findings come out in report order (severity, rule, trace id, span id: [`crate::rules::report`]
//! and [`crate::rules::spill`]), and a rule's severity is fixed, so each rule's findings arrive
//! together and sorted by (trace id, span id): the order of that rule's key file. One pass then
//! says, for each finding, whether its key was reported before, and writes the rule's new file
//! (old keys and new ones, still sorted) beside the old one, holding one key of each at a time.
//!
//! Why not drop old keys instead: a later run re-reports a finding whose trace, span or
//! conversation the new part files touch, and a late span can carry any timestamp (a host
//! exporting an old batch), so no time bound says which keys can no longer recur. The file keeps
//! every key; it costs 24 bytes a finding on disk and nothing in memory.
//!
//! Crash safety: the new files are written under temporary names and renamed over the old ones
//! only once the findings were printed ([`KeyUpdate::commit`]), before the state file records the
//! part files as checked. Each file is the old set or a superset of it, so a crash in between
//! re-checks those part files and prints only what no renamed file holds.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::state::StateError;
use crate::model::{SpanId, TraceId};
use crate::rules::Finding;

/// First bytes of a key file: its format (24-byte records follow: trace id, span id).
const MAGIC: &[u8; 8] = b"TLKEYS1\n";

/// A finding's identity within its rule's file (see [`super::finding_key`]).
type Key = (TraceId, SpanId);

/// The directory of the per-rule key files: beside the state file, or a temporary one for
/// `--follow` without `--since last` (removed when this is dropped).
#[derive(Debug)]
pub struct ReportedKeys {
    dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl ReportedKeys {
    /// The key directory of the state file `state`: `<state>.reported/`.
    pub fn beside(state: &Path) -> Self {
        let mut dir = state.as_os_str().to_owned();
        dir.push(".reported");
        Self {
            dir: PathBuf::from(dir),
            _temp: None,
        }
    }

    /// A directory that lives as long as this value (a state kept in memory).
    pub fn temporary() -> Result<Self, StateError> {
        let temp = tempfile::Builder::new()
            .prefix("tripline-reported-")
            .tempdir()
            .map_err(|source| StateError::Write {
                path: std::env::temp_dir(),
                source,
            })?;
        Ok(Self {
            dir: temp.path().to_path_buf(),
            _temp: Some(temp),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, rule: &str) -> PathBuf {
        self.dir.join(format!("{rule}.keys"))
    }

    /// A merge of this run's findings into the keys. `fresh`: the state records no run (a first
    /// run), so files left by an earlier state are ignored and replaced.
    pub fn merge(&self, fresh: bool) -> KeyMerge<'_> {
        KeyMerge {
            keys: self,
            fresh,
            current: None,
            done: Vec::new(),
            added: 0,
            next_tmp: 0,
        }
    }

    /// Every key of `rule`, in order (tests, and a state migrated from format 1).
    pub fn read_rule(&self, rule: &str) -> Result<Vec<(TraceId, SpanId)>, StateError> {
        let path = self.file(rule);
        let mut out = Vec::new();
        if let Some(mut r) = KeyReader::open(&path)? {
            while let Some(k) = r.next_key()? {
                out.push(k);
            }
        }
        Ok(out)
    }

    /// Writes `keys` (unsorted, possibly repeated) as the keys of `rule`, replacing its file.
    pub fn write_rule(&self, rule: &str, mut keys: Vec<Key>) -> Result<(), StateError> {
        keys.sort_unstable();
        keys.dedup();
        let tmp = self.dir.join(format!("{rule}.keys.tmp-w"));
        let mut out = KeyWriter::create(&self.dir, &tmp)?;
        for k in &keys {
            out.put(k)?;
        }
        out.finish()?;
        std::fs::rename(&tmp, self.file(rule)).map_err(|e| write_err(&tmp, e))
    }
}

fn write_err(path: &Path, source: io::Error) -> StateError {
    StateError::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn read_err(path: &Path, source: io::Error) -> StateError {
    StateError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// One rule's key file read in order.
struct KeyReader {
    path: PathBuf,
    r: BufReader<File>,
    head: Option<Key>,
}

impl KeyReader {
    /// `None` when the file does not exist.
    fn open(path: &Path) -> Result<Option<Self>, StateError> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(read_err(path, e)),
        };
        let mut r = BufReader::with_capacity(1 << 16, file);
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic).map_err(|e| read_err(path, e))?;
        if &magic != MAGIC {
            return Err(read_err(
                path,
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "not a tripline key file; delete the state file and its .reported directory to check everything again",
                ),
            ));
        }
        let mut reader = Self {
            path: path.to_path_buf(),
            r,
            head: None,
        };
        reader.head = reader.read()?;
        Ok(Some(reader))
    }

    fn read(&mut self) -> Result<Option<Key>, StateError> {
        use std::io::BufRead;
        let at_end = self
            .r
            .fill_buf()
            .map_err(|e| read_err(&self.path, e))?
            .is_empty();
        if at_end {
            return Ok(None);
        }
        let mut b = [0u8; 24];
        self.r
            .read_exact(&mut b)
            .map_err(|e| read_err(&self.path, e))?;
        let mut t = [0u8; 16];
        let mut s = [0u8; 8];
        t.copy_from_slice(&b[..16]);
        s.copy_from_slice(&b[16..]);
        Ok(Some((TraceId(t), SpanId(s))))
    }

    fn peek(&self) -> Option<Key> {
        self.head
    }

    fn next_key(&mut self) -> Result<Option<Key>, StateError> {
        let head = self.head;
        if head.is_some() {
            self.head = self.read()?;
        }
        Ok(head)
    }
}

/// A key file being written (under a temporary name).
struct KeyWriter {
    path: PathBuf,
    w: BufWriter<File>,
}

impl KeyWriter {
    fn create(dir: &Path, path: &Path) -> Result<Self, StateError> {
        std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
        let file = File::create(path).map_err(|e| write_err(path, e))?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        w.write_all(MAGIC).map_err(|e| write_err(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            w,
        })
    }

    fn put(&mut self, (t, s): &Key) -> Result<(), StateError> {
        self.w
            .write_all(&t.0)
            .and_then(|()| self.w.write_all(&s.0))
            .map_err(|e| write_err(&self.path, e))
    }

    /// Flushed and synced: durable before it is renamed into place.
    fn finish(self) -> Result<PathBuf, StateError> {
        let path = self.path;
        let file = self
            .w
            .into_inner()
            .map_err(|e| write_err(&path, e.into_error()))?;
        file.sync_all().map_err(|e| write_err(&path, e))?;
        Ok(path)
    }
}

/// One rule's merge in progress: its old keys (read in order) and its new file.
struct Section {
    rule: &'static str,
    old: Option<KeyReader>,
    /// The temporary file `old` was read from when it is this run's own (a rule seen twice).
    old_tmp: Option<PathBuf>,
    out: KeyWriter,
    last: Option<Key>,
}

/// This run's findings merged into the key files, one finding at a time, in report order.
pub struct KeyMerge<'a> {
    keys: &'a ReportedKeys,
    fresh: bool,
    current: Option<Section>,
    /// Finished sections: rule and its temporary file.
    done: Vec<(&'static str, PathBuf)>,
    added: u64,
    next_tmp: u32,
}

impl KeyMerge<'_> {
    /// Records `f`'s key; true when it was not reported before (by an earlier run, or earlier in
    /// this one).
    pub fn insert(&mut self, f: &Finding) -> Result<bool, StateError> {
        if self.current.as_ref().is_none_or(|s| s.rule != f.rule) {
            self.close()?;
            self.open(f.rule)?;
        }
        let Some(section) = self.current.as_mut() else {
            return Ok(false);
        };
        let key = (f.trace_id, f.span_id);
        // Old keys before this one go to the new file as they are.
        if let Some(old) = section.old.as_mut() {
            while let Some(k) = old.peek().filter(|k| *k < key) {
                section.out.put(&k)?;
                section.last = Some(k);
                old.next_key()?;
            }
            if old.peek() == Some(key) {
                old.next_key()?;
                section.out.put(&key)?;
                section.last = Some(key);
                return Ok(false);
            }
        }
        match section.last {
            Some(last) if last == key => Ok(false),
            Some(last) if last > key => Err(write_err(
                &section.out.path,
                io::Error::other(format!(
                    "findings of {} out of report order ({key:?} after {last:?}); this is a bug in tripline, please report it",
                    f.rule
                )),
            )),
            _ => {
                section.out.put(&key)?;
                section.last = Some(key);
                self.added += 1;
                Ok(true)
            }
        }
    }

    fn open(&mut self, rule: &'static str) -> Result<(), StateError> {
        // A rule seen again in this run (never, while a rule has one severity) merges into the
        // file this run wrote for it.
        let (old, old_tmp) = match self.done.iter().position(|(r, _)| *r == rule) {
            Some(i) => {
                let (_, tmp) = self.done.swap_remove(i);
                (KeyReader::open(&tmp)?, Some(tmp))
            }
            None if self.fresh => (None, None),
            None => (KeyReader::open(&self.keys.file(rule))?, None),
        };
        self.next_tmp += 1;
        let tmp = self
            .keys
            .dir
            .join(format!("{rule}.keys.tmp-{}", self.next_tmp));
        self.current = Some(Section {
            rule,
            old,
            old_tmp,
            out: KeyWriter::create(&self.keys.dir, &tmp)?,
            last: None,
        });
        Ok(())
    }

    /// Finishes the current rule: the rest of its old keys, then its file is complete.
    fn close(&mut self) -> Result<(), StateError> {
        let Some(mut s) = self.current.take() else {
            return Ok(());
        };
        if let Some(old) = s.old.as_mut() {
            while let Some(k) = old.next_key()? {
                s.out.put(&k)?;
            }
        }
        let path = s.out.finish()?;
        if let Some(tmp) = s.old_tmp {
            let _ = std::fs::remove_file(tmp);
        }
        self.done.push((s.rule, path));
        Ok(())
    }

    /// Keys added so far (findings not reported before).
    pub fn added(&self) -> u64 {
        self.added
    }

    /// Ends the merge: the files to put in place once the findings were printed.
    pub fn finish(mut self) -> Result<KeyUpdate, StateError> {
        self.close()?;
        let done = std::mem::take(&mut self.done);
        Ok(KeyUpdate {
            dir: self.keys.dir.clone(),
            renames: done
                .into_iter()
                .map(|(rule, tmp)| (tmp, self.keys.file(rule)))
                .collect(),
            fresh: self.fresh,
            added: self.added,
        })
    }
}

impl Drop for KeyMerge<'_> {
    /// An abandoned merge leaves no temporary file behind.
    fn drop(&mut self) {
        if let Some(s) = self.current.take() {
            let _ = std::fs::remove_file(&s.out.path);
            if let Some(tmp) = s.old_tmp {
                let _ = std::fs::remove_file(tmp);
            }
        }
        for (_, tmp) in self.done.drain(..) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// The key files a finished merge wrote, not yet in place.
#[derive(Debug)]
pub struct KeyUpdate {
    dir: PathBuf,
    renames: Vec<(PathBuf, PathBuf)>,
    fresh: bool,
    added: u64,
}

impl KeyUpdate {
    /// Keys added (findings reported for the first time).
    pub fn added(&self) -> u64 {
        self.added
    }

    /// Puts the new files in place (rename). After a first run, the files of rules it did not
    /// write (left by an earlier, deleted state) are removed.
    pub fn commit(mut self) -> Result<(), StateError> {
        let renames = std::mem::take(&mut self.renames);
        for (tmp, file) in &renames {
            std::fs::rename(tmp, file).map_err(|e| write_err(file, e))?;
        }
        if self.fresh {
            let written: Vec<&PathBuf> = renames.iter().map(|(_, f)| f).collect();
            if let Ok(entries) = std::fs::read_dir(&self.dir) {
                for e in entries.flatten() {
                    let p = e.path();
                    if p.extension().is_some_and(|x| x == "keys") && !written.contains(&&p) {
                        std::fs::remove_file(&p).map_err(|e| write_err(&p, e))?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Drop for KeyUpdate {
    /// An update never committed (the run failed after its merge) leaves no temporary file.
    fn drop(&mut self) {
        for (tmp, _) in self.renames.drain(..) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Severity;

    fn f(rule: &'static str, t: u8, s: u8) -> Finding {
        Finding {
            rule,
            name: "n",
            severity: Severity::Error,
            trace_id: TraceId([t; 16]),
            span_id: SpanId([s; 8]),
            conversation_id: None,
            tool: None,
            message: String::new(),
            related: Vec::new(),
        }
    }

    /// Runs `findings` through a merge and commits it; returns which were new.
    fn run(keys: &ReportedKeys, fresh: bool, findings: &[Finding]) -> Vec<bool> {
        let mut m = keys.merge(fresh);
        let new = findings.iter().map(|x| m.insert(x).unwrap()).collect();
        m.finish().unwrap().commit().unwrap();
        new
    }

    #[test]
    fn a_merge_says_what_is_new_and_keeps_every_key_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let keys = ReportedKeys::beside(&dir.path().join("state.json"));
        let first = [
            f("TL004", 1, 1),
            f("TL004", 3, 1),
            f("TL004", 3, 1),
            f("TL009", 2, 2),
        ];
        assert_eq!(run(&keys, true, &first), [true, true, false, true]);
        // Later: a repeat, keys before, between and after the old ones; TL009 not seen (kept).
        let later = [
            f("TL004", 0, 9),
            f("TL004", 1, 1),
            f("TL004", 2, 0),
            f("TL004", 4, 4),
            f("TL014", 5, 5),
        ];
        assert_eq!(run(&keys, false, &later), [true, false, true, true, true]);
        let ids = |v: &[(u8, u8)]| {
            v.iter()
                .map(|&(t, s)| (TraceId([t; 16]), SpanId([s; 8])))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys.read_rule("TL004").unwrap(),
            ids(&[(0, 9), (1, 1), (2, 0), (3, 1), (4, 4)])
        );
        assert_eq!(keys.read_rule("TL009").unwrap(), ids(&[(2, 2)]));
        assert_eq!(keys.read_rule("TL014").unwrap(), ids(&[(5, 5)]));
        // No temporary file is left.
        let names: Vec<String> = std::fs::read_dir(keys.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| n.ends_with(".keys")), "{names:?}");
        // A fresh start ignores and then removes what an earlier state left.
        assert_eq!(run(&keys, true, &[f("TL004", 1, 1)]), [true]);
        assert!(keys.read_rule("TL009").unwrap().is_empty());
        assert_eq!(keys.read_rule("TL004").unwrap(), ids(&[(1, 1)]));
    }

    #[test]
    fn a_rule_seen_again_merges_into_what_this_run_wrote_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let keys = ReportedKeys::beside(&dir.path().join("s"));
        run(&keys, true, &[f("TL004", 2, 2)]);
        let again = [
            f("TL004", 1, 1),
            f("TL004", 2, 2),
            f("TL009", 9, 9),
            f("TL004", 0, 0),
            f("TL004", 1, 1),
            f("TL004", 3, 3),
        ];
        assert_eq!(
            run(&keys, false, &again),
            [true, false, true, true, false, true]
        );
        let want: Vec<Key> = [0u8, 1, 2, 3]
            .iter()
            .map(|&i| (TraceId([i; 16]), SpanId([i; 8])))
            .collect();
        assert_eq!(keys.read_rule("TL004").unwrap(), want);
        assert_eq!(std::fs::read_dir(keys.dir()).unwrap().count(), 2);
    }

    #[test]
    fn an_abandoned_merge_changes_nothing_and_out_of_order_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let keys = ReportedKeys::beside(&dir.path().join("s"));
        run(&keys, true, &[f("TL004", 1, 1)]);
        {
            let mut m = keys.merge(false);
            assert!(m.insert(&f("TL004", 2, 2)).unwrap());
            let update = m.finish().unwrap();
            assert_eq!(update.added(), 1);
            // dropped, not committed
        }
        assert_eq!(keys.read_rule("TL004").unwrap().len(), 1);
        let mut m = keys.merge(false);
        m.insert(&f("TL004", 5, 5)).unwrap();
        let e = m.insert(&f("TL004", 4, 4)).unwrap_err();
        assert!(e.to_string().contains("out of report order"), "{e}");
        drop(m);
        assert_eq!(std::fs::read_dir(keys.dir()).unwrap().count(), 1);
    }
}
