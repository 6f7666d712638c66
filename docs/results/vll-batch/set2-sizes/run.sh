#!/bin/bash
rep() { local p=$1 n=$2 s=$p; for _ in $(seq 2 $n); do s=$s,$p; done; echo $s; }
S="-t 2 --seconds 0.5 --warmup 0.3 --reps 1 --quiet"
for i in $(seq 1 4); do for b in 1 2 4 8 16; do
  ORDO_VLL_BATCH=$b /tmp/ordo-batch bench -w vll-micro --ci 0.0001 -p $(rep nocc,vll 5) $S > b$b-$i.txt 2>&1
done; done
