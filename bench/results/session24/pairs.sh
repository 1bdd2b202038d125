#!/bin/sh
# Alternates the session-23 build (be39c21) and this session's (s24e) over the 10M-span store:
# /usr/bin/time for each run, findings hashed (the DuckDB comparison is harness.sh).
# BINS: the folder holding one folder per build (s23i/, s24e/, each with `tripline`);
# STORE: the 10M-span store; OUT: where the findings and timings go.
set -u
: "${BINS:?set BINS}" "${STORE:?set STORE}" "${OUT:?set OUT}"
cd "$(dirname "$0")/../../.."
for round in 1 2 3; do
  for b in s23i s24e; do
    /usr/bin/time -f "$b round $round: wall %e s user %U s sys %S s maxrss %M KiB" \
      "$BINS/$b/tripline" check --data-dir $STORE --policy samples/policy.toml --format json \
      > $OUT/10m.$b.$round.json 2>> $OUT/10m.time.txt
    echo "$b round $round findings $(sha256sum < $OUT/10m.$b.$round.json | cut -c1-16)" >> $OUT/10m.time.txt
  done
done
