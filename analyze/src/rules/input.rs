//! What a rule sees: the trace model, the policy, the MCP tool catalog and tunable options.

use std::collections::BTreeMap;

use super::Coverage;
use crate::model::{Call, Model, ToolDef};
use crate::policy::{Effective, Policy};

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
/// spans) are not in here: they are per model call (see [`Model::preceding_model_call`]).
///
/// Capture completeness: every MCP tool has an `inputSchema`, so a listed tool without one was
/// captured as a summary (names and descriptions only, as Traceloop JS records `tools/list`).
/// Its annotations and outputSchema are *not observable*, not absent: such entries are kept
/// apart in [`Catalog::summarized`] and never read as the tool's definition.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub tools: BTreeMap<String, ToolDef>,
    /// The span whose listing defined each tool (the latest one).
    pub sources: BTreeMap<String, usize>,
    /// Tools seen only in summary captures of a listing (no inputSchema), with the span.
    pub summarized: BTreeMap<String, usize>,
}

impl Catalog {
    pub fn from_model(model: &Model) -> Self {
        let mut tools = BTreeMap::new();
        let mut sources = BTreeMap::new();
        let mut summarized = BTreeMap::new();
        // spans are ordered by start time: later listings overwrite earlier ones.
        for (i, s) in model.spans.iter().enumerate() {
            if s.is_model_call() {
                continue;
            }
            if let Some(defs) = &s.tool_definitions {
                for d in defs {
                    if d.name.is_empty() {
                        continue;
                    }
                    if d.input_schema_digest.is_none() {
                        summarized.insert(d.name.to_string(), i);
                        continue;
                    }
                    tools.insert(d.name.to_string(), d.clone());
                    sources.insert(d.name.to_string(), i);
                }
            }
        }
        summarized.retain(|name, _| !tools.contains_key(name));
        Self {
            tools,
            sources,
            summarized,
        }
    }

    pub fn get(&self, tool: &str) -> Option<&ToolDef> {
        self.tools
            .get(tool)
            .or_else(|| self.tools.get(crate::policy::tool_part(tool)))
    }
}

/// Everything a rule may read.
pub struct RuleInput<'a> {
    pub model: &'a Model,
    pub policy: &'a Policy,
    pub catalog: Catalog,
    pub options: RuleOptions,
}

impl<'a> RuleInput<'a> {
    pub fn new(model: &'a Model, policy: &'a Policy) -> Self {
        Self {
            model,
            policy,
            catalog: Catalog::from_model(model),
            options: RuleOptions::default().with_limits(&policy.limits),
        }
    }

    /// Effective policy of a tool (registry, else observed MCP annotations).
    pub fn effective_policy(&self, tool: &str) -> Option<Effective> {
        self.policy.effective(tool, self.catalog.get(tool))
    }

    /// Tags of a tool from the policy file.
    pub fn has_tag(&self, tool: &str, tag: &str) -> bool {
        self.policy.has_tag(tool, tag)
    }

    /// Tool calls (logical), in start order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &Call> {
        self.model.calls.iter().filter(|c| c.is_tool())
    }
}

/// Tool calls whose effective policy is unknown (no policy entry and no MCP annotations): rules
/// that judge calls by policy skip them and say so in their coverage.
#[derive(Debug, Default)]
pub struct UnknownPolicies<'a> {
    tools: Vec<&'a str>,
    calls: usize,
}

impl<'a> UnknownPolicies<'a> {
    /// The effective policy of `tool`, or `None` after counting the call as not observable.
    pub fn effective(&mut self, input: &RuleInput, tool: &'a str) -> Option<Effective> {
        let eff = input.effective_policy(tool);
        if eff.is_none() {
            self.calls += 1;
            if !self.tools.contains(&tool) {
                self.tools.push(tool);
            }
        }
        eff
    }

    /// Adds the "effective policy unknown" reason to `cov`.
    pub fn report(&self, cov: &mut Coverage) {
        cov.not_observable(
            self.calls,
            format!(
                "no policy entry and no MCP annotations for {} ({} calls): effective policy unknown",
                short_list(self.tools.iter().copied()),
                self.calls
            ),
        );
    }
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
