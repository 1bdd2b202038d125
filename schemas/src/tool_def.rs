//! One tool definition as tripline stores and reads it: the element of the `tool_definitions`
//! list column, declared once for the converter (which derives it from payloads), the Arrow
//! schema (whose struct fields are [`FIELDS`]) and the analyzer (which reads it back).
//!
//! The struct is generic over its string type so both sides share the one field list: ingest
//! holds owned `String`s and keeps a missing name distinct (`None`, stored as null); the analyzer
//! holds interned strings and reads a missing name as empty (`ToolDef<Sym, Sym>`).

use arrow::datatypes::{DataType, Field, Fields};

/// One tool definition the model (or an MCP `tools/list` result) showed, with what rules need:
/// whether it declares an `outputSchema`, its annotations (null = not annotated) and digests of
/// its schemas. `S` is the string type, `N` the type of the name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolDef<S = String, N = Option<S>> {
    pub name: N,
    pub description: Option<S>,
    pub has_output_schema: Option<bool>,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
    pub input_schema_digest: Option<S>,
    pub output_schema_digest: Option<S>,
}

impl<S, N> ToolDef<S, N> {
    /// True when the definition carries at least one MCP annotation hint.
    pub fn is_annotated(&self) -> bool {
        self.read_only_hint.is_some()
            || self.destructive_hint.is_some()
            || self.idempotent_hint.is_some()
            || self.open_world_hint.is_some()
    }
}

/// Names of the struct fields, in the order of the Arrow struct.
pub mod field {
    pub const NAME: &str = "name";
    pub const DESCRIPTION: &str = "description";
    pub const HAS_OUTPUT_SCHEMA: &str = "has_output_schema";
    pub const READ_ONLY_HINT: &str = "read_only_hint";
    pub const DESTRUCTIVE_HINT: &str = "destructive_hint";
    pub const IDEMPOTENT_HINT: &str = "idempotent_hint";
    pub const OPEN_WORLD_HINT: &str = "open_world_hint";
    pub const INPUT_SCHEMA_DIGEST: &str = "input_schema_digest";
    pub const OUTPUT_SCHEMA_DIGEST: &str = "output_schema_digest";
}

/// Every field with its Arrow type (all nullable), in struct order.
pub const FIELDS: [(&str, DataType); 9] = [
    (field::NAME, DataType::Utf8),
    (field::DESCRIPTION, DataType::Utf8),
    (field::HAS_OUTPUT_SCHEMA, DataType::Boolean),
    (field::READ_ONLY_HINT, DataType::Boolean),
    (field::DESTRUCTIVE_HINT, DataType::Boolean),
    (field::IDEMPOTENT_HINT, DataType::Boolean),
    (field::OPEN_WORLD_HINT, DataType::Boolean),
    (field::INPUT_SCHEMA_DIGEST, DataType::Utf8),
    (field::OUTPUT_SCHEMA_DIGEST, DataType::Utf8),
];

/// The Arrow struct fields of one definition.
pub fn arrow_fields() -> Fields {
    FIELDS
        .iter()
        .map(|(name, ty)| Field::new(*name, ty.clone(), true))
        .collect()
}
