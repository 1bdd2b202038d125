"""Shared fixtures of the end-to-end tests: the real binary, collectors on free ports, Spark.

The binary comes from `TRIPLINE_BIN` (scripts/test builds it and sets the variable); without it the
tests fail with a hint instead of silently skipping, because a suite that skips everything looks
green while testing nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from collector_process import Collector  # noqa: E402
from garage import Garage, garage_binary  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
# CI lays a read-only copy of shared/ beside the clone; developers keep it beside their checkout.
RECORDINGS = REPO_ROOT.parent / "shared" / "recordings"

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


@pytest.fixture(scope="session")
def tripline_bin() -> str:
    binary = os.environ.get("TRIPLINE_BIN")
    if not binary:
        target = os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache" / "tripline-target"))
        binary = str(Path(target) / "debug" / "tripline")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"tripline binary not found at {binary}: run scripts/test, or set TRIPLINE_BIN to a built binary")
    return binary


@pytest.fixture
def start_collector(tripline_bin: str, tmp_path: Path) -> Iterator[Callable[..., Collector]]:
    """Start `tripline collect` on port 0 (gRPC and HTTP); every one still running at the end of
    the test is killed, and its stderr is printed (pytest shows it when the test failed)."""
    started: list[Collector] = []

    def start(data_dir: Path | None = None, extra_args: list[str] | None = None) -> Collector:
        c = Collector(tripline_bin, data_dir or tmp_path / "data", extra_args)
        started.append(c)
        return c.start()

    yield start
    for c in started:
        c.kill()
        print(f"--- collector stderr ({c.data_dir}) ---\n{c.output()}")


@pytest.fixture
def run_tripline(tripline_bin: str) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run a one-shot tripline subcommand (`ingest`, `query`, ...) and return its result."""

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ)
        env.setdefault("NO_COLOR", "1")
        proc = subprocess.run(
            [tripline_bin, *args], capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL
        )
        print(f"$ tripline {' '.join(args)}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}")
        return proc

    return run


@pytest.fixture(scope="session")
def recordings() -> Path:
    if not RECORDINGS.is_dir():
        pytest.skip(f"recordings not found at {RECORDINGS} (shared/ must sit beside the repository)")
    return RECORDINGS


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for the whole run (starting a JVM costs seconds)."""
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("tripline-e2e")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def garage(tmp_path_factory) -> Iterator[Garage]:
    """A single-node Garage S3 server on loopback for the whole run (tests/python/garage.py).

    Skipped only on a developer machine without garage; under CI (CI=true) a missing garage is
    a failure, so the object-storage tests can never pass by not running."""
    binary = garage_binary()
    if binary is None:
        hint = "install it with .ci/run (cargo install garage, cached in ~/.cache/garage) or set GARAGE_BIN"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"garage not found under CI: {hint}")
        pytest.skip(f"garage not found: {hint}")
    server = Garage(binary, tmp_path_factory.mktemp("garage")).start()
    yield server
    server.stop()
