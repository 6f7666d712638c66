#!/usr/bin/env bash
# The fifth lent 16-core machine's one command (2026-11-27, about 6 minutes): bar 1 of issue 6
# (`vll` against `nocc`, vll-micro CI 0.0001, short), before (`base`) and after (`new`) VLL's
# planning made one probe per key, each part under a deadline, binaries alternating:
#
#   t2        the bar's setting: 2 workers, the default million records
#   t2-llc    2 workers, 20 million records: this host's last-level cache is 300 MiB, so a
#             million records (nocc 16 MB of rows, VLL 32 MB) stay in it and nothing is memory-bound;
#             20 million (320 MB of nocc's rows, 1 GB of index) are not, as on the paper's EC2
#             hosts (25 MB of L3 under a million records of real rows)
#   t1-cache  1 worker, 20,000 records: every record in L2, so the ratio is pure instructions
#   t1        1 worker, the default million records
#   scale     `new` only: 1–16 threads on vll-micro CI 0.0001 for the VLL family and baselines
#             (manycore.sh micro), with whatever time is left
#
# Everything is packed into one archive.
# Usage: docs/results/bars/device-run-5.sh OUTDIR [SECONDS]   (binaries in target/device:
#   docs/results/bars/device-builds.sh base=BEFORE new=AFTER)
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUTD=${1:?usage: device-run-5.sh OUTDIR [SECONDS]}
BUDGET=${2:-400}
W=$(mktemp -d)/device5
mkdir -p "$W"
S="--seconds 0.5 --warmup 0.3 --reps 1 --quiet"
rep() { local p=$1 n=$2; local s=$p; for _ in $(seq 2 "$n"); do s=$s,$p; done; echo "$s"; }
{ lscpu; free -g; uname -a; } > "$W/machine.txt" 2>&1
start=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - start) )); }
bench() { # bench BIN FILE ARGS...: one `ordo bench` appended to FILE, under what is left
  local b=$1 f=$2; shift 2
  local l; l=$(left)
  if [ "$l" -lt 10 ]; then echo "skip $b $f $* (no time left)"; return; fi
  echo "## $*" >> "$W/$b-$f"
  # shellcheck disable=SC2086
  timeout "$l" "target/device/$b" bench "$@" >> "$W/$b-$f" 2>&1 || echo "rc $? $b $f: $*"
}
M="-w vll-micro"
# (As run on 2026-11-27, `M` held `--ci 0.0001` too and bench refused t1-cache's second --ci;
# device-run-6.sh measured that part.)
for part in "t2:--ci 0.0001 -t 2:10:2" "t2-llc:--ci 0.0001 -t 2 --records 20000000:5:1" \
  "t1-cache:--ci 0.001 -t 1 --records 20000:10:1" "t1:--ci 0.0001 -t 1:10:1"; do
  IFS=: read -r name args pairs rounds <<< "$part"
  echo "== $name $(date +%T)"
  for _ in $(seq "$rounds"); do
    for b in base new; do
      # shellcheck disable=SC2086
      bench $b $name.txt $M $args -p "$(rep nocc,vll "$pairs")" $S
    done
  done
  for b in base new; do
    echo "$b $name: $(python3 docs/results/bars/pairs.py nocc vll "$W/$b-$name.txt" 2>&1 | tail -1)"
  done
done
echo "== scale $(date +%T)"
l=$(left)
if [ "$l" -gt 60 ]; then
  ORDO=target/device/new SCALE_T=1,2,4,8,16 timeout "$l" docs/results/bars/manycore.sh micro \
    "$W/scale" || echo "rc $? scale"
fi
echo "== done $(date +%T), $(( $(date +%s) - start )) s"
mkdir -p "$OUTD"
tar czf "$OUTD/device5.tgz" -C "$(dirname "$W")" device5
ls -la "$OUTD"
