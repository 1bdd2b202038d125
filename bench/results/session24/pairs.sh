#!/bin/sh
# Alternates the session-23 build (be39c21) and this session's (s24e) over the 10M-span store:
# /usr/bin/time for each run, findings hashed. Then the harness's DuckDB comparison for s24e.
set -u
STORE=/work/bench/store-10000000
OUT=${OUT:-/work/logs/s24}
cd /work/main
for round in 1 2 3; do
  for b in s23i s24e; do
    /usr/bin/time -f "$b round $round: wall %e s user %U s sys %S s maxrss %M KiB" \
      /work/bins/$b/tripline check --data-dir $STORE --policy samples/policy.toml --format json \
      > $OUT/10m.$b.$round.json 2>> $OUT/10m.time.txt
    echo "$b round $round findings $(sha256sum < $OUT/10m.$b.$round.json | cut -c1-16)" >> $OUT/10m.time.txt
  done
done
