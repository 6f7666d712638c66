#!/usr/bin/env bash
# Callas against its ACID baseline (`acid-2pl`, strict 2PL at read committed, the thesis's MySQL
# Cluster level), interleaved runs, with the Salt issue's lock-hold emulation. Writes one .txt per
# measurement beside this script. Needs a release build (cargo build --release -p ordo-cli).
# About 3 minutes.
set -euo pipefail
cd "$(dirname "$0")"
ORDO=${ORDO:-../../../target/release/ordo}
D="--op-delay-us 100 --commit-delay-us 500"
S="--seconds 3 --warmup 1"
run() { local out=$1; shift; echo "ordo bench $*" > "$out"; "$ORDO" bench "$@" | tee -a "$out"; }

# Fig. 4.5's set-up: TPC-C, 10 warehouses, groups {new-order, payment}, {delivery}, the read-only
# rest unpipelined; the New-Order + Payment mix alone; and 1 warehouse (the Salt issue's).
run tpcc-w10-standard.txt -p acid-2pl,callas,acid-2pl,callas -w tpcc --warehouses 10 -t 32,128 $D \
  --callas-groups NewOrder,Payment/Delivery $S
run tpcc-w10-no-p.txt -p acid-2pl,callas,acid-2pl,callas -w tpcc --warehouses 10 --mix new-order-payment \
  -t 32,128 $D --callas-groups NewOrder,Payment $S
run tpcc-w1-no-p.txt -p acid-2pl,callas,acid-2pl,callas -w tpcc --warehouses 1 --mix new-order-payment \
  -t 32 $D --callas-groups NewOrder,Payment $S
# Fig. 4.6: ticketing, create-order in its own group.
run ticketing.txt -p acid-2pl,callas,acid-2pl,callas -w ticketing --seats 1000000 -t 32 $D \
  --callas-groups CreateOrder $S
# Fig. 4.11: nexus-lock overhead, no delays, 2 threads (no contention: each transaction its own rows).
run nexus-overhead.txt -p acid-2pl,callas,acid-2pl,callas -w callas-micro --variant nexus \
  -t 2 $S --contention none
run nexus-overhead-high.txt -p acid-2pl,callas,acid-2pl,callas -w callas-micro --variant nexus \
  -t 2 $S --contention high
# Fig. 4.12: T1 and T2 in separate groups, 10% contention between them, as their frequencies part.
run frequency.txt -p acid-2pl,callas,acid-2pl,callas -w callas-micro --variant frequency \
  --t1-share 50,90,99 -t 32 $D --callas-groups T1/T2 $S
