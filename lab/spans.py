"""Decodes the lab's recorded OTLP export bodies (OTLP/JSON `.json`, protobuf `.pb`, either with
`.gz`) into flat span dicts, so labels can be derived from what the spans actually say.

Needs opentelemetry-proto for `.pb` bodies (lab/record installs it into the lab cache venv).
"""
import base64
import glob
import gzip
import json
import os

KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


def _value(v):
    if "stringValue" in v:
        return v["stringValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return v["doubleValue"]
    if "arrayValue" in v:
        return [_value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: _value(kv.get("value", {})) for kv in v["kvlistValue"].get("values", [])}
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def _attrs(lst):
    return {a["key"]: _value(a.get("value", {})) for a in lst or []}


def _hex(v):
    """OTLP/JSON ids are hex; some exporters send base64. Normalise to lowercase hex."""
    if not v:
        return ""
    if all(c in "0123456789abcdefABCDEF" for c in v) and len(v) in (16, 32):
        return v.lower()
    return base64.b64decode(v).hex()


def _from_json(doc, source):
    out = []
    for rs in doc.get("resourceSpans", []):
        res = _attrs(rs.get("resource", {}).get("attributes"))
        for ss in rs.get("scopeSpans", []):
            scope = ss.get("scope", {}).get("name", "")
            for s in ss.get("spans", []):
                kind = s.get("kind", 0)
                code = s.get("status", {}).get("code", 0)
                out.append({
                    "trace_id": _hex(s.get("traceId")),
                    "span_id": _hex(s.get("spanId")),
                    "parent": _hex(s.get("parentSpanId")),
                    "name": s.get("name", ""),
                    "kind": KINDS.get(kind, kind) if isinstance(kind, int) else kind.replace("SPAN_KIND_", ""),
                    "status": STATUS.get(code, code) if isinstance(code, int) else code.replace("STATUS_CODE_", ""),
                    "status_message": s.get("status", {}).get("message", ""),
                    "start": int(s.get("startTimeUnixNano", 0)),
                    "end": int(s.get("endTimeUnixNano", 0)),
                    "attrs": _attrs(s.get("attributes")),
                    "events": [{"name": e.get("name"), "attrs": _attrs(e.get("attributes"))} for e in s.get("events", [])],
                    "scope": scope,
                    "service": res.get("service.name", ""),
                    "source": source,
                })
    return out


def _from_pb(body, source):
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    doc = MessageToDict(req)
    # MessageToDict renders bytes ids as base64 and enums as names; _from_json copes with both.
    return _from_json(doc, source)


def load(recording_dir):
    spans = []
    for path in sorted(glob.glob(os.path.join(recording_dir, "[0-9][0-9][0-9][0-9]-traces.*"))):
        with open(path, "rb") as f:
            body = f.read()
        name = os.path.basename(path)
        if name.endswith(".gz"):
            body = gzip.decompress(body)
            name = name[:-3]
        if name.endswith(".json"):
            spans += _from_json(json.loads(body), os.path.basename(path))
        else:
            spans += _from_pb(body, os.path.basename(path))
    spans.sort(key=lambda s: s["start"])
    return spans
