#!/usr/bin/env bash
# The isolation specs of specs/ against each engine, with DIBS and at each of the engine's own
# levels (`ordo spec --backend`): for every spec, the permutations whose outcome no serial order
# gives, out of all. Writes docs/results/dibs-backends/specs-matrix.txt (or $1).
#
#   docs/results/dibs-backends/specs.sh [OUT]
#
# Starts the MariaDB and PostgreSQL servers with scripts/servers/*.sh (installing them with apt-get
# when missing) and stops those it started.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-docs/results/dibs-backends/specs-matrix.txt}
export ORDO_SERVERS_DIR=${ORDO_SERVERS_DIR:-/var/tmp/ordo-servers}
cargo build --release -q -p ordo-cli
ordo=target/release/ordo
started=()
trap 'for s in "${started[@]}"; do scripts/servers/$s.sh stop; done' EXIT
for s in mariadb postgres; do
  if ! scripts/servers/$s.sh status >/dev/null 2>&1; then
    scripts/servers/$s.sh start >/dev/null
    started+=("$s")
  fi
done
{
  echo "# ordo spec specs/NAME.spec --backend B -p P: permutations NOT serializable / all"
  for b in sqlite mariadb postgres; do
    for p in dibs native-ser native-rr native-rc native-ru; do
      if [ "$b" = sqlite ] && [ "$p" != dibs ] && [ "$p" != native-ser ]; then continue; fi
      line=$(printf '%-8s %-10s' "$b" "$p")
      for s in specs/*.spec; do
        o=$("$ordo" spec "$s" --backend "$b" -p "$p")
        line="$line $(basename "$s" .spec)=$(grep -c 'outcome NOT' <<<"$o" || true)/$(grep -c '^summary' <<<"$o")"
      done
      echo "$line"
    done
  done
} | tee "$out"
