#!/usr/bin/env python3
"""Medians of vllr/vll, vll/nocc and vllr/nocc per point of raw.txt (each repetition: nocc, vll,
vllr run back to back, so each ratio is within one repetition)."""
import re, statistics, sys

rows, point = {}, None
for line in open(sys.argv[1] if len(sys.argv) > 1 else "raw.txt"):
    m = re.match(r'workload vll-range (\{.*\})', line)
    if m:
        import json
        c = json.loads(m.group(1))
        point = ("long" if c["long"] else "short", c["shared_prefix"])
        rows[point] = []
        continue
    f = line.split()
    if f and f[0] in ("nocc", "vll", "vllr"):
        rows[point].append((f[0], float(f[2])))
print("| kind | shared bits | mean range | vll / nocc | vllr / nocc | vllr / vll | reps |")
print("|---|---|---|---|---|---|---|")
for (kind, bits), rs in rows.items():
    reps = [dict(rs[i:i + 3]) for i in range(0, len(rs), 3)]
    med = lambda f: statistics.median(f(r) for r in reps)
    size = (2 ** (16 - bits) + 1) / 2
    print(f"| {kind} | {bits} | {size:g} | {med(lambda r: r['vll'] / r['nocc']):.2f} | "
          f"{med(lambda r: r['vllr'] / r['nocc']):.2f} | {med(lambda r: r['vllr'] / r['vll']):.2f} | {len(reps)} |")
