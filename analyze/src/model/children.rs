//! Each span's in-store children, as one flat list.
//!
//! Why not a `Vec<usize>` per span: a window's model has about 250,000 spans, and a list per
//! span was as many small allocations to grow while parents were linked and to free when the
//! window was dropped (perf over a 10M-span `check`, session 48: the pushes alone 1.1% of its
//! CPU). One offsets array and one array of children hold the same lists in two allocations.

use std::ops::Index;

/// The children of every span of a model, each span's in the order they were added.
#[derive(Debug, Default)]
pub struct Children {
    /// Span `i`'s children are `kids[start[i]..start[i + 1]]`.
    start: Vec<u32>,
    kids: Vec<usize>,
}

impl Children {
    /// The lists of `n` spans from (parent, child) edges; each parent's children keep the
    /// order the edges come in.
    pub fn from_edges(n: usize, edges: &[(usize, usize)]) -> Self {
        assert!(u32::try_from(edges.len()).is_ok(), "more than 2^32 edges");
        let mut start = vec![0u32; n + 1];
        for &(p, _) in edges {
            start[p + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut next: Vec<u32> = start[..n].to_vec();
        let mut kids = vec![0usize; edges.len()];
        for &(p, c) in edges {
            kids[next[p] as usize] = c;
            next[p] += 1;
        }
        Self { start, kids }
    }

    /// Spans covered (0 for an empty model).
    pub fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Index<usize> for Children {
    type Output = [usize];
    fn index(&self, i: usize) -> &[usize] {
        &self.kids[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_edge_order_and_empty_spans_have_none() {
        let c = Children::from_edges(5, &[(3, 4), (0, 2), (3, 1), (0, 3)]);
        assert_eq!(c.len(), 5);
        assert_eq!(&c[0], &[2, 3]);
        assert!(c[1].is_empty() && c[2].is_empty() && c[4].is_empty());
        assert_eq!(&c[3], &[4, 1]);
        assert!(Children::default().is_empty());
    }
}
