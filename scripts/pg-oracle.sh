#!/usr/bin/env bash
# PostgreSQL as an oracle for Ordo's `ssi`: runs specs with `ordo spec --backend postgres -p
# native-ser` (every transaction SERIALIZABLE in a real PostgreSQL) and with `ordo spec -p ssi`,
# and compares, permutation by permutation, how each transaction ended: committed, rolled back,
# a serialization failure (40001), a deadlock (40P01), or another error (any other SQLSTATE:
# `ordo spec --backend` reports PostgreSQL's non-retryable errors, 23505 among them, as XX000, so
# they are one class). Not the full text: plans, timing of waits and error wording differ.
#
#   scripts/pg-oracle.sh [--check] [SPEC...]     (default: every specs/*.spec)
#
# Prints one line per permutation (`agree` or `DISAGREE` with both outcomes) and a tally. With
# --check it compares the disagreements with the known ones in specs/pg-oracle.disagreements
# (each explained in docs/results/pg-oracle.md) and exits 1 on any difference. Starts the private
# PostgreSQL server (scripts/servers/postgres.sh) if it is not running and stops it again after;
# uses target/debug/ordo (built if missing; ORDO_BIN overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
export ORDO_SERVERS_DIR=${ORDO_SERVERS_DIR:-/var/tmp/ordo-servers}
check=0
if [[ ${1:-} == --check ]]; then check=1; shift; fi
specs=("$@")
if [[ ${#specs[@]} -eq 0 ]]; then specs=(specs/*.spec); fi
ordo=${ORDO_BIN:-target/debug/ordo}
[[ -x $ordo ]] || cargo build -q -p ordo-cli
started=0
if ! scripts/servers/postgres.sh status >/dev/null 2>&1; then
  scripts/servers/postgres.sh start >&2
  started=1
fi
trap '[[ $started == 1 ]] && scripts/servers/postgres.sh stop >&2 || true' EXIT
ORDO_POSTGRES_URL=${ORDO_POSTGRES_URL:-$(scripts/servers/postgres.sh url)}
export ORDO_POSTGRES_URL

# outcomes FILE: one line per permutation, `STEPS<TAB>s1 END; s2 END; ...`, each END normalised.
outcomes() {
  awk '
    /^starting permutation: / { sub(/^starting permutation: /, ""); perm = $0 }
    /^summary: / {
      line = $0; sub(/^summary: /, "", line)
      n = split(line, parts, /; /); out = ""
      for (i = 1; i <= n; i++) {
        p = parts[i]
        if (p !~ /^s[^ ]* /) continue   # the checker'"'"'s verdict
        if (p ~ /^[^ ]+ (history|outcome) /) continue
        split(p, kv, " "); who = kv[1]; rest = substr(p, length(who) + 2)
        m = split(rest, ends, ","); norm = ""
        for (j = 1; j <= m; j++) {
          e = ends[j]
          if (e ~ /^aborted (40001|40P01)$/) e = e
          else if (e ~ /^aborted /) e = "aborted error"
          norm = norm (j > 1 ? "," : "") e
        }
        out = out (out == "" ? "" : "; ") who " " norm
      }
      print perm "\t" out
    }' "$1"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [[ $started == 1 ]] && scripts/servers/postgres.sh stop >&2 || true' EXIT
agree=0
disagree=0
: >"$tmp/disagreements"
for f in "${specs[@]}"; do
  stem=$(basename "$f" .spec)
  "$ordo" spec "$f" -p ssi >"$tmp/$stem.ssi" 2>&1 || true
  "$ordo" spec "$f" --backend postgres -p native-ser >"$tmp/$stem.pg" 2>&1 || true
  outcomes "$tmp/$stem.ssi" >"$tmp/$stem.ssi.o"
  outcomes "$tmp/$stem.pg" >"$tmp/$stem.pg.o"
  if [[ $(wc -l <"$tmp/$stem.ssi.o") != $(wc -l <"$tmp/$stem.pg.o") || ! -s $tmp/$stem.ssi.o ]]; then
    echo "$stem: the runs did not complete alike; ssi:" >&2
    tail -3 "$tmp/$stem.ssi" >&2
    echo "postgres:" >&2
    tail -3 "$tmp/$stem.pg" >&2
    exit 2
  fi
  while IFS=$'\t' read -r perm o_ssi && IFS=$'\t' read -r perm_pg o_pg <&3; do
    if [[ $o_ssi == "$o_pg" ]]; then
      agree=$((agree + 1))
      echo "agree     $stem: $perm: $o_ssi"
    else
      disagree=$((disagree + 1))
      echo "DISAGREE  $stem: $perm: ssi: $o_ssi | postgres: $o_pg"
      echo "$stem: $perm: ssi: $o_ssi | postgres: $o_pg" >>"$tmp/disagreements"
    fi
  done <"$tmp/$stem.ssi.o" 3<"$tmp/$stem.pg.o"
done
echo "permutations: $((agree + disagree)), agree: $agree, disagree: $disagree"
if [[ $check == 1 ]]; then
  known=specs/pg-oracle.disagreements
  if ! diff <(grep -v '^#' "$known" | grep -F -f <(for f in "${specs[@]}"; do echo "$(basename "$f" .spec): "; done) | sort || true) \
       <(sort "$tmp/disagreements"); then
    echo "pg-oracle: the disagreements differ from $known (< known, > now)" >&2
    exit 1
  fi
  echo "pg-oracle: the disagreements are the known ones"
fi
