//! List columns: events, links, tool definitions and lists of strings, built straight into Arrow
//! buffers with the exact child fields the canonical schema declares.

use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, BinaryBuilder, BooleanBuilder, Int64Builder, ListArray, StringBuilder,
    StructArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, FieldRef, Fields};
use opentelemetry_proto::tonic::trace::v1::span::{Event, Link};

use super::attrs::AttrMapBuilder;
use crate::derived::ToolDef;
use crate::error::SchemaError;
use crate::schema::span_schema;

/// The element field and struct fields of a `List<Struct>` column of the canonical schema.
fn list_struct_fields(column: &'static str) -> Result<(FieldRef, Fields), SchemaError> {
    let schema = span_schema();
    let field = schema
        .field_with_name(column)
        .map_err(|_| SchemaError::MissingColumn(column.to_string()))?;
    if let DataType::List(item) = field.data_type() {
        if let DataType::Struct(fields) = item.data_type() {
            return Ok((item.clone(), fields.clone()));
        }
    }
    Err(SchemaError::ColumnType {
        column,
        expected: "List<Struct>".into(),
        found: field.data_type().to_string(),
    })
}

fn list_item_field(column: &'static str) -> Result<FieldRef, SchemaError> {
    let schema = span_schema();
    let field = schema
        .field_with_name(column)
        .map_err(|_| SchemaError::MissingColumn(column.to_string()))?;
    match field.data_type() {
        DataType::List(item) => Ok(item.clone()),
        other => Err(SchemaError::ColumnType {
            column,
            expected: "List".into(),
            found: other.to_string(),
        }),
    }
}

/// Offsets and validity of a list column.
struct ListShape {
    offsets: Vec<i32>,
    validity: Vec<bool>,
}

impl ListShape {
    fn new() -> Self {
        Self::with_capacity(0)
    }
    fn with_capacity(rows: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        ListShape {
            offsets,
            validity: Vec::with_capacity(rows),
        }
    }
    fn end_row(&mut self, child_len: usize, valid: bool) {
        self.offsets.push(child_len as i32);
        self.validity.push(valid);
    }
    fn finish(&mut self, item: FieldRef, values: ArrayRef) -> Result<ArrayRef, SchemaError> {
        let offsets = OffsetBuffer::new(std::mem::replace(&mut self.offsets, vec![0]).into());
        let validity = std::mem::take(&mut self.validity);
        let nulls = if validity.iter().all(|v| *v) {
            None
        } else {
            Some(NullBuffer::from(validity))
        };
        Ok(Arc::new(ListArray::try_new(item, offsets, values, nulls)?))
    }
}

/// `events`: `List<Struct<time_unix_nano, name, attributes, dropped_attributes_count>>`.
pub struct EventsBuilder {
    shape: ListShape,
    time: Int64Builder,
    name: StringBuilder,
    attrs: AttrMapBuilder,
    dropped: Int64Builder,
}

impl EventsBuilder {
    pub fn new() -> Self {
        EventsBuilder {
            shape: ListShape::new(),
            time: Int64Builder::new(),
            name: StringBuilder::new(),
            attrs: AttrMapBuilder::new(),
            dropped: Int64Builder::new(),
        }
    }

    /// Appends one row; event times were validated to fit `i64`.
    pub fn row(&mut self, events: &[Event]) {
        for e in events {
            self.time.append_value(e.time_unix_nano as i64);
            self.name.append_value(&e.name);
            self.attrs.row_from(&e.attributes);
            self.dropped
                .append_value(i64::from(e.dropped_attributes_count));
        }
        self.shape.end_row(self.name.len(), true);
    }

    pub fn finish(&mut self, column: &'static str) -> Result<ArrayRef, SchemaError> {
        let (item, fields) = list_struct_fields(column)?;
        let values = StructArray::try_new(
            fields,
            vec![
                Arc::new(self.time.finish()) as ArrayRef,
                Arc::new(self.name.finish()),
                self.attrs.finish()?,
                Arc::new(self.dropped.finish()),
            ],
            None,
        )?;
        self.shape.finish(item, Arc::new(values))
    }
}

/// `links`: `List<Struct<trace_id, span_id, trace_state, flags, attributes, dropped_attributes_count>>`.
pub struct LinksBuilder {
    shape: ListShape,
    trace_id: BinaryBuilder,
    span_id: BinaryBuilder,
    trace_state: StringBuilder,
    flags: Int64Builder,
    attrs: AttrMapBuilder,
    dropped: Int64Builder,
}

impl LinksBuilder {
    pub fn new() -> Self {
        LinksBuilder {
            shape: ListShape::new(),
            trace_id: BinaryBuilder::new(),
            span_id: BinaryBuilder::new(),
            trace_state: StringBuilder::new(),
            flags: Int64Builder::new(),
            attrs: AttrMapBuilder::new(),
            dropped: Int64Builder::new(),
        }
    }

    pub fn row(&mut self, links: &[Link]) {
        for l in links {
            self.trace_id.append_value(&l.trace_id);
            self.span_id.append_value(&l.span_id);
            self.trace_state.append_value(&l.trace_state);
            self.flags.append_value(i64::from(l.flags));
            self.attrs.row_from(&l.attributes);
            self.dropped
                .append_value(i64::from(l.dropped_attributes_count));
        }
        self.shape.end_row(self.trace_state.len(), true);
    }

    pub fn finish(&mut self, column: &'static str) -> Result<ArrayRef, SchemaError> {
        let (item, fields) = list_struct_fields(column)?;
        let values = StructArray::try_new(
            fields,
            vec![
                Arc::new(self.trace_id.finish()) as ArrayRef,
                Arc::new(self.span_id.finish()),
                Arc::new(self.trace_state.finish()),
                Arc::new(self.flags.finish()),
                self.attrs.finish()?,
                Arc::new(self.dropped.finish()),
            ],
            None,
        )?;
        self.shape.finish(item, Arc::new(values))
    }
}

/// `tool_definitions`: `List<Struct<..>>` with the fields of [`crate::tool_def::FIELDS`], in that
/// order (a test below checks every value lands in the field of its name).
pub struct ToolDefsBuilder {
    shape: ListShape,
    name: StringBuilder,
    description: StringBuilder,
    has_output_schema: BooleanBuilder,
    hints: [BooleanBuilder; 4],
    input_digest: StringBuilder,
    output_digest: StringBuilder,
}

impl ToolDefsBuilder {
    pub fn new() -> Self {
        ToolDefsBuilder {
            shape: ListShape::new(),
            name: StringBuilder::new(),
            description: StringBuilder::new(),
            has_output_schema: BooleanBuilder::new(),
            hints: std::array::from_fn(|_| BooleanBuilder::new()),
            input_digest: StringBuilder::new(),
            output_digest: StringBuilder::new(),
        }
    }

    /// Appends a row: `None` = no tool definitions seen (null).
    pub fn row(&mut self, defs: Option<&[ToolDef]>) {
        for d in defs.unwrap_or_default() {
            self.name.append_option(d.name.as_deref());
            self.description.append_option(d.description.as_deref());
            self.has_output_schema.append_option(d.has_output_schema);
            self.hints[0].append_option(d.read_only_hint);
            self.hints[1].append_option(d.destructive_hint);
            self.hints[2].append_option(d.idempotent_hint);
            self.hints[3].append_option(d.open_world_hint);
            self.input_digest
                .append_option(d.input_schema_digest.as_deref());
            self.output_digest
                .append_option(d.output_schema_digest.as_deref());
        }
        self.shape.end_row(self.name.len(), defs.is_some());
    }

    pub fn finish(&mut self, column: &'static str) -> Result<ArrayRef, SchemaError> {
        let (item, fields) = list_struct_fields(column)?;
        let [h0, h1, h2, h3] = &mut self.hints;
        let values = StructArray::try_new(
            fields,
            vec![
                Arc::new(self.name.finish()) as ArrayRef,
                Arc::new(self.description.finish()),
                Arc::new(self.has_output_schema.finish()),
                Arc::new(h0.finish()),
                Arc::new(h1.finish()),
                Arc::new(h2.finish()),
                Arc::new(h3.finish()),
                Arc::new(self.input_digest.finish()),
                Arc::new(self.output_digest.finish()),
            ],
            None,
        )?;
        self.shape.finish(item, Arc::new(values))
    }
}

/// A `List<Utf8>` column.
pub struct StrListBuilder {
    shape: ListShape,
    values: StringBuilder,
}

impl StrListBuilder {
    /// Sized for `rows` rows of about one short item each.
    pub fn with_capacity(rows: usize) -> Self {
        StrListBuilder {
            shape: ListShape::with_capacity(rows),
            values: StringBuilder::with_capacity(rows, super::builder::guessed_bytes(rows, 8)),
        }
    }

    /// Appends a row: `None` = null list.
    pub fn row<S: AsRef<str>>(&mut self, items: Option<&[S]>) {
        for s in items.unwrap_or_default() {
            self.values.append_value(s.as_ref());
        }
        self.shape.end_row(self.values.len(), items.is_some());
    }

    pub fn finish(&mut self, column: &'static str) -> Result<ArrayRef, SchemaError> {
        let item = list_item_field(column)?;
        let values = Arc::new(self.values.finish());
        self.shape.finish(item, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::col;
    use crate::tool_def::field;
    use arrow::array::{Array, AsArray};

    #[test]
    fn tool_definition_values_land_in_the_fields_of_their_names() {
        let def = ToolDef {
            name: Some("n".into()),
            description: Some("d".into()),
            has_output_schema: Some(true),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: None,
            open_world_hint: Some(true),
            input_schema_digest: Some("i".into()),
            output_schema_digest: Some("o".into()),
        };
        let mut b = ToolDefsBuilder::new();
        b.row(Some(std::slice::from_ref(&def)));
        let list = b.finish(col::TOOL_DEFINITIONS).expect("finish");
        let values = list.as_list::<i32>().value(0);
        let s = values.as_struct();
        let text = |name: &str| {
            s.column_by_name(name)
                .map(|c| c.as_string::<i32>().value(0).to_string())
        };
        let flag = |name: &str| {
            let c = s.column_by_name(name).expect(name).as_boolean().clone();
            (!c.is_null(0)).then(|| c.value(0))
        };
        assert_eq!(text(field::NAME), def.name);
        assert_eq!(text(field::DESCRIPTION), def.description);
        assert_eq!(text(field::INPUT_SCHEMA_DIGEST), def.input_schema_digest);
        assert_eq!(text(field::OUTPUT_SCHEMA_DIGEST), def.output_schema_digest);
        assert_eq!(flag(field::HAS_OUTPUT_SCHEMA), def.has_output_schema);
        assert_eq!(flag(field::READ_ONLY_HINT), def.read_only_hint);
        assert_eq!(flag(field::DESTRUCTIVE_HINT), def.destructive_hint);
        assert_eq!(flag(field::IDEMPOTENT_HINT), def.idempotent_hint);
        assert_eq!(flag(field::OPEN_WORLD_HINT), def.open_world_hint);
    }
}
