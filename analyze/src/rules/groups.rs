//! Grouping a window's calls by a key (scope, run, tool), handed back in key order.
//!
//! Why not a `BTreeMap`: the rules that group every call of a window (TL008, TL010, TL014, TL016)
//! did one ordered-map insert per call, each a dozen key comparisons, and a conversation scope
//! compares its id's bytes: 5% of a 1M-span `check`'s instructions (callgrind, session 24). Here
//! a call costs one hash lookup, and only the groups are sorted, once. The order handed back is
//! the `BTreeMap`'s (keys ascending, values in insertion order), so findings come out as before.

use std::collections::HashMap;
use std::hash::Hash;

/// Values grouped by key; [`Groups::into_sorted`] gives them back in ascending key order.
pub struct Groups<K, V> {
    index: HashMap<K, usize, foldhash::fast::RandomState>,
    groups: Vec<(K, Vec<V>)>,
}

impl<K, V> Default for Groups<K, V> {
    fn default() -> Self {
        Self {
            index: HashMap::default(),
            groups: Vec::new(),
        }
    }
}

impl<K: Hash + Eq + Ord + Clone, V> Groups<K, V> {
    /// Adds `value` to `key`'s group (created empty on first sight).
    pub fn push(&mut self, key: K, value: V) {
        self.group(key).push(value);
    }

    /// `key`'s group, created empty on first sight.
    pub fn group(&mut self, key: K) -> &mut Vec<V> {
        let next = self.groups.len();
        let at = *self.index.entry(key.clone()).or_insert(next);
        if at == next {
            self.groups.push((key, Vec::new()));
        }
        &mut self.groups[at].1
    }

    /// The groups in the order their first value was pushed, each group's values in the order
    /// they were pushed: for a rule whose output does not depend on the order of its groups
    /// (each finding is anchored on a call of one group only, and the report orders findings
    /// by their spans), which so skips comparing the keys (a conversation id's bytes).
    pub fn into_first_seen(self) -> Vec<(K, Vec<V>)> {
        self.groups
    }

    /// The groups in ascending key order, each group's values in the order they were pushed.
    pub fn into_sorted(self) -> Vec<(K, Vec<V>)> {
        let mut groups = self.groups;
        groups.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        groups
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn groups_come_back_as_an_ordered_map_would_give_them() {
        let input = [
            ("conv-b", 1),
            ("conv-a", 2),
            ("conv-b", 3),
            ("conv-c", 4),
            ("conv-a", 5),
            ("conv-b", 6),
        ];
        let mut groups = Groups::default();
        let mut map: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (k, v) in input {
            groups.push(k, v);
            map.entry(k).or_default().push(v);
        }
        let expected: Vec<(&str, Vec<i32>)> = map.into_iter().collect();
        let first_seen: Vec<&str> = groups.groups.iter().map(|(k, _)| *k).collect();
        assert_eq!(first_seen, ["conv-b", "conv-a", "conv-c"]);
        assert_eq!(groups.into_sorted(), expected);
        assert_eq!(expected.len(), 3);
        assert_eq!(expected[1], ("conv-b", vec![1, 3, 6]));
    }

    #[test]
    fn an_empty_grouping_is_empty() {
        let groups: Groups<u8, u8> = Groups::default();
        assert!(groups.into_sorted().is_empty());
    }
}
