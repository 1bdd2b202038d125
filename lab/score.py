#!/usr/bin/env python3
"""Scores a tripline binary against the lab's labels: for every recording, `tripline ingest` into
a fresh data directory and `tripline check --policy lab/policy.toml --format json`, then per
library and per scored rule: labels found, labels missed, false alarms (findings of a scored rule
that match no label, including findings on a rule the labels call not observable), and whether
the binary's coverage says *not observable* where the labels do. Writes lab/SCORE.md and
lab/score.json.

    python3 lab/score.py --bin path/to/tripline
"""
import argparse
import collections
import json
import os
import re
import subprocess
import tempfile

LAB = os.path.dirname(os.path.abspath(__file__))


def run(binary, rec_dir):
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        ing = subprocess.run([binary, "ingest", "--data-dir", data, rec_dir], capture_output=True, text=True)
        chk = subprocess.run([binary, "check", "--data-dir", data, "--policy", os.path.join(LAB, "policy.toml"), "--format", "json"],
                             capture_output=True, text=True)
        if chk.returncode not in (0, 1):
            raise SystemExit(f"check failed on {rec_dir}: rc={chk.returncode}\n{ing.stdout}{ing.stderr}{chk.stderr}")
        report = json.loads(chk.stdout)
        report["_ingest"] = (ing.stdout + ing.stderr).strip().splitlines()[0] if (ing.stdout + ing.stderr).strip() else ""
        return report


def label_spans(f):
    if f["rule"] == "TL004":
        return [s["span_id"] for s in f["server_spans"]]
    if f["rule"] == "TL008":
        return f.get("call_span_ids") or f["execute_tool_span_ids"]
    if f["rule"] == "TL007":
        return f["span_ids"]
    return f.get("call_span_ids") or [f["execute_tool_span_id"]]


def match(labels, findings):
    """Greedy: each label unit (one per expected count) takes one finding of its rule whose span
    (or related spans) belong to the label."""
    units = []
    for f in labels:
        spans = label_spans(f)
        if f["rule"] in ("TL004", "TL007"):
            units += [(f["rule"], {s}) for s in spans]
        else:
            units.append((f["rule"], set(spans)))
    free = list(findings)
    found, missed = [], []
    for rule, spans in units:
        hit = next((x for x in free if x["rule"] == rule and ({x["span_id"], *x.get("related", [])} & spans)), None)
        if hit is None and rule == "TL006":
            hit = next((x for x in free if x["rule"] == rule), None)
        if hit:
            free.remove(hit)
            found.append(rule)
        else:
            missed.append(rule)
    return found, missed, free


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--title", default="the current binary")
    args = ap.parse_args()
    labels = json.load(open(os.path.join(LAB, "labels.json")))
    scored = set(labels["scored_rules"])
    per_lib = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.Counter()))
    rows, detail = [], {}
    ingest_totals = collections.Counter()
    for name, rec in sorted(labels["recordings"].items()):
        lib = name.split("/")[0]
        report = run(args.bin, os.path.join(LAB, "recordings", name))
        findings = [f for f in report["findings"] if f["rule"] in scored]
        m = re.search(r"ingested (\d+) files .*?: (\d+) spans accepted, (\d+) rejected, (\d+) files failed", report["_ingest"])
        if m:
            ingest_totals.update(dict(zip(("files", "spans", "rejected", "failed"), map(int, m.groups()))))
        found, missed, extra = match(rec["expected_findings"], findings)
        cov = {c["rule"]: c for c in report["coverage"]}
        nob_rules = sorted(rec["not_observable"])
        honest = [r for r in nob_rules if cov.get(r, {}).get("not_observable", 0) > 0
                  or (cov.get(r, {}).get("examined", 0) == 0 and cov.get(r, {}).get("reasons"))]
        for r in found:
            per_lib[lib][r]["found"] += 1
        for r in missed:
            per_lib[lib][r]["missed"] += 1
        for x in extra:
            per_lib[lib][x["rule"]]["false"] += 1
        for r in nob_rules:
            per_lib[lib][r]["nob"] += 1
            per_lib[lib][r]["nob_said"] += r in honest
        clean = rec["negative_control"] and not extra
        rows.append((name, rec, found, missed, extra, nob_rules, honest, clean,
                     sorted(collections.Counter(f["rule"] for f in report["findings"] if f["rule"] not in scored).items())))
        detail[name] = {"found": found, "missed": missed, "false_alarms": [{k: x.get(k) for k in ("rule", "span_id", "tool", "message")} for x in extra],
                        "not_observable_labelled": nob_rules, "binary_says_not_observable": honest,
                        "unscored_findings": dict(rows[-1][8]), "ingest": report["_ingest"]}
    with open(os.path.join(LAB, "score.json"), "w") as f:
        json.dump(detail, f, indent=1)
        f.write("\n")

    out = [f"# Lab score: {args.title}", "",
           "Made by `python3 lab/score.py --bin BIN` over every recording in lab/recordings (labels:",
           "lab/labels.json; policy: lab/policy.toml). Scored rules: " + ", ".join(sorted(scored)) + ".",
           "*found* / *missed*: labelled findings the binary reported / did not (a label counts once per",
           "expected finding: per call, per orphan server span, per retry loop, per span for TL007);",
           "*false*: findings of a scored rule that match no label; *n/o*: recordings where the labels say",
           "the rule is not observable, and in brackets how many of those the binary's coverage also",
           "calls not observable.", "",
           f"Ingest over all recordings: {ingest_totals['files']} files, {ingest_totals['spans']} spans accepted, "
           f"{ingest_totals['rejected']} rejected, {ingest_totals['failed']} files failed.", "", "## Per library", "",
           "| library | found | missed | false alarms | recall | negative controls clean | not observable (binary agrees) |",
           "|---|---|---|---|---|---|---|"]
    for lib in sorted(per_lib):
        c = per_lib[lib]
        fo = sum(c[r]["found"] for r in c); mi = sum(c[r]["missed"] for r in c); fa = sum(c[r]["false"] for r in c)
        no = sum(c[r]["nob"] for r in c); ns = sum(c[r]["nob_said"] for r in c)
        negs = [r for r in rows if r[0].startswith(lib + "/") and r[1]["negative_control"]]
        out.append(f"| {lib} | {fo} | {mi} | {fa} | {fo}/{fo + mi} | {sum(1 for r in negs if r[7])}/{len(negs)} | {no} ({ns}) |")
    tot = collections.Counter()
    for lib in per_lib:
        for r in per_lib[lib]:
            tot.update(per_lib[lib][r])
    negs = [r for r in rows if r[1]["negative_control"]]
    out.append(f"| **all** | {tot['found']} | {tot['missed']} | {tot['false']} | {tot['found']}/{tot['found'] + tot['missed']} | {sum(1 for r in negs if r[7])}/{len(negs)} | {tot['nob']} ({tot['nob_said']}) |")
    out += ["", "## Per library and rule", "", "| library | rule | found | missed | false alarms | not observable (binary agrees) |", "|---|---|---|---|---|---|"]
    for lib in sorted(per_lib):
        for r in sorted(per_lib[lib]):
            c = per_lib[lib][r]
            out.append(f"| {lib} | {r} | {c['found']} | {c['missed']} | {c['false']} | {c['nob']} ({c['nob_said']}) |")
    out += ["", "## Per recording", "", "| recording | expected | found | missed | false alarms | labelled not observable (binary agrees) | unscored rules fired |", "|---|---|---|---|---|---|---|"]
    for name, rec, found, missed, extra, nob, honest, clean, unscored in rows:
        exp = ", ".join(f"{r}×{n}" for r, n in sorted(rec["expected"].items())) or "none (negative control)"
        fa = ", ".join(f"{x['rule']} `{x.get('tool') or x['span_id']}`" for x in extra) or "-"
        out.append(f"| `{name}` | {exp} | {len(found)} | {', '.join(missed) or '-'} | {fa} | {', '.join(nob) or '-'}"
                   + (f" ({', '.join(honest) or 'none'})" if nob else "") + f" | {', '.join(f'{r}×{n}' for r, n in unscored) or '-'} |")
    with open(os.path.join(LAB, "SCORE.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out[:20 + len(per_lib)]))


if __name__ == "__main__":
    main()
