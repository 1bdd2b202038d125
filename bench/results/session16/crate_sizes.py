"""Per-crate .text attribution of a Rust binary from `nm -S -C` (like cargo-bloat --crates).
Generic std/core/alloc instances are charged to the first non-std crate named in their generics."""
import re, subprocess, sys, collections
STD = {"core", "alloc", "std", "hashbrown", "impl", "dyn"}
path = sys.argv[1]
out = subprocess.run(["nm", "-S", "-C", "--size-sort", path], capture_output=True, text=True).stdout
sizes = collections.Counter(); total = 0
ident = re.compile(r"(?<![A-Za-z0-9_:])([A-Za-z_][A-Za-z0-9_]*)::")
for line in out.splitlines():
    parts = line.split(" ", 3)
    if len(parts) < 4 or parts[2] not in "tTwW": continue
    size = int(parts[1], 16); name = parts[3]; total += size
    crates = [c for c in ident.findall(name)]
    pick = next((c for c in crates if c not in STD), crates[0] if crates else "?")
    sizes[pick] += size
print(f"total text symbols: {total/1e6:.1f} MB")
for c, s in sizes.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 60):
    print(f"{s/1e6:8.2f} MB  {100*s/total:5.1f}%  {c}")
