#!/usr/bin/env bash
# The fourth lent 16-core machine's one command (2026-11-27, about 8 minutes), in order of what it
# decides for issue 6, each part under a deadline:
#
#   cache    what bar 1's gap is made of on real cores (build `base`): nocc,vll pairs at 1 worker
#            with the default million records (memory-bound), with 20,000 records (in cache: VLL's
#            own instructions, nothing to hide them behind) and with long transactions; at 2
#            workers the bar's setting and the in-cache one
#   sca      one SCA pass claiming every find (build `ready`, branch sca-ready) against claiming
#            one (`base`): device-sca-ab.sh, Fig. 8b/8a at 16 and 4 workers, pinned
#   fig9     Figs. 9 and 10 with remote waits, one partition per core, P = 16 (`base`, 0.5-s runs)
#
# Everything is packed into one archive (the device tool brings back at most 8 files).
# Usage: docs/results/bars/device-run-4.sh OUTDIR [SECONDS]   (binaries in target/device:
#   docs/results/bars/device-builds.sh base=main ready=sca-ready)
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUTD=${1:?usage: device-run-4.sh OUTDIR [SECONDS]}
BUDGET=${2:-520}
W=$(mktemp -d)/device4
mkdir -p "$W"
O=target/device/base
S="--seconds 0.5 --warmup 0.3 --reps 1 --quiet"
rep() { local p=$1 n=$2; local s=$p; for _ in $(seq 2 "$n"); do s=$s,$p; done; echo "$s"; }
{ lscpu; free -g; uname -a; } > "$W/machine.txt" 2>&1
start=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - start) )); }
bench() { # bench FILE ARGS...: one `ordo bench` appended to FILE, under what is left of the budget
  local f=$1; shift
  local l; l=$(left)
  if [ "$l" -lt 10 ]; then echo "skip $f $* (no time left)"; return; fi
  echo "## $*" >> "$W/$f"
  # shellcheck disable=SC2086
  timeout "$l" "$O" bench "$@" >> "$W/$f" 2>&1 || echo "rc $? $f: $*"
}
echo "== cache $(date +%T)"
M="-w vll-micro"
bench t1-default.txt $M --ci 0.0001 -p "$(rep nocc,vll 5)" -t 1 $S
bench t1-incache.txt $M --ci 0.001 --records 20000 -p "$(rep nocc,vll 5)" -t 1 $S
bench t1-long.txt $M --ci 0.0001 --long -p "$(rep nocc,vll 3)" -t 1 $S
bench t2-default.txt $M --ci 0.0001 -p "$(rep nocc,vll 10)" -t 2 $S
bench t2-incache.txt $M --ci 0.001 --records 20000 -p "$(rep nocc,vll 5)" -t 2 $S
for f in t1-default t1-incache t1-long t2-default t2-incache; do
  echo "$f: $(python3 docs/results/bars/pairs.py nocc vll "$W/$f.txt" 2>&1 | tail -1)"
  grep -E '^(nocc|vll) ' "$W/$f.txt" | head -2
done
echo "== sca $(date +%T)"
l=$(left); a=$(( l < 200 ? l - 20 : 200 ))
BINS="base ready" timeout $(( a + 30 )) docs/results/bars/device-sca-ab.sh "$W/sca" "$a"
echo "== fig9 $(date +%T)"
l=$(left)
if [ "$l" -gt 30 ]; then
  mkdir -p "$W/fig9"
  P=16 SECS=0.5 FIG_DIR="$W/fig9" timeout "$l" docs/results/deterministic/fig9-remote.sh "$O" \
    || echo "rc $? fig9"
  grep -h -E '^(workload|nocc|vll-partitioned |hstore |vll )' "$W"/fig9/fig9-remote-p16-ci0.0001.txt | head -30
fi
echo "== done $(date +%T), $(( $(date +%s) - start )) s"
mkdir -p "$OUTD"
tar czf "$OUTD/device4.tgz" -C "$(dirname "$W")" device4
ls -la "$OUTD"
