#!/usr/bin/env python3
"""Prints the Fig. 8 / Fig. 9 sweep tables (txn/s, and × nocc) from the JSON files beside this script."""
import glob, json, os, re

here = os.path.dirname(os.path.abspath(__file__))

def load(pattern, key):
    rows = {}
    for f in sorted(glob.glob(os.path.join(here, pattern))):
        x = key(os.path.basename(f))
        for r in json.load(open(f)):
            rows.setdefault(r["protocol"], {})[x] = r["committed_per_sec"]
    return rows

def table(title, rows, xs, xname):
    print(f"\n{title}\n")
    print(f"| protocol | " + " | ".join(f"{xname} {x}" for x in xs) + " |")
    print("|---|" + "---:|" * len(xs))
    base = rows.get("nocc", {})
    for p, v in rows.items():
        cells = []
        for x in xs:
            t = v.get(x)
            if t is None:
                cells.append("—")
            elif p == "nocc" or not base.get(x):
                cells.append(f"{t/1000:,.0f}k")
            else:
                cells.append(f"{t/1000:,.0f}k ({t/base[x]:.2f}×)")
        print(f"| `{p}` | " + " | ".join(cells) + " |")

num = lambda pat: (lambda name: float(re.search(pat, name).group(1)))
cis = [0.0001, 0.001, 0.01, 0.1, 1.0]
for kind in ["short", "long"]:
    rows = load(f"fig8-{kind}-ci*.json", num(r"ci([0-9.]+)\.json"))
    table(f"Fig. 8 ({kind} transactions, 1 partition, 2 threads): txn/s by contention index", rows, cis, "CI")
for ci in ["0.001", "0.1"]:
    rows = load(f"fig9-ci{ci}-mp*.json", num(r"mp([0-9]+)\.json"))
    table(f"Fig. 9 (short transactions, CI {ci}, 2 partitions = 2 threads): txn/s by % multi-partition",
          rows, [0.0, 20.0, 50.0, 100.0], "MP%")
