"""Per-crate size of a linked binary's code, from the linker's map file (session 35).

Why a map file: the shipped binary is stripped, and a build that keeps symbols (`profiling`)
rebuilds every dependency. Passing the map flag to the final crate alone relinks only it:

    cargo rustc --release -p tripline --bin tripline -- -C link-arg=-Wl,-Map=tripline.map

rust-lld's map lists every function's input section (`.text.<mangled name>`) with its size.
Names are demangled with c++filt (legacy mangling: no generic arguments), and each function is
charged to the first crate its path names that is not core/alloc/std (a generic function counts
for the crate that defines it, wherever it was instantiated).

usage: python3 map_crates.py tripline.map [TOP]
"""
import collections, re, subprocess, sys

STD = {"core", "alloc", "std", "hashbrown", "impl", "dyn"}
IDENT = re.compile(r"(?<![A-Za-z0-9_:])([A-Za-z_][A-Za-z0-9_]*)::")

rows = []
for line in open(sys.argv[1]):
    m = re.search(r":\(\.text\.(\S+)\)$", line.strip())
    if m:
        rows.append((int(line.split()[2], 16), m.group(1)))
names = subprocess.run(["c++filt"], input="\n".join(n for _, n in rows),
                       capture_output=True, text=True, check=True).stdout.splitlines()
by_crate = collections.Counter()
for (size, _), name in zip(rows, names):
    ids = IDENT.findall(name)
    by_crate[next((c for c in ids if c not in STD), ids[0] if ids else "?")] += size
total = sum(by_crate.values())
print(f"code in .text input sections: {total / 1e6:.2f} MB in {len(rows)} functions")
for crate, size in by_crate.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 40):
    print(f"{size / 1e6:7.2f} MB {100 * size / total:5.1f}%  {crate}")
