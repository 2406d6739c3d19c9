#!/usr/bin/env bash
# The Redlock chapters' hold rates, each --repeat REPEAT on a fleet of its own (`oversell up
# --lock-store redlock`: 3 instances, nginx, 5 independent masters, all local processes): the
# defects (restart without fsync, clock jump, freeze), the validity check (a slow master
# spending a short lease) and the fixes (a minority down, a majority down, fsync always; the
# last on a fleet whose masters fsync always). The price of the quorum
# against one Redis is measured by bench/redis-zookeeper-or-database.sh, in the same run as ZooKeeper.
#
#   bench/redlock.sh [REPEAT=10]
# Needs `cargo build --release` first. Prints markdown for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-10}
OVERSELL=target/release/oversell LOADTEST=target/release/loadtest TOKEN=bench-redlock
. bench/fleet.sh

echo "### Hold rates of the Redlock chapters"
echo
echo "--repeat $REPEAT each; a defect holds when it shows (overlaps, oversold), a fix when nothing is oversold."
echo
echo "| scenario | expects | masters | outcome held |"
echo "|---|---|---|---|"
fleet_up --lock-store redlock
for id in redlock-minority-down redlock-majority-down; do
    echo "| $id | the fix | 5, persistence none | $(hold_rate "$id") |"
done
for id in redlock-restart-no-fsync redlock-clock-jump redlock-freeze; do
    echo "| $id | the defect | 5, persistence none | $(hold_rate "$id") |"
done
echo "| redlock-validity-runs-out | the check (a late majority given back) | 5, persistence none | $(hold_rate redlock-validity-runs-out) |"
fleet_down
fleet_up --lock-store redlock --lock-persistence always
echo "| redlock-restart-fsync-always | the fix | 5, appendfsync always | $(hold_rate redlock-restart-fsync-always) |"
