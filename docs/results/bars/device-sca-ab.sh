#!/usr/bin/env bash
# `vll-sca` against `vll` on a lent 16-core machine, two builds interleaved invocation by invocation
# (2026-11-27, about 4 minutes): the paper's Fig. 8b workload (two hot records per transaction) at
# CI 0.05 and 0.1, short and long, 4 and 16 workers, and Fig. 8a's (one hot record) at CI 0.01 and
# 0.1, 16 workers; every run pinned. Then bar 1's pairs at 2 workers with the last build, and one
# contended point with ORDO_VLL_STATS (each worker's SCA passes, finds, busy and idle turns).
# Usage: [BINS="ordo ordo-new"] docs/results/bars/device-sca-ab.sh OUTDIR [SECONDS]
# (binaries in target/device, built by device-builds.sh or stripped from target/release).
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=${1:?usage: device-sca-ab.sh OUTDIR [SECONDS]}
BUDGET=${2:-360}
mkdir -p "$D"
B=${BINS:-"ordo ordo-new"}
LAST=${B##* }
S=${S:-"--seconds 0.5 --warmup 0.3 --reps 1 --quiet --pin"}
start=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - start) )); }
run() { # run FILE BIN ARGS...: one `ordo bench` appended to FILE, under what is left of the budget
  local f=$1 b=$2; shift 2
  local l; l=$(left)
  if [ "$l" -lt 8 ]; then echo "skip $f $b $*"; return; fi
  echo "## $b $*" >> "$D/$f"
  # shellcheck disable=SC2086
  timeout "$l" target/device/$b bench "$@" $S >> "$D/$f" 2>&1 || echo "rc $? $f $b: $*"
}
P="-p vll,vll-sca,vll,vll-sca"
for r in 1 2; do
  for t in 16 4; do
    for ci in 0.05 0.1; do
      for l in "" --long; do
        for b in $B; do run sca8b.txt "$b" -w vll-micro --hot-accesses 2 --ci $ci $l $P -t $t; done
      done
    done
  done
  for ci in 0.01 0.1; do
    for l in "" --long; do
      for b in $B; do run sca8a.txt "$b" -w vll-micro --ci $ci $l $P -t 16; done
    done
  done
done
S=${S% --pin}
for i in 1 2; do
  run bar1-t2.txt "$LAST" -w vll-micro --ci 0.0001 -p "$(for _ in $(seq 10); do printf nocc,vll,; done | sed 's/,$//')" -t 2
done
for b in $B; do
  ORDO_VLL_STATS=1 run stats.txt "$b" -w vll-micro --hot-accesses 2 --ci 0.05 -p vll-sca -t 16 --pin
done
# vll-sca / vll per invocation (mean of its two pairs), by build and point
awk '/^## /{b=$2; $1=$2=""; h=$0; n=0} /^vll /{v=$3} /^vll-sca /{r[b" |"h]+=$3/v; c[b" |"h]++}
     END{for(k in r) printf "%.2f  %s\n", r[k]/c[k], k}' "$D/sca8b.txt" "$D/sca8a.txt" | sort -k3
python3 docs/results/bars/pairs.py nocc vll "$D/bar1-t2.txt" 2>&1 | tail -2
grep -c "worker" "$D/stats.txt"
echo "done in $(( $(date +%s) - start )) s"
