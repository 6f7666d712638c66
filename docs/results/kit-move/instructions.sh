#!/usr/bin/env bash
# Instructions per committed transaction, before and after a change, with cachegrind (deterministic,
# unlike throughput on a shared 2-vCPU VM): for each protocol and binary, two runs of different
# lengths at 1 thread on YCSB (100,000 rows, otherwise the main job's defaults), and the slope
# (I_long - I_short) / (committed_long - committed_short), which leaves loading and start-up out.
#   docs/results/kit-move/instructions.sh OLD_ORDO NEW_ORDO OUT PROTOCOL...
set -euo pipefail
old=$1 new=$2 out=$3; shift 3
mkdir -p "$out"
for p in "$@"; do
  for side in old new; do
    bin=$old; [ "$side" = new ] && bin=$new
    for secs in 2 6; do
      f="$out/$side-$p-$secs"
      valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$bin" bench -p "$p" -t 1 --rows 100000 --seconds "$secs" --warmup 0 --quiet \
        --json "$f.json" > /dev/null 2> "$f.err"
    done
  done
done
python3 - "$out" "$@" <<'PY'
import json, re, sys
out, protocols = sys.argv[1], sys.argv[2:]
def point(side, p, secs):
    f = f"{out}/{side}-{p}-{secs}"
    refs = int(re.search(r"I\s+refs:\s+([\d,]+)", open(f + ".err").read()).group(1).replace(",", ""))
    return refs, json.load(open(f + ".json"))[0]["committed"]
print(f"{'protocol':<28} {'old instr/txn':>14} {'new instr/txn':>14} {'new/old':>8}")
for p in protocols:
    per = {}
    for side in ("old", "new"):
        (i2, c2), (i6, c6) = point(side, p, 2), point(side, p, 6)
        per[side] = (i6 - i2) / max(c6 - c2, 1)
    print(f"{p:<28} {per['old']:>14.0f} {per['new']:>14.0f} {per['new'] / per['old']:>8.3f}")
PY
