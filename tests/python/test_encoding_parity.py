"""The same spans sent as OTLP protobuf and as OTLP/JSON (plain, gzip and zstd bodies) must give
identical rows: the encoding is transport detail, never data. Only `received_at` and
`ingest_source` may differ (they describe the delivery, not the span).
"""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

import genai_scenario as sc
import otlp_http
from store import query

DELIVERY_COLUMNS = {"received_at", "ingest_source"}
VARIANTS = [("protobuf", None), ("json", None), ("protobuf", "gzip"), ("json", "gzip"), ("protobuf", "zstd"), ("json", "zstd")]


def stored_rows(data_dir):
    rows = query(data_dir, "SELECT * EXCLUDE (received_at, ingest_source) FROM spans ORDER BY span_id")
    assert all(not (DELIVERY_COLUMNS & set(r)) for r in rows)
    return rows


@pytest.fixture(scope="module")
def request_message():
    return encode_spans(sc.scenario_spans())


def test_json_body_is_otlp_json_not_protobuf_json(request_message):
    """Guard the fixture itself: OTLP/JSON ids are hex and enums integers."""
    body = otlp_http.json_dict(request_message)
    span = body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(span["traceId"]) == 32 and int(span["traceId"], 16) >= 0
    assert isinstance(span["kind"], int)
    assert isinstance(span["startTimeUnixNano"], str)


def test_protobuf_and_json_give_identical_rows(request_message, start_collector, tmp_path):
    stores = {}
    for encoding, compression in VARIANTS:
        collector = start_collector(tmp_path / f"{encoding}-{compression}")
        answer = otlp_http.export(collector.traces_url, request_message, encoding, compression)
        assert answer.status == 200, (encoding, compression, answer.body[:300])
        want_ctype = "application/json" if encoding == "json" else "application/x-protobuf"
        assert answer.content_type.startswith(want_ctype), "the answer comes in the request's encoding"
        response = otlp_http.parse_response(answer)
        assert response.partial_success.rejected_spans == 0
        assert collector.stop() == 0
        stores[(encoding, compression)] = stored_rows(collector.data_dir)

    reference = stores[("protobuf", None)]
    assert len(reference) == 7
    assert len({r["span_id"] for r in reference}) == 7
    for variant, rows in stores.items():
        assert len(rows) == len(reference), variant
        for got, want in zip(rows, reference):
            assert got == want, f"{variant}: span {want['name']!r} differs from the protobuf row"
