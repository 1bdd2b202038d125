"""MCP's standard HTTP headers (`Mcp-Method`, `Mcp-Name`, SEP-2243) on HTTP server spans, end to end
with real parts: the official Python MCP SDK (mcp 2.x, which sends the headers) on both sides,
OpenTelemetry's ASGI instrumentation capturing the headers on the server, the OTLP/HTTP exporter
to a real collector, DuckDB reading the store, and `tripline check`.

The client's HTTP layer is not instrumented, so the HTTP request carries no `traceparent`: the
trace context travels only in `params._meta`. Two servers:
- `MCP_SPANS=off`: HTTP instrumentation only. The HTTP server span is then the only sign of the MCP
  server, and it starts a trace of its own: propagation into the server is broken (nothing reads
  `params._meta`), which TL004 must report, on the tool the header names.
- `MCP_SPANS=on`: the SDK's MCP server span reads `params._meta` and joins the host's trace. The
  HTTP span around it still carries the headers and still starts its own trace, but it is only the
  request's transport: no TL004, and the call counts once.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collector_process import free_port
from store import query

SCENARIO = Path(__file__).with_name("mcp_http_headers_scenario.py")


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"MCP server exited: {proc.stderr.read() if proc.stderr else ''}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"MCP server did not listen on {port} within {timeout}s")


def play(collector, mcp_spans: str) -> None:
    env = dict(os.environ)
    env.update({
        "OTLP_TRACES_URL": collector.traces_url,
        "MCP_SPANS": mcp_spans,
        "OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_SERVER_REQUEST": "mcp-method,mcp-name",
    })
    port = free_port()
    server = subprocess.Popen([sys.executable, str(SCENARIO), "server", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_listening(port, server)
        client = subprocess.run([sys.executable, str(SCENARIO), "client", f"http://127.0.0.1:{port}/mcp"],
                                env=env, capture_output=True, text=True, timeout=120)
        assert client.returncode == 0, client.stderr[-3000:]
        time.sleep(1.0)  # the server's last span ends just after its response went out
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()


def check(run_tripline, data_dir: Path) -> dict:
    proc = run_tripline("--data-dir", str(data_dir), "check", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def header_spans(data_dir: Path) -> list[dict]:
    return query(data_dir, """
        SELECT name, kind, service_name, mcp_method_name, gen_ai_tool_name, dialects
        FROM spans WHERE list_contains(dialects, 'mcp-http') AND mcp_method_name = 'tools/call'""")


@pytest.mark.timeout(300)
def test_http_only_server_is_an_mcp_server_and_its_broken_propagation_is_reported(
        start_collector, run_tripline, tmp_path):
    data = tmp_path / "http-only"
    collector = start_collector(data)
    play(collector, "off")
    assert collector.stop() == 0

    # the collector lifted the captured headers into the MCP columns (read by DuckDB)
    spans = header_spans(data)
    assert len(spans) == 1, spans
    assert spans[0]["kind"] == "SERVER" and spans[0]["service_name"] == "inventory-mcp"
    assert spans[0]["gen_ai_tool_name"] == "get_stock_level"
    assert query(data, "SELECT count(*) AS n FROM spans WHERE scope_name = 'mcp-python-sdk' "
                       "AND kind = 'SERVER'")[0]["n"] == 0

    report = check(run_tripline, data)
    tl004 = [f for f in report["findings"] if f["rule"] == "TL004"]
    assert len(tl004) == 1, json.dumps(report["findings"], indent=1)
    assert tl004[0]["tool"] == "get_stock_level"


@pytest.mark.timeout(300)
def test_http_span_around_an_mcp_server_span_is_only_its_transport(start_collector, run_tripline, tmp_path):
    data = tmp_path / "with-mcp-spans"
    collector = start_collector(data)
    play(collector, "on")
    assert collector.stop() == 0

    # both layers recorded the call: the HTTP span with the headers, in a trace of its own, and
    # the SDK's MCP server span, joined to the host through params._meta
    assert len(header_spans(data)) == 1
    mcp_server = query(data, "SELECT trace_id FROM spans WHERE scope_name = 'mcp-python-sdk' "
                             "AND kind = 'SERVER' AND mcp_method_name = 'tools/call'")
    host = query(data, "SELECT trace_id FROM spans WHERE name = 'execute_tool get_stock_level'")
    assert len(mcp_server) == 1 and len(host) == 1
    assert mcp_server[0]["trace_id"] == host[0]["trace_id"]
    http = query(data, "SELECT trace_id FROM spans WHERE list_contains(dialects, 'mcp-http') "
                       "AND mcp_method_name = 'tools/call'")
    assert http[0]["trace_id"] != host[0]["trace_id"], "the HTTP layer was expected not to propagate"

    report = check(run_tripline, data)
    assert [f for f in report["findings"] if f["rule"] == "TL004"] == [], json.dumps(report["findings"], indent=1)
