#!/bin/bash
cd /tmp
for r in 1 2 3; do
 for t in 4 8; do
  for ci in 0.1 0.05; do
   for b in ordo-head ordo-bits; do
    ORDO_VLL_STATS= ./$b bench -w vll-micro --ci $ci -p vll,vll-sca,vll,vll-sca -t $t --seconds 0.5 --warmup 0.3 --reps 1 --quiet 2>&1 | grep "^vll" | awk -v b=$b -v ci=$ci -v t=$t -v r=$r '{print r, t, ci, b, $1, $3}'
   done
  done
 done
done
