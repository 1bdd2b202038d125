//! The MCP server side: one seed server played by an rmcp `ServerHandler` in its own process,
//! over stdio or Streamable HTTP, with one `SERVER` span per request whose parent is extracted
//! from `params._meta` (when the client sent one).
//!
//! Span shape (semconv MCP): name `{method} {target}`, kind SERVER, `mcp.method.name`,
//! `jsonrpc.request.id`, `mcp.protocol.version`, `network.transport`; for `tools/call` also
//! `gen_ai.operation.name=execute_tool` and `gen_ai.tool.name`, and on an `isError` result
//! `error.type=tool_error` with status ERROR — unless the variant masks errors.

use std::sync::Arc;

use opentelemetry::trace::{Status, TraceContextExt};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListToolsResult, MetaObject, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::ServerHandler;
use serde_json::{json, Map, Value};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::behaviour;
use crate::catalog::{self, ServerKind, ServerVariant};
use crate::clock::{LogicalClock, META_KEY};
use crate::propagation;

/// One seed server.
#[derive(Clone)]
pub struct SeedServer {
    pub kind: ServerKind,
    pub variant: ServerVariant,
    /// `pipe` for stdio, `tcp` for Streamable HTTP (semconv `network.transport`).
    pub network_transport: &'static str,
    pub dispatch: tracing::Dispatch,
    pub clock: Option<LogicalClock>,
    tools: Arc<Vec<Value>>,
}

impl SeedServer {
    pub fn new(
        kind: ServerKind,
        variant: ServerVariant,
        network_transport: &'static str,
        dispatch: tracing::Dispatch,
        clock: Option<LogicalClock>,
    ) -> Self {
        Self {
            kind,
            variant,
            network_transport,
            dispatch,
            clock,
            tools: Arc::new(catalog::tools(kind, variant)),
        }
    }

    /// Opens the SERVER span of one request, parented on the `_meta` trace context if present.
    fn span(
        &self,
        method: &str,
        target: Option<&str>,
        context: &RequestContext<RoleServer>,
        params_meta: Option<&Map<String, Value>>,
    ) -> Span {
        let mut meta: Map<String, Value> = params_meta.cloned().unwrap_or_default();
        for (k, v) in context.meta.iter() {
            meta.insert(k.clone(), v.clone());
        }
        if let (Some(clock), Some(remote)) =
            (&self.clock, meta.get(META_KEY).and_then(Value::as_u64))
        {
            clock.observe(remote);
        }
        let name = match target {
            Some(t) => format!("{method} {t}"),
            None => method.to_string(),
        };
        let span = tracing::dispatcher::with_default(
            &self.dispatch,
            || tracing::info_span!(target: "samples::server", parent: None, "mcp.server", otel.name = %name, otel.kind = "server"),
        );
        let parent = propagation::extract(&meta);
        if parent.span().span_context().is_valid() {
            let _ = span.set_parent(parent);
        }
        span.set_attribute("mcp.method.name", method.to_string());
        span.set_attribute("jsonrpc.request.id", request_id_text(&context.id));
        // The request's own version (2026-07-28 `_meta`), else the `initialize` handshake's.
        if let Some(version) = context.protocol_version() {
            span.set_attribute("mcp.protocol.version", version.to_string());
        }
        span.set_attribute("network.transport", self.network_transport);
        // Start it now, so its logical start tick follows the observed client clock.
        let _ = span.context();
        span
    }

    /// `_meta` for a result: the server's clock after its span ended (deterministic mode only).
    fn result_meta(&self) -> Option<MetaObject> {
        self.clock.as_ref().map(|c| {
            let mut m = MetaObject::new();
            m.insert(META_KEY.to_string(), json!(c.now()));
            m
        })
    }
}

/// JSON-RPC id as text (`3`, or the string id).
pub fn request_id_text(id: &rmcp::model::RequestId) -> String {
    match serde_json::to_value(id) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn meta_map(meta: Option<&rmcp::model::RequestMetaObject>) -> Option<&Map<String, Value>> {
    meta.map(|m| &m.0 .0)
}

fn internal(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

impl ServerHandler for SeedServer {
    fn get_info(&self) -> ServerConfig {
        let caps = if catalog::resource_templates(self.kind).is_empty() {
            ServerCapabilities::builder().enable_tools().build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build()
        };
        ServerConfig::new(caps).with_server_info(Implementation::new(
            self.kind.service_name(),
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = self.span(
            "tools/list",
            None,
            &context,
            request.as_ref().and_then(|r| meta_map(r.meta.as_ref())),
        );
        let mut result: ListToolsResult =
            serde_json::from_value(json!({"tools": self.tools.as_ref()})).map_err(internal)?;
        drop(span);
        result.meta = self.result_meta();
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = self.span(
            "tools/call",
            Some(&request.name),
            &context,
            meta_map(request.meta.as_ref()),
        );
        span.set_attribute("gen_ai.operation.name", "execute_tool");
        span.set_attribute("gen_ai.tool.name", request.name.to_string());
        let args = request.arguments.clone().unwrap_or_default();
        let value = behaviour::call(self.kind, self.variant, &request.name, &args);
        let is_error = value
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if is_error && !self.variant.mask_errors {
            span.set_attribute("error.type", "tool_error");
            span.set_status(Status::error(""));
        }
        let mut result: CallToolResult = serde_json::from_value(value).map_err(internal)?;
        drop(span);
        result.meta = self.result_meta();
        Ok(result.into())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        serde_json::from_value(json!({"resourceTemplates": catalog::resource_templates(self.kind)}))
            .map_err(internal)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let span = self.span(
            "resources/read",
            None,
            &context,
            meta_map(request.meta.as_ref()),
        );
        span.set_attribute("mcp.resource.uri", request.uri.clone());
        let topic = request
            .uri
            .strip_prefix("acme-support://guide/")
            .unwrap_or_default();
        let Some(text) = behaviour::guide(topic) else {
            span.set_attribute("error.type", "jsonrpc.-32002");
            span.set_status(Status::error("resource not found"));
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        };
        let mut result: ReadResourceResult = serde_json::from_value(json!({
            "contents": [{"uri": request.uri, "mimeType": "text/plain", "text": text}]
        }))
        .map_err(internal)?;
        drop(span);
        if let Some(m) = self.result_meta() {
            result.meta = Some(m);
        }
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        serde_json::from_value(json!({"prompts": catalog::prompts(self.kind)})).map_err(internal)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let span = self.span(
            "prompts/get",
            Some(&request.name),
            &context,
            meta_map(request.meta.as_ref()),
        );
        span.set_attribute("gen_ai.prompt.name", request.name.clone());
        let order = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("order_id"))
            .and_then(Value::as_str)
            .unwrap_or("the order")
            .to_string();
        let mut result: GetPromptResult = serde_json::from_value(json!({
            "description": "Summarise an order's facts for a support case.",
            "messages": [{"role": "user", "content": {"type": "text", "text": format!(
                "Summarise the order date, paid amount, shipment status and invoice of {order} for the customer, citing tool results only.")}}]
        }))
        .map_err(internal)?;
        drop(span);
        result.meta = self.result_meta();
        Ok(result.into())
    }
}
