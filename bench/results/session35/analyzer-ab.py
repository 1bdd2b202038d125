"""Alternated A/B of two `tripline` binaries on the analyzer's commands over one store.

Why: session 35 builds DataFusion's execution crates and Arrow's compute kernels for size.
`check` and `report` barely run that code (perf: under 2% of a 1M-span `check`), ad-hoc SQL
(`tripline query`, the MCP server's queries) runs mostly in it. This records both, wall time
and CPU time (user + system) per run, the binaries alternated round by round.

Usage: A=BIN B=BIN STORE=DIR ROUNDS=5 python analyzer-ab.py OUT.json
"""
import json, os, resource, statistics, subprocess, sys, time

A, B, STORE = os.environ["A"], os.environ["B"], os.environ["STORE"]
ROUNDS = int(os.environ.get("ROUNDS", "5"))

QUERIES = {
    "group_by_tool": "SELECT service_name, gen_ai_tool_name, count(*) AS calls, sum(duration_ns) AS total_ns "
    "FROM spans WHERE mcp_method_name = 'tools/call' GROUP BY 1, 2 ORDER BY calls DESC, 1, 2",
    "group_by_trace": "SELECT trace_id, count(*) AS n, max(end_time_unix_nano) - min(start_time_unix_nano) AS extent "
    "FROM spans GROUP BY trace_id ORDER BY n DESC, trace_id LIMIT 10",
    "string_filter": "SELECT count(*) FROM spans WHERE lower(name) LIKE '%tools/call%' AND length(service_name) > 3",
    "self_join": "SELECT count(*) FROM spans c JOIN spans p ON c.trace_id = p.trace_id AND c.parent_span_id = p.span_id "
    "WHERE c.mcp_method_name = 'tools/call'",
    "sort_top": "SELECT name, duration_ns, span_id FROM spans ORDER BY duration_ns DESC, span_id LIMIT 100",
}

COMMANDS = {
    "check": ["check", "--data-dir", STORE, "--format", "json", "--quiet"],
    "report_tools": ["report", "tools", "--data-dir", STORE, "--format", "json", "--quiet"],
}
for name, sql in QUERIES.items():
    COMMANDS["query_" + name] = ["query", "--data-dir", STORE, "--format", "csv", "--quiet", sql]


def run(binary, args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run([binary] + args, capture_output=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # check exits 1 when it finds something: that is its answer, not a failure
    if proc.returncode not in (0, 1) or not proc.stdout:
        sys.exit(f"{binary} {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.decode()[-400:]}")
    return wall, cpu, proc.stdout


results = {name: {"A": [], "B": []} for name in COMMANDS}
outputs = {}
for r in range(ROUNDS):
    for name, args in COMMANDS.items():
        order = [("A", A), ("B", B)] if r % 2 == 0 else [("B", B), ("A", A)]
        for label, binary in order:
            wall, cpu, out = run(binary, args)
            results[name][label].append({"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)})
            prev = outputs.setdefault(name, out)
            if out != prev:
                sys.exit(f"{name}: the two binaries' outputs differ")
    print(f"round {r + 1} done", file=sys.stderr)

summary = {}
for name, runs in results.items():
    med = {k: {m: statistics.median(x[m] for x in runs[k]) for m in ("wall_s", "cpu_s")} for k in runs}
    summary[name] = {**med, "B_over_A_wall": round(med["B"]["wall_s"] / med["A"]["wall_s"], 3),
                     "B_over_A_cpu": round(med["B"]["cpu_s"] / med["A"]["cpu_s"], 3)}
    print(f"{name:22s} A {med['A']['wall_s']:7.3f}s  B {med['B']['wall_s']:7.3f}s  "
          f"wall {summary[name]['B_over_A_wall']:.3f}x  cpu {summary[name]['B_over_A_cpu']:.3f}x")
json.dump({"A": A, "B": B, "store": STORE, "rounds": ROUNDS, "runs": results, "medians": summary},
          open(sys.argv[1], "w"), indent=1)
