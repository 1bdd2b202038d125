//! docs/mcp-server.md names every tool, each of its arguments and each top-level field of its
//! `structuredContent`, as the schemas in `mcp/src/schema.rs` declare them: a field added to a
//! schema without a line in the docs fails here.

use std::path::Path;

use mcp::tools::TOOLS;
use serde_json::Value;

fn property_names(schema: &Value) -> Vec<String> {
    schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_doc_names_every_tool_argument_and_output_field() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/mcp-server.md"),
    )
    .unwrap();
    let mut missing = Vec::new();
    for spec in TOOLS {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` |", spec.name)));
        let Some(row) = row else {
            missing.push(format!("no table row for tool {}", spec.name));
            continue;
        };
        for name in property_names(&(spec.input)())
            .into_iter()
            .chain(property_names(&(spec.output)()))
        {
            if !row.contains(&format!("`{name}`")) {
                missing.push(format!("{}: `{name}`", spec.name));
            }
        }
    }
    assert!(missing.is_empty(), "docs/mcp-server.md lacks: {missing:?}");
}
