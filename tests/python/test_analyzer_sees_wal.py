"""The analyzer shows acknowledged spans before the collector commits them to Parquet.

A running collector keeps acknowledged spans in its write-ahead log for up to --max-file-age
(60 s by default) before a Parquet file holds them. `tripline query` / `check` read the WAL tail
too, so a query right after an export sees every acknowledged span, exactly once, and says how
many came from the WAL; reading next to a collector that is writing (a record half-appended at
the end of the WAL is normal) never fails and never double-counts.
"""

from __future__ import annotations

import json
import threading
import time

import otlp_http
import synthetic

SPANS_PER_REQUEST = 5


def counts(run_tripline, data_dir) -> tuple[int, int, str]:
    proc = run_tripline(
        "--data-dir",
        str(data_dir),
        "query",
        "SELECT count(*) AS n, count(DISTINCT span_id) AS d FROM spans",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)[0]
    return row["n"], row["d"], proc.stderr


def test_acknowledged_spans_are_visible_before_the_commit(start_collector, run_tripline, tmp_path):
    data_dir = tmp_path / "data"
    collector = start_collector(data_dir)
    for batch in range(10):
        req = synthetic.tool_call_request("wal-svc", batch, SPANS_PER_REQUEST, synthetic.DAY_START_NS + batch * 10_000_000)
        assert otlp_http.export(collector.traces_url, req).status == 200
    acknowledged = 10 * SPANS_PER_REQUEST

    n, d, stderr = counts(run_tripline, data_dir)
    assert (n, d) == (acknowledged, acknowledged)
    assert f"{acknowledged} of them acknowledged but still in the WAL" in stderr
    check = run_tripline("--data-dir", str(data_dir), "check", "--format", "json", "--fail-on", "critical")
    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout)["scanned"]["wal_spans"] == acknowledged

    assert collector.stop() == 0
    n, d, stderr = counts(run_tripline, data_dir)
    assert (n, d) == (acknowledged, acknowledged)
    assert "still in the WAL" not in stderr


def test_reading_next_to_a_writing_collector_never_fails_or_double_counts(start_collector, run_tripline, tmp_path):
    data_dir = tmp_path / "data"
    collector = start_collector(data_dir, ["--max-file-age-secs", "1"])
    acked: set[bytes] = set()
    sent: set[bytes] = set()
    stop = threading.Event()

    def sender(worker: int) -> None:
        batch = 0
        while not stop.is_set() and batch < 2_000:
            req = synthetic.tool_call_request(f"busy-{worker}", batch, SPANS_PER_REQUEST, synthetic.DAY_START_NS + batch * 1_000_000)
            ids = synthetic.span_ids(req)
            sent.update(ids)
            try:
                answer = otlp_http.export(collector.traces_url, req, timeout=5)
            except OSError:
                return
            if answer.status == 200:
                acked.update(ids)
            batch += 1

    workers = [threading.Thread(target=sender, args=(w,)) for w in range(2)]
    for w in workers:
        w.start()
    try:
        deadline = time.monotonic() + 20
        while len(acked) < 100 and time.monotonic() < deadline:
            time.sleep(0.05)
        # Reads for a few seconds, so several 1 s file commits (and WAL releases) happen meanwhile.
        reads = 0
        until = time.monotonic() + 3
        while reads < 4 or time.monotonic() < until:
            reads += 1
            acked_before = len(acked)
            n, d, stderr = counts(run_tripline, data_dir)
            assert n == d, "a span counted twice (WAL tail and a committed file)"
            assert acked_before <= n <= len(sent), (acked_before, n, len(sent))
            assert "warning:" not in stderr, stderr
    finally:
        stop.set()
        for w in workers:
            w.join()
    assert collector.stop() == 0
    n, d, _ = counts(run_tripline, data_dir)
    assert n == d and len(acked) <= n <= len(sent)
