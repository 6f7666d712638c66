#!/bin/bash
cd /tmp
for r in 1 2; do
for ci in 0.0001 0.01 0.1; do
 for t in 2 16; do
  for b in ordo-main ordo-e1 ordo-e2; do
   ./$b bench -w vll-micro --ci $ci -p calvin,calvin-vll -t $t --seconds 1 --warmup 0.3 --reps 1 --quiet 2>&1 | grep "^calvin" | awk -v b=$b -v ci=$ci -v r=$r '{print r, ci, b, $1, $2, $3, $5, $6}'
  done
 done
done
done
