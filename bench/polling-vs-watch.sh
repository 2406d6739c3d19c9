#!/usr/bin/env bash
# 001's first drawback of a Redis lock (lines 489 and 492): a buyer who cannot get it keeps
# trying. Measured on one fleet (`oversell up --lock-store single --zookeeper`: 3 instances,
# nginx, a lock store Redis of its own, one ZooKeeper server), the same closed loop for each way
# of waiting:
#   - lua-release, wait spin:20 (002's while loop with a 20 ms sleep);
#   - lua-release, wait pubsub (the releaser publishes, a waiter sleeps until told);
#   - zookeeper (Curator's recipe: each waiter watches the node just ahead of it).
# Failed attempts and commands are counted by the stores themselves: the lock store's
# `INFO commandstats` (reset before each run; an acquire attempt is one `SET NX PX`, so
# failed = SET calls − sales), ZooKeeper's `mntr` (packets received). The idle traffic of the
# fleet (dashboard pollers reading the lock) is measured for as long and taken off.
#
#   bench/polling-vs-watch.sh [SECONDS=5] [CONNECTIONS=64] [BUSINESS_MS=5]
# Needs `cargo build --release` first (or OVERSELL / LOADTEST set). Prints markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-5} CONNS=${2:-64} BUSINESS=${3:-5}
OVERSELL=${OVERSELL:-target/release/oversell} LOADTEST=${LOADTEST:-target/release/loadtest}
TOKEN=bench-waiting REPEAT=1
. bench/fleet.sh
fleet_up --lock-store single --zookeeper
read -r LOCK_PORT ZK_HOST ZK_PORT < <(state | python3 -c "
import json,sys; s=json.load(sys.stdin)['lock_store']
zk=s['zookeeper']['servers'][0]['addr'].rsplit(':',1)
print(s['nodes'][0]['addr'].rsplit(':',1)[1], zk[0], zk[1])")

# Commands the lock store ran since the last reset: "<SET calls> <all calls>" (INFO and
# CONFIG, the bench's own, left out).
redis_calls() {
    redis-cli -p "$LOCK_PORT" INFO commandstats | python3 -c "
import re,sys
calls={m[0]:int(m[1]) for m in re.findall(r'cmdstat_([a-z|]+):calls=(\d+)', sys.stdin.read())}
print(calls.get('set',0), sum(v for k,v in calls.items() if k not in ('info','config|resetstat','config')))"
}
zk_packets() {
    exec 3<>"/dev/tcp/$ZK_HOST/$ZK_PORT"
    printf mntr >&3
    grep -o 'zk_packets_received[[:space:]]*[0-9]*' <&3 | grep -o '[0-9]*$'
    exec 3<&-
}

# Idle traffic: what the fleet sends the lock store and ZooKeeper with nobody buying.
redis-cli -p "$LOCK_PORT" CONFIG RESETSTAT >/dev/null
zk0=$(zk_packets)
sleep "$SECONDS_"
read -r _ idle_redis < <(redis_calls)
idle_zk=$(( $(zk_packets) - zk0 - 1 ))

echo "### Polling, pub/sub or a watch: what waiting costs"
echo
echo "\`bash bench/polling-vs-watch.sh $SECONDS_ $CONNS $BUSINESS\`: business ${BUSINESS} ms, a closed loop of $CONNS connections for ${SECONDS_} s through nginx, 3 instances; sales from the ledger; idle traffic ($idle_redis Redis commands, $idle_zk ZooKeeper packets in ${SECONDS_} s) taken off."
echo
echo "| way of waiting | sales/s | failed acquire attempts per sale | lock-store requests per sale | sale p50 / p99 ms |"
echo "|---|---|---|---|---|"
for case in "lua-release spin:20" "lua-release pubsub" "zookeeper pubsub"; do
    read -r tier wait <<<"$case"
    admin PUT /admin/config "{\"tier\":\"$tier\",\"business_ms\":$BUSINESS,\"ttl_ms\":3000,\"wait\":\"$wait\",\"wait_deadline_ms\":20000}"
    admin POST /admin/reset '{"stock":1000000}'
    sleep 0.5
    redis-cli -p "$LOCK_PORT" CONFIG RESETSTAT >/dev/null
    zk0=$(zk_packets)
    out=$("$LOADTEST" run --url "$URL" -c "$CONNS" -z "${SECONDS_}s" --quiet --json --no-hand-off)
    read -r sets all < <(redis_calls)
    zk=$(( $(zk_packets) - zk0 - 1 ))
    items=$(state | python3 -c "import json,sys; print(json.load(sys.stdin)['items_sold'])")
    python3 -c "
import json,sys
r=json.loads(sys.argv[1])['stats']; l=r['latency_ms']
tier,wait,items,sets,calls,zk,idle_r,idle_z=sys.argv[2],sys.argv[3],*map(int,sys.argv[4:])
if tier=='zookeeper':
    name='ZooKeeper watch (zookeeper)'; failed='0 (woken once, by its predecessor)'
    per=f'{(zk-idle_z)/items:.1f} ZooKeeper packets'
else:
    name=f'{wait} ({tier})'; failed=f'{(sets-items)/items:.1f}'
    per=f'{(calls-idle_r)/items:.1f} Redis commands'
print(f\"| {name} | {items/r['elapsed_s']:.0f} | {failed} | {per} | {l['p50']:.1f} / {l['p99']:.1f} |\")
" "$out" "$tier" "$wait" "$items" "$sets" "$all" "$zk" "$idle_redis" "$idle_zk"
done
