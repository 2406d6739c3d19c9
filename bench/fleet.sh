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
    # None with `--resource-store cluster`: the stock is on the cluster's nodes.
    REDIS_PORT=$(grep -o '^redis: redis://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
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

# measure TIER CONNECTIONS [SETTINGS]: one closed loop of SECONDS_ through the fleet, business 0,
# a stock that never runs out, with SETTINGS (`,"sync_replicas":1`) added to the room's; prints
# "items/s p50 p99" (items from the ledger, latency from the buyers).
measure() {
    local tier=$1 connections=$2 more=${3:-}
    admin PUT /admin/config "{\"tier\":\"$tier\",\"business_ms\":0,\"ttl_ms\":3000,\"wait\":\"pubsub\",\"wait_deadline_ms\":20000$more}"
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

# failover_ms: after a `failover` fault was armed under load, the time from the kill to the
# first critical section another buyer entered after it (necessarily on the promoted node),
# read from the room's lock timeline in the resource store; "?" if none within 20 s.
failover_ms() {
    # The timeline is a capped stream: read the kill and the first entry after it while they
    # are still there.
    python3 - "$REDIS_PORT" <<'PY'
import subprocess, sys, time
port, key = sys.argv[1], 'oversell:{default}:timeline'
def entries(*args):
    out = subprocess.run(['redis-cli', '-p', port, *args], capture_output=True, text=True).stdout.split('\n')
    found, i = [], 0
    while i < len(out):
        line = out[i].strip()
        if line and '-' in line and line.replace('-', '').isdigit():
            fields, i = {'id': line}, i + 1
            while i + 1 < len(out) and not (out[i].strip().replace('-', '').isdigit() and '-' in out[i]):
                fields[out[i].strip()] = out[i + 1].strip(); i += 2
            found.append(fields)
        else:
            i += 1
    return found
kill = None
deadline = time.time() + 20
while time.time() < deadline:
    if kill is None:
        kill = next((e for e in entries('XREVRANGE', key, '+', '-', 'COUNT', '3000') if e.get('kind') == 'store_fault'), None)
    if kill is not None:
        after = [e for e in entries('XRANGE', key, kill['id'], '+', 'COUNT', '500') if e.get('kind') == 'enter' and e.get('owner') != kill.get('owner')]
        if after:
            print(f"{(int(after[0]['at_us']) - int(kill['at_us'])) / 1000:.0f}")
            sys.exit(0)
    time.sleep(0.05)
print('?')
PY
}

# failover_times: three failovers under a closed loop of 16 buyers (lua-release, business 0),
# each once the caller's `healthy` says the last one is over; prints their failover_ms.
failover_times() {
    local times=() loader
    for _ in $(seq 3); do
        healthy
        admin PUT /admin/config '{"tier":"lua-release","business_ms":0,"ttl_ms":3000,"wait":"pubsub","wait_deadline_ms":10000,"sync_replicas":0}'
        admin POST /admin/reset '{"stock":1000000}'
        "$LOADTEST" run --url "$URL" -c 16 -z 8s --quiet --json >/dev/null &
        loader=$!
        sleep 1
        admin POST /admin/faults '{"kind":"failover"}'
        times+=("$(failover_ms)")
        wait $loader
    done
    echo "${times[*]}"
}
