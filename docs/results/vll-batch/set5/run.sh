#!/bin/bash
# Set 5: the final build, --vll-batch 4 (default) and 1 alternating, CI 0.0001, 2 threads.
rep() { local p=$1 n=$2 s=$p; for _ in $(seq 2 $n); do s=$s,$p; done; echo $s; }
S="-t 2 --seconds 0.5 --warmup 0.3 --reps 1 --quiet"
uptime > load-start.txt
for i in $(seq 1 6); do for b in 4 1; do
  /tmp/ordo-final bench -w vll-micro --ci 0.0001 --vll-batch $b -p $(rep nocc,vll 6) $S > t2-b$b-$i.txt 2>&1
done; done
uptime > load-end.txt
