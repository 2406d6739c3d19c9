#!/usr/bin/env bash
# Threads per instance: a thread per core each against `oversell up`'s default (each instance
# its share of the cores), in one run. Two fleets of `oversell up --instances 3` stand side by
# side (the idle one costs next to nothing); per tier, each runs a closed loop of CONNECTIONS
# buyers for SECONDS through its nginx, business 0 ms and a stock that never runs out, in the
# order A B B A, so the machine's drift falls on both sides alike. Prints markdown: items/s
# (the mean of a side's two runs), the share's rate over a thread per core's, and each side's
# sale p99/p50 (the worse of its two runs).
#
#   bench/worker-threads.sh [SECONDS=4] [CONNECTIONS=64]
#
# Environment: TIERS (default: none lua-release reentrant-watchdog fair atomic-deduct), FLEET
# (more `oversell up` flags, default --zookeeper), OVERSELL, LOADTEST (default: the release
# builds). Bounded: two fleet starts, then tiers x 4 x SECONDS plus a few seconds each.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-4} CONNECTIONS=${2:-64}
OVERSELL=${OVERSELL:-target/release/oversell} LOADTEST=${LOADTEST:-target/release/loadtest}
TIERS=${TIERS:-none lua-release reentrant-watchdog fair atomic-deduct}
FLEET=${FLEET---zookeeper}
CORES=$(nproc)
TOKEN=bench-worker-threads
WORK=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

# up NAME FLAGS…: a fleet whose nginx URL is written to $WORK/NAME.url.
up() {
    local name=$1 log=$WORK/$1.log
    shift
    # shellcheck disable=SC2086 # FLEET is a list of flags
    "$OVERSELL" up --instances 3 --port 0 --admin-token "$TOKEN" $FLEET "$@" >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 600); do grep -q '^ready:' "$log" && break; sleep 0.1; done
    grep -q '^ready:' "$log" || { echo "error: fleet $name not ready in 60 s:" >&2; tail -20 "$log" >&2; exit 1; }
    grep -o '^ready: .*' "$log" | cut -d' ' -f2 >"$WORK/$name.url"
}
up per-core --worker-threads "$CORES"
up share

# run NAME TIER: one closed loop on fleet NAME; prints "items/s p50 p99".
run() {
    local url
    url=$(cat "$WORK/$1.url")
    curl -sf -X PUT "$url/admin/config" -H "Authorization: Bearer $TOKEN" \
        -d "{\"tier\":\"$2\",\"business_ms\":0,\"ttl_ms\":3000,\"wait\":\"pubsub\",\"wait_deadline_ms\":20000}" >/dev/null
    curl -sf -X POST "$url/admin/reset" -H "Authorization: Bearer $TOKEN" -d '{"stock":1000000}' >/dev/null
    python3 bench/fleet-took.py "$url" "$2"
    "$LOADTEST" run --url "$url" -c "$CONNECTIONS" -z "${SECONDS_}s" --quiet --json | python3 -c "
import json,sys; r=json.load(sys.stdin)['stats']; l=r['latency_ms']
print(r['ok']/r['elapsed_s'], l['p50'], l['p99'])"
}

echo "Two fleets of \`oversell up --instances 3 $FLEET\` on $CORES cores: one with \`--worker-threads $CORES\` (a thread per core each), one with the default (each instance its share: $(( (CORES + 2) / 3 )) thread(s)). $CONNECTIONS connections, ${SECONDS_} s per run, business 0 ms, runs in the order A B B A per tier. Load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| tier | a thread per core: items/s | its share: items/s | **share / per core** | per core: sale p99/p50 | share: sale p99/p50 |"
echo "|---|---|---|---|---|---|"
for tier in $TIERS; do
    a1=$(run per-core "$tier") b1=$(run share "$tier") b2=$(run share "$tier") a2=$(run per-core "$tier")
    python3 - "$tier" "$a1" "$a2" "$b1" "$b2" <<'EOF'
import sys
tier, *runs = sys.argv[1:]
a1, a2, b1, b2 = ([float(x) for x in r.split()] for r in runs)
rate = lambda *rs: sum(r[0] for r in rs) / len(rs)
tail = lambda *rs: max(r[2] / r[1] for r in rs)
a, b = rate(a1, a2), rate(b1, b2)
print(f"| {tier} | {a:,.0f} | {b:,.0f} | **{b / a:.2f}×** | {tail(a1, a2):.2f} | {tail(b1, b2):.2f} |")
EOF
done
