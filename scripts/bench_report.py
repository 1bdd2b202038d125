#!/usr/bin/env python3
"""Renders bench/results/*.json and criterion's estimates into the BENCHMARKS.md tables.

Why generated: a table typed by hand drifts from the run it claims to come from. Everything
between the `<!-- bench:generated:begin -->` and `<!-- bench:generated:end -->` markers of
BENCHMARKS.md is rewritten by this script from the last `scripts/bench` run; the prose outside
the markers (what limits each figure) is kept as written.
"""

import argparse
import json
import os
import platform
import re
import subprocess
import time

BEGIN = "<!-- bench:generated:begin -->"
END = "<!-- bench:generated:end -->"


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    return {"nproc": os.cpu_count(), "cpu": model, "ram_gib": mem_kib / 1024 / 1024,
            "kernel": platform.release(), "rustc": rustc}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def f0(v):
    return "n/a" if v is None else f"{v:,.0f}"


def f1(v):
    return "n/a" if v is None else f"{v:,.1f}"


def f2(v):
    return "n/a" if v is None else f"{v:,.2f}"


def ratio(a, b):
    return None if a is None or not b else a / b


def latency_notes(tl):
    """How the latency steps' load was made, and where tripline's own p99 lay in that run."""
    out = []
    prebuilt = tl.get("prebuilt") or 0
    if prebuilt:
        out.append(f"The latency steps' load generator built {prebuilt} requests per connection "
                   f"before the run and sent them in turn (`tripline-load send --prebuilt "
                   f"{prebuilt}`), so the time it takes to build and encode a request is not in "
                   "the measured latency.")
    else:
        out.append("The latency steps' load generator built each request as it sent it: its "
                   "own CPU queueing is in the measured latency.")
    if tl.get("warmup_secs"):
        out.append(f"The settled p99 leaves out the requests sent in the first "
                   f"{tl['warmup_secs']:g} s of the step (`tripline-load send --warmup-secs`), "
                   "while the receiver, started for the step, grows its memory; the whole-run "
                   "p99 counts them.")
    stages = tl.get("ack_stages") or {}
    bounds = [f"`{name}` ≤ {f1(stages[name].get('p99_bound_ms'))}"
              for name in ("body_read", "total") if name in stages]
    if bounds:
        out.append("tripline's own histogram (`/metrics`, p99 bucket bounds, ms) in the "
                   f"tripline latency step: {', '.join(bounds)}.")
    return [" ".join(out), ""]


def collector_tables(c):
    out = []
    if not c:
        return ["_collector results missing: run `scripts/bench collector`_", ""]
    out += [f"Load: `tripline-load send`, OTLP/HTTP protobuf (gRPC row: OTLP/gRPC), batch "
            f"{c['batch']} spans, {c['concurrency']} requests in flight, {c['secs']:.0f} s per "
            "run, 30% of turns with content attributes.", ""]
    out += ["| receiver | acked spans/s | spans per CPU-second | peak RSS (MiB) | "
            "bytes/span on disk | Parquet files | acked = readable (DuckDB) | p50 / p99 ack (ms) |",
            "|---|---:|---:|---:|---:|---:|---|---:|"]
    for key, label in (("tripline_http", "tripline collect (HTTP)"),
                       ("tripline_grpc", "tripline collect (gRPC)"),
                       ("otlp2parquet_http", "otlp2parquet (HTTP)")):
        r = c.get(key)
        if not r:
            continue
        if "error" in r:
            out.append(f"| {label} | failed: {r['error']} | | | | | | |")
            continue
        lat = r["load"]["latency"]
        ok = r["all_acked_readable"] and r.get("all_runs_acked_readable", True)
        readable = (f"{'yes' if ok else 'NO'} "
                    f"({r['duckdb']['rows']:,} rows / {r['load']['spans_acked']:,} acked)")
        out.append(f"| {label} | {f0(r['acked_spans_per_sec'])} | {f0(r['spans_per_cpu_sec'])} "
                   f"| {f1(r['peak_rss_mib'])} | {f1(r['bytes_per_span'])} | "
                   f"{r['parquet_files']} | {readable} | {f1(lat['p50_ms'])} / "
                   f"{f1(lat['p99_ms'])} |")
    out.append("")
    t, o = c.get("tripline_http", {}), c.get("otlp2parquet_http", {})
    tl, ol = c.get("tripline_latency", {}), c.get("otlp2parquet_latency", {})
    ov = c.get("tripline_overload", {})
    pairs = c.get("pairs") or {}
    # Alternated pairs: the figure is the median of the per-pair ratios (bench_collector.py).
    cpu_r = pairs.get("median_ratio") or ratio(t.get("spans_per_cpu_sec"),
                                               o.get("spans_per_cpu_sec"))
    bytes_r = ratio(t.get("bytes_per_span"), o.get("bytes_per_span"))
    thr_r = ratio(t.get("acked_spans_per_sec"), o.get("acked_spans_per_sec"))

    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "**not met**")

    if pairs.get("ratios"):
        shown = ", ".join("n/a" if r is None else f"{r:.2f}×" for r in pairs["ratios"])
        every = ", ".join(f0(v) for v in t.get("spans_per_cpu_sec_all", []))
        peer = ", ".join(f0(v) for v in o.get("spans_per_cpu_sec_all", []))
        out += [f"The two HTTP peak runs alternated {pairs['count']} times (tripline, then "
                f"otlp2parquet): spans per CPU-second {every} (tripline) and {peer} "
                f"(otlp2parquet); ratio per pair {shown}. The tables show each receiver's "
                "median run; the ratio below is the median of the per-pair ratios.", ""]

    out += ["| figure (same sitting) | tripline | otlp2parquet | ratio | target | verdict |",
            "|---|---:|---:|---:|---|---|",
            f"| spans per CPU-second | {f0(t.get('spans_per_cpu_sec'))} | "
            f"{f0(o.get('spans_per_cpu_sec'))} | {f2(cpu_r)}× | ≥ 2× | "
            f"{verdict(None if cpu_r is None else cpu_r >= 2)} |",
            f"| bytes per span on disk | {f1(t.get('bytes_per_span'))} | "
            f"{f1(o.get('bytes_per_span'))} | {f2(bytes_r)}× | ≤ 0.25× | "
            f"{verdict(None if bytes_r is None else bytes_r <= 0.25)} |",
            f"| acknowledged spans/s | {f0(t.get('acked_spans_per_sec'))} | "
            f"{f0(o.get('acked_spans_per_sec'))} | {f2(thr_r)}× | — | — |"]
    if "settled_p99_ms" in tl and tl.get("warmup_secs"):
        warm = f"{tl['warmup_secs']:g} s"
        out += [f"| p99 ack latency at 80% of own peak, after a {warm} warm-up (ms) | "
                f"{f1(tl['settled_p99_ms'])} (at {f0(tl['offered_spans_per_sec'])} spans/s) | "
                f"{f1(ol.get('settled_p99_ms'))} (at {f0(ol.get('offered_spans_per_sec'))} "
                f"spans/s) | — | < 50 ms | {verdict(tl['settled_p99_ms'] < 50)} |",
                f"| p99 ack latency at 80% of own peak, whole run from the receiver's start (ms) "
                f"| {f1(tl['p99_ms'])} | {f1(ol.get('p99_ms'))} | — | < 50 ms | "
                f"{verdict(tl['p99_ms'] < 50)} |", ""]
        out += latency_notes(tl)
    elif "p99_ms" in tl:
        out += [f"| p99 ack latency at 80% of own peak (ms) | {f1(tl['p99_ms'])} "
                f"(at {f0(tl['offered_spans_per_sec'])} spans/s) | "
                f"{f1(ol.get('p99_ms'))} (at {f0(ol.get('offered_spans_per_sec'))} spans/s) "
                f"| — | < 50 ms | {verdict(tl['p99_ms'] < 50)} |", ""]
        out += latency_notes(tl)
    else:
        out.append("")
    if ov and "error" not in ov:
        load_ = ov["load"]
        out += ["Overload (tripline only): "
                f"{ov['concurrency']} requests of {ov['batch']} spans in flight for "
                f"{load_['elapsed_secs']:.0f} s, no client back-off.", "",
                "| requests acked | requests refused (429) | failed | acked spans/s | "
                "RSS max, 1st half (MiB) | RSS max, 2nd half (MiB) | peak RSS (MiB) | "
                "p99 of a refusal (ms) | acked = readable |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
                f"| {load_['requests_acked']:,} | {load_['requests_refused']:,} | "
                f"{load_['requests_failed']:,} | {f0(load_['acked_spans_per_sec'])} | "
                f"{f1(ov['rss_mib_first_half_max'])} | {f1(ov['rss_mib_second_half_max'])} | "
                f"{f1(ov['peak_rss_mib'])} | {f1(load_['refused_latency']['p99_ms'])} | "
                f"{'yes' if ov['all_acked_readable'] else 'NO'} |", ""]
    elif ov:
        out += [f"Overload run failed: {ov['error']}", ""]
    return out


def criterion_rows(root):
    """Criterion's latest estimates under `root` (its output directory), as JSON-ready rows;
    None when the directory is missing or holds none of the collector's benches."""
    rows = []
    if not root or not os.path.isdir(root):
        return None
    for d, _, files in os.walk(root):
        if os.path.basename(d) != "new" or "estimates.json" not in files:
            continue
        est = load(os.path.join(d, "estimates.json"))
        meta = load(os.path.join(d, "benchmark.json"))
        if not est or not meta:
            continue
        if meta["group_id"] not in ("otlp_protobuf_to_arrow", "arrow_to_zstd_parquet"):
            continue
        rows.append({"group": meta["group_id"], "function": meta["function_id"],
                     "input": meta.get("value_str") or "",
                     "elements": (meta.get("throughput") or {}).get("Elements"),
                     "mean_ns": est["mean"]["point_estimate"],
                     "ci_low_ns": est["mean"]["confidence_interval"]["lower_bound"],
                     "ci_high_ns": est["mean"]["confidence_interval"]["upper_bound"]})
    return sorted(rows, key=lambda r: (r["group"], r["function"], r["input"])) or None


def criterion_table(results, root):
    """The criterion table. Criterion keeps its estimates in the build directory, which a new
    machine does not have: the rows are saved to `results/criterion.json` whenever criterion's
    directory has them, and read back from there otherwise, so a `scripts/bench collector` on
    a fresh machine does not drop the last measured ceilings."""
    saved_path = os.path.join(results, "criterion.json")
    rows = criterion_rows(root)
    if rows is not None:
        with open(saved_path, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    else:
        rows = (load(saved_path) or {}).get("rows")
    if not rows:
        return ["_criterion results missing: run `scripts/bench criterion`_", ""]
    out = ["| stage | measured | input | spans per call | mean time per call | "
           "spans/s (one core) |", "|---|---|---|---:|---:|---:|"]
    for r in rows:
        el, ns = r["elements"], r["mean_ns"]
        per_s = el / (ns / 1e9) if el else None
        out.append(f"| {r['group']} | {r['function']} | {r['input']} | "
                   f"{el:,} | {ns / 1e6:,.3f} ms "
                   f"(95% CI {r['ci_low_ns'] / 1e6:,.3f}–{r['ci_high_ns'] / 1e6:,.3f}) | "
                   f"{f0(per_s)} |")
    out.append("")
    return out


def analyzer_table(a):
    if not a:
        return ["_analyzer results missing: run `scripts/bench analyzer`_", ""]
    out = [f"DuckDB {a.get('duckdb_version')} in-process, all cores; tripline timed as a fresh "
           "process (start-up included). Each time is the median of the repeated runs listed "
           "under the table.", "",
           "| spans | store bytes/span | ingest spans/s | `check` (all rules) s | "
           "`check` peak RSS (MiB) | `report tools` s | DuckDB TL002 s | DuckDB TL004 s | "
           "check ÷ (TL002+TL004) | TL002 findings tripline / DuckDB | "
           "TL004 findings tripline / DuckDB |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in a.get("runs", []):
        if "error" in r:
            out.append(f"| {r['spans']:,} | failed: {r['error']} | | | | | | | | | |")
            continue
        chk, rep = r["tripline_check"], r["tripline_report_tools"]
        fb = chk.get("findings_by_rule", {})

        def secs(x):
            return f1(x["wall_secs"]) if x.get("ok", True) else f"failed (exit {x['exit_code']})"

        def rss(x):
            # the largest of the repeated runs: a bound is a maximum, not a median
            seen = [v for v in x.get("peak_rss_mib_all", [x.get("peak_rss_mib")]) if v]
            return f0(max(seen)) if seen else "n/a"

        out.append(
            f"| {r['spans']:,} | {f1(r['store']['bytes_per_span'])} | "
            f"{f0(r['build']['ingest_spans_per_sec'])} | {secs(chk)} | "
            f"{rss(chk)} | {secs(rep)} | "
            f"{f2(r['duckdb_tl002']['wall_secs'])} | {f2(r['duckdb_tl004']['wall_secs'])} | "
            f"{f1(r['ratio_check_over_duckdb_tl002_tl004'])}× | "
            f"{fb.get('TL002', 0):,} / {r['duckdb_tl002']['rows']:,} | "
            f"{fb.get('TL004', 0):,} / {r['duckdb_tl004']['rows']:,} |")
    out += ["", "Peak RSS is the largest `/usr/bin/time -v` maximum resident set size of the "
            "repeated `check` runs.", ""]
    for r in a.get("runs", []):
        if "error" in r:
            continue
        walls = [f"{k} {', '.join(f'{w:.2f}' for w in r[k].get('wall_secs_all', [r[k]['wall_secs']]))}"
                 for k in ("tripline_check", "tripline_report_tools", "duckdb_tl002",
                           "duckdb_tl004")]
        out.append(f"- {r['spans']:,} spans, every run (s): " + "; ".join(walls))
    gens = {r["build"]["generator"] for r in a.get("runs", []) if "build" in r}
    out += ["", f"Data generated by: {', '.join(sorted(gens)) or 'n/a'}.", ""]
    return out


# Issue 12's goal for the shipped binary: "< 60 MB". Decimal megabytes, the stricter reading.
BINARY_GOAL_BYTES = 60_000_000


def binary_size_text(size):
    """The release binary's size and its verdict against the goal, so that a change that grows
    it past the goal shows in the next generated block."""
    if size < BINARY_GOAL_BYTES:
        verdict = f"met ({BINARY_GOAL_BYTES - size:,} bytes to spare)"
    else:
        verdict = f"**not met** ({size - BINARY_GOAL_BYTES:,} bytes over)"
    return (f"The `tripline` binary: {size:,} bytes ({size / 2**20:.1f} MiB); goal under "
            f"{BINARY_GOAL_BYTES:,} bytes: {verdict}.")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--criterion")
    ap.add_argument("--benchmarks", required=True)
    args = ap.parse_args()
    m = machine()
    with open(os.path.join(args.results, "machine.json"), "w") as f:
        json.dump(m, f, indent=1)
    gen = [BEGIN, "",
           f"_Generated by `scripts/bench` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
           "; do not edit by hand._", ""]
    def build_text(b):
        """A build as the block names it: commit, profile, when, and the binary's size."""
        size = b.get("tripline_bytes")
        size_text = f" {binary_size_text(size)}" if size else ""
        return (f"commit `{b.get('commit')}`, cargo profile `{b.get('profile')}` "
                f"(built {b.get('built_at')}).{size_text}")

    build = load(os.path.join(args.results, "build.json"))
    if build:
        gen += [f"Measured build: {build_text(build)}", ""]

    def part_build(part):
        """The build a table alone was measured with (`scripts/bench collector` or `analyzer`
        after the whole run), when it is not the block's."""
        b = load(os.path.join(args.results, f"build-{part}.json"))
        if not b:
            return []
        return [f"This table alone was measured later, with {build_text(b)}", ""]

    gen += [
           "### Machine", "",
           "| nproc | CPU (/proc/cpuinfo) | RAM | kernel | rustc |", "|---:|---|---:|---|---|",
           f"| {m['nproc']} | {m['cpu']} | {m['ram_gib']:.1f} GiB | {m['kernel']} | "
           f"{m['rustc']} |", "",
           "### Collector throughput: tripline vs otlp2parquet", ""]
    gen += part_build("collector")
    gen += collector_tables(load(os.path.join(args.results, "collector.json")))
    wide = load(os.path.join(args.results, "collector-16x1000.json"))
    if wide:
        gen += ["Second load shape (the issue's): 16 connections, 1,000-span bodies.", ""]
        gen += collector_tables(wide)
    gen += ["### Decode and encode ceilings (criterion)", ""]
    gen += criterion_table(args.results, args.criterion)
    gen += ["### Analyzer: tripline vs DuckDB on the same files", ""]
    gen += part_build("analyzer")
    gen += analyzer_table(load(os.path.join(args.results, "analyzer.json")))
    gen.append(END)
    block = "\n".join(gen)
    try:
        with open(args.benchmarks) as f:
            doc = f.read()
    except OSError:
        doc = f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN in doc and END in doc:
        doc = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, doc,
                     flags=re.S)
    else:
        doc += "\n" + block + "\n"
    with open(args.benchmarks, "w") as f:
        f.write(doc)
    print(block)


if __name__ == "__main__":
    main()
