#!/bin/bash
rep() { local p=$1 n=$2 s=$p; for _ in $(seq 2 $n); do s=$s,$p; done; echo $s; }
S="-t 2 --seconds 0.5 --warmup 0.3 --reps 1 --quiet"
for i in 1 2; do for ci in 0.01 0.1; do for l in short long; do for b in 1 4; do
  L=""; [ $l = long ] && L=--long
  ORDO_VLL_BATCH=$b /tmp/ordo-batch bench -w vll-micro --ci $ci $L -p $(rep nocc,vll,vll-sca 3) $S > c$ci-$l-b$b-$i.txt 2>&1
done; done; done; done
