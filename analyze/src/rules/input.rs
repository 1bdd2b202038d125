//! What a rule sees: the trace model, the policy, the MCP tool catalog and tunable options.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

use super::partial::{call_key, Partial};
use super::Coverage;
use crate::model::{Call, Model, SpanId, SpanRow, ToolDef, TraceId, TraceSet};
use crate::policy::{Effective, Policy, PolicySource};

/// Thresholds of rules that have them (TL014 runaway loop and friends).
#[derive(Clone, Debug)]
pub struct RuleOptions {
    /// TL014: more calls of one tool than this in one agent run.
    pub max_calls_per_tool: usize,
    /// TL014: more model turns than this in one agent run.
    pub max_model_turns: usize,
    /// TL008: consecutive errors of one tool that count as a retry loop when arguments were not
    /// captured.
    pub blind_retry_threshold: usize,
}

impl Default for RuleOptions {
    fn default() -> Self {
        Self {
            max_calls_per_tool: super::tl014_runaway_tool_loop::DEFAULT_MAX_CALLS_PER_TOOL,
            max_model_turns: super::tl014_runaway_tool_loop::DEFAULT_MAX_MODEL_TURNS,
            blind_retry_threshold: 3,
        }
    }
}

impl RuleOptions {
    /// Applies the policy file's `[limits]` over these options.
    pub fn with_limits(mut self, limits: &crate::policy::Limits) -> Self {
        if let Some(n) = limits.max_calls_per_tool {
            self.max_calls_per_tool = n;
        }
        if let Some(n) = limits.max_model_turns {
            self.max_model_turns = n;
        }
        self
    }
}

/// Tool definitions the MCP servers published (`tools/list` results seen in any span), latest
/// first-seen wins per name. Definitions shown to a model (`gen_ai.tool.definitions` on chat
/// spans) are not in here: they are per model call (see [`Model::preceding_model_call`]). The one
/// exception: a tool no listing shows whose definition a model was shown *with MCP annotations*
/// (Pydantic AI carries an MCP tool's annotations into the model request) enters with those
/// annotations, its outputSchema unknown (a model is not shown it), and is named in
/// [`Catalog::shown_only`].
///
/// Capture completeness: every MCP tool has an `inputSchema`, so a listed tool without one was
/// captured as a summary (names and descriptions only, as Traceloop JS records `tools/list`).
/// Its annotations and outputSchema are *not observable*, not absent: such entries are kept
/// apart in [`Catalog::summarized`] and never read as the tool's definition.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub tools: BTreeMap<String, ToolDef>,
    /// The span whose listing defined each tool (the latest one).
    pub sources: BTreeMap<String, (TraceId, SpanId)>,
    /// Tools seen only in summary captures of a listing (no inputSchema), with the span.
    pub summarized: BTreeMap<String, (TraceId, SpanId)>,
    /// Tools in `tools` known only from annotated definitions shown to a model.
    pub shown_only: BTreeSet<String>,
}

impl Catalog {
    pub fn from_model(model: &Model) -> Self {
        Self::from_spans(&model.spans)
    }

    /// The catalog of `spans` (ordered by start time, as the model orders them).
    pub fn from_spans(spans: &[SpanRow]) -> Self {
        let mut b = CatalogBuilder::default();
        for s in spans {
            b.add(s);
        }
        b.build()
    }

    pub fn get(&self, tool: &str) -> Option<&ToolDef> {
        self.tools
            .get(tool)
            .or_else(|| self.tools.get(crate::policy::tool_part(tool)))
    }
}

/// What the store's spans say about guardrails, store-wide (TL016 learns from it which tools a
/// guardrail guards, whichever run or window the decision is in). A windowed check reads it in
/// pass 1 (`crate::load::index`), a whole-model check from the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GuardrailFacts {
    /// (`guardrail.name`, `gen_ai.tool.name`) pairs recorded on one span.
    pub decided_on: BTreeSet<(String, String)>,
    /// Whether any span records a guardrail decision (`guardrail.name` or `guardrail.decision`).
    pub any_decision: bool,
}

impl GuardrailFacts {
    /// The facts of `spans`.
    pub fn from_spans(spans: &[SpanRow]) -> Self {
        let mut out = Self::default();
        for s in spans {
            out.add(
                s.guardrail_name.as_deref(),
                s.guardrail_decision.is_some(),
                s.tool_name.as_deref(),
            );
        }
        out
    }

    /// Adds one span's `guardrail.name`, whether it has a `guardrail.decision`, and its tool.
    pub fn add(&mut self, name: Option<&str>, decision: bool, tool: Option<&str>) {
        if name.is_none() && !decision {
            return;
        }
        self.any_decision = true;
        if let (Some(name), Some(tool)) = (name, tool) {
            if !self.decided_on.iter().any(|(n, t)| n == name && t == tool) {
                self.decided_on.insert((name.to_string(), tool.to_string()));
            }
        }
    }
}

/// Where a listing falls in the store's order: (start, trace, span), the model's span order.
type ListingKey = (i64, TraceId, SpanId);

/// Builds a [`Catalog`] from spans in any order, keeping only the latest listing of each tool
/// (latest in the model's span order, as [`Catalog::from_spans`] over ordered spans): pass 1 of a
/// windowed check folds the store's listings batch by batch without holding them.
#[derive(Debug, Default)]
pub struct CatalogBuilder {
    tools: BTreeMap<String, (ListingKey, ToolDef)>,
    summarized: BTreeMap<String, ListingKey>,
    /// Annotated definitions shown to a model (used for tools no listing shows).
    shown: BTreeMap<String, (ListingKey, ToolDef)>,
}

/// Keeps `def` under its name in `map` unless a later listing is there already.
fn keep_latest(map: &mut BTreeMap<String, (ListingKey, ToolDef)>, key: ListingKey, def: &ToolDef) {
    match map.get_mut(&*def.name) {
        Some((k, _)) if *k > key => {}
        Some(slot) => *slot = (key, def.clone()),
        None => {
            map.insert(def.name.to_string(), (key, def.clone()));
        }
    }
}

impl CatalogBuilder {
    /// Adds the tool definitions `s` lists. A model call's or an agent span's definitions are
    /// not the servers' catalog; only those it shows with MCP annotations are kept, apart, for
    /// tools no listing shows.
    pub fn add(&mut self, s: &SpanRow) {
        let Some(defs) = &s.tool_definitions else {
            return;
        };
        let key = (s.start_ns, s.trace_id, s.span_id);
        if s.shows_tools_to_a_model() {
            for d in defs.iter().filter(|d| {
                !d.name.is_empty() && d.is_annotated() && d.input_schema_digest.is_some()
            }) {
                keep_latest(&mut self.shown, key, d);
            }
            return;
        }
        for d in defs.iter() {
            if d.name.is_empty() {
                continue;
            }
            if d.input_schema_digest.is_none() {
                let k = self.summarized.entry(d.name.to_string()).or_insert(key);
                *k = (*k).max(key);
                continue;
            }
            keep_latest(&mut self.tools, key, d);
        }
    }

    /// Folds `other` (built from other spans) in: the result is the builder of both span sets.
    pub fn merge(&mut self, other: CatalogBuilder) {
        for (key, def) in other.tools.into_values() {
            keep_latest(&mut self.tools, key, &def);
        }
        for (key, def) in other.shown.into_values() {
            keep_latest(&mut self.shown, key, &def);
        }
        for (name, key) in other.summarized {
            let k = self.summarized.entry(name).or_insert(key);
            *k = (*k).max(key);
        }
    }

    pub fn build(mut self) -> Catalog {
        let mut shown_only = BTreeSet::new();
        for (name, (key, mut def)) in std::mem::take(&mut self.shown) {
            if self.tools.contains_key(&name) {
                continue;
            }
            // A model is shown the input schema, never the server's outputSchema.
            def.has_output_schema = None;
            def.output_schema_digest = None;
            shown_only.insert(name.clone());
            self.tools.insert(name, (key, def));
        }
        let mut tools = BTreeMap::new();
        let mut sources = BTreeMap::new();
        for (name, ((_, trace, span), def)) in self.tools {
            sources.insert(name.clone(), (trace, span));
            tools.insert(name, def);
        }
        let summarized = self
            .summarized
            .into_iter()
            .filter(|(name, _)| !tools.contains_key(name))
            .map(|(name, (_, trace, span))| (name, (trace, span)))
            .collect();
        Catalog {
            tools,
            sources,
            summarized,
            shown_only,
        }
    }
}

/// Everything a rule may read.
pub struct RuleInput<'a> {
    pub model: &'a Model,
    pub policy: &'a Policy,
    pub catalog: Catalog,
    /// The store's guardrail facts.
    pub guardrails: GuardrailFacts,
    pub options: RuleOptions,
    /// The traces this input judges when the model is one window of a larger store (the rest of
    /// the model is context: the overlap cross-trace joins need); `None`: the whole model.
    pub core: Option<&'a TraceSet>,
    /// Per span of the model, whether its trace is in `core` (rules ask per span, many times:
    /// one lookup each up front).
    owned: Option<Vec<bool>>,
    /// [`unapproved_calls`](Self::unapproved_calls), worked out by the first rule that asks
    /// (TL002 reports them, TL016 leaves them to TL002).
    unapproved: OnceLock<Vec<(&'a Call, PolicySource)>>,
    /// What the policy and the catalog say of each tool asked about ([`ToolFacts`]).
    tools: ToolMemo,
}

/// What the policy file and the catalog say about one tool name.
#[derive(Debug)]
struct ToolFacts {
    effective: Option<Effective>,
    tags: Vec<String>,
}

/// [`ToolFacts`] by tool name, worked out on the first question about a name: rules ask per
/// call, several rules per call, and each answer matched the name against every policy entry
/// (namespaced names are matched by their last part) and looked it up in the catalog. Holds
/// the names one window's model asked about; rules share it across their threads.
#[derive(Debug, Default)]
struct ToolMemo(std::sync::RwLock<HashMap<String, ToolFacts, foldhash::fast::RandomState>>);

impl ToolMemo {
    fn with<R>(
        &self,
        tool: &str,
        policy: &Policy,
        catalog: &Catalog,
        f: impl Fn(&ToolFacts) -> R,
    ) -> R {
        // A poisoned lock only means another rule's thread panicked; the map is still whole.
        if let Some(facts) = self
            .0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(tool)
        {
            return f(facts);
        }
        let facts = ToolFacts {
            effective: policy.effective(tool, catalog.get(tool)),
            tags: policy.tags(tool).into_iter().map(str::to_string).collect(),
        };
        let answer = f(&facts);
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(tool.to_string(), facts);
        answer
    }
}

impl<'a> RuleInput<'a> {
    pub fn new(model: &'a Model, policy: &'a Policy) -> Self {
        Self {
            model,
            policy,
            catalog: Catalog::from_model(model),
            guardrails: GuardrailFacts::from_spans(&model.spans),
            options: RuleOptions::default().with_limits(&policy.limits),
            core: None,
            owned: None,
            unapproved: OnceLock::new(),
            tools: ToolMemo::default(),
        }
    }

    /// Input over one window of a store: `model` holds the window (core and overlap), `catalog`
    /// and `guardrails` are the whole store's, `core` the traces the window judges.
    pub fn window(
        model: &'a Model,
        policy: &'a Policy,
        (catalog, guardrails): (Catalog, GuardrailFacts),
        core: &'a TraceSet,
    ) -> Self {
        Self {
            model,
            policy,
            catalog,
            guardrails,
            options: RuleOptions::default().with_limits(&policy.limits),
            core: Some(core),
            owned: Some(
                model
                    .spans
                    .iter()
                    .map(|s| core.contains(&s.trace_id))
                    .collect(),
            ),
            unapproved: OnceLock::new(),
            tools: ToolMemo::default(),
        }
    }

    /// Whether span `i` of the model is judged here (its trace is in the core).
    pub fn owns(&self, i: usize) -> bool {
        self.owned.as_ref().is_none_or(|o| o[i])
    }

    /// Whether trace `t` is judged here.
    pub fn owns_trace(&self, t: TraceId) -> bool {
        self.core.is_none_or(|c| c.contains(&t))
    }

    /// Effective policy of a tool (registry, else observed MCP annotations).
    pub fn effective_policy(&self, tool: &str) -> Option<Effective> {
        self.tools
            .with(tool, self.policy, &self.catalog, |f| f.effective)
    }

    /// Tags of a tool from the policy file.
    pub fn has_tag(&self, tool: &str, tag: &str) -> bool {
        self.tools.with(tool, self.policy, &self.catalog, |f| {
            f.tags.iter().any(|t| t == tag)
        })
    }

    /// Tool calls (logical), in start order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &'a Call> + use<'a> {
        self.model.calls.iter().filter(|c| c.is_tool())
    }

    /// The calls that required approval, executed, and consumed no approval, in start order,
    /// with where their policy came from ([`crate::rules::tl002_unconfirmed_write`]): worked out
    /// once per input however many rules ask.
    pub(crate) fn unapproved_calls(&self) -> &[(&'a Call, PolicySource)] {
        self.unapproved
            .get_or_init(|| super::tl002_unconfirmed_write::unapproved(self))
    }
}

/// Tool calls whose effective policy is unknown (no policy entry and no MCP annotations): rules
/// that judge calls by policy skip them and say so in their coverage. Tallied in a [`Partial`]
/// (count [`UNKNOWN_CALLS`], list [`UNKNOWN_TOOLS`]) so windows of a store merge.
pub const UNKNOWN_CALLS: &str = "unknown-policy calls";
/// The tools of [`UNKNOWN_CALLS`], in first-seen order.
pub const UNKNOWN_TOOLS: &str = "unknown-policy tools";

/// The effective policy of `call`'s `tool`, or `None` after counting the call as not observable.
pub fn effective_or_count(
    input: &RuleInput,
    partial: &mut Partial,
    call: &Call,
    tool: &str,
) -> Option<Effective> {
    let eff = input.effective_policy(tool);
    if eff.is_none() {
        partial.add(UNKNOWN_CALLS, 1);
        partial.first_seen(UNKNOWN_TOOLS, tool, call_key(input, call));
    }
    eff
}

/// Adds the "effective policy unknown" reason to `cov`.
pub fn report_unknown(partial: &Partial, cov: &mut Coverage) {
    let calls = partial.count(UNKNOWN_CALLS);
    cov.not_observable(
        calls,
        format!(
            "no policy entry and no MCP annotations for {} ({calls} calls): effective policy unknown",
            short_list(partial.list(UNKNOWN_TOOLS)),
        ),
    );
}

/// "a, b and 3 more" — short lists for coverage reasons.
pub fn short_list<'s>(items: impl IntoIterator<Item = &'s str>) -> String {
    let items: Vec<&str> = items.into_iter().collect();
    match items.len() {
        0 => String::new(),
        n if n <= 5 => items.join(", "),
        n => format!("{} and {} more", items[..5].join(", "), n - 5),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::span::Sym;
    use std::path::Path;

    #[test]
    fn remembered_answers_are_the_policys_answers() {
        let policy = Policy::parse(
            r#"
[tools.raise_parts_order]
policy = "requires_approval"
tags = ["spend"]
[tools."crm/export_service_records"]
policy = "prohibited"
tags = ["exfiltration", "private-data"]
"#,
            Path::new("p.toml"),
        )
        .expect("policy");
        let mut catalog = Catalog::default();
        let listed = ToolDef {
            name: Sym::from("lookup"),
            read_only_hint: Some(true),
            ..ToolDef::default()
        };
        catalog.tools.insert("lookup".into(), listed.clone());
        let model = Model::default();
        let input = RuleInput::new(&model, &policy);
        let input = RuleInput { catalog, ..input };
        let names = [
            "raise_parts_order",
            "ops__raise_parts_order",
            "export_service_records",
            "crm/export_service_records",
            "lookup",
            "srv/lookup",
            "unknown",
        ];
        // Asked twice (the second answer comes from the memo), in both orders of question.
        for _ in 0..2 {
            for name in names {
                assert_eq!(
                    input.effective_policy(name),
                    policy.effective(name, input.catalog.get(name)),
                    "{name}"
                );
                for tag in ["spend", "exfiltration", "private-data", "trusted"] {
                    assert_eq!(
                        input.has_tag(name, tag),
                        policy.has_tag(name, tag),
                        "{name} {tag}"
                    );
                }
            }
        }
        assert_eq!(
            input.effective_policy("srv/lookup").map(|e| e.source),
            Some(PolicySource::Annotations)
        );
        assert!(input.has_tag("crm/export_service_records", "exfiltration"));
        assert!(!input.has_tag("raise_parts_order", "exfiltration"));
    }

    /// A span at `start` (also its ids) listing `defs`: (name, description, with an input
    /// schema digest, annotated); `op` is its operation (`chat` shows tools to a model).
    fn listing(start: u8, op: Option<&str>, defs: &[(&str, &str, bool, bool)]) -> SpanRow {
        SpanRow {
            trace_id: TraceId([start; 16]),
            span_id: SpanId([start; 8]),
            start_ns: i64::from(start),
            operation_name: op.map(Sym::from),
            tool_definitions: Some(
                defs.iter()
                    .map(|&(name, description, digest, annotated)| ToolDef {
                        name: Sym::from(name),
                        description: Some(Sym::from(description)),
                        input_schema_digest: digest.then(|| Sym::from("d")),
                        read_only_hint: annotated.then_some(true),
                        ..ToolDef::default()
                    })
                    .collect(),
            ),
            ..SpanRow::default()
        }
    }

    #[test]
    fn builders_of_parts_merge_into_the_builder_of_the_whole() {
        // Later listings redefine tools, one shows a tool only to a model, one lists a tool
        // only in summary (no input schema), and the same span comes twice (re-exported).
        let spans = [
            listing(
                3,
                None,
                &[("a", "a v1", true, false), ("b", "b v1", true, true)],
            ),
            listing(
                5,
                Some("chat"),
                &[("c", "shown", true, true), ("a", "x", true, true)],
            ),
            listing(
                7,
                None,
                &[("a", "a v2", true, false), ("s", "summary", false, false)],
            ),
            listing(
                2,
                None,
                &[("b", "b v0", true, false), ("s", "old", false, false)],
            ),
            listing(9, Some("chat"), &[("c", "shown later", true, true)]),
            listing(
                7,
                None,
                &[("a", "a v2", true, false), ("s", "summary", false, false)],
            ),
        ];
        let whole = format!("{:?}", Catalog::from_spans(&spans));
        assert!(
            whole.contains("a v2") && whole.contains("shown later"),
            "{whole}"
        );
        for cut in 0..=spans.len() {
            for flip in [false, true] {
                let (mut x, mut y) = (CatalogBuilder::default(), CatalogBuilder::default());
                spans[..cut].iter().for_each(|s| x.add(s));
                spans[cut..].iter().for_each(|s| y.add(s));
                if flip {
                    std::mem::swap(&mut x, &mut y);
                }
                x.merge(y);
                assert_eq!(format!("{:?}", x.build()), whole, "cut {cut} flip {flip}");
            }
        }
    }
}
