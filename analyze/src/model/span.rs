//! `SpanRow`: the compact in-memory form of one canonical span, holding only what rules read.
//!
//! Why a row struct and not Arrow arrays all the way: rules walk trees, join client and server
//! spans and order tool calls in time; doing that over owned rows keeps every rule short and
//! readable, and the scan already dropped the columns no rule needs (content stays on disk unless a
//! rule asks for it).

use std::fmt;
use std::sync::Arc;

/// A shared, interned string: the loader hands out one allocation per distinct value of
/// low-cardinality columns (names, services, tools, methods, attribute keys...), not one per span.
/// A thin pointer (8 bytes, `Option<Sym>` too) where `Arc<str>` would take 16: a span row holds
/// about twenty of them, and a million rows are moved and paged in while the model is built.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Sym(Arc<String>);

impl std::ops::Deref for Sym {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}
impl Sym {
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}
impl PartialEq<str> for Sym {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}
impl PartialEq<&str> for Sym {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
impl AsRef<str> for Sym {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}
impl std::borrow::Borrow<str> for Sym {
    fn borrow(&self) -> &str {
        self.0.as_str()
    }
}
impl From<&str> for Sym {
    fn from(s: &str) -> Self {
        Self(Arc::new(s.to_string()))
    }
}
impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}
impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A shared list of interned strings: the attribute keys, dialects or content block types of a
/// span. Spans of one shape carry the same list (in the benchmark store, 1M spans held 8 distinct
/// attribute key lists), so the loader hands out one allocation per distinct list, not one per
/// span: a row holds a pointer, and building, moving and dropping a million rows touches no
/// per-row heap list. An empty list allocates nothing.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct SymList(Option<Arc<[Sym]>>);

impl std::ops::Deref for SymList {
    type Target = [Sym];
    fn deref(&self) -> &[Sym] {
        self.0.as_deref().unwrap_or(&[])
    }
}
impl From<Vec<Sym>> for SymList {
    fn from(v: Vec<Sym>) -> Self {
        Self((!v.is_empty()).then(|| v.into()))
    }
}
impl SymList {
    /// The address of the shared allocation (0 for the empty list): two lists alive at the same
    /// time have the same address only if they are the same allocation
    /// ([`super::list_memo::ListMemo`]).
    pub fn addr(&self) -> usize {
        self.0
            .as_ref()
            .map_or(0, |a| a.as_ptr().cast::<Sym>() as usize)
    }
}
#[cfg(test)]
impl SymList {
    /// The same allocation as `other` (both non-empty).
    pub(crate) fn shares(&self, other: &SymList) -> bool {
        self.addr() != 0 && self.addr() == other.addr()
    }
    /// Allocates nothing.
    pub(crate) fn is_unallocated(&self) -> bool {
        self.0.is_none()
    }
}
#[cfg(test)]
impl Sym {
    /// The same allocation as `other`.
    pub(crate) fn shares(&self, other: &Sym) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl fmt::Debug for SymList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// 16-byte trace id.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TraceId(pub [u8; 16]);

/// A set of trace ids (a window's core, the traces carried to the next window). Hashed with
/// foldhash, not the standard library's SipHash: rules ask it per span, and ids are random bytes
/// that no one picks to collide in a map the analyzer builds for itself.
pub type TraceSet = std::collections::HashSet<TraceId, foldhash::fast::RandomState>;
/// 8-byte span id.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SpanId(pub [u8; 8]);

impl TraceId {
    /// Parses 32 hex digits (case-insensitive).
    pub fn parse_hex(s: &str) -> Option<Self> {
        let bytes = hex::decode(s.trim()).ok()?;
        Some(Self(bytes.try_into().ok()?))
    }
    pub fn from_slice(b: &[u8]) -> Option<Self> {
        Some(Self(b.try_into().ok()?))
    }
}
impl SpanId {
    /// Parses 16 hex digits (case-insensitive).
    pub fn parse_hex(s: &str) -> Option<Self> {
        let bytes = hex::decode(s.trim()).ok()?;
        Some(Self(bytes.try_into().ok()?))
    }
    pub fn from_slice(b: &[u8]) -> Option<Self> {
        Some(Self(b.try_into().ok()?))
    }
}
/// Lowercase hex of `bytes` written to `f` through a stack buffer of `2 * N` bytes: the JSON
/// report prints two ids per finding, and `hex::encode` built each one as a `String` char by
/// char (a tenth of a 10M-span `check`'s last, single-threaded half second, perf, session 52).
fn write_hex<const N: usize, const M: usize>(
    bytes: &[u8; N],
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    let mut buf = [0u8; M];
    hex::encode_to_slice(bytes, &mut buf).map_err(|_| fmt::Error)?;
    f.write_str(std::str::from_utf8(&buf).map_err(|_| fmt::Error)?)
}
impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex::<16, 32>(&self.0, f)
    }
}
impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex::<8, 16>(&self.0, f)
    }
}
impl fmt::Debug for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
impl fmt::Debug for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Span kind and status as the canonical `kind` / `status_code` columns spell them (declared once
/// in `schemas`).
pub use schemas::kind_status::{SpanKind, StatusCode};

/// One tool definition from the derived `tool_definitions` column (the struct `schemas`
/// declares). Strings are interned: every model call repeats the agent's whole catalog, so the
/// same descriptions come back on every turn; a definition without a name reads as empty.
pub type ToolDef = schemas::tool_def::ToolDef<Sym, Sym>;

/// A span's tool definitions: one shared list for every span of a load that carries the same
/// ones (a model call repeats the agent's catalog on every turn).
pub type ToolDefs = Arc<[ToolDef]>;

/// The canonical columns a rule may read, for one span. Optional content fields are filled only
/// when a rule asked for them (see [`crate::load::Projection`]). `crate::load::rows` fills it, one
/// line per column.
///
/// Laid out by hand (`repr(C)`), the fields the model's passes and most rules read first: a
/// window's rows are about 100 MB, far past the caches, and building the model walks them about
/// ten times, each pass stalling on the cache lines of each row it reads (`perf annotate`
/// of `Model::from_parts` put its samples on the first field each pass touches, session 51). The
/// first two 64-byte lines hold the ids, times, kind, status and the names of operation, method,
/// tool, conversation and guardrail; what most spans leave empty lives out of line in
/// [`SpanRare`]. A row was 416 bytes; it is 312 ([`ROW_BYTES`]).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct SpanRow {
    // first cache line: 64 bytes
    pub trace_id: TraceId,
    pub span_id: SpanId,
    pub start_ns: i64,
    pub end_ns: i64,
    pub operation_name: Option<Sym>,
    pub mcp_method: Option<Sym>,
    pub tool_name: Option<Sym>,
    // second cache line: 48 bytes of names, 14 of small fields, 2 of padding
    pub name: Sym,
    pub conversation_id: Option<Sym>,
    pub jsonrpc_request_id: Option<Sym>,
    pub service_name: Option<Sym>,
    pub guardrail_name: Option<Sym>,
    pub guardrail_decision: Option<Sym>,
    pub parent_span_id: Option<SpanId>,
    pub kind: SpanKindField,
    pub status: StatusField,
    // derived facts
    pub result_has_structured_content: Option<bool>,
    pub result_is_error: Option<bool>,
    pub result_text_is_json_object: Option<bool>,
    // the rest
    pub tool_call_id: Option<String>,
    pub error_type: Option<Sym>,
    /// Keys of the generic `attributes` map (for rules about attribute naming, e.g. TL007).
    pub attribute_keys: SymList,
    pub scope_name: Option<Sym>,
    /// Instrumentation scope version: read on request (`report propagation`).
    pub scope_version: Option<Sym>,
    // GenAI
    pub provider_name: Option<Sym>,
    pub request_model: Option<Sym>,
    pub agent_name: Option<Sym>,
    pub result_content_types: SymList,
    pub result_type: Option<Sym>,
    pub arguments_digest: Option<String>,
    pub tool_definitions: Option<ToolDefs>,
    pub dialects: SymList,
    /// Content columns, only when a rule asked for them.
    pub content: Option<Box<SpanContent>>,
    /// The fields most spans leave empty; `None` when all of them are.
    pub rare: Option<Box<SpanRare>>,
}

/// Bytes of one [`SpanRow`] (its heap parts aside).
pub const ROW_BYTES: usize = std::mem::size_of::<SpanRow>();

// The layout, checked when the crate compiles: the first line holds the ids, times and the
// operation, method and tool names; the second ends with the small fields and nothing spills
// past it; and the row stays smaller than the 416 bytes it was before the rare fields moved out.
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(SpanRow, tool_name) == 56);
    assert!(offset_of!(SpanRow, result_text_is_json_object) < 128);
    assert!(offset_of!(SpanRow, tool_call_id) == 128);
    assert!(ROW_BYTES <= 320);
};

/// The fields of a span that most spans leave empty, out of line so that the rows every pass
/// walks stay small ([`SpanRow`]): a status message, agent id, prompt name, MCP session id,
/// resource URI, JSON-RPC error code, skill, `_meta` traceparent or event. Read through
/// [`SpanRow`]'s accessors of the same names; written through [`SpanRow::rare_mut`].
#[derive(Clone, Debug, Default)]
pub struct SpanRare {
    pub status_message: Option<Sym>,
    pub agent_id: Option<Sym>,
    pub prompt_name: Option<Sym>,
    pub mcp_session_id: Option<Sym>,
    pub mcp_resource_uri: Option<Sym>,
    pub rpc_response_status_code: Option<Sym>,
    pub skill_name: Option<Sym>,
    pub mcp_meta_traceparent: Option<String>,
    /// Names of the span's events (e.g. `approval.granted`).
    pub event_names: Vec<Sym>,
}

/// Opt-in content, loaded only for rules that need it.
#[derive(Clone, Debug, Default)]
pub struct SpanContent {
    pub tool_call_arguments: Option<String>,
    pub tool_call_result: Option<String>,
    pub input_messages: Option<String>,
    pub output_messages: Option<String>,
    pub system_instructions: Option<String>,
    /// Vendor content attributes (key, string value).
    pub other: Vec<(String, String)>,
}

/// Newtype wrappers so `SpanRow` can derive `Default`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanKindField(pub SpanKind);
impl Default for SpanKindField {
    fn default() -> Self {
        Self(SpanKind::Internal)
    }
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusField(pub StatusCode);
impl Default for StatusField {
    fn default() -> Self {
        Self(StatusCode::Unset)
    }
}

/// Operation names of model calls (GenAI semantic conventions).
pub const MODEL_OPERATIONS: &[&str] = &["chat", "text_completion", "generate_content"];

impl SpanRow {
    /// The out-of-line fields, created empty on first write.
    pub fn rare_mut(&mut self) -> &mut SpanRare {
        self.rare.get_or_insert_with(Box::default)
    }
    pub fn status_message(&self) -> Option<&Sym> {
        self.rare.as_ref()?.status_message.as_ref()
    }
    pub fn agent_id(&self) -> Option<&Sym> {
        self.rare.as_ref()?.agent_id.as_ref()
    }
    pub fn prompt_name(&self) -> Option<&Sym> {
        self.rare.as_ref()?.prompt_name.as_ref()
    }
    pub fn mcp_session_id(&self) -> Option<&Sym> {
        self.rare.as_ref()?.mcp_session_id.as_ref()
    }
    pub fn mcp_resource_uri(&self) -> Option<&Sym> {
        self.rare.as_ref()?.mcp_resource_uri.as_ref()
    }
    pub fn rpc_response_status_code(&self) -> Option<&Sym> {
        self.rare.as_ref()?.rpc_response_status_code.as_ref()
    }
    pub fn skill_name(&self) -> Option<&Sym> {
        self.rare.as_ref()?.skill_name.as_ref()
    }
    pub fn mcp_meta_traceparent(&self) -> Option<&str> {
        self.rare.as_ref()?.mcp_meta_traceparent.as_deref()
    }
    pub fn event_names(&self) -> &[Sym] {
        self.rare.as_ref().map_or(&[], |r| &r.event_names)
    }
    pub fn kind(&self) -> SpanKind {
        self.kind.0
    }
    pub fn status(&self) -> StatusCode {
        self.status.0
    }
    pub fn duration_ns(&self) -> i64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
    fn op_is(&self, op: &str) -> bool {
        self.operation_name.as_deref() == Some(op)
    }
    /// `invoke_agent` span: the root of an agent run.
    pub fn is_agent_run(&self) -> bool {
        self.op_is("invoke_agent")
    }
    /// A span whose tool definitions are those shown to a model, not a server's catalog: a model
    /// call, or an agent span (the GenAI conventions put `gen_ai.tool.definitions` on both).
    pub fn shows_tools_to_a_model(&self) -> bool {
        self.is_model_call() || self.op_is("invoke_agent") || self.op_is("create_agent")
    }
    /// A model call (chat and friends).
    pub fn is_model_call(&self) -> bool {
        self.operation_name
            .as_deref()
            .is_some_and(|op| MODEL_OPERATIONS.contains(&op))
    }
    /// A host-side `execute_tool` span (not an MCP protocol span, which may also carry
    /// `gen_ai.operation.name=execute_tool` on the server side).
    pub fn is_execute_tool(&self) -> bool {
        self.op_is("execute_tool") && self.mcp_method.is_none()
    }
    /// The host's `execute_tool` span with the MCP attributes placed on it instead of a separate
    /// MCP client span: the MCP conventions say an MCP instrumentation that detects an outer
    /// GenAI tool span SHOULD add its attributes there (semantic-conventions-genai
    /// `docs/gen-ai/mcp.md`, "Client", at 0393513c908bf895e7b3ec480a2c1eb073c584af). It carries
    /// the model's `gen_ai.tool.call.id`, which only the host knows; a server span never does.
    pub fn is_execute_tool_with_mcp(&self) -> bool {
        self.op_is("execute_tool") && self.mcp_method.is_some() && self.tool_call_id.is_some()
    }
    /// Any MCP protocol span (a method is known).
    pub fn is_mcp(&self) -> bool {
        self.mcp_method.is_some()
    }
    pub fn method_is(&self, m: &str) -> bool {
        self.mcp_method.as_deref() == Some(m)
    }
    /// The JSON-RPC (protocol) error an MCP span reports, if any: `rpc.response.status_code`
    /// (conditionally required "if response contains an error code"; `OK` / `0` are not errors),
    /// else an integer `error.type` (the conventions set `error.type` to the JSON-RPC error code's
    /// string; the `isError` case is `tool_error` instead). A protocol error is not a tool error:
    /// there is no `CallToolResult`, so no `isError` (TL008/TL009 judge tool errors only).
    pub fn protocol_error(&self) -> Option<&str> {
        if !self.is_mcp() {
            return None;
        }
        if let Some(code) = self.rpc_response_status_code() {
            let code = code.trim();
            if !code.is_empty() && !code.eq_ignore_ascii_case("ok") && code != "0" {
                return Some(code);
            }
        }
        self.error_type
            .as_deref()
            .filter(|e| e.trim().parse::<i64>().is_ok())
    }
    /// True when the span reports a tool-level error (`isError` seen, or `error.type=tool_error`).
    pub fn reports_tool_error(&self) -> Option<bool> {
        match self.result_is_error {
            Some(v) => Some(v),
            None if self
                .error_type
                .as_deref()
                .is_some_and(|e| e.eq_ignore_ascii_case("tool_error")) =>
            {
                Some(true)
            }
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sym_is_a_thin_pointer_and_reads_as_str() {
        assert_eq!(std::mem::size_of::<Option<Sym>>(), 8);
        let s = Sym::from("tools/call");
        assert_eq!(&*s, "tools/call");
        assert_eq!(Some(s.clone()).as_deref(), Some("tools/call"));
        assert_eq!(s.to_string(), "tools/call");
        assert_eq!(format!("{s:?}"), "\"tools/call\"");
    }

    #[test]
    fn rare_fields_are_absent_until_written_and_read_back_once_written() {
        let mut row = SpanRow::default();
        assert!(row.rare.is_none());
        assert_eq!(row.prompt_name(), None);
        assert!(row.event_names().is_empty());
        row.rare_mut().prompt_name = Some(Sym::from("summarise"));
        row.rare_mut()
            .event_names
            .push(Sym::from("approval.granted"));
        assert_eq!(row.prompt_name().map(Sym::as_str), Some("summarise"));
        assert_eq!(row.event_names().len(), 1);
        assert_eq!(row.mcp_session_id(), None);
    }
}
