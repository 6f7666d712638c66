#!/usr/bin/env bash
# The PWV paper's figures (Faleiro, Abadi, Hellerstein, PVLDB 2017 §5; docs/results/pwv.md), one
# `ordo bench` sweep each, drawn by `ordo report`:
#   fig1  write visibility: pwv-micro (10 RMWs over 1M records, one on a single hot record), the hot
#         record's position swept (--hot-position = updates after it: 9 = first, 0 = last)
#   fig3  YCSB, 1M records of 1,000 bytes, 20 RMWs: (a) θ = 0 and (b) θ = 0.9 against threads,
#         (c) θ swept 0–0.99
#   fig4  the commit point: YCSB as fig3 with an abort check after K writes (1% of transactions
#         abort), K swept 0–20, at θ = 0 (a) and θ = 0.9 (b)
#   fig5  TPC-C New-Order + Payment 50/50, ~10% of New-Orders with a remote Stock line:
#         (a) warehouses = threads, (b) one warehouse, against threads
#   fig6  latency at peak with batches of 5,000 (pwv's --pwv-batch 5000): per transaction p50/p99,
#         and for every protocol the time 5,000 transactions take at its throughput (the paper's
#         per-batch latency; the paper reports the 95th percentile, `ordo bench` records p50/p99/p99.9)
# Each writes NAME.json and NAME.txt, and `ordo report` draws NAME/ (absolute) and, where it has a
# `nocc` line, NAME-relative/ (as a multiple of `nocc`).
# Protocols the binary does not have (e.g. ic3 before it landed) are left out with a notice.
# One command per figure, with the paper's claims checked: `ordo reproduce pwv` (the pwv-fig* results
# of crates/ordo-cli/catalogue/pwv.toml). This script stays for the thread sweeps and Fig. 6 pwv.md records.
# Usage: [SECS=2] [REPS=1] [THREADS=1,2] [FIG_DIR=DIR] docs/results/pwv/figures.sh [ORDO] [fig1|fig3|fig4|fig5|fig6|all]
set -euo pipefail
ORDO=${1:-target/release/ordo}
WHICH=${2:-all}
OUT=${FIG_DIR:-$(dirname "$0")}
SECS=${SECS:-2}
REPS=${REPS:-1}
THREADS=${THREADS:-1,2}
TOP=${THREADS##*,}
mkdir -p "$OUT"

# The protocols of a list that this binary has.
have() {
  local known kept=() p
  known=$("$ORDO" list | awk '/^protocols:/{p=1;next} /^workloads:/{p=0} p{print $1}')
  IFS=, read -r -a want <<< "$1"
  for p in "${want[@]}"; do
    if grep -qx "$p" <<< "$known"; then kept+=("$p"); else echo "note: $ORDO has no protocol $p; left out" >&2; fi
  done
  (IFS=,; echo "${kept[*]}")
}

YCSB=(-w ycsb --rows 1000000 --fields 10 --field-len 100 --ops 20 --rmw --read-ratio 0)
BASE=$(have nocc,pwv,2pl-ordered,silo,rc-occ)
TPCC=$(have nocc,pwv,pwv-coarse,2pl-ordered,locking-coarse,silo,rc-occ,ic3,ic3-comm)

run() { # run NAME ARGS...: one sweep, drawn
  local name=$1; shift
  "$ORDO" bench --seconds "$SECS" --warmup 1 --reps "$REPS" --quiet "$@" \
    --json "$OUT/$name.json" > "$OUT/$name.txt"
  "$ORDO" report "$OUT/$name.json" -o "$OUT/$name" > /dev/null
  if grep -q '"protocol": *"nocc"' "$OUT/$name.json"; then
    "$ORDO" report "$OUT/$name.json" -o "$OUT/$name-relative" --relative nocc > /dev/null
  fi
  echo "$OUT/$name.txt"
}

fig1() {
  run fig1-hot-position -w pwv-micro --records 1000000 --hot-position 0,1,2,3,4,5,6,7,8,9 \
    -p "$BASE" -t "$TOP"
}
fig3() {
  run fig3a-theta0 "${YCSB[@]}" --theta 0 -p "$BASE" -t "$THREADS"
  run fig3b-theta0.9 "${YCSB[@]}" --theta 0.9 -p "$BASE" -t "$THREADS"
  run fig3c-theta "${YCSB[@]}" --theta 0,0.3,0.5,0.6,0.7,0.8,0.9,0.99 -p "$BASE" -t "$TOP"
}
fig4() {
  run fig4a-commit-point-theta0 "${YCSB[@]}" --theta 0 --commit-point 0,5,10,15,20 \
    --abort-ratio 0.01 -p "$BASE" -t "$TOP"
  run fig4b-commit-point-theta0.9 "${YCSB[@]}" --theta 0.9 --commit-point 0,5,10,15,20 \
    --abort-ratio 0.01 -p "$BASE" -t "$TOP"
}
fig5() {
  local t
  # (a) warehouses = threads: one run per thread count.
  IFS=, read -r -a ts <<< "$THREADS"
  for t in "${ts[@]}"; do
    run "fig5a-tpcc-w$t" -w tpcc --mix new-order-payment --remote-new-order 10 --warehouses "$t" \
      -p "$TPCC" -t "$t"
  done
  run fig5b-tpcc-w1 -w tpcc --mix new-order-payment --remote-new-order 10 --warehouses 1 \
    -p "$TPCC" -t "$THREADS"
}
fig6() {
  run fig6-latency-w1 -w tpcc --mix new-order-payment --remote-new-order 10 --warehouses 1 \
    --pwv-batch 5000 -p "$TPCC" -t "$TOP"
  run fig6-latency-w"$TOP" -w tpcc --mix new-order-payment --remote-new-order 10 --warehouses "$TOP" \
    --pwv-batch 5000 -p "$TPCC" -t "$TOP"
  python3 - "$OUT"/fig6-latency-w1.json "$OUT"/fig6-latency-w"$TOP".json <<'PY' | tee "$OUT/fig6-latency.txt"
import json, sys
print(f"{'file':<24} {'protocol':<16} {'txn/s':>10} {'5000 txns ms':>13} {'p50 ms':>8} {'p99 ms':>8}")
for f in sys.argv[1:]:
    for r in json.load(open(f)):
        tps = r["committed_per_sec"]
        batch = 5000 / tps * 1e3 if tps else float("inf")
        print(f"{f.split('/')[-1][:-5]:<24} {r['protocol']:<16} {tps:>10.0f} {batch:>13.1f} "
              f"{r['latency_p50_us'] / 1e3:>8.2f} {r['latency_p99_us'] / 1e3:>8.2f}")
PY
}

case $WHICH in
  fig1|fig3|fig4|fig5|fig6) "$WHICH" ;;
  all) fig1; fig3; fig4; fig5; fig6 ;;
  *) echo "usage: $0 [ORDO] [fig1|fig3|fig4|fig5|fig6|all]" >&2; exit 2 ;;
esac
