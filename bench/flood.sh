#!/usr/bin/env bash
# A flood from one address beside the demo, in one run: a student's `wrk -c 300` from
# 127.0.0.2 (its sockets bound there by bench/bind-source.c) selling in room `flood`, against
# the instructor's demo from 127.0.0.1 (`loadtest run`, closed loop) in room `demo`, on
# `oversell up --instances 3` with the default per-client limits. Phases of SECONDS_ each, in
# the order alone, flood, flood, alone, ROUNDS times: the first pair is demo-first (the demo
# measured alone, then with the flood started a second before), the second flood-first. Prints
# each phase, each order's ratio and the whole run's (median with the flood / median alone).
#
#   bash bench/flood.sh                     # about 2 minutes on 2 cores
#   DEMO_CONNECTIONS=32 BUSINESS_MS=0 bash bench/flood.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${SECONDS_:-8} ROUNDS=${ROUNDS:-2} FLOOD=${FLOOD:-300}
DEMO_CONNECTIONS=${DEMO_CONNECTIONS:-16} BUSINESS_MS=${BUSINESS_MS:-2} TIER=${TIER:-lua-release}
command -v wrk >/dev/null || { echo "wrk not found: apt-get install -y wrk" >&2; exit 1; }
if [ -z "${OVERSELL:-}" ]; then
    cargo build --release --quiet --bins -p oversell -p workshop
fi
OVERSELL=${OVERSELL:-target/release/oversell} LOADTEST=${LOADTEST:-target/release/loadtest}
work=$(mktemp -d)
cc -shared -fPIC -o "$work/bind-source.so" bench/bind-source.c -ldl
cat >"$work/flood.lua" <<'LUA'
wrk.method = "POST"
wrk.path = "/sale?room=flood"
wrk.body = '{"buyer":"flood","qty":1}'
wrk.headers["Content-Type"] = "application/json"
done = function(summary)
  io.write(string.format("FLOOD %d %d\n", summary.requests, summary.errors.status))
end
LUA
TOKEN=$(python3 -c 'import uuid; print(uuid.uuid4().hex)') REPEAT=1
# shellcheck source=fleet.sh
source bench/fleet.sh
trap 'fleet_down; rm -f "$log"; rm -rf "$work"' EXIT
RUST_LOG=oversell=error fleet_up --instances 3
room() { curl -sf -X "$1" "$URL$2" -H "Authorization: Bearer $TOKEN" -d "$3" >/dev/null; }
room PUT "/admin/config?room=demo" "{\"tier\":\"$TIER\",\"business_ms\":$BUSINESS_MS}"
room POST "/admin/reset?room=demo" '{"stock":1000000}'
room POST "/admin/reset?room=flood" '{"stock":1000000}'
echo "# flood ($(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores): wrk -c $FLOOD from 127.0.0.2; demo $DEMO_CONNECTIONS connections, $TIER, business $BUSINESS_MS ms; ${SECONDS_} s phases"

# demo: one closed-loop phase from 127.0.0.1; prints its sales/s.
demo() {
    "$LOADTEST" run --url "$URL" --room demo -c "$DEMO_CONNECTIONS" -z "${SECONDS_}s" --quiet --json \
        | python3 -c "import json,sys; s=json.load(sys.stdin)['stats']; print(f\"{s['statuses'].get('200',0)/s['elapsed_s']:.1f}\")"
}
# flooded: the demo with wrk flooding from a second before it to a second after.
flooded() {
    BIND_SOURCE=127.0.0.2 LD_PRELOAD="$work/bind-source.so" \
        wrk -t2 -c"$FLOOD" -d"$((SECONDS_ + 2))s" -s "$work/flood.lua" "$URL" >"$work/wrk.txt" 2>&1 &
    local wrk_pid=$!
    sleep 1
    demo
    wait "$wrk_pid"
    grep '^FLOOD' "$work/wrk.txt" >&2 || { cat "$work/wrk.txt" >&2; }
}
alone=() with=()
for round in $(seq "$ROUNDS"); do
    a1=$(demo); f1=$(flooded 2>"$work/f1"); f2=$(flooded 2>"$work/f2"); a2=$(demo)
    alone+=("$a1" "$a2") with+=("$f1" "$f2")
    echo "round $round: alone $a1, flood $f1 ($(cat "$work/f1")), flood $f2 ($(cat "$work/f2")), alone $a2 sales/s"
    python3 -c "import sys; a1,f1,f2,a2=map(float,sys.argv[1:]); print(f'  demo-first {f1/a1:.3f}x, flood-first {f2/a2:.3f}x')" "$a1" "$f1" "$f2" "$a2"
done
python3 -c "
import statistics, sys
n = len(sys.argv) // 2
alone, flooded = list(map(float, sys.argv[1:n+1])), list(map(float, sys.argv[n+1:]))
print(f'demo with the flood / alone: {statistics.median(flooded):.0f} / {statistics.median(alone):.0f} = {statistics.median(flooded)/statistics.median(alone):.3f}x (median of {n} phases each)')
" "${alone[@]}" "${with[@]}"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
