# Sourced by the lock-store benches: starts and stops a fleet of `oversell up` for them, and
# measures a scenario's hold rate. Expects OVERSELL, LOADTEST, TOKEN and REPEAT to be set.
log=$(mktemp)
up=
# fleet_up FLAGS…: starts `oversell up FLAGS` on a free port; sets URL and REDIS_PORT.
fleet_up() {
    "$OVERSELL" up "$@" --port 0 --admin-token "$TOKEN" >"$log" 2>&1 &
    up=$!
    for _ in $(seq 300); do grep -q '^ready:' "$log" && break; sleep 0.1; done
    URL=$(grep -o '^ready: .*' "$log" | cut -d' ' -f2)
    REDIS_PORT=$(grep -o '^redis: redis://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$')
}
fleet_down() { kill "$up" 2>/dev/null; wait "$up" 2>/dev/null || true; }
trap 'fleet_down; rm -f "$log"' EXIT
# hold_rate ID: "held N/REPEAT", how often the scenario showed its expected outcome.
hold_rate() {
    OVERSELL_ADMIN_TOKEN=$TOKEN "$LOADTEST" scenario "$1" --url "$URL" --instances 3 --repeat "$REPEAT" 2>&1 \
        | grep -o 'held [0-9]*/[0-9]*' | tail -1 || true
}
admin() { curl -sf -X "$1" "$URL$2" -H "Authorization: Bearer $TOKEN" -d "$3" >/dev/null; }
state() { curl -sf "$URL/state"; }
