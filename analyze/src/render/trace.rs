//! `tripline trace ID`: one tree, stitched across processes, with the broken edge and every
//! finding marked on its span. The model and findings come from `check::check_trace` (the same
//! load -> model -> rules path as `check`, over the trace's time window).

use std::collections::HashMap;
use std::fmt::Write;

use crate::model::stitch::StitchedGraph;
use crate::model::{Model, TraceId};
use crate::rules::{Finding, Report};

/// Renders the stitched tree containing `trace`.
pub fn render_trace(model: &Model, report: &Report, trace: TraceId) -> String {
    let graph = StitchedGraph::of(model);
    let component = graph.component(trace);
    let stitched_children = &graph.children;
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
