#!/usr/bin/env python3
"""vll-sca / vll from raw.txt (ab.sh): each invocation runs vll, vll-sca, vll, vll-sca; its ratio
is the sum of the two vll-sca runs over the sum of the two vll runs. Prints, per point, the ratios
of every invocation and their median."""
import re, statistics, sys, collections
ratios = collections.OrderedDict()
key, runs = None, []
def flush():
    if key and runs:
        v = sum(t for p, t in runs if p == "vll")
        s = sum(t for p, t in runs if p == "vll-sca")
        ratios.setdefault(key, []).append((s / v, v / 2, s / 2))
for line in open(sys.argv[1] if len(sys.argv) > 1 else "raw.txt"):
    m = re.match(r"# round \d+ ci (\S+) (\S+) hot (\d+)", line)
    if m:
        flush(); key, runs = (m.group(2), float(m.group(1))), []
        continue
    f = line.split()
    if f and f[0] in ("vll", "vll-sca"):
        runs.append((f[0], float(f[2])))
flush()
print("| length, CI | vll-sca / vll per invocation | median | vll, vll-sca (k txn/s, means) |")
print("|---|---|---:|---|")
for (length, ci), rs in ratios.items():
    per = ", ".join(f"{r:.2f}" for r, _, _ in rs)
    med = statistics.median(r for r, _, _ in rs)
    v = statistics.mean(x for _, x, _ in rs) / 1e3
    s = statistics.mean(x for _, _, x in rs) / 1e3
    print(f"| {length}, {ci:g} | {per} | **{med:.2f}** | {v:,.0f}, {s:,.0f} |")
