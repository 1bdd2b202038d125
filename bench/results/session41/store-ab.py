#!/usr/bin/env python3
"""Alternates `tripline check` and DuckDB's TL002 + TL004 SQL over two stores of the same spans,
written by two builds (session 41: zstd left off where it finds nothing). Usage:
  store-ab.py TRIPLINE STORE_A STORE_B ROUNDS OUT.json
Each round runs check on A, check on B, then DuckDB on A and B (both queries), and records wall
time, user + system CPU and peak RSS of each check (GNU time), and each query's wall time."""
import json, os, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_analyzer as ba  # noqa: E402

tripline, a, b, rounds, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
policy = ba.POLICY_SAMPLES
params = {"requires_approval": ba.requires_approval(policy)}


def check(store):
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", tripline, "check", "--data-dir", store,
                        "--policy", policy, "--format", "json"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    u, s, m = p.stderr.strip().splitlines()[-1].split()
    return {"wall_secs": wall, "cpu_secs": float(u) + float(s), "peak_rss_mib": int(m) / 1024,
            "exit": p.returncode}


runs = []
for r in range(rounds):
    for name, store in (("A", a), ("B", b)):
        c = check(store)
        runs.append(dict(c, round=r, store=name, what="check"))
        print(r, name, "check", json.dumps(c), flush=True)
    for name, store in (("A", a), ("B", b)):
        for sql in ("tl002_unconfirmed_write.sql", "tl004_broken_trace_propagation.sql"):
            d = ba.run_duckdb(store, sql, os.cpu_count() or 1, params)
            runs.append(dict(d, round=r, store=name, what=sql))
            print(r, name, sql, json.dumps(d), flush=True)
# Names only: the paths are of the machine that ran it.
json.dump({"tripline": os.path.basename(tripline), "A": os.path.basename(a), "B": os.path.basename(b), "loadavg_end": os.getloadavg(), "runs": runs},
          open(out, "w"), indent=1)
