//! The analyzer: detection rules, reports, SQL and the stitched trace view over the span store.

pub mod cli;
