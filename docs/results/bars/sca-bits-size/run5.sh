#!/usr/bin/env bash
O=$1; OUT=$2
for t in 4 8; do for ci in 0.01 0.1; do for l in "" "--long"; do
 echo "== t$t ci$ci $l"
 $O bench -w vll-micro --ci $ci $l -p vll,vll-sca,vll,vll-sca,vll,vll-sca -t $t --seconds 0.4 --warmup 0.2 --reps 1 --quiet 2>&1 | grep -E "^vll"
done; done; done > $OUT
