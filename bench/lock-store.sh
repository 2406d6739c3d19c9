#!/usr/bin/env bash
# The lock store behind Sentinel, measured on a fleet of its own (`oversell up --lock-store
# sentinel`: 3 instances, nginx, primary + replica + 3 Sentinels, all local processes):
#   1. reentrant-watchdog's selling rate and sale latency with sync_replicas 0 and 1, in one run;
#   2. failover time: primary killed -> first sale on the new primary, under a closed loop of
#      buyers, read from the resource store (the kill's timeline entry, the ledger's enter times);
#   3. lock-loss rate over repeated failovers, without and with sync_replicas (the catalog's
#      failover-loses-lock and failover-sync-replicas scenarios, --repeat N);
#   4. the restart chapter's hold rates, each on a single-Redis lock store fleet of its own
#      (persistence none, then always).
#
#   bench/lock-store.sh [REPEAT=10] [SECONDS=5]
# Needs `cargo build --release` first. Prints markdown for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-10} SECONDS_=${2:-5}
OVERSELL=target/release/oversell LOADTEST=target/release/loadtest TOKEN=bench-failover
. bench/fleet.sh
fleet_up --lock-store sentinel
healthy() {
    for _ in $(seq 300); do
        state | python3 -c "
import json,sys; s=json.load(sys.stdin)['lock_store']; n=s['nodes']
p=[x['addr'] for x in n if x['role']=='primary']
ok=n and all(x['up'] for x in n) and len(p)==1 and all(t['up'] and t['primary']==p[0] for t in s['sentinels'])
sys.exit(0 if ok else 1)" && return 0
        sleep 0.1
    done
    echo "lock store did not recover" >&2; return 1
}

echo "### Sentinel lock store: the price of sync_replicas"
echo
echo "reentrant-watchdog, business 0 ms, closed loop of 64 connections for ${SECONDS_} s through nginx, 3 instances; items from the ledger."
echo
echo "| sync_replicas | items/s | p50 ms | p99 ms | 503s |"
echo "|---|---|---|---|---|"
for sync in 0 1; do
    admin PUT /admin/config "{\"tier\":\"reentrant-watchdog\",\"business_ms\":0,\"ttl_ms\":3000,\"wait\":\"pubsub\",\"wait_deadline_ms\":20000,\"sync_replicas\":$sync}"
    admin POST /admin/reset '{"stock":1000000}'
    sleep 0.2
    out=$("$LOADTEST" run --url "$URL" -c 64 -z "${SECONDS_}s" --quiet --json)
    items=$(state | python3 -c "import json,sys; print(json.load(sys.stdin)['items_sold'])")
    python3 -c "
import json,sys; r=json.loads(sys.argv[1])['stats']; l=r['latency_ms']
print(f\"| {sys.argv[2]} | {int(sys.argv[3])/r['elapsed_s']:.0f} | {l['p50']:.1f} | {l['p99']:.1f} | {r['unavailable']} |\")" "$out" "$sync" "$items"
done
echo

echo "### Failover time under load"
echo
echo "lua-release, business 0 ms, 16 connections; the primary is killed by the \`failover\` fault; time from the kill to the first critical section another buyer entered after it (necessarily on the new primary), from the resource store's lock timeline."
echo
echo "failover (kill → first sale on the new primary), 3 runs: $(failover_times) ms"
echo

echo "### Lock-loss rate over repeated failovers and restarts"
echo
echo "stock 1, 4 buyers, lua-release, business 9 s, lease 20 s, --repeat $REPEAT: a lost lock lets a second buyer in (overlaps, oversold)."
echo
echo "| scenario | lock store | outcome held |"
echo "|---|---|---|"
for id in failover-loses-lock failover-sync-replicas; do
    healthy
    sync=$([ "$id" = failover-sync-replicas ] && echo "sentinel, sync_replicas 1" || echo "sentinel, sync_replicas 0")
    echo "| $id (expects $([ "$id" = failover-loses-lock ] && echo 'the defect' || echo 'the fix')) | $sync | $(hold_rate "$id") |"
done
fleet_down
fleet_up --lock-store single --lock-persistence none
echo "| restart-loses-lock (expects the defect) | single, persistence none | $(hold_rate restart-loses-lock) |"
fleet_down
fleet_up --lock-store single --lock-persistence rdb
echo "| restart-rdb-loses-recent-lock (expects the defect) | single, RDB save 900 1 / 300 10 / 60 10000 | $(hold_rate restart-rdb-loses-recent-lock) |"
fleet_down
fleet_up --lock-store single --lock-persistence always
echo "| restart-aof-keeps-lock (expects the fix) | single, appendfsync always | $(hold_rate restart-aof-keeps-lock) |"
