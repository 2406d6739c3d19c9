#!/usr/bin/env bash
# Where the turn of `fair`'s queue goes, and whether giving the serial path the CPUs first
# shortens its slowest turns: RUNS closed loops of CONNECTIONS buyers through nginx (`oversell
# up --instances 3 --zookeeper`, business 0, a stock that never runs out), each split by
# bench/turn-split.py into the store's answer reaching the instance, the instance's work, the
# write reaching the store and the hand-off, over the median turns and the slowest 1 %, and how
# many of the slowest 1 % end in the run's first 300 ms (the buyers' arrival at once).
#
#   bench/turn-split.sh [SECONDS=5] [CONNECTIONS=64] [RUNS=3]
#
# Environment: TIER (default fair), REALTIME ("redis", "all": Redis alone, or Redis and the
# instances, under SCHED_FIFO priority 1 for the runs, so that nothing else on the machine
# takes a core from them; needs root; unset: as started), OVERSELL, LOADTEST (default the
# release builds). Prints markdown for BENCHMARKS.md. Bounded: the fleet's start, then RUNS x
# (SECONDS + a few).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-5} CONNECTIONS=${2:-64} RUNS=${3:-3}
OVERSELL=${OVERSELL:-target/release/oversell} LOADTEST=${LOADTEST:-target/release/loadtest}
TOKEN=bench-turn-split REPEAT=1 TIER=${TIER:-fair} REALTIME=${REALTIME:-}
case "$REALTIME" in
    "" | redis | all) ;;
    *) echo "error: REALTIME is redis, all or unset, not '$REALTIME'" >&2; exit 2 ;;
esac
if [ -n "$REALTIME" ] && [ "$(id -u)" != 0 ]; then
    echo "error: REALTIME=$REALTIME needs root (chrt -f)" >&2
    exit 2
fi
. bench/fleet.sh

fleet_up --instances 3 --zookeeper
trap 'fleet_down; rm -f "$log"' EXIT
# The fleet's own processes: its Redis, and with REALTIME=all its instances.
if [ -n "$REALTIME" ]; then
    pids=$(pgrep -P "$up" -x redis-server)
    [ "$REALTIME" = all ] && pids="$pids $(pgrep -P "$up" -x oversell | tr '\n' ' ')"
    for pid in $pids; do
        for task in /proc/"$pid"/task/*; do chrt -f -p 1 "${task##*/}"; done
    done
fi

echo "Fleet: \`oversell up --instances 3 --zookeeper\`, tier $TIER, $CONNECTIONS buyers for ${SECONDS_} s per run, business 0, through nginx; real-time: ${REALTIME:-none}. Load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| run | sections | turn p50 / p99 ms (p99/p50) | store → instance µs | instance µs | instance → store µs | hand-off µs | per turn, median → slowest 1 %, ms: store → instance | instance | instance → store | hand-off | slowest 1 % ending in the first 300 ms | turn p99/p50 after it |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for run in $(seq "$RUNS"); do
    admin PUT /admin/config "{\"tier\":\"$TIER\",\"business_ms\":0,\"ttl_ms\":3000,\"wait\":\"pubsub\",\"wait_deadline_ms\":20000}"
    admin POST /admin/reset '{"stock":1000000}'
    python3 bench/fleet-took.py "$URL" "$TIER" pubsub 3
    "$LOADTEST" run --url "$URL" -c "$CONNECTIONS" -z "${SECONDS_}s" --quiet --json >/dev/null
    python3 bench/turn-split.py "$URL" "$TOKEN" "$CONNECTIONS" "$run"
done
