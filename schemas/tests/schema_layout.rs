//! Layout snapshot: every column name and type, checked in as `schema_layout.txt`, so a rename or
//! type change shows up in review. Regenerate with `UPDATE_SCHEMA_LAYOUT=1 cargo test -p schemas
//! --test schema_layout` when a column is deliberately added.

use schemas::span_schema;

fn layout() -> String {
    let schema = span_schema();
    let mut out = String::new();
    for (k, v) in schema.metadata() {
        out.push_str(&format!("# metadata {k} = {v}\n"));
    }
    for f in schema.fields() {
        let null = if f.is_nullable() { "" } else { " NOT NULL" };
        out.push_str(&format!("{}: {}{}\n", f.name(), f.data_type(), null));
    }
    out
}

#[test]
fn schema_layout_matches_the_snapshot() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schema_layout.txt");
    let current = layout();
    if std::env::var_os("UPDATE_SCHEMA_LAYOUT").is_some() {
        std::fs::write(&path, &current).expect("write snapshot");
    }
    let expected = std::fs::read_to_string(&path).expect("tests/schema_layout.txt");
    assert_eq!(
        current, expected,
        "schema changed: review, then UPDATE_SCHEMA_LAYOUT=1"
    );
}
