#!/usr/bin/env bash
# Issue 43's performance bars (docs/results/pwv.md), measured as interleaved slices inside one
# invocation (`-p nocc,pwv,silo,…` repeated), so that every ratio compares runs seconds apart:
#   1. YCSB 20 RMW, 1M × 1,000 B, θ = 0.9, 2 threads: pwv ≥ 1.2× the best of silo, 2pl-ordered and
#      rc-occ, and ≥ 0.75× nocc
#   2. the same at θ = 0: pwv ≥ 0.8× the best other protocol
#   3. Fig. 1 (pwv-micro), hot record first (--hot-position 9): pwv ≥ 1.5× 2pl-ordered; pwv flat (within
#      10%) across the hot record's positions 0–9
# Each ratio is the median over rounds of (pwv / the other protocol in the same round).
# BATCH sets --pwv-batch (default: the protocol's default, the paper's 10,000).
# Usage: [ROUNDS=4] [SECS=3] [THREADS=2] [BATCH=N] [FIG_DIR=DIR] docs/results/pwv/bars.sh [ORDO]
set -euo pipefail
ORDO=${1:-target/release/ordo}
OUT=${FIG_DIR:-$(dirname "$0")}
ROUNDS=${ROUNDS:-4}
SECS=${SECS:-3}
THREADS=${THREADS:-2}
BATCH_ARG=(); [ -n "${BATCH:-}" ] && BATCH_ARG=(--pwv-batch "$BATCH")
mkdir -p "$OUT"
YCSB=(-w ycsb --rows 1000000 --fields 10 --field-len 100 --ops 20 --rmw --read-ratio 0)
rep() { local s=$1 out=$1 i; for ((i = 1; i < ROUNDS; i++)); do out+=",$s"; done; echo "$out"; }
bench() { # bench NAME PROTOCOLS ARGS...
  local name=$1 protocols=$2; shift 2
  "$ORDO" bench -t "$THREADS" --seconds "$SECS" --warmup 1 --quiet -p "$(rep "$protocols")" \
    "${BATCH_ARG[@]}" "$@" --json "$OUT/bars-$name.json" > "$OUT/bars-$name.txt"
}
bench theta0.9 nocc,pwv,silo,2pl-ordered,rc-occ "${YCSB[@]}" --theta 0.9
bench theta0 nocc,pwv,silo,2pl-ordered,rc-occ "${YCSB[@]}" --theta 0
bench fig1 pwv,2pl-ordered -w pwv-micro --records 1000000 --hot-position 9
# A sweep runs its values one after another (all protocols at each): one invocation per round.
for ((r = 1; r <= ROUNDS; r++)); do
  "$ORDO" bench -t "$THREADS" --seconds "$SECS" --warmup 1 --quiet -p pwv "${BATCH_ARG[@]}" \
    -w pwv-micro --records 1000000 --hot-position 0,3,6,9 \
    --json "$OUT/bars-fig1-positions-$r.json" > "$OUT/bars-fig1-positions-$r.txt"
done
python3 - "$OUT" "$ROUNDS" <<'PY' | tee "$OUT/bars.txt"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def runs(name):
    return json.load(open(f"{out}/bars-{name}.json"))
def rounds_of(name):
    rs = runs(name)
    k = len(rs) // rounds
    return [rs[i * k:(i + 1) * k] for i in range(rounds)]
def ratio(name, a, b):
    v = []
    for r in rounds_of(name):
        t = {x["protocol"]: x["committed_per_sec"] for x in r}
        v.append(t[a] / t[b])
    return statistics.median(v), v
def best_other(name, others):
    v = []
    for r in rounds_of(name):
        t = {x["protocol"]: x["committed_per_sec"] for x in r}
        v.append(t["pwv"] / max(t[o] for o in others))
    return statistics.median(v), v
def show(label, bar, m, v):
    verdict = "met" if m >= bar else "missed"
    print(f"{label:<46} {m:6.3f}  (bar {bar}; {verdict})  rounds: {' '.join(f'{x:.3f}' for x in v)}")
others = ["silo", "2pl-ordered", "rc-occ"]
show("θ=0.9: pwv / best of silo, 2pl-ordered, rc-occ", 1.2, *best_other("theta0.9", others))
show("θ=0.9: pwv / nocc", 0.75, *ratio("theta0.9", "pwv", "nocc"))
show("θ=0: pwv / best other (nocc aside)", 0.8, *best_other("theta0", others))
show("Fig. 1 hot first: pwv / 2pl-ordered", 1.5, *ratio("fig1", "pwv", "2pl-ordered"))
spread = []
for i in range(1, rounds + 1):
    t = [x["committed_per_sec"] for x in runs(f"fig1-positions-{i}")]
    spread.append(min(t) / max(t))
m = statistics.median(spread)
print(f"{'Fig. 1: pwv slowest / fastest position (0,3,6,9)':<46} {m:6.3f}  (bar 0.9; "
      f"{'met' if m >= 0.9 else 'missed'})  rounds: {' '.join(f'{x:.3f}' for x in spread)}")
for name in ["theta0.9", "theta0", "fig1"]:
    for r in rounds_of(name)[:1]:
        print(f"  {name} round 1: " + ", ".join(f"{x['protocol']} {x['committed_per_sec']:.0f}" for x in r))
PY
