"""`tripline mcp` driven by a real MCP client of another implementation: the official Python `mcp`
package, over stdio and over Streamable HTTP (with and without a bearer token).

What is checked, on a store made by `tripline ingest samples/traces` and (when ../shared/recordings
is there) on a store of the shared recordings:
- `tools/list`: the five tools, each with an `outputSchema` (a valid JSON Schema of an object) and
  `readOnlyHint: true`, `openWorldHint: false`;
- every tool's `structuredContent` validates against its `outputSchema` (jsonschema, and the
  client's own validation), and `check` returns exactly what `tripline check --format json`
  prints on the same store, `report` what `tripline report KIND --format json` prints;
- bad input comes back as `isError: true` with a message saying what to do: bad SQL, writes and
  DDL, an unknown rule, an unknown or malformed trace id, a policy path outside the roots;
- HTTP: 401 without the token or with a wrong one, a non-loopback address refused, a browser
  Origin refused; the handshake protocol (initialize, sessions) and the stateless 2026-07-28 one;
- the server's own spans, exported to a tripline collector, pass `tripline check` with no finding.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import httpx2
import jsonschema
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from store import query as duck_query

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_TRACES = REPO_ROOT / "samples" / "traces"
RECORDINGS = REPO_ROOT.parent / "shared" / "recordings"
TOOLS = {"check", "query", "trace", "report", "explain"}
REPORT_KINDS = ["tools", "conversations", "guardrails", "skills", "propagation"]
LISTENING = re.compile(r"tripline mcp: listening (http://\S+/mcp)")


# -- stores ------------------------------------------------------------------------------------


def ingest(binary: str, data_dir: Path, source: Path) -> Path:
    proc = subprocess.run(
        [binary, "ingest", "--data-dir", str(data_dir), str(source)],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return data_dir


@pytest.fixture(scope="module")
def sample_store(tripline_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ingest(tripline_bin, tmp_path_factory.mktemp("mcp-samples") / "data", SAMPLE_TRACES)


@pytest.fixture(scope="module")
def recordings_store(tripline_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not RECORDINGS.is_dir():
        pytest.skip(f"recordings not found at {RECORDINGS} (shared/ must sit beside the repository)")
    return ingest(tripline_bin, tmp_path_factory.mktemp("mcp-recordings") / "data", RECORDINGS)


def cli_json(binary: str, *args: str) -> Any:
    """A tripline command's JSON stdout (check exits 1 when it found something)."""
    proc = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 1), f"tripline {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


# -- the server over stdio and HTTP ------------------------------------------------------------


@asynccontextmanager
async def stdio_session(binary: str, data_dir: Path, *extra: str, env: dict[str, str] | None = None,
                        errlog_path: Path | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=binary, args=["mcp", "--data-dir", str(data_dir), *extra], env=env, cwd=str(REPO_ROOT)
    )
    with open(errlog_path or os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


class HttpServer:
    """`tripline mcp --http 127.0.0.1:0` as a child process; its URL from its stderr line."""

    def __init__(self, binary: str, data_dir: Path, *extra: str, env: dict[str, str] | None = None):
        self.log: list[str] = []
        self.url = ""
        listening = threading.Event()
        self.proc = subprocess.Popen(
            [binary, "mcp", "--data-dir", str(data_dir), "--http", "127.0.0.1:0", *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            cwd=REPO_ROOT, env={**os.environ, "NO_COLOR": "1", **(env or {})},
        )

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line.rstrip("\n"))
                m = LISTENING.search(line)
                if m and not listening.is_set():
                    self.url = m.group(1)
                    listening.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        deadline = time.monotonic() + 60
        while not listening.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError("tripline mcp --http did not listen:\n" + "\n".join(self.log))

    def stop(self) -> int:
        """SIGTERM and the exit code (spans are flushed before it exits)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise AssertionError("tripline mcp did not exit on SIGTERM:\n" + "\n".join(self.log))
        self.reader.join(5)
        return self.proc.returncode


@pytest.fixture
def http_server(tripline_bin: str):
    started: list[HttpServer] = []

    def start(data_dir: Path, *extra: str, env: dict[str, str] | None = None) -> HttpServer:
        server = HttpServer(tripline_bin, data_dir, *extra, env=env)
        started.append(server)
        return server

    yield start
    for s in started:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
        print("--- tripline mcp stderr ---\n" + "\n".join(s.log[-100:]))


@asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


# -- what every transport must do --------------------------------------------------------------


async def list_schemas(session: ClientSession | Client) -> dict[str, dict[str, Any]]:
    """tools/list: every tool read-only with an object output schema; name -> outputSchema."""
    listed = await session.list_tools()
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == TOOLS
    schemas = {}
    for name, tool in tools.items():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True, name
        assert tool.annotations.open_world_hint is False, name
        assert tool.output_schema is not None, f"{name} declares no outputSchema"
        assert tool.output_schema["type"] == "object", name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.description, name
        schemas[name] = tool.output_schema
    return schemas


async def call_ok(session: ClientSession | Client, schemas: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert not result.is_error, f"{name}({args}) failed: {text}"
    assert text.strip(), f"{name} returned no text block"
    content = result.structured_content
    jsonschema.validate(content, schemas[name], cls=jsonschema.Draft202012Validator)
    return content


async def call_error(session: ClientSession | Client, name: str, args: dict[str, Any], *expected: str) -> str:
    result = await session.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert result.is_error is True, f"{name}({args}) did not fail: {text[:500]}"
    for phrase in expected:
        assert phrase in text, f"{name}({args}): {phrase!r} not in {text!r}"
    return text


def tree_nodes(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out, stack = [], list(nodes)
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n["children"])
    return out


async def exercise(session: ClientSession | Client, binary: str, store: Path, policy: Path | None = None) -> None:
    """Every tool on `store`, compared with the CLI on the same store, and the error cases."""
    schemas = await list_schemas(session)
    policy_args = ["--policy", str(policy)] if policy else []

    # check == `tripline check --format json`, with and without a rule selection.
    expected = cli_json(binary, "check", "--data-dir", str(store), "--format", "json", *policy_args)
    check = await call_ok(session, schemas, "check", {"policy": str(policy)} if policy else {})
    assert check["findings"] == expected["findings"]
    assert check["coverage"] == expected["coverage"]
    assert check["scanned"] == expected["scanned"]
    assert check["scanned"]["spans"] > 0
    only = await call_ok(session, schemas, "check", {"rules": ["TL004"]})
    assert [c["rule"] for c in only["coverage"]] == ["TL004"]
    assert only["findings"] == [f for f in expected["findings"] if f["rule"] == "TL004"]

    # query: the span count of the scan, a row limit that truncates, rows as objects.
    q = await call_ok(session, schemas, "query", {"sql": "SELECT count(*) AS n FROM spans"})
    assert q["rows"] == [{"n": check["scanned"]["spans"]}] and q["truncated"] is False
    q = await call_ok(session, schemas, "query", {
        "sql": "SELECT encode(trace_id, 'hex') AS trace_id, count(*) AS spans FROM spans GROUP BY 1 ORDER BY 2 DESC, 1",
        "limit": 2,
    })
    assert q["row_count"] == 2 and len(q["rows"]) == 2 and q["truncated"] is True, q
    assert [c["name"] for c in q["columns"]] == ["trace_id", "spans"]
    described = await call_ok(session, schemas, "query", {"sql": "DESCRIBE spans", "limit": 10000})
    assert "gen_ai_tool_name" in {r["column_name"] for r in described["rows"]}

    # trace: the trace of a finding (a TL004 one when there is one), its span in the tree.
    findings = check["findings"]
    assert findings, "the sample stores hold findings"
    finding = next((f for f in findings if f["rule"] == "TL004"), findings[0])
    tree = await call_ok(session, schemas, "trace", {"trace_id": finding["trace_id"]})
    nodes = tree_nodes(tree["roots"])
    assert len(nodes) == tree["shown_spans"] == tree["span_count"] and not tree["truncated"]
    marked = [n for n in nodes if n["span_id"] == finding["span_id"]]
    assert marked and finding["rule"] in marked[0]["findings"]
    assert finding in tree["findings"]
    assert finding["span_id"] in tree["text"]
    if finding["rule"] == "TL004":
        assert any(n["stitched"] for n in nodes) and tree["stitched_traces"], "the broken edge is marked"
    small = await call_ok(session, schemas, "trace", {"trace_id": finding["trace_id"], "max_spans": 1})
    assert small["shown_spans"] == 1 and small["truncated"] == (tree["span_count"] > 1)

    # report: every kind, the same rows as the CLI.
    for kind in REPORT_KINDS:
        rep = await call_ok(session, schemas, "report", {"kind": kind})
        cli = cli_json(binary, "report", kind, "--data-dir", str(store), "--format", "json")
        assert rep["kind"] == kind and rep["rows"] == cli["rows"] and rep["notes"] == cli["notes"]
        assert rep["truncated"] is False and rep["total_rows"] == len(cli["rows"])
    # propagation: per pair, the channels add up to the calls, and the tools/call requests it
    # shows as not stitched are exactly TL004's findings.
    prop = await call_ok(session, schemas, "report", {"kind": "propagation"})
    assert prop["rows"], "the stores hold MCP requests"
    for row in prop["rows"]:
        assert sum(row["how"].values()) == row["calls"], row
        assert row["stitched"] == row["how"]["params_meta"] + row["how"]["http_header_only"] + row["how"]["via_gateway"], row
        assert row["fix"], row
    tl004 = [f for f in expected["findings"] if f["rule"] == "TL004"]
    assert sum(r["unstitched_tool_calls"] for r in prop["rows"]) == len(tl004), (prop["rows"], tl004)

    # explain: every rule that ran, and TL011 (run by diff).
    for cov in check["coverage"]:
        doc = await call_ok(session, schemas, "explain", {"code": cov["rule"].lower()})
        assert doc["code"] == cov["rule"] and doc["run_by"] == "check" and doc["what"] in doc["text"]
    doc = await call_ok(session, schemas, "explain", {"code": "TL011"})
    assert doc["run_by"] == "diff"

    # bad input: isError with a useful message, never a protocol error.
    await call_error(session, "query", {"sql": "SELEC * FROM spans"}, "cannot parse the SQL")
    await call_error(session, "query", {"sql": "SELECT no_such_column FROM spans"}, "query failed", "DESCRIBE spans")
    for write in [
        "INSERT INTO spans (name) VALUES ('x')",
        "DELETE FROM spans",
        "DROP TABLE spans",
        "CREATE TABLE t AS SELECT * FROM spans",
        "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '/tmp/'",
        "COPY (SELECT 1) TO '/tmp/tripline-mcp-should-not-exist.csv'",
        "SELECT * INTO t FROM spans",
        "SELECT 1; DROP TABLE spans",
    ]:
        await call_error(session, "query", {"sql": write}, "read-only")
    assert not Path("/tmp/tripline-mcp-should-not-exist.csv").exists()
    await call_error(session, "query", {"sql": "SELECT 1", "limit": 10001}, "between 1 and 10000")
    await call_error(session, "explain", {"code": "TL999"}, "unknown rule", "TL004")
    await call_error(session, "check", {"rules": ["TL999"]}, "unknown rule")
    await call_error(session, "check", {"since": "yesterday"}, "invalid time")
    await call_error(session, "check", {"service": "no-such-service"}, "no span matches")
    await call_error(session, "check", {"policy": "/etc/passwd"}, "policy roots")
    await call_error(session, "trace", {"trace_id": "0" * 32}, "not in the store")
    await call_error(session, "trace", {"trace_id": "xyz"}, "32 hex digits")
    await call_error(session, "report", {"kind": "tools", "colour": "red"}, "unknown field")
    with pytest.raises(MCPError):
        await session.call_tool("no_such_tool", {})


def test_stdio_serves_every_tool_on_the_sample_store(tripline_bin, sample_store):
    async def main() -> None:
        async with stdio_session(tripline_bin, sample_store) as session:
            await exercise(session, tripline_bin, sample_store)

    anyio.run(main)


def test_stdio_on_the_shared_recordings_with_their_policy(tripline_bin, recordings_store):
    policy = RECORDINGS / "policy.toml"

    async def main() -> None:
        async with stdio_session(tripline_bin, recordings_store, "--policy-root", str(RECORDINGS)) as session:
            await exercise(session, tripline_bin, recordings_store, policy=policy)

    anyio.run(main)


def test_http_with_a_bearer_token(tripline_bin, sample_store, http_server, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    server = http_server(sample_store, "--auth-token-file", str(token_file))

    # Without the token, or with a wrong one: 401 before any MCP processing.
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    hdrs = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for auth in [None, "Bearer wrong", "Basic s3cret-token"]:
        h = dict(hdrs, **({"Authorization": auth} if auth else {}))
        r = httpx2.post(server.url, json=body, headers=h, timeout=10)
        assert r.status_code == 401, (auth, r.status_code, r.text)
        assert r.headers.get("www-authenticate") == "Bearer"
        assert "bearer token" in r.text

    async def main() -> None:
        async with http_session(server.url, "s3cret-token") as session:
            await exercise(session, tripline_bin, sample_store)

    anyio.run(main)
    assert server.stop() == 0


def test_http_without_a_token_and_the_address_rules(tripline_bin, sample_store, http_server):
    server = http_server(sample_store)

    async def main() -> None:
        async with http_session(server.url) as session:
            schemas = await list_schemas(session)
            explained = await call_ok(session, schemas, "explain", {"code": "TL002"})
            assert explained["name"] == "unconfirmed-write"
        # The stateless 2026-07-28 protocol (server/discover, no session) as well.
        async with Client(server.url, mode="2026-07-28") as client:
            await exercise(client, tripline_bin, sample_store)

    anyio.run(main)
    # A browser page's request (it carries an Origin) is refused.
    r = httpx2.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={"Accept": "application/json, text/event-stream", "Origin": "http://evil.example"}, timeout=10)
    assert r.status_code == 403, r.status_code
    assert server.stop() == 0

    # Not loopback: refused unless --allow-remote, which needs a token.
    for args, phrase in [
        (["--http", "0.0.0.0:0"], "not a loopback address"),
        (["--http", "0.0.0.0:0", "--allow-remote"], "needs --auth-token-file"),
    ]:
        proc = subprocess.run([tripline_bin, "mcp", "--data-dir", str(sample_store), *args],
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert proc.returncode == 2 and phrase in proc.stderr, (args, proc.returncode, proc.stderr)


class TracedHost:
    """The agent side of the self-telemetry test, instrumented as a well-behaved MCP client: one
    CLIENT span per tools/call (semantic-convention attributes, exported to the collector) whose
    W3C context travels in params._meta. Its own provider, not the global one, so the Python MCP
    SDK's built-in client spans stay no-ops and only this host's and tripline's spans are stored."""

    def __init__(self, traces_url: str):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.provider = TracerProvider(resource=Resource.create({"service.name": "mcp-test-agent"}))
        self.provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=traces_url)))
        self.tracer = self.provider.get_tracer("tripline-tests/mcp-host")

    async def call(self, session: ClientSession | Client, transport: str, name: str, args: dict[str, Any]):
        from opentelemetry.propagate import inject
        from opentelemetry.trace import SpanKind, Status, StatusCode

        attributes = {
            "mcp.method.name": "tools/call",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "network.transport": transport,
        }
        with self.tracer.start_as_current_span(f"tools/call {name}", kind=SpanKind.CLIENT, attributes=attributes) as span:
            meta: dict[str, Any] = {}
            inject(meta)
            assert "traceparent" in meta
            result = await session.call_tool(name, args, meta=meta)
            if result.is_error:
                span.set_attribute("error.type", "tool_error")
                span.set_status(Status(StatusCode.ERROR))
            return result


def test_own_spans_pass_check_with_no_finding(tripline_bin, sample_store, start_collector, http_server, tmp_path):
    collector = start_collector(tmp_path / "self")
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.http_url}
    host = TracedHost(collector.traces_url)
    calls = [
        ("check", {"rules": ["TL001"]}, False),
        ("query", {"sql": "SELECT count(*) AS n FROM spans"}, False),
        ("report", {"kind": "tools"}, False),
        ("explain", {"code": "TL004"}, False),
        ("explain", {"code": "TL999"}, True),
        ("query", {"sql": "DROP TABLE spans"}, True),
    ]

    async def play(session: ClientSession | Client, transport: str) -> None:
        await list_schemas(session)
        for name, args, failing in calls:
            result = await host.call(session, transport, name, args)
            assert result.is_error is failing, (name, args, result.content)

    async def main(url: str) -> None:
        async with stdio_session(tripline_bin, sample_store, env=env, errlog_path=tmp_path / "stdio.log") as session:
            await play(session, "pipe")
        async with http_session(url) as session:
            await play(session, "tcp")
        # "auto": server/discover first, then the stateless 2026-07-28 protocol.
        async with Client(url, mode="auto") as client:
            await play(client, "tcp")

    server = http_server(sample_store, env=env)
    anyio.run(main, server.url)
    assert server.stop() == 0
    host.provider.shutdown()
    assert collector.stop() == 0

    spans = duck_query(
        collector.data_dir,
        "SELECT name, kind, status_code, service_name, mcp_method_name, gen_ai_tool_name, gen_ai_operation_name,"
        " error_type, network_transport AS transport, lower(hex(trace_id)) AS trace_id,"
        " lower(hex(span_id)) AS span_id, lower(hex(parent_span_id)) AS parent, mcp_session_id,"
        " mcp_protocol_version AS protocol, attributes['network.transport'].str AS transport_in_map,"
        " attributes_in_columns FROM spans",
    )
    ours = [s for s in spans if s["service_name"] == "tripline-mcp"]
    host_spans = {s["span_id"]: s for s in spans if s["service_name"] == "mcp-test-agent"}
    assert all(s["kind"] == "SERVER" for s in ours)
    served = [s for s in ours if s["mcp_method_name"] == "tools/call"]
    assert len(served) == 3 * len(calls) == len(host_spans), (tmp_path / "stdio.log").read_text()[-3000:]
    for s in served:
        # Each server span is the child of the host span that made the request.
        parent = host_spans[s["parent"]]
        assert parent["trace_id"] == s["trace_id"] and parent["gen_ai_tool_name"] == s["gen_ai_tool_name"]
        assert s["name"] == f"tools/call {s['gen_ai_tool_name']}" and s["gen_ai_operation_name"] == "execute_tool"
    errors = [s for s in served if s["status_code"] == "ERROR"]
    assert len(errors) == 6 and all(s["error_type"] == "tool_error" for s in errors)
    assert {s["transport"] for s in served} == {"pipe", "tcp"}
    # Sent under their registry names with the columns' exact values, the two attributes are kept
    # in their typed columns only (schema 2), and `attributes_in_columns` says so.
    assert all(s["transport_in_map"] is None and s["attributes_in_columns"] for s in served)
    assert {s["protocol"] for s in served} == {"2025-11-25", "2026-07-28"}
    # A session id on the handshake protocol over HTTP only (2026-07-28 has no sessions).
    sessions = [s for s in served if s["mcp_session_id"]]
    assert len(sessions) == len(calls) and all(s["transport"] == "tcp" for s in sessions)
    assert sum(1 for s in ours if s["mcp_method_name"] == "tools/list") >= 3
    assert sum(1 for s in ours if s["mcp_method_name"] == "server/discover") >= 1

    report = cli_json(tripline_bin, "check", "--data-dir", str(collector.data_dir), "--format", "json")
    assert report["findings"] == [], json.dumps(report["findings"], indent=1)
    # The host injected W3C context into params._meta of every tools/call and tripline's MCP layer
    # extracted it: `report propagation` shows every one stitched through _meta, with both sides'
    # libraries (the host's tracer, tripline's own scope).
    prop = cli_json(tripline_bin, "report", "propagation", "--data-dir", str(collector.data_dir), "--format", "json")
    pair = [r for r in prop["rows"] if r["client"] == "mcp-test-agent" and r["server"] == "tripline-mcp"]
    assert len(pair) == 1, json.dumps(prop, indent=1)
    assert pair[0]["calls"] == pair[0]["stitched"] == pair[0]["how"]["params_meta"] == len(served), pair
    assert pair[0]["unstitched_tool_calls"] == 0 and pair[0]["fix"].startswith("none needed"), pair
    assert pair[0]["client_libraries"] == ["tripline-tests/mcp-host"] and pair[0]["server_libraries"], pair
    assert report["scanned"]["spans"] == len(spans)
    examined = {c["rule"]: c["examined"] for c in report["coverage"]}
    assert examined["TL004"] == len(served) and examined["TL015"] > 0, examined
