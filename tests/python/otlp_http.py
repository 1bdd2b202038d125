"""Raw OTLP/HTTP requests: request bodies in both encodings and a POST that never raises on a
non-2xx answer, for the tests that need exact control over bytes, headers and compression.

The JSON body is built from the SDK's own protobuf encoding and converted to OTLP/JSON as the
specification defines it (which differs from protobuf's canonical JSON mapping): ids as lowercase
hex rather than base64, enums as integers, keys in lowerCamelCase.
"""

from __future__ import annotations

import base64
import gzip
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def post(
    url: str,
    body: bytes,
    content_type: str | None,
    content_encoding: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30,
) -> Answer:
    req = urllib.request.Request(url, data=body, method="POST")
    if content_type is not None:
        req.add_header("Content-Type", content_type)
    if content_encoding is not None:
        req.add_header("Content-Encoding", content_encoding)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return Answer(resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read())
    except urllib.error.HTTPError as err:
        return Answer(err.code, {k.lower(): v for k, v in err.headers.items()}, err.read())


def protobuf_body(request: ExportTraceServiceRequest) -> bytes:
    return request.SerializeToString()


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in ID_FIELDS and isinstance(v, str) else _hex_ids(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def json_dict(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """OTLP/JSON form of a request (hex ids, integer enums, int64 as strings)."""
    return _hex_ids(MessageToDict(request, use_integers_for_enums=True))


def json_body(request: ExportTraceServiceRequest) -> bytes:
    return json.dumps(json_dict(request)).encode()


def compress(body: bytes, encoding: str | None) -> bytes:
    if encoding is None:
        return body
    if encoding == "gzip":
        return gzip.compress(body)
    if encoding == "zstd":
        import zstandard

        return zstandard.ZstdCompressor().compress(body)
    raise ValueError(encoding)


def export(
    url: str,
    request: ExportTraceServiceRequest,
    encoding: str = "protobuf",
    compression: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30,
) -> Answer:
    """POST one request in the given encoding ('protobuf' | 'json')."""
    if encoding == "protobuf":
        body, ctype = protobuf_body(request), "application/x-protobuf"
    else:
        body, ctype = json_body(request), "application/json"
    return post(url, compress(body, compression), ctype, compression, headers, timeout)


def parse_response(answer: Answer) -> ExportTraceServiceResponse:
    """The ExportTraceServiceResponse of a 200, decoded in the encoding the collector answered in."""
    resp = ExportTraceServiceResponse()
    if answer.content_type.startswith("application/json"):
        from google.protobuf.json_format import Parse

        Parse(answer.body.decode(), resp)
    else:
        resp.ParseFromString(answer.body)
    return resp
