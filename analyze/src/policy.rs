//! The host's tool registry (`--policy tripline.toml`) and the effective policy of a tool.
//!
//! The registry is what runs; MCP annotations are hints. So a tool's effective policy is the
//! registry's entry when there is one, else the class its observed annotations imply with MCP's
//! pessimistic defaults (`readOnlyHint=false`, `destructiveHint=true`): read-only -> automatic,
//! write and not destructive -> requires_approval, destructive or unannotated -> prohibited.
//! A tool with neither an entry nor an observed MCP definition has no effective policy: rules
//! that need one report it as not observable rather than guess.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::model::ToolDef;

/// The policy classes (see samples/policy.toml for an annotated example).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyClass {
    Automatic,
    RequiresApproval,
    Prohibited,
}

impl fmt::Display for PolicyClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Automatic => "automatic",
            Self::RequiresApproval => "requires_approval",
            Self::Prohibited => "prohibited",
        })
    }
}

/// Where an effective policy came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicySource {
    /// The registry (policy file) entry.
    Registry,
    /// The tool's MCP annotations.
    Annotations,
    /// The tool was listed without annotations: MCP's pessimistic defaults.
    Defaults,
}

/// A tool's effective policy and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effective {
    pub class: PolicyClass,
    pub source: PolicySource,
}

/// One `[tools.<key>]` entry.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolEntry {
    pub policy: Option<PolicyClass>,
    #[serde(default)]
    pub tags: Vec<String>,
}

/// One `[agents.<name>]` entry.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentEntry {
    pub allow: Option<Vec<String>>,
}

/// One `[scopes.<name>]` entry: a task-scoped catalog.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeEntry {
    #[serde(default)]
    pub tools: Vec<String>,
}

/// `[limits]`: rule thresholds (unset = the documented defaults of `rules::RuleOptions`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// TL014: more calls of one tool than this in one agent run (default: TL014's
    /// `DEFAULT_MAX_CALLS_PER_TOOL`).
    pub max_calls_per_tool: Option<usize>,
    /// TL014: more model turns than this in one agent run (default: TL014's
    /// `DEFAULT_MAX_MODEL_TURNS`).
    pub max_model_turns: Option<usize>,
}

/// One `[guardrails.<name>]` entry: a guardrail the host runs before the tools it guards, so an
/// agent run that called one of them without a decision of this guardrail shows it was skipped
/// (TL016). The name is the spans' `guardrail.name`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardrailEntry {
    /// Tool keys (bare, `server/tool` or `namespace__tool`, like `[tools.<key>]`).
    #[serde(default)]
    pub guards: Vec<String>,
}

/// The parsed policy file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(default)]
    pub tools: BTreeMap<String, ToolEntry>,
    #[serde(default)]
    pub agents: BTreeMap<String, AgentEntry>,
    #[serde(default)]
    pub scopes: BTreeMap<String, ScopeEntry>,
    /// `[guardrails.<name>]`: guardrails and the tools each guards (TL016).
    #[serde(default)]
    pub guardrails: BTreeMap<String, GuardrailEntry>,
    /// `[limits]`: thresholds of rules that have them (TL014).
    #[serde(default)]
    pub limits: Limits,
    /// Where it was read from (None: no policy file).
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

/// Reading the policy file failed.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read policy file {path}: {cause}; check the --policy path")]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}; see `tripline explain TL002` for the policy file format")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

impl Policy {
    /// Reads and parses a policy file.
    pub fn load(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|cause| PolicyError::Read {
            path: path.to_path_buf(),
            cause,
        })?;
        Self::parse(&text, path)
    }

    /// Parses policy TOML; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, PolicyError> {
        let mut policy: Policy = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
            PolicyError::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().trim().to_string(),
            }
        })?;
        policy.path = Some(path.to_path_buf());
        Ok(policy)
    }

    /// True when no policy file was given.
    pub fn is_empty(&self) -> bool {
        self.path.is_none() && self.tools.is_empty()
    }

    /// The registry entries that apply to an observed tool name: an exact key first, else every
    /// entry whose tool part (after `server/` or `namespace__`) equals the name's tool part.
    pub fn entries_for(&self, tool: &str) -> Vec<&ToolEntry> {
        if let Some(e) = self.tools.get(tool) {
            return vec![e];
        }
        let part = tool_part(tool);
        self.tools
            .iter()
            .filter(|(k, _)| tool_part(k) == part)
            .map(|(_, e)| e)
            .collect()
    }

    /// The registry's class for a tool (most restrictive when several entries apply).
    pub fn registry_class(&self, tool: &str) -> Option<PolicyClass> {
        self.entries_for(tool)
            .into_iter()
            .filter_map(|e| e.policy)
            .max()
    }

    /// The tags of a tool (union of the applicable entries).
    pub fn tags(&self, tool: &str) -> Vec<&str> {
        let mut tags: Vec<&str> = self
            .entries_for(tool)
            .into_iter()
            .flat_map(|e| e.tags.iter().map(String::as_str))
            .collect();
        tags.sort_unstable();
        tags.dedup();
        tags
    }

    pub fn has_tag(&self, tool: &str, tag: &str) -> bool {
        self.tags(tool).contains(&tag)
    }

    /// Effective policy of a tool: registry, else annotations of its MCP definition, else none.
    pub fn effective(&self, tool: &str, definition: Option<&ToolDef>) -> Option<Effective> {
        if let Some(class) = self.registry_class(tool) {
            return Some(Effective {
                class,
                source: PolicySource::Registry,
            });
        }
        definition.map(annotation_class)
    }

    /// The allowlist of an agent, if the policy declares one.
    pub fn agent_allowlist(&self, agent: &str) -> Option<&[String]> {
        self.agents.get(agent).and_then(|a| a.allow.as_deref())
    }
}

/// The class MCP annotations imply, with the spec's pessimistic defaults for missing hints.
pub fn annotation_class(def: &ToolDef) -> Effective {
    let source = if def.is_annotated() {
        PolicySource::Annotations
    } else {
        PolicySource::Defaults
    };
    let class = if def.read_only_hint == Some(true) {
        PolicyClass::Automatic
    } else if def.destructive_hint == Some(false) {
        PolicyClass::RequiresApproval
    } else {
        PolicyClass::Prohibited
    };
    Effective { class, source }
}

/// The tool part of a registry key or observed name: `server/tool` -> `tool`,
/// `namespace__tool` -> `tool`, `tool` -> `tool`.
///
/// Byte by byte: rules ask this of every tool call, and a substring search sets up a searcher
/// per call that costs more than the names it scans (both separators are ASCII, so every cut
/// falls on a character boundary).
pub fn tool_part(name: &str) -> &str {
    let after_slash = name.rfind('/').map_or(name, |i| &name[i + 1..]);
    match after_slash.as_bytes().windows(2).rposition(|w| w == b"__") {
        Some(i) if i + 2 < after_slash.len() => &after_slash[i + 2..],
        _ => after_slash,
    }
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
[tools.raise_parts_order]
policy = "requires_approval"
tags = ["spend"]
[tools."crm/export_service_records"]
policy = "prohibited"
tags = ["exfiltration"]
[tools.fs__get_ticket]
policy = "automatic"
tags = ["private-data"]
[agents.support-assistant]
allow = ["get_order_summary"]
[scopes.CreateSenderReceiverInterface]
tools = ["add_interface", "list_interfaces"]
[guardrails.write-approval]
guards = ["raise_parts_order", "crm/add_timeline_note"]
"#;

    fn sample() -> Policy {
        Policy::parse(SAMPLE, Path::new("p.toml")).unwrap()
    }

    #[test]
    fn resolves_bare_server_and_namespaced_keys() {
        let p = sample();
        assert_eq!(
            p.registry_class("raise_parts_order"),
            Some(PolicyClass::RequiresApproval)
        );
        assert_eq!(
            p.registry_class("export_service_records"),
            Some(PolicyClass::Prohibited)
        );
        assert_eq!(p.registry_class("get_ticket"), Some(PolicyClass::Automatic));
        assert_eq!(
            p.registry_class("crm__raise_parts_order"),
            Some(PolicyClass::RequiresApproval)
        );
        assert_eq!(p.tags("get_ticket"), vec!["private-data"]);
        assert_eq!(p.registry_class("unknown_tool"), None);
        assert_eq!(
            p.agent_allowlist("support-assistant"),
            Some(&["get_order_summary".to_string()][..])
        );
        assert_eq!(p.scopes["CreateSenderReceiverInterface"].tools.len(), 2);
        assert_eq!(
            p.guardrails["write-approval"].guards,
            ["raise_parts_order", "crm/add_timeline_note"]
        );
    }

    #[test]
    fn annotations_map_to_classes_with_pessimistic_defaults() {
        let ro = ToolDef {
            read_only_hint: Some(true),
            ..ToolDef::default()
        };
        let write = ToolDef {
            read_only_hint: Some(false),
            destructive_hint: Some(false),
            ..ToolDef::default()
        };
        let bare = ToolDef::default();
        assert_eq!(annotation_class(&ro).class, PolicyClass::Automatic);
        assert_eq!(
            annotation_class(&write).class,
            PolicyClass::RequiresApproval
        );
        assert_eq!(
            annotation_class(&bare),
            Effective {
                class: PolicyClass::Prohibited,
                source: PolicySource::Defaults
            }
        );
        let p = Policy::default();
        assert_eq!(p.effective("x", None), None);
        assert_eq!(
            p.effective("x", Some(&ro)).map(|e| e.source),
            Some(PolicySource::Annotations)
        );
    }

    #[test]
    fn malformed_policy_reports_line_and_column() {
        let text = "[tools.a]\npolicy = \"sometimes\"\n";
        let e = Policy::parse(text, Path::new("bad.toml")).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("bad.toml:2:10: unknown variant `sometimes`"),
            "{msg}"
        );
        let e =
            Policy::parse("[tools.a]\npolcy = \"automatic\"\n", Path::new("t.toml")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.toml:2:1: unknown field `polcy`"),
            "{e}"
        );
        let e = Policy::parse("[tools.a\n", Path::new("t.toml")).unwrap_err();
        assert!(matches!(e, PolicyError::Parse { line: 1, .. }), "{e}");
    }

    #[test]
    fn tool_part_strips_server_and_namespace() {
        assert_eq!(tool_part("crm/get_ticket"), "get_ticket");
        assert_eq!(tool_part("crm__get_ticket"), "get_ticket");
        assert_eq!(tool_part("get_ticket"), "get_ticket");
        assert_eq!(tool_part("trailing__"), "trailing__");
        assert_eq!(tool_part("a/b/ns__get"), "get");
        assert_eq!(tool_part("ns__x__get"), "get");
        assert_eq!(tool_part("ns___get"), "get");
        assert_eq!(tool_part("crm/"), "");
        assert_eq!(tool_part("é__ü"), "ü");
        assert_eq!(tool_part(""), "");
    }
}
