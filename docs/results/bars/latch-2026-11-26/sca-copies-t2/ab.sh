#!/bin/bash
cd /tmp/ab-latch
P=nocc,vll-sca,nocc,vll-sca,nocc,vll-sca,nocc,vll-sca,nocc,vll-sca,nocc,vll-sca,nocc,vll-sca,nocc,vll-sca,nocc,vll-sca,nocc,vll-sca
for i in $(seq 1 ${N:-8}); do
  for b in ordo-c ordo-d; do
  ./$b bench -w vll-micro --ci 0.0001 -p $P -t 2 --seconds 0.5 --warmup 0.3 --reps 1 --quiet > sca/$b-$i.txt 2>&1
  done
done
echo done
