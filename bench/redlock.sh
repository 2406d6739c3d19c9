#!/usr/bin/env bash
# Redlock measured on a fleet of its own (`oversell up --lock-store redlock`: 3 instances,
# nginx, 5 independent masters, all local processes):
#   1. the price of the quorum: redlock (5 masters) against lua-release (master 1 alone, the
#      same process and the same clock shim), taking turns ROUNDS times in one run: items/s
#      under a closed loop of 64 connections, and the sale latency with 1 connection (no
#      waiting: what the lock's own round trips cost) and with 64;
#   2. hold rates of the Redlock chapters, --repeat REPEAT each: the defects (restart without
#      fsync, clock jump, freeze) and the fixes (a minority down, a majority down, fsync always;
#      the last on a fleet whose masters fsync always).
#
#   bench/redlock.sh [REPEAT=10] [SECONDS=5] [ROUNDS=3]
# Needs `cargo build --release` first. Prints markdown for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-10} SECONDS_=${2:-5} ROUNDS=${3:-3}
OVERSELL=target/release/oversell LOADTEST=target/release/loadtest TOKEN=bench-redlock
. bench/fleet.sh

# One closed loop: prints "items/s p50 p99" (items from the ledger, latency from the buyers).
measure() {
    local tier=$1 connections=$2
    admin PUT /admin/config "{\"tier\":\"$tier\",\"business_ms\":0,\"ttl_ms\":3000,\"wait\":\"pubsub\",\"wait_deadline_ms\":20000}"
    admin POST /admin/reset '{"stock":1000000}'
    sleep 0.2
    local out items
    out=$("$LOADTEST" run --url "$URL" -c "$connections" -z "${SECONDS_}s" --quiet --json)
    items=$(state | python3 -c "import json,sys; print(json.load(sys.stdin)['items_sold'])")
    python3 -c "
import json,sys; r=json.loads(sys.argv[1])['stats']; l=r['latency_ms']
print(f\"{int(sys.argv[2])/r['elapsed_s']:.0f} {l['p50']:.2f} {l['p99']:.2f}\")" "$out" "$items"
}

fleet_up --lock-store redlock
declare -A rate p50_1 p99_1 p50_64 p99_64
for round in $(seq "$ROUNDS"); do
    # Swap the order every round, so neither tier always runs on a warmer machine.
    order="redlock lua-release"; [ $((round % 2)) = 0 ] && order="lua-release redlock"
    for tier in $order; do
        read -r r a b < <(measure "$tier" 64)
        read -r _ c d < <(measure "$tier" 1)
        rate[$tier]+="$r "; p50_64[$tier]+="$a "; p99_64[$tier]+="$b "
        p50_1[$tier]+="$c "; p99_1[$tier]+="$d "
    done
done
median() { python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))" $1; }

echo "### The price of the quorum"
echo
echo "Business 0 ms, through nginx, 3 instances, $ROUNDS rounds taking turns, medians; items from the ledger. \`lua-release\` runs on master 1 of the same fleet (one Redis), \`redlock\` on all five."
echo
echo "| tier | items/s (64 conns) | sale p50 / p99 ms, 1 conn | sale p50 / p99 ms, 64 conns |"
echo "|---|---|---|---|"
for tier in lua-release redlock; do
    printf '| %s | %.0f | %.2f / %.2f | %.1f / %.1f |\n' "$tier" \
        "$(median "${rate[$tier]}")" "$(median "${p50_1[$tier]}")" "$(median "${p99_1[$tier]}")" \
        "$(median "${p50_64[$tier]}")" "$(median "${p99_64[$tier]}")"
done
python3 -c "import sys; print(f'\nredlock / lua-release items/s: {float(sys.argv[1])/float(sys.argv[2]):.2f}×')" \
    "$(median "${rate[redlock]}")" "$(median "${rate[lua-release]}")"
echo

echo "### Hold rates of the Redlock chapters"
echo
echo "--repeat $REPEAT each; a defect holds when it shows (overlaps, oversold), a fix when nothing is oversold."
echo
echo "| scenario | expects | masters | outcome held |"
echo "|---|---|---|---|"
for id in redlock-minority-down redlock-majority-down; do
    echo "| $id | the fix | 5, persistence none | $(hold_rate "$id") |"
done
for id in redlock-restart-no-fsync redlock-clock-jump redlock-freeze; do
    echo "| $id | the defect | 5, persistence none | $(hold_rate "$id") |"
done
fleet_down
fleet_up --lock-store redlock --lock-persistence always
echo "| redlock-restart-fsync-always | the fix | 5, appendfsync always | $(hold_rate redlock-restart-fsync-always) |"
