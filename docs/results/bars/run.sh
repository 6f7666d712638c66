#!/usr/bin/env bash
# Final bar measurements on main (quiet machine).
cd "$(dirname "$0")/../../.."
O=target/release/ordo
D=${1:-/tmp/ordo-bars}; mkdir -p $D
uptime > $D/load-start.txt
for i in 1 2 3; do $O bench -w smallbank -p si,ssi -t 2 --seconds 2 --warmup 1 --reps 3 --quiet; done > $D/smallbank.txt 2>&1
for i in 1 2; do $O bench -w sibench --items 100 -p si,ssi -t 2 --seconds 2 --warmup 1 --reps 3 --quiet; done > $D/sibench.txt 2>&1
$O bench -w ycsb --theta 0.6 --read-ratio 0.95 -p silo,si,ssi -t 2 --seconds 2 --warmup 1 --reps 3 --quiet > $D/ycsb.txt 2>&1
$O bench -w tpcc++ --warehouses 1 -p si,ssi -t 2 --seconds 2 --warmup 1 --reps 3 --quiet > $D/tpccpp.txt 2>&1
uptime > $D/load-mid.txt
for i in 1 2 3 4 5; do $O bench -w vll-micro -p nocc,vll,vll-arrayed,2pl-nowait,2pl-table -t 2 --seconds 2 --warmup 0.5 --reps 1 --ci 0.0001 --quiet; done > $D/vll-bar1.txt 2>&1
for ci in 0.01 0.1; do for l in "" "--long"; do $O bench -w vll-micro -p nocc,vll,vll-sca -t 2 --seconds 2 --warmup 0.5 --reps 3 --ci $ci $l --quiet; done; done > $D/vll-sca.txt 2>&1
$O bench -w tpcc --warehouses 4 -p nocc,vll,vllr,calvin,hstore,vll-partitioned -t 2 --seconds 3 --reps 1 --quiet > $D/tpcc-vll.txt 2>&1
uptime > $D/load-end.txt
cargo bench -p ordo --bench lock_manager -- --warm-up-time 1 --measurement-time 3 > $D/fig16-criterion.txt 2>&1
