"""`tripline ingest` reads every real recording in ../shared/recordings (protobuf, gzip protobuf,
gRPC-captured protobuf and OTLP/JSON export bodies of real MCP libraries) with zero rejected spans,
and the store then holds exactly the spans and traces MANIFEST.md lists for each recording.
"""

from __future__ import annotations

import re
from pathlib import Path

from store import query

SECTION = re.compile(r"^### `([^`]+/[^`]+)`\s*$")
COUNTS = re.compile(r"(\d+) spans in (\d+) traces")
SUMMARY = re.compile(r"(?P<accepted>\d+) spans accepted, (?P<rejected>\d+) rejected, (?P<failed>\d+) files failed")


def manifest_counts(recordings: Path) -> dict[str, tuple[int, int]]:
    """recording ("profile/variant") -> (spans, traces), as MANIFEST.md states them."""
    counts: dict[str, tuple[int, int]] = {}
    current = None
    for line in (recordings / "MANIFEST.md").read_text().splitlines():
        m = SECTION.match(line)
        if m:
            current = m.group(1)
            continue
        m = COUNTS.search(line)
        if m and current and current not in counts:
            counts[current] = (int(m.group(1)), int(m.group(2)))
    return counts


def recording_of(source: str, recordings: Path) -> str:
    """The "profile/variant" a stored row came from, from its `ingest_source` ("file:<path>")."""
    path = Path(source.removeprefix("file:")).resolve()
    rel = path.relative_to(recordings.resolve())
    return "/".join(rel.parts[:2])


def test_every_recording_ingests_with_manifest_counts(recordings, run_tripline, tmp_path):
    expected = manifest_counts(recordings)
    assert len(expected) == len([p for p in recordings.glob("*/*") if p.is_dir()]), "one MANIFEST entry per recording"
    data_dir = tmp_path / "data"
    proc = run_tripline("ingest", "--data-dir", str(data_dir), str(recordings))
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = SUMMARY.search(proc.stderr)
    assert summary, f"ingest prints its summary line:\n{proc.stderr[-2000:]}"
    total_spans = sum(s for s, _ in expected.values())
    assert summary.groupdict() == {"accepted": str(total_spans), "rejected": "0", "failed": "0"}, summary.group(0)

    assert query(data_dir, "SELECT count(*) AS n, count(DISTINCT span_id) AS d FROM spans") == [
        {"n": total_spans, "d": total_spans}
    ]
    per_recording: dict[str, list[int]] = {}
    for row in query(data_dir, "SELECT ingest_source, trace_id FROM spans"):
        per_recording.setdefault(recording_of(row["ingest_source"], recordings), []).append(row["trace_id"])
    got = {name: (len(ids), len(set(ids))) for name, ids in per_recording.items()}
    assert got == expected
