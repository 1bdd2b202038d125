#!/bin/bash
# Session 37. Whole-run and settled p99 at a fixed rate (16 x 1,000), the collector started with
# --pretouch-bytes 0 and with the default, alternated PAIRS times (session 36's lat.sh does each run).
# IDLE=seconds the machine rests before each run (default 0), FIRST=default to start each pair
# with the default instead of --pretouch-bytes 0.
# usage: LOAD=.../tripline-load WORK=DIR PYTHON=... pretouch-lat.sh BIN RATE [PAIRS] [SECS]
BIN=$1; RATE=$2; PAIRS=${3:-3}; SECS=${4:-20}
LAT="$(cd "$(dirname "$0")/../session36" && pwd)/lat.sh"
run() {
  sleep "${IDLE:-0}"
  if [ "$1" = none ]; then
    echo "== pair $i, --pretouch-bytes 0"
    bash "$LAT" "$BIN" "$RATE" "$SECS" --pretouch-bytes 0
  else
    echo "== pair $i, default pretouch"
    bash "$LAT" "$BIN" "$RATE" "$SECS"
  fi
}
for i in $(seq 1 "$PAIRS"); do
  if [ "${FIRST:-none}" = default ]; then run default; run none; else run none; run default; fi
done
