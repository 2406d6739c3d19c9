#!/usr/bin/env bash
# Redis or ZooKeeper? Every lock that survives something, side by side on ONE fleet (`oversell
# up --lock-store redlock --zookeeper`: 3 instances, nginx, 5 Redlock masters, one ZooKeeper
# server; lua-release, reentrant-watchdog and fenced use Redlock master 1 as their one Redis):
#   1. items/s under a closed loop of 64 connections, and the sale latency with 1 connection (no
#      waiting: the lock's own round trips) and with 64; ROUNDS rounds, the tiers' order
#      rotated each round, medians;
#   2. the ZooKeeper chapters' hold rates (--repeat REPEAT): on one server, then on an
#      ensemble of three.
#
#   bench/redis-or-zookeeper.sh [REPEAT=10] [SECONDS=5] [ROUNDS=3]
# PARTS="speed holds" (the default) or either one alone.
# Needs `cargo build --release` first. Prints markdown for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-10} SECONDS_=${2:-5} ROUNDS=${3:-3}
OVERSELL=target/release/oversell LOADTEST=target/release/loadtest TOKEN=bench-zookeeper
. bench/fleet.sh
TIERS=(lua-release reentrant-watchdog fenced redlock zookeeper zookeeper-fenced)
PARTS=${PARTS:-speed holds}

if [[ "$PARTS" == *speed* ]]; then
fleet_up --lock-store redlock --zookeeper
declare -A rate p50_1 p99_1 p50_64 p99_64
for round in $(seq "$ROUNDS"); do
    # Rotate the order every round, so no tier always runs on a warmer (or busier) machine.
    order=("${TIERS[@]:round % ${#TIERS[@]}}" "${TIERS[@]:0:round % ${#TIERS[@]}}")
    for tier in "${order[@]}"; do
        read -r r a b < <(measure "$tier" 64)
        read -r _ c d < <(measure "$tier" 1)
        rate[$tier]+="$r "; p50_64[$tier]+="$a "; p99_64[$tier]+="$b "
        p50_1[$tier]+="$c "; p99_1[$tier]+="$d "
    done
done

echo "### Redis or ZooKeeper: speed"
echo
echo "One fleet, business 0 ms, through nginx, 3 instances, $ROUNDS rounds in rotated order, medians; items from the ledger. The Redis tiers use one Redis (Redlock master 1), \`redlock\` all five masters, the ZooKeeper tiers one ZooKeeper server (every write fsynced: ZooKeeper's default)."
echo
echo "| tier | items/s (64 conns) | vs lua-release | sale p50 / p99 ms, 1 conn | sale p50 / p99 ms, 64 conns |"
echo "|---|---|---|---|---|"
base=$(median "${rate[lua-release]}")
for tier in "${TIERS[@]}"; do
    r=$(median "${rate[$tier]}")
    printf '| %s | %.0f | %.2f× | %.2f / %.2f | %.1f / %.1f |\n' "$tier" "$r" \
        "$(python3 -c "print($r / $base)")" \
        "$(median "${p50_1[$tier]}")" "$(median "${p99_1[$tier]}")" \
        "$(median "${p50_64[$tier]}")" "$(median "${p99_64[$tier]}")"
done
echo
fleet_down
fi

[[ "$PARTS" == *holds* ]] || exit 0
echo "### Hold rates of the ZooKeeper chapters"
echo
echo "--repeat $REPEAT each; a defect holds when it shows, a fix when nothing is oversold."
echo
echo "| scenario | expects | ZooKeeper | outcome held |"
echo "|---|---|---|---|"
fleet_up --zookeeper
for id in zookeeper-normal zookeeper-crash-holding zookeeper-fenced; do
    echo "| $id | the fix | 1 server | $(hold_rate "$id") |"
done
echo "| zookeeper-session-expiry | the defect | 1 server | $(hold_rate zookeeper-session-expiry) |"
fleet_down
fleet_up --zookeeper-nodes 3
for id in zookeeper-node-down zookeeper-quorum-lost; do
    echo "| $id | the fix | 3 servers | $(hold_rate "$id") |"
done
