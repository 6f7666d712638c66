#!/usr/bin/env python3
"""Prints the Fig. 8 / Fig. 9 sweep tables (txn/s, and × nocc) from the JSON files beside this
script (written by sweeps.sh: one `ordo bench` sweep per file)."""
import json, os

here = os.path.dirname(os.path.abspath(__file__))

def load(name):
    """protocol -> {sweep value: txn/s}, and the sweep's values in order."""
    rows, xs = {}, []
    for r in json.load(open(os.path.join(here, name))):
        x = r["sweep"]["value"]
        if x not in xs:
            xs.append(x)
        rows.setdefault(r["protocol"], {})[x] = r["committed_per_sec"]
    return rows, xs

def table(title, rows, xs, xname):
    print(f"\n{title}\n")
    print(f"| protocol | " + " | ".join(f"{xname} {x:g}" for x in xs) + " |")
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

for panel, kind, hot in [("a", "long", ""), ("b", "long", "-deadlocks"),
                         ("c", "short", ""), ("d", "short", "-deadlocks")]:
    if not os.path.exists(os.path.join(here, f"fig8-{kind}{hot}.json")):
        continue
    rows, xs = load(f"fig8-{kind}{hot}.json")
    records = "2 hot records per transaction: deadlocks possible" if hot else "1 hot record per transaction"
    table(f"Fig. 8{panel} ({kind} transactions, {records}, 1 partition, 2 threads): txn/s by contention index",
          rows, xs, "CI")
for ci in ["0.001", "0.1"]:
    rows, xs = load(f"fig9-ci{ci}.json")
    table(f"Fig. 9 (short transactions, CI {ci}, 2 partitions = 2 threads): txn/s by % multi-partition",
          rows, xs, "MP%")
