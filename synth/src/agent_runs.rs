//! Agent runs of several tool calls each, over the caller's tool catalogs: the shape of the
//! samples' scale mode (`tripline-samples --spans N`), whose datasets the benchmarks read.
//!
//! One run is the scenario shape played by the samples' real agent hosts:
//!
//! ```text
//! invoke_agent {agent}               INTERNAL  host
//! ├─ chat scripted-planner-1         CLIENT    host   tool definitions (content runs)
//! ├─ guardrail write-approval        INTERNAL  host   write tools: require_approval, then allow
//! ├─ guardrail write-approval        INTERNAL  host
//! ├─ execute_tool {tool}             INTERNAL  host   arguments / result (content runs)
//! │  └─ tools/call {tool}            CLIENT    host
//! │     └─ tools/call {tool}         SERVER    MCP server (remote parent)
//! ├─ … 1 to 4 tool calls, each after a chat turn
//! └─ chat scripted-planner-1         CLIENT    host   finish_reasons stop
//! ```
//!
//! with 3 % of the calls ending in a tool error and 1 % of the server spans in a trace of their
//! own (context lost at the MCP boundary). Ids and the choices come from one chained
//! [`SplitMix64`] stream, so a seed gives the same spans on every machine. That stream and every
//! field are pinned by the samples' test `output_for_a_seed_is_pinned`: the benchmark datasets
//! are compared byte for byte across runs. [`crate::agent_turns`] is the load generator's shape
//! (one tool call a turn, ids unique per worker stream, requests of exactly the asked size); both
//! build their spans with [`crate::span::span`] and the attribute helpers of [`crate::kv`].

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};

use crate::kv::{kv_int, kv_str, kv_strs};
use crate::rng::SplitMix64;

/// A tool of a catalog, as a run calls it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTool {
    pub name: String,
    /// Not read-only: a guardrail asks for approval before each call.
    pub write: bool,
}

/// One agent system: the agent, the service name of its MCP server, the tools it calls and
/// their definitions as the host records them (`gen_ai.tool.definitions`, a JSON list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSystem {
    pub agent: String,
    pub server_service: String,
    pub tools: Vec<RunTool>,
    pub definitions: String,
}

/// Builds export requests of whole agent runs from a seed (see the module docs).
#[derive(Debug, Clone)]
pub struct RunBuilder {
    rng: SplitMix64,
    /// Unix nanoseconds where the next run starts.
    clock: u64,
    run_no: u64,
    /// Distinguishes this builder's conversation ids from another seed's: a conversation id is
    /// unique in real traffic, and benchmark stores stack many seeds (a shared `conv-1` would
    /// join unrelated runs of different seeds, days apart, into one conversation).
    seed: u64,
    systems: Vec<RunSystem>,
    content_share: f64,
    /// `service.version` of the resources and the version of the scopes.
    version: String,
}

impl RunBuilder {
    /// Runs over `systems` from `seed`, the first starting at `start_unix_nanos`;
    /// `content_share` (0..=1) of the runs carry the opt-in content attributes.
    ///
    /// # Panics
    /// When `systems` is empty or a system has no tool: there would be nothing to call.
    pub fn new(
        seed: u64,
        start_unix_nanos: u64,
        content_share: f64,
        systems: Vec<RunSystem>,
        version: impl Into<String>,
    ) -> Self {
        assert!(
            !systems.is_empty() && systems.iter().all(|s| !s.tools.is_empty()),
            "agent runs need at least one system, each with a tool"
        );
        RunBuilder {
            rng: SplitMix64::chained(seed),
            clock: start_unix_nanos,
            run_no: 0,
            seed,
            systems,
            content_share,
            version: version.into(),
        }
    }

    /// One request of one system (picked at random): whole runs, added while it holds fewer
    /// than `up_to` spans (so it ends up to one run above). Returns it with its span count.
    pub fn build(&mut self, up_to: u64) -> (ExportTraceServiceRequest, u64) {
        let sys = &self.systems[self.rng.below(self.systems.len() as u64) as usize];
        let mut batch = Batch {
            host: Vec::new(),
            server: Vec::new(),
            host_service: format!("{}-host", sys.agent),
            server_service: sys.server_service.clone(),
        };
        let mut spans = 0u64;
        while spans < up_to {
            let content = self.rng.chance(self.content_share);
            self.run_no += 1;
            spans += agent_run(
                &mut self.rng,
                sys,
                content,
                &mut self.clock,
                (self.seed, self.run_no),
                &mut batch,
            );
        }
        (request_of(batch, &self.version), spans)
    }
}

/// The spans of one request, by resource.
struct Batch {
    host: Vec<Span>,
    server: Vec<Span>,
    host_service: String,
    server_service: String,
}

fn resource(service: &str, role: &str, version: &str) -> Resource {
    Resource {
        attributes: vec![
            kv_str("service.name", service),
            kv_str("service.version", version),
            kv_str("tripline.samples.role", role),
        ],
        ..Default::default()
    }
}

/// Builds one agent run's spans into `batch`; returns the number of spans added.
fn agent_run(
    rng: &mut SplitMix64,
    sys: &RunSystem,
    content: bool,
    clock: &mut u64,
    (seed, run_no): (u64, u64),
    batch: &mut Batch,
) -> u64 {
    let trace_id = {
        let mut t = rng.next_u64().to_be_bytes().to_vec();
        t.extend_from_slice(&rng.next_u64().to_be_bytes());
        t
    };
    let id = |rng: &mut SplitMix64| rng.next_u64().max(1).to_be_bytes().to_vec();
    let conv = format!("conv-{seed:x}-{run_no:016x}");
    let mut count = 0;
    let root_id = id(rng);
    let root_start = *clock;
    let calls = 1 + rng.below(4);
    let mut children: Vec<Span> = Vec::new();
    let mut server_spans: Vec<Span> = Vec::new();
    for n in 0..=calls {
        let t0 = *clock + 1_000_000;
        let last = n == calls;
        let mut attrs = vec![
            kv_str("gen_ai.operation.name", "chat"),
            kv_str("gen_ai.provider.name", "scripted"),
            kv_str("gen_ai.request.model", "scripted-planner-1"),
            kv_str("gen_ai.response.model", "scripted-planner-1"),
            kv_strs(
                "gen_ai.response.finish_reasons",
                &[if last { "stop" } else { "tool_call" }],
            ),
            kv_str("gen_ai.conversation.id", conv.clone()),
            kv_int("gen_ai.usage.input_tokens", 180 + 95 * n as i64),
            kv_int("gen_ai.usage.output_tokens", 42),
        ];
        if content {
            attrs.push(kv_str("gen_ai.tool.definitions", sys.definitions.clone()));
        }
        let chat_end = t0 + 400_000_000 + rng.below(600_000_000);
        children.push(crate::span::span(
            &trace_id,
            &id(rng),
            &root_id,
            "chat scripted-planner-1",
            SpanKind::Client,
            (t0, chat_end),
            attrs,
        ));
        count += 1;
        *clock = chat_end;
        if last {
            break;
        }
        let tool = &sys.tools[rng.below(sys.tools.len() as u64) as usize];
        let name = tool.name.clone();
        let write = tool.write;
        let call_id = format!("call_{}", n + 1);
        if write {
            for decision in ["require_approval", "allow"] {
                let g0 = *clock + 100_000;
                let g1 = g0
                    + if decision == "allow" {
                        20_000
                    } else {
                        2_000_000_000
                    };
                children.push(crate::span::span(
                    &trace_id,
                    &id(rng),
                    &root_id,
                    "guardrail write-approval",
                    SpanKind::Internal,
                    (g0, g1),
                    vec![
                        kv_str("guardrail.name", "write-approval"),
                        kv_str("guardrail.decision", decision),
                        kv_str("gen_ai.tool.name", name.clone()),
                        kv_str("gen_ai.tool.call.id", call_id.clone()),
                        kv_str("gen_ai.conversation.id", conv.clone()),
                    ],
                ));
                count += 1;
                *clock = g1;
            }
        }
        let is_error = rng.chance(0.03);
        let propagate = !rng.chance(0.01);
        let e0 = *clock + 100_000;
        let c0 = e0 + 50_000;
        let s0 = c0 + 350_000;
        let s1 = s0 + 3_600_000 + rng.below(40_000_000);
        let c1 = s1 + 300_000;
        let e1 = c1 + 200_000;
        let exec_id = id(rng);
        let client_id = id(rng);
        let req_id = (n + 2).to_string();
        let mut exec_attrs = vec![
            kv_str("gen_ai.operation.name", "execute_tool"),
            kv_str("gen_ai.tool.name", name.clone()),
            kv_str("gen_ai.tool.call.id", call_id),
            kv_str("gen_ai.tool.type", "function"),
            kv_str("gen_ai.conversation.id", conv.clone()),
            kv_str("gen_ai.provider.name", "scripted"),
        ];
        if content {
            exec_attrs.push(kv_str(
                "gen_ai.tool.call.arguments",
                "{\"id\":\"SR-20031\"}",
            ));
            exec_attrs.push(kv_str("gen_ai.tool.call.result", if is_error {
                "{\"content\":[{\"type\":\"text\",\"text\":\"not found\"}],\"isError\":true}".to_string()
            } else {
                "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"ok\\\":true}\"}],\"structuredContent\":{\"ok\":true},\"isError\":false}".to_string()
            }));
        }
        let mut exec = crate::span::span(
            &trace_id,
            &exec_id,
            &root_id,
            format!("execute_tool {name}"),
            SpanKind::Internal,
            (e0, e1),
            exec_attrs,
        );
        let client = crate::span::span(
            &trace_id,
            &client_id,
            &exec_id,
            format!("tools/call {name}"),
            SpanKind::Client,
            (c0, c1),
            vec![
                kv_str("mcp.method.name", "tools/call"),
                kv_str("jsonrpc.request.id", req_id.clone()),
                kv_str("gen_ai.tool.name", name.clone()),
                kv_str("network.transport", "pipe"),
            ],
        );
        let mut server_attrs = vec![
            kv_str("mcp.method.name", "tools/call"),
            kv_str("jsonrpc.request.id", req_id),
            kv_str("gen_ai.operation.name", "execute_tool"),
            kv_str("gen_ai.tool.name", name.clone()),
            kv_str("mcp.protocol.version", "2026-07-28"),
            kv_str("network.transport", "pipe"),
        ];
        let mut server_span = if propagate {
            crate::span::span(
                &trace_id,
                &id(rng),
                &client_id,
                format!("tools/call {name}"),
                SpanKind::Server,
                (s0, s1),
                Vec::new(),
            )
        } else {
            let mut orphan_trace = rng.next_u64().to_be_bytes().to_vec();
            orphan_trace.extend_from_slice(&rng.next_u64().to_be_bytes());
            crate::span::span(
                &orphan_trace,
                &id(rng),
                &[],
                format!("tools/call {name}"),
                SpanKind::Server,
                (s0, s1),
                Vec::new(),
            )
        };
        if is_error {
            server_attrs.push(kv_str("error.type", "tool_error"));
            server_span.status = Some(Status {
                code: StatusCode::Error as i32,
                message: String::new(),
            });
            exec.attributes.push(kv_str("error.type", "tool_error"));
            exec.status = Some(Status {
                code: StatusCode::Error as i32,
                message: String::new(),
            });
        }
        server_span.attributes = server_attrs;
        children.push(exec);
        children.push(client);
        server_spans.push(server_span);
        count += 3;
        *clock = e1;
    }
    let root = crate::span::span(
        &trace_id,
        &root_id,
        &[],
        format!("invoke_agent {}", sys.agent),
        SpanKind::Internal,
        (root_start, *clock + 1_000_000),
        vec![
            kv_str("gen_ai.operation.name", "invoke_agent"),
            kv_str("gen_ai.agent.name", sys.agent.as_str()),
            kv_str("gen_ai.conversation.id", conv),
            kv_str("gen_ai.provider.name", "scripted"),
            kv_str("gen_ai.request.model", "scripted-planner-1"),
        ],
    );
    batch.host.push(root);
    batch.host.extend(children);
    batch.server.extend(server_spans);
    *clock += 2_000_000;
    count + 1
}

fn request_of(batch: Batch, version: &str) -> ExportTraceServiceRequest {
    let scope = |name: &str| {
        Some(InstrumentationScope {
            name: name.to_string(),
            version: version.to_string(),
            ..Default::default()
        })
    };
    ExportTraceServiceRequest {
        resource_spans: vec![
            ResourceSpans {
                resource: Some(resource(&batch.host_service, "agent-host", version)),
                scope_spans: vec![ScopeSpans {
                    scope: scope("tripline-samples/agent-host"),
                    spans: batch.host,
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            },
            ResourceSpans {
                resource: Some(resource(&batch.server_service, "mcp-server", version)),
                scope_spans: vec![ScopeSpans {
                    scope: scope("tripline-samples/mcp-server"),
                    spans: batch.server,
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn systems() -> Vec<RunSystem> {
        let tool = |name: &str, write| RunTool {
            name: name.to_string(),
            write,
        };
        vec![
            RunSystem {
                agent: "reader".into(),
                server_service: "read-mcp".into(),
                tools: vec![tool("get_ticket", false)],
                definitions: "[]".into(),
            },
            RunSystem {
                agent: "writer".into(),
                server_service: "write-mcp".into(),
                tools: vec![tool("raise_order", true)],
                definitions: "[]".into(),
            },
        ]
    }

    fn spans(req: &ExportTraceServiceRequest) -> Vec<&Span> {
        req.resource_spans
            .iter()
            .flat_map(|rs| &rs.scope_spans)
            .flat_map(|ss| &ss.spans)
            .collect()
    }

    #[test]
    fn a_request_holds_whole_runs_of_one_system_with_parents_in_it() {
        let mut b = RunBuilder::new(7, 1_000, 0.5, systems(), "1.0.0");
        for _ in 0..20 {
            let (req, n) = b.build(50);
            let all = spans(&req);
            assert_eq!(all.len() as u64, n);
            assert!(n >= 50, "{n}");
            let ids: std::collections::HashSet<&[u8]> =
                all.iter().map(|s| s.span_id.as_slice()).collect();
            let roots = all
                .iter()
                .filter(|s| s.name.starts_with("invoke_agent"))
                .count();
            assert!(roots >= 1);
            for s in &all {
                assert!(s.parent_span_id.is_empty() || ids.contains(s.parent_span_id.as_slice()));
                assert!(s.end_time_unix_nano >= s.start_time_unix_nano);
            }
            // a write tool's call is preceded by require_approval and allow
            let writes = all
                .iter()
                .filter(|s| s.name == "execute_tool raise_order")
                .count();
            let guards = all
                .iter()
                .filter(|s| s.name == "guardrail write-approval")
                .count();
            assert_eq!(guards, 2 * writes);
        }
    }

    /// The `gen_ai.conversation.id` values of `req`'s spans.
    fn conversations(req: &ExportTraceServiceRequest) -> std::collections::BTreeSet<String> {
        spans(req)
            .into_iter()
            .flat_map(|s| &s.attributes)
            .filter(|kv| kv.key == "gen_ai.conversation.id")
            .filter_map(|kv| match kv.value.as_ref()?.value.as_ref()? {
                opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(v) => {
                    Some(v.clone())
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn conversation_ids_are_unique_across_seeds() {
        let (a, _) = RunBuilder::new(7, 1_000, 0.5, systems(), "1.0.0").build(50);
        let (b, _) = RunBuilder::new(8, 1_000, 0.5, systems(), "1.0.0").build(50);
        let (a, b) = (conversations(&a), conversations(&b));
        assert!(!a.is_empty() && !b.is_empty());
        assert!(
            a.is_disjoint(&b),
            "two seeds share conversation ids: {:?}",
            a.intersection(&b).collect::<Vec<_>>()
        );
    }

    #[test]
    #[should_panic(expected = "at least one system")]
    fn no_system_is_refused() {
        RunBuilder::new(1, 0, 0.0, Vec::new(), "1");
    }
}
