//! HTTP spans that only carry an MCP request's standard headers (`Mcp-Method`, `Mcp-Name`).
//!
//! The `mcp-http` dialect lifts the headers an HTTP instrumentation captured into the MCP
//! columns, so that a server with HTTP spans but no MCP instrumentation is still seen as an MCP
//! server (and broken propagation into it is reported). When the process does have an MCP span
//! of the request, the HTTP span is only its transport: an HTTP server span around the MCP
//! server span, or an HTTP client span inside the MCP client span. Left as an MCP span it would
//! count the request twice, and when the HTTP layer does not propagate context (the MCP layer
//! carrying it in `params._meta` instead) it would even look like an orphaned server span.
//!
//! So, before roles and calls are built, a header-marked span is demoted to plain HTTP when
//! another MCP span of the same method (and name, when both know it) in the same service nests
//! with it in time, one interval inside the other. Time nesting within one service is what
//! "the same request" means across the two layers: they need not share a trace (an HTTP layer
//! without propagation starts its own), but they always run in one process around one another.

use std::collections::HashMap;

use super::span::{SpanRow, Sym};

/// The dialect id the collector records for spans with captured MCP headers.
pub const MCP_HTTP_DIALECT: &str = "mcp-http";

fn header_marked(s: &SpanRow) -> bool {
    s.is_mcp() && s.dialects.iter().any(|d| d.as_str() == MCP_HTTP_DIALECT)
}

/// The name an MCP request is about (tool, prompt or resource), when the span knows it.
fn target(s: &SpanRow) -> Option<&str> {
    s.tool_name
        .as_deref()
        .or(s.prompt_name().map(Sym::as_str))
        .or(s.mcp_resource_uri().map(Sym::as_str))
}

fn nests(a: &SpanRow, b: &SpanRow) -> bool {
    (a.start_ns <= b.start_ns && b.end_ns <= a.end_ns)
        || (b.start_ns <= a.start_ns && a.end_ns <= b.end_ns)
}

/// The MCP facts a demotion cleared on one span, kept so the row can be restored: a windowed
/// `check` carries rows into the next window's model, where the span is judged afresh.
#[derive(Debug)]
pub struct Demoted {
    /// The span's index in the slice that was demoted.
    pub index: usize,
    mcp_method: Option<Sym>,
    tool_name: Option<Sym>,
    prompt_name: Option<Sym>,
    mcp_resource_uri: Option<Sym>,
}

impl Demoted {
    /// The MCP facts span `index` (`s`) has now, before a change that [`Demoted::restore`]
    /// undoes (a promotion, [`super::server_tools`]).
    pub(super) fn before(index: usize, s: &SpanRow) -> Demoted {
        Demoted {
            index,
            mcp_method: s.mcp_method.clone(),
            tool_name: s.tool_name.clone(),
            prompt_name: s.prompt_name().cloned(),
            mcp_resource_uri: s.mcp_resource_uri().cloned(),
        }
    }

    /// Puts the cleared facts back on `s` (the span at [`Demoted::index`]).
    pub fn restore(self, s: &mut SpanRow) {
        s.mcp_method = self.mcp_method;
        s.tool_name = self.tool_name;
        // A row without out-of-line fields gets them only when there is something to put back.
        if s.rare.is_some() || self.prompt_name.is_some() || self.mcp_resource_uri.is_some() {
            let rare = s.rare_mut();
            rare.prompt_name = self.prompt_name;
            rare.mcp_resource_uri = self.mcp_resource_uri;
        }
    }
}

/// Clears the MCP facts of header-marked HTTP spans that are the transport of another MCP span
/// (see the module docs). Returns what was cleared, per demoted span.
pub fn demote_transport_spans(spans: &mut [SpanRow]) -> Vec<Demoted> {
    if !spans.iter().any(header_marked) {
        return Vec::new();
    }
    // MCP spans of the MCP layer, per (service, method), by start time.
    let mut layer: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, s) in spans.iter().enumerate() {
        if s.is_mcp() && !header_marked(s) {
            let key = (
                s.service_name.as_deref().unwrap_or(""),
                s.mcp_method.as_deref().unwrap_or(""),
            );
            layer.entry(key).or_default().push(i);
        }
    }
    for list in layer.values_mut() {
        list.sort_by_key(|&i| spans[i].start_ns);
    }
    let mut demote = Vec::new();
    for (i, t) in spans.iter().enumerate() {
        if !header_marked(t) {
            continue;
        }
        let key = (
            t.service_name.as_deref().unwrap_or(""),
            t.mcp_method.as_deref().unwrap_or(""),
        );
        let Some(list) = layer.get(&key) else {
            continue;
        };
        // Candidates start no later than the transport span ends (the MCP client span starts
        // before its HTTP client span). Nesting spans are close in start order: the scan looks
        // back over at most 1,024 of them, so a long session costs linear time, not quadratic.
        let end = list.partition_point(|&m| spans[m].start_ns <= t.end_ns);
        let found = list[..end].iter().rev().take(1024).any(|&m| {
            let s = &spans[m];
            nests(s, t)
                && match (target(s), target(t)) {
                    (Some(a), Some(b)) => a == b,
                    _ => true,
                }
        });
        if found {
            demote.push(i);
        }
    }
    demote
        .into_iter()
        .map(|index| {
            let s = &mut spans[index];
            Demoted {
                index,
                mcp_method: s.mcp_method.take(),
                tool_name: s.tool_name.take(),
                prompt_name: s.rare.as_mut().and_then(|r| r.prompt_name.take()),
                mcp_resource_uri: s.rare.as_mut().and_then(|r| r.mcp_resource_uri.take()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::span::TraceId;

    fn span(service: &str, method: &str, tool: &str, start: i64, end: i64, http: bool) -> SpanRow {
        SpanRow {
            trace_id: TraceId([start as u8; 16]),
            service_name: Some(Sym::from(service)),
            mcp_method: Some(Sym::from(method)),
            tool_name: Some(Sym::from(tool)),
            start_ns: start,
            end_ns: end,
            dialects: if http {
                vec![Sym::from(MCP_HTTP_DIALECT)].into()
            } else {
                vec![Sym::from("semconv")].into()
            },
            ..SpanRow::default()
        }
    }

    #[test]
    fn an_http_span_around_the_mcp_server_span_is_demoted() {
        let mut spans = vec![
            span("srv", "tools/call", "get_stock", 100, 200, true),
            span("srv", "tools/call", "get_stock", 120, 180, false),
        ];
        assert_eq!(demote_transport_spans(&mut spans).len(), 1);
        assert!(!spans[0].is_mcp() && spans[0].tool_name.is_none());
        assert!(spans[1].is_mcp());
    }

    #[test]
    fn restoring_a_demotion_gives_the_rows_as_loaded() {
        let mut spans = vec![
            span("srv", "tools/call", "get_stock", 100, 200, true),
            span("srv", "tools/call", "get_stock", 120, 180, false),
        ];
        let loaded = format!("{spans:?}");
        let demoted = demote_transport_spans(&mut spans);
        assert_eq!(demoted.len(), 1);
        assert_ne!(format!("{spans:?}"), loaded);
        for d in demoted {
            let i = d.index;
            d.restore(&mut spans[i]);
        }
        assert_eq!(format!("{spans:?}"), loaded);
    }

    #[test]
    fn an_http_client_span_inside_the_mcp_client_span_is_demoted() {
        let mut spans = vec![
            span("host", "tools/call", "get_stock", 100, 300, false),
            span("host", "tools/call", "get_stock", 110, 290, true),
        ];
        assert_eq!(demote_transport_spans(&mut spans).len(), 1);
        assert!(!spans[1].is_mcp());
    }

    #[test]
    fn without_an_mcp_span_of_that_request_the_http_span_stays_the_server_span() {
        // nothing else in the service; another service's span; another tool; not nested
        let mut spans = vec![
            span("srv", "tools/call", "get_stock", 100, 200, true),
            span("host", "tools/call", "get_stock", 90, 210, false),
            span("srv", "tools/call", "adjust_stock", 120, 180, false),
            span("srv", "tools/call", "get_stock", 150, 250, false),
        ];
        assert_eq!(demote_transport_spans(&mut spans).len(), 0);
        assert!(spans[0].is_mcp());
    }
}
