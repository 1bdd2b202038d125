"""`bench_collector.alternate_builds`, the loop the A/B record scripts under `bench/results`
share: builds alternate within each round, each gets its own binary and work directory, and
the rows written are the rows printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_bench_peak_rss import load_harness


def test_builds_alternate_round_by_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    harness = load_harness()
    monkeypatch.setenv("OLD", "/bin/old-build")
    monkeypatch.setenv("NEW", "/bin/new-build")
    monkeypatch.setenv("LOAD", "/bin/load")
    monkeypatch.setenv("WORK", str(tmp_path / "work"))
    seen = []

    def measure(args, i):
        seen.append((i, args.tripline, args.load, args.work, args.secs))
        return {"value": i * 10 + len(seen)}

    out = tmp_path / "ab.json"
    runs = harness.alternate_builds(measure, 2, str(out), labels=("old", "new"), secs=20)
    work = str(tmp_path / "work")
    assert seen == [
        (0, "/bin/old-build", "/bin/load", f"{work}/old", 20),
        (0, "/bin/new-build", "/bin/load", f"{work}/new", 20),
        (1, "/bin/old-build", "/bin/load", f"{work}/old", 20),
        (1, "/bin/new-build", "/bin/load", f"{work}/new", 20),
    ]
    assert [list(r)[:2] for r in runs] == [["round", "build"]] * 4, "round and build first"
    assert [(r["round"], r["build"], r["value"]) for r in runs] == [
        (0, "old", 1), (0, "new", 2), (1, "old", 13), (1, "new", 14)]
    assert json.loads(out.read_text()) == runs
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == runs
