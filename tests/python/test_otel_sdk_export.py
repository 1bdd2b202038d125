"""The OpenTelemetry Python SDK's own OTLP exporters (HTTP and gRPC, plain and gzip) send GenAI /
MCP spans to the real `tripline collect`; DuckDB then reads the store and every value is checked
against what the SDK recorded (captured side by side with an in-memory exporter).

This is the promise users rely on first: point any OTLP exporter at tripline and the facts land in
typed, queryable columns, with ids, parents (also across an MCP process boundary), timestamps,
events, links and tracestate kept exactly.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.trace import SpanKind

import genai_scenario as sc
from collector_process import Collector
from store import attr, attr_keys, query, rows_by_span_id

KIND = {
    SpanKind.INTERNAL: "INTERNAL",
    SpanKind.SERVER: "SERVER",
    SpanKind.CLIENT: "CLIENT",
    SpanKind.PRODUCER: "PRODUCER",
    SpanKind.CONSUMER: "CONSUMER",
}
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def make_exporter(transport: str, collector):
    if transport == "http":
        return HttpExporter(endpoint=collector.traces_url, timeout=10)
    if transport == "http-gzip":
        return HttpExporter(endpoint=collector.traces_url, timeout=10, compression=HttpCompression.Gzip)
    if transport == "grpc":
        return GrpcExporter(endpoint=f"http://{collector.grpc_addr}", insecure=True, timeout=10)
    if transport == "grpc-gzip":
        from grpc import Compression as GrpcCompression

        return GrpcExporter(
            endpoint=f"http://{collector.grpc_addr}", insecure=True, timeout=10, compression=GrpcCompression.Gzip
        )
    raise ValueError(transport)


def hex_trace(span) -> str:
    return span.context.trace_id.to_bytes(16, "big").hex()


def hex_span(ctx) -> str:
    return ctx.span_id.to_bytes(8, "big").hex()


def ts(unix_nano: int) -> datetime:
    return EPOCH + timedelta(microseconds=unix_nano // 1000)


@pytest.fixture(scope="module", params=["http", "http-gzip", "grpc", "grpc-gzip"])
def exported(request, tripline_bin, tmp_path_factory):
    """The scenario exported over one transport into a fresh collector, which is then stopped
    with SIGTERM (the graceful path must flush everything to Parquet). Module-scoped: the checks
    below all read the same store."""
    transport = request.param
    collector = Collector(tripline_bin, tmp_path_factory.mktemp(f"sdk-{transport}") / "data").start()
    try:
        run = sc.run_scenario(make_exporter(transport, collector), make_exporter(transport, collector))
        assert run.all_exports_succeeded, f"an export over {transport} was not acknowledged"
        assert run.exported_spans == len(run.spans) == 7
        assert collector.stop() == 0, "collector must exit 0 on SIGTERM"
    except BaseException:
        collector.kill()
        print(collector.output())
        raise
    return transport, run, collector.data_dir


def test_every_span_lands_once_with_exact_identity_and_timing(exported):
    transport, run, data_dir = exported
    rows = rows_by_span_id(data_dir)
    assert set(rows) == {hex_span(s.context) for s in run.spans}
    for span in run.spans:
        row = rows[hex_span(span.context)]
        assert row["trace_id"].hex() == hex_trace(span)
        assert len(row["span_id"]) == 8 and len(row["trace_id"]) == 16
        want_parent = bytes.fromhex(hex_span(span.parent)) if span.parent else None
        assert row["parent_span_id"] == want_parent, span.name
        assert row["name"] == span.name
        assert row["kind"] == KIND[span.kind]
        assert row["start_time_unix_nano"] == span.start_time
        assert row["end_time_unix_nano"] == span.end_time
        assert row["duration_ns"] == span.end_time - span.start_time
        assert row["start_time"] == ts(span.start_time)
        assert row["end_time"] == ts(span.end_time)
        # hive partitions: UTC date and the hour NOT zero-padded (DuckDB types it as an integer)
        start = ts(span.start_time)
        assert str(row["date"]) == start.strftime("%Y-%m-%d")
        assert isinstance(row["hour"], int) and row["hour"] == start.hour
        assert row["service_version"] == "e2e-1"
        expected_service = sc.SERVER_SERVICE if span.name.startswith("tools/call") else sc.HOST_SERVICE
        assert row["service_name"] == expected_service
        assert row["scope_name"] == span.instrumentation_scope.name
        assert row["scope_version"] == span.instrumentation_scope.version
        # schema 2: the resource's attributes as one JSON object per row, the map left null
        resource = json.loads(row["resource_attributes_json"])
        assert resource["deployment.environment.name"] == {"stringValue": "ci"}
        assert resource["telemetry.sdk.language"] == {"stringValue": "python"}
        assert row["resource_attributes"] is None
        # the Python exporter always sets HAS_IS_REMOTE (0x100), plus IS_REMOTE (0x200) for a remote parent
        remote = bool(span.parent and span.parent.is_remote)
        assert row["flags"] == (0x300 if remote else 0x100), span.name
        assert row["parent_is_remote"] is remote, span.name
        assert row["ingest_source"] == ("otlp-grpc" if transport.startswith("grpc") else "otlp-http")


def test_cross_process_parent_and_tracestate_are_kept(exported):
    _, run, data_dir = exported
    rows = rows_by_span_id(data_dir)
    client = run.by_name(f"MCP send tools/call {sc.TOOL}")
    server = run.by_name(f"tools/call {sc.TOOL}")
    agent = run.by_name("invoke_agent support-assistant")
    init = run.by_name("MCP send initialize")

    server_row = rows[hex_span(server.context)]
    # the server span's parent is the host's client span, carried over in params._meta
    assert server_row["parent_span_id"].hex() == hex_span(client.context)
    assert server_row["trace_id"].hex() == sc.UPSTREAM_TRACE_ID
    assert server_row["parent_is_remote"] is True
    assert server_row["service_name"] == sc.SERVER_SERVICE
    # the agent run continues the upstream gateway's trace: remote parent, tracestate propagated
    agent_row = rows[hex_span(agent.context)]
    assert agent_row["parent_span_id"].hex() == sc.UPSTREAM_SPAN_ID
    for span in run.spans:
        if span is init:
            continue
        assert rows[hex_span(span.context)]["trace_state"] == sc.UPSTREAM_TRACESTATE, span.name
    init_row = rows[hex_span(init.context)]
    assert init_row["parent_span_id"] is None
    assert init_row["trace_state"] in (None, "")  # proto3: an empty tracestate is the absent one
    assert init_row["trace_id"].hex() != sc.UPSTREAM_TRACE_ID


def test_genai_mcp_skill_guardrail_facts_in_typed_columns(exported):
    _, run, data_dir = exported
    rows = rows_by_span_id(data_dir)

    agent = rows[hex_span(run.by_name("invoke_agent support-assistant").context)]
    assert agent["gen_ai_operation_name"] == "invoke_agent"
    assert agent["gen_ai_provider_name"] == "openai"
    assert agent["gen_ai_agent_name"] == "support-assistant"
    assert agent["gen_ai_agent_id"] == "agent-17"
    assert agent["gen_ai_conversation_id"] == sc.CONVERSATION_ID
    assert (agent["skill_name"], agent["skill_version"], agent["skill_invocation_source"]) == (
        "case-triage",
        "1.2.0",
        "model",
    )

    chat = rows[hex_span(run.by_name("chat gpt-4.1").context)]
    assert chat["gen_ai_operation_name"] == "chat"
    assert chat["gen_ai_request_model"] == "gpt-4.1"
    assert chat["gen_ai_response_model"] == "gpt-4.1-2026-04-14"
    assert chat["gen_ai_response_id"] == "chatcmpl-e2e-1"
    assert chat["gen_ai_response_finish_reasons"] == ["tool_calls"]
    assert chat["gen_ai_usage_input_tokens"] == 812
    assert chat["gen_ai_usage_output_tokens"] == 64
    assert chat["gen_ai_tool_definitions"] == sc.TOOL_DEFINITIONS
    assert [(d["name"], d["has_output_schema"]) for d in chat["tool_definitions"]] == [
        (sc.TOOL, False),
        ("get_ticket", False),
    ]
    assert chat["tool_definitions"][0]["description"] == "Open a support case for a customer"

    guard = rows[hex_span(run.by_name("guardrail write-approval").context)]
    assert guard["guardrail_name"] == "write-approval"
    assert guard["guardrail_decision"] == "allow"
    assert guard["gen_ai_tool_name"] == sc.TOOL
    assert guard["gen_ai_tool_call_id"] == sc.TOOL_CALL_ID

    tool = rows[hex_span(run.by_name(f"execute_tool {sc.TOOL}").context)]
    assert tool["gen_ai_operation_name"] == "execute_tool"
    assert tool["gen_ai_tool_name"] == sc.TOOL
    assert tool["gen_ai_tool_call_id"] == sc.TOOL_CALL_ID
    assert tool["gen_ai_tool_type"] == "function"
    assert tool["gen_ai_tool_call_arguments"] == sc.TOOL_ARGUMENTS
    assert tool["gen_ai_tool_call_result"] == sc.TOOL_RESULT
    # facts derived at ingest from the captured CallToolResult
    assert tool["result_has_structured_content"] is True
    assert tool["result_is_error"] is False
    assert tool["result_content_types"] == ["text"]
    assert tool["result_type"] == "complete"
    assert tool["result_text_is_json_object"] is True
    assert tool["tool_call_arguments_digest"]
    # content lives in its own columns, not a second time in the generic map
    assert "gen_ai.tool.call.arguments" not in attr_keys(tool["attributes"])
    assert "gen_ai.tool.call.result" not in attr_keys(tool["attributes"])

    client = rows[hex_span(run.by_name(f"MCP send tools/call {sc.TOOL}").context)]
    server = rows[hex_span(run.by_name(f"tools/call {sc.TOOL}").context)]
    for row in (client, server):
        assert row["mcp_method_name"] == "tools/call"
        assert row["jsonrpc_request_id"] == sc.JSONRPC_ID
        assert row["gen_ai_tool_name"] == sc.TOOL
        assert row["mcp_session_id"] == sc.MCP_SESSION
        assert row["mcp_protocol_version"] == sc.MCP_PROTOCOL
    assert client["network_transport"] == "pipe"
    assert client["status_code"] == "UNSET"
    assert server["error_type"] == "tool_error"
    assert server["status_code"] == "ERROR"
    assert server["status_message"] == "crm timeout"
    assert server["gen_ai_operation_name"] == "execute_tool"

    init = rows[hex_span(run.by_name("MCP send initialize").context)]
    assert (init["mcp_method_name"], init["jsonrpc_request_id"]) == ("initialize", "0")


def test_generic_attributes_events_and_links_are_lossless(exported):
    _, run, data_dir = exported
    rows = rows_by_span_id(data_dir)
    tool_span = run.by_name(f"execute_tool {sc.TOOL}")
    tool = rows[hex_span(tool_span.context)]

    retry = attr(tool["attributes"], "acme.retry_count")
    assert (retry["type"], retry["int"]) == ("int", 2)
    score = attr(tool["attributes"], "acme.score")
    assert (score["type"], score["double"]) == ("double", 0.75)
    cached = attr(tool["attributes"], "acme.cached")
    assert (cached["type"], cached["bool"]) == ("bool", False)
    tags = attr(tool["attributes"], "acme.tags")
    assert tags["type"] == "array"
    assert json.loads(tags["str"]) == {"arrayValue": {"values": [{"stringValue": "crm"}, {"stringValue": "write"}]}}
    # schema 2: an attribute sent under its registry name with exactly its typed column's value is
    # kept in that column only, and `attributes_in_columns` has its slot's bit set (the pinned
    # bit order: IN_COLUMNS_BITS in schemas/src/lift.rs)
    assert tool["gen_ai_tool_name"] == sc.TOOL and tool["gen_ai_tool_call_id"] == sc.TOOL_CALL_ID
    assert "gen_ai.tool.name" not in attr_keys(tool["attributes"])
    assert "gen_ai.tool.call.id" not in attr_keys(tool["attributes"])
    tool_name_bit, call_id_bit = 14, 15
    assert tool["attributes_in_columns"] & (1 << tool_name_bit)
    assert tool["attributes_in_columns"] & (1 << call_id_bit)

    # links: both linked contexts and their typed attributes
    chat = run.by_name("chat gpt-4.1")
    guard = run.by_name("guardrail write-approval")
    links = tool["links"]
    assert [(link["trace_id"].hex(), link["span_id"].hex()) for link in links] == [
        (hex_trace(chat), hex_span(chat.context)),
        (hex_trace(guard), hex_span(guard.context)),
    ]
    assert attr(links[0]["attributes"], "link.reason")["str"] == "requested_by"
    assert attr(links[1]["attributes"], "approval.round")["int"] == 1
    # the Python exporter encodes a link's is-remote flag (local here) but not its tracestate
    assert [link["flags"] for link in links] == [0x100, 0x100]

    # events: name, exact time, typed attributes
    for span in (chat, guard, run.by_name(f"tools/call {sc.TOOL}")):
        row = rows[hex_span(span.context)]
        assert [(e["name"], e["time_unix_nano"]) for e in row["events"]] == [
            (e.name, e.timestamp) for e in span.events
        ], span.name
    chat_event = rows[hex_span(chat.context)]["events"][0]
    assert attr(chat_event["attributes"], "gen_ai.choice.index")["int"] == 0
    assert attr(chat_event["attributes"], "finish_reason")["str"] == "tool_calls"
    guard_event = rows[hex_span(guard.context)]["events"][0]
    assert attr(guard_event["attributes"], "wait_ms")["int"] == 1520
    server_event = rows[hex_span(run.by_name(f"tools/call {sc.TOOL}").context)]["events"][0]
    assert attr(server_event["attributes"], "exception.message")["str"] == "crm timeout"


def test_duckdb_sql_over_the_store(exported):
    """The queries a user types: typed filters, map access on the generic column, partitions."""
    _, run, data_dir = exported
    by_method = query(
        data_dir,
        "SELECT mcp_method_name AS m, service_name AS s, count(*) AS n FROM spans "
        "WHERE mcp_method_name IS NOT NULL GROUP BY ALL ORDER BY ALL",
    )
    assert by_method == [
        {"m": "initialize", "s": sc.HOST_SERVICE, "n": 1},
        {"m": "tools/call", "s": sc.HOST_SERVICE, "n": 1},
        {"m": "tools/call", "s": sc.SERVER_SERVICE, "n": 1},
    ]
    retry = query(
        data_dir,
        "SELECT attributes['acme.retry_count'].int AS retry FROM spans WHERE gen_ai_operation_name = 'execute_tool' "
        "AND kind = 'INTERNAL'",
    )
    assert retry == [{"retry": 2}]
    start = ts(min(s.start_time for s in run.spans))
    in_hour = query(
        data_dir,
        "SELECT count(*) AS n FROM spans WHERE date = ?::DATE AND hour = ?",
        [start.strftime("%Y-%m-%d"), start.hour],
    )
    # a run crossing the hour boundary puts some spans in the next partition
    assert in_hour[0]["n"] == sum(1 for s in run.spans if ts(s.start_time).hour == start.hour)
