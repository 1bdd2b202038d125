"""Two load generators alternated against one collector build (session 34): per round a p99
run of 16 connections x 1,000-span bodies at RATE spans/s with OLD (`tripline-load` as given)
and NEW (`tripline-load` as given, with `--prebuilt NEW_PREBUILT` when that is set).
usage: TRIPLINE=BIN OLD=LOAD_A NEW=LOAD_B [NEW_PREBUILT=N] WORK=DIR RATE=110000 ROUNDS=3 \
  load-ab.py OUT.json"""
import argparse, json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
import bench_collector as bc
runs = []
for i in range(int(os.environ.get("ROUNDS", "3"))):
    for label in ("old", "new"):
        args = argparse.Namespace(tripline=os.environ["TRIPLINE"], load=os.environ[label.upper()],
                                  work=os.path.join(os.environ["WORK"], label), secs=20,
                                  concurrency=16, batch=1000, tripline_args="",
                                  latency_rate=float(os.environ.get("RATE", "110000")),
                                  latency_prebuilt=int(os.environ.get("NEW_PREBUILT", "0"))
                                  if label == "new" else 0)
        l = bc.latency_run(args, "tripline", None)
        lat = l["load"]["latency"]
        row = {"round": i, "load": label, "prebuilt": l["prebuilt"], "offered": l["offered_spans_per_sec"],
               "acked_per_sec": l["load"]["acked_spans_per_sec"],
               "p50": lat["p50_ms"], "p90": lat["p90_ms"], "p99": lat["p99_ms"],
               "max": lat["max_ms"], "refused": l["load"]["requests_refused"],
               "failed": l["load"]["requests_failed"],
               "spans_per_cpu_sec": round(l["spans_per_cpu_sec"]),
               "stages_p99_bound_ms": {k: v.get("p99_bound_ms")
                                       for k, v in (l.get("ack_stages") or {}).items()},
               "stages_mean_ms": {k: round(v["mean_ms"], 2)
                                  for k, v in (l.get("ack_stages") or {}).items()
                                  if v.get("mean_ms") is not None}}
        print(json.dumps(row), flush=True)
        runs.append(row)
json.dump(runs, open(sys.argv[1], "w"), indent=1)
