"""Probe sentry-probe (not a recorded profile): Sentry's MCP integration (sentry_sdk
MCPIntegration) with its OTLPIntegration, to check whether its MCP spans can be exported as OTLP.
The DSN points at the recording sink, so whatever Sentry sends lands there too: OTLP bodies on
.../integration/otlp/v1/traces (OTel spans only) and Sentry envelopes on .../envelope/."""
import os
from urllib.parse import urlparse

import otel_setup
import sentry_sdk
from sentry_sdk.integrations.mcp import MCPIntegration
from sentry_sdk.integrations.otlp import OTLPIntegration


def setup(role):
    otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
    sink = urlparse(os.environ["LAB_SINK"])
    sentry_sdk.init(
        dsn=f"http://labkey@{sink.netloc}/1",
        traces_sample_rate=1.0,
        send_default_pii=True,
        integrations=[MCPIntegration(), OTLPIntegration(setup_otlp_traces_exporter=False)],
    )
