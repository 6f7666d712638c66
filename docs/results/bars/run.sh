#!/usr/bin/env bash
# Bar measurements on main (quiet machine). Protocols are interleaved inside one invocation in short
# slices (`-p si,ssi,si,ssi,…`, `-p nocc,vll,nocc,vll,…`; each row's "vs nocc" is against the nocc
# run just before it): this VM's cross-core latency flips between ~95 and ~450 ns on a scale of
# seconds, so only adjacent runs compare (see docs/results/ssi.md, fifth pass).
cd "$(dirname "$0")/../../.."
O=${ORDO:-target/release/ordo}
D=${1:-/tmp/ordo-bars}; mkdir -p $D
rep() { local p=$1 n=$2; local s=$p; for _ in $(seq 2 $n); do s=$s,$p; done; echo $s; }
S="-t 2 --seconds 0.5 --warmup 0.3 --reps 1 --quiet"
uptime > $D/load-start.txt
for i in 1 2 3; do $O bench -w smallbank -p $(rep si,ssi 6) $S; done > $D/smallbank.txt 2>&1
for i in 1 2; do $O bench -w sibench --items 100 -p $(rep si,ssi 6) $S; done > $D/sibench.txt 2>&1
for i in 1 2; do $O bench -w ycsb --theta 0.6 --read-ratio 0.95 -p $(rep silo,si,ssi 4) $S; done > $D/ycsb.txt 2>&1
$O bench -w tpcc++ --warehouses 1 -p $(rep si,ssi 4) $S > $D/tpccpp.txt 2>&1
uptime > $D/load-mid.txt
for i in 1 2; do $O bench -w vll-micro --ci 0.0001 -p $(rep nocc,vll 10) $S; done > $D/vll-bar1.txt 2>&1
# The same without admission batching (the paper's one-at-a-time loop), for the batching's share.
for i in 1 2; do $O bench -w vll-micro --ci 0.0001 --vll-batch 1 -p $(rep nocc,vll 10) $S; done > $D/vll-bar1-batch1.txt 2>&1
for i in 1 2; do $O bench -w vll-micro --ci 0.0001 -p $(rep nocc,vll-arrayed,2pl-nowait,2pl-table 4) $S; done > $D/vll-bar1-others.txt 2>&1
for ci in 0.01 0.1; do for l in "" "--long"; do $O bench -w vll-micro --ci $ci $l -p $(rep nocc,vll,vll-sca 4) $S; done; done > $D/vll-sca.txt 2>&1
$O bench -w tpcc --warehouses 4 -p nocc,vll,vllr,calvin,hstore,vll-partitioned -t 2 --seconds 2 --reps 1 --quiet > $D/tpcc-vll.txt 2>&1
uptime > $D/load-end.txt
cargo bench -p ordo --bench lock_manager -- --warm-up-time 1 --measurement-time 3 > $D/fig16-criterion.txt 2>&1
