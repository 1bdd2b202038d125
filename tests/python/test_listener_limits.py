"""Listener limits of the real binary: idle sockets cannot lock real clients out, whatever the
file-descriptor limit, and the collector logs in JSON when asked.

| case                    | set-up                                                    | expected                                    |
|-------------------------|-----------------------------------------------------------|---------------------------------------------|
| slowloris under ulimit  | collector started with RLIMIT_NOFILE=256; 400 idle sockets | a real HTTP and gRPC export still succeed; the collector never holds more fds than its limit |
| JSON logs               | `--log-format json`                                       | every log line on stderr is a JSON object   |
| log levels              | RUST_LOG=error with TRIPLINE_LOG=info, then TRIPLINE_LOG alone | RUST_LOG wins; TRIPLINE_LOG applies without it |
"""

from __future__ import annotations

import json
import os
import resource
import socket
import urllib.request

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

import otlp_http
import synthetic

NOFILE = 256


def good_request(batch: int = 0):
    return synthetic.tool_call_request("limits-svc", batch, 3, synthetic.DAY_START_NS + batch)


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_idle_sockets_beyond_the_fd_limit_do_not_lock_out_a_real_export(start_collector):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # The child inherits the lowered limit; this process needs more for its own sockets.
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, hard))
    try:
        collector = start_collector(extra_args=["--header-read-timeout-secs", "30"])
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    limit_line = collector.wait_for_log(r"listener limits")
    assert "max_connections=192" in limit_line, limit_line  # 256 minus a quarter for the store

    host, port = collector.http_addr.rsplit(":", 1)
    idle = []
    for i in range(400):
        s = socket.create_connection((host, int(port)), timeout=5)
        if i % 2:
            s.sendall(b"POST /v1/traces HTTP/1.1\r\nhost: x\r\n")  # headers never finished
        idle.append(s)
    try:
        assert open_fds(collector.proc.pid) <= NOFILE
        answer = otlp_http.export(collector.traces_url, good_request(1), timeout=10)
        assert answer.status == 200, answer
        with grpc.insecure_channel(collector.grpc_addr) as channel:
            trace_service_pb2_grpc.TraceServiceStub(channel).Export(good_request(2), timeout=10)
        assert open_fds(collector.proc.pid) <= NOFILE
        text = urllib.request.urlopen(f"{collector.http_url}/metrics", timeout=10).read().decode()
        evicted = next(float(l.split()[1]) for l in text.splitlines() if l.startswith("tripline_connections_evicted_total "))
        assert evicted >= 400 - 192, text
    finally:
        for s in idle:
            s.close()
    assert collector.running
    assert collector.stop() == 0
    assert "Too many open files" not in collector.output()


def test_json_log_format(start_collector):
    collector = start_collector(extra_args=["--log-format", "json"])
    answer = otlp_http.post(collector.traces_url, b"not protobuf", "application/x-protobuf")
    assert answer.status == 400
    line = collector.wait_for_log(r"request refused")
    record = json.loads(line)
    assert record["level"] == "WARN"
    assert record["fields"]["status"] == 400
    assert collector.stop() == 0
    for line in collector.log[1:]:
        if line.startswith("tripline collect: listening"):
            continue  # the one plain line the helper waits for
        json.loads(line)


def test_rust_log_comes_before_tripline_log(start_collector, monkeypatch):
    monkeypatch.setenv("RUST_LOG", "error")
    monkeypatch.setenv("TRIPLINE_LOG", "info")
    collector = start_collector()
    answer = otlp_http.post(collector.traces_url, b"not protobuf", "application/x-protobuf")
    assert answer.status == 400
    assert collector.stop() == 0
    assert not [l for l in collector.log if " INFO " in l or " WARN " in l], collector.output()

    monkeypatch.delenv("RUST_LOG")
    collector = start_collector(data_dir=collector.data_dir)
    collector.wait_for_log(r" INFO .*listener limits")
    assert collector.stop() == 0
