#!/bin/bash
# check --since last: a 1M-span store checked once, then 5M new spans (later days) checked with the
# new spans' ids bounded (default) and all in memory (TRIPLINE_SPILL_IDS=100000000), from copies of
# the same state. Peak RSS and wall from /usr/bin/time -v; findings compared.
set -eu
B=~/.cache/tripline-target/bench-dev
W=/tmp/s15-inc; rm -rf $W; mkdir -p $W
cd "$(dirname "$0")/../../.."
BASE=1793610000; STRETCH=$((4*86400))
gen() { rm -rf $W/chunk; $B/tripline-samples --spans 1000000 --out $W/chunk --seed $1 --start-unix-secs $2 > /dev/null 2>&1; $B/tripline --data-dir $W/data ingest $W/chunk > /dev/null 2>&1; rm -rf $W/chunk; }
mkdir -p $W/s
gen 100 $BASE
/usr/bin/time -v $B/tripline --data-dir $W/data check --since last --state $W/s/state.json --policy samples/policy.toml --format json > $W/run1.json 2> $W/run1.err || true
for i in 1 2 3 4 5; do gen $((100+i)) $((BASE + i*STRETCH)); done
for v in bounded memory; do
  rm -rf $W/s-$v; cp -r $W/s $W/s-$v
  if [ $v = memory ]; then export TRIPLINE_SPILL_IDS=100000000; else unset TRIPLINE_SPILL_IDS; fi
  TRIPLINE_WINDOW_TRACE=1 /usr/bin/time -v $B/tripline --data-dir $W/data check --since last --state $W/s-$v/state.json --policy samples/policy.toml --format json > $W/run2-$v.json 2> $W/run2-$v.err || true
  echo "$v: $(grep -E 'Maximum resident|Elapsed' $W/run2-$v.err | tr -s ' ' | tr '\n' ' ') $(grep '^new ids' $W/run2-$v.err)"
done
unset TRIPLINE_SPILL_IDS
python3 - $W <<'PY'
import json, sys, hashlib
w = sys.argv[1]
for v in ("bounded", "memory"):
    d = json.load(open(f"{w}/run2-{v}.json"))
    h = hashlib.sha256(json.dumps(d["findings"], sort_keys=True).encode()).hexdigest()[:16]
    print(v, "findings", len(d["findings"]), "sha", h, "incremental", d.get("incremental"))
d = json.load(open(f"{w}/run1.json")); print("run1 findings", len(d["findings"]))
PY
grep -E 'Maximum resident|Elapsed' $W/run1.err
