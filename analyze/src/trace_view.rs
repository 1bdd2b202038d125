//! `tripline trace ID`: one tree, stitched across processes, with the broken edge and every
//! finding marked on its span.
//!
//! The store is read twice: the trace itself, then every span in its time window (plus the
//! matching tolerance), so the server's orphaned half of a call (another trace) can be stitched
//! back under the host span that made the request.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;
use std::path::Path;

use crate::error::LoadError;
use crate::load::{load_store, scan_store, Projection, ScanFilter};
use crate::model::stitch::SKEW_NS;
use crate::model::{Model, TraceId};
use crate::policy::Policy;
use crate::rules::{run, Context, Finding, Report, RULES};
use crate::store::Scanned;

/// Rendering a trace failed.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("trace {0} is not in the store; list traces with `tripline query \"SELECT DISTINCT encode(trace_id, 'hex') FROM spans\"`")]
    NotFound(String),
}

/// Loads trace `id` and its time window from the store, runs the rules and renders the tree;
/// also says what the window scan read. A trace that is not in the store is an error naming the
/// store's size (or why the store is empty).
pub async fn render_trace_from_store(
    data_dir: &Path,
    id: &str,
    policy: &Policy,
) -> Result<(String, Scanned), TraceError> {
    let trace = TraceId::parse_hex(id).ok_or_else(|| LoadError::BadTraceId(id.to_string()))?;
    let projection = crate::check::projection_for(RULES);
    let own = load_store(
        data_dir,
        &ScanFilter {
            trace: Some(trace),
            ..ScanFilter::default()
        },
        &Projection::base(),
    )
    .await?;
    let (Some(lo), Some(hi)) = (
        own.iter().map(|s| s.start_ns).min(),
        own.iter().map(|s| s.end_ns.max(s.start_ns)).max(),
    ) else {
        return Err(TraceError::NotFound(id.to_string()));
    };
    let window = ScanFilter {
        since_ns: Some(lo.saturating_sub(SKEW_NS)),
        until_ns: Some(hi.saturating_add(SKEW_NS)),
        ..ScanFilter::default()
    };
    let scan = scan_store(data_dir, &window, &projection).await?;
    let mut spans: Vec<_> = scan.parts.into_iter().flatten().flatten().collect();
    spans.extend(own);
    let model = Model::build(spans);
    let report = run(RULES, &Context::new(&model, policy));
    Ok((render_trace(&model, &report, trace), scan.scanned))
}

/// Renders the stitched tree containing `trace`.
pub fn render_trace(model: &Model, report: &Report, trace: TraceId) -> String {
    // Traces connected to `trace` through stitched edges.
    let mut component: BTreeSet<TraceId> = BTreeSet::from([trace]);
    loop {
        let before = component.len();
        for (i, p) in model.stitched_parent.iter().enumerate() {
            if let Some(p) = p {
                let (a, b) = (model.spans[i].trace_id, model.spans[*p].trace_id);
                if component.contains(&a) || component.contains(&b) {
                    component.insert(a);
                    component.insert(b);
                }
            }
        }
        if component.len() == before {
            break;
        }
    }
    let mut stitched_children: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, p) in model.stitched_parent.iter().enumerate() {
        if let Some(p) = p {
            stitched_children.entry(*p).or_default().push(i);
        }
    }
    let mut findings: HashMap<(TraceId, crate::model::SpanId), Vec<&Finding>> = HashMap::new();
    for f in &report.findings {
        findings.entry((f.trace_id, f.span_id)).or_default().push(f);
    }
    let roots: Vec<usize> = component
        .iter()
        .flat_map(|t| model.traces.get(t).into_iter().flatten().copied())
        .filter(|&i| model.effective_parent(i).is_none())
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trace {trace}{}",
        if component.len() > 1 {
            format!(" (stitched with {} other trace(s))", component.len() - 1)
        } else {
            String::new()
        }
    );
    let mut shown = 0usize;
    let mut stack: Vec<(usize, usize, bool)> = roots.iter().rev().map(|&r| (r, 0, false)).collect();
    while let Some((i, depth, stitched)) = stack.pop() {
        shown += 1;
        if shown > 100_000 {
            break;
        }
        let s = &model.spans[i];
        let indent = "  ".repeat(depth);
        let edge = if stitched { "⇢ " } else { "" };
        let mut attrs = Vec::new();
        let mut kv = |k: &str, v: Option<&str>| {
            if let Some(v) = v {
                attrs.push(format!("{k}={v}"));
            }
        };
        kv("op", s.operation_name.as_deref());
        kv("tool", s.tool_name.as_deref());
        kv("method", s.mcp_method.as_deref());
        kv("rpc.id", s.jsonrpc_request_id.as_deref());
        kv("conv", s.conversation_id.as_deref());
        kv("guardrail", s.guardrail_decision.as_deref());
        kv("error.type", s.error_type.as_deref());
        if s.result_is_error == Some(true) {
            attrs.push("isError".into());
        }
        let _ = writeln!(
            out,
            "{indent}{edge}{} [{}] {} {} {}{}",
            if s.name.is_empty() {
                "(unnamed)"
            } else {
                &s.name
            },
            s.service_name.as_deref().unwrap_or("?"),
            fmt_duration(s.duration_ns()),
            s.status().as_str(),
            s.span_id,
            if attrs.is_empty() {
                String::new()
            } else {
                format!("  {}", attrs.join(" "))
            }
        );
        if stitched {
            let _ = writeln!(
                out,
                "{indent}  ⚠ broken edge: this server span is the root of trace {} (context did not cross the MCP boundary)",
                s.trace_id
            );
        }
        for f in findings.get(&(s.trace_id, s.span_id)).into_iter().flatten() {
            let _ = writeln!(
                out,
                "{indent}  ◆ {} {} {}: {}",
                f.rule, f.name, f.severity, f.message
            );
        }
        let mut kids: Vec<(usize, bool)> = model.children[i].iter().map(|&c| (c, false)).collect();
        kids.extend(
            stitched_children
                .get(&i)
                .into_iter()
                .flatten()
                .map(|&c| (c, true)),
        );
        kids.sort_by_key(|&(c, _)| (model.spans[c].start_ns, c));
        for (c, st) in kids.into_iter().rev() {
            stack.push((c, depth + 1, st));
        }
    }
    out
}

fn fmt_duration(ns: i64) -> String {
    let ms = ns as f64 / 1e6;
    if ms >= 1000.0 {
        format!("{:.2}s", ms / 1000.0)
    } else {
        format!("{ms:.1}ms")
    }
}
