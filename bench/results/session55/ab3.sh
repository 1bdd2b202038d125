#!/usr/bin/env bash
# ab3.sh N bin... : alternated 10M checks over the binaries, wall/user/sys/rss, outputs compared to the first
N=$1; shift; S=${STORE:?set STORE to the store directory}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
for i in $(seq 1 $N); do
  for bin in "$@"; do
    n=$(basename $bin)
    /usr/bin/time -f "round $i $n wall %e user %U sys %S rss_kib %M" $bin check --data-dir $S --policy "$ROOT/samples/policy.toml" --format json > /tmp/out-$n.json 2>/tmp/err-$n.txt
    tail -1 /tmp/err-$n.txt
  done
  first=$(basename $1)
  for bin in "$@"; do cmp -s /tmp/out-$first.json /tmp/out-$(basename $bin).json && echo "round $i $(basename $bin) output identical to $first" || echo "round $i $(basename $bin) OUTPUT DIFFERS"; done
done
