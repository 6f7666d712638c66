#!/usr/bin/env bash
# The figures that need more cores than the 2-vCPU development VM, in parts that each fit one
# 10-minute command on a lent 16-core machine (the `device` tool), so that a session that is lent
# one spends its device time measuring, not preparing:
#
#   bar1     issue 6 bar 1 — `vll` vs `nocc` on vll-micro CI 0.0001, short, interleaved slices, at
#            2 threads (the bar's setting, on another host) and at 8 and 16; the 2PL baselines
#            beside them                                                       (about 3 minutes)
#   sca      issue 6 bar 3 — `vll-sca` vs `vll` at CI 0.01, 0.05, 0.1, short and long, 4, 8 and
#            16 workers: the paper's Fig. 8 setting (one server, its cores all workers)   (~5 min)
#   ycsb     thread scaling, 1–16 threads, the main job's YCSB, every protocol, one run per
#            point, JSON for `ordo report`                                              (~6 min)
#   micro    the same on vll-micro CI 0.0001 for the VLL family and its baselines     (~3 min)
#   fig9     Figs. 9 and 10 with remote waits, one partition per core (P = 16): fig9-remote.sh
#                                                                                       (~6 min)
#
# Thread counts: BAR1_T (default "2 8 16"), SCA_T ("4 8 16"), SCALE_T ("1,2,4,8,16"), P (16): set
# them small to try a part on a small machine. PIN=1 passes `--pin` (worker t on CPU t) to the
# runs of bar1, sca, ycsb and micro; bar1 also runs its 16-thread pairs pinned in any case
# (bar1-pinned-t16.txt), to show whether the kernel's placement moves the ratio on many cores (it
# did not on 2 vCPUs).
#
# Usage: docs/results/bars/manycore.sh PART [OUTDIR] (default OUTDIR: docs/results/manycore).
# ORDO names the release binary (default target/release/ordo). The device machine reaches no
# registry, so build here and carry a stripped copy (carried paths must be git-ignored and 64 MiB
# in all; the debug-info build is larger):
#   cargo build --release -p ordo-cli && mkdir -p target/device &&
#     strip -o target/device/ordo target/release/ordo
#   run(command="ORDO=target/device/ordo docs/results/bars/manycore.sh bar1 $OUT/manycore",
#       carry=["target/device"])
# Each part writes plain-text tables (and JSON where noted); compare protocols as ratios within
# one invocation (`bars/pairs.py A B FILES…` for the interleaved parts).
set -euo pipefail
cd "$(dirname "$0")/../../.."
O=${ORDO:-target/release/ordo}
PART=${1:?usage: manycore.sh bar1|sca|ycsb|micro|fig9 [OUTDIR]}
D=${2:-docs/results/manycore}
mkdir -p "$D"
rep() { local p=$1 n=$2; local s=$p; for _ in $(seq 2 "$n"); do s=$s,$p; done; echo "$s"; }
S0="--seconds 0.5 --warmup 0.3 --reps 1 --quiet"
S="$S0${PIN:+ --pin}"
{ uname -a; nproc; uptime; } > "$D/$PART-machine.txt"
case $PART in
bar1)
  for t in ${BAR1_T:-2 8 16}; do
    # shellcheck disable=SC2086
    for i in 1 2; do "$O" bench -w vll-micro --ci 0.0001 -p "$(rep nocc,vll 10)" -t $t $S; done \
      > "$D/bar1-t$t.txt" 2>&1
    # shellcheck disable=SC2086
    "$O" bench -w vll-micro --ci 0.0001 -p "$(rep nocc,vll-arrayed,2pl-nowait,2pl-table 3)" -t $t $S \
      > "$D/bar1-others-t$t.txt" 2>&1
  done
  # shellcheck disable=SC2086
  "$O" bench -w vll-micro --ci 0.0001 -p "$(rep nocc,vll 10)" -t 16 $S0 --pin \
    > "$D/bar1-pinned-t16.txt" 2>&1
  ;;
sca)
  for t in ${SCA_T:-4 8 16}; do
    for ci in 0.01 0.05 0.1; do
      for l in "" --long; do
        # shellcheck disable=SC2086
        "$O" bench -w vll-micro --ci $ci $l -p "$(rep vll,vll-sca 3)" -t $t $S
      done
    done > "$D/sca-t$t.txt" 2>&1
  done
  ;;
ycsb)
  # shellcheck disable=SC2086
  "$O" bench -t "${SCALE_T:-1,2,4,8,16}" --seconds 1 --warmup 0.3 --reps 1 --quiet ${PIN:+--pin} \
    --json "$D/scaling-ycsb.json" > "$D/scaling-ycsb.txt" 2>&1
  ;;
micro)
  # shellcheck disable=SC2086
  "$O" bench -w vll-micro --ci 0.0001 -t "${SCALE_T:-1,2,4,8,16}" --seconds 1 --warmup 0.3 \
    --reps 1 --quiet ${PIN:+--pin} -p nocc,vll,vll-sca,vll-arrayed,vllr,calvin,calvin-vll,2pl-nowait,2pl-table,silo \
    --json "$D/scaling-vll-micro.json" > "$D/scaling-vll-micro.txt" 2>&1
  ;;
fig9)
  FIG_DIR="$D" P=${P:-16} docs/results/deterministic/fig9-remote.sh "$O"
  ;;
*)
  echo "unknown part '$PART': bar1, sca, ycsb, micro or fig9" >&2
  exit 2
  ;;
esac
uptime >> "$D/$PART-machine.txt"
