"""Profile openlit-py: OpenLIT's Python SDK (`openlit`), its MCP instrumentation on mcp 1.30.0
(FastMCP server, ClientSession host). OpenLIT owns the OpenTelemetry set-up as its users let it:
`openlit.init(otlp_endpoint=LAB_SINK, ...)` creates the TracerProvider (Resource.create: service
name, deployment.environment, telemetry.sdk.name=openlit, plus OTEL_RESOURCE_ATTRIBUTES; no host or
process detector) and an OTLP/HTTP protobuf span exporter. Metrics and events off (traces only),
pricing from an empty local file (the default fetches a price list from the internet). Every other
instrumentor openlit.init finds installed (requests, httpx, starlette, ...) stays on, as by default."""
import os
import tempfile


def setup(role):
    os.environ["OTEL_RESOURCE_ATTRIBUTES"] = f"service.version=lab-1,lab.role={role}"
    pricing = os.path.join(tempfile.gettempdir(), "tripline-lab-openlit-pricing.json")
    with open(pricing, "w") as f:
        f.write("{}")
    import openlit

    openlit.init(
        service_name="warehouse-agent-host" if role == "client" else "warehouse-mcp-server",
        environment="lab",
        otlp_endpoint=os.environ["LAB_SINK"],
        disable_metrics=True,
        disable_events=True,
        pricing_json=pricing,
    )
