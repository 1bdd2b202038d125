"""`tripline check --follow` against a running `tripline collect` fed by the OpenTelemetry SDK.

An alerting pipeline follows a live collector: an agent host and an MCP server (two
TracerProviders, two services, the real OTLP/HTTP exporter) make a tool call whose trace context
does NOT cross the MCP boundary, so the server's span starts its own trace (TL004). The follower
must print that finding as one JSON line once the collector commits the spans; after a second
such call, only the new finding; on SIGTERM it exits 0 with its state saved, and a later
`--since last` run repeats nothing (docs/incremental.md).
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
from pathlib import Path

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind

SESSION = "sess-follow-1"
DEADLINE_S = 120.0


class Agents:
    """The agent host and the MCP server, each with its own provider and OTLP/HTTP exporter."""

    def __init__(self, traces_url: str):
        self.providers = []
        tracers = []
        for service in ("follow-agent-host", "follow-mcp-server"):
            provider = TracerProvider(resource=Resource.create({"service.name": service}))
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url, timeout=10)))
            self.providers.append(provider)
            tracers.append(provider.get_tracer("tripline.e2e.follow"))
        self.host, self.server = tracers

    def broken_call(self, tool: str, request_id: str) -> dict[str, str]:
        """One tools/call whose context is not propagated; returns the ids of both halves."""
        with self.host.start_as_current_span(f"invoke_agent follow-{tool}", kind=SpanKind.INTERNAL) as agent:
            agent.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "follow-agent"})
            with self.host.start_as_current_span(f"execute_tool {tool}", kind=SpanKind.INTERNAL) as tool_span:
                tool_span.set_attributes(
                    {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "gen_ai.tool.call.id": f"call-{request_id}"}
                )
                with self.host.start_as_current_span(f"tools/call {tool}", kind=SpanKind.CLIENT) as client:
                    client.set_attributes(
                        {
                            "mcp.method.name": "tools/call",
                            "jsonrpc.request.id": request_id,
                            "gen_ai.tool.name": tool,
                            "mcp.session.id": SESSION,
                        }
                    )
                    # The server extracts nothing: an empty context, so its span is a new root.
                    with self.server.start_as_current_span(f"tools/call {tool}", context=Context(), kind=SpanKind.SERVER) as srv:
                        srv.set_attributes(
                            {
                                "mcp.method.name": "tools/call",
                                "jsonrpc.request.id": request_id,
                                "gen_ai.operation.name": "execute_tool",
                                "gen_ai.tool.name": tool,
                                "mcp.session.id": SESSION,
                            }
                        )
        for p in self.providers:
            assert p.force_flush(30_000)
        return {
            "host_trace": format(agent.get_span_context().trace_id, "032x"),
            "client_span": format(client.get_span_context().span_id, "016x"),
            "server_trace": format(srv.get_span_context().trace_id, "032x"),
            "server_span": format(srv.get_span_context().span_id, "016x"),
        }

    def shutdown(self) -> None:
        for p in self.providers:
            p.shutdown()


class Follower:
    """`tripline check --follow` with its stdout read line by line on a thread."""

    def __init__(self, tripline_bin: str, data_dir: Path, state: Path):
        args = [
            tripline_bin, "--data-dir", str(data_dir), "check", "--follow", "--since", "last",
            "--state", str(state), "--settle", "2s", "--interval", "0.2",
        ]  # fmt: skip
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[dict] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))  # every line must be one JSON object

    def findings_until(self, done) -> list[dict]:
        """Finding lines until `done(findings so far)` holds at a batch line (deadline, not timing)."""
        found: list[dict] = []
        while True:
            try:
                line = self.lines.get(timeout=DEADLINE_S)
            except queue.Empty:
                raise AssertionError(f"no line from --follow in {DEADLINE_S}s; got {found}; stderr: {''.join(self.stderr)}")
            if "batch" in line:
                assert line["batch"]["scanned"]["spans"] > 0 and isinstance(line["batch"]["coverage"], list)
                if done(found):
                    return found
            else:
                found.append(line)


def key(f: dict) -> str:
    return f"{f['rule']}/{f['trace_id']}/{f['span_id']}"


def reported_keys(state: Path) -> set[str]:
    """The keys recorded beside the state file: `<state>.reported/<RULE>.keys`, an 8-byte header
    then 24-byte records, trace id and span id (docs/incremental.md)."""
    out = set()
    for f in Path(f"{state}.reported").glob("*.keys"):
        b = f.read_bytes()
        assert b[:8] == b"TLKEYS1\n", f
        for i in range(8, len(b), 24):
            out.add(f"{f.stem}/{b[i:i + 16].hex()}/{b[i + 16:i + 24].hex()}")
    return out


def test_follow_prints_each_new_finding_of_a_live_collector_once(start_collector, run_tripline, tripline_bin, tmp_path):
    data_dir = tmp_path / "data"
    state = tmp_path / "follow-state.json"
    collector = start_collector(data_dir, ["--max-file-age-secs", "1"])
    follower = Follower(tripline_bin, data_dir, state)
    agents = Agents(collector.traces_url)
    try:
        first = agents.broken_call("search_tickets", "1")

        def tl004_on(call):
            return lambda found: any(f["rule"] == "TL004" and f["span_id"] == call["server_span"] for f in found)

        round1 = follower.findings_until(tl004_on(first))
        tl004 = [f for f in round1 if f["rule"] == "TL004"]
        assert len(tl004) == 1, round1
        assert tl004[0]["trace_id"] == first["server_trace"]
        assert first["client_span"] in tl004[0]["related"], tl004[0]
        assert "trace context did not cross the MCP boundary" in tl004[0]["message"]

        second = agents.broken_call("get_ticket", "2")
        round2 = follower.findings_until(tl004_on(second))
        keys1 = {key(f) for f in round1}
        keys2 = [key(f) for f in round2]
        assert not keys1 & set(keys2), f"repeated: {keys1 & set(keys2)}"
        assert len(keys2) == len(set(keys2)), keys2
        assert {f["trace_id"] for f in round2} <= {second["host_trace"], second["server_trace"]}, round2
        assert [f["span_id"] for f in round2 if f["rule"] == "TL004"] == [second["server_span"]]
    finally:
        agents.shutdown()
        follower.proc.send_signal(signal.SIGTERM)
        code = follower.proc.wait(60)
    assert code == 0, "".join(follower.stderr)
    saved = json.loads(state.read_text())
    assert keys1 | set(keys2) <= reported_keys(state)
    assert saved["reported_keys"] == len(reported_keys(state))

    # A later run from the saved state repeats nothing (the collector is still running).
    again = run_tripline("--data-dir", str(data_dir), "check", "--since", "last", "--state", str(state),
                         "--settle", "0s", "--format", "json")  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["findings"] == []
    assert collector.stop() == 0
