//! A fact computed once per distinct shared list, not once per span.
//!
//! Why: rules that look at a span's attribute keys (TL007, TL015) asked the same question of
//! every span, hashing a dozen strings each time, while the loader hands out one [`SymList`]
//! allocation per distinct list (a million spans of the benchmark store carry eight). Keyed by
//! that allocation, the answer is computed once per list and looked up by address after that.
//! The memo holds a clone of each list it has seen, so an address cannot be freed and reused for
//! a different list while the memo lives. Lists the loader did not share (past its cap) are
//! still answered correctly, each on its own: the memo then grows by one entry per such span of
//! the window it is used on.

use std::collections::HashMap;

use super::span::SymList;

/// Answers of `V` per distinct list (see the module docs).
pub struct ListMemo<V> {
    answers: HashMap<usize, (SymList, V), foldhash::fast::RandomState>,
}

impl<V> Default for ListMemo<V> {
    fn default() -> Self {
        Self {
            answers: HashMap::default(),
        }
    }
}

impl<V> ListMemo<V> {
    /// The answer for `list`, computed by `f` the first time this allocation is seen.
    pub fn get(&mut self, list: &SymList, f: impl FnOnce(&SymList) -> V) -> &V {
        &self
            .answers
            .entry(list.addr())
            .or_insert_with(|| (list.clone(), f(list)))
            .1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::span::Sym;

    fn list(keys: &[&str]) -> SymList {
        keys.iter()
            .map(|k| Sym::from(*k))
            .collect::<Vec<_>>()
            .into()
    }

    #[test]
    fn computes_once_per_allocation_and_apart_for_equal_unshared_lists() {
        let a = list(&["gen_ai.system", "mcp.method.name"]);
        let shared = a.clone();
        // Equal contents, another allocation (a list the loader did not share).
        let unshared = list(&["gen_ai.system", "mcp.method.name"]);
        let empty = SymList::default();
        let mut memo = ListMemo::default();
        let mut calls = 0;
        let mut count = |l: &SymList| {
            calls += 1;
            l.len()
        };
        assert_eq!(*memo.get(&a, &mut count), 2);
        assert_eq!(*memo.get(&shared, &mut count), 2);
        assert_eq!(*memo.get(&unshared, &mut count), 2);
        assert_eq!(*memo.get(&empty, &mut count), 0);
        assert_eq!(*memo.get(&SymList::default(), &mut count), 0);
        // a and its clone once, the unshared list once, the empty list once.
        assert_eq!(calls, 3);
    }

    #[test]
    fn a_freed_list_cannot_be_mistaken_for_a_new_one() {
        let mut memo = ListMemo::default();
        for i in 0..100 {
            let key = format!("k{i}");
            let l = list(&[key.as_str()]);
            // The list is dropped after this iteration; the memo's clone keeps its address
            // taken, so the next list cannot be answered with this one's fact.
            assert_eq!(memo.get(&l, |l| l[0].to_string()), &key);
        }
    }
}
