#!/usr/bin/env bash
# Builds stripped release binaries of several git refs into target/device, for the device scripts
# (`device-latch.sh` takes their names in BINS; `device-run.sh` runs ORDO=target/device/NAME).
# Each ref is checked out in a temporary worktree and built into one shared target directory
# (target/device-build), so only the workspace's own crates rebuild from ref to ref.
# Usage: docs/results/bars/device-builds.sh NAME=REF...
#   e.g. docs/results/bars/device-builds.sh ordo=main ordo-ready=sca-ready ordo-bits=sca-bits-per-worker
# Then: run(command="docs/results/bars/device-latch.sh $OUT", carry=["target/device"]) with
# BINS="ordo ordo-ready ordo-bits" in front of the script.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
[ $# -gt 0 ] || { echo "usage: device-builds.sh NAME=REF..." >&2; exit 2; }
mkdir -p target/device
for spec in "$@"; do
  name=${spec%%=*}
  ref=${spec#*=}
  [ -n "$name" ] && [ "$name" != "$spec" ] || { echo "not NAME=REF: $spec" >&2; exit 2; }
  wt=$(mktemp -d)/wt
  git worktree add --detach "$wt" "$ref" >/dev/null
  echo "== $name: $ref ($(git -C "$wt" log --oneline -1 | cut -c1-60))"
  (cd "$wt" && CARGO_TARGET_DIR="$root/target/device-build" cargo build --release -p ordo-cli --quiet)
  strip -o "target/device/$name" target/device-build/release/ordo
  git worktree remove --force "$wt"
done
ls -la target/device
