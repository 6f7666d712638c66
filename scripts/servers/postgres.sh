#!/usr/bin/env bash
# A private PostgreSQL server for benchmarks and CI: its own data directory, socket and port, apart
# from any system-wide cluster. See scripts/servers/README.md.
#
#   scripts/servers/postgres.sh start|stop|status|url
set -euo pipefail
# shellcheck disable=SC2034
NAME=postgres
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${ORDO_POSTGRES_PORT:-35432}
check_port "$PORT"
BASE=$SERVERS_DIR/postgres
DATA=$BASE/data
LOG=$BASE/postgres.log
# Written once the data directory is initialised; a data directory without it is a failed first
# initialisation, redone.
INITED=$BASE/initialised
URL="postgres://ordo:ordo@127.0.0.1:$PORT/ordo"
# PostgreSQL refuses to run as root: as root, the server runs as the package's `postgres` user;
# otherwise as whoever runs this script.
if [ "$(id -u)" -eq 0 ]; then PG_OS_USER=postgres; else PG_OS_USER=$(id -un); fi

# as_pg COMMAND...: run as the server's user, from / (the caller's directory may be closed to it).
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u "$PG_OS_USER" -- "$@")
  else
    (cd / && "$@")
  fi
}

# find_bins: BIN, the directory of the server's programs: that of the data directory's major
# version if it has one, else the newest installed under /usr/lib/postgresql, else pg_ctl's on PATH.
find_bins() {
  BIN=
  if [ -r "$DATA/PG_VERSION" ]; then
    local v
    v=$(cat "$DATA/PG_VERSION")
    if [ -x "/usr/lib/postgresql/$v/bin/postgres" ]; then BIN=/usr/lib/postgresql/$v/bin; fi
  fi
  if [ -z "$BIN" ]; then
    local d
    for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V -r); do
      if [ -x "$d/postgres" ]; then
        BIN=$d
        break
      fi
    done
  fi
  if [ -z "$BIN" ] && command -v pg_ctl >/dev/null 2>&1; then
    BIN=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
  fi
  [ -n "$BIN" ] || return 1
  local p
  for p in postgres initdb pg_ctl pg_isready psql; do [ -x "$BIN/$p" ] || return 1; done
}

running_pid() {
  local pid
  pid=$(head -n 1 "$DATA/postmaster.pid" 2>/dev/null) || return 1
  pid_alive "$pid" postgres postmaster || return 1
  echo "$pid"
}

online_clusters() {
  if command -v pg_lsclusters >/dev/null 2>&1; then
    pg_lsclusters -h 2>/dev/null | awk '$4 == "online" { print $1 "/" $2 }'
  fi
}

ensure_installed() {
  find_bins && return 0
  local before
  before=$(online_clusters)
  apt_install postgresql postgresql-client
  find_bins || die "postgresql is installed, but postgres, initdb, pg_ctl, pg_isready or psql is missing"
  # The package creates its own cluster (/var/lib/postgresql/VERSION/main, port 5432), no concern of
  # ours; policy-rc.d kept the install from starting it, but should it run anyway, stop it.
  local c
  for c in $(online_clusters); do
    if ! grep -qx "$c" <<<"$before"; then
      say "stopping the system-wide cluster $c that the install started"
      pg_ctlcluster "${c%%/*}" "${c#*/}" stop || true
    fi
  done
}

prepare_dirs() {
  [[ $BASE != *"'"* ]] || die "the directory $BASE has a quote in its name"
  check_socket_path "$BASE/.s.PGSQL.$PORT"
  if [ "$(id -u)" -eq 0 ]; then
    id -u "$PG_OS_USER" >/dev/null 2>&1 || die "there is no user $PG_OS_USER to run the server as"
  fi
  mkdir -p "$BASE"
  if [ "$(id -u)" -eq 0 ]; then chown "$PG_OS_USER:" "$BASE"; fi
  as_pg test -w "$BASE" -a -x "$BASE" ||
    die "user $PG_OS_USER cannot write to $BASE (is a directory above it closed to others?); set ORDO_SERVERS_DIR to a directory it can reach"
}

# write_conf: the settings, rewritten on each start (so that ORDO_POSTGRES_PORT takes effect).
write_conf() {
  as_pg tee "$DATA/ordo.conf" >/dev/null <<EOF
# Written by scripts/servers/postgres.sh on each start; edits are lost.
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$BASE'
shared_buffers = 256MB
max_connections = 256
password_encryption = 'scram-sha-256'
EOF
  as_pg tee "$DATA/pg_hba.conf" >/dev/null <<'EOF'
# Written by scripts/servers/postgres.sh on each start; edits are lost.
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 trust
host    all       all   127.0.0.1/32  scram-sha-256
EOF
}

ready() {
  "$BIN/pg_isready" -q -h "$BASE" -p "$PORT" -t 2 >/dev/null 2>&1
}

# wait_ready PID: until the server accepts connections; fail if it exits or after WAIT_S.
wait_ready() {
  local pid=$1 deadline=$((SECONDS + WAIT_S))
  until ready; do
    pid_alive "$pid" postgres postmaster || die_log "the server exited during start" "$LOG"
    [ "$SECONDS" -lt "$deadline" ] || die_log "the server (pid $pid) does not accept connections after ${WAIT_S}s" "$LOG"
    sleep 0.5
  done
}

create_ordo() {
  as_pg "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$BASE" -p "$PORT" -d postgres >/dev/null <<'EOF' ||
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ordo') THEN CREATE ROLE ordo; END IF;
END $$;
ALTER ROLE ordo LOGIN PASSWORD 'ordo';
SELECT 'CREATE DATABASE ordo OWNER ordo' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'ordo')\gexec
ALTER DATABASE ordo OWNER TO ordo;
GRANT ALL PRIVILEGES ON DATABASE ordo TO ordo;
EOF
    die_log "could not create database and user ordo" "$LOG"
}

# check_tcp: user ordo can log in over TCP with its password (the URL's way in).
check_tcp() {
  PGPASSWORD=ordo PGCONNECT_TIMEOUT=5 "$BIN/psql" -X -q -h 127.0.0.1 -p "$PORT" -U ordo -d ordo \
    -c 'SELECT 1' >/dev/null 2>&1 || die_log "user ordo cannot connect to 127.0.0.1:$PORT" "$LOG"
}

start() {
  ensure_installed
  prepare_dirs
  local pid
  if pid=$(running_pid); then
    wait_ready "$pid"
    check_tcp
    say "already running (pid $pid) on 127.0.0.1:$PORT"
    return 0
  fi
  if [ ! -e "$INITED" ]; then
    rm -rf "$DATA"
    say "initialising $DATA"
    as_pg "$BIN/initdb" -D "$DATA" -E UTF8 --locale=C --auth-local=trust --auth-host=scram-sha-256 \
      >"$BASE/initdb.log" 2>&1 || die_log "initdb failed" "$BASE/initdb.log"
    echo "include 'ordo.conf'" | as_pg tee -a "$DATA/postgresql.conf" >/dev/null
    touch "$INITED"
  fi
  find_bins # the data directory's own version, now that it has one
  write_conf
  # pg_ctl starts the server in a session of its own and waits until it accepts connections.
  as_pg "$BIN/pg_ctl" start -D "$DATA" -l "$LOG" -w -t "$WAIT_S" -s >/dev/null 2>&1 ||
    die_log "pg_ctl start failed" "$LOG"
  pid=$(running_pid) || die_log "the server exited during start" "$LOG"
  wait_ready "$pid"
  create_ordo
  check_tcp
  say "started (pid $pid, as user $PG_OS_USER) on 127.0.0.1:$PORT and $BASE; log $LOG"
}

stop() {
  local pid
  if ! pid=$(running_pid); then
    say "not running"
    return 0
  fi
  find_bins || die "the server's programs are missing"
  as_pg "$BIN/pg_ctl" stop -D "$DATA" -m fast -w -t "$WAIT_S" -s >/dev/null 2>&1 ||
    die_log "the server (pid $pid) did not stop within ${WAIT_S}s" "$LOG"
  say "stopped"
}

status() {
  local pid
  if pid=$(running_pid); then
    say "running (pid $pid) on 127.0.0.1:$PORT and $BASE; data $DATA"
    return 0
  fi
  say "not running"
  return 3
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
url) echo "$URL" ;;
*)
  echo "usage: $0 start|stop|status|url" >&2
  exit 2
  ;;
esac
