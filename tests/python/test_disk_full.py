"""A real full disk: a collector on a 16 MB tmpfs, a filler file that takes the space away.

What must hold (docs/reliability.md): while Parquet cannot be written, new data is refused with 503
and Retry-After *before* it is acknowledged, /health says why, no temporary file is left behind;
once space returns the collector recovers by itself (no restart) and every acknowledged span is in
Parquet exactly once, which DuckDB and `tripline verify` confirm.

Mounting needs root (CI runs as root); elsewhere the test is skipped and says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import duckdb
import pytest

T0 = 1_796_032_800_000_000_000


def body(first: int, n: int, pad: int) -> bytes:
    spans = [
        {
            "traceId": f"{i + 1:032x}",
            "spanId": f"{i + 1:016x}",
            "name": "execute_tool lookup",
            "startTimeUnixNano": str(T0 + i),
            "endTimeUnixNano": str(T0 + i + 1000),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                {"key": "pad", "value": {"stringValue": f"{i:08d}" + "x" * pad}},
            ],
        }
        for i in range(first, first + n)
    ]
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "disk"}}]},
                    "scopeSpans": [{"spans": spans}],
                }
            ]
        }
    ).encode()


def post(url: str, data: bytes) -> tuple[int, str | None]:
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, None
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("retry-after")


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture
def small_disk(tmp_path: Path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(path: Path, leave_bytes: int) -> None:
    st = os.statvfs(path.parent)
    free = st.f_bavail * st.f_frsize
    with open(path, "wb") as f:
        f.write(b"\0" * max(0, free - leave_bytes))


def test_full_disk_refuses_before_acknowledging_and_recovers_without_restart(
    small_disk: Path, start_collector, run_tripline
):
    data = small_disk / "data"
    c = start_collector(data, ["--max-file-age-secs", "1"])
    url = c.traces_url
    acked: list[tuple[int, int]] = []
    statuses: dict[int, int] = {}
    retry_after = None
    health_when_full = None
    filler = small_disk / "filler"
    fill(filler, 1_500_000)
    first = 0
    for _ in range(40):
        status, ra = post(url, body(first, 50, 2000))
        statuses[status] = statuses.get(status, 0) + 1
        if status == 200:
            acked.append((first, 50))
        elif status == 503:
            retry_after = retry_after or ra
        # While the WAL append or the Parquet writer fails, /health is 503 and says why.
        if health_when_full is None:
            health = get(f"{c.http_url}/health")
            if health[0] != 200:
                health_when_full = health
        first += 50
        time.sleep(0.05)
    assert statuses.get(503, 0) >= 1, f"the disk never filled up: {statuses}"
    assert set(statuses) <= {200, 503}, statuses
    assert retry_after is not None, "503 without Retry-After"
    assert health_when_full is not None and health_when_full[0] == 503, health_when_full
    assert "WAL" in health_when_full[1] or "parquet" in health_when_full[1], health_when_full
    tmp_left = [p for p in data.rglob("*.tmp") if "spans" in p.parts]
    assert tmp_left == [], f"temporary files left while full: {tmp_left}"

    # Space returns: the collector takes data again by itself.
    filler.unlink()
    deadline = time.monotonic() + 30
    while True:
        status, _ = post(url, body(first, 50, 10))
        if status == 200:
            acked.append((first, 50))
            first += 50
            break
        first += 50
        assert time.monotonic() < deadline, "no recovery within 30 s of freeing space"
        time.sleep(0.1)
    assert get(f"{c.http_url}/health")[0] == 200
    assert c.stop() == 0, c.output()

    want = {f"{i + 1:016x}" for start, n in acked for i in range(start, start + n)}
    rows = duckdb.sql(
        f"SELECT lower(hex(span_id)) AS id FROM read_parquet('{data}/spans/**/*.parquet', hive_partitioning=true)"
    ).fetchall()
    got = [r[0] for r in rows]
    assert len(got) == len(set(got)), "a span was stored twice"
    assert want <= set(got), f"{len(want - set(got))} acknowledged spans missing"
    verify = run_tripline("--data-dir", str(data), "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
