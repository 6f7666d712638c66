#!/usr/bin/env bash
# Fig. 9 with simulated remote reads (docs/results/deterministic.md): partition per thread, 32
# partitions = 32 worker threads (on however many cores), short vll-micro transactions, % multi-partition swept, each
# multi-partition transaction sleeping REMOTE_US µs (default 100) before its first access at the
# other partition. One JSON per contention index; `ordo report` draws them.
# Usage: docs/results/deterministic/fig9-remote.sh [path to the release `ordo` binary]
set -euo pipefail
ORDO=${1:-target/release/ordo}
OUT=$(dirname "$0")
SECS=${SECS:-1}
REMOTE_US=${REMOTE_US:-100}
P=32
FIG9=nocc,hstore,vll-partitioned,vll,vll-sca,2pl-waitdie
for ci in 0.001 0.1; do
  "$ORDO" bench -w vll-micro -p "$FIG9" -t $P --partitions $P --ci "$ci" \
    --multi-partition 0,20,40,60,80,100 --remote-wait "$REMOTE_US" \
    --seconds "$SECS" --warmup 0.3 --quiet \
    --json "$OUT/fig9-remote-ci$ci.json" > "$OUT/fig9-remote-ci$ci.txt"
done
"$ORDO" report "$OUT"/fig9-remote-ci*.json -o "$OUT/fig9-remote"
"$ORDO" report "$OUT"/fig9-remote-ci*.json -o "$OUT/fig9-remote-relative" --relative nocc
