#!/usr/bin/env bash
# Builds of `ordo` compared on a lent 16-core machine (about 2.5 minutes for three), interleaved
# invocation by invocation, at CI 0.0001 (2-16 workers, nocc beside) and at CI 0.01/0.1 short and
# long (16 workers, pinned, as the first device run). First used for the latch (2026-11-26): A
# parking_lot's mutex, B the spinning latch beside the published atomics, C the spinning latch on
# its own cache-line pair (results: latch-2026-11-26/). Build the binaries with device-builds.sh.
# Usage: docs/results/bars/device-latch.sh OUTDIR (binaries in target/device: ordo, ordo-b, ordo-c)
# BINS names the builds (default "ordo ordo-b ordo-c"); an entry NAME:ARG runs target/device/NAME
# with one extra argument, e.g. BINS="ordo ordo:--vll-sca-bits=65536 ordo-ready".
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=${1:?usage: device-latch.sh OUTDIR}
mkdir -p "$D"
S="--seconds 0.5 --warmup 0.3 --reps 1 --quiet"
B=${BINS:-"ordo ordo-b ordo-c"}
extra() { case $1 in *:*) echo "${1#*:}" ;; esac; }
for r in 1 2; do
  for t in ${LOW_T:-2 4 8 16}; do
    for b in $B; do
      echo "## $b t$t r$r"
      # shellcheck disable=SC2086
      target/device/${b%%:*} bench -w vll-micro --ci 0.0001 -p nocc,vll,vll-sca -t $t $S $(extra "$b")
    done
  done
done > "$D/low.txt" 2>&1
for ci in 0.01 0.1; do
  for l in "" --long; do
    for b in $B; do
      echo "## $b ci$ci $l"
      # shellcheck disable=SC2086
      target/device/${b%%:*} bench -w vll-micro --ci $ci $l -p vll,vll-sca,vll,vll-sca -t ${HIGH_T:-16} --pin $S $(extra "$b")
    done
  done
done > "$D/contended.txt" 2>&1
awk '/^##/{h=$0} /^(nocc|vll)/{print h, $1, $3}' "$D/low.txt" "$D/contended.txt"
