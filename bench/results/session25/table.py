"""Prints one row per pairing result (bench_collector.py JSON): spans per CPU-second of both
receivers at peak and at 80% of tripline's peak, the ratio, refusals and p99s."""
import json, sys, glob
rows = []
for f in sys.argv[1:] or sorted(glob.glob('*-*x*.json')):
    d = json.load(open(f))
    t, o = d['tripline_http'], d['otlp2parquet_http']
    tl, ol = d.get('tripline_latency', {}), d.get('otlp2parquet_latency', {})
    print(f"{f:22} peak {t['spans_per_cpu_sec']:>9,.0f} / {o['spans_per_cpu_sec']:>9,.0f} = {t['spans_per_cpu_sec']/o['spans_per_cpu_sec']:.2f}x"
          f"  refused {t['load']['requests_refused']:>5} acked/s {t['acked_spans_per_sec']:>9,.0f} all_readable {t['all_acked_readable']}/{o.get('all_acked_readable')}"
          f" | 80%: {tl.get('spans_per_cpu_sec',0):>9,.0f} / {ol.get('spans_per_cpu_sec',0):>9,.0f} = {tl.get('spans_per_cpu_sec',0)/max(1,ol.get('spans_per_cpu_sec',1)):.2f}x"
          f" p99 {tl.get('p99_ms')} / {ol.get('p99_ms')} ms at {tl.get('offered_spans_per_sec',0):,.0f}/s")
