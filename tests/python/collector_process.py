"""The real `tripline collect` process, started and stopped the way an operator would.

Why a helper: every end-to-end test starts the binary on port 0 (so tests never collide with each
other or with a collector someone left running), reads the one stderr line that names the bound
addresses, and stops it with SIGTERM (the graceful path that must flush everything to Parquet) or
SIGKILL (the crash the write-ahead log must survive). Its stderr is kept so a failing test shows
what the collector said.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

LISTENING = re.compile(r"tripline collect: listening http=(\S+) grpc=(\S+) data_dir=(\S+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def free_port() -> int:
    """A port that was free a moment ago (fallback only: the collector binds port 0 itself)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Collector:
    """One `tripline collect` child process."""

    def __init__(
        self,
        binary: str,
        data_dir: Path | str,
        extra_args: list[str] | None = None,
        env: dict[str, str] | None = None,
    ):
        self.binary = binary
        # An `s3://bucket/prefix` URL stays a string (a Path would fold its `//`).
        self.data_dir = data_dir if isinstance(data_dir, str) and "://" in data_dir else Path(data_dir)
        self.extra_args = list(extra_args or [])
        self.env = env
        self.proc: subprocess.Popen[str] | None = None
        self.http_addr = ""
        self.grpc_addr = ""
        self.log: list[str] = []
        self._listening = threading.Event()
        self._reader: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def start(self, timeout: float = 60.0, http: str = "127.0.0.1:0", grpc: str = "127.0.0.1:0") -> "Collector":
        self._listening.clear()
        args = [
            self.binary,
            "collect",
            "--data-dir",
            str(self.data_dir),
            "--http",
            http,
            "--grpc",
            grpc,
            *self.extra_args,
        ]
        self.log.append(f"$ {' '.join(args)}")
        env = dict(self.env if self.env is not None else os.environ)
        env.setdefault("NO_COLOR", "1")
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self._reader = threading.Thread(target=self._read_stderr, args=(self.proc,), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not self._listening.wait(0.05):
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"tripline collect exited with {self.proc.returncode} before listening:\n{self.output()}"
                )
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"tripline collect did not print its listening line in {timeout}s:\n{self.output()}")
        if self.http_addr.endswith(":0") or self.grpc_addr.endswith(":0"):
            # The collector echoed the requested port instead of the bound one: pick ports here.
            self.stop()
            return self.start(timeout, f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}")
        return self

    def _read_stderr(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = ANSI.sub("", raw.rstrip("\n"))
            self.log.append(line)
            m = LISTENING.search(line)
            if m and not self._listening.is_set():
                self.http_addr, self.grpc_addr = m.group(1), m.group(2)
                self._listening.set()

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, wait for a clean exit, and return the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"tripline collect did not exit within {timeout}s of SIGTERM:\n{self.output()}")
        self._join_reader()
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL: the crash nothing acknowledged may be lost to."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self._join_reader()

    def _join_reader(self) -> None:
        if self._reader is not None:
            self._reader.join(5)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # -- addresses ---------------------------------------------------------------------------
    @property
    def http_url(self) -> str:
        return f"http://{self.http_addr}"

    @property
    def traces_url(self) -> str:
        return f"http://{self.http_addr}/v1/traces"

    def wait_for_log(self, pattern: str, timeout: float = 10.0) -> str:
        """The first stderr line matching the regex `pattern` (stderr is read concurrently)."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            for line in list(self.log):
                if rx.search(line):
                    return line
            if time.monotonic() > deadline:
                raise AssertionError(f"no stderr line matches {pattern!r}:\n{self.output()}")
            time.sleep(0.05)

    def output(self) -> str:
        return "\n".join(self.log[-200:])
