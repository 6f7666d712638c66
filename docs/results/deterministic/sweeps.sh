#!/usr/bin/env bash
# The short Fig. 8 / Fig. 9 sweeps of docs/results/deterministic.md (vll-micro, 2 threads).
# Usage: docs/results/deterministic/sweeps.sh [path to the release `ordo` binary]
set -euo pipefail
ORDO=${1:-target/release/ordo}
OUT=$(dirname "$0")
SECS=${SECS:-2}
T=2
# Fig. 8: one server, contention index sweep, short and long transactions.
FIG8=nocc,2pl-waitdie,vll,vll-sca,calvin,calvin-vll
for kind in short long; do
  long=""; [ "$kind" = long ] && long="--long"
  for ci in 0.0001 0.001 0.01 0.1 1; do
    "$ORDO" bench -w vll-micro -p "$FIG8" -t $T --seconds "$SECS" --warmup 0.5 --quiet \
      --ci "$ci" $long --json "$OUT/fig8-$kind-ci$ci.json" > "$OUT/fig8-$kind-ci$ci.txt"
  done
done
# Fig. 9: partition per core (2 partitions = 2 threads), % multi-partition sweep, short transactions.
FIG9=nocc,hstore,vll-partitioned,vll,vll-sca,2pl-waitdie
for ci in 0.001 0.1; do
  for mp in 0 20 50 100; do
    "$ORDO" bench -w vll-micro -p "$FIG9" -t $T --seconds "$SECS" --warmup 0.5 --quiet \
      --partitions $T --multi-partition "$mp" --ci "$ci" \
      --json "$OUT/fig9-ci$ci-mp$mp.json" > "$OUT/fig9-ci$ci-mp$mp.txt"
  done
done
