"""The store on S3-compatible object storage, against a real server (Garage, tests/python/garage.py).

What must hold (issue 11, items 4 and 5):
- `tripline collect --data-dir s3://bucket/prefix --wal-dir DIR` acknowledges from its local WAL
  and uploads part files whole; SIGKILL during an upload loses nothing acknowledged, and an
  upload the server stored but the collector never heard about is not stored twice;
- two collectors write one prefix without a clash: the union of their rows, names never collide;
- DuckDB (httpfs) and pyarrow (S3FileSystem) read the prefix with the count `tripline query`
  reports;
- `check` split into two time windows finds exactly what one run over the whole store finds
  (docs/scale-out.md: windows spread over machines).
The only S3 settings tripline gets are the four standard AWS variables (an http:// endpoint,
no AWS_ALLOW_HTTP).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

import otlp_http
import synthetic
from collector_process import Collector
from conftest import REPO_ROOT
from stall_proxy import HOLD_REQUESTS, HOLD_RESPONSES, StallProxy

SAMPLES = REPO_ROOT / "samples"
# The object name of an uploaded part: the collector's WAL epoch and the WAL records it holds.
UPLOADED = re.compile(r"spans/date=[0-9-]+/hour=\d+/part-([0-9A-Z]{26})-(\d{20})-(\d{20})\.parquet$")
SPANS_PER_REQUEST = 5


def tripline(binary: str, env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [binary, *args], capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL
    )
    print(f"$ tripline {' '.join(args)}\n--- stdout ---\n{proc.stdout[-3000:]}\n--- stderr ---\n{proc.stderr[-3000:]}")
    return proc


def counts(binary: str, env: dict[str, str], url: str) -> tuple[int, int]:
    """`count(*)` and `count(DISTINCT span_id)` as `tripline query` reports them."""
    proc = tripline(
        binary, env, "query", "--data-dir", url, "--format", "csv",
        "SELECT count(*) AS n, count(DISTINCT span_id) AS d FROM spans",
    )
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.strip().splitlines()[:2]
    assert header == "n,d", proc.stdout
    n, d = row.split(",")
    return int(n), int(d)


def export(collector: Collector, service: str, first: int, n: int, start_ns: int = synthetic.DAY_START_NS) -> int:
    """Send `n` requests; returns how many spans were acknowledged (every one must be)."""
    for batch in range(first, first + n):
        req = synthetic.tool_call_request(service, batch, SPANS_PER_REQUEST, start_ns + batch * 10_000_000)
        answer = otlp_http.export(collector.traces_url, req, timeout=10)
        assert answer.status == 200, answer.body[:300]
        assert otlp_http.parse_response(answer).partial_success.rejected_spans == 0
    return n * SPANS_PER_REQUEST


def uploaded_parts(keys: list[str]) -> list[tuple[str, int, int]]:
    """(epoch, first, last) of every key; every key under spans/ must be an uploaded part."""
    out = []
    for k in keys:
        m = UPLOADED.search(k)
        assert m, f"unexpected object {k}"
        out.append((m.group(1), int(m.group(2)), int(m.group(3))))
    return out


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def collector_args(wal_dir: Path) -> list[str]:
    # Files roll after a second, so uploads happen while the test watches.
    return ["--wal-dir", str(wal_dir), "--max-file-age-secs", "1"]


def test_kill_during_upload_loses_nothing_acknowledged(garage, tripline_bin, tmp_path):
    """SIGKILL while the collector is inside a PUT that never reached the server: after a
    restart every acknowledged span is in the bucket, once."""
    bucket = garage.bucket("kill-during-put")
    url = f"s3://{bucket}/store"
    proxy = StallProxy(garage.s3_port)
    args = collector_args(tmp_path / "wal")
    try:
        collector = Collector(tripline_bin, url, args, env=garage.env(proxy.endpoint)).start()
        proxy.mode = HOLD_REQUESTS
        acked = export(collector, "kill-during-put", 0, 20)
        assert proxy.put_held.wait(30), f"the collector never began an upload:\n{collector.output()}"
        # Still acknowledged while the upload hangs: from the WAL, not from the bucket.
        acked += export(collector, "kill-during-put", 20, 10)
        collector.kill()
        print(collector.output())
    finally:
        proxy.close()
    assert garage.objects(bucket, "store") == [], "nothing may have reached the server"

    restarted = Collector(tripline_bin, url, args, env=garage.env()).start()
    assert restarted.stop() == 0, restarted.output()
    print(restarted.output())
    assert counts(tripline_bin, garage.env(), url) == (acked, acked)
    assert uploaded_parts(garage.objects(bucket, "store"))


def test_upload_stored_but_unanswered_is_not_stored_twice(garage, tripline_bin, tmp_path):
    """SIGKILL after the server stored a part but before the collector heard back (so before
    the WAL was released): the restart replays the WAL, finds the object by its name (epoch and
    WAL range) and uploads only the rest. No row twice, none missing."""
    bucket = garage.bucket("kill-after-put")
    url = f"s3://{bucket}/store"
    proxy = StallProxy(garage.s3_port)
    args = collector_args(tmp_path / "wal")
    try:
        collector = Collector(tripline_bin, url, args, env=garage.env(proxy.endpoint)).start()
        proxy.mode = HOLD_RESPONSES
        acked = export(collector, "kill-after-put", 0, 20)
        assert proxy.put_answer_held.wait(30), f"no upload was answered:\n{collector.output()}"
        stored = wait_for(lambda: garage.objects(bucket, "store"), 10, "the stored object")
        acked += export(collector, "kill-after-put", 20, 10)
        collector.kill()
        print(collector.output())
    finally:
        proxy.close()
    before = uploaded_parts(stored)

    restarted = Collector(tripline_bin, url, args, env=garage.env()).start()
    assert restarted.stop() == 0, restarted.output()
    print(restarted.output())
    assert counts(tripline_bin, garage.env(), url) == (acked, acked)
    after = uploaded_parts(garage.objects(bucket, "store"))
    assert set(before) <= set(after), "the object uploaded before the crash is kept as it was"
    # One collector, one WAL: one epoch, and its ranges per partition never overlap.
    assert len({e for e, _, _ in after}) == 1
    ranges = sorted((a, b) for _, a, b in after)
    assert all(b1 < a2 for (_, b1), (a2, _) in zip(ranges, ranges[1:])), ranges


def sample_span_count(files: list[Path]) -> int:
    total = 0
    for f in files:
        doc = json.loads(f.read_text())
        total += sum(len(ss["spans"]) for rs in doc["resourceSpans"] for ss in rs["scopeSpans"])
    return total


@pytest.fixture(scope="module")
def shared_prefix(garage, tripline_bin, tmp_path_factory):
    """Two collectors (separate WALs, as on two machines) writing one bucket prefix: the sample
    scenarios split between them (as a load balancer routing by trace id spreads traces), plus
    synthetic spans from both in the same hour, so both write the same partition."""
    bucket = garage.bucket("shared-prefix")
    url = f"s3://{bucket}/traces"
    root = tmp_path_factory.mktemp("two-collectors")
    env = garage.env()
    collectors = [Collector(tripline_bin, url, collector_args(root / f"wal-{i}"), env=env).start() for i in range(2)]
    samples = sorted((SAMPLES / "traces").glob("*.json"))
    expected = sample_span_count(samples)
    try:
        for i, c in enumerate(collectors):
            proc = tripline(tripline_bin, env, "ingest", "--via", c.http_url, *map(str, samples[i::2]))
            assert proc.returncode == 0, proc.stderr
            expected += export(c, f"shared-{i}", 0, 10)
    finally:
        for c in collectors:
            code = c.stop()
            print(c.output())
            assert code == 0
    return {"url": url, "bucket": bucket, "prefix": "traces", "expected": expected}


def test_two_collectors_share_one_prefix_without_a_clash(garage, tripline_bin, shared_prefix):
    keys = garage.objects(shared_prefix["bucket"], shared_prefix["prefix"])
    parts = uploaded_parts(keys)
    epochs = {e for e, _, _ in parts}
    assert len(epochs) == 2, f"one epoch per collector: {sorted(epochs)}"
    # The synthetic hour holds parts of both collectors, side by side.
    day = {e for (e, _, _), k in zip(parts, keys) if "date=2026-11-30/hour=0/" in k}
    assert day == epochs
    expected = shared_prefix["expected"]
    assert counts(tripline_bin, garage.env(), shared_prefix["url"]) == (expected, expected)


def httpfs_python() -> str:
    venv = Path(os.environ.get("TRIPLINE_HTTPFS_VENV", Path.home() / ".cache" / "tripline-venv-httpfs"))
    python = venv / "bin" / "python"
    if not os.access(python, os.X_OK):
        hint = "scripts/test creates it from tests/python/requirements-httpfs.txt"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"DuckDB httpfs venv missing at {venv}: {hint}")
        pytest.skip(f"DuckDB httpfs venv missing at {venv}: {hint}")
    return str(python)


# DuckDB with its httpfs extension, run in its own venv: the pinned duckdb of requirements.txt
# (2.0.1) has no httpfs build on PyPI, and the network is closed to DuckDB's extension server,
# so requirements-httpfs.txt pins duckdb 1.5.5 with the matching duckdb-extension-httpfs wheel.
DUCKDB_SCRIPT = """
import pathlib, sys, duckdb, duckdb_extension_httpfs
key, secret, endpoint, glob = sys.argv[1:5]
ext = next(pathlib.Path(duckdb_extension_httpfs.__file__).parent.glob("extensions/*/httpfs.duckdb_extension"))
con = duckdb.connect()
con.execute(f"LOAD '{ext}'")
con.execute(f"CREATE SECRET (TYPE s3, KEY_ID '{key}', SECRET '{secret}', REGION 'garage', "
            f"ENDPOINT '{endpoint}', URL_STYLE 'path', USE_SSL false)")
n, d = con.sql(f"SELECT count(*), count(DISTINCT span_id) FROM read_parquet('{glob}', hive_partitioning=true)").fetchone()
print(n, d)
"""


def test_duckdb_and_pyarrow_read_the_prefix_with_tripline_counts(garage, tripline_bin, shared_prefix):
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    ours = counts(tripline_bin, garage.env(), shared_prefix["url"])
    assert ours == (shared_prefix["expected"], shared_prefix["expected"])

    glob = f"s3://{shared_prefix['bucket']}/{shared_prefix['prefix']}/spans/**/*.parquet"
    endpoint = garage.endpoint.removeprefix("http://")
    proc = subprocess.run(
        [httpfs_python(), "-c", DUCKDB_SCRIPT, garage.key_id, garage.secret, endpoint, glob],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    n, d = map(int, proc.stdout.split())
    assert (n, d) == ours, "DuckDB httpfs"

    dataset = ds.dataset(
        f"{shared_prefix['bucket']}/{shared_prefix['prefix']}/spans",
        filesystem=garage.filesystem(), format="parquet", partitioning="hive",
    )
    table = dataset.to_table(columns=["span_id"])
    assert (table.num_rows, len(pc.unique(table["span_id"]))) == ours, "pyarrow S3FileSystem"


def check_findings(binary: str, env: dict[str, str], url: str, *window: str) -> list[dict]:
    proc = tripline(
        binary, env, "check", "--data-dir", url, "--policy", str(SAMPLES / "policy.toml"), "--format", "json", *window
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"]


def finding_key(f: dict) -> str:
    return json.dumps(f, sort_keys=True)


def test_split_check_finds_what_one_run_finds(garage, tripline_bin, shared_prefix):
    """docs/scale-out.md: a check over a large store is split into time windows, one per
    machine, and the findings are concatenated. Here two windows split between two scenarios
    (the samples run 10 minutes apart) over the two collectors' prefix.

    The boundary is 10:25, not 10:15: TL006 judges the newest `tools/list` of each server in the
    scanned spans, and a window ending at 10:15 has the annotation-mismatch scenario (10:10) as
    its newest parts-server catalog, so it reports a TL006 the whole store (whose newest catalog,
    10:20 on, is annotated) does not. docs/scale-out.md says so."""
    env, url = garage.env(), shared_prefix["url"]
    single = check_findings(tripline_bin, env, url)
    first = check_findings(tripline_bin, env, url, "--until", "2026-11-02T10:24:59.999999999Z")
    second = check_findings(tripline_bin, env, url, "--since", "2026-11-02T10:25:00Z")
    assert single, "the samples hold findings: an empty run proves nothing"
    assert first and second, "each window holds findings of its own"
    merged = sorted(map(finding_key, first + second))
    whole = sorted(map(finding_key, single))
    diff = {
        k: (whole.count(k), [finding_key(f) for f in first].count(k), [finding_key(f) for f in second].count(k))
        for k in set(merged) ^ set(whole) | {k for k in merged if merged.count(k) != whole.count(k)}
    }
    assert merged == whole, f"(single, first window, second window) counts of the findings that differ: {diff}"


def since_last(binary: str, env: dict[str, str], url: str, state: Path) -> tuple[dict, str, int]:
    proc = tripline(
        binary, env, "check", "--data-dir", url, "--since", "last", "--state", str(state), "--settle", "0s",
        "--policy", str(SAMPLES / "policy.toml"), "--format", "json",
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout), proc.stderr, proc.returncode


def ingest_through_a_collector(binary: str, env: dict[str, str], url: str, wal_dir: Path, files: list[Path]) -> None:
    collector = Collector(binary, url, collector_args(wal_dir), env=env).start()
    try:
        proc = tripline(binary, env, "ingest", "--via", collector.http_url, *map(str, files))
        assert proc.returncode == 0, proc.stderr
    finally:
        code = collector.stop()
        print(collector.output())
        assert code == 0, "SIGTERM uploads everything and exits 0"


def test_since_last_on_the_prefix_reports_the_full_check_once(garage, tripline_bin, tmp_path):
    """`check --since last` on `s3://`: what each run reads is listed on the bucket (the new
    objects by a LIST, their four columns by ranged GETs); two runs over a prefix filled in two
    steps report exactly what one full check reports, each finding once; a run with nothing new
    says so and exits 0."""
    env = garage.env()
    url = f"s3://{garage.bucket('incremental')}/checks"
    state = tmp_path / "state.json"
    samples = sorted((SAMPLES / "traces").glob("*.json"))
    first = [p for p in samples if p.name.startswith(("crm-", "atlas-"))]
    second = [p for p in samples if p not in first]
    assert first and second

    ingest_through_a_collector(tripline_bin, env, url, tmp_path / "wal", first)
    run1, _, _ = since_last(tripline_bin, env, url, state)
    assert run1["incremental"]["new_files"] > 0, run1["incremental"]
    assert run1["incremental"]["previous_run"] is None

    ingest_through_a_collector(tripline_bin, env, url, tmp_path / "wal", second)
    run2, _, _ = since_last(tripline_bin, env, url, state)
    full = check_findings(tripline_bin, env, url)
    assert full, "the samples hold findings: an empty run proves nothing"

    def ident(f: dict) -> str:
        return f"{f['rule']}/{f['trace_id']}/{f['span_id']}"

    assert run2["incremental"]["previous_run"], run2["incremental"]
    assert run2["incremental"]["new_files"] > 0, run2["incremental"]
    assert run2["findings"], "the second half holds findings of its own"
    repeated = {ident(f) for f in run1["findings"]} & {ident(f) for f in run2["findings"]}
    assert not repeated, f"reported twice: {sorted(repeated)}"
    union = sorted(map(finding_key, run1["findings"] + run2["findings"]))
    assert union == sorted(map(finding_key, full)), "run 1 + run 2 != one full check"

    run3, stderr, code = since_last(tripline_bin, env, url, state)
    assert code == 0, stderr
    assert "nothing new since" in stderr, stderr
    assert run3["findings"] == [] and "scanned" not in run3, run3
    assert run3["incremental"]["new_files"] == 0
