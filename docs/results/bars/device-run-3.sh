#!/usr/bin/env bash
# The third lent 16-core machine's one command (2026-11-27, about 7 minutes): what the first two
# device runs left open, in order of what it decides for issue 6, each part under a deadline.
#
#   bar1     bar 1's setting (vll-micro CI 0.0001, short, 2 workers) on real cores after the
#            spinning latch: interleaved nocc,vll pairs unpinned (2 invocations) and pinned (1), one
#            worker (VLL's own instructions, no cross-core traffic), admission one at a time
#            (--vll-batch 1), and the 2PL baselines beside nocc at 2 workers
#   calvin   calvin-vll's blocked threshold at 16 workers, low contention: the default 16 against
#            128 (on 2 vCPUs 16 lost there and won everywhere contended)
#   micro    thread scaling 1-16 on vll-micro CI 0.0001 after the latch and calvin-vll's one-pass SCA
#   sca8b    bar 3 on real cores in the paper's Fig. 8b setting: two hot records per transaction
#            (--hot-accesses 2), CI 0.05 and 0.1, short and long, 4 and 16 workers, pinned
#   ycsb     YCSB thread scaling for the protocols the first run's sweep did not reach or that
#            changed since (the VLL, deterministic and partitioned families), nocc beside them
#
# Everything is packed into one archive (the device tool brings back at most 8 files).
# Usage: ORDO=target/device/ordo docs/results/bars/device-run-3.sh OUTDIR [SECONDS]
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUTD=${1:?usage: device-run-3.sh OUTDIR [SECONDS]}
BUDGET=${2:-470}
W=$(mktemp -d)/device3
mkdir -p "$W"
O=${ORDO:-target/release/ordo}
S=${S:-"--seconds 0.5 --warmup 0.3 --reps 1 --quiet"}
rep() { local p=$1 n=$2; local s=$p; for _ in $(seq 2 "$n"); do s=$s,$p; done; echo "$s"; }
{ lscpu; free -g; uname -a; } > "$W/machine.txt" 2>&1
start=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - start) )); }
bench() { # bench FILE ARGS...: one `ordo bench` appended to FILE, under what is left of the budget
  local f=$1; shift
  local l; l=$(left)
  if [ "$l" -lt 10 ]; then echo "skip $f $* (no time left)"; return; fi
  echo "## $*" >> "$W/$f"
  # shellcheck disable=SC2086
  timeout "$l" "$O" bench "$@" >> "$W/$f" 2>&1 || echo "rc $? $f: $*"
}
echo "== bar1 $(date +%T)"
M="-w vll-micro --ci 0.0001"
for i in 1 2; do bench bar1-t2.txt $M -p "$(rep nocc,vll 10)" -t 2 $S; done
bench bar1-t2-pinned.txt $M -p "$(rep nocc,vll 10)" -t 2 --pin $S
bench bar1-t1.txt $M -p "$(rep nocc,vll 5)" -t 1 $S
bench bar1-t2-batch1.txt $M -p "$(rep nocc,vll 5)" -t 2 --vll-batch 1 $S
bench bar1-others-t2.txt $M -p "$(rep nocc,vll-sca,vll-arrayed,2pl-nowait,2pl-table,2pl-table-detect 2)" -t 2 $S
for f in bar1-t2.txt bar1-t2-pinned.txt bar1-t1.txt bar1-t2-batch1.txt; do
  echo "$f: $(python3 docs/results/bars/pairs.py nocc vll "$W/$f" 2>&1 | tail -1)"
done
echo "== calvin $(date +%T)"
for lim in 16 128; do
  bench calvin-t16.txt $M -p calvin,calvin-vll,calvin,calvin-vll -t 16 --vll-blocked-limit $lim $S
done
grep -E '^(##|calvin)' "$W/calvin-t16.txt"
echo "== sca8b $(date +%T)"
for t in 4 16; do
  for ci in 0.05 0.1; do
    for l in "" --long; do
      bench sca8b.txt -w vll-micro --hot-accesses 2 --ci $ci $l -p vll,vll-sca,vll,vll-sca -t $t --pin $S
    done
  done
done
grep -E '^(##|vll)' "$W/sca8b.txt"
echo "== micro $(date +%T)"
bench scaling-vll-micro.txt $M -t 1,2,4,8,16 --seconds 1 --warmup 0.3 --reps 1 --quiet \
  -p nocc,vll,vll-sca,vll-arrayed,vllr,calvin,calvin-vll,2pl-nowait,2pl-table,silo \
  --json "$W/scaling-vll-micro.json"
grep -vE '^#' "$W/scaling-vll-micro.txt" | head -70
echo "== ycsb $(date +%T)"
bench scaling-ycsb.txt -t 1,2,4,8,16 --seconds 1 --warmup 0.3 --reps 1 --quiet \
  -p nocc,vll,vll-sca,vll-arrayed,vllr,calvin,calvin-vll,hstore-lockmgr,vll-partitioned,vll-partitioned-sca,vll-partitioned-arrayed,2pl-deadlock-free,2pl-table-detect \
  --json "$W/scaling-ycsb.json"
grep -vE '^#' "$W/scaling-ycsb.txt" | head -80
echo "== done $(date +%T), $(( $(date +%s) - start )) s"
mkdir -p "$OUTD"
tar czf "$OUTD/device3.tgz" -C "$(dirname "$W")" device3
ls -la "$OUTD"
