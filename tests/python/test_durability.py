"""Nothing acknowledged is ever lost, and nothing is stored twice.

The collector acknowledges a request only once its spans are in the write-ahead log, so SIGKILL
right after the last acknowledgement (before any Parquet could be written) followed by a restart
must yield exactly the acknowledged spans; a second restart must not replay them again.
"""

from __future__ import annotations

import threading
import time

import otlp_http
import synthetic
from store import parquet_files, query

N_REQUESTS = 40
SPANS_PER_REQUEST = 5


def stored_counts(data_dir) -> tuple[int, int]:
    row = query(data_dir, "SELECT count(*) AS n, count(DISTINCT span_id) AS d FROM spans")[0]
    return row["n"], row["d"]


def test_sigkill_after_acknowledged_requests_loses_nothing(start_collector, tmp_path):
    data_dir = tmp_path / "data"
    collector = start_collector(data_dir)
    for batch in range(N_REQUESTS):
        req = synthetic.tool_call_request("durable-svc", batch, SPANS_PER_REQUEST, synthetic.DAY_START_NS + batch * 10_000_000)
        answer = otlp_http.export(collector.traces_url, req)
        assert answer.status == 200, answer.body[:300]
        assert otlp_http.parse_response(answer).partial_success.rejected_spans == 0
    collector.kill()
    acknowledged = N_REQUESTS * SPANS_PER_REQUEST
    files_before_restart = len(parquet_files(data_dir))
    print(f"parquet files present at SIGKILL: {files_before_restart}")

    # restart on the same data dir: the WAL is replayed into Parquet; then a graceful stop
    restarted = start_collector(data_dir)
    assert restarted.stop() == 0
    assert stored_counts(data_dir) == (acknowledged, acknowledged)

    # and once more: a replay must never write the same spans a second time
    again = start_collector(data_dir)
    assert again.stop() == 0
    assert stored_counts(data_dir) == (acknowledged, acknowledged)
    assert not list(data_dir.glob("spans/**/*.tmp")), "temporary files must not survive a restart"


def test_sigkill_during_a_stream_keeps_every_acknowledged_span(start_collector, tmp_path):
    """SIGKILL while requests are in flight: every acknowledged span is stored exactly once;
    unacknowledged ones may or may not be (the client was never told either way)."""
    data_dir = tmp_path / "data"
    collector = start_collector(data_dir)
    acked: set[bytes] = set()
    sent: set[bytes] = set()
    stop = threading.Event()

    def sender(worker: int) -> None:
        batch = 0
        while not stop.is_set() and batch < 2_000:
            req = synthetic.tool_call_request(f"stream-{worker}", batch, SPANS_PER_REQUEST, synthetic.DAY_START_NS + batch * 1_000_000)
            ids = synthetic.span_ids(req)
            sent.update(ids)
            try:
                answer = otlp_http.export(collector.traces_url, req, timeout=5)
            except OSError:
                return  # connection refused / reset: the collector is gone
            if answer.status == 200 and otlp_http.parse_response(answer).partial_success.rejected_spans == 0:
                acked.update(ids)
            batch += 1

    workers = [threading.Thread(target=sender, args=(w,)) for w in range(3)]
    for w in workers:
        w.start()
    deadline = time.monotonic() + 20
    while len(acked) < 300 and time.monotonic() < deadline:
        time.sleep(0.05)
    collector.kill()
    stop.set()
    for w in workers:
        w.join(30)
    assert len(acked) >= 300, f"only {len(acked)} spans acknowledged in 20 s"

    restarted = start_collector(data_dir)
    assert restarted.stop() == 0
    stored = [r["span_id"] for r in query(data_dir, "SELECT span_id FROM spans")]
    assert len(stored) == len(set(stored)), "a span was stored twice"
    missing = acked - set(stored)
    assert not missing, f"{len(missing)} acknowledged spans lost"
    assert set(stored) <= sent


def log_request(batch: int, records: int):
    """A log request of `records` GenAI events with deterministic ids (the body names the record,
    so every acknowledged one can be found again)."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope
    from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource

    out = []
    for i in range(records):
        out.append(
            LogRecord(
                time_unix_nano=synthetic.DAY_START_NS + batch * 10_000_000 + i,
                trace_id=synthetic.ident("log-trace", batch, size=16),
                span_id=synthetic.ident("log-span", batch, i, size=8),
                event_name="gen_ai.user.message",
                body=AnyValue(string_value=f"record {batch}/{i}"),
                attributes=[synthetic.kv("gen_ai.provider.name", "openai")],
            )
        )
    return ExportLogsServiceRequest(
        resource_logs=[
            ResourceLogs(
                resource=Resource(attributes=[synthetic.kv("service.name", "durable-logs")]),
                scope_logs=[ScopeLogs(scope=InstrumentationScope(name="tripline.e2e.logs"), log_records=out)],
            )
        ]
    )


def stored_log_bodies(data_dir) -> list[str]:
    import duckdb

    files = list(data_dir.glob("logs/**/*.parquet"))
    if not files:
        return []
    return [
        r[0]
        for r in duckdb.connect()
        .execute(f"SELECT body FROM read_parquet('{data_dir}/logs/**/*.parquet', hive_partitioning = true)")
        .fetchall()
    ]


def test_sigkill_after_acknowledged_log_records_loses_nothing(start_collector, tmp_path):
    """Log records take the span path: acknowledged once in the WAL, so SIGKILL right after the
    last acknowledgement and a restart yield exactly the acknowledged records, in `logs/`, once;
    spans sent in between land in `spans/`, once."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

    data_dir = tmp_path / "data"
    collector = start_collector(data_dir)
    logs_url = f"{collector.http_url}/v1/logs"
    expected: list[str] = []
    for batch in range(N_REQUESTS):
        req = log_request(batch, SPANS_PER_REQUEST)
        answer = otlp_http.post(logs_url, req.SerializeToString(), "application/x-protobuf")
        assert answer.status == 200, answer.body[:300]
        resp = ExportLogsServiceResponse()
        resp.ParseFromString(answer.body)
        assert resp.partial_success.rejected_log_records == 0
        expected += [f'"record {batch}/{i}"' for i in range(SPANS_PER_REQUEST)]
        spans = synthetic.tool_call_request("durable-svc", batch, 2, synthetic.DAY_START_NS + batch * 10_000_000)
        assert otlp_http.export(collector.traces_url, spans).status == 200
    collector.kill()
    assert not list(data_dir.glob("logs/**/*.parquet")), "no log file can be committed this fast"

    restarted = start_collector(data_dir)
    assert restarted.stop() == 0
    assert sorted(stored_log_bodies(data_dir)) == sorted(expected)
    assert stored_counts(data_dir) == (N_REQUESTS * 2, N_REQUESTS * 2)

    again = start_collector(data_dir)
    assert again.stop() == 0
    assert sorted(stored_log_bodies(data_dir)) == sorted(expected), "a replay wrote log records twice"
    assert stored_counts(data_dir) == (N_REQUESTS * 2, N_REQUESTS * 2)
    assert not list(data_dir.glob("logs/**/*.tmp")), "temporary files must not survive a restart"
