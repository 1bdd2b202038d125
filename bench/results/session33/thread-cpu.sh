#!/bin/bash
# usage: T=BIN/tripline L=BIN/tripline-load thread-cpu.sh LABEL [load args]: CPU seconds per thread name over the load, per 1M acked spans
label=$1; shift
T=${T:?set T to the tripline binary}
L=${L:?set L to the tripline-load binary}
rm -rf d-$label; mkdir d-$label
$T collect --data-dir d-$label --http 127.0.0.1:14318 --grpc 127.0.0.1:14317 $COLLECT_ARGS > srv-$label.log 2>&1 &
pid=$!
sleep 2
snap() { for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(awk '{print $14" "$15}' $t/stat)"; done; }
snap > thr0-$label.txt
$L send --endpoint http://127.0.0.1:14318 --batch 1000 --concurrency 16 --duration-secs 20 "$@" > load-$label.json
snap > thr1-$label.txt
kill -TERM $pid; wait $pid
python3 - "$label" <<'PY'
import sys, json, collections
l=sys.argv[1]
def rd(f):
    d=collections.Counter()
    for line in open(f):
        n,u,s=line.rsplit(' ',2); d[n.strip()]+=int(u)+int(s); d[n.strip()+' (sys)']+=int(s)
    return d
a=rd(f'thr0-{l}.txt'); b=rd(f'thr1-{l}.txt')
j=json.load(open(f'load-{l}.json'))
spans=j['spans_acked']
tot=sum(v for k,v in b.items() if 'sys' not in k)-sum(v for k,v in a.items() if 'sys' not in k)
print(l, 'acked', spans, 'refused', j['requests_refused'], 'cpu s', tot/100, 'us/span', round(tot/100/spans*1e6,2))
for k in sorted(b, key=lambda k: -(b[k]-a[k])):
    if b[k]-a[k] > 0: print(f"  {k:20s} {(b[k]-a[k])/100:7.2f} s  {(b[k]-a[k])/100/spans*1e6:6.2f} us/span")
PY
