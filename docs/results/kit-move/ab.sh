#!/usr/bin/env bash
# The main job's protocols before and after a change, interleaved: for each protocol, the old binary's
# run, then the new one's, REPS times, on the main job's workload (YCSB defaults) at 1 and 2 threads.
# Writes one JSON file per run under OUT and prints the per-protocol new/old ratios (pairs.py style:
# the median of each pair's ratio).
#   docs/results/kit-move/ab.sh OLD_ORDO NEW_ORDO OUT [REPS] [SECONDS]
set -euo pipefail
old=$1 new=$2 out=$3 reps=${4:-3} secs=${5:-1}
mkdir -p "$out"
protocols=$("$old" list | awk '/^protocols:/{p=1;next} /^workloads:/{p=0} p{print $1}')
for rep in $(seq 1 "$reps"); do
  for p in $protocols; do
    for side in old new; do
      bin=$old; [ "$side" = new ] && bin=$new
      "$bin" bench -p "$p" -t 1,2 --seconds "$secs" --warmup 0.3 --quiet \
        --json "$out/$side-$p-$rep.json" > /dev/null
    done
  done
done
python3 - "$out" <<'PY'
import json, sys, glob, statistics, collections
out = sys.argv[1]
r = collections.defaultdict(list)
for f in glob.glob(f"{out}/new-*.json"):
    g = f.replace("/new-", "/old-")
    new = {(x["protocol"], x["threads"]): x["committed_per_sec"] for x in json.load(open(f))}
    old = {(x["protocol"], x["threads"]): x["committed_per_sec"] for x in json.load(open(g))}
    for k in new:
        r[k].append(new[k] / old[k])
print(f"{'protocol':<28} {'thr':>3} {'new/old (median)':>17}  pairs")
for (p, t) in sorted(r):
    v = r[(p, t)]
    print(f"{p:<28} {t:>3} {statistics.median(v):>17.3f}  {' '.join(f'{x:.3f}' for x in sorted(v))}")
PY
