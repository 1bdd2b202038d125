//! Generated documentation is current: `DIALECTS.md` is `registry_markdown()`.

#[test]
fn dialects_doc_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("DIALECTS.md");
    let current = schemas::dialects::registry_markdown();
    if std::env::var_os("UPDATE_DIALECTS_DOC").is_some() {
        std::fs::write(&path, &current).expect("write DIALECTS.md");
    }
    let on_disk = std::fs::read_to_string(&path).expect("schemas/DIALECTS.md");
    assert_eq!(
        current, on_disk,
        "DIALECTS.md is stale: UPDATE_DIALECTS_DOC=1 cargo test -p schemas --test docs"
    );
    for d in schemas::dialects::DIALECTS {
        assert!(on_disk.contains(&format!("## `{}`", d.id)));
    }
}
