"""scripts/bench_collector.py reports the receiver's own peak RSS, not the harness's.

`wait4`'s `ru_maxrss` of a child spawned from Python carries the high-water mark of the image it
was exec'd from, which is the harness itself (vfork); the collector tables reported 764.9 MiB
for a collector whose own peak was 350 MiB until session 33. A stand-in receiver that holds
about 40 MiB is started from this test process while it holds 400 MiB: the reported peak must be
the stand-in's, and the rusage figure, kept beside it, shows what the old one measured.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

RECEIVER = """
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
held = bytearray(40 * 1024 * 1024)
for i in range(0, len(held), 4096):
    held[i] = 1
while True:
    time.sleep(0.05)
"""


def load_harness():
    spec = importlib.util.spec_from_file_location(
        "bench_collector", REPO_ROOT / "scripts" / "bench_collector.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_peak_rss_is_the_receivers_own_not_the_harness(tmp_path: Path) -> None:
    harness = load_harness()
    ballast = bytearray(400 * 1024 * 1024)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    server = harness.Server("stand-in", [sys.executable, "-c", RECEIVER],
                            str(tmp_path / "server.log"))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        mem = harness.proc_mem_kib(server.proc.pid)
        if mem and mem[0] and mem[0] > 40 * 1024:
            break
        time.sleep(0.05)
    totals = server.stop()
    del ballast
    assert totals["exit_code"] == 0, totals
    own_mib = harness.kib_to_mib(totals["max_rss_kib"])
    assert own_mib is not None, totals
    assert 40 <= own_mib < 200, f"the stand-in holds about 45 MiB, reported {own_mib:.1f} MiB"
    assert totals["rusage_maxrss_kib"] / 1024 >= 400, (
        "ru_maxrss no longer includes the harness on this kernel; the docstring of "
        f"Server.stop says it does: {totals}")
