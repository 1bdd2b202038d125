#!/usr/bin/env python3
"""A/B: alternate binaries (label=path[,ENV=V...]) N rounds over the 10M store; phases from stderr timestamps."""
import subprocess, sys, time, os, resource, re
n = int(sys.argv[1]); variants = [a.split('=', 1) for a in sys.argv[2:]]
store = os.environ.get('STORE', 'store-10000000')
for r in range(n):
    for label, spec in variants:
        parts = spec.split(','); binary = parts[0]
        env = dict(os.environ, TRIPLINE_WINDOW_TRACE='1')
        for kv in parts[1:]:
            k, v = kv.split('=', 1); env[k] = v
        t0 = time.time(); marks = {}
        p = subprocess.Popen(['/usr/bin/time', '-f', 'TIME wall %e user %U sys %S maxrss %M', binary, 'check', '--policy', 'samples/policy.toml', '--format', 'json', '--data-dir', store],
                             stdout=open(f'/tmp/ab-{label}.json', 'w'), stderr=subprocess.PIPE, text=True, env=env)
        last_window = None; timeline = ''
        for line in p.stderr:
            t = time.time() - t0
            if line.startswith('pass 1: ') and 'traces' in line: marks['pass1'] = t
            elif line.startswith('planned'): marks['planned'] = t
            elif line.startswith('window 0:'): marks['w0'] = t
            elif line.startswith('window '): last_window = t
            elif line.startswith('findings:'): marks['findings'] = t
            elif line.startswith('TIME'): timeline = line.strip()[5:]
        p.wait(); end = time.time() - t0
        print(f"{label:8s} {timeline}  pass1 {marks.get('pass1',0):.2f} plan {marks.get('planned',0)-marks.get('pass1',0):.2f} "
              f"w0 {marks.get('w0',0)-marks.get('planned',0):.2f} windows {last_window-marks.get('w0',0):.2f} tail {end-marks.get('findings',0):.2f}", flush=True)
