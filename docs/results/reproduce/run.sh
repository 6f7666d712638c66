#!/usr/bin/env bash
# Reproduces every result of the catalogue (`ordo reproduce --all`) into this directory, then
# writes its summary into docs/results/README.md between the `reproduce:begin` / `reproduce:end`
# markers: the compass of results there is generated from this run, never edited by hand.
# Usage: docs/results/reproduce/run.sh [path to the release `ordo` binary]   (about 20 minutes)
set -euo pipefail
ORDO=${1:-target/release/ordo}
DIR=$(cd "$(dirname "$0")" && pwd)
README="$DIR/../README.md"
# Only what a run writes is replaced: this script stays.
find "$DIR" -mindepth 1 -maxdepth 1 ! -name run.sh -exec rm -rf {} +
"$ORDO" reproduce --all --out "$DIR" | tee "$DIR/reproduce.txt"
{
  echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') at \`$(git -C "$DIR" rev-parse --short HEAD)\` with"
  echo "\`docs/results/reproduce/run.sh\`; figures and verdicts in [reproduce/](reproduce/index.html)."
  echo
  sed 's#](\([a-z0-9-]*\)/index.html)#](reproduce/\1/index.html)#' "$DIR/summary.md"
} > "$DIR/compass.md"
python3 - "$README" "$DIR/compass.md" <<'PY'
import sys
readme, compass = sys.argv[1], open(sys.argv[2]).read()
text = open(readme).read()
begin, end = "<!-- reproduce:begin -->", "<!-- reproduce:end -->"
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(readme, "w").write(head + begin + "\n" + compass + end + tail)
PY
