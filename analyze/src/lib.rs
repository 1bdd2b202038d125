//! The analyzer: detection rules, reports, SQL and the stitched trace view over the span store.
//!
//! Data flows one way, and the folders say so (docs/read-path.md):
//! **load** ([`store`] takes a snapshot of the store: readable part files, the WAL tail; [`load`]
//! scans it, or takes record batches, into [`model::SpanRow`]s) → **model** ([`model::Model`]
//! links them into trees, calls, conversations and approvals) → **rules** ([`rules`] run over the
//! model with the [`policy`]; [`check`] is that path as library calls for `check`, `trace` and
//! `diff`; [`reports`] aggregate the model; [`query`] runs SQL) → **render** ([`render`] prints
//! every result in one [`render::Format`] with one table style). [`cli`] is the edge that parses
//! flags and writes to stdout and stderr.

pub mod check;
pub mod cli;
pub mod error;
pub mod incremental;
pub mod load;
pub mod model;
pub mod phase;
pub mod policy;
pub mod query;
pub mod read_ahead;
pub mod render;
pub mod reports;
pub mod rules;
pub mod store;
pub mod window;
