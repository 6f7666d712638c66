#!/bin/bash
P=nocc,vll,nocc,vll,nocc,vll,nocc,vll,nocc,vll,nocc,vll,nocc,vll,nocc,vll,nocc,vll,nocc,vll
for i in $(seq 1 ${N:-8}); do
  for b in $BINS; do
  ./$b bench -w vll-micro --ci 0.0001 -p $P -t 2 --seconds 0.5 --warmup 0.3 --reps 1 --quiet > $b-$i.txt 2>&1
  done
done
echo done
