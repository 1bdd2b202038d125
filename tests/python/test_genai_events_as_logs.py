"""GenAI events sent as OTLP logs, end to end: the real OpenTelemetry Python SDK exports spans and
log records (its OTLPLogExporter, HTTP and gRPC) to the real `tripline collect`; DuckDB reads the
`logs/` Parquet table without help and finds every record with its span's ids; then `tripline
check` joins the records to their spans, so content that was only sent as events is seen by the
rules: a tool result that only an event carries makes TL001 examine the call (not observable
without the events) and report its flattened JSON, and a secret that only a user-message event
carries is found by TL013.

The same scenario without the log records is the control: the rules must then say the content is
not observable, so the difference is the join and nothing else.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pytest
from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import LogRecordExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.trace import SpanKind

from collector_process import Collector

SERVICE = "events-agent-host"
TOOL = "lookup_order"
SECRET = "sk-proj-Zr8Qw2Lm5Nx7Pt4Vb9Kc3Hd6"
TOOL_ARGUMENTS = json.dumps({"order_id": "A-1001"})
# A result whose only text block holds a JSON object and no structuredContent: TL001 reports it
# once the result is observable.
TOOL_RESULT = json.dumps({"content": [{"type": "text", "text": json.dumps({"order_id": "A-1001", "status": "shipped"})}]})


class Recording:
    """Wraps an exporter and keeps every export result (the SDK's processors swallow failures)."""

    def __init__(self, inner, ok):
        self.inner, self.ok, self.results = inner, ok, []

    def export(self, batch):
        result = self.inner.export(batch)
        self.results.append(result)
        return result

    def shutdown(self):
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    @property
    def all_ok(self) -> bool:
        return bool(self.results) and all(r is self.ok for r in self.results)


def exporters(transport: str, collector: Collector):
    if transport == "http":
        return HttpSpanExporter(endpoint=collector.traces_url, timeout=10), HttpLogExporter(
            endpoint=f"{collector.http_url}/v1/logs", timeout=10
        )
    if transport == "http-gzip":
        gz = HttpCompression.Gzip
        return HttpSpanExporter(endpoint=collector.traces_url, timeout=10, compression=gz), HttpLogExporter(
            endpoint=f"{collector.http_url}/v1/logs", timeout=10, compression=gz
        )
    if transport == "grpc":
        endpoint = f"http://{collector.grpc_addr}"
        return GrpcSpanExporter(endpoint=endpoint, insecure=True, timeout=10), GrpcLogExporter(
            endpoint=endpoint, insecure=True, timeout=10
        )
    raise ValueError(transport)


def play(span_exporter, log_exporter, *, with_events: bool) -> dict:
    """An agent run: a chat whose prompt and answer are only events, and a tool call whose
    arguments and result are only an event. Returns the ids and what was sent."""
    resource = Resource.create({"service.name": SERVICE})
    spans = Recording(span_exporter, SpanExportResult.SUCCESS)
    logs = Recording(log_exporter, LogRecordExportResult.SUCCESS)
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    tracer = tracer_provider.get_tracer("tripline.e2e.events", "1.0.0")
    logger = logger_provider.get_logger("tripline.e2e.events", "1.0.0")
    sent: list[dict] = []

    def event(name: str, body=None, attributes=None) -> None:
        sent.append({"event_name": name, "span_id": trace.get_current_span().get_span_context().span_id})
        if with_events:
            logger.emit(
                event_name=name,
                body=body,
                attributes=attributes,
                severity_number=SeverityNumber.INFO,
                context=trace.set_span_in_context(trace.get_current_span()),
            )

    with tracer.start_as_current_span("invoke_agent order-assistant", kind=SpanKind.INTERNAL) as agent:
        agent.set_attributes(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "order-assistant",
                "gen_ai.conversation.id": "conv-events-1",
            }
        )
        with tracer.start_as_current_span("chat gpt-4.1", kind=SpanKind.CLIENT) as chat:
            chat.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-4.1",
                    "gen_ai.conversation.id": "conv-events-1",
                }
            )
            event("gen_ai.system.message", {"content": "You look up orders."})
            event("gen_ai.user.message", {"content": f"where is order A-1001? my key is {SECRET}"})
            event(
                "gen_ai.choice",
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "tool_calls": [
                            {"id": "call_1", "type": "function", "function": {"name": TOOL, "arguments": TOOL_ARGUMENTS}}
                        ]
                    },
                },
            )
        with tracer.start_as_current_span(f"execute_tool {TOOL}", kind=SpanKind.INTERNAL) as tool:
            tool.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": TOOL,
                    "gen_ai.tool.call.id": "call_1",
                    "gen_ai.tool.type": "function",
                    "gen_ai.conversation.id": "conv-events-1",
                }
            )
            event(
                "gen_ai.tool.call.details",
                attributes={"gen_ai.tool.call.arguments": TOOL_ARGUMENTS, "gen_ai.tool.call.result": TOOL_RESULT},
            )
    tracer_provider.shutdown()
    logger_provider.shutdown()
    assert spans.all_ok, f"span exports not all acknowledged: {spans.results}"
    if with_events:
        assert logs.all_ok, f"log exports not all acknowledged: {logs.results}"
    return {
        "trace_id": chat.get_span_context().trace_id.to_bytes(16, "big").hex(),
        "chat": chat.get_span_context().span_id.to_bytes(8, "big").hex(),
        "tool": tool.get_span_context().span_id.to_bytes(8, "big").hex(),
        "sent": sent,
    }


def check_json(run_tripline, data_dir: Path) -> dict:
    proc = run_tripline("check", "--data-dir", str(data_dir), "--format", "json", "--fail-on", "critical")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def coverage(report: dict, rule: str) -> dict:
    return next(c for c in report["coverage"] if c["rule"] == rule)


def findings(report: dict, rule: str) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == rule]


@pytest.fixture(scope="module")
def control(tripline_bin, tmp_path_factory):
    """The scenario's spans alone (no log records)."""
    collector = Collector(tripline_bin, tmp_path_factory.mktemp("events-control") / "data").start()
    try:
        span_exporter, log_exporter = exporters("http", collector)
        ids = play(span_exporter, log_exporter, with_events=False)
        assert collector.stop() == 0
    except BaseException:
        collector.kill()
        print(collector.output())
        raise
    return ids, collector.data_dir


@pytest.mark.parametrize("transport", ["http", "http-gzip", "grpc"])
def test_events_land_in_logs_and_feed_the_rules(transport, tripline_bin, tmp_path, run_tripline, control):
    collector = Collector(tripline_bin, tmp_path / "data").start()
    try:
        span_exporter, log_exporter = exporters(transport, collector)
        ids = play(span_exporter, log_exporter, with_events=True)
        assert collector.stop() == 0, "collector must exit 0 on SIGTERM"
    except BaseException:
        collector.kill()
        print(collector.output())
        raise
    data_dir = collector.data_dir

    # DuckDB reads logs/ on its own, with hive partitioning, and every record carries its span.
    con = duckdb.connect()
    rows = con.execute(
        f"""SELECT hex(trace_id), hex(span_id), event_name, body, attributes, severity_number,
                   service_name, scope_name, scope_version, ingest_source, date, hour,
                   coalesce(time_unix_nano, observed_time_unix_nano) AS t
            FROM read_parquet('{data_dir}/logs/**/*.parquet', hive_partitioning = true)
            ORDER BY t"""
    ).fetchall()
    assert [(r[1].lower(), r[2]) for r in rows] == [
        ("%016x" % s["span_id"], s["event_name"]) for s in ids["sent"]
    ]
    assert {r[0].lower() for r in rows} == {ids["trace_id"]}
    by_name = {r[2]: r for r in rows}
    assert json.loads(by_name["gen_ai.user.message"][3]) == {"content": f"where is order A-1001? my key is {SECRET}"}
    tool_attrs = json.loads(by_name["gen_ai.tool.call.details"][4])
    assert tool_attrs["gen_ai.tool.call.result"] == TOOL_RESULT
    assert by_name["gen_ai.tool.call.details"][3] is None  # an empty body is no body
    for r in rows:
        assert r[5] == 9  # SeverityNumber.INFO
        assert (r[6], r[7], r[8]) == (SERVICE, "tripline.e2e.events", "1.0.0")
        assert r[9] == ("otlp-grpc" if transport == "grpc" else "otlp-http")
        when = datetime.fromtimestamp(r[12] / 1e9, tz=timezone.utc)
        assert str(r[10]) == when.strftime("%Y-%m-%d") and r[11] == when.hour
    # The spans are where they always were.
    n_spans = con.execute(f"SELECT count(*) FROM read_parquet('{data_dir}/spans/**/*.parquet')").fetchone()[0]
    assert n_spans == 3

    # `tripline query` has the second table.
    proc = run_tripline(
        "query", "--data-dir", str(data_dir), "--format", "json",
        "SELECT event_name, count(*) AS n FROM logs GROUP BY event_name ORDER BY event_name",
    )
    assert proc.returncode == 0, proc.stderr
    assert [(r["event_name"], r["n"]) for r in json.loads(proc.stdout)] == sorted(
        (s["event_name"], 1) for s in ids["sent"]
    )

    # The rules see event-borne content; without the events they say it is not observable.
    with_events = check_json(run_tripline, data_dir)
    without = check_json(run_tripline, control[1])
    assert with_events["scanned"]["log_records"] == len(ids["sent"])
    assert with_events["scanned"]["spans_with_event_content"] == 2
    assert "log_records" not in without["scanned"]

    tl001, tl001_control = coverage(with_events, "TL001"), coverage(without, "TL001")
    assert (tl001_control["examined"], tl001_control["not_observable"]) == (1, 1), tl001_control
    assert (tl001["examined"], tl001["not_observable"]) == (1, 0), tl001
    assert [(f["span_id"], f["tool"]) for f in findings(with_events, "TL001")] == [(ids["tool"], TOOL)]
    assert findings(without, "TL001") == []

    tl013 = findings(with_events, "TL013")
    assert [f["span_id"] for f in tl013] == [ids["chat"]], tl013
    assert "API key" in tl013[0]["message"] or "key" in tl013[0]["message"].lower()
    assert SECRET not in json.dumps(with_events), "a finding must never print the secret"
    assert findings(without, "TL013") == []


def test_redacted_events_are_stored_redacted_and_are_not_evidence(tripline_bin, tmp_path, run_tripline):
    collector = Collector(tripline_bin, tmp_path / "data", ["--redact-content"]).start()
    try:
        span_exporter, log_exporter = exporters("http", collector)
        play(span_exporter, log_exporter, with_events=True)
        assert collector.stop() == 0
    except BaseException:
        collector.kill()
        print(collector.output())
        raise
    data_dir = collector.data_dir
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT event_name, body, attributes, content_redacted FROM read_parquet('{data_dir}/logs/**/*.parquet')"
    ).fetchall()
    assert len(rows) == 4
    stored = json.dumps(rows)
    assert SECRET not in stored and "shipped" not in stored
    by_name = {r[0]: r for r in rows}
    assert json.loads(by_name["gen_ai.user.message"][1]) == "[redacted]"
    assert json.loads(by_name["gen_ai.tool.call.details"][2])["gen_ai.tool.call.result"] == "[redacted]"
    assert all(r[3] for r in rows)
    report = check_json(run_tripline, data_dir)
    assert findings(report, "TL013") == []
    assert findings(report, "TL001") == []


def test_recorded_logs_are_imported_from_collector_file_exporter_lines(tmp_path, run_tripline):
    """`tripline ingest` of the OpenTelemetry Collector file exporter's JSON lines, where one line
    holds resourceSpans and another resourceLogs: the records land in logs/ and are joined."""
    trace_id, span_id = "0af7651916cd43dd8448eb211c80319c", "00000000000000a1"
    span_line = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "file-svc"}}]},
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": trace_id,
                                "spanId": span_id,
                                "name": f"execute_tool {TOOL}",
                                "kind": 1,
                                "startTimeUnixNano": "1796032800000000000",
                                "endTimeUnixNano": "1796032801000000000",
                                "attributes": [
                                    {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                                    {"key": "gen_ai.tool.name", "value": {"stringValue": TOOL}},
                                ],
                            }
                        ]
                    }
                ],
            }
        ]
    }
    log_line = {
        "resourceLogs": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "file-svc"}}]},
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": "1796032800500000000",
                                "traceId": trace_id,
                                "spanId": span_id,
                                "eventName": "gen_ai.tool.call.details",
                                "attributes": [{"key": "gen_ai.tool.call.result", "value": {"stringValue": TOOL_RESULT}}],
                            }
                        ]
                    }
                ],
            }
        ]
    }
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps(span_line) + "\n" + json.dumps(log_line) + "\n")
    data_dir = tmp_path / "data"
    proc = run_tripline("ingest", "--data-dir", str(data_dir), str(export))
    assert proc.returncode == 0, proc.stderr
    assert "1 spans accepted" in proc.stderr and "1 log records accepted" in proc.stderr
    rows = (
        duckdb.connect()
        .execute(
            f"SELECT hex(span_id), event_name, ingest_source, date, hour "
            f"FROM read_parquet('{data_dir}/logs/**/*.parquet', hive_partitioning = true)"
        )
        .fetchall()
    )
    assert [(r[0].lower(), r[1], r[2]) for r in rows] == [(span_id, "gen_ai.tool.call.details", f"file:{export}")]
    assert (str(rows[0][3]), rows[0][4]) == ("2026-11-30", 10)
    report = check_json(run_tripline, data_dir)
    assert report["scanned"]["log_records"] == 1 and report["scanned"]["spans_with_event_content"] == 1
    assert (coverage(report, "TL001")["examined"], coverage(report, "TL001")["not_observable"]) == (1, 0)
    assert [f["tool"] for f in findings(report, "TL001")] == [TOOL]
