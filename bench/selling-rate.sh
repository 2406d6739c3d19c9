#!/usr/bin/env bash
# The sustained selling rate of each tier, in one run: a closed loop of buyers against a stock
# too large to run out, through the fleet's URL, driven by the project's generator
# (`loadtest run`) and by wrk when it is installed, each in turn on every row. Items sold per
# second are counted from the ledger (Redis), not from the answers; the latencies are what the
# tool saw; the ground truth (oversold, lost updates, overlaps, foreign releases) and the
# fairness across instances (sales per instance, the longest run of one instance) are read
# after each run. Last, the serial floor: one client doing the lock chain's round trips back
# to back against the same Redis (bench/src/bin/serial-floor.rs), the physical limit a locked
# tier is measured against.
#
#   bench/selling-rate.sh URL TOKEN [BUSINESS_MS] [CONNECTIONS] [SECONDS]
#
# A row is `tier` (waiting `pubsub`) or `tier@wait` (e.g. lua-release@cohort:32,
# lua-release@spin:20). `none` runs first and again last: the machine drifts during a run, and
# the ratios are taken to the mean of the two. Environment: ROWS (the rows), TOOLS ("loadtest wrk"), LOADTEST,
# SERIAL_FLOOR (the binaries), REDIS_URL (the resource store; read from GET /state when the
# lock store is shared and REDIS_URL is unset; empty: out of reach, as on compose, so no
# fairness and no floor), FLOOR_SECONDS (2), WARMUP (2 s of unmeasured load first).
# Bounded: WARMUP, plus rows × tools × SECONDS, plus 8 s of floor.
#
# Prints TSV, one line per measurement (report.py turns it into BENCHMARKS.md section 3):
#   sale  tool tier wait items seconds items_per_s p50_ms p99_ms max_ms failed oversold
#         lost_updates overlaps foreign_releases per_instance longest_run
#   floor chain round_trips per_s us_per_chain
#   load  before|after 1-min 5-min 15-min   (the machine's load average: other work is noise)
set -euo pipefail
URL=$1 TOKEN=$2 BUSINESS_MS=${3:-0} CONNECTIONS=${4:-64} SECONDS_=${5:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
LOADTEST=${LOADTEST:-target/release/loadtest}
SERIAL_FLOOR=${SERIAL_FLOOR:-target/release/serial-floor}
FLOOR_SECONDS=${FLOOR_SECONDS:-2}
ROWS=${ROWS:-${TIERS:-none local setnx setnx-expire atomic-expiry uuid-owner lua-release reentrant-watchdog fair fenced redlock zookeeper zookeeper-fenced atomic-deduct lua-release@cohort:32 reentrant-watchdog@cohort:32 fenced@cohort:32 none}}
TOOLS=${TOOLS:-loadtest wrk}

admin() { curl -sf -X "$1" "$URL$2" -H "Authorization: Bearer $TOKEN" -d "$3" >/dev/null; }
state() { curl -sf "$URL/state"; }
field() { state | python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

STORE=$(field "['lock_store']['kind']")
if [ -z "${REDIS_URL+set}" ] && [ "$STORE" = shared ]; then
    REDIS_URL=redis://$(field "['lock_store']['nodes'][0]['addr']")
fi
ROOM=$(field "['room']")
# A fleet just started has cold pools and keep-alive connections: the first row would pay
# for them. A short unmeasured loop warms it (WARMUP seconds, 0 for none).
if [ "${WARMUP:-2}" != 0 ]; then
    admin PUT /admin/config '{"tier":"none","business_ms":0,"wait":"pubsub"}'
    admin POST /admin/reset '{"stock":1000000}'
    "$LOADTEST" run --url "$URL" -c "$CONNECTIONS" -z "${WARMUP:-2}s" --quiet --json --no-hand-off >/dev/null
fi
printf 'load\tbefore\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"

# Fairness across instances, from the ledger itself (it is in the order of the writes): the
# sales per instance, "app1:n,app2:n,…", and, tab-separated, the longest run of sales one
# instance made in a row while the others' buyers waited.
fairness() {
    if [ -z "${REDIS_URL:-}" ]; then printf -- '-\t-\n'; return; fi
    local sellers
    sellers=$(redis-cli -u "$REDIS_URL" --raw LRANGE "oversell:{$ROOM}:ledger" 0 -1 |
        grep -o '"instance":"[^"]*"' | cut -d'"' -f4)
    if [ -z "$sellers" ]; then printf -- '-\t-\n'; return; fi
    printf '%s\t%s\n' \
        "$(sort <<<"$sellers" | uniq -c | awk '{printf "%s%s:%s", sep, $2, $1; sep=","}')" \
        "$(awk '{run = ($1 == last) ? run + 1 : 1; last = $1; if (run > most) most = run}
                END {print most}' <<<"$sellers")"
}

for row in $ROWS; do
    tier=${row%%@*} wait=pubsub
    [ "$row" != "$tier" ] && wait=${row#*@}
    if [ "$tier" = redlock ] && [ "$STORE" != redlock ]; then
        echo "skipped redlock: needs a fleet started with \`oversell up --lock-store redlock\`" >&2
        continue
    fi
    if [[ "$tier" = zookeeper* ]] && [ "$(field ".get('lock_store', {}).get('zookeeper') is not None")" != True ]; then
        echo "skipped $tier: needs a fleet started with \`oversell up --zookeeper\`" >&2
        continue
    fi
    for tool in $TOOLS; do
        if [ "$tool" = wrk ] && ! command -v wrk >/dev/null; then
            echo "skipped wrk: not installed" >&2
            continue
        fi
        if ! admin PUT /admin/config "{\"tier\":\"$tier\",\"business_ms\":$BUSINESS_MS,\"wait\":\"$wait\",\"wait_deadline_ms\":20000}"; then
            echo "skipped $row: this fleet refuses wait \`$wait\`" >&2
            continue 2
        fi
        admin POST /admin/reset '{"stock":1000000}'
        # Settings reach every instance over pub/sub in a few ms; wait until nginx's picks agree.
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            [ "$(field "['settings']['wait']")" = "$wait" ] && [ "$(field "['tier']")" = "$tier" ] && break
            sleep 0.05
        done
        start=$(date +%s.%N)
        case $tool in
        loadtest)
            seen=$("$LOADTEST" run --url "$URL" -c "$CONNECTIONS" -z "${SECONDS_}s" --quiet --json --no-hand-off |
                python3 -c 'import json,sys; s=json.load(sys.stdin)["stats"]; l=s["latency_ms"]
print(l["p50"], l["p99"], l["max"], s["sent"] - s["ok"])') ;;
        wrk)
            seen=$(wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_}s" -s "$HERE/wrk-sale.lua" "$URL" |
                awk '/^WRK / {print $4, $5, $6, $3}') ;;
        esac
        end=$(date +%s.%N)
        truth=$(state | python3 -c 'import json,sys; d=json.load(sys.stdin)
print(d["items_sold"], d["oversold"], d["lost_updates"], d["overlaps"], d["foreign_releases"])')
        read -r p50 p99 max failed <<<"$seen"
        read -r items oversold lost overlaps foreign <<<"$truth"
        secs=$(python3 -c "print(f'{$end - $start:.2f}')")
        rate=$(python3 -c "print(round($items / $secs))")
        printf 'sale\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
            "$tool" "$tier" "$wait" "$items" "$secs" "$rate" "$p50" "$p99" "$max" "$failed" \
            "$oversold" "$lost" "$overlaps" "$foreign" "$(fairness)"
        echo "   $tool $row: $rate items/s, p99 $p99 ms, max $max ms" >&2
    done
done

printf 'load\tafter\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${REDIS_URL:-}" ] && [ -x "$SERIAL_FLOOR" ]; then
    "$SERIAL_FLOOR" --redis "$REDIS_URL" --seconds "$FLOOR_SECONDS" | tail -n +2 | sed 's/^/floor\t/'
else
    echo "skipped the serial floor: needs $SERIAL_FLOOR and REDIS_URL (or a shared lock store)" >&2
fi
