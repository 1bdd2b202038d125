//! The agent host: plays a [`Scenario`] as a real MCP client of real server processes, and emits
//! the host's GenAI spans through the SDK.
//!
//! Span shapes (GenAI semconv, like the hosts in the recordings):
//! - session setup first, in its own trace: `tools/list` CLIENT per server;
//! - `invoke_agent {agent}` INTERNAL, the root of the agent run, with children
//!   - `chat {model}` CLIENT per model turn: provider, models, response id, finish reasons, usage,
//!     `gen_ai.conversation.id` and the opt-in `gen_ai.tool.definitions` the model could see;
//!   - `guardrail write-approval` INTERNAL (decision `require_approval`, events
//!     `approval.requested` / `approval.granted`, then decision `allow`);
//!   - `execute_tool {tool}` INTERNAL > `tools/call {tool}` CLIENT (`mcp.method.name`,
//!     `jsonrpc.request.id`, `gen_ai.operation.name=execute_tool`, `gen_ai.tool.name`), the server's SERVER span below it when context
//!     propagates; `resources/read` and `prompts/get {prompt}` CLIENT spans.
//!
//! There is no LLM: the model's choices are the scenario's script (provider `scripted`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use opentelemetry::trace::Status;
use opentelemetry::{Array, StringValue, Value as OtelValue};
use rmcp::model::ProtocolVersion;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequest,
    GetPromptRequestParams, ListToolsRequest, PaginatedRequestParams, ReadResourceRequest,
    ReadResourceRequestParams, RequestMetaObject, ServerResult,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, PeerRequestOptions, RoleClient, RunningService,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};
use tokio::io::AsyncBufReadExt;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::clock::{LogicalClock, META_KEY};
use crate::error::SamplesError;
use crate::propagation;
use crate::scenario::{Revision, Scenario, ServerUse, Step, Transport};
use crate::server::request_id_text;

/// Model name on chat spans (no real LLM is called).
pub const MODEL: &str = "scripted-planner-1";
/// Provider name on GenAI spans.
pub const PROVIDER: &str = "scripted";

/// How to start an MCP server subprocess: `program prefix... --server NAME ...`.
#[derive(Debug, Clone)]
pub struct ServerLauncher {
    pub program: PathBuf,
    pub prefix: Vec<String>,
}

/// What the server subprocess must do besides serving (passed on its command line).
#[derive(Debug, Clone)]
pub struct ChildTelemetry {
    pub endpoint: String,
    /// `(seed, base_unix_nanos)` in deterministic mode.
    pub determinism: Option<(u64, u64)>,
}

struct Connection {
    client: RunningService<RoleClient, ()>,
    /// The HTTP server child (stdio children are owned by the transport).
    http_child: Option<tokio::process::Child>,
    server_name: &'static str,
    network: &'static str,
    /// Host and port of a Streamable HTTP server.
    address: Option<(String, u16)>,
    /// The protocol version the connection runs on, as rmcp negotiated it (`mcp.protocol.version`).
    protocol_version: String,
}

struct ToolEntry {
    conn: usize,
    /// The MCP tool JSON as listed.
    tool: Value,
}

/// One agent run in progress.
pub struct Host<'a> {
    scenario: &'a Scenario,
    dispatch: tracing::Dispatch,
    clock: Option<LogicalClock>,
    conversation_id: String,
    conns: Vec<Connection>,
    /// Model-facing name -> tool.
    tools: BTreeMap<String, ToolEntry>,
    call_seq: u32,
    turn: u32,
}

fn str_array(values: &[&str]) -> OtelValue {
    OtelValue::Array(Array::String(
        values
            .iter()
            .map(|v| StringValue::from(v.to_string()))
            .collect(),
    ))
}

impl<'a> Host<'a> {
    pub fn new(
        scenario: &'a Scenario,
        dispatch: tracing::Dispatch,
        clock: Option<LogicalClock>,
        conversation_id: String,
    ) -> Self {
        Self {
            scenario,
            dispatch,
            clock,
            conversation_id,
            conns: Vec::new(),
            tools: BTreeMap::new(),
            call_seq: 0,
            turn: 0,
        }
    }

    /// A started span (its SDK span begins now, so logical time follows program order).
    fn span(&self, parent: Option<&Span>, name: String, kind: &'static str) -> Span {
        let span = tracing::dispatcher::with_default(&self.dispatch, || match parent {
            Some(p) => {
                tracing::info_span!(target: "samples::host", parent: p, "host", otel.name = %name, otel.kind = kind)
            }
            None => {
                tracing::info_span!(target: "samples::host", parent: None, "host", otel.name = %name, otel.kind = kind)
            }
        });
        let _ = span.context();
        span
    }

    fn set_provider(&self, span: &Span) {
        if self.scenario.host.deprecated_system {
            span.set_attribute("gen_ai.system", PROVIDER);
        } else {
            span.set_attribute("gen_ai.provider.name", PROVIDER);
        }
    }

    /// Starts and connects every server of the scenario.
    pub async fn connect(
        &mut self,
        launcher: &ServerLauncher,
        child: &ChildTelemetry,
        revision: Revision,
    ) -> Result<(), SamplesError> {
        for (i, use_) in self.scenario.servers.iter().enumerate() {
            let conn = connect_one(launcher, child, self.scenario.name, i, use_, revision).await?;
            self.conns.push(conn);
        }
        Ok(())
    }

    fn model_name(&self, mcp_name: &str) -> String {
        match self.scenario.host.namespace {
            Some(ns) => format!("{ns}__{mcp_name}"),
            None => mcp_name.to_string(),
        }
    }

    fn request_meta(&self, span: &Span) -> RequestMetaObject {
        let mut meta = Map::new();
        if self.scenario.host.propagate {
            propagation::inject(&span.context(), &mut meta);
        }
        if let Some(clock) = &self.clock {
            meta.insert(META_KEY.to_string(), json!(clock.now()));
        }
        RequestMetaObject(meta.into())
    }

    fn observe(&self, meta: Option<&rmcp::model::MetaObject>) {
        if let (Some(clock), Some(v)) = (
            &self.clock,
            meta.and_then(|m| m.get(META_KEY)).and_then(Value::as_u64),
        ) {
            clock.observe(v);
        }
    }

    fn client_span(
        &self,
        parent: Option<&Span>,
        conn: usize,
        method: &str,
        target: Option<&str>,
    ) -> Span {
        let name = match target {
            Some(t) => format!("{method} {t}"),
            None => method.to_string(),
        };
        let span = self.span(parent, name, "client");
        let c = &self.conns[conn];
        span.set_attribute("mcp.method.name", method.to_string());
        span.set_attribute("mcp.protocol.version", c.protocol_version.clone());
        span.set_attribute("network.transport", c.network);
        if let Some((host, port)) = &c.address {
            span.set_attribute("server.address", host.clone());
            // The port is drawn by the OS: left out of deterministic files.
            if self.clock.is_none() {
                span.set_attribute("server.port", i64::from(*port));
            }
        }
        span
    }

    async fn send(
        &self,
        conn: usize,
        span: &Span,
        request: ClientRequest,
        method: &str,
    ) -> Result<ServerResult, SamplesError> {
        let c = &self.conns[conn];
        let err = |reason: String| SamplesError::Mcp {
            server: c.server_name.to_string(),
            method: method.to_string(),
            reason,
        };
        let handle = c
            .client
            .peer()
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| err(e.to_string()))?;
        span.set_attribute("jsonrpc.request.id", request_id_text(&handle.id));
        handle
            .await_response()
            .await
            .map_err(|e| err(e.to_string()))
    }

    /// Session setup: `tools/list` on every server, each its own trace.
    pub async fn discover(&mut self) -> Result<(), SamplesError> {
        for conn in 0..self.conns.len() {
            let span = self.client_span(None, conn, "tools/list", None);
            let mut params = PaginatedRequestParams::default();
            params.meta = Some(self.request_meta(&span));
            let result = self
                .send(
                    conn,
                    &span,
                    ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params)),
                    "tools/list",
                )
                .await?;
            let ServerResult::ListToolsResult(list) = result else {
                return Err(SamplesError::Mcp {
                    server: self.conns[conn].server_name.to_string(),
                    method: "tools/list".into(),
                    reason: "unexpected result type".into(),
                });
            };
            self.observe(list.meta.as_ref());
            let listed: Vec<Value> = list
                .tools
                .iter()
                .map(serde_json::to_value)
                .collect::<Result<_, _>>()?;
            // Opt-in content: the contracts the server published (with outputSchema and
            // annotations), so the catalog the host saw is in the trace.
            if self.scenario.host.capture_results {
                span.set_attribute(
                    "gen_ai.tool.definitions",
                    Value::Array(listed.clone()).to_string(),
                );
            }
            drop(span);
            for tool in listed {
                let name = tool
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                self.tools
                    .insert(self.model_name(&name), ToolEntry { conn, tool });
            }
        }
        Ok(())
    }

    /// `gen_ai.tool.definitions` of what the model is shown.
    fn definitions(&self) -> Value {
        let visible = self.scenario.host.visible;
        let defs: Vec<Value> = self
            .tools
            .iter()
            .filter(|(name, _)| visible.is_none_or(|v| v.contains(&name.as_str())))
            .map(|(name, entry)| {
                let mut d = json!({
                    "type": "function",
                    "name": name,
                    "description": entry.tool.get("description").cloned().unwrap_or(Value::Null),
                    "parameters": entry.tool.get("inputSchema").cloned().unwrap_or(json!({})),
                });
                // The host passes the server's contract through: output schema and annotations.
                for key in ["outputSchema", "annotations"] {
                    if let Some(v) = entry.tool.get(key) {
                        d[key] = v.clone();
                    }
                }
                d
            })
            .collect();
        Value::Array(defs)
    }

    /// Plays the script inside one `invoke_agent` span.
    pub async fn run(&mut self) -> Result<(), SamplesError> {
        let agent = self.span(
            None,
            format!("invoke_agent {}", self.scenario.agent),
            "internal",
        );
        agent.set_attribute("gen_ai.operation.name", "invoke_agent");
        agent.set_attribute("gen_ai.agent.name", self.scenario.agent);
        agent.set_attribute("gen_ai.agent.id", format!("agent-{}", self.scenario.agent));
        agent.set_attribute("gen_ai.conversation.id", self.conversation_id.clone());
        agent.set_attribute("gen_ai.request.model", MODEL);
        self.set_provider(&agent);
        if let Some(skill) = self.scenario.host.skill {
            agent.set_attribute("skill.name", skill);
            agent.set_attribute("skill.invocation_source", "user");
        }
        let steps = self.scenario.steps.clone();
        for (i, step) in steps.iter().enumerate() {
            match step {
                Step::Chat => {
                    let calls_next = steps[i + 1..]
                        .iter()
                        .take_while(|s| !matches!(s, Step::Chat))
                        .any(|s| matches!(s, Step::Call { .. }));
                    self.chat(&agent, calls_next);
                }
                Step::Approve { tool, skill } => self.approve(&agent, tool, skill),
                Step::Call { tool, args } => self.execute_tool(&agent, tool, args).await?,
                Step::ReadResource { uri } => self.read_resource(&agent, uri).await?,
                Step::GetPrompt { name, args } => self.get_prompt(&agent, name, args).await?,
            }
        }
        drop(agent);
        Ok(())
    }

    fn chat(&mut self, agent: &Span, calls_tool: bool) {
        self.turn += 1;
        let span = self.span(Some(agent), format!("chat {MODEL}"), "client");
        span.set_attribute("gen_ai.operation.name", "chat");
        self.set_provider(&span);
        span.set_attribute("gen_ai.request.model", MODEL);
        span.set_attribute("gen_ai.response.model", MODEL);
        span.set_attribute(
            "gen_ai.response.id",
            format!("resp-{}-{}", self.conversation_id, self.turn),
        );
        span.set_attribute(
            "gen_ai.response.finish_reasons",
            str_array(&[if calls_tool { "tool_call" } else { "stop" }]),
        );
        span.set_attribute("gen_ai.conversation.id", self.conversation_id.clone());
        span.set_attribute("gen_ai.usage.input_tokens", i64::from(180 + 95 * self.turn));
        span.set_attribute(
            "gen_ai.usage.output_tokens",
            i64::from(if calls_tool { 42 } else { 120 }),
        );
        if let Some(skill) = self.scenario.host.skill {
            span.set_attribute("skill.name", skill);
        }
        span.set_attribute("gen_ai.tool.definitions", self.definitions().to_string());
    }

    fn approve(&self, agent: &Span, tool: &str, skill: &str) {
        // Matched to the call it gates by tool and conversation (like the recorded hosts): a
        // guardrail span is not a GenAI operation, so it carries no gen_ai.tool.call.id.
        for decision in ["require_approval", "allow"] {
            let span = self.span(
                Some(agent),
                "guardrail write-approval".to_string(),
                "internal",
            );
            span.set_attribute("guardrail.name", "write-approval");
            span.set_attribute("guardrail.decision", decision);
            span.set_attribute("skill.name", skill.to_string());
            span.set_attribute("gen_ai.tool.name", tool.to_string());
            span.set_attribute("gen_ai.conversation.id", self.conversation_id.clone());
            if decision == "require_approval" {
                let attrs = |extra: (&'static str, &'static str)| {
                    vec![
                        opentelemetry::KeyValue::new("guardrail.name", "write-approval"),
                        opentelemetry::KeyValue::new("gen_ai.tool.name", tool.to_string()),
                        opentelemetry::KeyValue::new(extra.0, extra.1),
                    ]
                };
                span.add_event("approval.requested", attrs(("approval.channel", "host-ui")));
                span.add_event("approval.granted", attrs(("approval.actor", "end-user")));
            }
        }
    }

    async fn execute_tool(
        &mut self,
        agent: &Span,
        tool: &str,
        args: &Value,
    ) -> Result<(), SamplesError> {
        let Some(entry) = self.tools.get(tool) else {
            return Err(SamplesError::UnknownTool {
                scenario: self.scenario.name.to_string(),
                tool: tool.to_string(),
            });
        };
        let conn = entry.conn;
        let mcp_name = entry
            .tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(tool)
            .to_string();
        let description = entry
            .tool
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.call_seq += 1;
        let call_id = format!("call_{}", self.call_seq);
        let exec = self.span(Some(agent), format!("execute_tool {tool}"), "internal");
        exec.set_attribute("gen_ai.operation.name", "execute_tool");
        exec.set_attribute("gen_ai.tool.name", tool.to_string());
        exec.set_attribute("gen_ai.tool.call.id", call_id);
        exec.set_attribute("gen_ai.tool.type", "function");
        exec.set_attribute("gen_ai.tool.description", description);
        exec.set_attribute("gen_ai.conversation.id", self.conversation_id.clone());
        self.set_provider(&exec);
        if self.scenario.host.capture_arguments {
            exec.set_attribute("gen_ai.tool.call.arguments", args.to_string());
        }

        let client = self.client_span(Some(&exec), conn, "tools/call", Some(&mcp_name));
        client.set_attribute("gen_ai.operation.name", "execute_tool");
        client.set_attribute("gen_ai.tool.name", mcp_name.clone());
        let mut params = CallToolRequestParams::new(mcp_name.clone());
        params.arguments = args.as_object().cloned();
        params.meta = Some(self.request_meta(&client));
        let result = self
            .send(
                conn,
                &client,
                ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                "tools/call",
            )
            .await?;
        let ServerResult::CallToolResult(mut result) = result else {
            return Err(SamplesError::Mcp {
                server: self.conns[conn].server_name.to_string(),
                method: "tools/call".into(),
                reason: "unexpected result type".into(),
            });
        };
        self.observe(result.meta.as_ref());
        drop(client);
        result.meta = None;
        let is_error = result.is_error.unwrap_or(false);
        if self.scenario.host.capture_results {
            exec.set_attribute("gen_ai.tool.call.result", serde_json::to_string(&result)?);
        }
        if is_error && self.scenario.host.flag_tool_errors {
            exec.set_attribute("error.type", "tool_error");
            exec.set_status(Status::error(""));
        }
        Ok(())
    }

    async fn read_resource(&mut self, agent: &Span, uri: &str) -> Result<(), SamplesError> {
        let conn = 0;
        let span = self.client_span(Some(agent), conn, "resources/read", None);
        span.set_attribute("mcp.resource.uri", uri.to_string());
        let mut params = ReadResourceRequestParams::new(uri);
        params.meta = Some(self.request_meta(&span));
        let result = self
            .send(
                conn,
                &span,
                ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params)),
                "resources/read",
            )
            .await?;
        if let ServerResult::ReadResourceResult(r) = &result {
            self.observe(r.meta.as_ref());
        }
        Ok(())
    }

    async fn get_prompt(
        &mut self,
        agent: &Span,
        name: &str,
        args: &Value,
    ) -> Result<(), SamplesError> {
        let conn = 0;
        let span = self.client_span(Some(agent), conn, "prompts/get", Some(name));
        span.set_attribute("gen_ai.prompt.name", name.to_string());
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = args.as_object().cloned();
        params.meta = Some(self.request_meta(&span));
        let result = self
            .send(
                conn,
                &span,
                ClientRequest::GetPromptRequest(GetPromptRequest::new(params)),
                "prompts/get",
            )
            .await?;
        if let ServerResult::GetPromptResult(r) = &result {
            self.observe(r.meta.as_ref());
        }
        Ok(())
    }

    /// Closes every session and waits for the server processes to exit (they flush their spans
    /// on the way out).
    pub async fn close(self) -> Result<(), SamplesError> {
        for conn in self.conns {
            let _ = conn.client.cancel().await;
            if let Some(mut child) = conn.http_child {
                drop(child.stdin.take());
                match tokio::time::timeout(Duration::from_secs(20), child.wait()).await {
                    Ok(_) => {}
                    Err(_) => {
                        let _ = child.kill().await;
                    }
                }
            }
        }
        Ok(())
    }
}

fn child_args(
    child: &ChildTelemetry,
    scenario: &str,
    index: usize,
    use_: &ServerUse,
) -> Vec<String> {
    let mut a = vec![
        "--server".to_string(),
        use_.kind.name().to_string(),
        "--transport".to_string(),
        use_.transport.name().to_string(),
        "--endpoint".to_string(),
        child.endpoint.clone(),
    ];
    for w in use_.variant.to_args() {
        a.push("--variant".to_string());
        a.push(w);
    }
    if let Some((seed, base)) = child.determinism {
        let server_seed =
            crate::ids::seed_from(&format!("{scenario}/{index}/{}", use_.kind.name())) ^ seed;
        a.extend([
            "--seed".to_string(),
            server_seed.to_string(),
            "--base-nanos".to_string(),
            base.to_string(),
        ]);
    }
    a
}

async fn connect_one(
    launcher: &ServerLauncher,
    child: &ChildTelemetry,
    scenario: &str,
    index: usize,
    use_: &ServerUse,
    revision: Revision,
) -> Result<Connection, SamplesError> {
    let name = use_.kind.name();
    let mut cmd = tokio::process::Command::new(&launcher.program);
    cmd.args(&launcher.prefix)
        .args(child_args(child, scenario, index, use_))
        .env("TRIPLINE_LOG", "warn")
        .env("RUST_LOG", "warn")
        .stderr(Stdio::inherit());
    let init_err = |e: String| SamplesError::Mcp {
        server: name.to_string(),
        method: "initialize".into(),
        reason: e,
    };
    match use_.transport {
        Transport::Stdio => {
            let transport = TokioChildProcess::new(cmd)
                .map_err(|e| SamplesError::Spawn(name.to_string(), e))?;
            let client = start(transport, revision)
                .await
                .map_err(|e| init_err(e.to_string()))?;
            Ok(Connection {
                protocol_version: negotiated(&client, revision),
                client,
                http_child: None,
                server_name: use_.kind.service_name(),
                network: use_.transport.network(),
                address: None,
            })
        }
        Transport::Http => {
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .kill_on_drop(true);
            let mut proc = cmd
                .spawn()
                .map_err(|e| SamplesError::Spawn(name.to_string(), e))?;
            let stdout = proc.stdout.take().ok_or_else(|| {
                SamplesError::ServerAddress(name.to_string(), "no stdout pipe".into())
            })?;
            let mut lines = tokio::io::BufReader::new(stdout).lines();
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .map_err(|_| SamplesError::ServerAddress(name.to_string(), "timed out".into()))?
                .map_err(|e| SamplesError::ServerAddress(name.to_string(), e.to_string()))?
                .unwrap_or_default();
            let url = line
                .strip_prefix(crate::serve::LISTENING)
                .map(str::trim)
                .ok_or_else(|| {
                    SamplesError::ServerAddress(
                        name.to_string(),
                        format!("unexpected line {line:?}"),
                    )
                })?
                .to_string();
            let authority = url
                .trim_start_matches("http://")
                .split('/')
                .next()
                .unwrap_or_default();
            let address = authority
                .rsplit_once(':')
                .and_then(|(h, p)| p.parse::<u16>().ok().map(|p| (h.to_string(), p)));
            let transport = StreamableHttpClientTransport::from_uri(url);
            let client = start(transport, revision)
                .await
                .map_err(|e| init_err(e.to_string()))?;
            Ok(Connection {
                protocol_version: negotiated(&client, revision),
                client,
                http_child: Some(proc),
                server_name: use_.kind.service_name(),
                network: use_.transport.network(),
                address,
            })
        }
    }
}

/// Starts the client lifecycle of `revision`: the `initialize` handshake (2025-11-25), or
/// `server/discover` and per-request `_meta` with no session (2026-07-28).
async fn start<T, E, A>(
    transport: T,
    revision: Revision,
) -> Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match revision {
        Revision::Initialize => ().serve(transport).await,
        Revision::Stateless => {
            ().serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
        }
    }
}

/// The protocol version the server answered with (its `initialize` or `server/discover` result);
/// the requested one when rmcp kept no answer (a `Discover` connection only succeeds on it).
fn negotiated(client: &RunningService<RoleClient, ()>, revision: Revision) -> String {
    client
        .peer()
        .peer_info()
        .map(|info| info.protocol_version.to_string())
        .unwrap_or_else(|| revision.version().to_string())
}
