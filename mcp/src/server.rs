//! The rmcp `ServerHandler`: `tools/list` serves [`crate::tools::TOOLS`], `tools/call` runs one,
//! checks its `structuredContent` against the tool's `outputSchema`, and answers with both and a
//! text block; a failed call is an `isError` result with the message, never a protocol error
//! (only an unknown tool name is, as the MCP specification asks). Each request gets its SERVER
//! span when telemetry is on ([`crate::telemetry`]).
//!
//! Cost bounds: at most [`MAX_CONCURRENT_CALLS`] tool calls run at once (the rest wait their
//! turn), a `query` has a time, memory and response-size limit, a `trace` a span limit, and a
//! client's cancellation stops the call.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    ErrorData, Implementation, InitializeRequestParams, InitializeResult, ListToolsResult,
    PaginatedRequestParams, RequestMetaObject, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::ServerHandler;
use serde_json::{Map, Value};
use tokio::sync::Semaphore;

use crate::error::ToolError;
use crate::telemetry::{RequestFacts, RequestSpan, Telemetry};
use crate::tools::{self, Settings, ToolOutput};

/// Tool calls running at once; the analyzer uses every core for one scan, so more would only
/// multiply memory.
pub const MAX_CONCURRENT_CALLS: usize = 2;

/// tripline as an MCP server over one store.
#[derive(Clone)]
pub struct TriplineServer {
    settings: Arc<Settings>,
    telemetry: Option<Arc<Telemetry>>,
    /// `pipe` (stdio) or `tcp` (Streamable HTTP): semconv `network.transport`.
    transport: &'static str,
    tools: Arc<Vec<Tool>>,
    permits: Arc<Semaphore>,
}

impl TriplineServer {
    pub fn new(
        settings: Settings,
        telemetry: Option<Arc<Telemetry>>,
        transport: &'static str,
    ) -> Result<Self, serde_json::Error> {
        let tools = tools::TOOLS
            .iter()
            .map(tools::definition)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            settings: Arc::new(settings),
            telemetry,
            transport,
            tools: Arc::new(tools),
            permits: Arc::new(Semaphore::new(MAX_CONCURRENT_CALLS)),
        })
    }

    /// The SERVER span of a request (a no-op without telemetry).
    fn span(
        &self,
        method: &str,
        target: Option<&str>,
        context: &RequestContext<RoleServer>,
        params_meta: Option<&RequestMetaObject>,
    ) -> RequestSpan {
        let Some(telemetry) = &self.telemetry else {
            return RequestSpan::default();
        };
        let mut meta: Map<String, Value> = params_meta.map(|m| m.0 .0.clone()).unwrap_or_default();
        for (k, v) in context.meta.iter() {
            meta.insert(k.clone(), v.clone());
        }
        let protocol = context.protocol_version().map(|v| v.to_string());
        let session = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let request_id = request_id_text(&context.id);
        telemetry.request(
            &RequestFacts {
                method,
                target,
                request_id: &request_id,
                transport: self.transport,
                protocol_version: protocol.as_deref(),
                session_id: session.as_deref(),
            },
            &meta,
        )
    }

    /// Runs a tool with the concurrency limit and the client's cancellation, and checks its
    /// output against the tool's schema.
    async fn run_tool(
        &self,
        spec: &'static tools::ToolSpec,
        args: Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ToolOutput, ToolError> {
        let work = async {
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|e| ToolError::Internal(e.to_string()))?;
            tools::call(&self.settings, spec.name, args).await
        };
        let out = tokio::select! {
            r = work => r?,
            () = context.ct.cancelled() => return Err(ToolError::Cancelled),
        };
        crate::validate::validate(&(spec.output)(), &out.structured).map_err(|e| {
            ToolError::Internal(format!(
                "the {} result does not match its outputSchema at {e}",
                spec.name
            ))
        })?;
        Ok(out)
    }
}

/// JSON-RPC id as text (`3`, or the string id).
fn request_id_text(id: &rmcp::model::RequestId) -> String {
    match serde_json::to_value(id) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

impl ServerHandler for TriplineServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tripline", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "tripline reads a span store of AI agents calling MCP tools. Tools: {}. All read only. Start with `check` (findings with their trace_id and span_id), open a finding's trace with `trace`, ask `explain` about its rule, use `report` for per-tool and per-conversation summaries and `query` for anything else (SQL over the table `spans`). Rules: {}.",
                tools::names(),
                crate::engine::rule_catalogue()
            ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let _span = self.span("initialize", None, &context, request.meta.as_ref());
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let _span = self.span("server/discover", None, &context, None);
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let _span = self.span(
            "tools/list",
            None,
            &context,
            request.as_ref().and_then(|r| r.meta.as_ref()),
        );
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut span = self.span(
            "tools/call",
            Some(&request.name),
            &context,
            request.meta.as_ref(),
        );
        let Some(spec) = tools::spec(&request.name) else {
            let message = format!(
                "unknown tool {:?}; the tools are {}",
                request.name,
                tools::names()
            );
            span.rpc_error(-32602, &message);
            return Err(ErrorData::invalid_params(message, None));
        };
        let args = request.arguments.clone().unwrap_or_default();
        let result = match self.run_tool(spec, args, &context).await {
            Ok(out) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(out.text)]);
                r.structured_content = Some(out.structured);
                r
            }
            Err(e) => {
                tracing::info!(tool = spec.name, kind = e.kind(), error = %e, "tool call failed");
                span.tool_error(e.kind());
                CallToolResult::error(vec![ContentBlock::text(e.to_string())])
            }
        };
        drop(span);
        Ok(result.into())
    }
}
