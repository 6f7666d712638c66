# shellcheck shell=bash disable=SC2034
# Shared helpers for mariadb.sh and postgres.sh; sourced, not run. The caller sets NAME (the
# message prefix) before sourcing.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SERVERS_DIR=${ORDO_SERVERS_DIR:-$ROOT/target/servers}
case $SERVERS_DIR in /*) ;; *) SERVERS_DIR=$PWD/$SERVERS_DIR ;; esac
# The wait for a server to accept connections, in seconds.
WAIT_S=60

say() { echo "$NAME: $*"; }
die() {
  echo "$NAME: $*" >&2
  exit 1
}

# die_log MESSAGE LOGFILE: fail, with the log's last lines (each prefixed) on stderr.
die_log() {
  echo "$NAME: $1; last lines of $2:" >&2
  if [ -r "$2" ]; then tail -n 25 "$2" | sed "s/^/$NAME:   /" >&2; fi
  exit 1
}

# pid_alive PID COMM...: whether PID is a live process whose command name is one of COMMs (a pid
# file left behind by a crash or a reboot may name an unrelated process).
pid_alive() {
  local pid=$1 comm
  shift
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 0
  local c
  for c in "$@"; do [ "$comm" = "$c" ] && return 0; done
  return 1
}

# The policy-rc.d that apt_install replaces for the duration of the install, and its backup.
POLICY=/usr/sbin/policy-rc.d
POLICY_BACKUP=
POLICY_OURS=

restore_policy() {
  if [ -n "$POLICY_BACKUP" ]; then
    mv -f "$POLICY_BACKUP" "$POLICY"
  elif [ -n "$POLICY_OURS" ]; then
    rm -f "$POLICY"
  fi
  POLICY_BACKUP=
  POLICY_OURS=
}

# apt_install PACKAGE...: install Debian packages without letting their maintainer scripts start
# the system service (a policy-rc.d that exits 101 for the duration; any existing one is put
# back). `apt-get update` only when the first try fails (a fresh machine has no package lists).
apt_install() {
  [ "$(id -u)" -eq 0 ] || die "$* not installed, and installing needs root: run as root, or install them first"
  command -v apt-get >/dev/null || die "$* not installed, and there is no apt-get: install them first"
  say "installing $* with apt-get"
  trap restore_policy EXIT
  trap 'restore_policy; exit 130' INT TERM HUP
  if [ -e "$POLICY" ] || [ -L "$POLICY" ]; then
    local backup
    backup=$(mktemp "$POLICY.orig.XXXXXX")
    cp -pP --remove-destination "$POLICY" "$backup"
    POLICY_BACKUP=$backup
  fi
  POLICY_OURS=1
  rm -f "$POLICY"
  printf '#!/bin/sh\n# Written by ordo scripts/servers for the duration of a package install.\nexit 101\n' >"$POLICY"
  chmod 755 "$POLICY"
  local rc=0 aptlog
  aptlog=$(mktemp)
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends "$@" >"$aptlog" 2>&1; then
    say "apt-get install failed; running apt-get update and retrying"
    if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "$@"; } >>"$aptlog" 2>&1; then
      rc=1
    fi
  fi
  restore_policy
  trap - EXIT INT TERM HUP
  if [ "$rc" -ne 0 ]; then
    tail -n 25 "$aptlog" | sed "s/^/$NAME:   /" >&2
    rm -f "$aptlog"
    die "could not install $*"
  fi
  rm -f "$aptlog"
  say "installed $*"
}

# check_socket_path PATH: a unix socket's path must fit in sun_path (108 bytes with the NUL).
check_socket_path() {
  [ "${#1}" -le 100 ] || die "socket path $1 is too long for a unix socket; set ORDO_SERVERS_DIR to a shorter directory"
}

check_port() {
  if ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then die "bad port '$1'"; fi
}
