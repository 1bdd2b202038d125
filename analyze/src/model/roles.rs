//! Which side of an MCP exchange a span belongs to (client or server).
//!
//! CLIENT / SERVER kinds say it directly. Some instrumentations (Traceloop) emit every MCP span as
//! INTERNAL, so for those the side is inferred from the process: a service that emits agent, model
//! or `execute_tool` spans (or MCP CLIENT spans) is a host, a service that emits MCP SERVER spans is
//! a server; when a service is neither or both, the span is client-side if an ancestor in its own
//! process is a host span, server-side otherwise (an MCP span with no agent above it is a server
//! handling a request). An `execute_tool` span that carries the MCP attributes itself (the
//! conventions' alternative to a separate MCP client span) and the model's tool call id is the
//! host's, whatever its kind (INTERNAL, as GenAI tool spans are). OpenLIT's Python
//! instrumentation records a server's handling of a request as CLIENT spans: an OpenLIT CLIENT
//! span in a process that serves MCP (it has MCP SERVER spans) and runs no agent is server-side.

use std::collections::{HashMap, HashSet};

use super::span::{SpanKind, SpanRow};

/// The side of an MCP span. Non-MCP spans have no role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpRole {
    Client,
    Server,
}

/// Computes the role of every span (`None` for spans without an MCP method).
pub fn assign(spans: &[SpanRow], parent: &[Option<usize>]) -> Vec<Option<McpRole>> {
    let mut host_services: HashSet<&str, foldhash::fast::RandomState> = HashSet::default();
    let mut server_services: HashSet<&str, foldhash::fast::RandomState> = HashSet::default();
    // Services with agent, model or execute_tool spans: where an agent runs.
    let mut agent_services: HashSet<&str, foldhash::fast::RandomState> = HashSet::default();
    for s in spans {
        let svc = s.service_name.as_deref().unwrap_or("");
        if s.is_agent_run()
            || s.is_model_call()
            || s.is_execute_tool()
            || s.is_execute_tool_with_mcp()
        {
            host_services.insert(svc);
            agent_services.insert(svc);
        }
        if s.is_mcp() {
            match s.kind() {
                SpanKind::Client => {
                    host_services.insert(svc);
                }
                SpanKind::Server => {
                    server_services.insert(svc);
                }
                _ => {}
            }
        }
    }
    let mut memo: HashMap<usize, bool, foldhash::fast::RandomState> = HashMap::default();
    (0..spans.len())
        .map(|i| {
            let s = &spans[i];
            if !s.is_mcp() {
                return None;
            }
            Some(match s.kind() {
                // OpenLIT's Python instrumentation records the server's handling of a request
                // (FastMCP's and the tool manager's `call_tool`) as CLIENT spans: in a process
                // that serves MCP (SERVER spans) and runs no agent, they are the server's side.
                SpanKind::Client
                    if is_openlit(s) && {
                        let svc = s.service_name.as_deref().unwrap_or("");
                        server_services.contains(svc) && !agent_services.contains(svc)
                    } =>
                {
                    McpRole::Server
                }
                SpanKind::Client | SpanKind::Producer => McpRole::Client,
                SpanKind::Server | SpanKind::Consumer => McpRole::Server,
                // MCP attributes on the host's execute_tool span (no separate MCP span).
                _ if s.is_execute_tool_with_mcp() => McpRole::Client,
                _ => {
                    let svc = s.service_name.as_deref().unwrap_or("");
                    let host = host_services.contains(svc);
                    let server = server_services.contains(svc);
                    if host && !server {
                        McpRole::Client
                    } else if server && !host {
                        McpRole::Server
                    } else if has_host_ancestor(spans, parent, i, &mut memo) {
                        McpRole::Client
                    } else {
                        McpRole::Server
                    }
                }
            })
        })
        .collect()
}

fn is_openlit(s: &SpanRow) -> bool {
    s.dialects.iter().any(|d| d.as_str() == "openlit")
}

/// True when an ancestor in the same process (same service) is an agent, model or execute_tool
/// span.
fn has_host_ancestor(
    spans: &[SpanRow],
    parent: &[Option<usize>],
    i: usize,
    memo: &mut HashMap<usize, bool, foldhash::fast::RandomState>,
) -> bool {
    if let Some(v) = memo.get(&i) {
        return *v;
    }
    let svc = spans[i].service_name.as_deref();
    let mut cur = parent[i];
    let mut found = false;
    let mut steps = 0;
    while let Some(p) = cur {
        if spans[p].service_name.as_deref() != svc || steps > 10_000 {
            break;
        }
        let ps = &spans[p];
        if ps.is_agent_run()
            || ps.is_model_call()
            || ps.is_execute_tool()
            || ps.is_execute_tool_with_mcp()
        {
            found = true;
            break;
        }
        cur = parent[p];
        steps += 1;
    }
    memo.insert(i, found);
    found
}
