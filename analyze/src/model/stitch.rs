//! Stitching across a broken propagation edge (the matching behind TL004 and `tripline trace`).
//!
//! When trace context does not cross the MCP boundary, the server's span of a request starts a new
//! trace (or names a parent that was never exported). If the host's side of that same request is in
//! the store, in another trace, we can still tell which call it was: same method, same tool, same
//! JSON-RPC request id and MCP session where both sides recorded them, and a server span that starts
//! inside the host span's time window. Each host call is matched at most once, best candidate first.
//!
//! The same reasoning joins the two halves of one call on the host side when a library parents its
//! MCP client spans on a long-lived session span instead of the agent's `execute_tool`
//! ([`join_split_clients`]): approvals are judged per call, so the halves must be one call.

use std::collections::{BTreeSet, HashMap};

use super::roles::McpRole;
use super::span::SpanKind;
use super::{Model, TraceId};

/// Clock tolerance around the host span when matching a server span to it (ns).
pub const SKEW_NS: i64 = 2_000_000_000;

/// A server-side entry span with no parent in the store.
#[derive(Clone, Debug)]
pub struct Orphan {
    /// The server span (the call's topmost server span).
    pub span: usize,
    /// True when the span names a parent that is absent from the store (false: a root, or a
    /// span under a session span, see `under_session`).
    pub parent_absent: bool,
    /// The session span of its own process the span runs under, when it is not its trace's root:
    /// a span above every request of a connection (OpenLIT Python's `mcp server/run`), in a
    /// trace no host span is part of.
    pub under_session: Option<usize>,
    /// The host's side of the same request, when found.
    pub matched: Option<OrphanMatch>,
}

/// The host span an orphan server span was matched to.
#[derive(Clone, Debug)]
pub struct OrphanMatch {
    /// The host's MCP client span of the request, if the host recorded one.
    pub client_span: Option<usize>,
    /// The host's `execute_tool` span, if any.
    pub execute_span: Option<usize>,
    /// Whether the JSON-RPC request id was equal on both sides (false: not recorded on one side).
    pub request_id_matched: bool,
}

impl OrphanMatch {
    /// The host span the orphan is re-attached under: the client span, else `execute_tool`.
    pub fn host_span(&self) -> Option<usize> {
        self.client_span.or(self.execute_span)
    }
}

/// Finds orphan server calls, matches them to host calls, merges matched calls and records the
/// stitched parent of each matched orphan.
pub fn stitch(model: &mut Model) {
    let n = model.spans.len();
    model.stitched_parent = vec![None; n];
    join_split_clients(model);
    let side = |m: &Model, ci: usize, role: McpRole| -> Option<usize> {
        m.calls[ci]
            .members
            .iter()
            .copied()
            .filter(|&s| m.roles[s] == Some(role))
            .min_by_key(|&s| (m.spans[s].start_ns, s))
    };
    let execute_of = |m: &Model, ci: usize| -> Option<usize> {
        m.calls[ci]
            .members
            .iter()
            .copied()
            .find(|&s| m.spans[s].is_execute_tool())
    };
    // Orphans: calls whose anchor is a server span whose process entry span (the anchor, or a
    // wrapper above it in the same service such as Traceloop's `mcp.server`) has no parent in the
    // store. The entry span joins the call: it is what a user sees as the server's root. A span
    // above more than one server call, or a CLIENT / SERVER span without an MCP method, is a
    // session span (it holds a connection, not a request: OpenLIT Python's `mcp server/run`):
    // each call's entry is then its topmost span below it, and the call is an orphan when the
    // session's top has no parent.
    let server_calls: Vec<(usize, usize)> = (0..model.calls.len())
        .filter(|&ci| model.roles[model.calls[ci].anchor] == Some(McpRole::Server))
        .map(|ci| (ci, entry_of(model, model.calls[ci].anchor)))
        .collect();
    let mut above: HashMap<usize, u32> = HashMap::new();
    for &(ci, top) in &server_calls {
        for i in path_up(model, model.calls[ci].anchor, top) {
            *above.entry(i).or_default() += 1;
        }
    }
    let mut orphan_calls = Vec::new();
    for &(ci, top) in &server_calls {
        let a = model.calls[ci].anchor;
        if model.parent[top].is_some() {
            continue;
        }
        // The topmost span of the path that is above this call alone and is no span of another
        // protocol layer (a CLIENT or SERVER span without an MCP method, like `server/run`
        // around a single request); the anchor when even it is shared.
        let entry = path_up(model, a, top)
            .take_while(|&i| {
                let s = &model.spans[i];
                above.get(&i).copied().unwrap_or(0) <= 1
                    && (i == a
                        || s.is_mcp()
                        || !matches!(s.kind(), SpanKind::Client | SpanKind::Server))
            })
            .last()
            .unwrap_or(a);
        if entry != a {
            if model.call_of_span[entry].is_some() {
                continue;
            }
            model.call_of_span[entry] = Some(ci);
            model.calls[ci].members.push(entry);
            model.calls[ci].anchor = entry;
        }
        orphan_calls.push(ci);
    }
    // Host calls still waiting for their server side, with the time window a server span of
    // theirs starts in (their client span, else their anchor, widened by the tolerance).
    let open: Vec<usize> = (0..model.calls.len())
        .filter(|&ci| {
            let has_host =
                execute_of(model, ci).is_some() || side(model, ci, McpRole::Client).is_some();
            has_host && side(model, ci, McpRole::Server).is_none()
        })
        .collect();
    let windows: Vec<(i64, i64)> = open
        .iter()
        .map(|&hc| {
            let w =
                &model.spans[side(model, hc, McpRole::Client).unwrap_or(model.calls[hc].anchor)];
            (w.start_ns, w.end_ns)
        })
        .collect();
    let mut candidates = Candidates::new(&windows);
    let mut merges = Vec::new();
    for &oc in &orphan_calls {
        let o_anchor = model.calls[oc].anchor;
        let o = &model.calls[oc];
        let os = &model.spans[o_anchor];
        let mut best: Option<(usize, (bool, bool, i64))> = None;
        // Every open call whose window can hold the orphan's start, in `open` order: the
        // first of equal scores wins, as in a scan of the whole list.
        for pos in candidates.around(os.start_ns) {
            let hc = open[pos];
            let h = &model.calls[hc];
            if h.kind != o.kind {
                continue;
            }
            let hs = &model.spans[h.anchor];
            if hs.trace_id == os.trace_id {
                continue;
            }
            if differs(&h.tool, &o.tool)
                || differs(&h.request_id, &o.request_id)
                || differs(&h.session_id, &o.session_id)
            {
                continue;
            }
            // Both request ids known (and, by the check above, equal).
            let rid = h.request_id.is_some() && o.request_id.is_some();
            let (w_start, w_end) = windows[pos];
            if os.start_ns < w_start - SKEW_NS || os.start_ns > w_end + SKEW_NS {
                continue;
            }
            // A server span that starts inside the host's window beats one that needs the clock
            // tolerance (a server started per call, as stdio servers are, can start closer to
            // the next call's start than to its own call's), then the closest start wins.
            let inside = (w_start..=w_end).contains(&os.start_ns);
            let score = (!rid, !inside, (os.start_ns - w_start).abs());
            if best.as_ref().is_none_or(|(_, s)| score < *s) {
                best = Some((pos, score));
            }
        }
        let under_session = model.parent[o_anchor];
        let parent_absent = os.parent_span_id.is_some() && under_session.is_none();
        let matched = best.map(|(pos, (no_rid, _, _))| {
            candidates.take(pos);
            let hc = open[pos];
            merges.push((hc, oc));
            OrphanMatch {
                client_span: side(model, hc, McpRole::Client),
                execute_span: execute_of(model, hc),
                request_id_matched: !no_rid,
            }
        });
        // Re-attached only where the span has no parent of its own: a span under a session span
        // stays in its tree (it would be drawn twice), its call is merged all the same.
        if let Some(h) = matched.as_ref().and_then(OrphanMatch::host_span) {
            if under_session.is_none() {
                model.stitched_parent[o_anchor] = Some(h);
            }
        }
        model.orphans.push(Orphan {
            span: o_anchor,
            parent_absent,
            under_session,
            matched,
        });
    }
    for (into, from) in merges {
        model.merge_call(into, from);
    }
    model.compact_calls();
}

/// The open host calls a server span starting at some instant can be matched to, found by
/// time instead of by scanning every open call for every orphan (a window of a large store holds
/// hundreds of orphans and tens of thousands of calls). A call can match a span starting within
/// [`SKEW_NS`] of its window (start, end); positions are those of the `windows` it was built
/// from, and a matched call is taken out.
struct Candidates {
    /// Positions ordered by window start.
    by_start: Vec<usize>,
    starts: Vec<i64>,
    /// The longest window: a window starting this long before a span can still hold it.
    longest: i64,
    taken: Vec<bool>,
}

impl Candidates {
    fn new(windows: &[(i64, i64)]) -> Self {
        let mut by_start: Vec<usize> = (0..windows.len()).collect();
        by_start.sort_unstable_by_key(|&p| (windows[p].0, p));
        let starts = by_start.iter().map(|&p| windows[p].0).collect();
        let longest = windows
            .iter()
            .map(|&(a, b)| b.saturating_sub(a))
            .max()
            .unwrap_or(0)
            .max(0);
        Self {
            by_start,
            starts,
            longest,
            taken: vec![false; windows.len()],
        }
    }

    /// The positions not taken whose window starts close enough to `start_ns` to hold it (a
    /// superset of those that do), ascending.
    fn around(&self, start_ns: i64) -> Vec<usize> {
        let lo = start_ns
            .saturating_sub(SKEW_NS)
            .saturating_sub(self.longest);
        let hi = start_ns.saturating_add(SKEW_NS);
        let a = self.starts.partition_point(|&s| s < lo);
        let b = self.starts.partition_point(|&s| s <= hi);
        let mut out: Vec<usize> = self.by_start[a..b]
            .iter()
            .copied()
            .filter(|&p| !self.taken[p])
            .collect();
        out.sort_unstable();
        out
    }

    fn take(&mut self, pos: usize) {
        self.taken[pos] = true;
    }
}

/// Joins a host's MCP client call that sits in another trace than its `execute_tool` (a library
/// that parents every MCP request on a long-lived session span, as Traceloop JS does) to that
/// `execute_tool`'s call: same process, same tool, equal arguments digest and JSON-RPC request id
/// where both sides recorded them, and a client span that starts inside the `execute_tool` span's
/// time window. Each `execute_tool` takes at most one client call, the closest in time. Without
/// this, an approval recorded in the agent run and the execution recorded in the session trace
/// are two calls, and an approved write looks unconfirmed.
fn join_split_clients(model: &mut Model) {
    let has =
        |m: &Model, ci: usize, f: &dyn Fn(usize) -> bool| m.calls[ci].members.iter().any(|&s| f(s));
    // Client calls with no execute_tool and no agent / model span above them in their trace.
    let split: Vec<usize> = (0..model.calls.len())
        .filter(|&ci| {
            model.calls[ci].is_tool()
                && model.calls[ci].tool.is_some()
                && has(model, ci, &|s| model.roles[s] == Some(McpRole::Client))
                && !has(model, ci, &|s| {
                    model.spans[s].is_execute_tool() || model.spans[s].is_execute_tool_with_mcp()
                })
                && !under_agent(model, model.calls[ci].anchor)
        })
        .collect();
    if split.is_empty() {
        return;
    }
    let open: Vec<usize> = (0..model.calls.len())
        .filter(|&ci| {
            model.calls[ci].is_tool()
                && has(model, ci, &|s| model.spans[s].is_execute_tool())
                && !has(model, ci, &|s| model.roles[s].is_some())
        })
        .collect();
    let windows: Vec<(i64, i64)> = open
        .iter()
        .map(|&hc| {
            let hs = &model.spans[model.calls[hc].anchor];
            (hs.start_ns, hs.end_ns)
        })
        .collect();
    let mut candidates = Candidates::new(&windows);
    let mut merges = Vec::new();
    for &cc in &split {
        let c = &model.calls[cc];
        let cs = &model.spans[c.anchor];
        let mut best: Option<(usize, i64)> = None;
        for pos in candidates.around(cs.start_ns) {
            let hc = open[pos];
            let h = &model.calls[hc];
            let hs = &model.spans[h.anchor];
            if hs.trace_id == cs.trace_id || hs.service_name != cs.service_name || h.tool != c.tool
            {
                continue;
            }
            if differs(&h.arguments_digest, &c.arguments_digest)
                || differs(&h.request_id, &c.request_id)
            {
                continue;
            }
            if cs.start_ns < hs.start_ns - SKEW_NS || cs.start_ns > hs.end_ns + SKEW_NS {
                continue;
            }
            let distance = (cs.start_ns - hs.start_ns).abs();
            if best.is_none_or(|(_, d)| distance < d) {
                best = Some((pos, distance));
            }
        }
        if let Some((pos, _)) = best {
            candidates.take(pos);
            merges.push((open[pos], cc));
        }
    }
    for (into, from) in merges {
        model.merge_call(into, from);
    }
}

/// True when an in-trace ancestor of span `i` is an agent run or a model call.
fn under_agent(model: &Model, i: usize) -> bool {
    let mut cur = model.parent[i];
    let mut steps = 0;
    while let Some(p) = cur {
        steps += 1;
        if steps > 10_000 {
            break;
        }
        let ps = &model.spans[p];
        if ps.is_agent_run() || ps.is_model_call() || ps.is_execute_tool() {
            return true;
        }
        cur = model.parent[p];
    }
    false
}

/// Span `from` and its ancestors up to and including `to` (an ancestor of `from`, or `from`).
fn path_up(model: &Model, from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
    let mut next = Some(from);
    std::iter::from_fn(move || {
        let cur = next?;
        next = if cur == to { None } else { model.parent[cur] };
        Some(cur)
    })
}

/// The topmost ancestor of server span `a` within its own process: walks up through parents of
/// the same service that are neither host spans (agent, model, execute_tool) nor MCP client spans.
fn entry_of(model: &Model, a: usize) -> usize {
    let svc = model.spans[a].service_name.as_deref();
    let mut cur = a;
    let mut steps = 0;
    while let Some(p) = model.parent[cur] {
        let ps = &model.spans[p];
        steps += 1;
        if steps > 64
            || ps.service_name.as_deref() != svc
            || ps.is_agent_run()
            || ps.is_model_call()
            || ps.is_execute_tool()
            || model.roles[p] == Some(McpRole::Client)
        {
            break;
        }
        cur = p;
    }
    cur
}

/// The stitched edges of a model seen as a graph over traces and spans: which traces are joined
/// through a re-attached orphan, and the orphans under each host span. `trace`, the HTML
/// waterfall and the MCP server's trace tool all draw from this one view.
pub struct StitchedGraph {
    links: HashMap<TraceId, BTreeSet<TraceId>>,
    /// Host span index → the orphan server spans re-attached under it.
    pub children: HashMap<usize, Vec<usize>>,
}

impl StitchedGraph {
    pub fn of(model: &Model) -> Self {
        let mut links: HashMap<TraceId, BTreeSet<TraceId>> = HashMap::new();
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, p) in model.stitched_parent.iter().enumerate() {
            if let Some(p) = *p {
                let (a, b) = (model.spans[i].trace_id, model.spans[p].trace_id);
                links.entry(a).or_default().insert(b);
                links.entry(b).or_default().insert(a);
                children.entry(p).or_default().push(i);
            }
        }
        Self { links, children }
    }

    /// `trace` and every trace joined to it through stitched edges, transitively.
    pub fn component(&self, trace: TraceId) -> BTreeSet<TraceId> {
        let mut seen = BTreeSet::from([trace]);
        let mut todo = vec![trace];
        while let Some(t) = todo.pop() {
            for &u in self.links.get(&t).into_iter().flatten() {
                if seen.insert(u) {
                    todo.push(u);
                }
            }
        }
        seen
    }
}

/// Both known and different.
fn differs<T: PartialEq>(a: &Option<T>, b: &Option<T>) -> bool {
    matches!((a, b), (Some(x), Some(y)) if x != y)
}

#[cfg(test)]
mod tests {
    use super::super::span::{SpanKindField, SpanRow};
    use super::super::{Model, SpanId, SpanKind, TraceId};

    #[test]
    fn candidates_are_every_window_that_can_hold_the_start_in_order() {
        use super::{Candidates, SKEW_NS};
        // Windows of varied length, some overlapping, one inverted (end before start).
        let s = 1_000_000_000i64;
        let windows: Vec<(i64, i64)> = (0..200i64)
            .map(|k| {
                let start = (k * 7_919 % 101) * s / 3;
                let len = (k * 31 % 17) * s / 2 - s;
                (start, start + len)
            })
            .collect();
        let mut candidates = Candidates::new(&windows);
        for (n, probe) in (0..60i64).map(|k| k * s - 3 * s).enumerate() {
            let holds = |p: usize| {
                let (a, b) = windows[p];
                probe >= a - SKEW_NS && probe <= b + SKEW_NS
            };
            let got: Vec<usize> = candidates
                .around(probe)
                .into_iter()
                .filter(|&p| holds(p))
                .collect();
            let want: Vec<usize> = (0..windows.len())
                .filter(|&p| !candidates.taken[p] && holds(p))
                .collect();
            assert_eq!(got, want, "probe {probe}");
            // Take one now and then, as a match does.
            if n % 3 == 0 {
                if let Some(&p) = want.first() {
                    candidates.take(p);
                }
            }
        }
    }

    fn span(trace: u8, id: u8, parent: Option<u8>, start: i64, end: i64) -> SpanRow {
        SpanRow {
            trace_id: TraceId([trace; 16]),
            span_id: SpanId([id; 8]),
            parent_span_id: parent.map(|p| SpanId([p; 8])),
            start_ns: start,
            end_ns: end,
            service_name: Some("host".into()),
            ..SpanRow::default()
        }
    }

    fn execute(trace: u8, id: u8, parent: u8, tool: &str, start: i64) -> SpanRow {
        SpanRow {
            operation_name: Some("execute_tool".into()),
            tool_name: Some(tool.into()),
            ..span(trace, id, Some(parent), start, start + 100)
        }
    }

    fn client(trace: u8, id: u8, parent: u8, tool: &str, start: i64, args: &str) -> SpanRow {
        SpanRow {
            kind: SpanKindField(SpanKind::Client),
            mcp_method: Some("tools/call".into()),
            tool_name: Some(tool.into()),
            arguments_digest: Some(args.to_string()),
            ..span(trace, id, Some(parent), start, start + 50)
        }
    }

    /// A library that parents MCP requests on a long-lived session span: the client spans are in
    /// the session's trace, the execute_tool spans in the agent run's.
    #[test]
    fn client_calls_in_a_session_trace_join_their_execute_tool() {
        let agent = SpanRow {
            operation_name: Some("invoke_agent".into()),
            ..span(1, 1, None, 0, 10_000)
        };
        let session = span(2, 20, None, 0, 20_000);
        let spans = vec![
            agent,
            execute(1, 2, 1, "read", 1_000),
            execute(1, 3, 1, "write", 2_000),
            session,
            client(2, 21, 20, "read", 1_010, "a"),
            client(2, 22, 20, "write", 2_010, "b"),
            // a call of another tool at the same time is not joined to `write`
            client(2, 23, 20, "other", 2_020, "c"),
        ];
        let model = Model::build(spans);
        let tool_calls: Vec<_> = model.tool_calls().map(|(_, c)| c).collect();
        assert_eq!(tool_calls.len(), 3, "{tool_calls:#?}");
        for (tool, members) in [("read", 2), ("write", 2), ("other", 1)] {
            let c = tool_calls
                .iter()
                .find(|c| c.tool.as_deref() == Some(tool))
                .unwrap();
            assert_eq!(c.members.len(), members, "{tool}: {c:#?}");
            if members == 2 {
                assert!(model.spans[c.anchor].is_execute_tool());
            }
        }
    }

    /// A server started per call (stdio) takes most of its call's window to start: its span is
    /// closer to the next call's start than to its own, but only its own call's window holds it.
    #[test]
    fn an_orphan_inside_a_host_window_joins_that_call_not_a_closer_one_outside() {
        const S: i64 = 1_000_000_000;
        let agent = SpanRow {
            operation_name: Some("invoke_agent".into()),
            ..span(1, 1, None, 0, 3 * S)
        };
        let host = |id: u8, start: i64, end: i64| SpanRow {
            operation_name: Some("execute_tool".into()),
            tool_name: Some("lookup".into()),
            ..span(1, id, Some(1), start, end)
        };
        let orphan = |trace: u8, id: u8, start: i64| SpanRow {
            kind: SpanKindField(SpanKind::Server),
            mcp_method: Some("tools/call".into()),
            tool_name: Some("lookup".into()),
            service_name: Some("server".into()),
            ..span(trace, id, None, start, start + 1_000)
        };
        let spans = vec![
            agent,
            host(2, 0, S),
            host(3, S + S / 10, 2 * S),
            orphan(2, 20, 9 * S / 10),
            orphan(3, 30, 19 * S / 10),
        ];
        let model = Model::build(spans);
        for (server, host) in [(20u8, 2u8), (30, 3)] {
            let o = model
                .orphans
                .iter()
                .find(|o| model.spans[o.span].span_id == SpanId([server; 8]))
                .unwrap();
            let m = o.matched.as_ref().expect("matched");
            assert_eq!(
                model.spans[m.execute_span.unwrap()].span_id,
                SpanId([host; 8]),
                "server span {server}"
            );
        }
    }

    /// A server that records a long-lived session span (CLIENT `server/run` > SERVER
    /// `server/run`) above every request of the connection, in a trace no host span is part of:
    /// each request is an orphan of its own, entered at its own span, and joins its host call.
    #[test]
    fn requests_under_a_session_span_of_a_disconnected_trace_are_orphans() {
        let agent = SpanRow {
            operation_name: Some("invoke_agent".into()),
            ..span(1, 1, None, 0, 10_000)
        };
        let server = |s: SpanRow| SpanRow {
            service_name: Some("server".into()),
            ..s
        };
        let session_root = server(SpanRow {
            kind: SpanKindField(SpanKind::Client),
            ..span(2, 20, None, 0, 20_000)
        });
        let session = server(SpanRow {
            kind: SpanKindField(SpanKind::Server),
            ..span(2, 21, Some(20), 1, 19_999)
        });
        let request = |id: u8, tool: &str, start: i64| {
            server(SpanRow {
                kind: SpanKindField(SpanKind::Server),
                mcp_method: Some("tools/call".into()),
                tool_name: Some(tool.into()),
                ..span(2, id, Some(21), start, start + 20)
            })
        };
        let spans = vec![
            agent,
            execute(1, 2, 1, "read", 1_000),
            execute(1, 3, 1, "write", 2_000),
            session_root,
            session,
            request(22, "read", 1_010),
            request(23, "write", 2_010),
        ];
        let model = Model::build(spans);
        assert_eq!(model.orphans.len(), 2, "{:#?}", model.orphans);
        for o in &model.orphans {
            let s = &model.spans[o.span];
            assert!(s.is_mcp(), "each request is its own entry: {}", s.span_id);
            assert_eq!(
                o.under_session.map(|p| model.spans[p].span_id),
                Some(SpanId([21; 8]))
            );
            assert!(!o.parent_absent);
            let m = o.matched.as_ref().expect("matched to its host call");
            let host = &model.spans[m.execute_span.unwrap()];
            assert_eq!(host.tool_name, s.tool_name);
            assert_eq!(
                model.stitched_parent[o.span], None,
                "not re-attached: it has a parent"
            );
        }
        // A single request under the session is entered at its own span too (the session spans
        // are CLIENT / SERVER spans without a method).
        let spans = vec![
            SpanRow {
                operation_name: Some("invoke_agent".into()),
                ..span(1, 1, None, 0, 10_000)
            },
            execute(1, 2, 1, "read", 1_000),
            server(SpanRow {
                kind: SpanKindField(SpanKind::Client),
                ..span(2, 20, None, 0, 20_000)
            }),
            server(SpanRow {
                kind: SpanKindField(SpanKind::Server),
                ..span(2, 21, Some(20), 1, 19_999)
            }),
            request(22, "read", 1_010),
        ];
        let model = Model::build(spans);
        assert_eq!(model.orphans.len(), 1);
        assert_eq!(model.spans[model.orphans[0].span].span_id, SpanId([22; 8]));
    }

    #[test]
    fn differing_arguments_or_a_client_under_an_agent_are_not_joined() {
        let agent = SpanRow {
            operation_name: Some("invoke_agent".into()),
            ..span(1, 1, None, 0, 10_000)
        };
        let mut exec = execute(1, 2, 1, "write", 1_000);
        exec.arguments_digest = Some("x".into());
        let spans = vec![
            agent,
            exec,
            span(2, 20, None, 0, 20_000),
            client(2, 21, 20, "write", 1_010, "y"),
        ];
        let model = Model::build(spans);
        assert_eq!(model.tool_calls().count(), 2);
    }
}
