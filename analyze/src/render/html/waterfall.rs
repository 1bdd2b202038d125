//! Trace views for the HTML waterfalls: the spans of a stitched group of traces (a trace plus the
//! traces joined to it across a broken MCP edge, as `tripline trace` prints them) in tree order,
//! with their depth, time offset, MCP role, the client → server edge into each server span
//! (marked broken when trace context did not cross it) and their attributes.
//!
//! Only traces that hold a finding are embedded, and each view and the whole page are capped
//! ([`MAX_VIEW_SPANS`], [`MAX_PAGE_SPANS`]) so a store of millions of spans still makes a page a
//! browser opens; a finding past the cap says to use `tripline trace ID` instead.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;

use crate::model::span::Sym;
use crate::model::stitch::StitchedGraph;
use crate::model::{McpRole, Model, SpanRow, TraceId};
use crate::rules::Finding;

/// Most spans one waterfall embeds (the rest of its traces is cut, and the view says so).
pub const MAX_VIEW_SPANS: usize = 50_000;
/// Most spans all waterfalls of one page embed together.
pub const MAX_PAGE_SPANS: usize = 250_000;
/// How far up a server span's ancestors the MCP client span of its call is looked for.
const EDGE_SEARCH_DEPTH: usize = 16;

/// One stitched group of traces, spans in tree order (parents before children, siblings by start).
#[derive(Debug, Serialize)]
pub struct TraceView {
    /// The traces of the group (lowercase hex); spans point into it by index.
    pub traces: Vec<String>,
    /// Start of the earliest span (RFC 3339), the origin of the time axis.
    pub start: String,
    /// From the earliest start to the latest end, in ns.
    pub total_ns: i64,
    /// Spans of the group left out by [`MAX_VIEW_SPANS`].
    pub cut: usize,
    pub spans: Vec<ViewSpan>,
}

/// One row of a waterfall. Short keys: a 10k-span view is a few MB of JSON already.
#[derive(Debug, Serialize)]
pub struct ViewSpan {
    /// Span id (lowercase hex).
    pub id: String,
    /// Index of its trace in [`TraceView::traces`].
    pub t: usize,
    /// Depth in the (stitched) tree.
    pub dp: usize,
    /// Start offset from the view's origin, ns.
    pub s: i64,
    /// Duration, ns.
    pub d: i64,
    /// Span name.
    pub n: String,
    /// `service.name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub svc: Option<String>,
    /// Status (`OK`, `ERROR`, `UNSET`).
    pub st: &'static str,
    /// MCP role: `client` or `server`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r: Option<&'static str>,
    /// Row of the MCP client (or host) span the edge into this server span comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e: Option<usize>,
    /// The edge into this span is broken: trace context did not cross the MCP boundary (the
    /// span is a server root, or names a parent absent from the store).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub b: bool,
    /// Attributes, shown on demand.
    pub a: Vec<(&'static str, String)>,
}

/// The views for every trace holding one of `findings` (in their order), the view of each such
/// trace, and notes on findings whose traces were not embedded.
pub fn views_for(
    model: &Model,
    findings: &[Finding],
) -> (Vec<TraceView>, HashMap<TraceId, usize>, Vec<String>) {
    let graph = StitchedGraph::of(model);
    let orphans = orphans_of(model);
    assemble(
        findings,
        |t| {
            let group = graph.component(t);
            let size = group_size(model, &group);
            Some((group, size))
        },
        |_, group| build_view(model, group, &graph.children, &orphans),
    )
}

/// The orphaned server spans of `model` (their edge in is broken).
pub fn orphans_of(model: &Model) -> HashSet<usize> {
    model.orphans.iter().map(|o| o.span).collect()
}

/// Spans of `model` in the traces of `group`.
pub fn group_size(model: &Model, group: &BTreeSet<TraceId>) -> usize {
    group
        .iter()
        .map(|t| model.traces.get(t).map_or(0, Vec::len))
        .sum()
}

/// The page's views in finding order, under [`MAX_PAGE_SPANS`]: `group_of(trace)` is the
/// stitched group of a finding's trace and its size (None: not available, no waterfall),
/// `build(trace, group)` its view. One model (`views_for`) or window after window (the views
/// built beforehand, `super::windows`) pick the same views.
pub fn assemble(
    findings: &[Finding],
    mut group_of: impl FnMut(TraceId) -> Option<(BTreeSet<TraceId>, usize)>,
    mut build: impl FnMut(TraceId, &BTreeSet<TraceId>) -> TraceView,
) -> (Vec<TraceView>, HashMap<TraceId, usize>, Vec<String>) {
    let mut views = Vec::new();
    let mut view_of: HashMap<TraceId, usize> = HashMap::new();
    let mut embedded = 0usize;
    let mut skipped: BTreeSet<TraceId> = BTreeSet::new();
    for f in findings {
        if view_of.contains_key(&f.trace_id) || skipped.contains(&f.trace_id) {
            continue;
        }
        let Some((group, size)) = group_of(f.trace_id) else {
            skipped.insert(f.trace_id);
            continue;
        };
        if size == 0 || embedded + size.min(MAX_VIEW_SPANS) > MAX_PAGE_SPANS {
            skipped.extend(group);
            continue;
        }
        let view = build(f.trace_id, &group);
        embedded += view.spans.len();
        for t in group {
            view_of.insert(t, views.len());
        }
        views.push(view);
    }
    let mut notes = Vec::new();
    if !skipped.is_empty() {
        notes.push(format!(
            "{} traces with findings have no waterfall here: the page embeds at most {MAX_PAGE_SPANS} spans; see them with `tripline trace ID`",
            skipped.len()
        ));
    }
    (views, view_of, notes)
}

/// `trace` and every trace joined to it through stitched edges.
pub fn build_view(
    model: &Model,
    group: &BTreeSet<TraceId>,
    stitched_children: &HashMap<usize, Vec<usize>>,
    orphans: &HashSet<usize>,
) -> TraceView {
    let traces: Vec<TraceId> = group.iter().copied().collect();
    let members = || {
        traces
            .iter()
            .flat_map(|t| model.traces.get(t).into_iter().flatten().copied())
    };
    let total = members().count();
    let origin = members()
        .map(|i| model.spans[i].start_ns)
        .min()
        .unwrap_or(0);
    let end = members()
        .map(|i| model.spans[i].end_ns.max(model.spans[i].start_ns))
        .max()
        .unwrap_or(origin);
    // Tree order: roots by start (spans of a trace are kept in start order by the model), then
    // depth first, in-trace and stitched children together by start.
    let mut roots: Vec<usize> = members()
        .filter(|&i| model.effective_parent(i).is_none())
        .collect();
    roots.sort_by_key(|&i| (model.spans[i].start_ns, i));
    let mut order: Vec<(usize, usize)> = Vec::with_capacity(total.min(MAX_VIEW_SPANS));
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    let mut visited: HashSet<usize> = HashSet::new();
    while let Some((i, depth)) = stack.pop() {
        if order.len() >= MAX_VIEW_SPANS {
            break;
        }
        if !visited.insert(i) {
            continue;
        }
        order.push((i, depth));
        let mut kids: Vec<usize> = model.children[i].to_vec();
        kids.extend(stitched_children.get(&i).into_iter().flatten().copied());
        kids.sort_by_key(|&c| (model.spans[c].start_ns, c));
        stack.extend(kids.into_iter().rev().map(|c| (c, depth + 1)));
    }
    let row_of: HashMap<usize, usize> = order
        .iter()
        .enumerate()
        .map(|(row, &(i, _))| (i, row))
        .collect();
    let trace_index: HashMap<TraceId, usize> =
        traces.iter().enumerate().map(|(k, &t)| (t, k)).collect();
    let spans = order
        .iter()
        .map(|&(i, depth)| {
            let s = &model.spans[i];
            let (e, b) = incoming_edge(model, i, orphans);
            ViewSpan {
                id: s.span_id.to_string(),
                t: trace_index.get(&s.trace_id).copied().unwrap_or(0),
                dp: depth,
                s: s.start_ns.saturating_sub(origin),
                d: s.duration_ns().max(0),
                n: s.name.to_string(),
                svc: s.service_name.as_deref().map(str::to_string),
                st: s.status().as_str(),
                r: model.roles[i].map(|r| match r {
                    McpRole::Client => "client",
                    McpRole::Server => "server",
                }),
                e: e.and_then(|p| row_of.get(&p).copied()),
                b,
                a: attributes(s),
            }
        })
        .collect();
    TraceView {
        traces: traces.iter().map(ToString::to_string).collect(),
        start: super::data::rfc3339(origin),
        total_ns: end.saturating_sub(origin).max(1),
        cut: total.saturating_sub(order.len()),
        spans,
    }
}

/// The edge into server span `i`: from the host span it was stitched under (broken), else from
/// the nearest MCP client ancestor (intact); an orphan with no host match has a broken edge from
/// nowhere. Spans that are not MCP servers have none.
fn incoming_edge(model: &Model, i: usize, orphans: &HashSet<usize>) -> (Option<usize>, bool) {
    if model.roles[i] != Some(McpRole::Server) {
        return (None, false);
    }
    if let Some(p) = model.stitched_parent[i] {
        return (Some(p), true);
    }
    if orphans.contains(&i) {
        return (None, true);
    }
    let mut cur = model.parent[i];
    for _ in 0..EDGE_SEARCH_DEPTH {
        let Some(p) = cur else { break };
        match model.roles[p] {
            Some(McpRole::Client) => return (Some(p), false),
            Some(McpRole::Server) => break,
            None => cur = model.parent[p],
        }
    }
    (None, false)
}

/// The columns a waterfall shows that no rule reads, so `check`'s scans leave them on disk
/// ([`schemas::columns::Analyzer::OnRequest`]): the pages' waterfall scan asks for them, with
/// the attribute keys.
pub const COLUMNS: &[&str] = &[
    schemas::schema::col::ATTRIBUTES,
    schemas::schema::col::STATUS_MESSAGE,
    schemas::schema::col::GEN_AI_PROVIDER_NAME,
    schemas::schema::col::GEN_AI_REQUEST_MODEL,
    schemas::schema::col::GEN_AI_AGENT_ID,
    schemas::schema::col::RESULT_CONTENT_TYPES,
    schemas::schema::col::EVENTS,
];

/// The span's attributes as the model holds them (content columns are left out: the page is
/// meant to be attached to tickets, and prompts or tool arguments do not belong there).
fn attributes(s: &SpanRow) -> Vec<(&'static str, String)> {
    let mut a: Vec<(&'static str, String)> = vec![
        ("trace_id", s.trace_id.to_string()),
        ("span_id", s.span_id.to_string()),
        ("kind", s.kind().as_str().to_string()),
        ("status", s.status().as_str().to_string()),
        ("start", super::data::rfc3339(s.start_ns)),
        (
            "duration_ms",
            format!("{}", crate::reports::ms(s.duration_ns())),
        ),
    ];
    let mut put = |k: &'static str, v: Option<&str>| {
        if let Some(v) = v {
            a.push((k, v.to_string()));
        }
    };
    put(
        "parent_span_id",
        s.parent_span_id.map(|p| p.to_string()).as_deref(),
    );
    put("status_message", s.status_message().map(Sym::as_str));
    put("service.name", s.service_name.as_deref());
    put("scope", s.scope_name.as_deref());
    put("gen_ai.operation.name", s.operation_name.as_deref());
    put("gen_ai.provider.name", s.provider_name.as_deref());
    put("gen_ai.request.model", s.request_model.as_deref());
    put("gen_ai.conversation.id", s.conversation_id.as_deref());
    put("gen_ai.agent.name", s.agent_name.as_deref());
    put("gen_ai.agent.id", s.agent_id().map(Sym::as_str));
    put("gen_ai.tool.name", s.tool_name.as_deref());
    put("gen_ai.tool.call.id", s.tool_call_id.as_deref());
    put("gen_ai.prompt.name", s.prompt_name().map(Sym::as_str));
    put("mcp.method.name", s.mcp_method.as_deref());
    put("mcp.session.id", s.mcp_session_id().map(Sym::as_str));
    put("mcp.resource.uri", s.mcp_resource_uri().map(Sym::as_str));
    put("jsonrpc.request.id", s.jsonrpc_request_id.as_deref());
    put(
        "rpc.response.status_code",
        s.rpc_response_status_code().map(Sym::as_str),
    );
    put("error.type", s.error_type.as_deref());
    put("skill.name", s.skill_name().map(Sym::as_str));
    put("guardrail.name", s.guardrail_name.as_deref());
    put("guardrail.decision", s.guardrail_decision.as_deref());
    let flag = |v: Option<bool>| v.map(|b| b.to_string());
    put(
        "result.has_structured_content",
        flag(s.result_has_structured_content).as_deref(),
    );
    put("result.is_error", flag(s.result_is_error).as_deref());
    put("result.type", s.result_type.as_deref());
    put(
        "result.text_is_json_object",
        flag(s.result_text_is_json_object).as_deref(),
    );
    put("arguments_digest", s.arguments_digest.as_deref());
    put("_meta.traceparent", s.mcp_meta_traceparent());
    let list = |v: &[crate::model::span::Sym]| {
        (!v.is_empty()).then(|| v.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", "))
    };
    put(
        "result.content_types",
        list(&s.result_content_types).as_deref(),
    );
    put(
        "tool_definitions",
        s.tool_definitions
            .as_ref()
            .map(|d| format!("{} tools", d.len()))
            .as_deref(),
    );
    put("dialects", list(&s.dialects).as_deref());
    put("events", list(s.event_names()).as_deref());
    put("attribute keys", list(&s.attribute_keys).as_deref());
    a
}
