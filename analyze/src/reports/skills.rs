//! `report skills`: per `skill.name`, where the skill was active and what ran under it: tool
//! calls and tool errors, model calls and guardrail decisions, and the agents that used it.
//!
//! `skill.name` is a custom attribute (no GenAI convention exists) that hosts put either on a
//! span wrapping the skill's work or only as context on the spans the skill constrains (seed
//! 000: guardrail decisions declared on the skill against a tool name). So a span belongs to a
//! skill when it or an ancestor carries the name, and a tool call that does not also belongs to
//! the skill whose guardrail decision named that tool earlier in the same conversation (else
//! agent run, else trace). Activity is counted per conversation, not per span, because a context
//! attribute repeated on sibling spans is not a new invocation.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{skill_of, Owned, Report};
use crate::model::{Call, Model, Scope, SpanId, TraceId};

/// One row of `report skills`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkillRow {
    pub skill: String,
    /// Distinct conversations (else agent runs, else traces) the skill was active in.
    pub conversations: usize,
    pub agents: Vec<String>,
    pub tool_calls: usize,
    pub tool_errors: usize,
    pub model_calls: usize,
    pub guardrail_decisions: usize,
}

#[derive(Default)]
struct Acc {
    /// Where the skill was active, by store-wide identity (16 to 40 bytes each, plus a
    /// conversation id's length): a conversation's spans can be owned by two windows (a stitched
    /// server trace inherits its host's conversation), so they are counted distinct at the end.
    scopes: BTreeSet<ScopeKey>,
    agents: BTreeSet<String>,
    tool_calls: usize,
    tool_errors: usize,
    model_calls: usize,
    guardrails: usize,
}

/// [`Scope`] with the agent run named by its span's ids, not its index in one model.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum ScopeKey {
    Conversation(String),
    AgentRun(TraceId, SpanId),
    Trace(TraceId),
}

fn scope_key(model: &Model, scope: Scope) -> ScopeKey {
    match scope {
        Scope::Conversation(c) => ScopeKey::Conversation(c.to_string()),
        Scope::AgentRun(r) => ScopeKey::AgentRun(model.spans[r].trace_id, model.spans[r].span_id),
        Scope::Trace(t) => ScopeKey::Trace(t),
    }
}

/// The report's tallies over the spans and calls counted so far (one model, or window after
/// window).
#[derive(Default)]
pub struct Totals {
    acc: BTreeMap<String, Acc>,
    by_guardrail: usize,
}

/// Builds the report.
pub fn build(model: &Model) -> Report<SkillRow> {
    let mut t = Totals::default();
    t.add(model, &Owned::all());
    t.finish()
}

impl Totals {
    /// Counts the spans and tool calls (by anchor) of `model` that `owned` selects. A call
    /// attributed by a guardrail decision may be attributed by one `owned` does not select (it
    /// is in the same scope, so in the model).
    pub fn add(&mut self, model: &Model, owned: &Owned) {
        // Guardrail decisions of a skill that name a tool: (scope, tool, start, skill).
        let mut constraints: Vec<(Scope, &str, i64, &str)> = Vec::new();
        for (i, s) in model.spans.iter().enumerate() {
            let Some(skill) = skill_of(model, i) else {
                continue;
            };
            if s.guardrail_decision.is_some() {
                if let Some(tool) = s.tool_name.as_deref() {
                    constraints.push((model.span_scope(i), tool, s.start_ns, skill));
                }
            }
            if !owned.span(i) {
                continue;
            }
            let a = entry(&mut self.acc, skill);
            a.scopes.insert(scope_key(model, model.span_scope(i)));
            if let Some(agent) =
                model.agent_run[i].and_then(|r| model.spans[r].agent_name.as_deref())
            {
                if !a.agents.contains(agent) {
                    a.agents.insert(agent.to_string());
                }
            }
            if s.is_model_call() {
                a.model_calls += 1;
            }
            if s.guardrail_decision.is_some() {
                a.guardrails += 1;
            }
        }
        for call in model.calls.iter().filter(|c| c.is_tool()) {
            if !owned.span(call.anchor) {
                continue;
            }
            let (skill, via_guardrail) = match call_skill(model, call) {
                Some(s) => (Some(s), false),
                None => (guardrail_skill(model, call, &constraints), true),
            };
            // The skill's row exists in the whole store (the span that named it makes it),
            // if perhaps not yet in the windows read so far.
            let Some(a) = skill.map(|s| entry(&mut self.acc, s)) else {
                continue;
            };
            a.tool_calls += 1;
            if call.is_error == Some(true) {
                a.tool_errors += 1;
            }
            if via_guardrail {
                self.by_guardrail += 1;
            }
        }
    }

    /// The rows, by skill, and the notes.
    pub fn finish(self) -> Report<SkillRow> {
        let rows = self
            .acc
            .into_iter()
            .map(|(skill, a)| SkillRow {
                skill,
                conversations: a.scopes.len(),
                agents: a.agents.into_iter().collect(),
                tool_calls: a.tool_calls,
                tool_errors: a.tool_errors,
                model_calls: a.model_calls,
                guardrail_decisions: a.guardrails,
            })
            .collect();
        let mut notes = Vec::new();
        if self.by_guardrail > 0 {
            notes.push(format!(
                "{} tool calls carry no skill.name and were attributed by an earlier guardrail decision of the skill naming the tool",
                self.by_guardrail
            ));
        }
        Report { rows, notes }
    }
}

/// The row of skill `name`, made on first sight.
fn entry<'a>(acc: &'a mut BTreeMap<String, Acc>, name: &str) -> &'a mut Acc {
    if !acc.contains_key(name) {
        acc.insert(name.to_string(), Acc::default());
    }
    acc.get_mut(name).expect("inserted above")
}

/// The skill on the call's spans or above them.
fn call_skill<'m>(model: &'m Model, call: &Call) -> Option<&'m str> {
    std::iter::once(call.anchor)
        .chain(call.members.iter().copied())
        .find_map(|m| skill_of(model, m))
}

/// The skill of the latest guardrail decision naming the call's tool before it, in its scope.
fn guardrail_skill<'a>(
    model: &Model,
    call: &Call,
    constraints: &[(Scope, &str, i64, &'a str)],
) -> Option<&'a str> {
    let tool = call.tool.as_deref()?;
    let scope = model.call_scope(call);
    let start = model.spans[call.anchor].start_ns;
    constraints
        .iter()
        .filter(|(sc, t, at, _)| *sc == scope && *t == tool && *at <= start)
        .max_by_key(|(_, _, at, _)| *at)
        .map(|(_, _, _, skill)| *skill)
}
