#!/usr/bin/env bash
# Figs. 9 and 10 with simulated remote reads (docs/results/deterministic.md): partition per core as in
# the paper (P partitions = P worker threads, P = the number of cores unless set), short vll-micro
# transactions, each multi-partition one waiting REMOTE_US µs (default 100) for its remote reads before
# its first access at the other partition. Fig. 9: % multi-partition swept at the paper's two
# contention indexes (0.0001, 0.01); Fig. 10: contention swept at 20% multi-partition. One JSON per
# figure and contention index (fig9-remote-pP-ci*.json, fig10-remote-pP.json); `ordo report` draws them
# into fig9-remote-pP/ (absolute) and fig9-remote-pP-relative/ (as a multiple of `nocc`).
# LONG=1 runs the long transactions instead (files and folders named fig*-remote-pP-long…). REPS=N
# runs each point N times and keeps the median (default 1). FIG_DIR=DIR writes the files there
# instead of beside this script.
# One command per figure, with the paper's claims checked: `ordo reproduce vll-fig9`, `vll-fig10`
# (crates/ordo-cli/catalogue/vll.toml). This script stays for the P and REPS sweeps deterministic.md records.
# Usage: [P=32] [LONG=1] [REPS=3] [FIG_DIR=DIR] docs/results/deterministic/fig9-remote.sh [path to the release `ordo` binary]
set -euo pipefail
ORDO=${1:-target/release/ordo}
OUT=${FIG_DIR:-$(dirname "$0")}
SECS=${SECS:-1}
REPS=${REPS:-1}
REMOTE_US=${REMOTE_US:-100}
P=${P:-$(nproc)}
LONG_ARG=(); SUFFIX=""
if [ "${LONG:-0}" = 1 ]; then LONG_ARG=(--long); SUFFIX=-long; fi
PROTOCOLS=nocc,hstore,hstore-lockmgr,vll-partitioned,vll-partitioned-sca,vll-partitioned-arrayed,vll,vll-sca,2pl-waitdie
run() { # run NAME ARGS...: one sweep
  local name=$1; shift
  "$ORDO" bench -w vll-micro -p "$PROTOCOLS" -t "$P" --partitions "$P" --remote-wait "$REMOTE_US" \
    --seconds "$SECS" --warmup 0.3 --reps "$REPS" --quiet "${LONG_ARG[@]}" "$@" \
    --json "$OUT/$name.json" > "$OUT/$name.txt"
}
for ci in 0.0001 0.01; do
  run "fig9-remote-p$P$SUFFIX-ci$ci" --ci "$ci" --multi-partition 0,20,40,60,80,100
done
run "fig10-remote-p$P$SUFFIX" --multi-partition 20 --ci 0.0001,0.001,0.01,0.1
JSON=("$OUT"/fig9-remote-p"$P$SUFFIX"-ci*.json "$OUT/fig10-remote-p$P$SUFFIX.json")
"$ORDO" report "${JSON[@]}" -o "$OUT/fig9-remote-p$P$SUFFIX"
"$ORDO" report "${JSON[@]}" -o "$OUT/fig9-remote-p$P$SUFFIX-relative" --relative nocc
