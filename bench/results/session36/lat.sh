#!/bin/bash
# Session 36. LOAD=path/to/tripline-load (with --warmup-secs for lat.sh), WORK=scratch dir,
# PYTHON=a python with the bench requirements.
# usage: lat.sh BIN RATE SECS [extra collect args] -> client latency + server stage p99 bounds
BIN=$1; RATE=$2; SECS=${3:-20}; shift 3
W=$(mktemp -d "${WORK:-/tmp}/lt.XXXX"); mkdir -p $W/data
$BIN collect --data-dir $W/data --http 127.0.0.1:14318 --grpc 127.0.0.1:14317 "$@" > $W/server.log 2>&1 &
SP=$!; sleep 1.5
"$LOAD" send --warmup-secs 2 --endpoint http://127.0.0.1:14318 --protocol http --batch 1000 --concurrency 16 --duration-secs $SECS --seed 1 --backoff-ms 20 --timeout-secs 30 --rate $RATE --prebuilt 4 > $W/load.json
curl -s http://127.0.0.1:14318/metrics > $W/metrics.txt
kill -INT $SP; wait $SP
"${PYTHON:-python3}" - $W "$(cd "$(dirname "$0")/../../../scripts" && pwd)" <<'P'
import json,sys
sys.path.insert(0,sys.argv[2])
w=sys.argv[1]; l=json.load(open(w+"/load.json"))
import bench_collector as bc, re
stages=bc.parse_ack_stages(open(w+"/metrics.txt").read())
out={k:(round(v["mean_ms"],2) if v["mean_ms"] is not None else None, v["p99_bound_ms"]) for k,v in stages.items()}
lat=l["latency"]
la=l["latency_after_warmup"]; print(json.dumps({"settled_p50":la["p50_ms"],"settled_p99":la["p99_ms"],"settled_max":la["max_ms"],"n":la["count"]}))
print(json.dumps({"acked/s":round(l["acked_spans_per_sec"]),"refused":l["requests_refused"],"p50":lat.get("p50_ms"),"p90":lat.get("p90_ms"),"p99":lat.get("p99_ms"),"max":lat.get("max_ms")}))
print(" stages mean/p99bound ms:", out)
P
rm -rf $W
