#!/usr/bin/env bash
# The latch comparison on a lent 16-core machine (about 2.5 minutes): three builds of `ordo`,
# interleaved invocation by invocation — A parking_lot's mutex (before), B the spinning latch beside
# the published atomics, C the spinning latch on its own cache-line pair — at CI 0.0001 (2-16
# workers, nocc beside) and at CI 0.01/0.1 short and long (16 workers, pinned, as the first device run).
# Usage: docs/results/bars/device-latch.sh OUTDIR (binaries in target/device: ordo, ordo-b, ordo-c)
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=${1:?usage: device-latch.sh OUTDIR}
mkdir -p "$D"
S="--seconds 0.5 --warmup 0.3 --reps 1 --quiet"
B=${BINS:-"ordo ordo-b ordo-c"}
for r in 1 2; do
  for t in ${LOW_T:-2 4 8 16}; do
    for b in $B; do
      echo "## $b t$t r$r"
      # shellcheck disable=SC2086
      target/device/$b bench -w vll-micro --ci 0.0001 -p nocc,vll,vll-sca -t $t $S
    done
  done
done > "$D/low.txt" 2>&1
for ci in 0.01 0.1; do
  for l in "" --long; do
    for b in $B; do
      echo "## $b ci$ci $l"
      # shellcheck disable=SC2086
      target/device/$b bench -w vll-micro --ci $ci $l -p vll,vll-sca,vll,vll-sca -t ${HIGH_T:-16} --pin $S
    done
  done
done > "$D/contended.txt" 2>&1
awk '/^##/{h=$0} /^(nocc|vll)/{print h, $1, $3}' "$D/low.txt" "$D/contended.txt"
