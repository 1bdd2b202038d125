"""Hand-built OTLP requests with deterministic ids and timestamps (opentelemetry-proto classes).

Why not the SDK here: durability, engine-agreement and negative tests need control the SDK does not
give: chosen ids (so every acknowledged span can be looked up), timestamps in chosen hours and
dates (so several partitions exist), and deliberately invalid ids.
"""

from __future__ import annotations

import hashlib

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

# 2026-11-30T00:00:00Z: hour 0 exists, so DuckDB's partition typing of hour=0 vs 10 is exercised.
DAY_START_NS = 1_795_996_800 * 1_000_000_000
HOUR_NS = 3_600 * 1_000_000_000


def ident(kind: str, *parts: object, size: int) -> bytes:
    """A deterministic, never-all-zero id of `size` bytes."""
    digest = hashlib.sha256(("/".join([kind, *map(str, parts)])).encode()).digest()[:size]
    return digest if any(digest) else b"\x01" + digest[1:]


def kv(key: str, value: object) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


def span(
    trace_id: bytes,
    span_id: bytes,
    name: str,
    start_ns: int,
    duration_ns: int = 1_000_000,
    parent: bytes = b"",
    kind: int = Span.SPAN_KIND_INTERNAL,
    attributes: dict[str, object] | None = None,
) -> Span:
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=kind,
        start_time_unix_nano=start_ns,
        end_time_unix_nano=start_ns + duration_ns,
        attributes=[kv(k, v) for k, v in (attributes or {}).items()],
    )


def request(service: str, spans: list[Span], scope: str = "tripline.e2e.synthetic") -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=[kv("service.name", service)]),
                scope_spans=[ScopeSpans(scope=InstrumentationScope(name=scope, version="1"), spans=spans)],
            )
        ]
    )


def tool_call_request(service: str, batch: int, spans_per_request: int, start_ns: int) -> ExportTraceServiceRequest:
    """One export request of `spans_per_request` execute_tool spans of one trace (batch number
    makes every id unique across requests)."""
    trace_id = ident("trace", service, batch, size=16)
    root = ident("span", service, batch, 0, size=8)
    spans = [span(trace_id, root, "invoke_agent e2e", start_ns, 5_000_000, attributes={"gen_ai.operation.name": "invoke_agent"})]
    for i in range(1, spans_per_request):
        spans.append(
            span(
                trace_id,
                ident("span", service, batch, i, size=8),
                "execute_tool get_ticket",
                start_ns + i * 1000,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "get_ticket",
                    "gen_ai.tool.call.id": f"call-{batch}-{i}",
                },
                parent=root,
            )
        )
    return request(service, spans)


def span_ids(req: ExportTraceServiceRequest) -> list[bytes]:
    return [s.span_id for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
