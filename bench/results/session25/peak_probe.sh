#!/bin/bash
# usage: run.sh BIN TAG  -> peak run 16x1000 for 25 s, collector CPU and metrics
BIN=$1; TAG=$2; L=$HOME/.cache/tripline-target/bench-dev/tripline-load
rm -rf /tmp/pc/data-$TAG; $BIN collect --data-dir /tmp/pc/data-$TAG --http 127.0.0.1:14318 --grpc 127.0.0.1:14317 > col-$TAG.log 2>&1 &
sleep 2; P=$(pgrep -f "collect --data-dir /tmp/pc/data-$TAG")
$L send --endpoint http://127.0.0.1:14318 --batch 1000 --concurrency 16 --duration-secs 25 > load-$TAG.json 2>load-$TAG.err
sleep 1
curl -s http://127.0.0.1:14318/metrics | grep -E "^tripline_(spans_accepted_total|spans_refused_total|requests_decoded_total|requests_total)" > metrics-$TAG.txt
CPU=$(awk '{print ($14+$15)/100}' /proc/$P/stat)
ACK=$(python3 -c "import json;d=json.load(open('load-$TAG.json'));print(d['spans_acked'], d['requests_refused'], d['latency']['p99_ms'])")
echo "$TAG cpu_s=$CPU acked/refused/p99=$ACK"; cat metrics-$TAG.txt | tr '\n' ' '; echo
kill -TERM $P; sleep 3
