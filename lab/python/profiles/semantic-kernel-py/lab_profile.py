"""Profile semantic-kernel-py: the host is a Microsoft Semantic Kernel `ChatCompletionAgent`
(agent_host.py, not the lab's scripted host) with Semantic Kernel's built-in OpenTelemetry
switched on as its docs say: SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS=true and
..._SENSITIVE=true (content), read by SK when its modules are imported, and the app's own SDK
TracerProvider (otel_setup: OTLP/HTTP protobuf to the sink, no resource detectors). SK's chat
content events (gen_ai.*.message, gen_ai.choice) are Python log records, not span events: only
traces are recorded. SK pins `mcp<2`: both processes run mcp 1.30.0, which has no telemetry of
its own, so the server (the lab's server on FastMCP 1.x) emits no span, and nothing puts a trace
context into params._meta."""
import os

import otel_setup


def setup(role):
    if role != "client":
        otel_setup.start("warehouse-mcp-server", role)
        return
    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"
    return otel_setup.start("warehouse-agent-host", role)
