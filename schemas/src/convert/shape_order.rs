//! The order in which a scope's spans become rows: spans of one shape next to each other.
//!
//! Why: most of the canonical row's columns are set by one kind of span only (`chat` sets the
//! token counts, `tools/call` the MCP columns, a guardrail span the `guardrail_*` columns). An
//! exporter sends a trace's spans interleaved (`invoke_agent`, `chat`, `execute_tool`,
//! `tools/call`, `chat`, ...), so in input order every sparse column alternates between value
//! and null from row to row. The Parquet writer encodes a column's definition levels as runs:
//! an alternating column costs it one bit-packed level per row, a column whose nulls come in
//! one run costs one run. Grouping a scope's spans by their shape (span kind, the first word of
//! the name, and the number of attributes: a `chat` span with its prompt and completion has more
//! than one without, a failed tool call more than a successful one) turns each sparse column's
//! levels into a few long runs (callgrind, `request_path 20 1000 parquet`, BENCHMARKS.md
//! session 45) and its nulls into one `append_nulls` in the converter.
//!
//! A store is a set of spans, not a sequence: no reader relies on the row order inside a file
//! (the analyzer orders rows by start time, queries say `ORDER BY`). The order is a function
//! of the request alone, so the WAL replay of a request writes the same rows in the same order.
//! Within a group the input order is kept, and rejected spans are noted in input order, so the
//! rejection reasons are exactly [`super::validate_request`]'s.

use opentelemetry_proto::tonic::trace::v1::Span;

/// Distinct shapes told apart in one scope; spans of any further shape form one last group,
/// in input order (a scope whose spans all differ is left almost as it came). Each span looks
/// its shape up among those seen, so this also bounds the work per span.
const MAX_SHAPES: usize = 32;

/// Marks a rejected span: it gets no row.
const REJECTED: u8 = u8::MAX;

/// Scratch reused across scopes and requests.
#[derive(Debug, Default)]
pub(super) struct ShapeOrder {
    /// Each span's group, or [`REJECTED`].
    groups: Vec<u8>,
    /// The spans to convert, as indices into the scope's spans, in row order.
    order: Vec<u32>,
}

impl ShapeOrder {
    /// Orders `spans` into [`Self::order`]: each span that `reject` refuses is reported to it in
    /// input order and left out; the others are grouped by shape, groups in the order their
    /// first span came, input order within a group.
    pub(super) fn arrange(
        &mut self,
        spans: &[Span],
        mut reject: impl FnMut(usize, &Span) -> bool,
    ) -> &[u32] {
        self.groups.clear();
        self.order.clear();
        let mut shapes: [(i32, usize, &[u8]); MAX_SHAPES] = [(0, 0, &[]); MAX_SHAPES];
        let mut known = 0usize;
        let mut counts = [0u32; MAX_SHAPES + 1];
        for (index, span) in spans.iter().enumerate() {
            if reject(index, span) {
                self.groups.push(REJECTED);
                continue;
            }
            let shape = (span.kind, span.attributes.len(), operation(&span.name));
            let group = match shapes[..known].iter().position(|s| *s == shape) {
                Some(g) => g,
                None if known < MAX_SHAPES => {
                    shapes[known] = shape;
                    known += 1;
                    known - 1
                }
                None => MAX_SHAPES,
            };
            counts[group] += 1;
            self.groups.push(group as u8);
        }
        // Counting sort: where each group starts, then every span in input order.
        let mut starts = [0u32; MAX_SHAPES + 1];
        let mut next = 0u32;
        for (start, count) in starts.iter_mut().zip(counts) {
            *start = next;
            next += count;
        }
        self.order.resize(next as usize, 0);
        for (index, &group) in self.groups.iter().enumerate() {
            if group != REJECTED {
                let slot = &mut starts[group as usize];
                self.order[*slot as usize] = index as u32;
                *slot += 1;
            }
        }
        &self.order
    }
}

/// The span name's first word: `chat` of `chat gpt-4o`, `tools/call` of `tools/call search`.
fn operation(name: &str) -> &[u8] {
    let bytes = name.as_bytes();
    match bytes.iter().position(|&b| b == b' ') {
        Some(end) => &bytes[..end],
        None => bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(name: &str, kind: i32) -> Span {
        Span {
            name: name.into(),
            kind,
            ..Default::default()
        }
    }

    fn arranged(spans: &[Span], rejected: &[usize]) -> (Vec<u32>, Vec<usize>) {
        let mut noted = Vec::new();
        let order = ShapeOrder::default()
            .arrange(spans, |i, _| {
                let refuse = rejected.contains(&i);
                if refuse {
                    noted.push(i);
                }
                refuse
            })
            .to_vec();
        (order, noted)
    }

    #[test]
    fn spans_of_one_operation_are_grouped_in_input_order() {
        let spans = [
            span("invoke_agent crm", 1),
            span("chat gpt-4o", 3),
            span("execute_tool add_note", 1),
            span("tools/call add_note", 3),
            span("chat gpt-4o-mini", 3),
            span("execute_tool search", 1),
            span("tools/call search", 3),
            span("tools/call search", 2),
        ];
        let (order, _) = arranged(&spans, &[]);
        assert_eq!(order, [0, 1, 4, 2, 5, 3, 6, 7]);
    }

    #[test]
    fn spans_with_more_attributes_form_their_own_group() {
        let mut with_content = span("chat gpt-4o", 3);
        with_content.attributes = vec![Default::default(); 2];
        let spans = [
            span("chat gpt-4o", 3),
            with_content.clone(),
            span("chat gpt-4o", 3),
            with_content,
        ];
        let (order, _) = arranged(&spans, &[]);
        assert_eq!(order, [0, 2, 1, 3]);
    }

    #[test]
    fn rejected_spans_are_noted_in_input_order_and_get_no_row() {
        let spans = [
            span("chat a", 3),
            span("tool b", 1),
            span("chat c", 3),
            span("tool d", 1),
            span("tool e", 1),
        ];
        let (order, noted) = arranged(&spans, &[0, 3]);
        assert_eq!(order, [1, 4, 2]);
        assert_eq!(noted, [0, 3]);
    }

    #[test]
    fn shapes_beyond_the_limit_share_the_last_group_in_input_order() {
        let mut spans: Vec<Span> = (0..MAX_SHAPES + 3)
            .map(|i| span(&format!("op{i}"), 1))
            .collect();
        spans.push(span("op0 again", 1));
        let (order, _) = arranged(&spans, &[]);
        let mut expected: Vec<u32> = vec![0, MAX_SHAPES as u32 + 3];
        expected.extend(1..MAX_SHAPES as u32 + 3);
        assert_eq!(order, expected);
    }

    #[test]
    fn every_accepted_span_appears_once() {
        let spans: Vec<Span> = (0..1000)
            .map(|i| span(&format!("op{} x", i * 7 % 23), i % 4))
            .collect();
        let (mut order, _) = arranged(&spans, &[5, 500]);
        order.sort_unstable();
        let expected: Vec<u32> = (0..1000).filter(|i| *i != 5 && *i != 500).collect();
        assert_eq!(order, expected);
    }
}
