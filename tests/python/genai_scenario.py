"""An agent calling an MCP tool, traced with the real OpenTelemetry Python SDK.

Two processes are played by two TracerProviders with different `service.name`s: the agent host
(`acme-agent-host`: invoke_agent > chat, guardrail, execute_tool > MCP client span) and the MCP
server (`acme-mcp-server`: the SERVER span of the same `tools/call`). Trace context crosses the
MCP boundary the way SEP-414 says, in `params._meta` (`traceparent` / `tracestate`), injected and
extracted with the W3C propagator, so the server span's parent is a span of the other "process".

Every provider also feeds an in-memory exporter, so a test knows exactly what the SDK recorded
(ids, nanosecond timestamps) and can compare the store against it field by field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

HOST_SERVICE = "acme-agent-host"
SERVER_SERVICE = "acme-mcp-server"
HOST_SCOPE = "tripline.e2e.host"
SERVER_SCOPE = "tripline.e2e.mcp-server"
# The agent run continues a request from an upstream gateway: a remote parent carrying tracestate.
UPSTREAM_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
UPSTREAM_SPAN_ID = "00f067aa0ba902b7"
UPSTREAM_TRACESTATE = "tripline=e2e,acme=7"
CONVERSATION_ID = "conv-e2e-0001"
TOOL = "create_support_case"
TOOL_CALL_ID = "call_7Qx9"
JSONRPC_ID = "7"
MCP_PROTOCOL = "2026-07-28"
MCP_SESSION = "sess-e2e-42"
TOOL_ARGUMENTS = json.dumps({"customer_id": "C-1001", "summary": "compressor overheats"}, sort_keys=True)
TOOL_RESULT = json.dumps(
    {
        "content": [{"type": "text", "text": '{"case_id": "CASE-77"}'}],
        "structuredContent": {"case_id": "CASE-77"},
        "isError": False,
    },
    sort_keys=True,
)
TOOL_DEFINITIONS = json.dumps(
    [
        {
            "type": "function",
            "name": TOOL,
            "description": "Open a support case for a customer",
            "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}}},
        },
        {
            "type": "function",
            "name": "get_ticket",
            "description": "Read one ticket",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        },
    ]
)


class RecordingExporter(SpanExporter):
    """Wraps an OTLP exporter and remembers every export result, so a test can assert that the
    collector acknowledged every batch (BatchSpanProcessor would otherwise swallow failures)."""

    def __init__(self, inner: SpanExporter):
        self.inner = inner
        self.results: list[SpanExportResult] = []
        self.exported = 0

    def export(self, spans):  # type: ignore[override]
        result = self.inner.export(spans)
        self.results.append(result)
        if result is SpanExportResult.SUCCESS:
            self.exported += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


@dataclass
class ScenarioRun:
    spans: list[ReadableSpan]
    exporters: list[RecordingExporter] = field(default_factory=list)

    def by_name(self, name: str) -> ReadableSpan:
        found = [s for s in self.spans if s.name == name]
        assert len(found) == 1, f"expected one span named {name!r}, got {len(found)}"
        return found[0]

    @property
    def all_exports_succeeded(self) -> bool:
        return all(r is SpanExportResult.SUCCESS for e in self.exporters for r in e.results)

    @property
    def exported_spans(self) -> int:
        return sum(e.exported for e in self.exporters)


def _provider(service: str, exporter: SpanExporter | None, memory: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider(
        resource=Resource.create({"service.name": service, "service.version": "e2e-1", "deployment.environment.name": "ci"})
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=512, schedule_delay_millis=60_000))
    return provider


def run_scenario(host_exporter: SpanExporter | None, server_exporter: SpanExporter | None) -> ScenarioRun:
    """Play the scenario once; export through the given exporters (None: memory only)."""
    memory = InMemorySpanExporter()
    recorders = [RecordingExporter(e) for e in (host_exporter, server_exporter) if e is not None]
    host_rec = recorders[0] if host_exporter is not None else None
    server_rec = recorders[-1] if server_exporter is not None else None
    host_provider = _provider(HOST_SERVICE, host_rec, memory)
    server_provider = _provider(SERVER_SERVICE, server_rec, memory)
    host = host_provider.get_tracer(HOST_SCOPE, "1.0.0")
    server = server_provider.get_tracer(SERVER_SCOPE, "2.3.0")
    propagator = TraceContextTextMapPropagator()

    # Session setup happens before the agent run: its own trace, a true root.
    with host.start_as_current_span("MCP send initialize", kind=SpanKind.CLIENT) as init:
        init.set_attribute("mcp.method.name", "initialize")
        init.set_attribute("jsonrpc.request.id", "0")
        init.set_attribute("mcp.session.id", MCP_SESSION)

    upstream = propagator.extract(
        {"traceparent": f"00-{UPSTREAM_TRACE_ID}-{UPSTREAM_SPAN_ID}-01", "tracestate": UPSTREAM_TRACESTATE}
    )
    with host.start_as_current_span("invoke_agent support-assistant", context=upstream, kind=SpanKind.INTERNAL) as agent:
        agent.set_attributes(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.provider.name": "openai",
                "gen_ai.agent.name": "support-assistant",
                "gen_ai.agent.id": "agent-17",
                "gen_ai.conversation.id": CONVERSATION_ID,
                "skill.name": "case-triage",
                "skill.version": "1.2.0",
                "skill.invocation_source": "model",
            }
        )
        with host.start_as_current_span("chat gpt-4.1", kind=SpanKind.CLIENT) as chat:
            chat.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-4.1",
                    "gen_ai.response.model": "gpt-4.1-2026-04-14",
                    "gen_ai.response.id": "chatcmpl-e2e-1",
                    "gen_ai.response.finish_reasons": ["tool_calls"],
                    "gen_ai.usage.input_tokens": 812,
                    "gen_ai.usage.output_tokens": 64,
                    "gen_ai.conversation.id": CONVERSATION_ID,
                    "gen_ai.tool.definitions": TOOL_DEFINITIONS,
                }
            )
            chat.add_event("gen_ai.choice", {"gen_ai.choice.index": 0, "finish_reason": "tool_calls"})
        chat_ctx = chat.get_span_context()

        with host.start_as_current_span("guardrail write-approval", kind=SpanKind.INTERNAL) as guard:
            guard.set_attributes(
                {
                    "guardrail.name": "write-approval",
                    "guardrail.decision": "allow",
                    "gen_ai.tool.name": TOOL,
                    "gen_ai.tool.call.id": TOOL_CALL_ID,
                }
            )
            guard.add_event("approval.granted", {"approver": "ops@example.com", "wait_ms": 1520})
        guard_ctx = guard.get_span_context()

        with host.start_as_current_span(
            f"execute_tool {TOOL}",
            kind=SpanKind.INTERNAL,
            links=[
                Link(chat_ctx, {"link.reason": "requested_by"}),
                Link(guard_ctx, {"link.reason": "approved_by", "approval.round": 1}),
            ],
        ) as tool:
            tool.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": TOOL,
                    "gen_ai.tool.call.id": TOOL_CALL_ID,
                    "gen_ai.tool.type": "function",
                    "gen_ai.tool.call.arguments": TOOL_ARGUMENTS,
                    "gen_ai.tool.call.result": TOOL_RESULT,
                    # not in any typed column: must land in the generic attribute map, typed
                    "acme.retry_count": 2,
                    "acme.score": 0.75,
                    "acme.cached": False,
                    "acme.tags": ["crm", "write"],
                }
            )
            with host.start_as_current_span(f"MCP send tools/call {TOOL}", kind=SpanKind.CLIENT) as client:
                client.set_attributes(
                    {
                        "mcp.method.name": "tools/call",
                        "jsonrpc.request.id": JSONRPC_ID,
                        "gen_ai.tool.name": TOOL,
                        "mcp.session.id": MCP_SESSION,
                        "mcp.protocol.version": MCP_PROTOCOL,
                        "network.transport": "pipe",
                    }
                )
                meta: dict[str, str] = {}
                propagator.inject(meta)  # what goes into params._meta of the JSON-RPC request

                # ---- the MCP server "process": its own provider, context only from _meta ----
                remote = propagator.extract(meta)
                with server.start_as_current_span(f"tools/call {TOOL}", context=remote, kind=SpanKind.SERVER) as srv:
                    srv.set_attributes(
                        {
                            "mcp.method.name": "tools/call",
                            "jsonrpc.request.id": JSONRPC_ID,
                            "mcp.protocol.version": MCP_PROTOCOL,
                            "mcp.session.id": MCP_SESSION,
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": TOOL,
                            "error.type": "tool_error",
                        }
                    )
                    srv.add_event("exception", {"exception.type": "ToolError", "exception.message": "crm timeout"})
                    srv.set_status(Status(StatusCode.ERROR, "crm timeout"))

    for provider in (host_provider, server_provider):
        provider.force_flush(30_000)
        provider.shutdown()
    return ScenarioRun(spans=list(memory.get_finished_spans()), exporters=recorders)


def scenario_spans() -> list[ReadableSpan]:
    """The scenario's spans, recorded in memory only (for building request bodies by hand)."""
    return run_scenario(None, None).spans
