//! A rule's outcome over one window of the store, in a form that merges across windows.
//!
//! Why: `check` reads a large store one window at a time (`crate::window`), so a rule that
//! reports coverage as text ("tool result not captured on 14 of 20 tool calls (a, b)") cannot
//! format that text per window: the numbers and lists are the store's. A rule instead
//! tallies what it saw in the window's core ([`RuleInput::owns`]) into a [`Partial`]; the
//! partials of every window are merged, and the rule formats its outcome once from the merged
//! tallies ([`Rule::finish`]). Over the whole store as one window, `check` is exactly
//! `finish(scan(input))`, so both paths share one implementation.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

#[cfg(doc)]
use super::Rule;
use super::{Finding, RuleInput};
use crate::model::{Call, SpanId, TraceId};

/// Where an item falls in the store's order: a call's (start, anchor start, anchor trace, anchor
/// span), the order `Model::calls` is in. Lists of names keep the store's first-seen order with it.
pub type OrderKey = (i64, i64, TraceId, SpanId);

/// The order key of `call` in `input`'s model.
pub fn call_key(input: &RuleInput, call: &Call) -> OrderKey {
    let a = &input.model.spans[call.anchor];
    (call.start_ns, a.start_ns, a.trace_id, a.span_id)
}

/// Where a span falls in the store's order: (start, trace, span), the order `Model::spans` is in.
pub type SpanKey = (i64, TraceId, SpanId);

/// The order key of span `i` of `input`'s model.
pub fn span_key(input: &RuleInput, i: usize) -> SpanKey {
    let s = &input.model.spans[i];
    (s.start_ns, s.trace_id, s.span_id)
}

/// The earliest spans of a group that spans the whole store (e.g. one finding per service and
/// missing attribute), as findings at each (message to be written by the rule), and its size.
#[derive(Debug, Default)]
pub struct Sample {
    pub count: usize,
    /// How many of the earliest are kept.
    pub keep: usize,
    /// At most `keep`, ordered by key.
    pub first: Vec<(SpanKey, Finding)>,
}

/// Groups of one window under a cheap key `K` (interned names, a small enum), each counting its
/// spans and keeping its `keep` earliest (by [`SpanKey`], ties in the order added); folded into
/// [`Partial::samples`] once per group by [`Partial::add_samples`]. Why not string keys per span:
/// a library that never sets a name puts a third of a store's spans in one group, and building
/// the group's strings for each of them cost more than the rest of the rule.
pub struct Sampler<K> {
    keep: usize,
    groups: HashMap<K, SamplerGroup, foldhash::fast::RandomState>,
}

struct SamplerGroup {
    count: usize,
    /// (order key, span index), at most `keep`, ordered by key.
    first: Vec<(SpanKey, usize)>,
}

impl<K: Hash + Eq> Sampler<K> {
    /// Keeps the `keep` earliest spans of each group.
    pub fn new(keep: usize) -> Self {
        Self {
            keep,
            groups: HashMap::default(),
        }
    }

    /// Counts span `i` (order `key`) in group `group`.
    pub fn add(&mut self, group: K, key: SpanKey, i: usize) {
        let g = self.groups.entry(group).or_insert_with(|| SamplerGroup {
            count: 0,
            first: Vec::new(),
        });
        g.count += 1;
        // A window's spans come in key order, so once a group holds its `keep` a span is almost
        // always later than all of them: one comparison, not a binary search of tuple
        // comparisons (TL015 adds most spans of a store, session 55).
        if g.first.len() >= self.keep && g.first.last().is_some_and(|(k, _)| *k <= key) {
            return;
        }
        let pos = g.first.partition_point(|(k, _)| *k <= key);
        if pos < self.keep {
            g.first.insert(pos, (key, i));
            g.first.truncate(self.keep);
        }
    }
}

/// A string compared and hashed by where it lies, not by its bytes: a cheap part of a
/// [`Sampler`] key for interned names (a window's rows share one allocation per distinct value,
/// and a rule's constants have one address). Why: hashing and comparing the names' bytes on
/// every span was TL015's largest cost (perf, session 55). One text at two addresses makes two
/// groups in the window; [`Partial::add_samples`] merges groups by their text, so the outcome is
/// the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct ByAddr<'a>(pub &'a str);

impl PartialEq for ByAddr<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0.as_ptr(), other.0.as_ptr()) && self.0.len() == other.0.len()
    }
}
impl Eq for ByAddr<'_> {}
impl Hash for ByAddr<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_usize(self.0.as_ptr() as usize);
        h.write_usize(self.0.len());
    }
}

/// A finding whose message depends on the whole store (e.g. "although earlier calls of the same
/// tool returned it"), decided in [`Rule::finish`].
#[derive(Debug)]
pub struct Pending {
    pub key: OrderKey,
    /// What the rule looks the store-wide fact up by (e.g. the tool).
    pub label: String,
    /// A fact of the candidate itself.
    pub flag: bool,
    pub finding: Finding,
}

/// Findings and tallies of one rule over one window's core.
#[derive(Debug, Default)]
pub struct Partial {
    pub findings: Vec<Finding>,
    /// Store-wide groups by key.
    pub samples: BTreeMap<Vec<String>, Sample>,
    pub pending: Vec<Pending>,
    /// Counts by name, summed across windows.
    pub counts: Counts,
    /// Counts by name and key (e.g. parentless server spans per MCP method), summed.
    pub keyed: BTreeMap<&'static str, BTreeMap<String, usize>>,
    /// Names by list, each with the order key it was first seen at; merged keeping the earliest.
    pub firsts: BTreeMap<&'static str, BTreeMap<String, OrderKey>>,
}

/// Counts by name. A rule keeps a handful and adds to them per span, so they are a short list
/// searched by the name's address first (a rule passes its own constant), then by its text: a
/// map compared names string by string on every span (callgrind, session 23).
#[derive(Debug, Default)]
pub struct Counts(Vec<(&'static str, usize)>);

impl Counts {
    fn find(&self, name: &str) -> Option<usize> {
        self.0
            .iter()
            .position(|(n, _)| std::ptr::eq(*n, name) || *n == name)
    }
    /// Adds `n` to `name`.
    pub fn add(&mut self, name: &'static str, n: usize) {
        match self.find(name) {
            Some(k) => self.0[k].1 += n,
            None => self.0.push((name, n)),
        }
    }
    /// The count `name`, if ever added.
    pub fn get(&self, name: &str) -> Option<usize> {
        self.find(name).map(|k| self.0[k].1)
    }
    /// Every count, in the order first added.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, usize)> + '_ {
        self.0.iter().copied()
    }
}

impl Partial {
    /// Adds `n` to count `name`.
    pub fn add(&mut self, name: &'static str, n: usize) {
        self.counts.add(name, n);
    }
    /// The count `name` (0 when never added).
    pub fn count(&self, name: &'static str) -> usize {
        self.counts.get(name).unwrap_or(0)
    }
    /// Adds `n` to key `key` of the keyed count `name`.
    pub fn add_keyed(&mut self, name: &'static str, key: &str, n: usize) {
        let keys = self.keyed.entry(name).or_default();
        match keys.get_mut(key) {
            Some(count) => *count += n,
            // The key is copied once, not on every call.
            None => {
                keys.insert(key.to_string(), n);
            }
        }
    }
    /// Records `item` in list `name`, seen at `at`.
    pub fn first_seen(&mut self, name: &'static str, item: &str, at: OrderKey) {
        let list = self.firsts.entry(name).or_default();
        match list.get_mut(item) {
            Some(k) if *k <= at => {}
            Some(k) => *k = at,
            None => {
                list.insert(item.to_string(), at);
            }
        }
    }
    /// List `name` in first-seen order.
    pub fn list(&self, name: &'static str) -> Vec<&str> {
        let mut items: Vec<(&OrderKey, &str)> = self
            .firsts
            .get(name)
            .into_iter()
            .flatten()
            .map(|(item, k)| (k, item.as_str()))
            .collect();
        items.sort();
        items.into_iter().map(|(_, item)| item).collect()
    }

    /// Folds the groups of `sampler` into [`Self::samples`], named by `name`, with findings made
    /// by `at` for the spans kept.
    pub fn add_samples<K>(
        &mut self,
        sampler: Sampler<K>,
        name: impl Fn(&K) -> Vec<String>,
        at: impl Fn(usize) -> Finding,
    ) {
        for (key, group) in sampler.groups {
            self.add_sample(
                name(&key),
                Sample {
                    count: group.count,
                    keep: sampler.keep,
                    first: group.first.into_iter().map(|(k, i)| (k, at(i))).collect(),
                },
            );
        }
    }

    fn add_sample(&mut self, group: Vec<String>, theirs: Sample) {
        let g = self.samples.entry(group).or_default();
        g.count += theirs.count;
        g.keep = g.keep.max(theirs.keep);
        g.first.extend(theirs.first);
        g.first.sort_by_key(|(k, _)| *k);
        g.first.truncate(g.keep);
    }

    /// Folds `other` (another window of the same rule) into `self`.
    pub fn merge(&mut self, other: Partial) {
        self.findings.extend(other.findings);
        self.pending.extend(other.pending);
        for (group, theirs) in other.samples {
            self.add_sample(group, theirs);
        }
        for (name, n) in other.counts.iter() {
            self.add(name, n);
        }
        for (name, keys) in other.keyed {
            for (key, n) in keys {
                self.add_keyed(name, &key, n);
            }
        }
        for (name, items) in other.firsts {
            for (item, at) in items {
                self.first_seen(name, &item, at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_split_by_address_merge_by_text_keeping_the_earliest() {
        // One text at two addresses (two scan tasks' interners): two groups in the sampler,
        // one sample once folded, with the count of both and the earliest spans of both.
        let (a, b) = (String::from("svc"), String::from("svc"));
        assert!(!std::ptr::eq(a.as_ptr(), b.as_ptr()));
        let key = |start: i64| (start, TraceId([1; 16]), SpanId([start as u8; 8]));
        let mut sampler = Sampler::new(2);
        for (start, name) in [(5, &a), (1, &b), (3, &a), (7, &b), (2, &a), (9, &a)] {
            sampler.add(ByAddr(name.as_str()), key(start), start as usize);
        }
        // A span later than a full group's kept ones is counted, not kept.
        assert_eq!(sampler.groups[&ByAddr(a.as_str())].first.len(), 2);
        let mut p = Partial::default();
        p.add_samples(
            sampler,
            |k| vec![k.0.to_string()],
            |i| Finding {
                rule: "TL000",
                name: "test",
                severity: crate::rules::Severity::Info,
                trace_id: TraceId([1; 16]),
                span_id: SpanId([i as u8; 8]),
                conversation_id: None,
                tool: None,
                message: String::new(),
                related: Vec::new(),
            },
        );
        assert_eq!(p.samples.len(), 1);
        let sample = &p.samples[&vec!["svc".to_string()]];
        assert_eq!(sample.count, 6);
        let kept: Vec<i64> = sample.first.iter().map(|(k, _)| k.0).collect();
        assert_eq!(kept, [1, 2]);
    }

    #[test]
    fn counts_are_found_by_address_or_by_text_and_merge() {
        const SPANS: &str = "spans";
        // The same text at another address, as another window's constant would be.
        let other_spans: &'static str = Box::leak(String::from("spans").into_boxed_str());
        let mut a = Partial::default();
        a.add(SPANS, 2);
        a.add("examined", 1);
        a.add(other_spans, 3);
        assert_eq!(a.count(SPANS), 5);
        assert_eq!(a.count("examined"), 1);
        assert_eq!(a.count("never"), 0);
        let mut b = Partial::default();
        b.add("examined", 4);
        b.add("redacted", 1);
        a.merge(b);
        assert_eq!(
            a.counts.iter().collect::<Vec<_>>(),
            [("spans", 5), ("examined", 5), ("redacted", 1)]
        );
        a.add_keyed("by method", "tools/call", 1);
        a.add_keyed("by method", "tools/call", 2);
        assert_eq!(a.keyed["by method"]["tools/call"], 3);
    }
}
