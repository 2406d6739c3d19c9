#!/usr/bin/env bash
# The lock store as a Redis Cluster (`oversell up --lock-store cluster`: three masters with a
# replica each, all local processes) against one Redis of its own (`--lock-store single`), in
# one run of this script:
#   1. the selling rate and sale latency of lua-release and reentrant-watchdog on each (a
#      room's lock lives on one shard: the cluster adds a routing step, not capacity, for one
#      room), and reentrant-watchdog with sync_replicas 1 on the cluster (WAIT to the shard's
#      replica);
#   2. one shard's failover time under load: its master killed by the `failover` fault, to the
#      first sale on the promoted replica, from the resource store's lock timeline;
#   3. the cluster chapters' hold rates (--repeat N);
#   4. (part `rooms`) the stock itself on the cluster (`oversell up --resource-store cluster`)
#      against one Redis: sales/s of 200 rooms at once, each its own stock, one closed-loop
#      connection per room (`loadtest run --rooms 200`), in the same run.
#
#   bench/cluster.sh [REPEAT=10] [SECONDS=5]
# PARTS (default "speed failover holds rooms") picks the parts. Needs `cargo build --release` first. Prints markdown for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-10} SECONDS_=${2:-5}
# Binaries from `cargo build --release` (in CARGO_TARGET_DIR when set).
BIN=${CARGO_TARGET_DIR:-target}/release
OVERSELL=$BIN/oversell LOADTEST=$BIN/loadtest TOKEN=bench-cluster
PARTS=${PARTS:-speed failover holds rooms}
ROOMS=${ROOMS:-200}
. bench/fleet.sh
part() { [[ " $PARTS " == *" $1 "* ]]; }

# rooms_rate TIER: stocks rooms bench-001… (a stock that never runs out), runs one closed loop
# of SECONDS_ with one connection per room, and prints "items/s p50 p99" (items from every
# room's ledger, latency from the buyers).
rooms_rate() {
    local tier=$1 out
    for i in $(seq -f '%03g' 1 "$ROOMS"); do echo "bench-$i"; done | xargs -P 8 -I{} sh -c '
        curl -sf -X PUT "$0/admin/config?room={}" -H "Authorization: Bearer $1" \
            -d "{\"tier\":\"$2\",\"business_ms\":0,\"wait\":\"pubsub\",\"wait_deadline_ms\":20000}" >/dev/null &&
        curl -sf -X POST "$0/admin/reset?room={}" -H "Authorization: Bearer $1" -d "{\"stock\":1000000}" >/dev/null' \
        "$URL" "$TOKEN" "$tier"
    out=$("$LOADTEST" run --url "$URL" --room bench --rooms "$ROOMS" -c "$ROOMS" -z "${SECONDS_}s" --quiet --json)
    python3 - "$out" "$URL" "$ROOMS" <<'PY'
import json, sys, urllib.request
run, url, rooms = json.loads(sys.argv[1])['stats'], sys.argv[2], int(sys.argv[3])
items = sum(json.load(urllib.request.urlopen(f"{url}/state?room=bench-{i:03d}"))['items_sold']
            for i in range(1, rooms + 1))
l = run['latency_ms']
print(f"{items / run['elapsed_s']:.0f} {l['p50']:.2f} {l['p99']:.2f}")
PY
}

if part rooms; then
echo "### The stock on a Redis Cluster: $ROOMS rooms against one Redis"
echo
echo "$ROOMS rooms bench-001…, each its own stock; one closed-loop connection per room (\`loadtest run --rooms $ROOMS -c $ROOMS\`) for ${SECONDS_} s through nginx, 3 instances, business 0 ms, locks shared (on the same store); items summed from every room's ledger. Load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| resource store | tier | items/s | p50 ms | p99 ms |"
echo "|---|---|---|---|---|"
declare -A rate
for store in single cluster; do
    fleet_up --resource-store "$store"
    for tier in lua-release atomic-deduct; do
        read -r r p50 p99 <<<"$(rooms_rate "$tier")"
        rate[$store-$tier]=$r
        echo "| $store | $tier | $r | $p50 | $p99 |"
    done
    fleet_down
    up=
done
echo
for tier in lua-release atomic-deduct; do
    echo "$tier: cluster / one Redis = $(python3 -c "import sys; print(f'{int(sys.argv[1]) / max(1, int(sys.argv[2])):.2f}')" "${rate[cluster-$tier]}" "${rate[single-$tier]}")"
done
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
fi

if part speed; then
echo "### One room's lock on a Redis Cluster against one Redis"
echo
echo "business 0 ms, closed loop of 64 connections for ${SECONDS_} s through nginx, 3 instances; items from the ledger."
echo
echo "| lock store | tier | items/s | p50 ms | p99 ms |"
echo "|---|---|---|---|---|"
for store in single cluster; do
    fleet_up --lock-store "$store"
    for tier in lua-release reentrant-watchdog; do
        read -r rate p50 p99 <<<"$(measure "$tier" 64)"
        echo "| $store | $tier | $rate | $p50 | $p99 |"
    done
    [ "$store" = cluster ] || fleet_down
done
read -r rate p50 p99 <<<"$(measure reentrant-watchdog 64 ',"sync_replicas":1')"
echo "| cluster, sync_replicas 1 | reentrant-watchdog | $rate | $p50 | $p99 |"
echo
fi
part failover || part holds || exit 0
[ -n "$up" ] || fleet_up --lock-store cluster

# Every node up, half of them masters: the last failover is over.
healthy() {
    for _ in $(seq 300); do
        state | python3 -c "
import json,sys; n=json.load(sys.stdin)['lock_store']['nodes']
sys.exit(0 if n and all(x['up'] for x in n) and 2*sum(x['role']=='primary' for x in n)==len(n) else 1)" && return 0
        sleep 0.1
    done
    echo "the cluster did not recover" >&2; return 1
}

if part failover; then
echo "### One shard's failover under load"
echo
echo "lua-release, business 0 ms, 16 connections; the master owning the room's slot is killed by the \`failover\` fault (kept down 5 s); time from the kill to the first critical section another buyer entered after it (on the promoted replica), from the resource store's lock timeline."
echo
echo "failover (kill → first sale on the promoted replica), 3 runs: $(failover_times) ms"
echo
fi

part holds || exit 0
echo "### The cluster chapters' hold rates"
echo
echo "| scenario | outcome held |"
echo "|---|---|"
for id in cluster-failover-loses-lock cluster-failover-sync-replicas; do
    healthy
    echo "| $id | $(hold_rate "$id") |"
done
