#!/usr/bin/env bash
# Redis, ZooKeeper or a database? Every lock that survives something, side by side on ONE fleet
# (`oversell up --lock-store redlock --zookeeper --postgres`: 3 instances, nginx, 5 Redlock
# masters, one ZooKeeper server, one PostgreSQL; lua-release, reentrant-watchdog, fair and fenced
# use Redlock master 1 as their one Redis):
#   1. items/s under a closed loop of 64 connections, and the sale latency with 1 connection (no
#      waiting: the lock's own round trips) and with 64; ROUNDS rounds, the tiers' order
#      rotated each round, medians;
#   2. the ZooKeeper chapters' hold rates (--repeat REPEAT): on one server, then on an
#      ensemble of three; then the database chapters' on a fleet with PostgreSQL.
#
#   bench/redis-zookeeper-or-database.sh [REPEAT=10] [SECONDS=5] [ROUNDS=3]
# PARTS="speed holds database" (the default) or any of them alone.
# Needs `cargo build --release` first. Prints markdown for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-10} SECONDS_=${2:-5} ROUNDS=${3:-3}
OVERSELL=target/release/oversell LOADTEST=target/release/loadtest TOKEN=bench-zookeeper
. bench/fleet.sh
TIERS=(lua-release reentrant-watchdog fair fenced redlock zookeeper zookeeper-fenced postgres postgres-fenced)
PARTS=${PARTS:-speed holds database}

if [[ "$PARTS" == *speed* ]]; then
fleet_up --lock-store redlock --zookeeper --postgres
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

echo "### Redis, ZooKeeper or a database: speed"
echo
echo "One fleet, business 0 ms, through nginx, 3 instances, $ROUNDS rounds in rotated order, medians; items from the ledger. The Redis tiers use one Redis (Redlock master 1), \`redlock\` all five masters, the ZooKeeper tiers one ZooKeeper server (every write fsynced: ZooKeeper's default), the database tiers one PostgreSQL (fsync off: the lock is the session's, nothing of it is on disk) with the buyers queued in it (the rooms' \`pubsub\` wait)."
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

if [[ "$PARTS" == *holds* ]]; then
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
fleet_down
fi

[[ "$PARTS" == *database* ]] || exit 0
echo
echo "### Hold rates of the database chapters"
echo
echo "--repeat $REPEAT each, on a fleet with one PostgreSQL; a defect holds when it shows, a fix when nothing is oversold."
echo
echo "| scenario | expects | outcome held |"
echo "|---|---|---|"
fleet_up --postgres
for id in postgres-normal postgres-crash-holding postgres-freeze postgres-fenced; do
    echo "| $id | the fix | $(hold_rate "$id") |"
done
echo "| postgres-session-timeout | the defect | $(hold_rate postgres-session-timeout) |"
fleet_down
