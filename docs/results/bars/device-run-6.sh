#!/usr/bin/env bash
# The fifth lent 16-core machine's second command (2026-11-27, about 6 minutes), after
# device-run-5.sh: bar 1 of issue 6 (`vll` against `nocc`, vll-micro CI 0.0001, short) on the
# parts that one left open, binaries or settings alternating, each part under a deadline:
#
#   batch     build `new2` at 2 workers, the default million records, with --vll-batch 4 (the
#             default), 8 and 16: whether fewer critical sections per transaction (each moves the
#             latch's and the queue header's lines between cores) close the 2-worker gap
#   t1-cache  `base` against `new`, 1 worker, 20,000 records (every record in L2: pure instructions;
#             device-run-5.sh passed --ci twice here and bench refused it)
#   t2-llc    `base` against `new2`, 2 workers, 20 million records (past the 300 MiB L3)
#
# Usage: docs/results/bars/device-run-6.sh OUTDIR [SECONDS]   (binaries in target/device:
#   docs/results/bars/device-builds.sh base=BEFORE new=AFTER new2=AFTER-BATCH-BUDGET)
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUTD=${1:?usage: device-run-6.sh OUTDIR [SECONDS]}
BUDGET=${2:-400}
W=$(mktemp -d)/device6
mkdir -p "$W"
S="--seconds 0.5 --warmup 0.3 --reps 1 --quiet"
rep() { local p=$1 n=$2; local s=$p; for _ in $(seq 2 "$n"); do s=$s,$p; done; echo "$s"; }
{ lscpu; free -g; uname -a; } > "$W/machine.txt" 2>&1
start=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - start) )); }
bench() { # bench BIN FILE ARGS...: one `ordo bench` appended to FILE, under what is left
  local b=$1 f=$2; shift 2
  local l; l=$(left)
  if [ "$l" -lt 10 ]; then echo "skip $b $f $* (no time left)"; return; fi
  echo "## $*" >> "$W/$f"
  # shellcheck disable=SC2086
  timeout "$l" "target/device/$b" bench "$@" >> "$W/$f" 2>&1 || echo "rc $? $b $f: $*"
}
summary() { echo "$1: $(python3 docs/results/bars/pairs.py nocc vll "$W/$1" 2>&1 | tail -1)"; }
M="-w vll-micro"
echo "== batch $(date +%T)"
for _ in 1 2; do
  for n in 4 8 16; do
    bench new2 "batch$n.txt" $M --ci 0.0001 -t 2 --vll-batch $n -p "$(rep nocc,vll 10)" $S
  done
done
for n in 4 8 16; do summary "batch$n.txt"; done
echo "== t1-cache $(date +%T)"
for b in base new; do
  bench $b "$b-t1-cache.txt" $M --ci 0.001 --records 20000 -t 1 -p "$(rep nocc,vll 10)" $S
done
for b in base new; do summary "$b-t1-cache.txt"; done
echo "== t2-llc $(date +%T)"
for _ in 1 2; do
  for b in base new2; do
    bench $b "$b-t2-llc.txt" $M --ci 0.0001 --records 20000000 -t 2 -p "$(rep nocc,vll 5)" $S
  done
done
for b in base new2; do summary "$b-t2-llc.txt"; done
echo "== done $(date +%T), $(( $(date +%s) - start )) s"
mkdir -p "$OUTD"
tar czf "$OUTD/device6.tgz" -C "$(dirname "$W")" device6
ls -la "$OUTD"
