//! Approvals recorded in spans: a fact of the model, read by TL002 and by the tools and guardrail
//! reports. An approval is a guardrail decision `require_approval` followed by `allow` for the same
//! tool (or tool call id) in the same scope, or an MCP `input_required` round of the same tool that
//! was answered by a later call.

use std::collections::HashMap;

use crate::model::span::Sym;
use crate::model::{Call, Model, Scope};

/// One approval that can cover one later call.
#[derive(Clone, Debug)]
pub struct Approval {
    pub scope: Scope,
    pub tool: Option<Sym>,
    pub tool_call_id: Option<String>,
    /// When the approval was granted (ns): the `allow` decision's start, or the end of the round
    /// that asked for input.
    pub granted_ns: i64,
    /// The spans that record it (require_approval and allow guardrail spans, or the input round).
    pub spans: Vec<usize>,
    pub consumed: bool,
}

/// All approvals of a model, consumable in time order.
#[derive(Clone, Debug, Default)]
pub struct Approvals {
    /// Ordered by grant time.
    pub items: Vec<Approval>,
    /// Indices into `items` per scope, in grant order (so a call only looks at its own scope).
    by_scope: HashMap<Scope, Vec<usize>, foldhash::fast::RandomState>,
}

impl Approvals {
    pub fn collect(model: &Model) -> Self {
        let mut out = Self::default();
        // Pending require_approval decisions per scope: (tool, call id, span).
        type Pending = Vec<(Option<Sym>, Option<String>, usize)>;
        let mut pending: HashMap<Scope, Pending, foldhash::fast::RandomState> = HashMap::default();
        for &i in &model.guardrail_spans {
            let s = &model.spans[i];
            let Some(decision) = s.guardrail_decision.as_deref() else {
                continue;
            };
            let scope = model.span_scope(i);
            match decision {
                "require_approval" => pending.entry(scope).or_default().push((
                    s.tool_name.clone(),
                    s.tool_call_id.clone(),
                    i,
                )),
                "allow" => {
                    let Some(list) = pending.get_mut(&scope) else {
                        continue;
                    };
                    let pos = list
                        .iter()
                        .position(|(tool, id, _)| match (id, &s.tool_call_id) {
                            (Some(a), Some(b)) => a == b,
                            _ => same(tool.as_deref(), s.tool_name.as_deref()),
                        });
                    if let Some(pos) = pos {
                        let (tool, id, req) = list.remove(pos);
                        out.items.push(Approval {
                            scope,
                            tool: tool.or_else(|| s.tool_name.clone()),
                            tool_call_id: id.or_else(|| s.tool_call_id.clone()),
                            granted_ns: s.start_ns,
                            spans: vec![req, i],
                            consumed: false,
                        });
                    }
                }
                _ => {}
            }
        }
        for call in model
            .calls
            .iter()
            .filter(|c| c.is_tool() && c.input_required)
        {
            out.items.push(Approval {
                scope: model.call_scope(call),
                tool: call.tool.clone(),
                tool_call_id: None,
                granted_ns: call.end_ns,
                spans: vec![call.anchor],
                consumed: false,
            });
        }
        out.items.sort_by_key(|a| a.granted_ns);
        for (i, a) in out.items.iter().enumerate() {
            out.by_scope.entry(a.scope.clone()).or_default().push(i);
        }
        out
    }

    /// Finds (and consumes) the approval covering `call`; true when there is one.
    pub fn consume(&mut self, model: &Model, call: &Call) -> bool {
        self.take(model, call).is_some()
    }

    /// Like [`Approvals::consume`], returning the approval's spans.
    pub fn take(&mut self, model: &Model, call: &Call) -> Option<Vec<usize>> {
        let scope = model.call_scope(call);
        let start = model.spans[call.anchor].start_ns;
        let idx = self.by_scope.get(&scope)?.iter().copied().find(|&i| {
            let a = &self.items[i];
            !a.consumed
                && a.granted_ns <= start
                && match (&a.tool_call_id, &call.tool_call_id) {
                    (Some(x), Some(y)) => x == y,
                    _ => a.tool.is_some() && a.tool == call.tool,
                }
        })?;
        let a = &mut self.items[idx];
        a.consumed = true;
        Some(a.spans.clone())
    }
}

fn same(a: Option<&str>, b: Option<&str>) -> bool {
    matches!((a, b), (Some(x), Some(y)) if x == y)
}
