#!/bin/bash
# usage: lat.sh NICE RATE TAG BINDIR ; prints p50 p99 stages and steal/iowait jiffies during the run
# (run from the repository root; the JSON goes to $OUT, default the current directory)
nice=$1; rate=$2; tag=$3; BIN=$4
OUT=${OUT:-.}
s0=$(head -1 /proc/stat)
~/.cache/tripline-venv/bin/python scripts/bench_collector.py --tripline $BIN/tripline --load $BIN/tripline-load --otlp2parquet ~/.cache/otlp2parquet/bin/otlp2parquet --work /tmp/s15-bench/nice --secs 20 --batch 1000 --concurrency 16 --tripline-args "--writer-nice $nice" --latency-rate $rate --steps tripline_latency --out $OUT/lat-$tag.json 2>/dev/null
s1=$(head -1 /proc/stat)
python3 - "$s0" "$s1" $OUT/lat-$tag.json <<'PY'
import sys, json
a=list(map(int,sys.argv[1].split()[1:])); b=list(map(int,sys.argv[2].split()[1:]))
d=[y-x for x,y in zip(a,b)]; tot=sum(d)
names=["user","nice","system","idle","iowait","irq","softirq","steal"]
r=json.load(open(sys.argv[3])); l=r['tripline_latency']
print(sys.argv[3].split('/')[-1], r['tripline_args'], 'p50', l['p50_ms'], 'p99', l['p99_ms'], '429', l['load']['requests_refused'],
  {k:(round(v['mean_ms'],1) if v['mean_ms'] else 0, v['p99_bound_ms']) for k,v in l['ack_stages'].items()},
  ' '.join(f"{n}={100*x/tot:.1f}%" for n,x in zip(names,d)))
PY
