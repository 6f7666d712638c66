#!/usr/bin/env bash
# The short Fig. 8 / Fig. 9 / Fig. 15 sweeps of docs/results/deterministic.md (vll-micro and
# vll-range, 2 threads): one `ordo bench` sweep per figure panel (JSON + text beside this script),
# drawn by `ordo report` into fig8/, fig9/ and fig15/ (absolute) and fig8-relative/, fig9-relative/
# and fig15-relative/ (as a multiple of `nocc`).
# One command per figure, with the paper's claims checked: `ordo reproduce vll-fig8a` … `vll-fig8d`,
# `vll-fig15a`, `vll-fig15b` (shorter sweeps sized for a quick run; the catalogue is
# crates/ordo-cli/catalogue/vll.toml). This script stays for the longer sweeps deterministic.md records.
# Usage: docs/results/deterministic/sweeps.sh [path to the release `ordo` binary] [fig8|fig9|fig15|all]
set -euo pipefail
ORDO=${1:-target/release/ordo}
WHICH=${2:-all}
OUT=$(dirname "$0")
SECS=${SECS:-2}
T=2
# Fig. 8: one server, contention index sweep; the paper's four panels: long (a, b) and short (c, d)
# transactions, with one hot record per transaction (a, c: deadlock-free workload) and with two
# (b, d: "a workload in which deadlocks are possible"; --hot-accesses 2, so CI stops at 0.5, two hot
# records). The paper's lines: no locking, standard 2PL (a traditional lock table with deadlock
# detection: 2pl-table-detect), deadlock-free 2PL, VLL, VLL with SCA; 2pl-detect (lock words beside the
# records, the same detection) for contrast; Calvin and deterministic VLL ride along on a and c (Fig.
# 11's pair).
FIG8=nocc,2pl-table-detect,2pl-detect,2pl-deadlock-free,vll,vll-sca
if [ "$WHICH" = fig8 ] || [ "$WHICH" = all ]; then
  for kind in short long; do
    long=""; [ "$kind" = long ] && long="--long"
    "$ORDO" bench -w vll-micro -p "$FIG8,calvin,calvin-vll" -t $T --seconds "$SECS" --warmup 0.5 \
      --quiet --ci 0.0001,0.001,0.01,0.1,1 $long --json "$OUT/fig8-$kind.json" > "$OUT/fig8-$kind.txt"
    "$ORDO" bench -w vll-micro -p "$FIG8" -t $T --seconds "$SECS" --warmup 0.5 --quiet \
      --hot-accesses 2 --ci 0.0001,0.001,0.01,0.1,0.5 $long \
      --json "$OUT/fig8-$kind-deadlocks.json" > "$OUT/fig8-$kind-deadlocks.txt"
  done
  FIG8_JSON=("$OUT"/fig8-{long,long-deadlocks,short,short-deadlocks}.json)
  "$ORDO" report "${FIG8_JSON[@]}" -o "$OUT/fig8"
  "$ORDO" report "${FIG8_JSON[@]}" -o "$OUT/fig8-relative" --relative nocc
fi
# Fig. 15: VLLR against basic VLL over the range width: every transaction updates one range of
# 16-bit keys whose ends share 16 (one record) down to 7 bits (256 records on average); short (a)
# and long (b) transactions.
if [ "$WHICH" = fig15 ] || [ "$WHICH" = all ]; then
  for kind in short long; do
    long=""; [ "$kind" = long ] && long="--long"
    "$ORDO" bench -w vll-range -p nocc,vll,vllr -t $T --seconds "$SECS" --warmup 0.5 --quiet \
      --shared-prefix 16,15,14,13,12,11,10,9,8,7 $long \
      --json "$OUT/fig15-$kind.json" > "$OUT/fig15-$kind.txt"
  done
  "$ORDO" report "$OUT"/fig15-{short,long}.json -o "$OUT/fig15"
  "$ORDO" report "$OUT"/fig15-{short,long}.json -o "$OUT/fig15-relative" --relative nocc
fi
[ "$WHICH" = fig9 ] || [ "$WHICH" = all ] || exit 0
# Fig. 9: partition per core (2 partitions = 2 threads), % multi-partition sweep, short transactions.
FIG9=nocc,hstore,vll-partitioned,vll-partitioned-sca,vll,vll-sca,2pl-waitdie
for ci in 0.001 0.1; do
  "$ORDO" bench -w vll-micro -p "$FIG9" -t $T --seconds "$SECS" --warmup 0.5 --quiet \
    --partitions $T --multi-partition 0,20,50,100 --ci "$ci" \
    --json "$OUT/fig9-ci$ci.json" > "$OUT/fig9-ci$ci.txt"
done
FIG9_JSON=("$OUT/fig9-ci0.001.json" "$OUT/fig9-ci0.1.json")
"$ORDO" report "${FIG9_JSON[@]}" -o "$OUT/fig9"
"$ORDO" report "${FIG9_JSON[@]}" -o "$OUT/fig9-relative" --relative nocc
