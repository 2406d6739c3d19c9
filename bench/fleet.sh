# Sourced by the lock-store benches: starts and stops a fleet of `oversell up` for them, and
# measures a scenario's hold rate. Expects OVERSELL, LOADTEST, TOKEN and REPEAT to be set.
log=$(mktemp)
up=
# fleet_up FLAGS…: starts `oversell up FLAGS` on a free port; sets URL and REDIS_PORT.
fleet_up() {
    "$OVERSELL" up "$@" --port 0 --admin-token "$TOKEN" >"$log" 2>&1 &
    up=$!
    for _ in $(seq 600); do grep -q '^ready:' "$log" && break; sleep 0.1; done
    if ! grep -q '^ready:' "$log"; then
        echo "error: oversell up $* was not ready within 60 s; its last lines:" >&2
        tail -20 "$log" >&2
        exit 1
    fi
    URL=$(grep -o '^ready: .*' "$log" | cut -d' ' -f2)
    REDIS_PORT=$(grep -o '^redis: redis://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$')
}
fleet_down() { kill "$up" 2>/dev/null || true; wait "$up" 2>/dev/null || true; }
trap 'fleet_down; rm -f "$log"' EXIT
# hold_rate ID: "held N/REPEAT", how often the scenario showed its expected outcome.
hold_rate() {
    OVERSELL_ADMIN_TOKEN=$TOKEN "$LOADTEST" scenario "$1" --url "$URL" --instances 3 --repeat "$REPEAT" 2>&1 \
        | grep -o 'held [0-9]*/[0-9]*' | tail -1 || true
}
admin() { curl -sf -X "$1" "$URL$2" -H "Authorization: Bearer $TOKEN" -d "$3" >/dev/null; }
state() { curl -sf "$URL/state"; }

# measure TIER CONNECTIONS: one closed loop of SECONDS_ through the fleet, business 0, a stock
# that never runs out; prints "items/s p50 p99" (items from the ledger, latency from the
# buyers).
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
median() { python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))" $1; }
