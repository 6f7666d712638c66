#!/usr/bin/env bash
# vll-sca against vll on Fig. 8b/8d's workload (vll-micro, --hot-accesses 2), 2 workers, alternating
# the two protocols within each invocation; one invocation per (length, CI) per round.
# Usage: ab.sh ORDO ROUNDS > raw.txt
set -euo pipefail
ORDO=${1:-target/release/ordo}; ROUNDS=${2:-3}
for r in $(seq "$ROUNDS"); do
  for long in "" "--long"; do
    for ci in 0.01 0.05 0.1 0.2; do
      echo "# round $r ci $ci ${long:-short} hot 2"
      "$ORDO" bench -w vll-micro --hot-accesses 2 --ci "$ci" $long -p vll,vll-sca,vll,vll-sca \
        -t 2 --seconds 1 --warmup 0.5 --quiet 2>/dev/null | grep -E '^vll'
    done
  done
done
