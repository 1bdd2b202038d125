//! The dialect registry rendered as Markdown (`schemas/DIALECTS.md`), generated from [`DIALECTS`]
//! so the documentation cannot drift from the data; a test fails when the file is stale.

use std::fmt::Write as _;

use super::{Condition, ContentRole, Source, Transform, DIALECTS};

fn source(s: Source) -> String {
    match s {
        Source::Attr(a) => format!("`{a}`"),
        Source::SpanName(p) => format!("span name `{p}`"),
    }
}

fn transform(t: Transform) -> String {
    match t {
        Transform::Identity => "as is".to_string(),
        Transform::JsonPointer(p) => format!("JSON `{p}`"),
        Transform::Constant(c) => format!("constant `{c}`"),
        Transform::Correct(c) => format!("constant `{c}`, replacing the library's own value"),
        Transform::Capture(h) => format!("`{{{h}}}`"),
        Transform::HttpHeader => "header value (Base64 form decoded)".to_string(),
    }
}

fn condition(c: Condition) -> String {
    match c {
        Condition::AttrEquals(a, v) => format!("`{a}` = `{v}`"),
        Condition::AttrNotEquals(a, v) => format!("`{a}` ≠ `{v}`"),
        Condition::JsonPointerExists(a, p) => format!("`{a}` has JSON `{p}`"),
        Condition::HttpHeaderEquals(h, v) => format!("header `{h}` = `{v}`"),
        Condition::AttrIsMcpMethod(a) => format!("`{a}` is an MCP method"),
        Condition::All(all) => all
            .iter()
            .map(|c| condition(*c))
            .collect::<Vec<_>>()
            .join(" and "),
    }
}

fn role(r: ContentRole) -> &'static str {
    match r {
        ContentRole::ToolArguments => "tool arguments",
        ContentRole::ToolResult => "tool result",
        ContentRole::ToolDefinitions => "tool definitions",
        ContentRole::Request => "request",
        ContentRole::Response => "response",
        ContentRole::Opaque => "stored only",
    }
}

/// Markdown documentation of every dialect.
pub fn registry_markdown() -> String {
    let mut out = String::from(
        "# Dialect registry\n\n\
         Generated from `schemas/src/dialects/` by `schemas::dialects::registry_markdown()`; \
         regenerate with `UPDATE_DIALECTS_DOC=1 cargo test -p schemas --test docs`.\n\n\
         Dialects apply in this order; a column keeps the first value it gets, so the \
         semantic-convention names win, except over a mapping marked \"replacing the library's \
         own value\" (a library that puts its own values in a canonical attribute). Markers \
         ending in `*` are prefixes, `#` stands for digits.\n",
    );
    for d in DIALECTS {
        let _ = write!(out, "\n## `{}`\n\n{}\n\n", d.id, d.description);
        let scopes: Vec<String> = d
            .detect
            .scope_prefixes
            .iter()
            .map(|p| format!("`{p}`"))
            .collect();
        let markers: Vec<String> = d.detect.markers.iter().map(|m| format!("`{m}`")).collect();
        let _ = writeln!(
            out,
            "Detected by scope prefix {} or attribute {}.\n",
            if scopes.is_empty() {
                "(none)".to_string()
            } else {
                scopes.join(", ")
            },
            if markers.is_empty() {
                "(none)".to_string()
            } else {
                markers.join(", ")
            },
        );
        if !d.mappings.is_empty() {
            out.push_str("| source | column | value | when |\n|---|---|---|---|\n");
            for m in d.mappings {
                let when = m.when.map(condition).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "| {} | `{}` | {} | {} |",
                    source(m.source),
                    m.target,
                    transform(m.transform),
                    when
                );
            }
            out.push('\n');
        }
        if !d.content.is_empty() {
            out.push_str("| content attribute | role |\n|---|---|\n");
            for c in d.content {
                let _ = writeln!(out, "| `{}` | {} |", c.attr, role(c.role));
            }
            out.push('\n');
        }
    }
    out
}
