//! Arrow `RecordBatch` (canonical schema, possibly projected) -> `SpanRow`s: the last step of
//! loading.
//!
//! One code path for everything: the DataFusion scan of the store and the direct loader used by
//! tests and fixtures (OTLP/JSON -> `schemas` convert -> batch) both end here. Columns absent from a
//! projected batch simply leave the field empty; text columns are read as `Utf8` or `Utf8View`,
//! whichever the scan hands over ([`StrCol`]), other text shapes cast to `Utf8` first.
//!
//! Which column fills which `SpanRow` field is one table per column shape below (column name and
//! the setter, one line per column). A test checks those tables against the column table in
//! `schemas` ([`schemas::columns::ANALYZER_COLUMNS`]): a column the analyzer is declared to read
//! but no line here reads (or the reverse) fails it, and so does a line that reads nothing into
//! the row.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int64Array, ListArray, MapArray, StringArray,
};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;
use schemas::schema::col;
use schemas::tool_def::field;

use super::id_col::IdCol;
use super::str_col::StrCol;
use crate::error::LoadError;
use crate::model::span::{
    SpanContent, SpanId, SpanKind, SpanKindField, SpanRow, StatusCode, StatusField, Sym, SymList,
    ToolDef, ToolDefs, TraceId,
};

/// Converts batches into `SpanRow`s, sharing one [`Interner`] across every batch of a load so a
/// value repeated on a million spans is allocated once.
#[derive(Default)]
pub struct RowReader {
    interner: Interner,
}

impl RowReader {
    /// Converts every row of `batch` into a `SpanRow`, appending to `out`. Rows whose ids have the
    /// wrong length (impossible for data written by the collector) are skipped and counted.
    pub fn append<T: From<SpanRow>>(
        &mut self,
        batch: &RecordBatch,
        out: &mut Vec<T>,
    ) -> Result<usize, LoadError> {
        let n = batch.num_rows();
        let cols = Columns::new(batch)?;
        self.interner.last.resize(STRING_READERS.len(), None);
        let mut skipped = 0;
        out.reserve(n);
        for i in 0..n {
            match cols.row(i, &mut self.interner) {
                Some(row) => out.push(row.into()),
                None => skipped += 1,
            }
        }
        Ok(skipped)
    }
}

/// One `Arc<str>` per distinct string. For values many spans repeat: names, services, tools,
/// methods, attribute keys, dialects, event names, and the ids a conversation, an MCP session or
/// a JSON-RPC exchange share (a conversation's id is on every one of its spans: one allocation
/// per conversation, not per span). Ids of one span or one call (tool call ids, digests,
/// traceparents) stay plain `String`s: interning them would only grow the set. The set lives as
/// long as one scan task of one window, so what it holds is bounded by the window.
#[derive(Default)]
struct Interner {
    set: HashSet<Sym, foldhash::fast::RandomState>,
    /// Shared lists by the hash of their strings ([`Interner::list`]); a bucket holds the lists
    /// whose hashes collide.
    lists: HashMap<u64, Vec<SymList>, foldhash::fast::RandomState>,
    shared_lists: usize,
    list_hash: foldhash::fast::RandomState,
    /// The same lists by their bytes as a column holds them ([`Interner::list_in`]), a bucket
    /// per hash of those bytes.
    raw: HashMap<u64, Vec<RawList>, foldhash::fast::RandomState>,
    /// Bytes held by `raw`, at most [`MAX_RAW_BYTES`].
    raw_bytes: usize,
    /// Per string column, by its place in [`STRING_READERS`], the value it interned last
    /// ([`Slot`]); kept from batch to batch, whichever columns a batch leaves out.
    last: Vec<Option<Sym>>,
    /// Key lists with the registry attributes kept in typed columns added
    /// ([`Interner::with_in_columns`]), by (the map's key list, `attributes_in_columns`). The
    /// map's list is kept too, so its allocation (the key) is never reused for another list.
    in_columns: HashMap<(usize, i64), (SymList, SymList), foldhash::fast::RandomState>,
    /// Shared tool definition lists by the hash of their fields' bytes ([`tool_defs`]), a
    /// bucket per hash.
    defs: HashMap<u64, Vec<RawDefs>, foldhash::fast::RandomState>,
    /// Bytes held by `defs`, at most [`MAX_RAW_BYTES`].
    defs_bytes: usize,
    /// Scratch: one row's definitions as bytes ([`tool_defs`]).
    defs_key: Vec<u8>,
}

/// A shared tool definition list with the bytes its row's fields had (each field's validity,
/// length and bytes, definition after definition).
struct RawDefs {
    key: Box<[u8]>,
    list: ToolDefs,
}

/// At most this many key lists are kept with their typed-column keys added; past it a row's list
/// is built for it alone.
const MAX_IN_COLUMNS_LISTS: usize = 4_096;

/// A shared list as its strings lie in a string column: their bytes back to back and where
/// each one ends.
struct RawList {
    bytes: Box<[u8]>,
    ends: Box<[usize]>,
    list: SymList,
}

/// At most this many bytes of lists are kept for the one-hash lookup ([`Interner::list_in`]);
/// past it lists are still shared, found string by string.
const MAX_RAW_BYTES: usize = 8 << 20;

/// At most this many distinct lists are shared per load; past it a list is allocated for its row
/// alone. Spans of one shape repeat a few lists, but a store whose spans each carry a different
/// key set would otherwise keep every span's list alive for the whole load, however its windows
/// are bounded.
const MAX_SHARED_LISTS: usize = 65_536;

impl Interner {
    fn get(&mut self, s: &str) -> Sym {
        if let Some(v) = self.set.get(s) {
            return v.clone();
        }
        let v: Sym = Sym::from(s);
        self.set.insert(v.clone());
        v
    }

    /// The list of `items` (each interned), shared with every earlier row that had the same
    /// strings in the same order: one hash over the strings and one comparison per row instead
    /// of a lookup, a reference count and a heap list per string.
    fn list<'a, I>(&mut self, items: I) -> SymList
    where
        I: Iterator<Item = &'a str> + Clone,
    {
        self.list_shared(items).0
    }

    /// [`Interner::list`], and whether the list is shared (kept for later rows).
    fn list_shared<'a, I>(&mut self, items: I) -> (SymList, bool)
    where
        I: Iterator<Item = &'a str> + Clone,
    {
        let mut h = self.list_hash.build_hasher();
        let mut n = 0usize;
        for s in items.clone() {
            s.hash(&mut h);
            n += 1;
        }
        if n == 0 {
            return (SymList::default(), false);
        }
        let hash = h.finish();
        let same = |l: &&SymList| {
            l.len() == n && l.iter().zip(items.clone()).all(|(a, b)| a.as_str() == b)
        };
        if let Some(found) = self.lists.get(&hash).and_then(|b| b.iter().find(same)) {
            return (found.clone(), true);
        }
        let list = SymList::from(items.map(|s| self.get(s)).collect::<Vec<_>>());
        if self.shared_lists < MAX_SHARED_LISTS {
            self.lists.entry(hash).or_default().push(list.clone());
            self.shared_lists += 1;
            return (list, true);
        }
        (list, false)
    }

    /// `keys` (a row's `attributes` map keys) followed by the registry attributes its
    /// `attributes_in_columns` mask says are kept in typed columns: every key the span was sent
    /// with. Worked out once per distinct (key list, mask).
    fn with_in_columns(&mut self, keys: SymList, mask: i64) -> SymList {
        let id = (keys.as_ptr() as usize, mask);
        if let Some((_, list)) = self.in_columns.get(&id) {
            return list.clone();
        }
        let moved = schemas::lift::attributes_in_columns(mask).map(|s| s.attribute);
        let list = self.list(keys.iter().map(|k| k.as_str()).chain(moved));
        if self.in_columns.len() < MAX_IN_COLUMNS_LISTS {
            self.in_columns.insert(id, (keys, list.clone()));
        }
        list
    }

    /// [`Interner::list`] of the non-null strings `lo..hi` of `a`. The strings of a list lie
    /// back to back in the column, so a list seen before is found by one hash over those bytes
    /// and two comparisons, not a hash and a comparison per string (attribute key lists are
    /// tens of keys on every span).
    fn list_in(&mut self, a: &StringArray, lo: usize, hi: usize) -> SymList {
        let strings = || (lo..hi).filter(|&j| !a.is_null(j)).map(|j| a.value(j));
        if lo >= hi {
            return SymList::default();
        }
        if a.nulls()
            .is_some_and(|n| n.slice(lo, hi - lo).null_count() > 0)
        {
            return self.list(strings());
        }
        let offsets = &a.value_offsets()[lo..=hi];
        let (start, end) = (offsets[0] as usize, offsets[hi - lo] as usize);
        let bytes = &a.value_data()[start..end];
        let ends = || offsets[1..].iter().map(|&o| o as usize - start);
        let mut h = self.list_hash.build_hasher();
        h.write(bytes);
        h.write_usize(hi - lo);
        let hash = h.finish();
        let same = |r: &&RawList| {
            *r.bytes == *bytes && r.ends.len() == hi - lo && r.ends.iter().copied().eq(ends())
        };
        if let Some(found) = self.raw.get(&hash).and_then(|b| b.iter().find(same)) {
            return found.list.clone();
        }
        let (list, shared) = self.list_shared(strings());
        if shared && self.raw_bytes + bytes.len() <= MAX_RAW_BYTES {
            self.raw_bytes += bytes.len();
            self.raw.entry(hash).or_default().push(RawList {
                bytes: bytes.into(),
                ends: ends().collect(),
                list: list.clone(),
            });
        }
        list
    }
}

/// Reads a string value into the row (`&str` borrowed from the column, interned through the
/// column's [`Slot`] for repeated ones; per-span ids stay plain `String`s).
type StrSet = fn(&mut SpanRow, &str, &mut Slot<'_>);

/// The interner as one string column reaches it: the value the column interned last is
/// compared before the interner is asked, so a run of equal values (a batch's spans share
/// their service, scope and often their name) costs a comparison each, not a hash and a
/// lookup.
struct Slot<'a> {
    interner: &'a mut Interner,
    /// The column's place in [`STRING_READERS`].
    column: usize,
}

impl Slot<'_> {
    fn get(&mut self, s: &str) -> Sym {
        if let Some(v) = self.interner.last[self.column]
            .as_ref()
            .filter(|v| v.as_str() == s)
        {
            return v.clone();
        }
        let v = self.interner.get(s);
        self.interner.last[self.column] = Some(v.clone());
        v
    }
}
/// Reads an integer value into the row.
type IntSet = fn(&mut SpanRow, i64);
/// Reads a (nullable) boolean into the row.
type BoolSet = fn(&mut SpanRow, Option<bool>);
/// Reads a list of strings (interned) into the row.
type ListSet = fn(&mut SpanRow, SymList);
/// Reads a content payload into the row's content.
type ContentSet = fn(&mut SpanContent, Option<String>);

/// `Utf8` columns: null values leave the field as it is.
const STRING_READERS: &[(&str, StrSet)] = &[
    (col::NAME, |r, v, i| r.name = i.get(v)),
    (col::KIND, |r, v, _| {
        r.kind = SpanKindField(SpanKind::parse(v).unwrap_or(SpanKind::Unspecified))
    }),
    (col::STATUS_CODE, |r, v, _| {
        r.status = StatusField(StatusCode::parse(v).unwrap_or(StatusCode::Unset))
    }),
    (col::STATUS_MESSAGE, |r, v, i| {
        if !v.is_empty() {
            r.rare_mut().status_message = Some(i.get(v));
        }
    }),
    (col::SERVICE_NAME, |r, v, i| r.service_name = Some(i.get(v))),
    (col::SCOPE_NAME, |r, v, i| r.scope_name = Some(i.get(v))),
    (col::SCOPE_VERSION, |r, v, i| {
        r.scope_version = Some(i.get(v))
    }),
    (col::GEN_AI_OPERATION_NAME, |r, v, i| {
        r.operation_name = Some(i.get(v))
    }),
    (col::GEN_AI_PROVIDER_NAME, |r, v, i| {
        r.provider_name = Some(i.get(v))
    }),
    (col::GEN_AI_REQUEST_MODEL, |r, v, i| {
        r.request_model = Some(i.get(v))
    }),
    (col::GEN_AI_CONVERSATION_ID, |r, v, i| {
        r.conversation_id = Some(i.get(v))
    }),
    (col::GEN_AI_AGENT_NAME, |r, v, i| {
        r.agent_name = Some(i.get(v))
    }),
    (col::GEN_AI_AGENT_ID, |r, v, i| {
        r.rare_mut().agent_id = Some(i.get(v))
    }),
    (col::GEN_AI_TOOL_NAME, |r, v, i| {
        r.tool_name = Some(i.get(v))
    }),
    (col::GEN_AI_TOOL_CALL_ID, |r, v, _| {
        r.tool_call_id = Some(v.to_string())
    }),
    (col::GEN_AI_PROMPT_NAME, |r, v, i| {
        r.rare_mut().prompt_name = Some(i.get(v))
    }),
    (col::MCP_METHOD_NAME, |r, v, i| {
        r.mcp_method = Some(i.get(v))
    }),
    (col::MCP_SESSION_ID, |r, v, i| {
        r.rare_mut().mcp_session_id = Some(i.get(v))
    }),
    (col::MCP_RESOURCE_URI, |r, v, i| {
        r.rare_mut().mcp_resource_uri = Some(i.get(v))
    }),
    (col::JSONRPC_REQUEST_ID, |r, v, i| {
        r.jsonrpc_request_id = Some(i.get(v))
    }),
    (col::RPC_RESPONSE_STATUS_CODE, |r, v, i| {
        r.rare_mut().rpc_response_status_code = Some(i.get(v))
    }),
    (col::ERROR_TYPE, |r, v, i| r.error_type = Some(i.get(v))),
    (col::SKILL_NAME, |r, v, i| {
        r.rare_mut().skill_name = Some(i.get(v))
    }),
    (col::GUARDRAIL_NAME, |r, v, i| {
        r.guardrail_name = Some(i.get(v))
    }),
    (col::GUARDRAIL_DECISION, |r, v, i| {
        r.guardrail_decision = Some(i.get(v))
    }),
    (col::RESULT_TYPE, |r, v, i| r.result_type = Some(i.get(v))),
    (col::TOOL_CALL_ARGUMENTS_DIGEST, |r, v, _| {
        r.arguments_digest = Some(v.to_string())
    }),
    (col::MCP_META_TRACEPARENT, |r, v, _| {
        r.rare_mut().mcp_meta_traceparent = Some(v.to_string())
    }),
];

/// `Int64` columns: null values leave the field as it is.
const INT_READERS: &[(&str, IntSet)] = &[
    (col::START_TIME_UNIX_NANO, |r, v| r.start_ns = v),
    (col::END_TIME_UNIX_NANO, |r, v| r.end_ns = v),
];

/// `Boolean` columns.
const BOOL_READERS: &[(&str, BoolSet)] = &[
    (col::RESULT_HAS_STRUCTURED_CONTENT, |r, v| {
        r.result_has_structured_content = v
    }),
    (col::RESULT_IS_ERROR, |r, v| r.result_is_error = v),
    (col::RESULT_TEXT_IS_JSON_OBJECT, |r, v| {
        r.result_text_is_json_object = v
    }),
];

/// `List<Utf8>` columns (a null list reads as empty).
const LIST_READERS: &[(&str, ListSet)] = &[
    (col::RESULT_CONTENT_TYPES, |r, v| r.result_content_types = v),
    (col::DIALECTS, |r, v| r.dialects = v),
];

/// Canonical content columns, read only when a rule asked for them.
const CONTENT_READERS: &[(&str, ContentSet)] = &[
    (col::GEN_AI_TOOL_CALL_ARGUMENTS, |c, v| {
        c.tool_call_arguments = v
    }),
    (col::GEN_AI_TOOL_CALL_RESULT, |c, v| c.tool_call_result = v),
    (col::GEN_AI_INPUT_MESSAGES, |c, v| c.input_messages = v),
    (col::GEN_AI_OUTPUT_MESSAGES, |c, v| c.output_messages = v),
    (col::GEN_AI_SYSTEM_INSTRUCTIONS, |c, v| {
        c.system_instructions = v
    }),
];

/// Columns read by code of their own shape (ids, nested lists, attribute maps), see
/// [`Columns::new`].
const OTHER_READ_COLUMNS: &[&str] = &[
    col::TRACE_ID,
    col::SPAN_ID,
    col::PARENT_SPAN_ID,
    col::TOOL_DEFINITIONS,
    col::EVENTS,
    col::ATTRIBUTES,
    col::ATTRIBUTES_IN_COLUMNS,
    col::CONTENT_ATTRIBUTES,
];

/// Every column this reader reads, in table order.
pub fn read_columns() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = STRING_READERS.iter().map(|(n, _)| *n).collect();
    out.extend(INT_READERS.iter().map(|(n, _)| *n));
    out.extend(BOOL_READERS.iter().map(|(n, _)| *n));
    out.extend(LIST_READERS.iter().map(|(n, _)| *n));
    out.extend(CONTENT_READERS.iter().map(|(n, _)| *n));
    out.extend(OTHER_READ_COLUMNS);
    out
}

/// Typed handles on the columns present in one batch.
struct Columns {
    trace_id: IdCol,
    span_id: IdCol,
    parent: Option<IdCol>,
    /// The string columns with a value in this batch, each with its place in
    /// [`STRING_READERS`] (the interner's last value per column is kept by that place, so a
    /// column keeps it whichever others a batch leaves out). A batch's all-null columns are left
    /// out: most optional columns are null on most spans (8 of the 28 on every span of the
    /// 10M-span benchmark store's first 40 files), and each one left out is a null check per
    /// row less.
    strings: Vec<(usize, StrSet, StrCol)>,
    /// The integer columns with a value in this batch.
    ints: Vec<(IntSet, Int64Array)>,
    bools: Vec<(BoolSet, BooleanArray)>,
    lists: Vec<(ListSet, StrList)>,
    tool_definitions: Option<StructList>,
    events: Option<StructList>,
    attributes: Option<StrMap>,
    /// `attributes_in_columns` (schema 2), read with `attributes`.
    attributes_in_columns: Option<Int64Array>,
    content: Vec<(ContentSet, StrCol)>,
    content_attributes: Option<StrMap>,
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a ArrayRef> {
    batch.schema().index_of(name).ok().map(|i| batch.column(i))
}

fn strings(batch: &RecordBatch, name: &str) -> Result<Option<StrCol>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    StrCol::of(a)
        .map(Some)
        .map_err(|_| type_error(name, a.data_type(), "Utf8"))
}

fn binary(batch: &RecordBatch, name: &str) -> Result<Option<IdCol>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    IdCol::of(a)
        .map(Some)
        .map_err(|_| type_error(name, a.data_type(), "Binary"))
}

fn int64(batch: &RecordBatch, name: &str) -> Result<Option<Int64Array>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    a.as_primitive_opt::<arrow::datatypes::Int64Type>()
        .cloned()
        .map(Some)
        .ok_or_else(|| type_error(name, a.data_type(), "Int64"))
}

fn boolean(batch: &RecordBatch, name: &str) -> Result<Option<BooleanArray>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    a.as_boolean_opt()
        .cloned()
        .map(Some)
        .ok_or_else(|| type_error(name, a.data_type(), "Boolean"))
}

fn list(batch: &RecordBatch, name: &str) -> Result<Option<ListArray>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    a.as_list_opt::<i32>()
        .cloned()
        .map(Some)
        .ok_or_else(|| type_error(name, a.data_type(), "List"))
}

fn map(batch: &RecordBatch, name: &str) -> Result<Option<MapArray>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    a.as_map_opt()
        .cloned()
        .map(Some)
        .ok_or_else(|| type_error(name, a.data_type(), "Map"))
}

fn type_error(name: &str, found: &DataType, expected: &'static str) -> LoadError {
    LoadError::ColumnType {
        column: name.to_string(),
        found: found.to_string(),
        expected,
    }
}

fn opt_str(a: &StrCol, i: usize) -> Option<String> {
    a.get(i).map(str::to_string)
}

/// A `List<Utf8>` column with its child values cast to `Utf8` once (not once per row).
struct StrList {
    list: ListArray,
    values: StringArray,
}

impl StrList {
    fn new(list: ListArray) -> Option<Self> {
        let values = cast(list.values(), &DataType::Utf8).ok()?;
        let values = values.as_string::<i32>().clone();
        Some(Self { list, values })
    }

    /// Strings of row `i`, interned.
    fn row(&self, i: usize, interner: &mut Interner) -> SymList {
        if self.list.is_null(i) {
            return SymList::default();
        }
        let offsets = self.list.value_offsets();
        let (lo, hi) = (offsets[i] as usize, offsets[i + 1] as usize);
        interner.list_in(&self.values, lo, hi)
    }
}

/// A `List<Struct>` column whose string fields are cast once.
struct StructList {
    list: ListArray,
    strings: Vec<(String, StringArray)>,
    bools: Vec<(String, BooleanArray)>,
}

impl StructList {
    fn new(list: ListArray) -> Option<Self> {
        let values = list.values().as_struct_opt()?.clone();
        let mut strings = Vec::new();
        let mut bools = Vec::new();
        for (field, col) in values.fields().iter().zip(values.columns()) {
            match col.data_type() {
                DataType::Boolean => {
                    bools.push((field.name().clone(), col.as_boolean().clone()));
                }
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                    if let Ok(c) = cast(col, &DataType::Utf8) {
                        strings.push((field.name().clone(), c.as_string::<i32>().clone()));
                    }
                }
                _ => {}
            }
        }
        Some(Self {
            list,
            strings,
            bools,
        })
    }

    fn range(&self, i: usize) -> Option<std::ops::Range<usize>> {
        if self.list.is_null(i) {
            return None;
        }
        let offsets = self.list.value_offsets();
        Some(offsets[i] as usize..offsets[i + 1] as usize)
    }

    /// The string field `field` of the struct, if it has one.
    fn string_column(&self, field: &str) -> Option<&StringArray> {
        self.strings
            .iter()
            .find(|(n, _)| n == field)
            .map(|(_, c)| c)
    }

    /// The boolean field `field` of the struct, if it has one.
    fn bool_column(&self, field: &str) -> Option<&BooleanArray> {
        self.bools.iter().find(|(n, _)| n == field).map(|(_, c)| c)
    }

    fn str_ref(&self, field: &str, j: usize) -> Option<&str> {
        let c = self.string_column(field)?;
        (!c.is_null(j)).then(|| c.value(j))
    }
}

/// Row `i`'s tool definitions, shared with every earlier row of the load whose definitions had
/// the same bytes: a model call carries the agent's whole catalog, the same on every turn, so
/// one hash over the row's bytes and one comparison replace a lookup per string of every
/// definition and a fresh list per row.
fn tool_defs(a: &StructList, i: usize, interner: &mut Interner) -> Option<ToolDefs> {
    let range = a.range(i)?;
    // Each field's column found once per row, not once per definition.
    let strings = [
        field::NAME,
        field::DESCRIPTION,
        field::INPUT_SCHEMA_DIGEST,
        field::OUTPUT_SCHEMA_DIGEST,
    ]
    .map(|f| a.string_column(f));
    let flags = [
        field::HAS_OUTPUT_SCHEMA,
        field::READ_ONLY_HINT,
        field::DESTRUCTIVE_HINT,
        field::IDEMPOTENT_HINT,
        field::OPEN_WORLD_HINT,
    ]
    .map(|f| a.bool_column(f));
    let text = |k: usize, j: usize| strings[k].filter(|c| !c.is_null(j)).map(|c| c.value(j));
    let flag = |k: usize, j: usize| flags[k].filter(|c| !c.is_null(j)).map(|c| c.value(j));
    let mut key = std::mem::take(&mut interner.defs_key);
    key.clear();
    for j in range.clone() {
        for k in 0..strings.len() {
            match text(k, j) {
                Some(t) => {
                    key.push(1);
                    key.extend_from_slice(&(t.len() as u64).to_le_bytes());
                    key.extend_from_slice(t.as_bytes());
                }
                None => key.push(0),
            }
        }
        for k in 0..flags.len() {
            key.push(match flag(k, j) {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            });
        }
    }
    let hash = interner.list_hash.hash_one(&key[..]);
    let found = interner
        .defs
        .get(&hash)
        .and_then(|b| b.iter().find(|r| *r.key == key[..]))
        .map(|r| r.list.clone());
    let list = found.unwrap_or_else(|| {
        let mut sym = |k: usize, j: usize| text(k, j).map(|t| interner.get(t));
        let list: ToolDefs = range
            .map(|j| ToolDef {
                name: sym(0, j).unwrap_or_default(),
                description: sym(1, j),
                has_output_schema: flag(0, j),
                read_only_hint: flag(1, j),
                destructive_hint: flag(2, j),
                idempotent_hint: flag(3, j),
                open_world_hint: flag(4, j),
                input_schema_digest: sym(2, j),
                output_schema_digest: sym(3, j),
            })
            .collect();
        if interner.defs_bytes + key.len() <= MAX_RAW_BYTES {
            interner.defs_bytes += key.len();
            interner.defs.entry(hash).or_default().push(RawDefs {
                key: key[..].into(),
                list: list.clone(),
            });
        }
        list
    });
    interner.defs_key = key;
    Some(list)
}

fn event_names(a: &StructList, i: usize, interner: &mut Interner) -> Vec<Sym> {
    a.range(i)
        .into_iter()
        .flatten()
        .filter_map(|j| a.str_ref("name", j).map(|n| interner.get(n)))
        .collect()
}

/// A `Map<Utf8, AnyValue>` column with keys and string values cast once.
struct StrMap {
    map: MapArray,
    keys: StringArray,
    values: Option<StringArray>,
}

impl StrMap {
    fn new(map: MapArray) -> Option<Self> {
        let keys = cast(map.keys(), &DataType::Utf8).ok()?;
        let keys = keys.as_string::<i32>().clone();
        let values = map
            .values()
            .as_struct_opt()
            .and_then(|v| v.column_by_name(schemas::schema::value::STR))
            .and_then(|c| cast(c, &DataType::Utf8).ok())
            .map(|c| c.as_string::<i32>().clone());
        Some(Self { map, keys, values })
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        if self.map.is_null(i) {
            return 0..0;
        }
        let offsets = self.map.value_offsets();
        offsets[i] as usize..offsets[i + 1] as usize
    }

    fn keys(&self, i: usize, interner: &mut Interner) -> SymList {
        let r = self.range(i);
        interner.list_in(&self.keys, r.start, r.end)
    }

    /// (key, string value) pairs of row `i` (entries without a string value are skipped).
    fn string_values(&self, i: usize) -> Vec<(String, String)> {
        let Some(values) = &self.values else {
            return Vec::new();
        };
        self.range(i)
            .filter(|&j| !self.keys.is_null(j) && !values.is_null(j))
            .map(|j| (self.keys.value(j).to_string(), values.value(j).to_string()))
            .collect()
    }
}

impl Columns {
    fn new(batch: &RecordBatch) -> Result<Self, LoadError> {
        let required = |name: &str| LoadError::ColumnType {
            column: name.into(),
            found: "nothing".into(),
            expected: "Binary",
        };
        let trace_id = binary(batch, col::TRACE_ID)?.ok_or_else(|| required(col::TRACE_ID))?;
        let span_id = binary(batch, col::SPAN_ID)?.ok_or_else(|| required(col::SPAN_ID))?;
        let mut string_cols = Vec::new();
        for (slot, (name, set)) in STRING_READERS.iter().enumerate() {
            if let Some(a) = strings(batch, name)? {
                if !a.all_null() {
                    string_cols.push((slot, *set, a));
                }
            }
        }
        let mut int_cols = Vec::new();
        for (name, set) in INT_READERS {
            if let Some(a) = int64(batch, name)? {
                if a.null_count() < a.len() {
                    int_cols.push((*set, a));
                }
            }
        }
        let mut bool_cols = Vec::new();
        for (name, set) in BOOL_READERS {
            if let Some(a) = boolean(batch, name)? {
                bool_cols.push((*set, a));
            }
        }
        let mut list_cols = Vec::new();
        for (name, set) in LIST_READERS {
            if let Some(a) = list(batch, name)?.and_then(StrList::new) {
                list_cols.push((*set, a));
            }
        }
        let mut content = Vec::new();
        for (name, set) in CONTENT_READERS {
            if let Some(a) = strings(batch, name)? {
                if !a.all_null() {
                    content.push((*set, a));
                }
            }
        }
        Ok(Self {
            trace_id,
            span_id,
            parent: binary(batch, col::PARENT_SPAN_ID)?,
            strings: string_cols,
            ints: int_cols,
            bools: bool_cols,
            lists: list_cols,
            tool_definitions: list(batch, col::TOOL_DEFINITIONS)?.and_then(StructList::new),
            events: list(batch, col::EVENTS)?.and_then(StructList::new),
            attributes: map(batch, col::ATTRIBUTES)?.and_then(StrMap::new),
            attributes_in_columns: int64(batch, col::ATTRIBUTES_IN_COLUMNS)?,
            content,
            content_attributes: map(batch, col::CONTENT_ATTRIBUTES)?.and_then(StrMap::new),
        })
    }

    fn row(&self, i: usize, interner: &mut Interner) -> Option<SpanRow> {
        let trace_id = TraceId::from_slice(self.trace_id.value(i))?;
        let span_id = SpanId::from_slice(self.span_id.value(i))?;
        let parent_span_id = self
            .parent
            .as_ref()
            .filter(|p| !p.is_null(i) && !p.value(i).is_empty())
            .and_then(|p| SpanId::from_slice(p.value(i)));
        let mut row = SpanRow {
            trace_id,
            span_id,
            parent_span_id,
            // what a row without a (non-null) kind or status reads as
            kind: SpanKindField(SpanKind::Unspecified),
            status: StatusField(StatusCode::Unset),
            ..SpanRow::default()
        };
        for &(column, set, ref a) in &self.strings {
            if !a.is_null(i) {
                set(&mut row, a.value(i), &mut Slot { interner, column });
            }
        }
        for (set, a) in &self.ints {
            if !a.is_null(i) {
                set(&mut row, a.value(i));
            }
        }
        for (set, a) in &self.bools {
            set(&mut row, (!a.is_null(i)).then(|| a.value(i)));
        }
        for (set, a) in &self.lists {
            set(&mut row, a.row(i, interner));
        }
        if let Some(a) = &self.tool_definitions {
            row.tool_definitions = tool_defs(a, i, interner);
        }
        if let Some(a) = &self.events {
            let names = event_names(a, i, interner);
            if !names.is_empty() {
                row.rare_mut().event_names = names;
            }
        }
        if let Some(a) = &self.attributes {
            row.attribute_keys = a.keys(i, interner);
            let mask = self
                .attributes_in_columns
                .as_ref()
                .filter(|m| !m.is_null(i))
                .map_or(0, |m| m.value(i));
            if mask != 0 {
                let keys = std::mem::take(&mut row.attribute_keys);
                row.attribute_keys = interner.with_in_columns(keys, mask);
            }
        }
        // Content only where the span has some: most spans carry none, and an empty box per
        // row reads the same to every rule (no content field) at an allocation a row.
        let other = self
            .content_attributes
            .as_ref()
            .map(|a| a.string_values(i))
            .unwrap_or_default();
        if !other.is_empty() || self.content.iter().any(|(_, a)| !a.is_null(i)) {
            let mut c = SpanContent {
                other,
                ..SpanContent::default()
            };
            for (set, a) in &self.content {
                set(&mut c, opt_str(a, i));
            }
            row.content = Some(Box::new(c));
        }
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemas::columns::ANALYZER_COLUMNS;
    use std::sync::Arc;

    #[test]
    fn equal_lists_are_shared_and_others_are_not() {
        let mut i = Interner::default();
        let a = i.list(["gen_ai.tool.name", "mcp.method.name"].into_iter());
        let b = i.list(["gen_ai.tool.name", "mcp.method.name"].into_iter());
        assert!(
            a.shares(&b),
            "the same strings in the same order share one list"
        );
        let reordered = i.list(["mcp.method.name", "gen_ai.tool.name"].into_iter());
        let shorter = i.list(["gen_ai.tool.name"].into_iter());
        // a prefix of one string must not read as the list of its pieces
        let split = i.list(["gen_ai.tool.namemcp.method.name"].into_iter());
        for other in [&reordered, &shorter, &split] {
            assert!(!a.shares(other));
            assert_ne!(&*a, &**other);
        }
        assert_eq!(
            a.iter().map(Sym::as_str).collect::<Vec<_>>(),
            ["gen_ai.tool.name", "mcp.method.name"]
        );
        assert_eq!(
            reordered.iter().map(Sym::as_str).collect::<Vec<_>>(),
            ["mcp.method.name", "gen_ai.tool.name"]
        );
        // the strings themselves are interned as before
        assert!(a[0].shares(&shorter[0]));
        let empty = i.list(std::iter::empty());
        assert!(
            empty.is_empty() && empty.is_unallocated(),
            "an empty list allocates nothing"
        );
    }

    #[test]
    fn lists_found_by_their_bytes_are_the_lists_of_their_strings() {
        let mut i = Interner::default();
        // Two batches holding the same list at different places, the same bytes cut
        // differently, and a list with a null in it.
        let first = StringArray::from(vec![Some("x"), Some("ab"), Some("c")]);
        let second = StringArray::from(vec![
            Some("ab"),
            Some("c"),
            Some("a"),
            Some("bc"),
            Some("ab"),
            None,
            Some("c"),
        ]);
        let a = i.list_in(&first, 1, 3);
        let b = i.list_in(&second, 0, 2);
        assert!(
            a.shares(&b),
            "the same strings share one list across batches"
        );
        let cut = i.list_in(&second, 2, 4);
        assert!(!a.shares(&cut));
        assert_eq!(cut.iter().map(Sym::as_str).collect::<Vec<_>>(), ["a", "bc"]);
        let with_null = i.list_in(&second, 4, 7);
        assert!(with_null.shares(&a), "nulls are skipped as before");
        assert_eq!(
            i.list_in(&first, 0, 1)
                .iter()
                .map(Sym::as_str)
                .collect::<Vec<_>>(),
            ["x"]
        );
        assert!(i.list_in(&first, 2, 2).is_unallocated());
        // Each list is held once by its bytes.
        assert_eq!(i.raw.values().map(Vec::len).sum::<usize>(), 3);
    }

    #[test]
    fn past_the_cap_lists_are_still_right_but_no_longer_kept() {
        let mut i = Interner::default();
        let keys: Vec<String> = (0..MAX_SHARED_LISTS + 10)
            .map(|n| format!("k{n}"))
            .collect();
        for k in &keys {
            i.list([k.as_str()].into_iter());
        }
        assert_eq!(i.shared_lists, MAX_SHARED_LISTS);
        assert_eq!(
            i.lists.values().map(Vec::len).sum::<usize>(),
            MAX_SHARED_LISTS
        );
        let late = keys.last().expect("keys");
        let a = i.list([late.as_str()].into_iter());
        let b = i.list([late.as_str()].into_iter());
        assert_eq!(
            a.iter().map(Sym::as_str).collect::<Vec<_>>(),
            [late.as_str()]
        );
        assert_eq!(&*a, &*b);
        assert!(!a.shares(&b), "past the cap a list is its row's own");
        let early = i.list(["k0"].into_iter());
        assert!(early.shares(&i.list(["k0"].into_iter())));
    }

    #[test]
    fn reads_exactly_the_columns_the_table_declares_analyzer_visible() {
        let mut read = read_columns();
        read.sort_unstable();
        let n = read.len();
        read.dedup();
        assert_eq!(read.len(), n, "a column is read twice");
        let mut declared = ANALYZER_COLUMNS.to_vec();
        declared.sort_unstable();
        assert_eq!(
            read, declared,
            "the row reader's tables and the column table's analyzer visibility disagree"
        );
    }

    /// One row where every column holds a value: `schemas/tests/fixtures/every_column.json`, plus
    /// the registry attribute of every lifted column it lacks (so a new lifted column needs no
    /// fixture edit).
    fn every_column_batch() -> RecordBatch {
        let body = include_str!("../../../schemas/tests/fixtures/every_column.json");
        let mut json: serde_json::Value = serde_json::from_str(body).expect("fixture is JSON");
        let attrs = json
            .pointer_mut("/resourceSpans/0/scopeSpans/0/spans/0/attributes")
            .and_then(serde_json::Value::as_array_mut)
            .expect("fixture span attributes");
        for c in schemas::columns::COLUMNS {
            let Some(attribute) = c.lifted_from() else {
                continue;
            };
            if attrs.iter().any(|kv| kv["key"] == attribute.name) {
                continue;
            }
            let value = match c.ty {
                schemas::columns::ColumnType::Int64 => serde_json::json!({"intValue": "7"}),
                _ => serde_json::json!({"stringValue": "v"}),
            };
            attrs.push(serde_json::json!({"key": attribute.name, "value": value}));
        }
        let req = schemas::decode_json(json.to_string().as_bytes()).expect("fixture decodes");
        let ctx = schemas::IngestContext {
            received_at_unix_nano: 0,
            source: "test".into(),
            redact_content: false,
        };
        let converted = schemas::convert_request(&req, &ctx);
        assert_eq!(converted.accepted, 1);
        converted.batch
    }

    /// Spans (model calls) carrying `defs` as `gen_ai.tool.definitions`, converted as the
    /// collector converts them.
    fn model_calls_with_definitions(defs: &[&str]) -> RecordBatch {
        let spans: Vec<serde_json::Value> = defs
            .iter()
            .enumerate()
            .map(|(k, d)| {
                serde_json::json!({
                    "traceId": "0af7651916cd43dd8448eb211c80319c",
                    "spanId": format!("{:016x}", k + 1),
                    "name": "chat m",
                    "startTimeUnixNano": "1", "endTimeUnixNano": "2",
                    "attributes": [
                        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                        {"key": "gen_ai.tool.definitions", "value": {"stringValue": d}},
                    ],
                })
            })
            .collect();
        let json = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]});
        let req = schemas::decode_json(json.to_string().as_bytes()).expect("request decodes");
        let ctx = schemas::IngestContext {
            received_at_unix_nano: 0,
            source: "test".into(),
            redact_content: false,
        };
        schemas::convert_request(&req, &ctx).batch
    }

    #[test]
    fn equal_tool_definition_lists_are_shared_and_others_are_not() {
        let tool = |description: &str| {
            format!(
                r#"[{{"type":"function","name":"lookup_order","description":"{description}","parameters":{{"type":"object"}}}},{{"type":"function","name":"refund"}}]"#
            )
        };
        let (a, b) = (tool("Look an order up"), tool("Look an order up."));
        let batch = model_calls_with_definitions(&[&a, &a, &b, &a, "[]"]);
        // Two batches through one reader: lists are shared across batches.
        let mut reader = RowReader::default();
        let mut rows: Vec<SpanRow> = Vec::new();
        reader.append(&batch.slice(0, 2), &mut rows).unwrap();
        reader.append(&batch.slice(2, 3), &mut rows).unwrap();
        let defs: Vec<&ToolDefs> = rows[..4]
            .iter()
            .map(|r| r.tool_definitions.as_ref().expect("definitions read"))
            .collect();
        assert!(Arc::ptr_eq(defs[0], defs[1]) && Arc::ptr_eq(defs[0], defs[3]));
        assert!(
            !Arc::ptr_eq(defs[0], defs[2]),
            "another description, another list"
        );
        let names: Vec<&str> = defs[2].iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["lookup_order", "refund"]);
        assert_eq!(defs[0][0].description.as_deref(), Some("Look an order up"));
        assert_eq!(defs[2][0].description.as_deref(), Some("Look an order up."));
        assert_eq!(defs[0][1].description, None);
        assert!(rows[4]
            .tool_definitions
            .as_ref()
            .is_none_or(|d| d.is_empty()));
        // Read alone, each row's list is the one read shared.
        for (k, row) in rows.iter().enumerate() {
            let mut alone: Vec<SpanRow> = Vec::new();
            RowReader::default()
                .append(&batch.slice(k, 1), &mut alone)
                .unwrap();
            assert_eq!(
                format!("{:?}", alone[0].tool_definitions),
                format!("{:?}", row.tool_definitions)
            );
        }
    }

    fn rows_of(batch: &RecordBatch) -> Result<String, LoadError> {
        let mut rows: Vec<SpanRow> = Vec::new();
        RowReader::default().append(batch, &mut rows)?;
        assert_eq!(rows.len(), 1);
        Ok(format!("{rows:?}"))
    }

    #[test]
    fn every_read_column_reaches_the_row() {
        let full = every_column_batch();
        let whole = rows_of(&full).expect("full row");
        for name in read_columns() {
            let schema = full.schema();
            let without: Vec<usize> = (0..schema.fields().len())
                .filter(|i| schema.field(*i).name() != name)
                .collect();
            let projected = full.project(&without).expect("projection");
            match rows_of(&projected) {
                Ok(row) => assert_ne!(
                    row, whole,
                    "{name} is in the reader's tables but reading it changes nothing in the row"
                ),
                Err(e) => assert!(name == col::TRACE_ID || name == col::SPAN_ID, "{name}: {e}"),
            }
        }
    }
}
