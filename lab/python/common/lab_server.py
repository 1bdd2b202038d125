"""The lab's MCP server (server.py) as a host starts it: its environment, and over Streamable
HTTP a running process on a free loopback port. Used by every host through agent_support.py."""
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The server's command line: this interpreter (the profile's venv) on server.py.
COMMAND = [sys.executable, os.path.join(HERE, "server.py")]


def server_env(transport, scenario, port=None):
    """The server process's whole environment: the sink, the transport, the scenario's server
    variant, the run directory on PYTHONPATH, and the port over HTTP."""
    env = {"PATH": os.environ.get("PATH", ""), "LAB_SINK": os.environ["LAB_SINK"], "LAB_TRANSPORT": transport,
           "LAB_SERVER_VARIANT": scenario.get("server", "structured"), "PYTHONPATH": HERE}
    if port:
        env["LAB_PORT"] = str(port)
    return env


@contextlib.contextmanager
def http_server(transport, scenario):
    """The server over Streamable HTTP on a free loopback port, once it accepts connections:
    yields its MCP endpoint URL. Stopped with SIGINT: uvicorn shuts down gracefully, mcp.run()
    returns and the SDK's atexit hook flushes the server's spans (SIGTERM would end the process
    without flushing them)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(COMMAND, env=server_env(transport, scenario, port))
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
