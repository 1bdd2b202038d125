//! Applies the dialect registry to one span: which dialects match, what each typed column gets,
//! and what role each content attribute plays.
//!
//! The static registry is compiled once into lookup tables (attribute name -> mappings), so the
//! per-span cost is one hash lookup per attribute plus the span-name patterns of the dialects that
//! matched.
//!
//! What the registry says about an attribute *name* does not depend on the span ([`KeyFacts`]:
//! the dialects it marks, its mappings, its content role), and a request repeats the same few
//! dozen names on every span. [`KeyCache`] computes those facts once per distinct name of a
//! request, so a span costs one hash lookup per attribute instead of three lookups plus the
//! marker and content patterns (measured: BENCHMARKS.md, "Collector cost").

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use foldhash::fast::RandomState;

use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue};

use super::{Condition, ContentRole, Mapping, Source, Transform, DIALECTS};
use crate::lift::{
    coerce_any, coerce_str, in_columns_bit, registry_slot, scalar_text, slot_index, SlotKind,
    SlotValue, N_SLOTS, SLOTS,
};
use crate::schema::col;

/// What the engine needs to see of a span.
pub(crate) struct SpanView<'a> {
    pub scope_name: &'a str,
    pub name: &'a str,
    /// Attributes with unique keys.
    pub attrs: &'a [(&'a str, &'a AnyValue)],
    /// The [`KeyFacts`] of each of `attrs`, in the same order; empty = computed here.
    pub facts: &'a [KeyFacts],
    /// [`DialectEngine::scope_markers`] of `scope_name`; `None` = computed here. The converter
    /// computes it once per scope: every span of a scope shares the answer.
    pub scope_markers: Option<u32>,
}

impl<'a> SpanView<'a> {
    fn get(&self, key: &str) -> Option<&'a AnyValue> {
        self.attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

#[derive(Clone, Copy)]
enum Target {
    Slot(usize),
    ResultIsError,
    /// `result_type` from a constant ([`Transform::Constant`]): what a dialect says of the result
    /// where no content shows it (Pydantic AI's approval deferral is `input_required`).
    ResultType,
}

/// The (dialect, mapping) rank of what each target of one span holds so far: a mapping assigns
/// a target only when it ranks before (the registry's order: canonical dialects first).
struct Precedence {
    slots: [(usize, usize); N_SLOTS],
    result_is_error: (usize, usize),
    result_type: (usize, usize),
}

impl Precedence {
    fn new() -> Self {
        const NONE: (usize, usize) = (usize::MAX, usize::MAX);
        Precedence {
            slots: [NONE; N_SLOTS],
            result_is_error: NONE,
            result_type: NONE,
        }
    }
}

struct CompiledMapping {
    dialect: usize,
    order: usize,
    mapping: &'static Mapping,
    target: Target,
}

struct NameMapping {
    pattern: Vec<Token>,
    m: CompiledMapping,
}

#[derive(Debug, PartialEq)]
enum Token {
    Lit(&'static str),
    Hole(&'static str),
}

/// The compiled registry.
pub(crate) struct DialectEngine {
    /// Attribute name -> index into `mapping_lists`.
    attr_mappings: HashMap<&'static str, usize, RandomState>,
    mapping_lists: Vec<Vec<CompiledMapping>>,
    name_mappings: Vec<NameMapping>,
    marker_exact: HashMap<&'static str, u32, RandomState>,
    marker_patterns: Vec<(&'static str, usize)>,
    scope_prefixes: Vec<(&'static str, usize)>,
    content_exact: HashMap<&'static str, (usize, ContentRole), RandomState>,
    content_patterns: Vec<(&'static str, usize, ContentRole)>,
}

/// What the registry says about one attribute name, whatever span carries it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct KeyFacts {
    /// Dialects whose detection markers (exact or pattern) the name is.
    markers: u32,
    /// Index into `DialectEngine::mapping_lists` of the mappings reading this attribute.
    mappings: Option<usize>,
    /// Its exact content attribute entry.
    content_exact: Option<(usize, ContentRole)>,
    /// Bit i set = `content_patterns[i]` matches the name (the first 64 patterns; any further
    /// ones are matched at lookup).
    content_patterns: u64,
    /// The lifted slot whose registry attribute the name is, and that slot's bit in
    /// `attributes_in_columns`: looked up once per distinct name, not once per attribute.
    in_columns: Option<(u16, u8)>,
}

impl KeyFacts {
    /// The slot whose registry attribute the name is, with its `attributes_in_columns` bit
    /// ([`crate::lift::registry_slot`], [`crate::lift::in_columns_bit`]).
    pub fn in_columns(&self) -> Option<(usize, u32)> {
        self.in_columns
            .map(|(slot, bit)| (usize::from(slot), u32::from(bit)))
    }
}

/// [`KeyFacts`] of the attribute names of one request, computed once per distinct name. Bounded:
/// beyond [`KeyCache::MAX_KEYS`] names, facts are computed without being kept.
pub(crate) struct KeyCache<'k> {
    facts: HashMap<&'k str, KeyFacts, RandomState>,
}

impl Default for KeyCache<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'k> KeyCache<'k> {
    /// Distinct names kept (a request with more still converts, only slower).
    const MAX_KEYS: usize = 4096;

    pub fn new() -> Self {
        KeyCache {
            facts: HashMap::with_capacity_and_hasher(64, RandomState::default()),
        }
    }

    /// The facts of `key`.
    pub fn get(&mut self, engine: &DialectEngine, key: &'k str) -> KeyFacts {
        if let Some(f) = self.facts.get(key) {
            return *f;
        }
        let f = engine.key_facts(key);
        if self.facts.len() < Self::MAX_KEYS {
            self.facts.insert(key, f);
        }
        f
    }
}

/// Per-span result of applying the registry.
pub(crate) struct Outcome<'a> {
    /// Bit i set = `DIALECTS[i]` matched.
    pub matched: u32,
    pub lifted: [Option<SlotValue<'a>>; N_SLOTS],
    pub result_is_error: Option<bool>,
    pub result_type: Option<&'static str>,
}

impl Outcome<'_> {
    pub fn dialect_ids(&self) -> impl Iterator<Item = &'static str> + '_ {
        DIALECTS
            .iter()
            .enumerate()
            .filter(|(i, _)| self.matched & (1 << i) != 0)
            .map(|(_, d)| d.id)
    }
}

impl DialectEngine {
    /// The engine for the static [`DIALECTS`] registry.
    pub fn get() -> &'static DialectEngine {
        static ENGINE: OnceLock<DialectEngine> = OnceLock::new();
        ENGINE.get_or_init(DialectEngine::compile)
    }

    fn compile() -> DialectEngine {
        let mut engine = DialectEngine {
            attr_mappings: HashMap::default(),
            mapping_lists: Vec::new(),
            name_mappings: Vec::new(),
            marker_exact: HashMap::default(),
            marker_patterns: Vec::new(),
            scope_prefixes: Vec::new(),
            content_exact: HashMap::default(),
            content_patterns: Vec::new(),
        };
        debug_assert!(DIALECTS.len() <= 32, "dialect bitmask is a u32");
        for (di, dialect) in DIALECTS.iter().enumerate() {
            for prefix in dialect.detect.scope_prefixes {
                engine.scope_prefixes.push((prefix, di));
            }
            for marker in dialect.detect.markers {
                if is_pattern(marker) {
                    engine.marker_patterns.push((marker, di));
                } else {
                    *engine.marker_exact.entry(marker).or_default() |= 1 << di;
                }
            }
            for (order, mapping) in dialect.mappings.iter().enumerate() {
                let target = if mapping.target == col::RESULT_IS_ERROR {
                    Target::ResultIsError
                } else if mapping.target == col::RESULT_TYPE {
                    Target::ResultType
                } else {
                    match slot_index(mapping.target) {
                        Some(i) => Target::Slot(i),
                        // Registry test guarantees this does not happen; skip rather than panic.
                        None => continue,
                    }
                };
                let m = CompiledMapping {
                    dialect: di,
                    order,
                    mapping,
                    target,
                };
                match mapping.source {
                    Source::Attr(name) => {
                        let next = engine.mapping_lists.len();
                        let index = *engine.attr_mappings.entry(name).or_insert(next);
                        if index == next {
                            engine.mapping_lists.push(Vec::new());
                        }
                        engine.mapping_lists[index].push(m);
                    }
                    Source::SpanName(p) => engine.name_mappings.push(NameMapping {
                        pattern: tokenize(p),
                        m,
                    }),
                }
            }
            for c in dialect.content {
                if is_pattern(c.attr) {
                    engine.content_patterns.push((c.attr, di, c.role));
                } else {
                    engine.content_exact.entry(c.attr).or_insert((di, c.role));
                }
            }
        }
        engine
    }

    /// What the registry says about the attribute name `key` (see [`KeyCache`]).
    pub fn key_facts(&self, key: &str) -> KeyFacts {
        let mut markers = self.marker_exact.get(key).copied().unwrap_or(0);
        for (pattern, di) in &self.marker_patterns {
            if markers & (1 << di) == 0 && attr_pattern_matches(pattern, key) {
                markers |= 1 << di;
            }
        }
        let mut content_patterns = 0u64;
        for (i, (pattern, _, _)) in self.content_patterns.iter().enumerate().take(64) {
            if attr_pattern_matches(pattern, key) {
                content_patterns |= 1 << i;
            }
        }
        let in_columns = registry_slot(key).and_then(|slot| {
            let bit = in_columns_bit(slot)?;
            Some((u16::try_from(slot).ok()?, u8::try_from(bit).ok()?))
        });
        KeyFacts {
            markers,
            mappings: self.attr_mappings.get(key).copied(),
            content_exact: self.content_exact.get(key).copied(),
            content_patterns,
            in_columns,
        }
    }

    /// The dialects (bit `i`: `DIALECTS[i]`) whose instrumentation scope prefixes `scope_name`
    /// starts with.
    pub fn scope_markers(&self, scope_name: &str) -> u32 {
        let mut matched = 0u32;
        for (prefix, di) in &self.scope_prefixes {
            if scope_name.starts_with(prefix) {
                matched |= 1 << di;
            }
        }
        matched
    }

    /// Applies every matching dialect to the span.
    pub fn apply<'a>(&self, view: &SpanView<'a>) -> Outcome<'a> {
        let computed: Vec<KeyFacts>;
        let facts = if view.facts.len() == view.attrs.len() {
            view.facts
        } else {
            computed = view.attrs.iter().map(|(k, _)| self.key_facts(k)).collect();
            &computed
        };
        let mut matched = view
            .scope_markers
            .unwrap_or_else(|| self.scope_markers(view.scope_name));
        for f in facts {
            matched |= f.markers;
        }

        let mut out = Outcome {
            matched,
            lifted: std::array::from_fn(|_| None),
            result_is_error: None,
            result_type: None,
        };
        let mut prio = Precedence::new();

        for ((_, value), f) in view.attrs.iter().zip(facts) {
            let Some(maps) = f.mappings.map(|i| &self.mapping_lists[i]) else {
                continue;
            };
            for m in maps {
                if matched & (1 << m.dialect) == 0 || !condition_holds(m.mapping.when, view) {
                    continue;
                }
                self.assign(m, &mut out, &mut prio, || mapped_value(value, m));
            }
        }
        for nm in &self.name_mappings {
            if matched & (1 << nm.m.dialect) == 0 || !condition_holds(nm.m.mapping.when, view) {
                continue;
            }
            let Some(captures) = match_name(&nm.pattern, view.name) else {
                continue;
            };
            let m = &nm.m;
            self.assign(m, &mut out, &mut prio, || match m.mapping.transform {
                Transform::Constant(c) | Transform::Correct(c) => Some(Raw::Text(Cow::Borrowed(c))),
                Transform::Capture(hole) => captures
                    .iter()
                    .find(|(h, _)| *h == hole)
                    .map(|(_, text)| Raw::Text(Cow::Borrowed(text))),
                _ => Some(Raw::Text(Cow::Borrowed(view.name))),
            });
        }
        out
    }

    fn assign<'v>(
        &self,
        m: &CompiledMapping,
        out: &mut Outcome<'v>,
        prio: &mut Precedence,
        value: impl FnOnce() -> Option<Raw<'v>>,
    ) {
        // Ranks: a correction before everything, then the registry's order.
        let p = match m.mapping.transform {
            Transform::Correct(_) => (0, 0),
            _ => (m.dialect + 1, m.order),
        };
        match m.target {
            Target::Slot(i) => {
                if p >= prio.slots[i] {
                    return;
                }
                let kind = SLOTS[i].kind;
                if let Some(v) = value().and_then(|raw| raw.coerce(kind)) {
                    out.lifted[i] = Some(v);
                    prio.slots[i] = p;
                }
            }
            Target::ResultIsError => {
                if p >= prio.result_is_error {
                    return;
                }
                if let Some(b) = value().and_then(|raw| raw.as_bool()) {
                    out.result_is_error = Some(b);
                    prio.result_is_error = p;
                }
            }
            Target::ResultType => {
                // Only constants (the registry test holds every such mapping to one): the
                // column's values are the few result types the rules know, never sender text.
                if p >= prio.result_type {
                    return;
                }
                if let Transform::Constant(c) | Transform::Correct(c) = m.mapping.transform {
                    out.result_type = Some(c);
                    prio.result_type = p;
                }
            }
        }
    }

    /// False when `facts` rule out every content entry (no exact entry and no pattern matches
    /// the name), as for most names: [`content_role`](Self::content_role) would be `None` for
    /// any span, so callers skip it.
    #[inline]
    pub fn may_be_content(&self, facts: &KeyFacts) -> bool {
        facts.content_exact.is_some()
            || facts.content_patterns != 0
            || self.content_patterns.len() > 64
    }

    /// The role of a content attribute for a span whose matched dialects are `matched`, if the
    /// attribute is a content attribute of one of them (canonical ones always are).
    pub fn content_role(&self, key: &str, facts: &KeyFacts, matched: u32) -> Option<ContentMatch> {
        if let Some((di, role)) = facts.content_exact {
            if di == 0 || matched & (1 << di) != 0 {
                return Some(ContentMatch {
                    role,
                    dialect: di,
                    prefix: None,
                });
            }
        }
        self.content_patterns
            .iter()
            .enumerate()
            .find(|(i, (p, di, _))| {
                (*di == 0 || matched & (1 << di) != 0)
                    && if *i < 64 {
                        facts.content_patterns & (1 << i) != 0
                    } else {
                        attr_pattern_matches(p, key)
                    }
            })
            .map(|(_, (p, di, role))| ContentMatch {
                role: *role,
                dialect: *di,
                prefix: p.strip_suffix('*').filter(|p| !p.contains('#')),
            })
    }
}

/// How a content attribute was recognised.
pub(crate) struct ContentMatch {
    pub role: ContentRole,
    /// Index of the dialect in `DIALECTS` (precedence).
    pub dialect: usize,
    /// For prefix sources (`mcp.request.argument.*`): the prefix, so the rest of the key names the
    /// argument.
    pub prefix: Option<&'static str>,
}

/// A mapped value before coercion into the column type.
enum Raw<'a> {
    Any(&'a AnyValue),
    Text(Cow<'a, str>),
    Json(serde_json::Value),
}

impl<'a> Raw<'a> {
    fn coerce(self, kind: SlotKind) -> Option<SlotValue<'a>> {
        match self {
            Raw::Any(v) => coerce_any(v, kind),
            Raw::Text(t) => coerce_str(t, kind),
            Raw::Json(serde_json::Value::String(s)) => coerce_str(s, kind),
            Raw::Json(serde_json::Value::Null) => None,
            Raw::Json(serde_json::Value::Array(a)) if kind == SlotKind::StrList => {
                Some(SlotValue::List(
                    a.iter()
                        .map(|v| {
                            Cow::Owned(v.as_str().map_or_else(|| v.to_string(), str::to_string))
                        })
                        .collect(),
                ))
            }
            Raw::Json(other) => coerce_str(other.to_string(), kind),
        }
    }

    fn as_bool(&self) -> Option<bool> {
        match self {
            Raw::Any(v) => match v.value.as_ref()? {
                Value::BoolValue(b) => Some(*b),
                Value::StringValue(s) => s.trim().parse().ok(),
                _ => None,
            },
            Raw::Text(t) => t.trim().parse().ok(),
            Raw::Json(v) => v.as_bool(),
        }
    }
}

/// The attribute exists and its value (as text) is `expected`.
fn attr_equals(view: &SpanView<'_>, name: &str, expected: &str) -> bool {
    match view.get(name).and_then(|v| v.value.as_ref()) {
        // Compared in place: the common case must not copy the string.
        Some(Value::StringValue(s)) => s == expected,
        other => other.and_then(scalar_text).is_some_and(|t| t == expected),
    }
}

fn mapped_value<'a>(value: &'a AnyValue, m: &CompiledMapping) -> Option<Raw<'a>> {
    match m.mapping.transform {
        Transform::Identity | Transform::Capture(_) => Some(Raw::Any(value)),
        Transform::Constant(c) | Transform::Correct(c) => Some(Raw::Text(Cow::Borrowed(c))),
        Transform::HttpHeader => http_header_value(value).map(|h| Raw::Text(Cow::Owned(h))),
        Transform::JsonPointer(pointer) => {
            let Some(Value::StringValue(text)) = value.value.as_ref() else {
                return None;
            };
            let parsed: serde_json::Value = serde_json::from_str(text).ok()?;
            parsed.pointer(pointer).cloned().map(Raw::Json)
        }
    }
}

fn condition_holds(when: Option<Condition>, view: &SpanView<'_>) -> bool {
    match when {
        None => true,
        Some(Condition::AttrEquals(name, expected)) => attr_equals(view, name, expected),
        Some(Condition::AttrNotEquals(name, value)) => !attr_equals(view, name, value),
        Some(Condition::All(all)) => all.iter().all(|c| condition_holds(Some(*c), view)),
        Some(Condition::AttrIsMcpMethod(name)) => {
            match view.get(name).and_then(|v| v.value.as_ref()) {
                Some(Value::StringValue(s)) => crate::mcp_methods::method(s).is_some(),
                _ => false,
            }
        }
        Some(Condition::HttpHeaderEquals(header, expected)) => {
            let dash = format!("http.request.header.{header}");
            let underscore = dash.replace('-', "_");
            view.get(&dash)
                .or_else(|| view.get(&underscore))
                .and_then(http_header_value)
                .is_some_and(|v| v == expected)
        }
        Some(Condition::JsonPointerExists(name, pointer)) => {
            match view.get(name).and_then(|v| v.value.as_ref()) {
                // Parsed only when the pointer's last key occurs in the text: payload attributes
                // such as `input.value` can be large and are on every span of their dialect.
                Some(Value::StringValue(text))
                    if text.contains(pointer.rsplit('/').next().unwrap_or_default()) =>
                {
                    serde_json::from_str::<serde_json::Value>(text)
                        .ok()
                        .is_some_and(|v| v.pointer(pointer).is_some_and(|x| !x.is_null()))
                }
                _ => false,
            }
        }
    }
}

/// A captured HTTP request header's value: the first element of the string array the HTTP
/// conventions record (or a plain string), with MCP's Base64 form (`=?base64?<b64>?=`, used for
/// values that are not plain printable ASCII) decoded. Empty or undecodable values are `None`.
fn http_header_value(value: &AnyValue) -> Option<String> {
    let text = match value.value.as_ref()? {
        Value::ArrayValue(a) => match a.values.first()?.value.as_ref()? {
            Value::StringValue(s) => s.as_str(),
            _ => return None,
        },
        Value::StringValue(s) => s.as_str(),
        _ => return None,
    };
    let text = text.trim();
    if let Some(b64) = text
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
        return String::from_utf8(bytes).ok().filter(|s| !s.is_empty());
    }
    (!text.is_empty()).then(|| text.to_string())
}

fn is_pattern(p: &str) -> bool {
    p.ends_with('*') || p.contains('#')
}

/// `#` matches one or more ASCII digits, a trailing `*` matches any (non-empty) rest, every other
/// character matches itself.
pub(crate) fn attr_pattern_matches(pattern: &str, key: &str) -> bool {
    let p = pattern.as_bytes();
    let k = key.as_bytes();
    let (mut pi, mut ki) = (0, 0);
    while pi < p.len() {
        match p[pi] {
            b'*' if pi == p.len() - 1 => return ki < k.len(),
            b'#' => {
                let start = ki;
                while ki < k.len() && k[ki].is_ascii_digit() {
                    ki += 1;
                }
                if ki == start {
                    return false;
                }
            }
            c => {
                if ki >= k.len() || k[ki] != c {
                    return false;
                }
                ki += 1;
            }
        }
        pi += 1;
    }
    ki == k.len()
}

fn tokenize(pattern: &'static str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut rest = pattern;
    while !rest.is_empty() {
        match rest.find('{') {
            Some(0) => match rest.find('}') {
                Some(end) => {
                    tokens.push(Token::Hole(&rest[1..end]));
                    rest = &rest[end + 1..];
                }
                None => {
                    tokens.push(Token::Lit(rest));
                    rest = "";
                }
            },
            Some(i) => {
                tokens.push(Token::Lit(&rest[..i]));
                rest = &rest[i..];
            }
            None => {
                tokens.push(Token::Lit(rest));
                rest = "";
            }
        }
    }
    tokens
}

/// Matches a whole span name; returns the placeholders' captures. Placeholders match one or more
/// non-whitespace characters (backtracking, so `{tool}.tool` matches `a.b.tool` with `a.b`).
fn match_name<'n>(tokens: &[Token], name: &'n str) -> Option<Vec<(&'static str, &'n str)>> {
    let mut captures = Vec::new();
    if match_from(tokens, name, &mut captures) {
        Some(captures)
    } else {
        None
    }
}

fn match_from<'n>(
    tokens: &[Token],
    rest: &'n str,
    caps: &mut Vec<(&'static str, &'n str)>,
) -> bool {
    match tokens.first() {
        None => rest.is_empty(),
        Some(Token::Lit(lit)) => rest
            .strip_prefix(lit)
            .is_some_and(|r| match_from(&tokens[1..], r, caps)),
        Some(Token::Hole(hole)) => {
            let max = rest.find(char::is_whitespace).unwrap_or(rest.len());
            // Longest first, so a trailing literal anchors at the end.
            let mut ends: Vec<usize> = rest[..max]
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .collect();
            ends.reverse();
            for end in ends {
                caps.push((hole, &rest[..end]));
                if match_from(&tokens[1..], &rest[end..], caps) {
                    return true;
                }
                caps.pop();
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_name_patterns() {
        let t = tokenize("{tool}.tool");
        assert_eq!(
            match_name(&t, "get_ticket.tool"),
            Some(vec![("tool", "get_ticket")])
        );
        assert_eq!(match_name(&t, "a.b.tool"), Some(vec![("tool", "a.b")]));
        assert_eq!(match_name(&t, ".tool"), None);
        assert_eq!(match_name(&t, "get_ticket.mcp"), None);
        let t = tokenize("MCP send {method} {name}");
        assert_eq!(
            match_name(&t, "MCP send tools/call get_ticket"),
            Some(vec![("method", "tools/call"), ("name", "get_ticket")])
        );
        assert_eq!(match_name(&t, "MCP send tools/list"), None);
        let t = tokenize("MCP send {method}");
        assert_eq!(
            match_name(&t, "MCP send tools/list"),
            Some(vec![("method", "tools/list")])
        );
        assert_eq!(match_name(&t, "MCP send tools/call x"), None);
    }

    #[test]
    fn attribute_patterns() {
        assert!(attr_pattern_matches(
            "gen_ai.prompt.#*",
            "gen_ai.prompt.0.content"
        ));
        assert!(attr_pattern_matches(
            "gen_ai.prompt.#*",
            "gen_ai.prompt.12.role"
        ));
        assert!(!attr_pattern_matches(
            "gen_ai.prompt.#*",
            "gen_ai.prompt.name"
        ));
        assert!(attr_pattern_matches("traceloop.*", "traceloop.entity.name"));
        assert!(!attr_pattern_matches("traceloop.*", "traceloop."));
        assert!(attr_pattern_matches("gen_ai.prompt", "gen_ai.prompt"));
        assert!(!attr_pattern_matches("gen_ai.prompt", "gen_ai.prompts"));
    }
}
