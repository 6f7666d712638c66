#!/usr/bin/env bash
# The DIBS paper's figures for its lock-free engine (Gaffney, Claus, Patel, PVLDB 2021 §4.3;
# docs/results/dibs.md), drawn by `ordo report`:
#   fig3a  TATP, 1M subscribers: throughput against threads for each cumulative optimization
#          (--dibs-opt naive, grouping, prepared, filter, full), nocc beside them
#   fig3b  SEATS, 100,000 customers and 4,000 flights (--scale 100): the same
#   fig3c  SubscriberScan at 6 conjuncts: the same against threads
#   fig4   SubscriberScan against conjuncts (1-8), dibs (full) and dibs-naive, at the top thread count
# Every run uses the paper's deadlock handling, a timeout plus jitter (--dibs-deadlock timeout),
# and its bucket counts (§4.3): 1,024 for TATP (the default), 8 for SEATS, 1 for SubscriberScan.
# One `ordo bench` per step, one JSON each; the report draws the steps as lines of one figure (a
# line per protocol and non-default knobs).
# One command per figure, with the paper's claims checked: `ordo reproduce dibs` (the dibs-fig* results
# of crates/ordo-cli/catalogue/dibs.toml). This script stays for the thread sweeps of dibs.md.
# Usage: [SECS=2] [REPS=1] [THREADS=1,2] [FIG_DIR=DIR] docs/results/dibs/figures.sh [ORDO] [fig3a|fig3b|fig3c|fig4|all]
set -euo pipefail
ORDO=${1:-target/release/ordo}
WHICH=${2:-all}
OUT=${FIG_DIR:-$(dirname "$0")}
SECS=${SECS:-2}
REPS=${REPS:-1}
THREADS=${THREADS:-1,2}
TOP=${THREADS##*,}
STEPS=(naive grouping prepared filter full)
mkdir -p "$OUT"

bench() { # bench NAME ARGS...: one `ordo bench` into NAME.json and NAME.txt
  local name=$1; shift
  "$ORDO" bench --seconds "$SECS" --warmup 1 --reps "$REPS" --quiet --dibs-deadlock timeout "$@" \
    --json "$OUT/$name.json" > "$OUT/$name.txt"
  echo "$OUT/$name.txt"
}

ablation() { # ablation FIG ARGS...: nocc, then dibs at every step; one figure
  local fig=$1; shift
  bench "$fig-nocc" "$@" -p nocc
  for step in "${STEPS[@]}"; do
    bench "$fig-$step" "$@" -p dibs --dibs-opt "$step"
  done
  "$ORDO" report "$OUT/$fig"-*.json -o "$OUT/$fig" > /dev/null
}

fig3a() { ablation fig3a-tatp -w tatp --subscribers 1000000 -t "$THREADS"; }
fig3b() { ablation fig3b-seats -w seats --scale 100 --dibs-buckets 8 -t "$THREADS"; }
fig3c() { ablation fig3c-subscriber-scan -w subscriber-scan --conjuncts 6 --dibs-buckets 1 -t "$THREADS"; }
fig4() {
  bench fig4-conjuncts -w subscriber-scan --conjuncts 1,2,3,4,5,6,7,8 --dibs-buckets 1 -p dibs,dibs-naive -t "$TOP"
  "$ORDO" report "$OUT/fig4-conjuncts.json" -o "$OUT/fig4-conjuncts" > /dev/null
}

case "$WHICH" in
  fig3a|fig3b|fig3c|fig4) "$WHICH" ;;
  all) fig3a; fig3b; fig3c; fig4 ;;
  *) echo "usage: $0 [ORDO] [fig3a|fig3b|fig3c|fig4|all]" >&2; exit 2 ;;
esac
