#!/usr/bin/env bash
# Ordo against DBx1000 (yxymit/DBx1000), the same work on both sides, interleaved (issue 48):
#   tpcc   New-Order + Payment 50/50 as DBx1000 runs it (Ordo's --mix dbx1000: no inserts, no
#          1% rollback, the middle entry of a last-name lookup), W = 1 and 4, 2 threads, each
#          thread a terminal of warehouse t mod W + 1 on both sides; hstore with a partition per
#          warehouse on both sides (Ordo: --hstore-partitions W; DBx1000: -pW)
#   ycsb   10,485,760 rows x 10 x 10 B, 16 requests, 90% reads, theta 0.6, 2 partitions with
#          every transaction in its worker's own (DBx1000: -p2 -v2; Ordo: --partitions 2
#          --multi-partition 0)
# Protocols: silo / SILO, 2pl-nowait / NO_WAIT, 2pl-waitdie / WAIT_DIE, hstore / HSTORE. Ordo runs
# with --no-prefetch (DBx1000 does not prefetch). DBx1000 chooses its protocol and workload at
# compile time: DBX is a folder with bin/rundb-<ALG>-<TPCC|YCSB>, built with -no-pie and CPU_FREQ
# set to this machine's TSC rate (see dbx1000.md), run from that folder (it opens its schema
# files by relative path). Its throughput is txn_cnt / (run_time / threads): run_time sums the
# threads' times. A DBx1000 run ends when its first thread has committed 100,000 transactions.
# Output: one line per run (workload, W, side, protocol, txn/s) into OUT/runs.tsv, and a summary
# of Ordo / DBx1000 per pair of runs.
# Usage: [REPS=2] [SECS=2] [OUT=DIR] [ALGS="SILO HSTORE"] docs/results/dbx1000/compare.sh DBX ORDO [tpcc|ycsb|all]
set -euo pipefail
DBX=${1:?usage: compare.sh DBX ORDO [tpcc|ycsb|all]}
ORDO=$(realpath "${2:?usage: compare.sh DBX ORDO [tpcc|ycsb|all]}")
WHICH=${3:-all}
REPS=${REPS:-2}
SECS=${SECS:-2}
OUT=$(realpath -m "${OUT:-$(dirname "$0")/runs}")
mkdir -p "$OUT"
TSV=$OUT/runs.tsv
touch "$TSV" # appended to: clear it for a fresh comparison
read -r -a ALGS <<< "${ALGS:-SILO NO_WAIT WAIT_DIE HSTORE}"
declare -A ORDO_OF=([SILO]=silo [NO_WAIT]=2pl-nowait [WAIT_DIE]=2pl-waitdie [HSTORE]=hstore)

dbx() { # dbx NAME ALG WL ARGS...: one DBx1000 run, its txn/s on stdout
  local name=$1 alg=$2 wl=$3; shift 3
  (cd "$DBX" && "./bin/rundb-$alg-$wl" "$@") > "$OUT/$name.txt" 2>&1
  sed -n 's/^\[summary\] txn_cnt=\([0-9]*\),.*run_time=\([0-9.]*\),.*/\1 \2/p' "$OUT/$name.txt" |
    awk '{ printf "%.0f\n", $1 / ($2 / 2) }'
}
ordo() { # ordo NAME ARGS...: one Ordo run, its txn/s on stdout
  local name=$1; shift
  "$ORDO" bench -t 2 --seconds "$SECS" --warmup 0.5 --no-prefetch --quiet "$@" \
    --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
  awk '$2 == 2 { print $3; exit }' "$OUT/$name.txt"
}
pair() { # pair WL W ALG: DBx1000 then Ordo, REPS times
  local wl=$1 w=$2 alg=$3 p=${ORDO_OF[$3]} i d o
  for i in $(seq "$REPS"); do
    if [ "$wl" = tpcc ]; then
      local parts=()
      [ "$alg" = HSTORE ] && parts=("-p$w") # HSTORE: a partition per warehouse
      d=$(dbx "tpcc-w$w-$alg-$i" "$alg" TPCC -t2 "-n$w" "${parts[@]}" -Tp0.5 -Tu1)
      local knob=()
      [ "$alg" = HSTORE ] && knob=(--hstore-partitions "$w")
      o=$(ordo "tpcc-w$w-$p-$i" -w tpcc --warehouses "$w" --mix dbx1000 -p "$p" "${knob[@]}")
    else
      d=$(dbx "ycsb-$alg-$i" "$alg" YCSB -t2 -p2 -v2)
      o=$(ordo "ycsb-$p-$i" -w ycsb --rows 10485760 --fields 10 --field-len 10 --ops 16 \
        --read-ratio 0.9 --theta 0.6 --partitions 2 --multi-partition 0 -p "$p")
    fi
    printf '%s\t%s\tdbx1000\t%s\t%s\n' "$wl" "$w" "$alg" "$d" >> "$TSV"
    printf '%s\t%s\tordo\t%s\t%s\n' "$wl" "$w" "$p" "$o" >> "$TSV"
    printf '%-5s W=%-2s %-12s DBx1000 %9s  Ordo %9s  ratio %s\n' "$wl" "$w" "$p" "$d" "$o" \
      "$(awk -v a="$o" -v b="$d" 'BEGIN { printf "%.2f", a / b }')"
  done
}
case "$WHICH" in
  tpcc|all) for w in 1 4; do for a in "${ALGS[@]}"; do pair tpcc "$w" "$a"; done; done ;;&
  ycsb|all) for a in "${ALGS[@]}"; do pair ycsb 2 "$a"; done ;;
  tpcc) ;;
  *) echo "usage: $0 DBX ORDO [tpcc|ycsb|all]" >&2; exit 2 ;;
esac
