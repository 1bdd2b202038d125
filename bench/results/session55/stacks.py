"""Usage: stacks.py STACKS FUNC [depth]: within samples whose stack contains FUNC, share of the
leaf symbols and of FUNC's direct callees (inclusive)."""
import sys, collections, re
path, func = sys.argv[1], sys.argv[2]
samples = []
cur = []
for line in open(path, errors="replace"):
    line = line.rstrip("\n")
    if not line.strip():
        if cur: samples.append(cur)
        cur = []
        continue
    if line.startswith((" ", "\t")):
        parts = line.strip().split(None, 1)
        cur.append(parts[1] if len(parts) > 1 else "?")
    else:
        cur = []
if cur: samples.append(cur)
total = len(samples)
inc = 0
callee = collections.Counter(); leaf = collections.Counter()
for st in samples:  # st[0] is leaf
    idx = [i for i, f in enumerate(st) if func in f]
    if not idx: continue
    inc += 1
    top = max(idx)
    i = top
    leaf[st[0]] += 1
    callee[st[top - 1] if top > 0 else "(self)"] += 1
print(f"{func}: {inc} of {total} samples ({100*inc/total:.2f}%)")
print("-- direct callees (inclusive)")
for k, v in callee.most_common(25): print(f"{100*v/total:6.2f}% {k[:150]}")
print("-- leaves")
for k, v in leaf.most_common(20): print(f"{100*v/total:6.2f}% {k[:150]}")
