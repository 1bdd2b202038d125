//! The analyzer: detection rules, reports, SQL and the stitched trace view over the span store.
//!
//! Data flows one way: [`store`] takes a snapshot of the store (readable part files, the WAL
//! tail), [`load`] scans the Parquet store (or takes record batches) into
//! [`model::SpanRow`]s, [`model::Model`] links them into trees, calls and conversations,
//! [`rules`] run over the model with the [`policy`], and [`output`] renders the report.

pub mod check;
pub mod cli;
pub mod diff;
pub mod error;
pub mod load;
pub mod model;
pub mod output;
pub mod policy;
pub mod query;
pub mod reports;
pub mod rules;
pub mod store;
pub mod trace_view;
