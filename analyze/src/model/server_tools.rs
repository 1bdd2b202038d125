//! Tool spans that are the server side of an MCP call although they carry no MCP attribute.
//!
//! OpenInference's Python MCP instrumentation emits no spans: it carries the trace context in
//! `params._meta` and leaves the spans to the application. An MCP server whose tool functions are
//! traced with OpenInference's tool decorator (`OITracer.tool`) then shows each call as one
//! INTERNAL span named for its tool (`openinference.span.kind=TOOL`, `tool.name`, the arguments in
//! `input.value`) and nothing else: no method, no request id, nothing that says "MCP". (The JS
//! `traceTool` records the MCP handler's `extra`, which the `openinference` dialect reads; the
//! Python decorator records only the arguments.)
//!
//! Such a span is the server side of a call when it is where its process was entered: it has no
//! parent, its parent was not exported, or its parent belongs to another service (the host's
//! `execute_tool`, reached through the propagated context). A framework's tool span in an agent
//! (LangChain's, say) runs under the agent's own spans in the same process, so it is never an
//! entry span and stays a plain tool span. Before roles and calls are built, an entry TOOL span
//! gets the method `tools/call`: it then joins its host's call when the context crossed (its
//! error status and arguments become the call's), and is an orphaned server span for TL004 when
//! it did not. [`Model::into_rows`](super::Model::into_rows) takes the method back off.

use super::span::{SpanRow, Sym};
use super::transport::Demoted;

/// The dialect id of OpenInference's instrumentations.
const OPENINFERENCE: &str = "openinference";
/// The method an entry tool span is given.
const TOOLS_CALL: &str = "tools/call";

/// An OpenInference tool span without an MCP method: the `openinference` dialect gives TOOL spans
/// the operation `execute_tool` (stores written before it did leave it unset).
fn bare_tool_span(s: &SpanRow) -> bool {
    s.mcp_method.is_none()
        && s.tool_name.is_some()
        && s.operation_name
            .as_deref()
            .is_none_or(|op| op == "execute_tool")
        && s.dialects.iter().any(|d| d.as_str() == OPENINFERENCE)
}

/// Gives `tools/call` to the OpenInference tool spans that enter their process (see the module
/// docs); returns what each promoted span had before, for [`Demoted::restore`].
pub fn promote(spans: &mut [SpanRow], parent: &[Option<usize>]) -> Vec<Demoted> {
    let entry: Vec<usize> = (0..spans.len())
        .filter(|&i| bare_tool_span(&spans[i]))
        .filter(|&i| match parent[i] {
            None => true,
            Some(p) => spans[p].service_name != spans[i].service_name,
        })
        .collect();
    if entry.is_empty() {
        return Vec::new();
    }
    let method = Sym::from(TOOLS_CALL);
    entry
        .into_iter()
        .map(|i| {
            let before = Demoted::before(i, &spans[i]);
            spans[i].mcp_method = Some(method.clone());
            before
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::span::{SpanId, TraceId};

    fn span(service: &str, id: u8, tool: Option<&str>, dialect: &str) -> SpanRow {
        SpanRow {
            trace_id: TraceId([1; 16]),
            span_id: SpanId([id; 8]),
            service_name: Some(Sym::from(service)),
            tool_name: tool.map(Sym::from),
            dialects: vec![Sym::from(dialect)].into(),
            ..SpanRow::default()
        }
    }

    #[test]
    fn entry_tool_spans_become_server_calls_and_nested_ones_do_not() {
        let mut spans = vec![
            // 0: the host's execute_tool (not OpenInference)
            SpanRow {
                operation_name: Some(Sym::from("execute_tool")),
                ..span("host", 0, Some("lookup"), "semconv")
            },
            // 1: the server's tool span under the host's (context propagated)
            span("server", 1, Some("lookup"), OPENINFERENCE),
            // 2: a root tool span in the server (context lost)
            span("server", 2, Some("lookup"), OPENINFERENCE),
            // 3: an agent's framework tool span under its own chain span (same service)
            span("agent", 3, Some("search"), OPENINFERENCE),
            // 4: the chain span above it (no tool)
            span("agent", 4, None, OPENINFERENCE),
        ];
        let parent = vec![None, Some(0), None, Some(4), None];
        let before = promote(&mut spans, &parent);
        let methods: Vec<Option<&str>> = spans.iter().map(|s| s.mcp_method.as_deref()).collect();
        assert_eq!(
            methods,
            vec![None, Some(TOOLS_CALL), Some(TOOLS_CALL), None, None]
        );
        assert_eq!(before.len(), 2);
        for d in before {
            let i = d.index;
            d.restore(&mut spans[i]);
        }
        assert!(spans.iter().all(|s| s.mcp_method.is_none()), "restored");
    }
}
