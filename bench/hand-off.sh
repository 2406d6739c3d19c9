#!/usr/bin/env bash
# How fast each tier hands its lock over, and how evenly its buyers get it: every tier on ONE
# fleet, in one run. Per tier a closed loop of CONNECTIONS buyers through nginx (`oversell up
# --instances 3`), business step 0 ms and a stock that never runs out, so what is measured is
# the lock itself:
#   - `loadtest run`: the hand-off (Redis' clock, from one sold section's write to the next
#     one's read, every sale of the run read back from the ledger), the time inside a section,
#     the sale's latency as the buyers saw it, and the acquires per client (min, max, Jain's
#     index) and per instance; one chart per tier into CHARTS;
#   - the turn: the time as many sections in a row as there were buyers took (from the ledger);
#     a lock that serves in order makes every buyer wait about one turn, so the turn's p99/p50
#     is the floor of its sale p99/p50, set by the pace of the serial path, not by the lock;
#   - then `wrk -t1` (bench/wrk-sale.lua), when installed, on the same tier after a reset, and
#     `loadtest hand-off` reading the ledger it left: the same hand-off under another
#     generator (wrk reports no per-connection counts, so no acquires per client).
#
#   bench/hand-off.sh [SECONDS=5] [CONNECTIONS=64]
#
# Environment: FLEET, the `oversell up` flags (unset: `--lock-store redlock --zookeeper`, the
# only fleet every tier runs on; the Redis tiers then keep their lock on Redlock master 1, a
# store apart from the stock, so no lock step rides with the sale's read or write; FLEET=
# --zookeeper keeps the lock in the stock's Redis, as a workshop fleet does, and skips
# redlock), INSTANCES (default 3: the same buyers through one instance tell the instance's own
# waiting from the race in the store), TIERS (default every built-in tier; `tier@wait` for
# another way of waiting, e.g.
# lua-release@cohort:32), TOOLS ("loadtest wrk"), CHARTS (default bench/hand-off), OVERSELL,
# LOADTEST (default the release builds: `cargo build --release` first).
# Prints markdown for BENCHMARKS.md. Bounded: the fleet's start, then tiers x tools x SECONDS
# plus a few seconds each.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-5} CONNECTIONS=${2:-64}
OVERSELL=${OVERSELL:-target/release/oversell} LOADTEST=${LOADTEST:-target/release/loadtest}
TOKEN=bench-hand-off REPEAT=1
FLEET=${FLEET---lock-store redlock --zookeeper}
TIERS=${TIERS:-none local setnx setnx-expire atomic-expiry uuid-owner lua-release reentrant-watchdog fair fenced redlock zookeeper zookeeper-fenced atomic-deduct}
INSTANCES=${INSTANCES:-3}
TOOLS=${TOOLS:-loadtest wrk}
CHARTS=${CHARTS:-bench/hand-off}
. bench/fleet.sh

# Before anything runs: how steady the cores themselves are (the pace every figure rides on).
STEADINESS=$(python3 bench/steadiness.py 3)
# shellcheck disable=SC2086 # FLEET is a list of flags
fleet_up --instances "$INSTANCES" $FLEET
mkdir -p "$CHARTS"
WORK=$(mktemp -d)
trap 'fleet_down; rm -rf "$WORK" "$log"' EXIT
store=$(state | python3 -c "import json,sys; s=json.load(sys.stdin)['lock_store']; print(s['kind'], 'zookeeper' if s.get('zookeeper') else '')")

# ready TIER WAIT: until nginx has shown every instance with the tier and the wait.
ready() { python3 bench/fleet-took.py "$URL" "$1" "$2" "$INSTANCES"; }

# configure TIER WAIT: switch, reset to a stock that never runs out, wait for the fleet.
configure() {
    admin PUT /admin/config "{\"tier\":\"$1\",\"business_ms\":0,\"ttl_ms\":3000,\"wait\":\"$2\",\"wait_deadline_ms\":20000}"
    admin POST /admin/reset '{"stock":1000000}'
    ready "$1" "$2"
}

echo "Fleet: \`oversell up --instances $INSTANCES $FLEET\` (lock store: $store); $CONNECTIONS connections for ${SECONDS_} s per tier and tool, business 0 ms, lease 3000 ms, through nginx. Load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "$STEADINESS"
echo
echo "| tier | wait | items/s | hand-offs | hand-off p50 / p99 / p99.9 / max ms | inside p50 / p99 ms | sale p50 / p99 / p99.9 ms (p99/p50) | turn p50 / p99 ms (p99/p50) | acquires per client min / max (min/max) | Jain | per instance % | wrk: items/s | wrk: sale p99 ms | wrk: hand-off p50 / p99 / p99.9 ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for row in $TIERS; do
    tier=${row%%@*} wait=pubsub
    [ "$row" != "$tier" ] && wait=${row#*@}
    if [ "$tier" = redlock ] && [[ "$store" != redlock* ]]; then
        echo "skipped redlock: needs a fleet started with \`oversell up --lock-store redlock\`" >&2
        continue
    fi
    if [[ "$tier" = zookeeper* ]] && [[ "$store" != *zookeeper ]]; then
        echo "skipped $tier: needs a fleet started with \`oversell up --zookeeper\`" >&2
        continue
    fi
    configure "$tier" "$wait"
    "$LOADTEST" run --url "$URL" -c "$CONNECTIONS" -z "${SECONDS_}s" --quiet --json --charts "$CHARTS" \
        >"$WORK/loadtest.json"
    wrk_cells="- | - | -"
    if [[ " $TOOLS " == *" wrk "* ]] && command -v wrk >/dev/null; then
        configure "$tier" "$wait"
        wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_}s" -s bench/wrk-sale.lua "$URL" >"$WORK/wrk.txt"
        "$LOADTEST" hand-off --url "$URL" --buyers "$CONNECTIONS" --json >"$WORK/ledger.json"
        wrk_cells=$(python3 - "$WORK/ledger.json" "$WORK/wrk.txt" "$SECONDS_" <<'EOF'
import json, sys
h = json.load(open(sys.argv[1]))["hand_off"]
wrk = next(l.split() for l in open(sys.argv[2]) if l.startswith("WRK "))
ms = h.get("ms")
spread = f"{ms['p50']} / {ms['p99']} / {ms['p99.9']}" if ms else f"overlap ({h['overlapping']:,} of {h['sections']:,})"
print(f"{h['sold'] / float(sys.argv[3]):,.0f} | {float(wrk[5]):.1f} | {spread}")
EOF
)
    fi
    python3 - "$WORK/loadtest.json" "$tier" "$wait" "$wrk_cells" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
tier, wait, wrk = sys.argv[2:]
s, h, f = r["stats"], r["hand_off"], r["fairness"]
lat = s["latency_ms"]
if h is None:
    sys.exit(f"{tier}: hand-off not measured: {r.get('hand_off_unmeasured')}")
ms, inside = h.get("ms"), h.get("inside_ms")
if ms:
    hand_offs = f"{h['hand_offs']:,}"
    spread = f"{ms['p50']} / **{ms['p99']}** / {ms['p99.9']} / {ms['max']}"
else:
    hand_offs = "overlap"
    spread = f"— ({h['overlapping']:,} of {h['sections']:,} sections began inside another)"
inside = f"{inside['p50']} / {inside['p99']}" if inside else "-"
total = sum(f.get("per_instance", {}).values()) or 1
shares = "/".join(f"{100 * n / total:.0f}" for n in f.get("per_instance", {}).values()) or "-"
ratio = f"{f['min_over_max']:.2f}" if f["min_over_max"] is not None else "-"
jain = f"{f['jain']:.3f}" if f["jain"] is not None else "-"
items = h["sold"] / s["elapsed_s"]
turn = h.get("turn")
turn = f"{turn['ms']['p50']} / {turn['ms']['p99']} ({turn['ms']['p99'] / turn['ms']['p50']:.2f})" if turn and turn["ms"]["p50"] else "-"
tail = f"{lat['p99'] / lat['p50']:.2f}" if lat["p50"] else "-"
print(f"| {tier} | {wait} | {items:,.0f} | {hand_offs} | {spread} | {inside} | "
      f"{lat['p50']} / {lat['p99']} / {lat['p99.9']} ({tail}) | {turn} | {f['min']} / {f['max']} ({ratio}) | {jain} | {shares} | {wrk} |")
EOF
done
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg). Charts: \`$CHARTS/<tier>-<wait>.svg\`."
