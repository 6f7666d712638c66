#!/usr/bin/env bash
# Issue 6's bars on HEAD (e4aa03a), dev-2core, nothing else running.
cd /work/main
O=target/release/ordo; D=/tmp/bars-now
rep() { local p=$1 n=$2; local s=$p; for _ in $(seq 2 $n); do s=$s,$p; done; echo $s; }
S="-t 2 --seconds 0.5 --warmup 0.3 --reps 1 --quiet"
uptime > $D/load-start.txt
for i in 1 2; do $O bench -w vll-micro --ci 0.0001 -p $(rep nocc,vll 10) $S; done > $D/vll-bar1.txt 2>&1
for i in 1 2; do $O bench -w vll-micro --ci 0.0001 -p $(rep nocc,vll-arrayed,2pl-nowait,2pl-table 4) $S; done > $D/vll-bar1-others.txt 2>&1
for ci in 0.01 0.1; do for l in "" "--long"; do $O bench -w vll-micro --ci $ci $l -p $(rep nocc,vll,vll-sca 4) $S; done; done > $D/vll-sca.txt 2>&1
uptime > $D/load-end.txt
