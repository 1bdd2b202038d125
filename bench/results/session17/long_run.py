"""One agent run of N turns (a `chat` span showing the model its tool catalog, then the
`execute_tool` span of the tool it called), as OTLP/JSON: the shape for which finding the model
call that preceded each tool call used to walk the whole run per call (session 17).

    python3 long_run.py N > long-run-N.json
    tripline ingest long-run-N.json --data-dir STORE
    /usr/bin/time tripline check --data-dir STORE --format json
"""
import json
import sys

n = int(sys.argv[1])
trace = "4c" * 16
t0 = 1_764_000_000_000_000_000
tools = json.dumps([{"type": "function", "name": f"tool_{k}", "description": "d"} for k in range(5)])


def sid(i):
    return f"{i + 1:016x}"


def attr(k, v):
    return {"key": k, "value": {"stringValue": v}}


spans = [{
    "traceId": trace, "spanId": sid(0), "name": "invoke_agent long-runner", "kind": 1,
    "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + (2 * n + 2) * 1_000_000),
    "attributes": [attr("gen_ai.operation.name", "invoke_agent"),
                   attr("gen_ai.agent.name", "long-runner")],
}]
for i in range(n):
    start = t0 + (2 * i + 1) * 1_000_000
    spans.append({
        "traceId": trace, "spanId": sid(2 * i + 1), "parentSpanId": sid(0),
        "name": "chat m", "kind": 3,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 500_000),
        "attributes": [attr("gen_ai.operation.name", "chat"), attr("gen_ai.request.model", "m"),
                       attr("gen_ai.provider.name", "p"), attr("gen_ai.tool.definitions", tools)],
    })
    spans.append({
        "traceId": trace, "spanId": sid(2 * i + 2), "parentSpanId": sid(0),
        "name": f"execute_tool tool_{i % 5}", "kind": 1,
        "startTimeUnixNano": str(start + 600_000), "endTimeUnixNano": str(start + 900_000),
        "attributes": [attr("gen_ai.operation.name", "execute_tool"),
                       attr("gen_ai.tool.name", f"tool_{i % 5}"),
                       attr("gen_ai.tool.call.id", f"call_{i}")],
    })
json.dump({"resourceSpans": [{
    "resource": {"attributes": [attr("service.name", "long-run-host")]},
    "scopeSpans": [{"scope": {"name": "long-run"}, "spans": spans}],
}]}, sys.stdout)
