//! A protobuf decoder for `ExportTraceServiceRequest` that refills an existing request,
//! reusing its allocations.
//!
//! Why: decoding with prost allocates every string, id and attribute of every span (33
//! allocations per span on the benchmark's load) and the converter frees them all again after
//! conversion: together a fifth of the collector's instructions per span (BENCHMARKS.md,
//! session 13). Requests from one exporter have the same shape from one request to the next, so
//! the i-th span of a request refills the i-th span of the request decoded before it: its `Vec`s
//! and `String`s are cleared and refilled in place and new memory is taken only when a value
//! outgrows the previous one.
//!
//! The result must be exactly what `prost` decodes, value for value, so that nothing downstream
//! can tell the difference. The decoder therefore handles only what it can decode exactly and
//! gives up ([`Unsupported`]) on everything else, and the caller then decodes with prost, which
//! also gives the exact error text for a malformed body. It gives up on: any malformed input
//! (truncated field, bad varint, invalid UTF-8 in a string, wrong wire type for a known field,
//! tag 0, wire types 6–7), groups (wire types 3–4), nesting deeper than [`MAX_DEPTH`] (prost's
//! limit is 100), and a singular message field sent twice in one message (prost merges the two;
//! no exporter does it). Unknown fields are skipped as prost skips them. Duplicated scalar fields
//! keep the last value, as prost does. `tests` and the `decode_protobuf` fuzz target check
//! every decoded request against prost's.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value, AnyValue, ArrayValue, EntityRef, InstrumentationScope, KeyValue, KeyValueList,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event, Link};
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};

/// The decoder cannot decode this body exactly as prost does; decode it with prost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported;

type Result<T> = std::result::Result<T, Unsupported>;

/// Deepest message nesting decoded here (the request is depth 0; an attribute value inside
/// arrays and key/value lists adds two per level). Deeper bodies go to prost.
pub const MAX_DEPTH: u32 = 32;

const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const I32: u8 = 5;

/// Decodes `body` into `req`, reusing the allocations `req` holds. On `Err`, `req` holds an
/// unspecified mix of old and new values (still a valid request, refillable again).
pub fn decode_into(req: &mut ExportTraceServiceRequest, body: &[u8]) -> Result<()> {
    decode_into_with(req, &mut Spare::default(), body)
}

/// [`decode_into`], with the attribute slots earlier decodes let go kept in `spare` for the
/// next ones: keep `spare` beside `req` from one decode to the next.
pub fn decode_into_with(
    req: &mut ExportTraceServiceRequest,
    spare: &mut Spare,
    body: &[u8],
) -> Result<()> {
    let mut buf = body;
    let mut n = 0;
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => {
                let body = len(wt, &mut buf)?;
                resource_spans(slot(&mut req.resource_spans, n), spare, body, 1)?;
                n += 1;
            }
            _ => skip(wt, &mut buf)?,
        }
    }
    req.resource_spans.truncate(n);
    Ok(())
}

/// The number of spans in a protobuf `ExportTraceServiceRequest` body, read from its framing
/// without decoding any span (each span's bytes are skipped by their length), or
/// [`Unsupported`] where the framing down to the spans is malformed (the decode will then say
/// why). Every span field counted here is one span of the decoded request: a well-framed body
/// that prost refuses for something inside a span is refused whole anyway.
///
/// Why: the collector refuses a request the writer queue has no room for before decoding it,
/// and a request's queue charge grows with its span count
/// ([`crate::convert::converted_size_floor_encoded`]).
pub fn count_spans(body: &[u8]) -> Result<u64> {
    /// The repeated field `field` of the message in `buf`, each payload handed to `each`.
    fn each_field<'a>(
        mut buf: &'a [u8],
        field: u32,
        mut each: impl FnMut(&'a [u8]) -> Result<()>,
    ) -> Result<()> {
        while !buf.is_empty() {
            let (tag, wt) = key(&mut buf)?;
            if tag == field {
                each(len(wt, &mut buf)?)?;
            } else {
                skip(wt, &mut buf)?;
            }
        }
        Ok(())
    }
    let mut spans = 0u64;
    // ExportTraceServiceRequest.resource_spans = 1, ResourceSpans.scope_spans = 2,
    // ScopeSpans.spans = 2.
    each_field(body, 1, |resource_spans| {
        each_field(resource_spans, 2, |scope_spans| {
            each_field(scope_spans, 2, |_span| {
                spans += 1;
                Ok(())
            })
        })
    })?;
    Ok(spans)
}

/// The `n`-th element of `v`, reused when there is one, else a new default one.
fn slot<T: Default>(v: &mut Vec<T>, n: usize) -> &mut T {
    slot_or(v, n, T::default)
}

/// The `n`-th element of `v`, reused when there is one, else `new()` pushed.
fn slot_or<T>(v: &mut Vec<T>, n: usize, new: impl FnOnce() -> T) -> &mut T {
    if n >= v.len() {
        v.push(new());
    }
    &mut v[n]
}

/// Attribute slots (with their key and value allocations) that a span, resource, scope, event
/// or link had beyond the attributes it has now, kept for the next one that has more.
///
/// Why: the i-th span of a request refills the i-th span of the one before, but the two are
/// rarely the same kind of span (a model call, a tool call, an MCP request), so their attribute
/// counts differ. Truncating freed the extra slots' strings and the next longer span allocated
/// them again. At the benchmark's peak the allocator took 11% of the collector's CPU samples,
/// a third of it under the decode (`perf`). Kept slots, and the headroom `fresh_capacity`
/// gives a new buffer, halve the decode's calls into the allocator (BENCHMARKS.md, session 40).
///
/// Bound: at most [`Spare::MAX_ATTRIBUTES`] slots, each holding at most
/// [`Spare::MAX_SLOT_BYTES`] of key and value buffers (4 MiB in all); a slot beyond that, or
/// larger (a prompt, a nested value), is freed as before.
#[derive(Debug, Default)]
pub struct Spare {
    attributes: Vec<KeyValue>,
}

impl Spare {
    /// Slots kept at most.
    pub const MAX_ATTRIBUTES: usize = 4096;
    /// The largest slot kept, by the capacity of its key and value buffers: attribute keys
    /// and short values, not content payloads.
    pub const MAX_SLOT_BYTES: usize = 1024;

    /// Slots kept now.
    pub fn attributes(&self) -> usize {
        self.attributes.len()
    }

    /// The `n`-th attribute of `v`: reused when there is one, else a kept slot, else new.
    fn attribute<'a>(&mut self, v: &'a mut Vec<KeyValue>, n: usize) -> &'a mut KeyValue {
        slot_or(v, n, || self.attributes.pop().unwrap_or_default())
    }

    /// Shortens `v` to `n` attributes, keeping the slots cut off (up to the bound).
    fn retire(&mut self, v: &mut Vec<KeyValue>, n: usize) {
        if v.len() <= n {
            return;
        }
        for kv in v.drain(n..) {
            if self.attributes.len() < Self::MAX_ATTRIBUTES
                && slot_bytes(&kv) <= Self::MAX_SLOT_BYTES
            {
                self.attributes.push(kv);
            }
        }
    }
}

/// The capacity of a slot's key and value buffers; a nested value counts as too large to keep.
fn slot_bytes(kv: &KeyValue) -> usize {
    let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
        None => 0,
        Some(Value::StringValue(s)) => s.capacity(),
        Some(Value::BytesValue(b)) => b.capacity(),
        Some(Value::ArrayValue(_) | Value::KvlistValue(_)) => usize::MAX,
        Some(_) => 0,
    };
    kv.key.capacity().saturating_add(value)
}

fn deeper(depth: u32) -> Result<u32> {
    if depth >= MAX_DEPTH {
        return Err(Unsupported);
    }
    Ok(depth + 1)
}

fn resource_spans(
    rs: &mut ResourceSpans,
    spare: &mut Spare,
    mut buf: &[u8],
    depth: u32,
) -> Result<()> {
    rs.schema_url.clear();
    let mut resource_seen = false;
    let mut n = 0;
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => {
                let body = len(wt, &mut buf)?;
                once(&mut resource_seen)?;
                resource(
                    rs.resource.get_or_insert_with(Default::default),
                    spare,
                    body,
                    deeper(depth)?,
                )?;
            }
            2 => {
                let body = len(wt, &mut buf)?;
                scope_spans(slot(&mut rs.scope_spans, n), spare, body, deeper(depth)?)?;
                n += 1;
            }
            3 => string(&mut rs.schema_url, len(wt, &mut buf)?)?,
            _ => skip(wt, &mut buf)?,
        }
    }
    if !resource_seen {
        rs.resource = None;
    }
    rs.scope_spans.truncate(n);
    Ok(())
}

/// A singular message field: the first time is fine, a second one goes to prost (it merges).
fn once(seen: &mut bool) -> Result<()> {
    if *seen {
        return Err(Unsupported);
    }
    *seen = true;
    Ok(())
}

fn resource(r: &mut Resource, spare: &mut Spare, mut buf: &[u8], depth: u32) -> Result<()> {
    r.dropped_attributes_count = 0;
    let (mut attrs, mut refs) = (0, 0);
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => {
                let body = len(wt, &mut buf)?;
                key_value(
                    spare.attribute(&mut r.attributes, attrs),
                    body,
                    deeper(depth)?,
                )?;
                attrs += 1;
            }
            2 => r.dropped_attributes_count = varint_field(wt, &mut buf)? as u32,
            3 => {
                let body = len(wt, &mut buf)?;
                entity_ref(slot(&mut r.entity_refs, refs), body)?;
                refs += 1;
            }
            _ => skip(wt, &mut buf)?,
        }
    }
    spare.retire(&mut r.attributes, attrs);
    r.entity_refs.truncate(refs);
    Ok(())
}

fn entity_ref(e: &mut EntityRef, mut buf: &[u8]) -> Result<()> {
    e.schema_url.clear();
    e.r#type.clear();
    let (mut ids, mut descriptions) = (0, 0);
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => string(&mut e.schema_url, len(wt, &mut buf)?)?,
            2 => string(&mut e.r#type, len(wt, &mut buf)?)?,
            3 => {
                let body = len(wt, &mut buf)?;
                string(slot(&mut e.id_keys, ids), body)?;
                ids += 1;
            }
            4 => {
                let body = len(wt, &mut buf)?;
                string(slot(&mut e.description_keys, descriptions), body)?;
                descriptions += 1;
            }
            _ => skip(wt, &mut buf)?,
        }
    }
    e.id_keys.truncate(ids);
    e.description_keys.truncate(descriptions);
    Ok(())
}

fn scope_spans(ss: &mut ScopeSpans, spare: &mut Spare, mut buf: &[u8], depth: u32) -> Result<()> {
    ss.schema_url.clear();
    let mut scope_seen = false;
    let mut n = 0;
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => {
                let body = len(wt, &mut buf)?;
                once(&mut scope_seen)?;
                scope(
                    ss.scope.get_or_insert_with(Default::default),
                    spare,
                    body,
                    deeper(depth)?,
                )?;
            }
            2 => {
                let body = len(wt, &mut buf)?;
                span(slot(&mut ss.spans, n), spare, body, deeper(depth)?)?;
                n += 1;
            }
            3 => string(&mut ss.schema_url, len(wt, &mut buf)?)?,
            _ => skip(wt, &mut buf)?,
        }
    }
    if !scope_seen {
        ss.scope = None;
    }
    ss.spans.truncate(n);
    Ok(())
}

fn scope(
    s: &mut InstrumentationScope,
    spare: &mut Spare,
    mut buf: &[u8],
    depth: u32,
) -> Result<()> {
    s.name.clear();
    s.version.clear();
    s.dropped_attributes_count = 0;
    let mut attrs = 0;
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => string(&mut s.name, len(wt, &mut buf)?)?,
            2 => string(&mut s.version, len(wt, &mut buf)?)?,
            3 => {
                let body = len(wt, &mut buf)?;
                key_value(
                    spare.attribute(&mut s.attributes, attrs),
                    body,
                    deeper(depth)?,
                )?;
                attrs += 1;
            }
            4 => s.dropped_attributes_count = varint_field(wt, &mut buf)? as u32,
            _ => skip(wt, &mut buf)?,
        }
    }
    spare.retire(&mut s.attributes, attrs);
    Ok(())
}

fn span(s: &mut Span, spare: &mut Spare, mut buf: &[u8], depth: u32) -> Result<()> {
    s.trace_id.clear();
    s.span_id.clear();
    s.trace_state.clear();
    s.parent_span_id.clear();
    s.flags = 0;
    s.name.clear();
    s.kind = 0;
    s.start_time_unix_nano = 0;
    s.end_time_unix_nano = 0;
    s.dropped_attributes_count = 0;
    s.dropped_events_count = 0;
    s.dropped_links_count = 0;
    let mut status_seen = false;
    let (mut attrs, mut events, mut links) = (0, 0, 0);
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => bytes(&mut s.trace_id, len(wt, &mut buf)?),
            2 => bytes(&mut s.span_id, len(wt, &mut buf)?),
            3 => string(&mut s.trace_state, len(wt, &mut buf)?)?,
            4 => bytes(&mut s.parent_span_id, len(wt, &mut buf)?),
            5 => string(&mut s.name, len(wt, &mut buf)?)?,
            6 => s.kind = varint_field(wt, &mut buf)? as i32,
            7 => s.start_time_unix_nano = fixed64(wt, &mut buf)?,
            8 => s.end_time_unix_nano = fixed64(wt, &mut buf)?,
            9 => {
                let body = len(wt, &mut buf)?;
                key_value(
                    spare.attribute(&mut s.attributes, attrs),
                    body,
                    deeper(depth)?,
                )?;
                attrs += 1;
            }
            10 => s.dropped_attributes_count = varint_field(wt, &mut buf)? as u32,
            11 => {
                let body = len(wt, &mut buf)?;
                event(slot(&mut s.events, events), spare, body, deeper(depth)?)?;
                events += 1;
            }
            12 => s.dropped_events_count = varint_field(wt, &mut buf)? as u32,
            13 => {
                let body = len(wt, &mut buf)?;
                link(slot(&mut s.links, links), spare, body, deeper(depth)?)?;
                links += 1;
            }
            14 => s.dropped_links_count = varint_field(wt, &mut buf)? as u32,
            15 => {
                let body = len(wt, &mut buf)?;
                once(&mut status_seen)?;
                status(s.status.get_or_insert_with(Default::default), body)?;
            }
            16 => s.flags = fixed32(wt, &mut buf)?,
            _ => skip(wt, &mut buf)?,
        }
    }
    if !status_seen {
        s.status = None;
    }
    spare.retire(&mut s.attributes, attrs);
    s.events.truncate(events);
    s.links.truncate(links);
    Ok(())
}

fn event(e: &mut Event, spare: &mut Spare, mut buf: &[u8], depth: u32) -> Result<()> {
    e.time_unix_nano = 0;
    e.name.clear();
    e.dropped_attributes_count = 0;
    let mut attrs = 0;
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => e.time_unix_nano = fixed64(wt, &mut buf)?,
            2 => string(&mut e.name, len(wt, &mut buf)?)?,
            3 => {
                let body = len(wt, &mut buf)?;
                key_value(
                    spare.attribute(&mut e.attributes, attrs),
                    body,
                    deeper(depth)?,
                )?;
                attrs += 1;
            }
            4 => e.dropped_attributes_count = varint_field(wt, &mut buf)? as u32,
            _ => skip(wt, &mut buf)?,
        }
    }
    spare.retire(&mut e.attributes, attrs);
    Ok(())
}

fn link(l: &mut Link, spare: &mut Spare, mut buf: &[u8], depth: u32) -> Result<()> {
    l.trace_id.clear();
    l.span_id.clear();
    l.trace_state.clear();
    l.dropped_attributes_count = 0;
    l.flags = 0;
    let mut attrs = 0;
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => bytes(&mut l.trace_id, len(wt, &mut buf)?),
            2 => bytes(&mut l.span_id, len(wt, &mut buf)?),
            3 => string(&mut l.trace_state, len(wt, &mut buf)?)?,
            4 => {
                let body = len(wt, &mut buf)?;
                key_value(
                    spare.attribute(&mut l.attributes, attrs),
                    body,
                    deeper(depth)?,
                )?;
                attrs += 1;
            }
            5 => l.dropped_attributes_count = varint_field(wt, &mut buf)? as u32,
            6 => l.flags = fixed32(wt, &mut buf)?,
            _ => skip(wt, &mut buf)?,
        }
    }
    spare.retire(&mut l.attributes, attrs);
    Ok(())
}

fn status(s: &mut Status, mut buf: &[u8]) -> Result<()> {
    s.message.clear();
    s.code = 0;
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            2 => string(&mut s.message, len(wt, &mut buf)?)?,
            3 => s.code = varint_field(wt, &mut buf)? as i32,
            _ => skip(wt, &mut buf)?,
        }
    }
    Ok(())
}

fn key_value(kv: &mut KeyValue, mut buf: &[u8], depth: u32) -> Result<()> {
    // The recycled key is kept until the field arrives, so `string` can find it already holds
    // the same text (most keys: the same attribute at the same place as in the previous
    // request) and skip validating and copying it; emptied at the end if no key was sent.
    kv.key_strindex = 0;
    let mut key_seen = false;
    let mut value_seen = false;
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => {
                string(&mut kv.key, len(wt, &mut buf)?)?;
                key_seen = true;
            }
            2 => {
                let body = len(wt, &mut buf)?;
                once(&mut value_seen)?;
                any_value(
                    kv.value.get_or_insert_with(Default::default),
                    body,
                    deeper(depth)?,
                )?;
            }
            3 => kv.key_strindex = varint_field(wt, &mut buf)? as i32,
            _ => skip(wt, &mut buf)?,
        }
    }
    if !key_seen {
        kv.key.clear();
    }
    if !value_seen {
        kv.value = None;
    }
    Ok(())
}

/// The `value` oneof: the last field sent wins, as in prost. A string (or bytes) value is
/// decoded into the string the slot already holds, in place, rather than moving the oneof out
/// of the slot and back for every value (BENCHMARKS.md, sessions 43 and 44). A second array or
/// key/value list in one value goes to prost (it merges the two).
fn any_value(v: &mut AnyValue, mut buf: &[u8], depth: u32) -> Result<()> {
    let mut seen = false;
    let mut nested_seen = false;
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => {
                let body = len(wt, &mut buf)?;
                match &mut v.value {
                    Some(Value::StringValue(text)) => string(text, body)?,
                    other => {
                        let mut text = String::new();
                        string(&mut text, body)?;
                        *other = Some(Value::StringValue(text));
                    }
                }
            }
            2 => v.value = Some(Value::BoolValue(varint_field(wt, &mut buf)? != 0)),
            3 => v.value = Some(Value::IntValue(varint_field(wt, &mut buf)? as i64)),
            4 => v.value = Some(Value::DoubleValue(f64::from_bits(fixed64(wt, &mut buf)?))),
            5 => {
                let body = len(wt, &mut buf)?;
                once(&mut nested_seen)?;
                let mut array = ArrayValue::default();
                array_value(&mut array, body, deeper(depth)?)?;
                v.value = Some(Value::ArrayValue(array));
            }
            6 => {
                let body = len(wt, &mut buf)?;
                once(&mut nested_seen)?;
                let mut list = KeyValueList::default();
                key_value_list(&mut list, body, deeper(depth)?)?;
                v.value = Some(Value::KvlistValue(list));
            }
            7 => {
                let body = len(wt, &mut buf)?;
                match &mut v.value {
                    Some(Value::BytesValue(data)) => bytes(data, body),
                    other => {
                        let mut data = Vec::new();
                        bytes(&mut data, body);
                        *other = Some(Value::BytesValue(data));
                    }
                }
            }
            8 => {
                v.value = Some(Value::StringValueStrindex(
                    varint_field(wt, &mut buf)? as i32
                ))
            }
            _ => {
                skip(wt, &mut buf)?;
                continue;
            }
        }
        seen = true;
    }
    if !seen {
        // The slot's value from the previous request is not this one's.
        v.value = None;
    }
    Ok(())
}

fn array_value(a: &mut ArrayValue, mut buf: &[u8], depth: u32) -> Result<()> {
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => {
                let body = len(wt, &mut buf)?;
                let mut value = AnyValue::default();
                any_value(&mut value, body, deeper(depth)?)?;
                a.values.push(value);
            }
            _ => skip(wt, &mut buf)?,
        }
    }
    Ok(())
}

fn key_value_list(l: &mut KeyValueList, mut buf: &[u8], depth: u32) -> Result<()> {
    while !buf.is_empty() {
        let (tag, wt) = key(&mut buf)?;
        match tag {
            1 => {
                let body = len(wt, &mut buf)?;
                let mut kv = KeyValue::default();
                key_value(&mut kv, body, deeper(depth)?)?;
                l.values.push(kv);
            }
            _ => skip(wt, &mut buf)?,
        }
    }
    Ok(())
}

/// A UTF-8 string field, replacing `dst` (prost keeps the last of repeated scalar fields).
/// The slot often held the same text already (attribute keys, service and tool names at the
/// same place in the previous request): then it is valid UTF-8 and nothing needs copying.
fn string(dst: &mut String, src: &[u8]) -> Result<()> {
    if dst.len() == src.len() && dst.as_bytes() == src {
        return Ok(());
    }
    // Every string of the request is validated here, content included. simdutf8 validates
    // values of 64 bytes and more with SIMD (it checks the CPU once) and hands shorter ones to
    // the standard library: 2% of the acknowledgement path's instructions saved, all on long
    // values. The short ones (keys, names, ids: 29 a span) are nearly always ASCII, which
    // `is_ascii` checks a word at a time where `from_utf8` walks byte by byte up to an aligned
    // word (BENCHMARKS.md, session 31).
    let text = if src.len() < 64 && src.is_ascii() {
        // SAFETY: every byte is below 0x80, and a sequence of ASCII bytes is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(src) }
    } else {
        simdutf8::basic::from_utf8(src).map_err(|_| Unsupported)?
    };
    if text.len() > dst.capacity() {
        // See `bytes`: a fresh buffer, not a grown one.
        *dst = String::with_capacity(fresh_capacity(text.len()));
    } else {
        dst.clear();
    }
    dst.push_str(text);
    Ok(())
}

/// A bytes field, replacing `dst`. A recycled buffer too small for `src` is replaced, not grown:
/// growing it would `realloc` it, and the allocator, which knows its capacity but not that its
/// contents are dead, copies all of them first (2.7% of the acknowledgement path's
/// instructions: BENCHMARKS.md, session 27).
fn bytes(dst: &mut Vec<u8>, src: &[u8]) {
    if src.len() > dst.capacity() {
        *dst = Vec::with_capacity(fresh_capacity(src.len()));
    } else {
        dst.clear();
    }
    dst.extend_from_slice(src);
}

/// The capacity of a fresh buffer for `len` bytes: the next power of two up to 4 KiB, then an
/// eighth more. A slot sees values of other lengths in later requests (another attribute, a
/// longer id or text); the headroom lets most of them fit without another allocation.
fn fresh_capacity(len: usize) -> usize {
    if len <= 4096 {
        len.next_power_of_two().max(16)
    } else {
        len + len / 8
    }
}

/// A base-128 varint: at most ten bytes, the tenth at most 1 (prost refuses the rest).
#[inline]
fn varint(buf: &mut &[u8]) -> Result<u64> {
    let first = *buf.first().ok_or(Unsupported)?;
    if first < 0x80 {
        *buf = &buf[1..];
        return Ok(u64::from(first));
    }
    // Two bytes: lengths of 128 B to 16 KiB (attribute values, spans, scopes) skip the loop.
    if let Some(&second) = buf.get(1) {
        if second < 0x80 {
            *buf = &buf[2..];
            return Ok(u64::from(first & 0x7f) | (u64::from(second) << 7));
        }
    }
    let mut value = 0u64;
    for i in 0..10 {
        let b = *buf.get(i).ok_or(Unsupported)?;
        if i == 9 && b > 1 {
            return Err(Unsupported);
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *buf = &buf[i + 1..];
            return Ok(value);
        }
    }
    Err(Unsupported)
}

/// A field key: tag and wire type, refused as prost refuses them.
#[inline]
fn key(buf: &mut &[u8]) -> Result<(u32, u8)> {
    let k = varint(buf)?;
    if k > u64::from(u32::MAX) {
        return Err(Unsupported);
    }
    let wt = (k & 7) as u8;
    let tag = (k as u32) >> 3;
    if tag == 0 || wt > I32 {
        return Err(Unsupported);
    }
    Ok((tag, wt))
}

/// A length-delimited field's payload.
#[inline]
fn len<'a>(wt: u8, buf: &mut &'a [u8]) -> Result<&'a [u8]> {
    if wt != LEN {
        return Err(Unsupported);
    }
    let n = varint(buf)?;
    if n > buf.len() as u64 {
        return Err(Unsupported);
    }
    let (payload, rest) = buf.split_at(n as usize);
    *buf = rest;
    Ok(payload)
}

fn varint_field(wt: u8, buf: &mut &[u8]) -> Result<u64> {
    if wt != VARINT {
        return Err(Unsupported);
    }
    varint(buf)
}

fn fixed64(wt: u8, buf: &mut &[u8]) -> Result<u64> {
    if wt != I64 || buf.len() < 8 {
        return Err(Unsupported);
    }
    let (head, rest) = buf.split_at(8);
    *buf = rest;
    Ok(u64::from_le_bytes(
        head.try_into().map_err(|_| Unsupported)?,
    ))
}

fn fixed32(wt: u8, buf: &mut &[u8]) -> Result<u32> {
    if wt != I32 || buf.len() < 4 {
        return Err(Unsupported);
    }
    let (head, rest) = buf.split_at(4);
    *buf = rest;
    Ok(u32::from_le_bytes(
        head.try_into().map_err(|_| Unsupported)?,
    ))
}

/// An unknown field, skipped as prost skips it; groups go to prost.
fn skip(wt: u8, buf: &mut &[u8]) -> Result<()> {
    match wt {
        VARINT => varint(buf).map(|_| ()),
        I64 => fixed64(wt, buf).map(|_| ()),
        LEN => len(wt, buf).map(|_| ()),
        I32 => fixed32(wt, buf).map(|_| ()),
        _ => Err(Unsupported),
    }
}
