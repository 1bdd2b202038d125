"""Profile mcp2-native: the official Python MCP SDK 2.x (`mcp` 2.3.0) with its built-in
OpenTelemetry (client spans `MCP send {method}`, server spans `{method} [{name}]`, W3C context in
params._meta), which is a no-op until an SDK TracerProvider is installed: this only installs one."""
import otel_setup


def setup(role):
    otel_setup.start("warehouse-agent-host" if role == "client" else "warehouse-mcp-server", role)
