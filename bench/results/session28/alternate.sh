#!/usr/bin/env bash
# Alternated `check` runs over one 10M store: release (fat LTO) vs bench-dev (no LTO, 16 CGUs).
# Usage: RELEASE=path/tripline BENCH_DEV=path/tripline STORE=dir OUT=dir alternate.sh
# (STORE: built by `scripts/bench_analyzer.py --sizes 10000000 --keep --build-only`.)
set -u
cd "$(dirname "$0")/../../.."
R=$RELEASE B=$BENCH_DEV D=$STORE
mkdir -p "$OUT"
for i in 1 2 3; do
  for pair in "release:$R" "bench-dev:$B"; do
    name=${pair%%:*}; bin=${pair#*:}
    la=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%e %U %S %M" -o "$OUT/t.txt" "$bin" check --policy samples/policy.toml \
      --format json --data-dir "$D" > "$OUT/$name-$i.json" 2>/dev/null
    rc=$?
    read -r e u s m < <(tail -1 "$OUT/t.txt")
    tl004=$(python3 -c "import json;d=json.load(open('$OUT/$name-$i.json'));print(sum(1 for f in d['findings'] if f.get('rule')=='TL004'), len(d['findings']))")
    echo "$name run$i rc=$rc load=$la wall=$e user=$u sys=$s rss_mib=$((m/1024)) tl004,all=$tl004"
  done
done
