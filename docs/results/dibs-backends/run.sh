#!/usr/bin/env bash
# DIBS in front of real engines (Gaffney, Claus, Patel, PVLDB 2021, §4.4–§4.5): the figure runs.
#
#   docs/results/dibs-backends/run.sh [OUTDIR] [SECONDS]
#
# Fig. 5a/b  SQLite TATP: throughput and syncs per client transaction against threads, merge groups 1/2/4/8
# Fig. 6a–c  SQLite YCSB: read-intensive 1 request, write-intensive 1 and 8 requests a transaction
# Fig. 7a    MariaDB YCSB read-intensive, 1 request, Zipf θ = 2.0: DIBS over READ UNCOMMITTED against
#            MariaDB's SERIALIZABLE and READ UNCOMMITTED
# PostgreSQL YCSB (the same) and TATP: DIBS over READ COMMITTED against SERIALIZABLE (SSI) and
#            REPEATABLE READ
#
# Each run writes OUTDIR/<name>.json and .txt; `ordo report OUTDIR/*.json -o OUTDIR/fig` draws them.
# The servers are started and stopped with the project's scripts (installed with apt-get if missing).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-docs/results/dibs-backends}
secs=${2:-5}
threads=${THREADS:-1,2,4,6}
mkdir -p "$out"
cargo build --release -q -p ordo-cli
ordo=target/release/ordo
run() {
  local name=$1
  shift
  echo "== $name: ordo bench $*"
  "$ordo" bench --seconds "$secs" --warmup 1 --quiet --json "$out/$name.json" "$@" | tee "$out/$name.txt"
}

# SQLite (bundled: nothing to start). The database lives in the temporary directory: keep it on a
# real disk (not tmpfs), or the syncs cost nothing.
[ "${SKIP_FIG5:-0}" = 1 ] || run fig5-sqlite-tatp --backend sqlite -w tatp -p dibs,native --merge 1,2,4,8 -t "$threads"
run fig6a-sqlite-ycsb-read-1 --backend sqlite -w ycsb --read-ratio 0.95 --ops 1 -p dibs,native --merge 1,2,4,8 -t "$threads"
run fig6b-sqlite-ycsb-write-1 --backend sqlite -w ycsb --read-ratio 0.5 --ops 1 -p dibs,native --merge 1,2,4,8 -t "$threads"
run fig6c-sqlite-ycsb-write-8 --backend sqlite -w ycsb --read-ratio 0.5 --ops 8 -p dibs,native --merge 1,2,4,8 -t "$threads"

if [ "${SKIP_SERVERS:-0}" != 1 ]; then
  scripts/servers/mariadb.sh start
  trap 'scripts/servers/mariadb.sh stop; scripts/servers/postgres.sh stop' EXIT
  run fig7a-mariadb-ycsb --backend mariadb -w ycsb --read-ratio 0.95 --ops 1 --theta 2.0 \
    -p dibs,native,native-ru -t "${SERVER_THREADS:-1,2,4,8}"
  scripts/servers/mariadb.sh stop
  scripts/servers/postgres.sh start
  run postgres-ycsb --backend postgres -w ycsb --read-ratio 0.95 --ops 1 --theta 2.0 \
    -p dibs,native,native-rr,native-rc -t "${SERVER_THREADS:-1,2,4,8}"
  run postgres-tatp --backend postgres -w tatp -p dibs,native,native-rr,native-rc -t "${SERVER_THREADS:-1,2,4,8}"
fi
"$ordo" report "$out"/*.json -o "$out/fig" >/dev/null
echo "figures: $out/fig/index.html"
