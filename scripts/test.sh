#!/usr/bin/env bash
# The tests, as CI runs them: starts the private MariaDB and PostgreSQL servers (installing them
# with apt-get when missing; see scripts/servers/), runs `cargo test --workspace` with
# ORDO_REQUIRE_SERVERS=1 so that a test against a server fails instead of skipping, and stops the
# servers it started. Extra arguments go to `cargo test`.
#
# The servers' files go to $ORDO_SERVERS_DIR (here /var/tmp/ordo-servers unless set: PostgreSQL
# runs as the `postgres` user, which may not reach a checkout under /root).
set -euo pipefail
cd "$(dirname "$0")/.."
export ORDO_SERVERS_DIR=${ORDO_SERVERS_DIR:-/var/tmp/ordo-servers}
started=()
stop_started() {
  for s in "${started[@]}"; do
    scripts/servers/"$s".sh stop || true
  done
}
trap stop_started EXIT
for s in mariadb postgres; do
  if ! scripts/servers/"$s".sh status >/dev/null 2>&1; then
    scripts/servers/"$s".sh start
    started+=("$s")
  fi
done
ORDO_MARIADB_URL=$(scripts/servers/mariadb.sh url)
ORDO_POSTGRES_URL=$(scripts/servers/postgres.sh url)
export ORDO_MARIADB_URL ORDO_POSTGRES_URL
ORDO_REQUIRE_SERVERS=1 cargo test --workspace "$@"
# PostgreSQL as the oracle of `ssi` on a few specs: each permutation's commits and serialization
# failures against the known disagreements (scripts/pg-oracle.sh; seconds).
scripts/pg-oracle.sh --check specs/unique-invoice.spec specs/read-only-deferrable.spec specs/write-skew.spec
