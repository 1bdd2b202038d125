"""`tripline collect --pretouch-bytes`: memory faulted in before the listeners accept stays with
the process for the request path (the allocator keeps freed memory, collector/src/allocator.rs).

Why a test of the real process: the property lives in the allocator's settings at run time (a
purge would hand the pages back to the OS and the start-up cost would buy nothing), so it is read
off the running collector's resident set, not asserted inside the library.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest

from collector_process import Collector

# The benchmark harness's reader of /proc/<pid>/status, the one place that parses it.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from bench_collector import proc_mem_kib  # noqa: E402

MIB = 1024 * 1024


def resident_bytes(pid: int) -> int:
    """VmRSS of a running process, in bytes."""
    mem = proc_mem_kib(pid)
    assert mem is not None and mem[0] is not None, f"no VmRSS for process {pid}"
    return mem[0] * 1024


def test_pretouched_memory_is_resident_once_the_collector_listens(start_collector, tmp_path):
    bare = start_collector(tmp_path / "bare", ["--pretouch-bytes", "0"])
    bare_rss = resident_bytes(bare.proc.pid)
    assert "pre-touched" not in bare.output()

    asked = 192 * MIB
    warm = start_collector(tmp_path / "warm", ["--pretouch-bytes", str(asked)])
    line = warm.wait_for_log(r"memory pre-touched")
    assert "pretouched_mib=192" in line, line
    warm_rss = resident_bytes(warm.proc.pid)
    # Freed, yet still the process's: the pages were written once and kept for reuse.
    assert warm_rss - bare_rss >= asked - 16 * MIB, (bare_rss // MIB, warm_rss // MIB)


def test_the_default_pretouch_is_reported_at_start(start_collector, tmp_path):
    c = start_collector(tmp_path / "data")
    line = c.wait_for_log(r"memory pre-touched")
    assert re.search(r"INFO .*memory pre-touched for the request path \(--pretouch-bytes 0 skips this\) "
                     r"pretouched_mib=256 asked_mib=256 memory_limit_mib=\d+ secs=\d+\.\d\d", line), line


def memory_cgroup(limit: int) -> tuple[Path, Path] | None:
    """A new memory cgroup with `limit` bytes, under this process's own (cgroup v1's memory
    controller, or v2 with the memory controller enabled), and the file a process writes its
    pid into to join it; None where this machine does not let the test make one."""
    own = Path("/proc/self/cgroup").read_text().splitlines()
    name = f"tripline-pretouch-{os.getpid()}"
    for line in own:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            base, limit_file = Path("/sys/fs/cgroup/memory") / path.lstrip("/"), "memory.limit_in_bytes"
        elif controllers == "":
            base, limit_file = Path("/sys/fs/cgroup") / path.lstrip("/"), "memory.max"
            subtree = base / "cgroup.subtree_control"
            if not subtree.exists() or "memory" not in subtree.read_text().split():
                continue
        else:
            continue
        group = base / name
        try:
            group.mkdir()
            (group / limit_file).write_text(str(limit))
        except OSError:
            if group.exists():
                group.rmdir()
            continue
        return group, group / "cgroup.procs"
    return None


def test_the_pretouch_leaves_a_small_container_three_quarters_of_its_limit(tripline_bin, tmp_path):
    limit = 512 * MIB
    made = memory_cgroup(limit)
    if made is None:
        pytest.skip("cannot create a memory cgroup here (needs root and a writable cgroup fs)")
    group, procs = made
    # The collector joins the cgroup before it starts: a shell writes its own pid, then execs.
    wrapper = tmp_path / "in-cgroup"
    wrapper.write_text(f'#!/bin/sh\necho $$ > "{procs}"\nexec "{tripline_bin}" "$@"\n')
    wrapper.chmod(0o755)
    c = Collector(str(wrapper), tmp_path / "data")
    try:
        c.start()
        line = c.wait_for_log(r"memory pre-touched")
        assert "; capped at a quarter of the memory limit" in line, line
        assert "pretouched_mib=128 asked_mib=256 memory_limit_mib=512" in line, line
        assert c.running
    finally:
        c.kill()
        print(c.output())
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
