#!/usr/bin/env bash
# Network partitions, measured (needs root: `--network netns`):
#   1. the hold rate of every partition chapter over REPEAT runs, each store's chapters on a
#      netns fleet of its own (`oversell up --network netns --lock-store …`);
#   2. what the namespaces cost: lua-release's selling rate (business 0, a closed loop of 64
#      connections for SECONDS through nginx) on a plain fleet and on a netns fleet, ROUNDS
#      times each, alternating, in one run; items from the ledger.
#
#   sudo bench/partitions.sh [REPEAT=20] [SECONDS=5] [ROUNDS=3]
#   sudo ONLY="redlock-holder-cut-off zookeeper-server-cut-off" bench/partitions.sh 20   # some
# Needs `cargo build --release` first. Prints markdown for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-20} SECONDS_=${2:-5} ROUNDS=${3:-3}
[ "$(id -u)" = 0 ] || { echo "error: bench/partitions.sh needs root (network namespaces): sudo $0" >&2; exit 2; }
OVERSELL=target/release/oversell LOADTEST=target/release/loadtest TOKEN=bench-partitions
. bench/fleet.sh

echo "### Partition chapters: how often each holds"
echo
echo "Each chapter $REPEAT times on a netns fleet (3 instances), \`loadtest scenario ID --repeat $REPEAT\`."
echo
echo "| chapter | fleet | held |"
echo "|---|---|---|"
# ONLY="id …": just those chapters (and no cost table).
chapters() {
    local flags=$1; shift
    if [ -n "${ONLY:-}" ]; then
        local wanted=() id
        for id in "$@"; do [[ " $ONLY " == *" $id "* ]] && wanted+=("$id"); done
        [ ${#wanted[@]} -gt 0 ] || return 0
        set -- "${wanted[@]}"
    fi
    fleet_up --network netns $flags
    for id in "$@"; do
        echo "| \`$id\` | \`--network netns $flags\` | $(hold_rate "$id") |"
    done
    fleet_down
}
chapters "--lock-store sentinel" sentinel-split-brain sentinel-min-replicas
chapters "--lock-store redlock" redlock-minority-partition redlock-majority-partition redlock-holder-cut-off
chapters "--lock-store single" watchdog-holder-cut-off fenced-holder-cut-off
chapters "--zookeeper" zookeeper-client-partitioned zookeeper-fenced-partitioned
chapters "--zookeeper-nodes 3" zookeeper-server-cut-off

[ -z "${ONLY:-}" ] || exit 0
echo
echo "### What the namespaces cost"
echo
echo "lua-release, business 0 ms, closed loop of 64 connections for ${SECONDS_} s through nginx, 3 instances, lock store single; $ROUNDS rounds, plain and netns alternating; items/s from the ledger."
echo
echo "| round | plain items/s | netns items/s | netns / plain |"
echo "|---|---|---|---|"
plain_all=() netns_all=()
for round in $(seq "$ROUNDS"); do
    fleet_up --lock-store single
    plain=$(measure lua-release 64 | cut -d' ' -f1)
    fleet_down
    fleet_up --lock-store single --network netns
    netns=$(measure lua-release 64 | cut -d' ' -f1)
    fleet_down
    plain_all+=("$plain") netns_all+=("$netns")
    echo "| $round | $plain | $netns | $(python3 -c "print(f'{$netns/$plain:.3f}')") |"
done
p=$(median "${plain_all[*]}") n=$(median "${netns_all[*]}")
echo "| median | $p | $n | $(python3 -c "print(f'{$n/$p:.3f}')") |"
