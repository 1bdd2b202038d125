"""A real S3-compatible server for the object-storage tests: Garage, single node, on loopback.

Why Garage: it is a small, maintained S3 implementation that installs with `cargo install` (no
container runtime, no JVM), so `.ci/run` can build it once and cache it like the venv. Each
test session starts its own node in a temporary directory on free ports, lays out one node,
creates an access key, and hands out buckets; tripline and the independent readers (DuckDB's
httpfs, pyarrow's S3FileSystem) reach it through the standard AWS environment variables only.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from pathlib import Path

REGION = "garage"


def garage_binary() -> str | None:
    """`GARAGE_BIN`, else the `.ci/run` install (~/.cache/garage/bin/garage), else PATH."""
    for candidate in (os.environ.get("GARAGE_BIN"), str(Path.home() / ".cache/garage/bin/garage"), shutil.which("garage")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Garage:
    """One single-node Garage server and the key the tests use."""

    def __init__(self, binary: str, root: Path):
        self.binary = binary
        self.root = root
        self.s3_port = free_port()
        self.rpc_port = free_port()
        self.config = root / "garage.toml"
        self.proc: subprocess.Popen[bytes] | None = None
        self.key_id = ""
        self.secret = ""
        self.log = root / "garage.log"

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"

    def env(self, endpoint: str | None = None) -> dict[str, str]:
        """The process environment for tripline: the four standard AWS variables, nothing else
        S3-specific (no AWS_ALLOW_HTTP: an http:// endpoint must work without it)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AWS_ENDPOINT_URL=endpoint or self.endpoint,
            AWS_ACCESS_KEY_ID=self.key_id,
            AWS_SECRET_ACCESS_KEY=self.secret,
            AWS_REGION=REGION,
            NO_COLOR="1",
        )
        return env

    def cli(self, *args: str) -> str:
        proc = subprocess.run(
            [self.binary, "-c", str(self.config), *args], capture_output=True, text=True, timeout=60
        )
        if proc.returncode != 0:
            raise RuntimeError(f"garage {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc.stdout

    def start(self) -> "Garage":
        (self.root / "meta").mkdir(parents=True, exist_ok=True)
        (self.root / "data").mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            f"""metadata_dir = "{self.root / 'meta'}"
data_dir = "{self.root / 'data'}"
db_engine = "lmdb"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:{self.rpc_port}"
rpc_public_addr = "127.0.0.1:{self.rpc_port}"
rpc_secret = "{secrets.token_hex(32)}"

[s3_api]
s3_region = "{REGION}"
api_bind_addr = "127.0.0.1:{self.s3_port}"
root_domain = ".s3.garage.localhost"
"""
        )
        log = open(self.log, "wb")
        env = dict(os.environ, RUST_LOG=os.environ.get("GARAGE_LOG", "warn"))
        self.proc = subprocess.Popen(
            [self.binary, "-c", str(self.config), "server"], stdout=log, stderr=subprocess.STDOUT, env=env
        )
        try:
            node = self._wait_for_node()
            # `node id` reads the node's key from the metadata directory and answers before the
            # server listens; the layout commands need its RPC port.
            self._wait_for_port(self.rpc_port, "RPC")
            self.cli("layout", "assign", "-z", "dc1", "-c", "1G", node)
            self.cli("layout", "apply", "--version", "1")
            out = self.cli("key", "create", "tripline-tests")
            self.key_id = _field(out, r"Key ID")
            self.secret = _field(out, r"Secret key")
            self._wait_for_port(self.s3_port, "S3")
        except BaseException:
            # A node that did not come up is not left running for the rest of the session.
            self.stop()
            raise
        return self

    def _wait_for_node(self, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"garage server exited with {self.proc.returncode}:\n{self.log.read_text()}")
            try:
                # `<node id>@<address>`
                return self.cli("node", "id", "-q").strip().split("@")[0]
            except RuntimeError as e:
                last = str(e)
                time.sleep(0.2)
        raise RuntimeError(f"garage did not answer within {timeout}s: {last}\n{self.log.read_text()}")

    def _wait_for_port(self, port: int, what: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"garage's {what} port {port} did not open:\n{self.log.read_text()}")

    def bucket(self, name: str) -> str:
        """Create bucket `name`, readable and writable with the tests' key; returns the name."""
        self.cli("bucket", "create", name)
        self.cli("bucket", "allow", "--read", "--write", "--owner", name, "--key", "tripline-tests")
        return name

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    # -- an independent view of the bucket (pyarrow's S3 client, not tripline's) --------------
    def filesystem(self):
        from pyarrow import fs

        return fs.S3FileSystem(
            access_key=self.key_id,
            secret_key=self.secret,
            endpoint_override=self.endpoint,
            scheme="http",
            region=REGION,
        )

    def objects(self, bucket: str, prefix: str) -> list[str]:
        """Keys below `bucket/prefix`, relative to the bucket."""
        from pyarrow import fs

        selector = fs.FileSelector(f"{bucket}/{prefix}", recursive=True, allow_not_found=True)
        infos = self.filesystem().get_file_info(selector)
        return sorted(i.path.split("/", 1)[1] for i in infos if i.type == fs.FileType.File)


def _field(text: str, label: str) -> str:
    m = re.search(rf"{label}:\s*(\S+)", text)
    if not m:
        raise RuntimeError(f"no {label!r} in garage's output:\n{text}")
    return m.group(1)
