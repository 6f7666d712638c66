#!/usr/bin/env bash
# A private MariaDB server for benchmarks and CI: its own data directory, socket and port, apart
# from any system-wide instance. See scripts/servers/README.md.
#
#   scripts/servers/mariadb.sh start|stop|status|url
set -euo pipefail
# shellcheck disable=SC2034
NAME=mariadb
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${ORDO_MARIADB_PORT:-33306}
check_port "$PORT"
BASE=$SERVERS_DIR/mariadb
DATA=$BASE/data
CNF=$BASE/my.cnf
SOCK=$BASE/mysqld.sock
PIDFILE=$BASE/mysqld.pid
LOG=$BASE/mariadb.log
# Written once the data directory is initialised; a data directory without it is a failed first
# initialisation, redone.
INITED=$BASE/initialised
URL="mysql://ordo:ordo@127.0.0.1:$PORT/ordo"
# The server runs as whoever runs this script (root: with --user=root); that user's account,
# authenticated by the unix socket, is the administrator's.
ME=$(id -un)

first_cmd() {
  local c
  for c in "$@"; do
    if command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    elif [ -x "/usr/sbin/$c" ]; then
      echo "/usr/sbin/$c"
      return 0
    fi
  done
  return 1
}

find_bins() {
  MARIADBD=$(first_cmd mariadbd mysqld) || return 1
  INSTALL_DB=$(first_cmd mariadb-install-db mysql_install_db) || return 1
  CLIENT=$(first_cmd mariadb mysql) || return 1
  ADMIN=$(first_cmd mariadb-admin mysqladmin) || return 1
}

running_pid() {
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  pid_alive "$pid" mariadbd mysqld || return 1
  echo "$pid"
}

ensure_installed() {
  find_bins && return 0
  apt_install mariadb-server mariadb-client
  find_bins || die "mariadb-server is installed but mariadbd, mariadb-install-db, mariadb or mariadb-admin is missing"
  # The package's own instance (/var/lib/mysql, port 3306) is no concern of ours; policy-rc.d kept
  # the install from starting it, but should it run anyway, stop it.
  local pid
  pid=$(cat /run/mysqld/mysqld.pid 2>/dev/null) || pid=
  if pid_alive "$pid" mariadbd mysqld; then
    say "stopping the system-wide instance (pid $pid) that the install started"
    if [ -d /run/systemd/system ]; then
      systemctl stop mariadb.service || kill -TERM "$pid" || true
    else
      kill -TERM "$pid" || true
    fi
  fi
}

write_cnf() {
  mkdir -p "$BASE"
  check_socket_path "$SOCK"
  local user_line=
  [ "$(id -u)" -eq 0 ] && user_line="user = root"
  cat >"$CNF" <<EOF
# Written by scripts/servers/mariadb.sh on each start; edits are lost.
[client]
socket = $SOCK
port = $PORT

[mysqld]
$user_line
datadir = $DATA
socket = $SOCK
pid-file = $PIDFILE
log-error = $LOG
port = $PORT
bind-address = 127.0.0.1
skip-name-resolve
innodb_buffer_pool_size = 512M
max_connections = 256
EOF
}

ping() {
  "$ADMIN" --defaults-file="$CNF" -u "$ME" --connect-timeout=2 ping >/dev/null 2>&1
}

# wait_ready PID: until the server answers on its socket; fail if it exits or after WAIT_S.
wait_ready() {
  local pid=$1 deadline=$((SECONDS + WAIT_S))
  until ping; do
    pid_alive "$pid" mariadbd mysqld || die_log "the server exited during start" "$LOG"
    [ "$SECONDS" -lt "$deadline" ] || die_log "the server (pid $pid) does not accept connections after ${WAIT_S}s" "$LOG"
    sleep 0.5
  done
}

# check_tcp: user ordo can log in over TCP (the URL's way in).
check_tcp() {
  "$CLIENT" --no-defaults --protocol=tcp -h 127.0.0.1 -P "$PORT" --connect-timeout=5 -u ordo -pordo ordo \
    -e 'SELECT 1' >/dev/null 2>&1 || die_log "user ordo cannot connect to 127.0.0.1:$PORT" "$LOG"
}

create_ordo() {
  "$CLIENT" --defaults-file="$CNF" -u "$ME" <<'EOF' || die_log "could not create database and user ordo" "$LOG"
CREATE DATABASE IF NOT EXISTS ordo;
CREATE USER IF NOT EXISTS 'ordo'@'127.0.0.1' IDENTIFIED BY 'ordo';
CREATE USER IF NOT EXISTS 'ordo'@'localhost' IDENTIFIED BY 'ordo';
ALTER USER 'ordo'@'127.0.0.1' IDENTIFIED BY 'ordo';
ALTER USER 'ordo'@'localhost' IDENTIFIED BY 'ordo';
GRANT ALL PRIVILEGES ON ordo.* TO 'ordo'@'127.0.0.1';
GRANT ALL PRIVILEGES ON ordo.* TO 'ordo'@'localhost';
EOF
}

start() {
  ensure_installed
  write_cnf
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
    "$INSTALL_DB" --defaults-file="$CNF" --auth-root-authentication-method=socket \
      --auth-root-socket-user="$ME" --skip-test-db >"$BASE/install-db.log" 2>&1 ||
      die_log "mariadb-install-db failed" "$BASE/install-db.log"
    touch "$INITED"
  fi
  rm -f "$PIDFILE"
  # setsid: its own session, so that a ^C to the caller's terminal does not reach the server.
  setsid "$MARIADBD" --defaults-file="$CNF" >>"$LOG" 2>&1 </dev/null &
  pid=$!
  wait_ready "$pid"
  create_ordo
  check_tcp
  say "started (pid $(running_pid || echo "$pid")) on 127.0.0.1:$PORT and $SOCK; log $LOG"
}

stop() {
  local pid
  if ! pid=$(running_pid); then
    say "not running"
    return 0
  fi
  find_bins || true
  if [ -z "${ADMIN:-}" ] || ! "$ADMIN" --defaults-file="$CNF" -u "$ME" shutdown >/dev/null 2>&1; then
    kill -TERM "$pid" 2>/dev/null || true
  fi
  local deadline=$((SECONDS + WAIT_S))
  while pid_alive "$pid" mariadbd mysqld; do
    [ "$SECONDS" -lt "$deadline" ] || die_log "the server (pid $pid) is still running ${WAIT_S}s after the shutdown" "$LOG"
    sleep 0.2
  done
  say "stopped"
}

status() {
  local pid
  if pid=$(running_pid); then
    say "running (pid $pid) on 127.0.0.1:$PORT and $SOCK; data $DATA"
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
