//! The recorded OTLP exports of real agents (the `shared/recordings` corpus), which several
//! crates' tests replay. The corpus is not part of this repository: it is looked for in
//! `TRIPLINE_RECORDINGS`, else in a `shared/recordings` directory beside the repository; a test
//! that needs it and does not find it says so (or skips, when the corpus is optional to it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The recordings directory: `TRIPLINE_RECORDINGS` when set, else `shared/recordings` beside
/// (or inside) the repository when it holds a `MANIFEST.md`; `None` when none is there.
pub fn dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("TRIPLINE_RECORDINGS") {
        return Some(PathBuf::from(dir));
    }
    // This crate sits one level below the repository root.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    [repo.parent()?, repo]
        .iter()
        .map(|root| root.join("shared").join("recordings"))
        .find(|dir| dir.join("MANIFEST.md").is_file())
}

/// Recording name (`mcp2-native/S1-structured-good`) -> span count, from the table in the
/// corpus's `MANIFEST.md` (`| \`name\` | transport / export | spans | size | findings |`).
pub fn manifest_span_counts(dir: &Path) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.md")).expect("read MANIFEST.md");
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() >= 6 && cells[1].starts_with('`') && cells[1].contains('/') {
            if let Ok(n) = cells[3].parse::<usize>() {
                out.insert(cells[1].trim_matches('`').to_string(), n);
            }
        }
    }
    out
}
