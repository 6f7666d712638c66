#!/bin/bash
rep() { local p=$1 n=$2 s=$p; for _ in $(seq 2 $n); do s=$s,$p; done; echo $s; }
S="-t 2 --seconds 0.5 --warmup 0.3 --reps 1 --quiet"
for i in $(seq 1 ${N:-6}); do
  /tmp/ordo-main bench -w vll-micro --ci 0.0001 -p $(rep nocc,vll 6) $S > main-$i.txt 2>&1
  /tmp/ordo-batch bench -w vll-micro --ci 0.0001 -p $(rep nocc,vll 6) $S > batch-$i.txt 2>&1
done
