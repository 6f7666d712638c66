#!/usr/bin/env bash
# Instructions per transaction with a fixed number of transactions (`ordo verify --txns N`, so the
# count does not depend on how much CPU a time-bounded run got): cachegrind over two counts at
# 1 thread on YCSB with the main job's parameters (100,000 rows), and the slope
# (I(N2) - I(N1)) / (N2 - N1). Recording and the checker's per-transaction work are in both binaries'
# counts alike.
#   docs/results/kit-move/instructions-verify.sh OLD_ORDO NEW_ORDO OUT PROTOCOL...
set -euo pipefail
old=$1 new=$2 out=$3; shift 3
n1=20000 n2=60000
mkdir -p "$out"
for p in "$@"; do
  for side in old new; do
    bin=$old; [ "$side" = new ] && bin=$new
    for n in $n1 $n2; do
      valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$bin" verify -p "$p" -t 1 --txns "$n" --rows 100000 --theta 0.6 --ops 16 \
        --read-ratio 0.9 > /dev/null 2> "$out/$side-$p-$n.err" || true
    done
  done
done
python3 - "$out" "$n1" "$n2" "$@" <<'PY'
import re, sys
out, n1, n2, protocols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def refs(side, p, n):
    t = open(f"{out}/{side}-{p}-{n}.err").read()
    return int(re.search(r"I\s+refs:\s+([\d,]+)", t).group(1).replace(",", ""))
print(f"{'protocol':<28} {'old instr/txn':>14} {'new instr/txn':>14} {'new/old':>8}")
for p in protocols:
    per = {s: (refs(s, p, n2) - refs(s, p, n1)) / (n2 - n1) for s in ("old", "new")}
    print(f"{p:<28} {per['old']:>14.0f} {per['new']:>14.0f} {per['new'] / per['old']:>8.3f}")
PY
