#!/usr/bin/env bash
# One lent 16-core machine, one command (about 8 minutes): the parts of manycore.sh in order of
# what they decide — bar 3 (sca, pinned, with ORDO_VLL_STATS), bar 1 (2 and 16 threads + pinned 16),
# the vll-micro scaling sweep, the YCSB scaling sweep — each under a deadline, then everything packed
# into one archive (the device tool brings back at most 8 files).
# Usage: ORDO=target/device/ordo docs/results/bars/device-run.sh OUTDIR [SECONDS]
# (2026-11-26, 16 cores: sca, bar1 and micro took 390 s together; ycsb needs about 4 minutes more.)
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUTD=${1:?usage: device-run.sh OUTDIR [SECONDS]}
BUDGET=${2:-480}
W=$(mktemp -d)/manycore
mkdir -p "$W"
export ORDO=${ORDO:-target/release/ordo}
{ lscpu; free -g; } > "$W/lscpu.txt" 2>&1
start=$(date +%s)
part() { # part NAME ENV...: run one part of manycore.sh within what is left of the budget
  local name=$1; shift
  local left=$(( BUDGET - ($(date +%s) - start) ))
  if [ "$left" -lt 20 ]; then echo "skip $name (no time left)"; return; fi
  echo "== $name ($left s left) $(date +%T)"
  env "$@" timeout "$left" docs/results/bars/manycore.sh "$name" "$W" || echo "part $name: rc $?"
}
part sca PIN=1 ORDO_VLL_STATS=1
grep -h -A8 '^workload' "$W"/sca-t*.txt | grep -v 'worker' | head -80
part bar1 BAR1_T="2 16"
for f in "$W"/bar1-t*.txt "$W"/bar1-pinned-t16.txt; do echo "$f"; python3 docs/results/bars/pairs.py nocc vll "$f" 2>&1 | tail -3; done
part micro
cat "$W/scaling-vll-micro.txt" 2>/dev/null
part ycsb
tail -25 "$W/scaling-ycsb.txt" 2>/dev/null
mkdir -p "$OUTD"
tar czf "$OUTD/manycore.tgz" -C "$(dirname "$W")" manycore
ls -la "$OUTD"
