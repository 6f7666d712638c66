#!/usr/bin/env bash
# The thesis's Callas figures (Xie, PhD thesis 2016, §4.6), drawn by `ordo report`:
#   fig4_5   TPC-C, 10 warehouses: acid-2pl against callas, groups NewOrder,Payment/Delivery
#   fig4_6   ticketing: acid-2pl against callas, --callas-groups CreateOrder
#   fig4_7   front-accounting: acid-2pl against callas with the thesis's four groups (create-order,
#            delivery, payment each alone, the rest together)
#   fig4_8   TPC-C and ticketing: acid-2pl, sc-chopping, callas --callas-chopping sc, callas
#   fig4_9   TPC-C and ticketing: each optimization's share — table-level with every optimization
#            off, column-level with every one off, then column-level with commutativity,
#            uniqueness, large-first each switched off alone (`--callas-no-opt` switches off one or
#            all: the thesis's cumulative bars are leave-one-out here), and everything on
#   fig4_10  TPC-C groupings: all, each, the heuristic's (`ordo analyze --propose-groups`, §4.5.2),
#            the thesis's (NewOrder,Payment/Delivery)
#   fig4_11  nexus-lock overhead (callas-micro --variant nexus, no and high contention, 2 threads),
#            with the delays and without them (issue 47's bar: overhead <= 20% with no delays)
#   fig4_12  T1 and T2 in separate groups as their frequencies part (--t1-share 50,90,99)
# Every run emulates the thesis's lock hold times (--op-delay-us 100 --commit-delay-us 500) with 32
# workers (clients mostly sleep; fig4_11: 2) and the groups the thesis's tool produced.
# Long: run one figure at a time. Needs a release build (cargo build --release -p ordo-cli).
# Usage: [SECS=3] [REPS=1] [THREADS=32] [FIG_DIR=DIR] docs/results/callas/figures.sh [ORDO] [fig4_5|…|fig4_12|all]
set -euo pipefail
ORDO=${1:-target/release/ordo}
WHICH=${2:-all}
OUT=${FIG_DIR:-$(dirname "$0")/figures}
SECS=${SECS:-3}
REPS=${REPS:-1}
THREADS=${THREADS:-32}
D=(--op-delay-us 100 --commit-delay-us 500)
TPCC=(-w tpcc --warehouses 10)
TICKETING=(-w ticketing)
FA_GROUPS=CreateOrder/Delivery/Payment
TPCC_GROUPS=NewOrder,Payment/Delivery
mkdir -p "$OUT"

bench() { # bench NAME ARGS...: one `ordo bench` into NAME.json and NAME.txt
  local name=$1; shift
  "$ORDO" bench --seconds "$SECS" --warmup 1 --reps "$REPS" --quiet "${D[@]}" "$@" \
    --json "$OUT/$name.json" > "$OUT/$name.txt"
  echo "$OUT/$name.txt"
}
report() { "$ORDO" report "$OUT/$1"-*.json -o "$OUT/$1" > /dev/null; }

fig4_5() {
  bench fig4_5-tpcc-acid "${TPCC[@]}" -p acid-2pl -t "$THREADS"
  bench fig4_5-tpcc-callas "${TPCC[@]}" -p callas --callas-groups "$TPCC_GROUPS" -t "$THREADS"
  report fig4_5-tpcc
}
fig4_6() {
  bench fig4_6-ticketing-acid "${TICKETING[@]}" -p acid-2pl -t "$THREADS"
  bench fig4_6-ticketing-callas "${TICKETING[@]}" -p callas --callas-groups CreateOrder -t "$THREADS"
  report fig4_6-ticketing
}
fig4_7() {
  bench fig4_7-fa-acid -w front-accounting -p acid-2pl -t "$THREADS"
  bench fig4_7-fa-callas -w front-accounting -p callas --callas-groups "$FA_GROUPS" -t "$THREADS"
  report fig4_7-fa
}
fig4_8_one() { # fig4_8_one NAME GROUPS WORKLOAD...
  local name=$1 groups=$2; shift 2
  bench "fig4_8-$name-1-acid" "$@" -p acid-2pl -t "$THREADS"
  bench "fig4_8-$name-2-sc" "$@" -p sc-chopping -t "$THREADS"
  bench "fig4_8-$name-3-callas-sc" "$@" -p callas --callas-chopping sc --callas-groups "$groups" -t "$THREADS"
  bench "fig4_8-$name-4-callas" "$@" -p callas --callas-groups "$groups" -t "$THREADS"
  report "fig4_8-$name"
}
fig4_8() {
  fig4_8_one tpcc "$TPCC_GROUPS" "${TPCC[@]}"
  fig4_8_one ticketing CreateOrder "${TICKETING[@]}"
}
fig4_9_one() { # fig4_9_one NAME GROUPS WORKLOAD...
  local name=$1 groups=$2; shift 2
  local c=(-p callas --callas-groups "$groups" -t "$THREADS")
  bench "fig4_9-$name-1-table-none" "$@" "${c[@]}" --callas-analysis table --callas-no-opt all
  bench "fig4_9-$name-2-column-none" "$@" "${c[@]}" --callas-analysis column --callas-no-opt all
  for off in commutativity uniqueness large-first; do
    bench "fig4_9-$name-3-no-$off" "$@" "${c[@]}" --callas-analysis column --callas-no-opt "$off"
  done
  bench "fig4_9-$name-4-all" "$@" "${c[@]}" --callas-analysis column --callas-no-opt none
  report "fig4_9-$name"
}
fig4_9() {
  fig4_9_one tpcc "$TPCC_GROUPS" "${TPCC[@]}"
  fig4_9_one ticketing CreateOrder "${TICKETING[@]}"
}
fig4_10() {
  local heuristic
  heuristic=$("$ORDO" analyze "${TPCC[@]}" --propose-groups --threads "$THREADS" "${D[@]}" \
    | tee "$OUT/fig4_10-proposal.txt" | sed -n 's/^proposed: --callas-groups //p')
  bench fig4_10-tpcc-1-all "${TPCC[@]}" -p callas --callas-groups all -t "$THREADS"
  bench fig4_10-tpcc-2-each "${TPCC[@]}" -p callas --callas-groups each -t "$THREADS"
  bench fig4_10-tpcc-3-heuristic "${TPCC[@]}" -p callas --callas-groups "${heuristic:-all}" -t "$THREADS"
  bench fig4_10-tpcc-4-thesis "${TPCC[@]}" -p callas --callas-groups "$TPCC_GROUPS" -t "$THREADS"
  report fig4_10-tpcc
}
fig4_11() {
  for c in none high; do
    bench "fig4_11-nexus-$c" -w callas-micro --variant nexus --contention "$c" -p acid-2pl,callas \
      --callas-groups each -t 2
  done
  report fig4_11-nexus
  local D=() # no delays: what the nexus locks cost in memory
  for c in none high; do
    bench "fig4_11-nodelay-$c" -w callas-micro --variant nexus --contention "$c" \
      -p acid-2pl,callas,acid-2pl,callas --callas-groups each -t 2
  done
  report fig4_11-nodelay
}
fig4_12() {
  bench fig4_12-frequency -w callas-micro --variant frequency --t1-share 50,90,99 -p acid-2pl,callas \
    --callas-groups T1/T2 -t "$THREADS"
  report fig4_12-frequency
}

case "$WHICH" in
  fig4_5|fig4_6|fig4_7|fig4_8|fig4_9|fig4_10|fig4_11|fig4_12) "$WHICH" ;;
  all) fig4_5; fig4_6; fig4_7; fig4_8; fig4_9; fig4_10; fig4_11; fig4_12 ;;
  *) echo "usage: $0 [ORDO] [fig4_5|fig4_6|fig4_7|fig4_8|fig4_9|fig4_10|fig4_11|fig4_12|all]" >&2; exit 2 ;;
esac
