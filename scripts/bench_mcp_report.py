#!/usr/bin/env python3
"""Peak memory of one MCP `report` (or `check`) call: `tripline mcp` over stdio under `time -v`.

Why a script: the MCP server is a long-lived process, so its peak for one tool call is measured
by starting it, sending `initialize` and one `tools/call report`, closing stdin (the server
exits) and reading `time -v`'s report. Prints what the answer held (rows, `total_rows`,
`truncated`, spans scanned, bytes) and the raw `time -v` output; with `--rows FILE` also writes
the answer's rows, to compare two binaries' answers.

Usage: bench_mcp_report.py --tripline BIN --data-dir DIR [--tool check] [--kind KIND]
    [--args JSON] [--rows FILE]
"""

import argparse
import json
import subprocess


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tripline", required=True)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--tool", default="report", choices=["report", "check"])
    ap.add_argument("--kind", help="the report kind (report only)")
    ap.add_argument("--args", default="{}", help="more arguments of the call, as a JSON object")
    ap.add_argument("--rows", help="write the answer's rows (JSON) to this file")
    ap.add_argument("--timeout", type=float, default=3600)
    a = ap.parse_args()
    cmd = ["nice", "-n", "10", "/usr/bin/time", "-v", a.tripline, "--data-dir", a.data_dir, "mcp"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None

    def send(m: dict) -> None:
        p.stdin.write(json.dumps(m) + "\n")
        p.stdin.flush()

    def answer() -> dict:
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("the server closed stdout: " + p.stderr.read()[-3000:])
            m = json.loads(line)
            if "id" in m:
                return m

    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    answer()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    args = ({"kind": a.kind} if a.kind else {}) | json.loads(a.args)
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": a.tool, "arguments": args}})
    r = answer()
    p.stdin.close()
    err = p.stderr.read()
    p.wait(a.timeout)
    res = r.get("result", {})
    sc = res.get("structuredContent", {})
    print(f"tools/call {a.tool} {json.dumps(args)} -> isError: {res.get('isError')} error: {r.get('error')}")
    listed = "findings" if a.tool == "check" else "rows"
    total = sc.get("total_findings" if a.tool == "check" else "total_rows")
    print(
        f"{listed}: {len(sc.get(listed, []))} total: {total} truncated: {sc.get('truncated')} "
        f"scanned spans: {sc.get('scanned', {}).get('spans')}"
    )
    print(f"answer bytes: {len(json.dumps(r))}")
    for n in sc.get("notes", [])[:3]:
        print(f"note: {n}")
    if a.rows:
        with open(a.rows, "w") as f:
            json.dump(sc.get(listed, []), f)
    # time -v's report (the server's own log lines left out).
    print("\n".join(line for line in err.splitlines() if line.startswith("\t") or line.startswith("Command")))


if __name__ == "__main__":
    main()
