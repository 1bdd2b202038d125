//! The one place that declares tripline's span schema and attribute registry.
//!
//! Everything that reads or writes spans (the collector, the analyzer, the samples) goes through
//! this crate, so a column, an attribute name or a dialect mapping is declared exactly once.

pub mod schema;

pub use schema::{span_schema, SCHEMA_VERSION, SCHEMA_VERSION_KEY};
