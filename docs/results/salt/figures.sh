#!/usr/bin/env bash
# Salt's figures (Xie 2016, Ch. 3; docs/results/salt.md), drawn by `ordo report`, ACID (`acid-2pl`,
# strict 2PL at read committed, the thesis's MySQL Cluster level) against `salt` and `salt-local`
# from one code base, interleaved, with the lock-hold emulation of MySQL Cluster's replication
# (`--op-delay-us 100 --commit-delay-us 500`, slept with the locks held; see salt.md):
#   fig3-6   TPC-C, 1 warehouse, New-Order and Payment BASE-ified (--base-ified 2): throughput and
#            latency (p50/p99 in the .txt) as clients grow
#   fig3-7   ticketing (Fusion Ticket), create-order BASE-ified: the same
#   fig3-8   TPC-C, incremental BASE-ification: --base-ified 0..5 at 32 clients (INCR), and raw
#            (every piece its own alkaline subtransaction: the thesis's pure-BASE bound) beside it
#   fig3-9   ticketing, incremental BASE-ification: --base-ified 0..3 at 32 clients, and raw beside it
#   fig3-10  salt-micro ratio: 5 updates among N rows (contention ratio)
#   fig3-11  salt-micro position: 10 updates, k after the contended one (contention position)
#   fig3-12  salt-micro rw: fraction of read-only transactions
# One command per figure with the thesis's claims checked: `ordo reproduce salt` (crates/ordo-cli/
# catalogue/salt.toml). This script keeps the client sweeps of salt.md.
# Usage: [SECS=2] [CLIENTS=8,32,64] [INCR=32] [FIG_DIR=DIR] docs/results/salt/figures.sh [ORDO] [FIG|all]
# Beyond ~64 clients on one warehouse the lock queues outgrow the lock-wait timeout and every
# protocol thrashes on timeouts (measured at 128: see salt.md).
set -euo pipefail
ORDO=${1:-target/release/ordo}
WHICH=${2:-all}
OUT=${FIG_DIR:-$(dirname "$0")}
SECS=${SECS:-2}
CLIENTS=${CLIENTS:-8,32,64}
INCR=${INCR:-32}
DELAYS=(--op-delay-us 100 --commit-delay-us 500)
ABC=acid-2pl,salt,salt-local,acid-2pl,salt,salt-local
mkdir -p "$OUT"

bench() { # bench NAME ARGS...: one `ordo bench` into NAME.json and NAME.txt, then its figure
  local name=$1; shift
  { echo "ordo bench $*"; "$ORDO" bench --seconds "$SECS" --warmup 1 "${DELAYS[@]}" "$@" \
      --json "$OUT/$name.json"; } > "$OUT/$name.txt"
  "$ORDO" report "$OUT/$name.json" -o "$OUT/$name" > /dev/null
  echo "$OUT/$name.txt"
}

# TPC-C: 1 warehouse, the New-Order + Payment mix the bar names, and the standard mix.
fig3-6() {
  bench fig3-6-tpcc-no-p -w tpcc --warehouses 1 --mix new-order-payment -p "$ABC" -t "$CLIENTS"
  bench fig3-6-tpcc-standard -w tpcc --warehouses 1 -p "$ABC" -t "$CLIENTS"
}
# --seats 1000000: the event must not sell out within a run (10,000 sell out in seconds).
fig3-7() { bench fig3-7-ticketing -w ticketing --seats 1000000 -p "$ABC" -t "$CLIENTS"; }
# `raw` is not a number, so it is a run of its own (the report's x axis is numeric).
fig3-8() {
  bench fig3-8-tpcc-incremental -w tpcc --warehouses 1 --base-ified 0,1,2,3,4,5 \
    -p salt,salt-local -t "$INCR"
  bench fig3-8-tpcc-raw -w tpcc --warehouses 1 --base-ified raw -p salt,salt-local -t "$INCR"
}
fig3-9() {
  bench fig3-9-ticketing-incremental -w ticketing --seats 1000000 --base-ified 0,1,2,3 \
    -p salt,salt-local -t "$INCR"
  bench fig3-9-ticketing-raw -w ticketing --seats 1000000 --base-ified raw -p salt,salt-local -t "$INCR"
}
fig3-10() {
  bench fig3-10-ratio -w salt-micro --variant ratio --contended-rows 100,1000,10000,1000000 \
    -p "$ABC" -t 32
}
fig3-11() { bench fig3-11-position -w salt-micro --variant position --ops-after 0,3,6,9 -p "$ABC" -t 32; }
fig3-12() { bench fig3-12-rw -w salt-micro --variant rw --read-only-pct 0,50,95 -p "$ABC" -t 32; }

case "$WHICH" in
  fig3-6|fig3-7|fig3-8|fig3-9|fig3-10|fig3-11|fig3-12) "$WHICH" ;;
  all) fig3-6; fig3-7; fig3-8; fig3-9; fig3-10; fig3-11; fig3-12 ;;
  *) echo "usage: $0 [ORDO] [fig3-6|fig3-7|fig3-8|fig3-9|fig3-10|fig3-11|fig3-12|all]" >&2; exit 2 ;;
esac
