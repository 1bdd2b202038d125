//! `report propagation`: how trace context crosses each MCP client service → server service
//! pair, and what to fix where it does not.
//!
//! Why a report next to TL004: TL004 says which server spans were cut off; this says, per pair of
//! processes, how many requests kept the host's trace, by which channel, which library sits on
//! each side (instrumentation scope name and version) and the one change that would fix the
//! rest. It reads the model's stitching facts (`Model::orphans`, the calls that stitching merged)
//! and never matches spans itself.
//!
//! Per MCP request (a logical call with an MCP client or server span; notifications carry no
//! context and are not calls):
//! - **stitched**: the server's span is in the host's trace, under an in-store parent. The
//!   channel is **`params._meta`** when a captured request carries `_meta.traceparent` of that
//!   trace, or when the server's MCP span hangs directly under the caller's MCP-level span (its MCP
//!   layer extracted the context from the message); **HTTP header only** when it hangs under an
//!   HTTP span instead (a non-MCP CLIENT span of the caller, or a non-MCP SERVER span of its own
//!   process) and no `_meta.traceparent` was captured: the HTTP layer carried it, the MCP message
//!   did not.
//! - **re-rooted by a gateway**: the server span names a parent that is not in the store, in
//!   another trace than the host's call (which stitching found): something between them started
//!   a new trace.
//! - **none**: the server span is the root of a new trace while the host's call exists: no context
//!   crossed.
//! - **not observable**: only one side is in the store (server not exporting, or a server span no
//!   host call could be matched to).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use schemas::schema::col;
use serde::Serialize;

use super::{Owned, Report};
use crate::model::{McpRole, Model, SpanKind};

/// Columns this report reads beyond the base projection (the libraries' versions).
pub const COLUMNS: &[&str] = &[col::SCOPE_VERSION];

/// One client service → server service pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PropagationRow {
    /// `service.name` of the calling side; None when no host span of the requests is in the store.
    pub client: Option<String>,
    /// `service.name` of the MCP server; None when the server exported no span of the requests.
    pub server: Option<String>,
    /// Instrumentation scopes (name and version) of the client's MCP spans (else its execute_tool
    /// spans).
    pub client_libraries: Vec<String>,
    /// Instrumentation scopes of the server's MCP spans.
    pub server_libraries: Vec<String>,
    /// MCP requests between the two.
    pub calls: usize,
    /// Requests whose server span is in the host's trace (context crossed).
    pub stitched: usize,
    /// How each request's context crossed (the counts add up to `calls`).
    pub how: How,
    /// `tools/call` requests whose server span is not in the host's trace: TL004's findings.
    pub unstitched_tool_calls: usize,
    /// What to change, for the requests that did not cross.
    pub fix: String,
}

/// How context crossed, per request (see the module docs for the evidence behind each).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct How {
    /// Stitched: W3C trace context in `params._meta`.
    pub params_meta: usize,
    /// Stitched: only the HTTP request's `traceparent` header carried it.
    pub http_header_only: usize,
    /// Stitched through a span of a third service (a gateway that propagated).
    pub via_gateway: usize,
    /// Not stitched: the server's parent is absent from the store, in another trace.
    pub rerooted_by_gateway: usize,
    /// Not stitched: the server span is a root.
    pub none: usize,
    /// Only one side of the request is in the store.
    pub not_observable: usize,
}

#[derive(Default)]
struct Acc {
    client_libraries: BTreeSet<String>,
    server_libraries: BTreeSet<String>,
    calls: usize,
    how: How,
    unstitched_tool_calls: usize,
    /// Requests whose host side is an execute_tool span with no MCP client span under it.
    no_client_span: usize,
}

/// How one request's context crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Channel {
    Meta,
    HttpHeader,
    ViaGateway,
    Rerooted,
    None,
    NotObservable,
}

fn library(model: &Model, i: usize) -> Option<String> {
    let s = &model.spans[i];
    let name = s.scope_name.as_deref().filter(|n| !n.is_empty())?;
    Some(match s.scope_version.as_deref().filter(|v| !v.is_empty()) {
        Some(v) => format!("{name} {v}"),
        None => name.to_string(),
    })
}

fn service(model: &Model, i: usize) -> Option<String> {
    model.spans[i].service_name.as_deref().map(str::to_string)
}

/// The trace id (32 hex digits) of a W3C `traceparent` value.
fn traceparent_trace(tp: &str) -> Option<&str> {
    let mut parts = tp.trim().split('-');
    let _version = parts.next()?;
    parts.next().filter(|t| t.len() == 32)
}

/// The channel of a stitched request, and the caller (the first span above the server entry `e`
/// in another process): `host` is the call's host span if any, `meta_seen` whether a captured
/// `_meta.traceparent` names `e`'s trace.
fn stitched_channel(
    model: &Model,
    e: usize,
    host: Option<usize>,
    meta_seen: bool,
) -> (Channel, Option<usize>) {
    let own = model.spans[e].service_name.as_deref();
    let host_svc = host.and_then(|h| model.spans[h].service_name.as_deref());
    let mut http_server = false;
    let mut caller = None;
    let mut cur = e;
    let mut steps = 0;
    while let Some(p) = model.parent[cur] {
        steps += 1;
        if steps > 64 {
            break;
        }
        let ps = &model.spans[p];
        let mcp = model.roles[p].is_some() || ps.is_execute_tool();
        if ps.service_name.as_deref() == own {
            // A wrapper in the server's own process: an HTTP server span means the HTTP layer
            // extracted the context and the MCP layer did not re-parent from `_meta`.
            http_server |= !mcp && ps.kind() == SpanKind::Server;
            cur = p;
            continue;
        }
        caller = Some(p);
        break;
    }
    let channel = match caller {
        _ if meta_seen => Channel::Meta,
        Some(c) if host_svc.is_some() && model.spans[c].service_name.as_deref() != host_svc => {
            Channel::ViaGateway
        }
        _ if http_server => Channel::HttpHeader,
        Some(c)
            if model.roles[c].is_none()
                && !model.spans[c].is_execute_tool()
                && model.spans[c].kind() == SpanKind::Client =>
        {
            Channel::HttpHeader
        }
        _ => Channel::Meta,
    };
    (channel, caller)
}

/// The report's tallies over the requests counted so far (one model, or window after window):
/// one row per service pair.
#[derive(Default)]
pub struct Totals {
    acc: BTreeMap<(Option<String>, Option<String>), Acc>,
    server_only: usize,
    host_only: usize,
}

/// Builds the report.
pub fn build(model: &Model) -> Report<PropagationRow> {
    let mut t = Totals::default();
    t.add(model, &Owned::all());
    t.finish()
}

impl Totals {
    /// Counts the requests of `model` whose call's anchor span `owned` selects.
    pub fn add(&mut self, model: &Model, owned: &Owned) {
        let Totals {
            acc,
            server_only,
            host_only,
        } = self;
        scan(model, owned, acc, server_only, host_only);
    }

    /// The rows, most requests first, and the notes.
    pub fn finish(self) -> Report<PropagationRow> {
        finish(self.acc, self.server_only, self.host_only)
    }
}

type Pairs = BTreeMap<(Option<String>, Option<String>), Acc>;

fn scan(
    model: &Model,
    owned: &Owned,
    acc: &mut Pairs,
    server_only: &mut usize,
    host_only: &mut usize,
) {
    let orphans: HashMap<usize, &crate::model::Orphan> =
        model.orphans.iter().map(|o| (o.span, o)).collect();
    for call in model.calls.iter().filter(|c| owned.span(c.anchor)) {
        let by_start = |m: &usize| (model.spans[*m].start_ns, *m);
        let client = call
            .members
            .iter()
            .copied()
            .filter(|&m| model.roles[m] == Some(McpRole::Client))
            .min_by_key(by_start);
        let servers: Vec<usize> = call
            .members
            .iter()
            .copied()
            .filter(|&m| model.roles[m] == Some(McpRole::Server))
            .collect();
        if client.is_none() && servers.is_empty() {
            continue; // a local tool: no MCP request
        }
        let host = client.or_else(|| {
            call.members
                .iter()
                .copied()
                .find(|&m| model.spans[m].is_execute_tool())
        });
        let orphan = call.members.iter().find_map(|m| orphans.get(m).copied());
        // The server's entry: the orphan's span, else its topmost MCP server span.
        let entry = orphan.map(|o| o.span).or_else(|| {
            servers
                .iter()
                .copied()
                .filter(|&m| model.parent[m].is_none_or(|p| !servers.contains(&p)))
                .min_by_key(by_start)
        });
        let meta_seen = entry.is_some_and(|e| {
            let trace = model.spans[e].trace_id.to_string();
            call.members.iter().any(|&m| {
                model.spans[m]
                    .mcp_meta_traceparent()
                    .and_then(traceparent_trace)
                    .is_some_and(|t| t.eq_ignore_ascii_case(&trace))
            })
        });
        let (channel, caller) = match (entry, orphan) {
            (None, _) => {
                *host_only += 1;
                (Channel::NotObservable, host)
            }
            (Some(_), Some(o)) => match &o.matched {
                Some(_) if o.parent_absent => (Channel::Rerooted, host),
                Some(_) => (Channel::None, host),
                None => {
                    *server_only += 1;
                    (Channel::NotObservable, None)
                }
            },
            (Some(e), None) => match model.parent[e] {
                Some(_) => {
                    let (channel, caller) = stitched_channel(model, e, host, meta_seen);
                    (channel, host.or(caller))
                }
                None => {
                    *server_only += 1;
                    (Channel::NotObservable, None)
                }
            },
        };
        let key = (
            caller.and_then(|h| service(model, h)),
            entry.and_then(|e| service(model, e)),
        );
        let a = acc.entry(key).or_default();
        a.calls += 1;
        if let Some(lib) = host.and_then(|h| library(model, h)) {
            a.client_libraries.insert(lib);
        }
        for &s in &servers {
            if let Some(lib) = library(model, s) {
                a.server_libraries.insert(lib);
            }
        }
        match channel {
            Channel::Meta => a.how.params_meta += 1,
            Channel::HttpHeader => a.how.http_header_only += 1,
            Channel::ViaGateway => a.how.via_gateway += 1,
            Channel::Rerooted => a.how.rerooted_by_gateway += 1,
            Channel::None => a.how.none += 1,
            Channel::NotObservable => a.how.not_observable += 1,
        }
        if call.is_tool() && orphan.is_some() {
            a.unstitched_tool_calls += 1;
        }
        if client.is_none() && host.is_some() {
            a.no_client_span += 1;
        }
    }
}

fn finish(acc: Pairs, server_only: usize, host_only: usize) -> Report<PropagationRow> {
    let mut rows: Vec<PropagationRow> = acc
        .into_iter()
        .map(|((client, server), a)| {
            let stitched = a.how.params_meta + a.how.http_header_only + a.how.via_gateway;
            PropagationRow {
                fix: fix(&a, client.is_some(), server.is_some()),
                client,
                server,
                client_libraries: a.client_libraries.into_iter().collect(),
                server_libraries: a.server_libraries.into_iter().collect(),
                calls: a.calls,
                stitched,
                how: a.how,
                unstitched_tool_calls: a.unstitched_tool_calls,
            }
        })
        .collect();
    rows.sort_by(|a, b| (b.calls, &a.client, &a.server).cmp(&(a.calls, &b.client, &b.server)));
    let mut notes = vec![
        "stitched = the server's span is in the host's trace; _meta = the server's MCP span hangs directly under the caller's MCP span or a captured request carries _meta.traceparent; HTTP header only = it hangs under an HTTP span instead".to_string(),
    ];
    if host_only > 0 {
        notes.push(format!(
            "{host_only} requests have no MCP server span (server -): the server does not export, so propagation is not observable"
        ));
    }
    if server_only > 0 {
        notes.push(format!(
            "{server_only} server spans of requests match no host call in the store (client -): the client is not instrumented, not exporting, or not propagating"
        ));
    }
    Report { rows, notes }
}

/// The fix for a pair, from what went wrong most specifically.
fn fix(a: &Acc, has_client: bool, has_server: bool) -> String {
    let h = &a.how;
    let libs = |l: &BTreeSet<String>| {
        if l.is_empty() {
            String::new()
        } else {
            format!(" ({})", l.iter().cloned().collect::<Vec<_>>().join(", "))
        }
    };
    let mut out = Vec::new();
    if h.none > 0 && a.no_client_span > 0 {
        out.push(format!(
            "{} requests have no MCP client span (only the host's execute_tool): instrument the MCP client library so it records the request and injects traceparent into params._meta",
            a.no_client_span
        ));
    }
    if h.none > 0 {
        out.push(format!(
            "{} requests carried no trace context: keep a W3C propagator on the client (OTEL_PROPAGATORS must not be none), use a client transport its instrumentation{} wraps so it injects traceparent into params._meta, and extract it on the server{}",
            h.none,
            libs(&a.client_libraries),
            libs(&a.server_libraries)
        ));
    }
    if h.rerooted_by_gateway > 0 {
        out.push(format!(
            "{} requests reached the server with a parent outside the host's trace: a gateway or proxy between them starts a new trace; make it forward params._meta (and the traceparent header) unchanged, or export its spans",
            h.rerooted_by_gateway
        ));
    }
    if h.http_header_only > 0 {
        out.push(format!(
            "{} requests carried context only in the HTTP traceparent header: it is lost on stdio and through proxies that rewrite headers; also inject it into params._meta on the client and extract it in the server's MCP layer",
            h.http_header_only
        ));
    }
    if h.not_observable > 0 && !has_server {
        out.push("export the MCP server's spans to the same collector to check propagation".into());
    }
    if h.not_observable > 0 && !has_client {
        out.push(
            "instrument the client (host) and export its spans to see which calls these server spans belong to"
                .into(),
        );
    }
    if out.is_empty() {
        return "none needed: context crosses".into();
    }
    out.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::span::{SpanKindField, SpanRow};
    use crate::model::{SpanId, TraceId};

    fn span(trace: u8, id: u8, parent: Option<u8>, svc: &str, kind: SpanKind) -> SpanRow {
        SpanRow {
            trace_id: TraceId([trace; 16]),
            span_id: SpanId([id; 8]),
            parent_span_id: parent.map(|p| SpanId([p; 8])),
            start_ns: i64::from(id) * 10,
            end_ns: 10_000,
            service_name: Some(svc.into()),
            kind: SpanKindField(kind),
            ..SpanRow::default()
        }
    }

    fn mcp(mut s: SpanRow, scope: &str) -> SpanRow {
        s.mcp_method = Some("tools/call".into());
        s.tool_name = Some("get_ticket".into());
        s.jsonrpc_request_id = Some("7".into());
        s.scope_name = Some(scope.into());
        s.scope_version = Some("1.2".into());
        s
    }

    fn host_client() -> Vec<SpanRow> {
        let mut exec = span(1, 2, Some(1), "host", SpanKind::Internal);
        exec.operation_name = Some("execute_tool".into());
        exec.tool_name = Some("get_ticket".into());
        let mut agent = span(1, 1, None, "host", SpanKind::Internal);
        agent.operation_name = Some("invoke_agent".into());
        vec![
            agent,
            exec,
            mcp(span(1, 3, Some(2), "host", SpanKind::Client), "client-lib"),
        ]
    }

    fn only_row(spans: Vec<SpanRow>) -> PropagationRow {
        let r = build(&Model::build(spans));
        assert_eq!(r.rows.len(), 1, "{:#?}", r.rows);
        r.rows.into_iter().next().unwrap()
    }

    #[test]
    fn a_server_span_under_the_client_span_crossed_in_meta() {
        let mut spans = host_client();
        spans.push(mcp(
            span(1, 4, Some(3), "srv", SpanKind::Server),
            "server-lib",
        ));
        let row = only_row(spans);
        assert_eq!(
            (row.client.as_deref(), row.server.as_deref()),
            (Some("host"), Some("srv"))
        );
        assert_eq!((row.calls, row.stitched, row.how.params_meta), (1, 1, 1));
        assert_eq!(row.client_libraries, ["client-lib 1.2"]);
        assert_eq!(row.server_libraries, ["server-lib 1.2"]);
        assert!(row.fix.starts_with("none needed"), "{}", row.fix);
    }

    #[test]
    fn a_server_span_under_http_spans_crossed_in_the_header_only() {
        let mut spans = host_client();
        spans.push(span(1, 4, Some(3), "host", SpanKind::Client)); // POST /mcp (client)
        spans.push(span(1, 5, Some(4), "srv", SpanKind::Server)); // POST /mcp (server)
        spans.push(mcp(
            span(1, 6, Some(5), "srv", SpanKind::Server),
            "server-lib",
        ));
        let row = only_row(spans);
        assert_eq!((row.stitched, row.how.http_header_only), (1, 1), "{row:#?}");
        assert!(row.fix.contains("HTTP traceparent header"), "{}", row.fix);
        // The same, with `_meta.traceparent` of that trace captured on the request: `_meta`.
        let mut spans = host_client();
        spans[2].rare_mut().mcp_meta_traceparent =
            Some(format!("00-{}-0303030303030303-01", TraceId([1; 16])));
        spans.push(span(1, 4, Some(3), "host", SpanKind::Client));
        spans.push(span(1, 5, Some(4), "srv", SpanKind::Server));
        spans.push(mcp(
            span(1, 6, Some(5), "srv", SpanKind::Server),
            "server-lib",
        ));
        assert_eq!(only_row(spans).how.params_meta, 1);
    }

    #[test]
    fn a_server_span_under_a_third_service_went_through_a_gateway() {
        let mut spans = host_client();
        spans.push(span(1, 4, Some(3), "gateway", SpanKind::Server));
        spans.push(mcp(
            span(1, 5, Some(4), "srv", SpanKind::Server),
            "server-lib",
        ));
        let row = only_row(spans);
        assert_eq!((row.stitched, row.how.via_gateway), (1, 1), "{row:#?}");
    }

    #[test]
    fn orphans_found_again_by_stitching_are_none_or_rerooted() {
        // A root in another trace: no context crossed.
        let mut spans = host_client();
        spans.push(mcp(span(2, 4, None, "srv", SpanKind::Server), "server-lib"));
        let row = only_row(spans);
        assert_eq!(
            (row.client.as_deref(), row.server.as_deref()),
            (Some("host"), Some("srv"))
        );
        assert_eq!(
            (row.stitched, row.how.none, row.unstitched_tool_calls),
            (0, 1, 1)
        );
        assert!(row.fix.contains("carried no trace context"), "{}", row.fix);
        // A parent that is not in the store, in another trace: re-rooted on the way.
        let mut spans = host_client();
        spans.push(mcp(
            span(2, 4, Some(99), "srv", SpanKind::Server),
            "server-lib",
        ));
        let row = only_row(spans);
        assert_eq!(
            (row.stitched, row.how.rerooted_by_gateway),
            (0, 1),
            "{row:#?}"
        );
        assert!(row.fix.contains("gateway or proxy"), "{}", row.fix);
    }

    #[test]
    fn one_side_missing_is_not_observable() {
        let row = only_row(host_client());
        assert_eq!((row.client.as_deref(), row.server), (Some("host"), None));
        assert_eq!((row.calls, row.how.not_observable, row.stitched), (1, 1, 0));
        assert!(
            row.fix.contains("export the MCP server's spans"),
            "{}",
            row.fix
        );
        let row = only_row(vec![mcp(
            span(2, 4, None, "srv", SpanKind::Server),
            "server-lib",
        )]);
        assert_eq!((row.client, row.server.as_deref()), (None, Some("srv")));
        assert_eq!((row.how.not_observable, row.unstitched_tool_calls), (1, 1));
        assert!(row.fix.contains("instrument the client"), "{}", row.fix);
    }

    #[test]
    fn traceparent_trace_reads_the_second_field() {
        assert_eq!(
            traceparent_trace("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            Some("0af7651916cd43dd8448eb211c80319c")
        );
        assert_eq!(traceparent_trace("garbage"), None);
    }
}
