"""`tripline collect --pretouch-bytes`: memory faulted in before the listeners accept stays with
the process for the request path (the allocator keeps freed memory, collector/src/allocator.rs).

Why a test of the real process: the property lives in the allocator's settings at run time (a
purge would hand the pages back to the OS and the start-up cost would buy nothing), so it is read
off the running collector's resident set, not asserted inside the library.
"""

from __future__ import annotations

import re
from pathlib import Path

MIB = 1024 * 1024


def resident_bytes(pid: int) -> int:
    """VmRSS of a process, in bytes."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    assert match, status
    return int(match.group(1)) * 1024


def test_pretouched_memory_is_resident_once_the_collector_listens(start_collector, tmp_path):
    bare = start_collector(tmp_path / "bare", ["--pretouch-bytes", "0"])
    bare_rss = resident_bytes(bare.proc.pid)
    assert "pre-touched" not in bare.output()

    asked = 192 * MIB
    warm = start_collector(tmp_path / "warm", ["--pretouch-bytes", str(asked)])
    line = warm.wait_for_log(r"pre-touched \d+ MiB")
    assert "pre-touched 192 MiB" in line, line
    warm_rss = resident_bytes(warm.proc.pid)
    # Freed, yet still the process's: the pages were written once and kept for reuse.
    assert warm_rss - bare_rss >= asked - 16 * MIB, (bare_rss // MIB, warm_rss // MIB)


def test_the_default_pretouch_is_reported_at_start(start_collector, tmp_path):
    c = start_collector(tmp_path / "data")
    line = c.wait_for_log(r"pre-touched \d+ MiB")
    assert re.search(r"pre-touched 256 MiB in \d+\.\d\d s \(--pretouch-bytes 0 skips this\)", line), line
