"""Bad requests get the answer the OTLP specification prescribes, never a 500 and never a crash,
and the collector keeps serving good requests afterwards.

| case                         | request                                   | expected answer                         |
|------------------------------|-------------------------------------------|-----------------------------------------|
| missing / wrong bearer token | no or wrong `Authorization` header        | 401 (HTTP), UNAUTHENTICATED (gRPC)      |
| right bearer token           | `Authorization: Bearer <token>`           | 200                                     |
| unknown content type         | `text/plain`                              | 415                                     |
| truncated protobuf           | a valid body cut in half                  | 400, `google.rpc.Status` protobuf body  |
| JSON with wrong types        | `"spans": "oops"`                         | 400, `google.rpc.Status` JSON body      |
| body over the cap            | 96 KiB with `--max-body-bytes 65536`      | 413                                     |
| gzip bomb                    | 8 KiB of gzip expanding to 16 MiB         | 413 (the cap applies after decompression) |
| bad ids                      | all-zero trace id, 4-byte span id         | 200, `partial_success.rejected_spans`=2, the valid span stored |
"""

from __future__ import annotations

import gzip
import json

import grpc
import pytest
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

import otlp_http
import synthetic
from store import query

TOKEN = "s3cret-e2e-token"
CAP = 65536


def good_request(batch: int = 0):
    return synthetic.tool_call_request("negative-svc", batch, 3, synthetic.DAY_START_NS + batch)


def assert_logged(collector, status: int) -> None:
    """Every non-2xx answer is logged with its reason."""
    collector.wait_for_log(rf"request refused.*status={status}\b.*reason=\S")


def assert_still_serving(collector, batch: int = 99) -> None:
    answer = otlp_http.export(collector.traces_url, good_request(batch))
    assert answer.status == 200, answer.body[:300]


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return path


def test_bearer_token_over_http(start_collector, token_file):
    collector = start_collector(extra_args=["--auth-token-file", str(token_file)])
    assert otlp_http.export(collector.traces_url, good_request(1)).status == 401
    wrong = otlp_http.export(collector.traces_url, good_request(2), headers={"Authorization": "Bearer nope"})
    assert wrong.status == 401
    assert_logged(collector, 401)
    ok = otlp_http.export(collector.traces_url, good_request(3), headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status == 200, ok.body[:300]
    assert collector.stop() == 0
    # only the authorised request was stored
    assert query(collector.data_dir, "SELECT count(*) AS n FROM spans") == [{"n": 3}]


def test_bearer_token_over_grpc(start_collector, token_file):
    collector = start_collector(extra_args=["--auth-token-file", str(token_file)])
    with grpc.insecure_channel(collector.grpc_addr) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as err:
            stub.Export(good_request(1), timeout=10)
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        response = stub.Export(good_request(2), timeout=10, metadata=[("authorization", f"Bearer {TOKEN}")])
        assert response.partial_success.rejected_spans == 0
    assert collector.stop() == 0
    assert query(collector.data_dir, "SELECT count(*) AS n FROM spans") == [{"n": 3}]


def test_unknown_content_type_is_415(start_collector):
    collector = start_collector()
    body = otlp_http.protobuf_body(good_request())
    assert otlp_http.post(collector.traces_url, body, "text/plain").status == 415
    assert_logged(collector, 415)
    assert_still_serving(collector)


def test_truncated_protobuf_is_400_with_rpc_status(start_collector):
    collector = start_collector()
    body = otlp_http.protobuf_body(good_request())
    answer = otlp_http.post(collector.traces_url, body[: len(body) // 2], "application/x-protobuf")
    assert answer.status == 400
    assert answer.content_type.startswith("application/x-protobuf")
    status = status_pb2.Status()
    status.ParseFromString(answer.body)
    assert status.message, "the Status says what was wrong"
    assert_logged(collector, 400)
    assert_still_serving(collector)


def test_json_with_wrong_types_is_400_with_json_rpc_status(start_collector):
    collector = start_collector()
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": "oops"}]}]}).encode()
    answer = otlp_http.post(collector.traces_url, body, "application/json")
    assert answer.status == 400
    assert answer.content_type.startswith("application/json")
    status = json.loads(answer.body)
    assert status["message"]
    assert_logged(collector, 400)
    assert_still_serving(collector)


def test_body_over_the_cap_is_413(start_collector):
    collector = start_collector(extra_args=["--max-body-bytes", str(CAP)])
    answer = otlp_http.post(collector.traces_url, b"\x0a" * (96 * 1024), "application/x-protobuf")
    assert answer.status == 413
    assert_logged(collector, 413)
    assert_still_serving(collector)


def test_gzip_bomb_is_413(start_collector):
    collector = start_collector(extra_args=["--max-body-bytes", str(CAP)])
    bomb = gzip.compress(b"\0" * (16 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 32 * 1024
    answer = otlp_http.post(collector.traces_url, bomb, "application/x-protobuf", "gzip")
    assert answer.status == 413
    assert_logged(collector, 413)
    assert_still_serving(collector)


def test_bad_ids_are_rejected_spans_in_a_partial_success(start_collector):
    collector = start_collector()
    trace_id = synthetic.ident("trace", "bad-ids", size=16)
    stored_ids = {}
    for encoding in ("protobuf", "json"):
        good_id = synthetic.ident("span", "bad-ids", encoding, size=8)
        stored_ids[good_id] = f"valid {encoding}"
        req = synthetic.request(
            "negative-svc",
            [
                synthetic.span(trace_id, good_id, f"valid {encoding}", synthetic.DAY_START_NS),
                synthetic.span(b"\0" * 16, synthetic.ident("span", "zero", encoding, size=8), "zero trace id", synthetic.DAY_START_NS),
                synthetic.span(trace_id, b"\1\2\3\4", "short span id", synthetic.DAY_START_NS),
            ],
        )
        answer = otlp_http.export(collector.traces_url, req, encoding)
        assert answer.status == 200, answer.body[:300]
        partial = otlp_http.parse_response(answer).partial_success
        assert partial.rejected_spans == 2, encoding
        assert partial.error_message, "the partial success says why spans were rejected"
    assert collector.stop() == 0
    rows = query(collector.data_dir, "SELECT span_id, name FROM spans ORDER BY name")
    assert {r["span_id"]: r["name"] for r in rows} == stored_ids
    assert len(rows) == 2
