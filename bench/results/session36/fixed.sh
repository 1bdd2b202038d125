#!/bin/bash
# Session 36. LOAD=path/to/tripline-load (with --warmup-secs for lat.sh), WORK=scratch dir,
# PYTHON=a python with the bench requirements.
# usage: fixed.sh BIN RATE SECS -> perf stat of the collector under a fixed offered load
BIN=$1; RATE=$2; SECS=${3:-15}
W=$(mktemp -d "${WORK:-/tmp}/fx.XXXX"); mkdir -p $W/data
$BIN collect --data-dir $W/data --http 127.0.0.1:14318 --grpc 127.0.0.1:14317 > $W/server.log 2>&1 &
SP=$!; sleep 1.5
(sleep 3; perf stat -e task-clock,instructions,cycles -p $SP -o $W/stat.txt -- sleep $((SECS-5)) ) &
"$LOAD" send --endpoint http://127.0.0.1:14318 --protocol http --batch 1000 --concurrency 16 --duration-secs $SECS --seed 1 --backoff-ms 20 --timeout-secs 30 --rate $RATE > $W/load.json
wait %2 2>/dev/null; sleep 0.5
kill -INT $SP; wait $SP
python3 - $W <<'P'
import json,sys,re
w=sys.argv[1]; l=json.load(open(w+"/load.json")); s=open(w+"/stat.txt").read()
def g(n):
    m=re.search(r"([\d,\.]+)\s+(msec\s+)?"+n, s); return float(m.group(1).replace(",","")) if m else None
tc=g("task-clock"); ins=g("instructions"); cyc=g("cycles")
rate=l["acked_spans_per_sec"]; secs=float(re.search(r"([\d\.]+) seconds time elapsed",s).group(1))
spans=rate*secs
print(json.dumps({"bin":sys.argv[0],"acked_per_sec":round(rate),"refused":l["requests_refused"],"cpu_ms_per_1k_spans":round(tc/spans*1000,3),"instr_per_span":round(ins/spans) if ins else None,"cycles_per_span":round(cyc/spans) if cyc else None}))
P
rm -rf $W
