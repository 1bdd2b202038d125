#!/bin/bash
# Whole-process user-space instructions of a receiver under callgrind, for a fixed load.
# usage: cg_compare.sh tripline|o2p BINDIR REQUESTS BATCH OUTTAG
set -u
who=$1; BIN=$2; N=$3; BATCH=$4; TAG=$5
W=/tmp/s15-cg/$TAG; rm -rf $W; mkdir -p $W/data
port=$((20000 + RANDOM % 20000))
if [ "$who" = tripline ]; then
  valgrind --tool=callgrind --callgrind-out-file=$W/cg.out $BIN/tripline-collector collect --data-dir $W/data \
    --http 127.0.0.1:$port --grpc 127.0.0.1:0 > $W/server.log 2>&1 &
else
  (cd $W && OTLP2PARQUET_LISTEN_ADDR=127.0.0.1:$port OTLP2PARQUET_LOG_LEVEL=warn OTLP2PARQUET_STORAGE_BACKEND=fs \
    OTLP2PARQUET_STORAGE_PATH=$W/data valgrind --tool=callgrind --callgrind-out-file=$W/cg.out \
    ~/.cache/otlp2parquet/bin/otlp2parquet serve > $W/server.log 2>&1) &
fi
vpid=$!
for i in $(seq 1 600); do
  if curl -s -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null || curl -s -o /dev/null -X POST "http://127.0.0.1:$port/v1/traces" 2>/dev/null; then break; fi
  sleep 0.5
done
if [ "$N" -gt 0 ]; then
  $BIN/tripline-load send --endpoint http://127.0.0.1:$port --protocol http --batch $BATCH --concurrency 1 --rate 500 \
    --max-requests $N --duration-secs 3000 --timeout-secs 600 --seed 1 > $W/load.json 2> $W/load.err
fi
pkill -TERM -f "callgrind-out-file=$W/cg.out" 
wait $vpid
total=$(grep -h "^summary:\|^totals:" $W/cg.out | awk '{print $2}' | head -1)
acked=$(python3 -c "import json;print(json.load(open('$W/load.json'))['spans_acked'])" 2>/dev/null || echo 0)
echo "$TAG who=$who requests=$N batch=$BATCH instructions=$total acked=$acked"
