#!/usr/bin/env bash
# Soak test: `ordo verify` over every serializable protocol on small, contended workloads, with a new
# seed each round and thread counts above the core count (so workers are descheduled at arbitrary
# points), until time runs out. Each history goes through the serializability checker and each final
# state through the workload's consistency check; any failure keeps its full output.
#
#   scripts/soak.sh [MINUTES] [OUTDIR]        (ORDO=path/to/ordo to use a given binary;
#                                             PROTOCOLS=a,b to soak only those)
#
# Exit status 1 if any run failed (an anomaly, a broken consistency condition, a panic, a hang past
# 5 minutes), else 0. A summary line per run goes to OUTDIR/log.
set -u
cd "$(dirname "$0")/.."
MINUTES=${1:-30}
OUT=${2:-/tmp/ordo-soak}
O=${ORDO:-target/release/ordo}
[ -x "$O" ] || cargo build --release -q -p ordo-cli || exit 2
mkdir -p "$OUT"
ALL=${PROTOCOLS:-2pl-nowait,2pl-waitdie,2pl-detect,2pl-table,2pl-table-detect,2pl-deadlock-free,silo,ssi,vll,vll-sca,vll-arrayed,vllr,calvin,calvin-vll,hstore,hstore-lockmgr,vll-partitioned,vll-partitioned-sca,vll-partitioned-arrayed}
WORKLOADS=(
  "-w smallbank --customers 50 --hotspot-size 0"
  "-w smallbank --customers 20 --hotspot-size 4 --hotspot-prob 0.9"
  "-w ycsb --rows 200 --theta 0.9 --rmw"
  "-w ycsb --rows 100 --theta 0.99 --ops 8 --read-ratio 0.5 --vll-batch 16"
  "-w tpcc --warehouses 1"
  "-w tpcc --warehouses 2 --mix no=40,p=40,os=5,d=10,sl=5"
  "-w tpcc --warehouses 1 --tiny"
  "-w tpcc++ --warehouses 1"
  "-w sibench --items 10"
  "-w tatp --subscribers 1000"
  "-w vll-micro --ci 0.1 --records 2000"
  "-w vll-micro --ci 0.1 --records 2000 --vll-batch 1 --vll-blocked-limit 1"
  "-w vll-micro --ci 0.2 --records 2000 --hot-accesses 2"
  "-w vll-micro --ci 0.05 --records 4000 --partitions 4 --multi-partition 50 --vll-blocked-limit 2"
  "-w vll-micro --ci 0.1 --records 2000 --partitions 2 --multi-partition 50 --remote-wait 20"
  "-w pwv-micro --records 1000 --hot-position 9"
  "-w callas-micro --variant contention --shared-rows 2"
  "-w callas-micro --variant rollback --rollback-pct 20"
  "-w ycsb --rows 200 --theta 0.9 --rmw --ops 8 --commit-point 4 --abort-ratio 0.2"
  "-w tpcc --warehouses 2 --tiny --mix pwv --remote-new-order 50"
)
end=$(( $(date +%s) + MINUTES * 60 ))
runs=0; failed=0; seed=${SEED:-1000}
while [ "$(date +%s)" -lt "$end" ]; do
  seed=$((seed + 1))
  for t in 2 4 7; do
    for w in "${WORKLOADS[@]}"; do
      [ "$(date +%s)" -ge "$end" ] && break 3
      # shellcheck disable=SC2086  # $w is a list of options
      out=$(timeout 300 "$O" verify $w -p "$ALL" -t "$t" --txns 3000 --seed "$seed" 2>&1); rc=$?
      runs=$((runs + 1))
      echo "$(date +%T) seed=$seed t=$t $w rc=$rc" >> "$OUT/log"
      if [ $rc -ne 0 ]; then
        failed=$((failed + 1))
        echo "$out" > "$OUT/fail-$seed-$t-$runs.txt"
        echo "FAILED: seed=$seed t=$t $w (rc $rc): $OUT/fail-$seed-$t-$runs.txt"
      fi
    done
  done
done
n=$(echo "$ALL" | tr ',' '\n' | wc -l)
echo "soak: $runs runs of ${ALL//,/ } ($((runs * n)) protocol histories), $failed failed; log in $OUT/log"
[ "$failed" -eq 0 ]
