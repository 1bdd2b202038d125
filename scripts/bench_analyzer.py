#!/usr/bin/env python3
"""Analyzer benchmark: `tripline check` and `tripline report tools` against DuckDB, same files.

Why: the analyzer's rules are joins over the whole store, so the honest comparison is a general
engine running equivalent SQL (bench/sql/*.sql, TL002 and TL004) on the very same Parquet files,
timed in the same run. Datasets are generated (samples scale mode, or `tripline-load write`),
ingested with `tripline ingest` in bounded chunks so the intermediate OTLP files never pile up,
then measured. Every subprocess has a timeout.

Usage (scripts/bench calls it): bench_analyzer.py --tripline BIN --load BIN [--samples BIN]
    --work DIR --out results.json --sizes 1000000,10000000
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SQL_DIR = os.path.join(ROOT, "bench", "sql")
# The policy must name the tools of the generated systems: the samples' own registry for the
# samples scale mode, bench/policy.toml for `tripline-load write`.
POLICY_SAMPLES = os.path.join(ROOT, "samples", "policy.toml")
POLICY_LOAD = os.path.join(ROOT, "bench", "policy.toml")
CHUNK_SPANS = 1_000_000
# How a store grows: STACK chunks (10M spans) share one stretch of time (a chunk covers 3.8 days
# of the samples' traffic), the next STACK chunks the stretch after it. So 1M and 10M stores
# are as before, and a 100M store is 40 days of the 10M store's traffic rate (a team keeping
# a month of traces), not ten times the rate in the same 4 days. `--stack 100` stacks every
# chunk (the layout before session 8), for measuring density instead of size.
STACK = 10
CHUNK_STRETCH_SECS = 4 * 86_400
BASE_UNIX_SECS = 1_793_610_000  # samples/src/generate.rs BASE_UNIX_SECS
# GNU time: each tripline run's own peak RSS (ru_maxrss of that one child, in KiB).
GNU_TIME = "/usr/bin/time"


def timed(argv, timeout, stdout_path=None):
    """Runs argv with a timeout; returns (wall secs, exit code, stderr)."""
    t0 = time.monotonic()
    out = open(stdout_path, "w") if stdout_path else subprocess.DEVNULL
    try:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, text=True)
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            err = f"timed out after {timeout}s\n{err}"
    finally:
        if stdout_path:
            out.close()
    wall = time.monotonic() - t0
    return wall, p.returncode, err


class ChildUsage:
    """CPU and peak RSS of the children reaped between start() and stop() (RUSAGE_CHILDREN)."""

    def start(self):
        self.r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return self

    def stop(self):
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return {"cpu_secs": (r1.ru_utime - self.r0.ru_utime) + (r1.ru_stime - self.r0.ru_stime),
                # ru_maxrss of children is the max over all reaped children so far
                "max_rss_mib_all_children": r1.ru_maxrss / 1024}


def generate_chunk(args, out_dir, spans, seed, stretch):
    shutil.rmtree(out_dir, ignore_errors=True)
    if args.samples:
        argv = [args.samples, "--spans", str(spans), "--out", out_dir, "--seed", str(seed)]
        if stretch:
            start = BASE_UNIX_SECS + stretch * CHUNK_STRETCH_SECS
            argv += ["--start-unix-secs", str(start)]
        gen = "samples scale mode"
    else:
        argv = [args.load, "write", "--out", out_dir, "--spans", str(spans), "--batch", "5000",
                "--seed", str(seed)]
        gen = "tripline-load write"
    wall, rc, err = timed(argv, timeout=3600)
    if rc != 0:
        raise RuntimeError(f"{gen} failed ({rc}): {err.strip()[-500:]}")
    return gen, wall


def build_store(args, n, data):
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    chunks = (n + CHUNK_SPANS - 1) // CHUNK_SPANS
    gen_secs = ingest_secs = 0.0
    gen_name = None
    for i in range(chunks):
        spans = min(CHUNK_SPANS, n - i * CHUNK_SPANS)
        chunk_dir = os.path.join(args.work, "otlp-chunk")
        gen_name, g = generate_chunk(args, chunk_dir, spans, seed=100 + i,
                                     stretch=i // args.stack)
        gen_secs += g
        wall, rc, err = timed([args.tripline, "ingest", "--data-dir", data, chunk_dir],
                              timeout=3600)
        if rc != 0:
            raise RuntimeError(f"tripline ingest failed ({rc}): {err.strip()[-800:]}")
        ingest_secs += wall
        shutil.rmtree(chunk_dir, ignore_errors=True)
        print(f"bench_analyzer: {n}: chunk {i + 1}/{chunks} ingested", file=sys.stderr,
              flush=True)
    return {"generator": gen_name, "stack": args.stack, "generate_secs": gen_secs,
            "ingest_secs": ingest_secs, "ingest_spans_per_sec": n / ingest_secs if ingest_secs else None}


def parquet_glob(data):
    return os.path.join(data, "spans", "**", "*.parquet")


def store_facts(data):
    import duckdb
    con = duckdb.connect()
    rows, = con.execute(
        f"SELECT count(*) FROM read_parquet('{parquet_glob(data)}', hive_partitioning=true)"
    ).fetchone()
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(
        os.path.join(data, "spans")) for f in fs if f.endswith(".parquet"))
    return {"rows": rows, "parquet_bytes": size, "bytes_per_span": size / rows if rows else None}


def median_run(runs):
    """The run with the median wall time; every wall time is kept next to it."""
    ordered = sorted(runs, key=lambda r: r["wall_secs"])
    med = dict(ordered[len(ordered) // 2])
    med["wall_secs_all"] = [round(r["wall_secs"], 3) for r in runs]
    if any("peak_rss_mib" in r for r in runs):
        med["peak_rss_mib_all"] = [r.get("peak_rss_mib") for r in runs]
    med["repeats"] = len(runs)
    return med


def peak_rss_mib(stderr):
    """`Maximum resident set size (kbytes): N` from `/usr/bin/time -v`, in MiB."""
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr or "")
    return int(m.group(1)) / 1024 if m else None


def run_tripline(args, data, sub, out_path):
    runs = []
    wrap = [GNU_TIME, "-v"] if os.access(GNU_TIME, os.X_OK) else []
    for _ in range(args.repeat):
        load = os.getloadavg()
        usage = ChildUsage().start()
        wall, rc, err = timed([*wrap, args.tripline, *sub, "--data-dir", data],
                              timeout=args.timeout, stdout_path=out_path)
        u = usage.stop()
        # exit 1 = findings at or over the threshold: a normal outcome for `check`
        ok = rc in (0, 1)
        runs.append({"wall_secs": wall, "cpu_secs": u["cpu_secs"], "exit_code": rc, "ok": ok,
                     "peak_rss_mib": peak_rss_mib(err), "loadavg_before": load,
                     "stderr_tail": None if ok else err.strip()[-500:]})
        if not ok:
            break
    return median_run(runs)


def check_findings(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"unreadable check output: {e}"}
    counts = {}
    for finding in doc.get("findings", []):
        counts[finding.get("rule")] = counts.get(finding.get("rule"), 0) + 1
    return counts


def requires_approval(policy_path):
    """Tool names the policy file marks requires_approval (bare names, as the SQL matches)."""
    import tomllib
    with open(policy_path, "rb") as f:
        doc = tomllib.load(f)
    names = []
    for key, entry in doc.get("tools", {}).items():
        if entry.get("policy") == "requires_approval":
            names.append(key.split("/")[-1].split("__")[-1])
    return sorted(set(names))


def run_duckdb(data, sql_file, threads, params):
    import duckdb
    with open(os.path.join(SQL_DIR, sql_file)) as f:
        sql = f.read()
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    t0 = time.monotonic()
    con.execute(f"CREATE VIEW spans AS SELECT * FROM read_parquet('{parquet_glob(data)}', "
                "hive_partitioning=true)")
    used = {k: v for k, v in params.items() if f"${k}" in sql}
    rows = con.execute(sql, used).fetchall() if used else con.execute(sql).fetchall()
    wall = time.monotonic() - t0
    return {"wall_secs": wall, "rows": len(rows)}


def run_duckdb_repeated(args, data, sql_file, threads, params):
    return median_run([run_duckdb(data, sql_file, threads, params) for _ in range(args.repeat)])


def measure(args, n):
    data = os.path.join(args.work, f"store-{n}")
    res = {"spans": n, "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "loadavg_at_start": os.getloadavg()}
    built = data + ".built.json"  # next to the store, not inside it
    prior = None
    if args.reuse and os.path.exists(built):
        with open(built) as f:
            prior = json.load(f)
        # Stores built before `stack` existed stacked every chunk; a layout that differs where
        # the store has more than one stretch is rebuilt, not reused.
        stacked = min(prior.get("stack", n // CHUNK_SPANS + 1), args.stack)
        if n > stacked * CHUNK_SPANS and prior.get("stack") != args.stack:
            prior = None
    if prior is not None:
        res["build"] = dict(prior, reused=True)
    else:
        res["build"] = build_store(args, n, data)
        with open(built, "w") as f:
            json.dump(res["build"], f)
    if args.build_only:
        return res
    policy = POLICY_SAMPLES if res["build"]["generator"] == "samples scale mode" else POLICY_LOAD
    res["policy"] = os.path.relpath(policy, ROOT)
    params = {"requires_approval": requires_approval(policy)}
    res["store"] = store_facts(data)
    check_out = os.path.join(args.work, f"check-{n}.json")
    res["tripline_check"] = run_tripline(
        args, data, ["check", "--policy", policy, "--format", "json"], check_out)
    res["tripline_check"]["findings_by_rule"] = check_findings(check_out)
    res["tripline_report_tools"] = run_tripline(
        args, data, ["report", "tools"], os.path.join(args.work, f"report-tools-{n}.txt"))
    threads = os.cpu_count() or 1
    res["duckdb_tl002"] = run_duckdb_repeated(args, data, "tl002_unconfirmed_write.sql", threads,
                                              params)
    res["duckdb_tl004"] = run_duckdb_repeated(args, data, "tl004_broken_trace_propagation.sql",
                                              threads, params)
    duck = res["duckdb_tl002"]["wall_secs"] + res["duckdb_tl004"]["wall_secs"]
    res["ratio_check_over_duckdb_tl002_tl004"] = res["tripline_check"]["wall_secs"] / duck
    res["loadavg_at_end"] = os.getloadavg()
    if not args.keep:
        shutil.rmtree(data, ignore_errors=True)
        if os.path.exists(built):
            os.remove(built)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tripline", required=True)
    ap.add_argument("--load", required=True)
    ap.add_argument("--samples", help="tripline-samples binary with --spans scale mode")
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--timeout", type=int, default=3600, help="per analyzer command, seconds")
    ap.add_argument("--keep", action="store_true", help="keep the generated stores")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse a store this script built and kept in --work (implies --keep)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each timed command; the median wall time is reported")
    ap.add_argument("--once-over", type=int, default=50_000_000,
                    help="stores of more spans than this run each timed command once (a 100M "
                         "`check` takes minutes; three repeats would add most of an hour)")
    ap.add_argument("--stack", type=int, default=STACK,
                    help="chunks of 1M spans sharing one stretch of time (see STACK)")
    ap.add_argument("--build-only", action="store_true",
                    help="build (or reuse) and keep the stores, measure nothing: for generating "
                         "a large store ahead of the runs")
    args = ap.parse_args()
    args.keep = args.keep or args.reuse or args.build_only
    os.makedirs(args.work, exist_ok=True)
    import duckdb
    results = {"duckdb_version": duckdb.__version__, "runs": []}
    for n in [int(s) for s in args.sizes.split(",") if s]:
        print(f"bench_analyzer: {n} spans ...", file=sys.stderr, flush=True)
        sized = argparse.Namespace(**vars(args))
        if n > args.once_over:
            sized.repeat = 1
        try:
            r = measure(sized, n)
        except Exception as e:  # reported, and the next size still runs
            r = {"spans": n, "error": f"{type(e).__name__}: {e}"}
        results["runs"].append(r)
        print(f"bench_analyzer: {n}: {json.dumps(r)[:1500]}", file=sys.stderr, flush=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
