#!/bin/bash
rep() { local p=$1 n=$2 s=$p; for _ in $(seq 2 $n); do s=$s,$p; done; echo $s; }
S="--seconds 0.5 --warmup 0.3 --reps 1 --quiet"
uptime > load-start.txt
for i in $(seq 1 8); do for b in 1 4 8; do
  /tmp/ordo-batch bench -w vll-micro --ci 0.0001 -t 2 --vll-batch $b -p $(rep nocc,vll 6) $S > t2-b$b-$i.txt 2>&1
done; done
for i in 1 2 3; do for b in 1 4; do
  /tmp/ordo-batch bench -w vll-micro --ci 0.0001 -t 1 --vll-batch $b -p $(rep nocc,vll 6) $S > t1-b$b-$i.txt 2>&1
done; done
uptime > load-end.txt
